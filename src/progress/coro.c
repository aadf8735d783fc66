/*
 * coro.c - coroutines on POSIX ucontext (see coro.h).
 */
#define _GNU_SOURCE
#include "coro.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define XCHG_CORO_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define XCHG_CORO_ASAN 1
#endif
#endif
#ifdef XCHG_CORO_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

struct xchg_coro {
    ucontext_t ctx;          /* the coroutine's */
    ucontext_t back;         /* whoever resumed it */
    int (*fn)(void *);
    void *arg;
    int result;
    int done;
    char *map;               /* guard page + stack */
    size_t map_bytes;
    xchg_coro *outer;        /* the coroutine that resumed this one, if any */
#ifdef XCHG_CORO_ASAN
    void *fake_back;         /* ASan's fake stack of the resumer */
    const void *back_bottom; /* the resumer's stack, for the way back */
    size_t back_size;
#endif
};

/* The coroutine running on this thread (each SMPI rank has its own copy of
 * the library's globals, so this is per rank there too). */
static __thread xchg_coro *current;

static void trampoline(unsigned int hi, unsigned int lo)
{
    xchg_coro *co = (xchg_coro *)(((uintptr_t)hi << 32) | (uintptr_t)lo);
#ifdef XCHG_CORO_ASAN
    __sanitizer_finish_switch_fiber(NULL, &co->back_bottom, &co->back_size);
#endif
    co->result = co->fn(co->arg);
    co->done = 1;
#ifdef XCHG_CORO_ASAN
    /* NULL: this fiber ends, ASan may drop its fake stack */
    __sanitizer_start_switch_fiber(NULL, co->back_bottom, co->back_size);
#endif
    /* uc_link returns to co->back */
}

/* getcontext returns twice in principle: kept apart so that no local of
 * the caller lives across it. */
__attribute__((noinline)) static int make_context(xchg_coro *co, char *stack, size_t bytes)
{
    if (getcontext(&co->ctx) != 0)
        return -1;
    co->ctx.uc_stack.ss_sp = stack;
    co->ctx.uc_stack.ss_size = bytes;
    co->ctx.uc_link = &co->back;
    uintptr_t p = (uintptr_t)co;
    makecontext(&co->ctx, (void (*)(void))trampoline, 2, (unsigned int)(p >> 32),
                (unsigned int)(p & 0xffffffffu));
    return 0;
}

xchg_coro *xchg_coro_create(int (*fn)(void *), void *arg, size_t stack_bytes)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t stack = (stack_bytes + page - 1) / page * page;
    xchg_coro *co = calloc(1, sizeof *co);
    if (!co)
        return NULL;
    co->map_bytes = stack + page;
    co->map = mmap(NULL, co->map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (co->map == MAP_FAILED) {
        free(co);
        return NULL;
    }
    mprotect(co->map, page, PROT_NONE); /* overflow faults instead of corrupting */
    co->fn = fn;
    co->arg = arg;
    if (make_context(co, co->map + page, stack) != 0) {
        munmap(co->map, co->map_bytes);
        free(co);
        return NULL;
    }
    return co;
}

int xchg_coro_resume(xchg_coro *co)
{
    if (co->done)
        return 1;
    co->outer = current;
    current = co;
#ifdef XCHG_CORO_ASAN
    __sanitizer_start_switch_fiber(&co->fake_back, co->ctx.uc_stack.ss_sp,
                                   co->ctx.uc_stack.ss_size);
#endif
    swapcontext(&co->back, &co->ctx);
#ifdef XCHG_CORO_ASAN
    __sanitizer_finish_switch_fiber(co->fake_back, NULL, NULL);
#endif
    current = co->outer;
    return co->done;
}

void xchg_coro_yield(void)
{
    xchg_coro *co = current;
    if (!co)
        return;
#ifdef XCHG_CORO_ASAN
    void *fake = NULL;
    __sanitizer_start_switch_fiber(&fake, co->back_bottom, co->back_size);
#endif
    swapcontext(&co->ctx, &co->back);
#ifdef XCHG_CORO_ASAN
    __sanitizer_finish_switch_fiber(fake, &co->back_bottom, &co->back_size);
#endif
}

int xchg_coro_inside(void)
{
    return current != NULL;
}

int xchg_coro_result(const xchg_coro *co)
{
    return co->result;
}

void xchg_coro_destroy(xchg_coro *co)
{
    if (!co)
        return;
    munmap(co->map, co->map_bytes);
    free(co);
}
