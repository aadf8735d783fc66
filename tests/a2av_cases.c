/*
 * a2av_cases.c - building and checking alltoallv test cases (see the header).
 */
#include "a2av_cases.h"

#include <xchg.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const a2av_patterns[] = {"random", "sparse", "zero", "hot", "imbalance",
                                     "self", "onesided", "tiny", "large", NULL};
const char *const a2av_layouts[] = {"contig", "gaps_reversed", NULL};
const char *const a2av_types[] = {"int", "pair_vs_int", "vector_vs_contig",
                                  "int_vs_resized", "lb_shift", NULL};

#define SENTINEL 0xA5

/* splitmix64: the same numbers on every rank and every platform. */
static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* The int at index idx of rank r's send buffer. */
static int send_value(unsigned seed, int r, size_t idx)
{
    return (int)(mix((uint64_t)seed * 1000003u + (uint64_t)r * 7919u + idx) & 0x7fffffff);
}

static uint64_t cell_rand(unsigned seed, int i, int j, int salt)
{
    return mix(((uint64_t)seed << 40) ^ ((uint64_t)(unsigned)i << 20) ^ (uint64_t)(unsigned)j ^
               ((uint64_t)(unsigned)salt << 56));
}

/* Units rank i sends to rank j. Symmetric when in place (required then). */
static int pattern_count(const char *pat, unsigned seed, int P, int i, int j, int sym, int *ok)
{
    if (sym && i > j) {
        int t = i; i = j; j = t;
    }
    uint64_t r = cell_rand(seed, i, j, 1);
    *ok = 1;
    if (!strcmp(pat, "random")) return (int)(r % 21);              /* avg 10 */
    if (!strcmp(pat, "sparse")) return (r % 10 == 0) ? 1 + (int)(r / 10 % 40) : 0;
    if (!strcmp(pat, "zero")) return 0;
    if (!strcmp(pat, "hot")) return j == 0 ? 2000 + (int)(r % 100) : (int)(r % 3);
    if (!strcmp(pat, "imbalance")) return ((i + 2 * j) % 5 == 0) ? 20000 + (int)(r % 1000) : (int)(r % 3);
    if (!strcmp(pat, "self")) return i == j ? 1 + i : 0;
    if (!strcmp(pat, "onesided")) return (i == 0 || (sym && j == 0)) ? 5 + (int)(r % 7) : 0;
    if (!strcmp(pat, "tiny")) return (int)(r % 2);
    if (!strcmp(pat, "large")) return 65536 + (int)(r % 4096);   /* ~256 KiB per block */
    (void)P;
    *ok = 0;
    return 0;
}

/* Displacements (in extents) for blocks of the given counts. */
static void make_layout(const char *layout, int P, const int *counts, int *displs, long *span)
{
    long pos = 0;
    if (!strcmp(layout, "gaps_reversed")) {
        for (int j = P - 1; j >= 0; j--) {
            pos += j % 3 + 1; /* a gap before each block */
            displs[j] = (int)pos;
            pos += counts[j];
        }
        pos += 2;
    } else {
        for (int j = 0; j < P; j++) {
            displs[j] = (int)pos;
            pos += counts[j];
        }
    }
    *span = pos;
}

static void type_free(MPI_Datatype *t)
{
    int ni, na, nd, comb;
    if (*t == MPI_DATATYPE_NULL)
        return;
    MPI_Type_get_envelope(*t, &ni, &na, &nd, &comb);
    if (comb != MPI_COMBINER_NAMED)
        MPI_Type_free(t);
    *t = MPI_DATATYPE_NULL;
}

/* Send/receive types and how many receive elements one send unit makes. */
static int make_types(const char *types, MPI_Datatype *st, MPI_Datatype *rt, int *rmul)
{
    MPI_Datatype tmp;
    *rmul = 1;
    if (!strcmp(types, "int")) {
        *st = MPI_INT; *rt = MPI_INT;
    } else if (!strcmp(types, "pair_vs_int")) {
        MPI_Type_contiguous(2, MPI_INT, st);
        MPI_Type_commit(st);
        *rt = MPI_INT;
        *rmul = 2;
    } else if (!strcmp(types, "vector_vs_contig")) {
        /* ints 0 and 2 of every 4: holes inside and between elements */
        MPI_Type_vector(2, 1, 2, MPI_INT, &tmp);
        MPI_Type_create_resized(tmp, 0, 4 * (MPI_Aint)sizeof(int), st);
        MPI_Type_free(&tmp);
        MPI_Type_commit(st);
        MPI_Type_contiguous(2, MPI_INT, rt);
        MPI_Type_commit(rt);
    } else if (!strcmp(types, "int_vs_resized")) {
        /* receive into every other int: the holes must keep their bytes */
        *st = MPI_INT;
        MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), rt);
        MPI_Type_commit(rt);
    } else if (!strcmp(types, "lb_shift")) {
        /* negative lower bound, extent 3 ints */
        MPI_Type_create_resized(MPI_INT, -(MPI_Aint)sizeof(int), 3 * (MPI_Aint)sizeof(int), st);
        MPI_Type_commit(st);
        *rt = MPI_INT;
    } else {
        return -1;
    }
    return 0;
}

