/*
 * coro.h - coroutines: how one blocking algorithm also runs nonblocking.
 *
 * A nonblocking exchange (xchg_ialltoallv, a persistent start) runs the
 * same code as the blocking call, on a stack of its own. Where that code
 * would block in MPI (block.c: every wait, receive, probe and collective
 * of the algorithms goes through xchg_mpi_*), it tests instead and, if the
 * operation is not complete, yields back to the caller of xchg_coro_resume
 * (xchg_start, xchg_test, xchg_wait: queue.c). So each algorithm has
 * one description, its source file, which serves the blocking call, the
 * nonblocking one and persistent starts; its rounds are the stretches
 * between yields. (libNBC and UCC write each algorithm a second time as a
 * schedule of rounds; a coroutine gets the same from the one we have.)
 *
 * Built on POSIX ucontext (makecontext/swapcontext), with the fiber
 * annotations AddressSanitizer needs. Not thread-safe by itself: a
 * coroutine is resumed by one thread at a time (queue.c locks).
 */
#ifndef XCHG_CORO_H
#define XCHG_CORO_H

#include <stddef.h>

typedef struct xchg_coro xchg_coro;

/* A coroutine that will run fn(arg) on a stack of stack_bytes (rounded up
 * to pages, plus a guard page); NULL if memory is short. Not started. */
xchg_coro *xchg_coro_create(int (*fn)(void *arg), void *arg, size_t stack_bytes);
/* Runs co until it yields or returns. Returns 1 once fn has returned (its
 * result in xchg_coro_result), 0 if it yielded. */
int xchg_coro_resume(xchg_coro *co);
int xchg_coro_result(const xchg_coro *co);
/* Frees a coroutine that has returned (or never started). */
void xchg_coro_destroy(xchg_coro *co);
/* Inside a coroutine: back to whoever resumed it. Outside: nothing. */
void xchg_coro_yield(void);
/* Whether the calling code runs in a coroutine (block.c's switch). */
int xchg_coro_inside(void);

#endif
