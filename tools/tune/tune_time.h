/*
 * tune_time.h - how xchg-tune times a call (tune_time.c): iters calls, each
 * after a barrier, the slowest rank's time of each, and their median
 * (the upper one of an even count); after (NULL: none) runs after each
 * call, outside the time. Collective over MPI_COMM_WORLD.
 */
#ifndef XCHG_TUNE_TIME_H
#define XCHG_TUNE_TIME_H

double tune_time(void (*call)(void *ctx), void (*after)(void *ctx), void *ctx, int iters);

#endif /* XCHG_TUNE_TIME_H */
