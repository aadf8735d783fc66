/*
 * record_load.c - a record file read once, on rank 0, and shared with every
 * rank (so all ranks replay the same matrix and fail alike if it cannot be
 * read, even where only rank 0 sees the file).
 */
#include "record_load.h"

#include <stdlib.h>
#include <string.h>

int bench_record_load(const char *spec, MPI_Comm comm, bench_record *rec, char *err,
                      size_t errlen)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    memset(rec, 0, sizeof *rec);
    char path[1024];
    int index = 1;
    /* head: status, P0, index, nshapes, calls */
    long head[5] = {0, 0, 0, 0, 0};
    if (bench_record_spec(spec, path, sizeof path, &index)) {
        snprintf(err, errlen, "file:%s: expected file:PATH or file:PATH:N (N > 0)", spec);
        return -1; /* the same on every rank: no file read */
    }
    if (rank == 0) {
        if (bench_record_read(path, index, rec, err, errlen) == 0) {
            head[0] = 1;
            head[1] = rec->P0;
            head[2] = rec->index;
            head[3] = rec->nshapes;
            head[4] = (long)rec->calls;
        }
    }
    MPI_Bcast(head, 5, MPI_LONG, 0, comm);
    if (!head[0]) {
        MPI_Bcast(err, (int)errlen, MPI_CHAR, 0, comm);
        return -1;
    }
    if (rank != 0) {
        rec->P0 = (int)head[1];
        rec->index = (int)head[2];
        rec->nshapes = (int)head[3];
        rec->calls = (unsigned long)head[4];
        snprintf(rec->path, sizeof rec->path, "%s", path);
        rec->bytes = malloc(sizeof(int64_t) * (size_t)rec->P0 * (size_t)rec->P0);
    }
    int ok = rec->bytes != NULL, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    if (!all) {
        snprintf(err, errlen, "%s: no memory for its %d x %d matrix on some rank", path,
                 (int)head[1], (int)head[1]);
        bench_record_free(rec);
        return -1;
    }
    /* in pieces: MPI counts are ints */
    size_t total = (size_t)rec->P0 * (size_t)rec->P0, chunk = (size_t)1 << 26;
    for (size_t off = 0; off < total; off += chunk)
        MPI_Bcast(rec->bytes + off, (int)(total - off < chunk ? total - off : chunk),
                  MPI_INT64_T, 0, comm);
    return 0;
}
