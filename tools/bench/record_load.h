/*
 * record_load.h - a record file (record_file.h) read on rank 0 and shared
 * with all ranks of comm. Collective.
 */
#ifndef XCHG_BENCH_RECORD_LOAD_H
#define XCHG_BENCH_RECORD_LOAD_H

#include "record_file.h"

#include <mpi.h>
#include <stdio.h>

/* spec: "PATH" or "PATH:N". Returns 0, or -1 on every rank with rank 0's
 * message in err. */
int bench_record_load(const char *spec, MPI_Comm comm, bench_record *rec, char *err,
                      size_t errlen);

#endif /* XCHG_BENCH_RECORD_LOAD_H */