static size_t buffer_bytes(MPI_Datatype t, long span)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    /* data of element d lies in [d*ext + tlb, d*ext + tlb + text) */
    long bytes = span * (long)ext + (long)(tlb > 0 ? tlb : 0) + (long)text + 16;
    return (size_t)bytes;
}

int a2av_case_build(a2av_case *c, MPI_Comm comm, const char *pattern, const char *layout,
                    const char *types, int in_place, unsigned seed)
{
    memset(c, 0, sizeof *c);
    c->sendtype = c->recvtype = MPI_DATATYPE_NULL;
    MPI_Comm_size(comm, &c->P);
    MPI_Comm_rank(comm, &c->rank);
    const int P = c->P, me = c->rank;
    snprintf(c->name, sizeof c->name, "%s/%s/%s%s seed=%u", pattern, layout, types,
             in_place ? "/in_place" : "", seed);
    c->in_place = in_place;
    int rmul;
    if (make_types(types, &c->sendtype, &c->recvtype, &rmul) != 0)
        return -1;
    if (in_place && rmul != 1) /* in place sends with the receive layout */
        return -1;
    c->sendcounts = calloc((size_t)P, sizeof(int));
    c->sdispls = calloc((size_t)P, sizeof(int));
    c->recvcounts = calloc((size_t)P, sizeof(int));
    c->rdispls = calloc((size_t)P, sizeof(int));
    int ok = 1;
    for (int j = 0; j < P && ok; j++) {
        c->sendcounts[j] = pattern_count(pattern, seed, P, me, j, in_place, &ok);
        c->recvcounts[j] = rmul * pattern_count(pattern, seed, P, j, me, in_place, &ok);
    }
    if (!ok)
        return -1;
    long sspan, rspan;
    make_layout(layout, P, c->sendcounts, c->sdispls, &sspan);
    make_layout(layout, P, c->recvcounts, c->rdispls, &rspan);

    /* A value per int that says where it came from. */
    c->sendbytes = buffer_bytes(c->sendtype, sspan);
    c->sendbuf = malloc(c->sendbytes);
    for (size_t k = 0; k < c->sendbytes / sizeof(int); k++)
        ((int *)c->sendbuf)[k] = send_value(seed, me, k);

    c->recvbytes = buffer_bytes(c->recvtype, rspan);
    c->recv_init = malloc(c->recvbytes);
    memset(c->recv_init, SENTINEL, c->recvbytes);
    if (in_place) {
        /* the data to send sits in the receive blocks */
        MPI_Aint lb, ext;
        MPI_Type_get_extent(c->recvtype, &lb, &ext);
        int tsize;
        MPI_Type_size(c->recvtype, &tsize);
        for (int j = 0; j < P; j++) {
            int pos = 0;
            MPI_Unpack(c->sendbuf + (size_t)c->rdispls[j] % 4 * sizeof(int),
                       c->recvcounts[j] * tsize, &pos,
                       c->recv_init + (MPI_Aint)c->rdispls[j] * ext, c->recvcounts[j],
                       c->recvtype, MPI_COMM_SELF);
        }
    }
    c->expect_ints = !strcmp(types, "int") && !strcmp(layout, "contig") && !in_place;
    snprintf(c->pattern, sizeof c->pattern, "%s", pattern);
    c->seed = seed;
    return 0;
}

void a2av_case_free(a2av_case *c)
{
    free(c->sendcounts); free(c->sdispls); free(c->recvcounts); free(c->rdispls);
    free(c->sendbuf); free(c->recv_init);
    type_free(&c->sendtype);
    type_free(&c->recvtype);
    memset(c, 0, sizeof *c);
}

static int errstr(int rc, char *buf, size_t len, const char *who)
{
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    MPI_Error_string(rc, s, &n);
    snprintf(buf, len, "%s returned error %d: %s", who, rc, s);
    return 0;
}

