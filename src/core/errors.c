/*
 * errors.c - error codes with messages that name the argument.
 *
 * MPI lets a library add error codes to an existing class and attach a
 * string to each. We add one code per error class on first need and replace
 * its string with the message of the latest error, so MPI_Error_class() gives
 * the standard class and MPI_Error_string() the specific message, without
 * creating a new code per error (MPI implementations cap their number).
 *
 * MPICH 4.0.x returns a wrong string for codes added to a predefined class
 * (its "dynamic" bit is missing from such codes), so we also keep the last
 * message of each class ourselves: xchg_error_string() always finds it, and
 * where MPI_Error_string is seen to be broken we print the message before a
 * fatal error handler aborts, so the user still reads which argument it was.
 *
 * SimGrid SMPI (XCHG_SMPI, 3.32) implements neither MPI_Add_error_code nor
 * MPI_Add_error_string, and its MPI_Comm_call_errhandler crashes for the
 * predefined handlers. There the code of an error is its class, its message
 * lives in the table below only (xchg_error_string), and xchg_raise applies
 * the predefined handlers itself; user handlers are still called by MPI.
 */
#include "xchg_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define XCHG_MAX_CLASSES 128

static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;
static int err_class_code[XCHG_MAX_CLASSES]; /* 0: not yet created */
static char err_class_msg[XCHG_MAX_CLASSES][MPI_MAX_ERROR_STRING];
static int err_string_works = -1; /* -1 unknown, else whether MPI_Error_string shows ours */

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
#ifdef XCHG_SMPI
    code = err_class_code[errclass] = errclass;
    snprintf(err_class_msg[errclass], sizeof err_class_msg[errclass], "%s", msg);
    err_string_works = 0;
#else
    if (code == 0) {
        if (MPI_Add_error_code(errclass, &code) != MPI_SUCCESS)
            code = -1;
        err_class_code[errclass] = code;
    }
    if (code > 0) {
        MPI_Add_error_string(code, msg);
        snprintf(err_class_msg[errclass], sizeof err_class_msg[errclass], "%s", msg);
        if (err_string_works < 0) {
            char back[MPI_MAX_ERROR_STRING];
            int len = 0;
            err_string_works = MPI_Error_string(code, back, &len) == MPI_SUCCESS &&
                               strcmp(back, msg) == 0;
        }
    }
#endif
    pthread_mutex_unlock(&err_lock);
    return code > 0 ? code : errclass;
}

int xchg_error_string(int code, char *string, int *resultlen)
{
    int cls = -1;
    string[0] = 0;
    *resultlen = 0;
    if (MPI_Error_class(code, &cls) == MPI_SUCCESS && cls > MPI_SUCCESS &&
        cls < XCHG_MAX_CLASSES) {
        pthread_mutex_lock(&err_lock);
        int ours = err_class_code[cls] == code && err_class_msg[cls][0];
        if (ours)
            *resultlen = snprintf(string, MPI_MAX_ERROR_STRING, "%s", err_class_msg[cls]);
        pthread_mutex_unlock(&err_lock);
        if (ours)
            return MPI_SUCCESS;
    }
    return MPI_Error_string(code, string, resultlen);
}

int xchg_raise(MPI_Comm comm, int code)
{
    if (code == MPI_SUCCESS)
        return code;
    /* MPI raises errors that have no communicator on MPI_COMM_SELF. */
    MPI_Comm target = comm == MPI_COMM_NULL ? MPI_COMM_SELF : comm;
    if (err_string_works == 0) {
        MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
        if (MPI_Comm_get_errhandler(target, &eh) == MPI_SUCCESS) {
            if (eh == MPI_ERRORS_ARE_FATAL) {
                char msg[MPI_MAX_ERROR_STRING];
                int len;
                xchg_error_string(code, msg, &len);
                fprintf(stderr, "%s\n", msg);
            }
            if (eh != MPI_ERRHANDLER_NULL)
                MPI_Errhandler_free(&eh);
        }
    }
#ifdef XCHG_SMPI
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    if (MPI_Comm_get_errhandler(target, &eh) == MPI_SUCCESS) {
        int predefined = eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ARE_FATAL;
        int fatal = eh == MPI_ERRORS_ARE_FATAL;
        if (eh != MPI_ERRHANDLER_NULL)
            MPI_Errhandler_free(&eh);
        if (fatal)
            MPI_Abort(target, code); /* the message was printed above */
        if (predefined)
            return code;
    }
#endif
    MPI_Comm_call_errhandler(target, code);
    return code;
}
