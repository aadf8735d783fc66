/*
 * errors.c - error codes with messages that name the rank and the argument.
 *
 * MPI lets a library add error codes to an existing class and attach a
 * string to each. MPI_Error_class() then gives the standard class and
 * MPI_Error_string() the specific message. MPI implementations cap the
 * number of added codes, so we do not make one per error: each class has a
 * ring of XCHG_CODES_PER_CLASS codes, made on first need, and each error
 * takes the next code of its class and sets its string. A message thus
 * stays readable through MPI until that many later errors of the same
 * class (from any thread) have come by; and each thread also keeps its own
 * last messages (thread-local), so xchg_error_string() gives a thread the
 * message of its own call even when another thread's errors reuse the code.
 *
 * MPICH 4.0.x returns a wrong string for codes added to a predefined class
 * (its "dynamic" bit is missing from such codes), so we also keep the
 * messages ourselves: xchg_error_string() always finds them, and where
 * MPI_Error_string is seen to be broken we print the message before a
 * fatal error handler aborts, so the user still reads which argument it was.
 *
 * SimGrid SMPI (XCHG_SMPI, 3.32) implements neither MPI_Add_error_code nor
 * MPI_Add_error_string, and its MPI_Comm_call_errhandler crashes for the
 * predefined handlers. There the code of an error is its class, its message
 * lives in the tables below only (xchg_error_string), and xchg_raise applies
 * the predefined handlers itself; user handlers are still called by MPI.
 */
#include "core.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XCHG_MAX_CLASSES 128
#define XCHG_CODES_PER_CLASS 8
#define XCHG_THREAD_MESSAGES 8

typedef struct err_slot {
    int code; /* 0: not yet created, -1: MPI refused */
    char msg[MPI_MAX_ERROR_STRING];
} err_slot;

static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;
static err_slot *err_ring[XCHG_MAX_CLASSES]; /* XCHG_CODES_PER_CLASS each, lazily */
#ifndef XCHG_SMPI
static unsigned err_next[XCHG_MAX_CLASSES];
#endif
static int err_string_works = -1; /* -1 unknown, else whether MPI_Error_string shows ours */

/* This thread's last messages, newest at tl_next - 1. */
static _Thread_local err_slot tl_msgs[XCHG_THREAD_MESSAGES];
static _Thread_local unsigned tl_next;

static void remember_here(int code, const char *msg)
{
    err_slot *e = &tl_msgs[tl_next++ % XCHG_THREAD_MESSAGES];
    e->code = code;
    snprintf(e->msg, sizeof e->msg, "%s", msg);
}

/* Every message starts "xchg: rank N: ", N the process's rank in
 * MPI_COMM_WORLD, as MPI's launchers number processes: an error printed by
 * one of many ranks says which one it was. Ranks inside a message
 * (sendcounts[R], "rank R reported") are ranks of the call's communicator. */
static int message_prefix(char *msg, size_t len)
{
    int world_rank = -1, initialized = 0, finalized = 0;
    /* MPI_COMM_WORLD may be used only between MPI_Init and MPI_Finalize */
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized || MPI_Comm_rank(MPI_COMM_WORLD, &world_rank) != MPI_SUCCESS ||
        world_rank < 0)
        return snprintf(msg, len, "xchg: ");
    return snprintf(msg, len, "xchg: rank %d: ", world_rank);
}

int xchg_error_code(int errclass, const char *fmt, ...)
{
    char msg[MPI_MAX_ERROR_STRING];
    int n = message_prefix(msg, sizeof msg);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);

    if (errclass <= MPI_SUCCESS || errclass >= XCHG_MAX_CLASSES)
        return errclass; /* not a standard class: pass it on unchanged */

    int code = -1;
    pthread_mutex_lock(&err_lock);
    if (!err_ring[errclass])
        err_ring[errclass] = calloc(XCHG_CODES_PER_CLASS, sizeof(err_slot));
    if (err_ring[errclass]) {
#ifdef XCHG_SMPI
        err_slot *e = &err_ring[errclass][0];
        e->code = errclass;
        err_string_works = 0;
#else
        err_slot *e = &err_ring[errclass][err_next[errclass]++ % XCHG_CODES_PER_CLASS];
        if (e->code == 0 && MPI_Add_error_code(errclass, &e->code) != MPI_SUCCESS)
            e->code = -1;
        if (e->code > 0)
            MPI_Add_error_string(e->code, msg);
#endif
        if (e->code > 0) {
            code = e->code;
            snprintf(e->msg, sizeof e->msg, "%s", msg);
        }
    }
#ifndef XCHG_SMPI
    if (code > 0 && err_string_works < 0) {
        char back[MPI_MAX_ERROR_STRING];
        int len = 0;
        err_string_works = MPI_Error_string(code, back, &len) == MPI_SUCCESS &&
                           strcmp(back, msg) == 0;
    }
#endif
    pthread_mutex_unlock(&err_lock);
    if (code <= 0)
        return errclass;
    remember_here(code, msg);
    return code;
}

int xchg_error_string(int code, char *string, int *resultlen)
{
    string[0] = 0;
    *resultlen = 0;
    /* this thread's own error first: its message, whoever reused the code */
    for (unsigned k = 1; k <= XCHG_THREAD_MESSAGES; k++) {
        const err_slot *e = &tl_msgs[(tl_next - k) % XCHG_THREAD_MESSAGES];
        if (e->code == code && e->code > 0 && e->msg[0]) {
            *resultlen = snprintf(string, MPI_MAX_ERROR_STRING, "%s", e->msg);
            return MPI_SUCCESS;
        }
    }
    int cls = -1;
    if (MPI_Error_class(code, &cls) == MPI_SUCCESS && cls > MPI_SUCCESS &&
        cls < XCHG_MAX_CLASSES) {
        int ours = 0;
        pthread_mutex_lock(&err_lock);
        for (int k = 0; err_ring[cls] && k < XCHG_CODES_PER_CLASS && !ours; k++)
            if (err_ring[cls][k].code == code && err_ring[cls][k].msg[0]) {
                *resultlen = snprintf(string, MPI_MAX_ERROR_STRING, "%s", err_ring[cls][k].msg);
                ours = 1;
            }
        pthread_mutex_unlock(&err_lock);
        if (ours)
            return MPI_SUCCESS;
    }
    return MPI_Error_string(code, string, resultlen);
}

int xchg_raise(MPI_Comm comm, int code)
{
    xchg_charge_flush(); /* every entry point leaves through here */
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
