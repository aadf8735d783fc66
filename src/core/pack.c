/*
 * pack.c - datatypes as bytes.
 *
 * Algorithms that forward or pad data (Bruck, padded, hierarchical, grid)
 * move bytes, not typed elements. A block of `count` elements of any
 * datatype becomes count*size bytes here and back; contiguous types take the
 * memcpy path, every other type goes through MPI_Pack/MPI_Unpack, so derived
 * types with holes, negative lower bounds or resized extents all work.
 */
#include "core.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* MPI_Pack needs a communicator; its error handler must return, not abort.
 * The duplicate of MPI_COMM_SELF is made with MPI_COMM_SELF's handler set
 * to return, so that a process out of communicators does not abort here
 * (then MPI_COMM_SELF itself serves, and MPI_Pack errors, which a correct
 * call never has, would go to its handler). */
static pthread_once_t self_once = PTHREAD_ONCE_INIT;
static MPI_Comm xchg_self = MPI_COMM_NULL;

static void self_create(void)
{
    MPI_Errhandler old = MPI_ERRHANDLER_NULL;
    int have_old = MPI_Comm_get_errhandler(MPI_COMM_SELF, &old) == MPI_SUCCESS;
    if (have_old)
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (MPI_Comm_dup(MPI_COMM_SELF, &xchg_self) == MPI_SUCCESS)
        MPI_Comm_set_errhandler(xchg_self, MPI_ERRORS_RETURN);
    else
        xchg_self = MPI_COMM_NULL;
    if (have_old) {
        MPI_Comm_set_errhandler(MPI_COMM_SELF, old);
        MPI_Errhandler_free(&old);
    }
}

static MPI_Comm self_comm(void)
{
    pthread_once(&self_once, self_create);
    return xchg_self != MPI_COMM_NULL ? xchg_self : MPI_COMM_SELF;
}

int xchg_typeinfo_get(MPI_Datatype type, xchg_typeinfo *ti)
{
    memset(ti, 0, sizeof *ti);
    ti->type = type;
    int rc = MPI_Type_size(type, &ti->size);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_get_extent(type, &ti->lb, &ti->extent);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_get_true_extent(type, &ti->true_lb, &ti->true_extent);
    if (rc != MPI_SUCCESS)
        return rc;
    /* One element is `size` bytes with no holes, and consecutive elements
     * follow each other with no gap: then count elements are one byte run. */
    ti->contig = ti->size == ti->true_extent && ti->extent == ti->size &&
                 ti->true_lb == ti->lb;
    return MPI_SUCCESS;
}

int xchg_pack_block(const void *buf, int disp, int count, const xchg_typeinfo *ti,
                    void *out)
{
    if (count <= 0 || ti->size == 0)
        return MPI_SUCCESS;
    const char *src = xchg_block_addr(buf, disp, ti);
    size_t bytes = (size_t)count * (size_t)ti->size;
    xchg_charge_copy(bytes);
    if (ti->contig) {
        memcpy(out, src + ti->true_lb, bytes);
        return MPI_SUCCESS;
    }
    if (bytes > INT_MAX)
        return xchg_error_code(MPI_ERR_COUNT, "a block of %zu bytes of a non-contiguous "
                               "datatype exceeds MPI_Pack's int range", bytes);
    int pos = 0;
    return MPI_Pack(src, count, ti->type, out, (int)bytes, &pos, self_comm());
}

int xchg_unpack_block(const void *in, void *buf, int disp, int count,
                      const xchg_typeinfo *ti)
{
    if (count <= 0 || ti->size == 0)
        return MPI_SUCCESS;
    char *dst = xchg_block_addr(buf, disp, ti);
    size_t bytes = (size_t)count * (size_t)ti->size;
    xchg_charge_copy(bytes);
    if (ti->contig) {
        memcpy(dst + ti->true_lb, in, bytes);
        return MPI_SUCCESS;
    }
    if (bytes > INT_MAX)
        return xchg_error_code(MPI_ERR_COUNT, "a block of %zu bytes of a non-contiguous "
                               "datatype exceeds MPI_Unpack's int range", bytes);
    int pos = 0;
    return MPI_Unpack(in, (int)bytes, &pos, dst, count, ti->type, self_comm());
}

int xchg_type_check_committed(MPI_Datatype type)
{
    /* the common predefined types without asking MPI (two calls a type
     * on every call's checks) */
    if (type == MPI_BYTE || type == MPI_CHAR || type == MPI_INT || type == MPI_DOUBLE ||
        type == MPI_FLOAT || type == MPI_LONG || type == MPI_LONG_LONG || type == MPI_UNSIGNED)
        return MPI_SUCCESS;
    /* MPI has no query for "committed"; packing zero elements is rejected
     * for an uncommitted type by both MPICH and Open MPI (Open MPI crashes
     * in MPI_Pack_size instead, so that is not used). */
    int combiner = 0, ni, na, nd;
    if (MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
    if (combiner == MPI_COMBINER_NAMED)
        return MPI_SUCCESS;
    char in[1], out[16];
    int pos = 0;
    return MPI_Pack(in, 0, type, out, (int)sizeof out, &pos, self_comm());
}

int xchg_self_copy(xchg_call *c)
{
    int r = c->rank;
    int scount = c->sendcounts[r], rcount = c->recvcounts[r];
    size_t sbytes = (size_t)scount * (size_t)c->st.size;
    size_t rbytes = (size_t)rcount * (size_t)c->rt.size;
    if (sbytes > rbytes)
        return xchg_error_code(MPI_ERR_TRUNCATE, "rank %d sends itself %zu bytes but "
                               "receives only %zu", r, sbytes, rbytes);
    if (sbytes == 0)
        return MPI_SUCCESS;
    if (c->st.contig) {
        const char *src = xchg_block_addr(c->sendbuf, c->sdispls[r], &c->st) + c->st.true_lb;
        return xchg_unpack_block(src, c->recvbuf, c->rdispls[r],
                                 (int)(sbytes / (size_t)c->rt.size), &c->rt);
    }
    int err = MPI_SUCCESS;
    char *tmp = xchg_temp_alloc(c, sbytes, "self block", &err);
    if (!tmp)
        return err;
    err = xchg_pack_block(c->sendbuf, c->sdispls[r], scount, &c->st, tmp);
    if (err == MPI_SUCCESS)
        err = xchg_unpack_block(tmp, c->recvbuf, c->rdispls[r],
                                (int)(sbytes / (size_t)c->rt.size), &c->rt);
    xchg_temp_free(c, tmp, sbytes);
    return err;
}

int xchg_unpack_checked(xchg_call *c, const char *who, int src, const void *in, int64_t b,
                        int err)
{
    const int64_t rsz = c->rt.size;
    int64_t room = (int64_t)c->recvcounts[src] * rsz;
    if (b > room || b % rsz) {
        if (err == MPI_SUCCESS)
            err = xchg_error_code(MPI_ERR_TRUNCATE, "%s: rank %d sends rank %d %lld bytes, "
                                  "which recvcounts[%d] (%lld bytes) does not match", who, src,
                                  c->rank, (long long)b, src, (long long)room);
    } else if (err == MPI_SUCCESS) {
        err = xchg_unpack_block(in, c->recvbuf, c->rdispls[src], (int)(b / rsz), &c->rt);
    }
    return err;
}
