# xchg_mpi_flavour(<flavour-var> <version-var>): the flavour ("mpich",
# "openmpi" or "unknown") and version ("4.0.2") of the MPI that MPI::MPI_C
# (FindMPI) points at, read from its mpi.h by compiling a small program
# (never running it). Cached per MPI_C_COMPILER and include path, so a
# project configures it once. Used by xchg's own build (recorded in
# xchgConfig.cmake and xchg.pc) and by xchgConfig.cmake, which compares a
# consumer's MPI with the one xchg was built with.
set(_xchg_flavour_dir "${CMAKE_CURRENT_LIST_DIR}")

function(xchg_mpi_flavour flavour_var version_var)
  set(_key "${MPI_C_COMPILER}|${MPI_C_INCLUDE_DIRS}|${MPI_C_HEADER_DIR}")
  if(DEFINED CACHE{_XCHG_MPI_FLAVOUR_KEY} AND _XCHG_MPI_FLAVOUR_KEY STREQUAL _key)
    set(${flavour_var} "${_XCHG_MPI_FLAVOUR}" PARENT_SCOPE)
    set(${version_var} "${_XCHG_MPI_FLAVOUR_VERSION}" PARENT_SCOPE)
    return()
  endif()
  set(_bin "${CMAKE_BINARY_DIR}${CMAKE_FILES_DIRECTORY}/xchg_mpi_flavour")
  try_compile(_ok "${_bin}" SOURCES "${_xchg_flavour_dir}/mpi_flavour.c"
              LINK_LIBRARIES MPI::MPI_C
              COPY_FILE "${_bin}/mpi_flavour.bin"
              OUTPUT_VARIABLE _log)
  set(_f unknown)
  set(_v 0)
  if(_ok)
    file(STRINGS "${_bin}/mpi_flavour.bin" _info LIMIT_COUNT 1 REGEX "INFO:XCHG-MPI")
    if(_info MATCHES "INFO:XCHG-MPI\\[([a-z]+)\\]\\[([0-9][0-9.a-z]*)\\]")
      set(_f "${CMAKE_MATCH_1}")
      set(_v "${CMAKE_MATCH_2}")
    endif()
  endif()
  set(_XCHG_MPI_FLAVOUR_KEY "${_key}" CACHE INTERNAL "")
  set(_XCHG_MPI_FLAVOUR "${_f}" CACHE INTERNAL "")
  set(_XCHG_MPI_FLAVOUR_VERSION "${_v}" CACHE INTERNAL "")
  set(${flavour_var} "${_f}" PARENT_SCOPE)
  set(${version_var} "${_v}" PARENT_SCOPE)
endfunction()
