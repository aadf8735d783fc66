/*
 * ibarrier.h - a nonblocking barrier (src/core/ibarrier.c).
 */
#ifndef XCHG_CORE_IBARRIER_H
#define XCHG_CORE_IBARRIER_H

#include "xchg.h"

/* Nonblocking barrier (src/core/ibarrier.c): MPI_Ibarrier, or under SMPI
 * (whose MPI_Ibarrier is broken) and with XCHG_NBX_BARRIER=dissemination a
 * dissemination barrier of Isend/Irecv on comm with tags tag ..
 * tag+XCHG_IBARRIER_TAGS-1 (reserve them). start, then test until *done;
 * xchg_ibarrier_free releases a barrier abandoned before done. */
enum { XCHG_IBARRIER_TAGS = 31 };
typedef struct xchg_ibarrier {
    int dissemination;
    MPI_Comm comm;
    int rank, size, tag;
    MPI_Request req[2];
    int round, rounds; /* dissemination: current round, ceil(log2 size) */
    char sbuf, rbuf;
} xchg_ibarrier;
int xchg_ibarrier_start(xchg_ibarrier *b, MPI_Comm comm, int tag, int dissemination);
int xchg_ibarrier_test(xchg_ibarrier *b, int *done);
void xchg_ibarrier_free(xchg_ibarrier *b);

#endif /* XCHG_CORE_IBARRIER_H */
