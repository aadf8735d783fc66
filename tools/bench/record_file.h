/*
 * record_file.h - the files XCHG_RECORD writes (src/core/record.c): reading
 * one recorded shape, and replaying it at any number of ranks, for
 * xchg-bench and xchg-tune (--pattern file:PATH[:N]). No MPI here (the
 * pattern test links it without MPI); record_load.c shares a file read on
 * rank 0 with every rank.
 *
 * Format ("xchg-record 1" first, '#' lines and blank lines are comments):
 *     shape <P> <calls>
 *     P x P byte counts, whitespace-separated: row i = rank i's sends
 * Scaling to P ranks (P may differ from the recorded P0): rank i plays the
 * recorded rank floor(i * P0 / P), and block (i, j) is the recorded block
 * of their players. So at P = P0 the recording itself; at P = k P0 each
 * recorded rank becomes k ranks and each block is sent to all k copies of
 * its destination: block sizes keep their recorded distribution, the
 * fraction of empty blocks is kept, and a rank's volume grows by P / P0;
 * below P0 a subset of ranks and blocks remains.
 */
#ifndef XCHG_BENCH_RECORD_FILE_H
#define XCHG_BENCH_RECORD_FILE_H

#include <stddef.h>
#include <stdint.h>

typedef struct bench_record {
    int P0;          /* recorded ranks */
    unsigned long calls;
    int index;       /* which shape of the file (1-based) */
    int nshapes;     /* shapes in the file */
    int64_t *bytes;  /* P0 x P0 */
    char path[1024];
} bench_record;

/* "PATH" or "PATH:N" (N > 0, the N-th shape; 1 without it): *index gets N,
 * path the rest. -1 if N is not a positive number or the path is empty. */
int bench_record_spec(const char *spec, char *path, size_t pathlen, int *index);

/* Reads shape `index` (1-based) of the file at path into rec (rec->bytes
 * allocated: bench_record_free). Returns 0, or -1 with a message in err
 * naming the file and line. */
int bench_record_read(const char *path, int index, bench_record *rec, char *err,
                      size_t errlen);
void bench_record_free(bench_record *rec);

/* Bytes rank i sends rank j when the recording is replayed at P ranks. */
int64_t bench_record_bytes(const bench_record *rec, int P, int i, int j);

#endif /* XCHG_BENCH_RECORD_FILE_H */