int a2av_case_check(const a2av_case *c, MPI_Comm comm, a2av_runner run, void *ctx,
                    char *why, size_t whylen)
{
    char *ref = malloc(c->recvbytes), *got = malloc(c->recvbytes);
    char *refsend = NULL;
    memcpy(ref, c->recv_init, c->recvbytes);
    memcpy(got, c->recv_init, c->recvbytes);
    int ok = 1, rc;
    why[0] = 0;

    /* Reference: MPI_Alltoallv without MPI_IN_PLACE (sending from a copy of
     * the in-place data), so the reference does not share code paths with
     * the in-place handling under test. */
    if (c->in_place) {
        refsend = malloc(c->recvbytes);
        memcpy(refsend, c->recv_init, c->recvbytes);
        rc = MPI_Alltoallv(refsend, c->recvcounts, c->rdispls, c->recvtype, ref,
                           c->recvcounts, c->rdispls, c->recvtype, comm);
    } else {
        rc = MPI_Alltoallv(c->sendbuf, c->sendcounts, c->sdispls, c->sendtype, ref,
                           c->recvcounts, c->rdispls, c->recvtype, comm);
    }
    if (rc != MPI_SUCCESS) {
        ok = errstr(rc, why, whylen, "reference MPI_Alltoallv");
    }

    rc = run(ctx, c->in_place ? MPI_IN_PLACE : c->sendbuf, c->sendcounts, c->sdispls,
             c->sendtype, got, c->recvcounts, c->rdispls, c->recvtype, comm);
    if (ok && rc != MPI_SUCCESS)
        ok = errstr(rc, why, whylen, "exchange");

    if (ok && memcmp(ref, got, c->recvbytes) != 0) {
        size_t k = 0;
        while (ref[k] == got[k])
            k++;
        snprintf(why, whylen, "receive buffer differs from MPI_Alltoallv's at byte %zu of "
                 "%zu (expected 0x%02x, got 0x%02x)", k, c->recvbytes,
                 (unsigned char)ref[k], (unsigned char)got[k]);
        ok = 0;
    }

    /* Independent of MPI_Alltoallv: for plain ints in the contiguous layout,
     * element k from rank j is int (displacement of my block at j) + k of
     * j's send buffer, both recomputed here from the seed. */
    if (ok && c->expect_ints) {
        for (int j = 0; j < c->P && ok; j++) {
            long jdisp = 0;
            int okp;
            for (int q = 0; q < c->rank; q++)
                jdisp += pattern_count(c->pattern, c->seed, c->P, j, q, 0, &okp);
            for (int k = 0; k < c->recvcounts[j] && ok; k++) {
                int v = ((int *)got)[c->rdispls[j] + k];
                int e = send_value(c->seed, j, (size_t)(jdisp + k));
                if (v != e) {
                    snprintf(why, whylen, "element %d from rank %d is %d, the sender's "
                             "buffer holds %d", k, j, v, e);
                    ok = 0;
                }
            }
        }
    }
    free(ref);
    free(got);
    free(refsend);
    return ok;
}

int a2av_err_class(int rc)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

const char *a2av_err_msg(int rc)
{
    static char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    msg[0] = 0;
    if (rc != MPI_SUCCESS)
        xchg_error_string(rc, msg, &len);
    return msg;
}

void a2av_bytes_make(a2av_bytes *x, int *sc, MPI_Comm comm)
{
    int P, rank;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &rank);
    x->sc = sc;
    x->sd = calloc((size_t)P, sizeof(int));
    x->rc = calloc((size_t)P, sizeof(int));
    x->rd = calloc((size_t)P, sizeof(int));
    MPI_Alltoall(sc, 1, MPI_INT, x->rc, 1, MPI_INT, comm);
    int st = 0;
    x->rt = 0;
    for (int j = 0; j < P; j++) {
        x->sd[j] = st;
        st += sc[j];
        x->rd[j] = x->rt;
        x->rt += x->rc[j];
    }
    x->sb = malloc((size_t)st + 1);
    x->ref = calloc((size_t)x->rt + 1, 1);
    x->out = calloc((size_t)x->rt + 1, 1);
    for (int k = 0; k < st; k++)
        x->sb[k] = (char)(rank * 31 + k * 7);
    MPI_Alltoallv(x->sb, sc, x->sd, MPI_BYTE, x->ref, x->rc, x->rd, MPI_BYTE, comm);
}

int a2av_bytes_same(const a2av_bytes *x)
{
    return memcmp(x->ref, x->out, (size_t)x->rt) == 0;
}

void a2av_bytes_free(a2av_bytes *x)
{
    free(x->sc);
    free(x->sd);
    free(x->rc);
    free(x->rd);
    free(x->sb);
    free(x->ref);
    free(x->out);
    memset(x, 0, sizeof *x);
}

int a2av_bytes_run(a2av_bytes *x, int how, int starts, MPI_Comm comm, int *ran)
{
    xchg_request req = NULL;
    int e;
    *ran = XCHG_ALGO_INVALID;
    if (how == A2AV_BLOCKING) {
        e = xchg_alltoallv(x->sb, x->sc, x->sd, MPI_BYTE, x->out, x->rc, x->rd, MPI_BYTE, comm);
    } else if (how == A2AV_NONBLOCKING) {
        e = xchg_ialltoallv(x->sb, x->sc, x->sd, MPI_BYTE, x->out, x->rc, x->rd, MPI_BYTE,
                            comm, &req);
        if (e == MPI_SUCCESS)
            e = xchg_wait(req);
    } else {
        e = xchg_alltoallv_init(x->sb, x->sc, x->sd, MPI_BYTE, x->out, x->rc, x->rd, MPI_BYTE,
                                comm, MPI_INFO_NULL, &req);
        for (int k = 0; k < starts && e == MPI_SUCCESS; k++) {
            memset(x->out, 0, (size_t)x->rt + 1);
            e = xchg_start(req);
            if (e == MPI_SUCCESS)
                e = xchg_wait(req);
        }
        if (e == MPI_SUCCESS)
            *ran = xchg_request_algo(req);
    }
    if (req)
        xchg_request_free(&req);
    if (how != A2AV_PERSISTENT) {
        xchg_stats s;
        xchg_get_stats(comm, &s);
        *ran = s.algo;
    }
    return e;
}
