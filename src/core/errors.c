/*
 * errors.c - error codes with messages that name the argument.
 *
 * MPI lets a library add error codes to an existing class and attach a
 * string to each. We add one code per error class on first need and replace
 * its string with the message of the latest error, so MPI_Error_class() gives
 * the standard class and MPI_Error_string() the specific message, without
 * creating a new code per error (MPI implementations cap their number).
 */
#include "xchg_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define XCHG_MAX_CLASSES 128

static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;
static int err_class_code[XCHG_MAX_CLASSES]; /* 0: not yet created */

int xchg_error_code(int errclass, const char *fmt, ...)
{
    char msg[MPI_MAX_ERROR_STRING];
    int n = snprintf(msg, sizeof msg, "xchg: ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);

    if (errclass <= MPI_SUCCESS || errclass >= XCHG_MAX_CLASSES)
        return errclass; /* not a standard class: pass it on unchanged */

    int code;
    pthread_mutex_lock(&err_lock);
    code = err_class_code[errclass];
    if (code == 0) {
        if (MPI_Add_error_code(errclass, &code) != MPI_SUCCESS)
            code = -1;
        err_class_code[errclass] = code;
    }
    if (code > 0)
        MPI_Add_error_string(code, msg);
    pthread_mutex_unlock(&err_lock);
    return code > 0 ? code : errclass;
}

int xchg_raise(MPI_Comm comm, int code)
{
    if (code == MPI_SUCCESS)
        return code;
    /* MPI raises errors that have no communicator on MPI_COMM_SELF. */
    MPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_SELF : comm, code);
    return code;
}
