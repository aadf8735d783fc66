/*
 * check.c - the argument checks of the entry points, before any
 * communication: each error names the argument (xchg_error_code adds the
 * rank). Also the byte span a block layout covers, which the checks and
 * MPI_IN_PLACE use.
 */
#include "core.h"

static int check_type(MPI_Datatype t, const char *arg)
{
    if (t == MPI_DATATYPE_NULL)
        return xchg_error_code(MPI_ERR_TYPE, "%s is MPI_DATATYPE_NULL", arg);
    if (xchg_type_check_committed(t) != MPI_SUCCESS)
        return xchg_error_code(MPI_ERR_TYPE, "%s is not a committed datatype "
                               "(call MPI_Type_commit first)", arg);
    return MPI_SUCCESS;
}

static int check_counts(const int counts[], const int displs[], int P,
                        const char *cname, const char *dname)
{
    if (!counts)
        return xchg_error_code(MPI_ERR_ARG, "%s is NULL", cname);
    if (!displs)
        return xchg_error_code(MPI_ERR_ARG, "%s is NULL", dname);
    for (int i = 0; i < P; i++)
        if (counts[i] < 0)
            return xchg_error_code(MPI_ERR_COUNT, "%s[%d] is negative (%d)", cname, i,
                                   counts[i]);
    return MPI_SUCCESS;
}

/* The first peer with a nonempty block (count > 0 of a type with data), or -1. */
static int first_nonempty(const int counts[], int P, MPI_Datatype type)
{
    int size = 0;
    if (MPI_Type_size(type, &size) != MPI_SUCCESS || size == 0)
        return -1;
    for (int i = 0; i < P; i++)
        if (counts[i] > 0)
            return i;
    return -1;
}

/* A NULL buffer with data to move: MPI_BOTTOM is NULL too, so like MPICH
 * only a type whose data starts at its origin (true lower bound 0, as every
 * predefined type) is refused; absolute-address types from MPI_BOTTOM pass. */
static int check_buffer(const void *buf, const int counts[], int P, MPI_Datatype type,
                        const char *bname, const char *cname)
{
    if (buf)
        return MPI_SUCCESS;
    int i = first_nonempty(counts, P, type);
    MPI_Aint true_lb = 0, true_extent = 0;
    if (i < 0 || MPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS ||
        true_lb != 0)
        return MPI_SUCCESS;
    return xchg_error_code(MPI_ERR_BUFFER, "%s is NULL but %s[%d] is %d", bname, cname, i,
                           counts[i]);
}

int xchg_check_comm(MPI_Comm comm, int *P)
{
    int flag = 0;
    if (comm == MPI_COMM_NULL)
        return xchg_error_code(MPI_ERR_COMM, "comm is MPI_COMM_NULL");
    if (MPI_Comm_test_inter(comm, &flag) != MPI_SUCCESS)
        return xchg_error_code(MPI_ERR_COMM, "comm is not a valid communicator");
    if (flag)
        return xchg_error_code(MPI_ERR_COMM, "comm is an intercommunicator, which xchg "
                               "does not support");
    MPI_Comm_size(comm, P);
    return MPI_SUCCESS;
}

int xchg_check_alltoallv_args(const void *sendbuf, const int sendcounts[],
                              const int sdispls[], MPI_Datatype sendtype,
                              const void *recvbuf, const int recvcounts[],
                              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    int P = 0, rc;
    if ((rc = xchg_check_comm(comm, &P)) != MPI_SUCCESS)
        return rc;
    return xchg_check_alltoallv_arrays(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                       recvcounts, rdispls, recvtype, P);
}

int xchg_check_alltoallv_arrays(const void *sendbuf, const int sendcounts[],
                                const int sdispls[], MPI_Datatype sendtype,
                                const void *recvbuf, const int recvcounts[],
                                const int rdispls[], MPI_Datatype recvtype, int P)
{
    int rc;
    /* what MPI's own argument checks cost too (MPICH checks every count) */
    xchg_charge_ops(XCHG_OP_CHECK_PEER, (size_t)(sendbuf == MPI_IN_PLACE ? P : 2 * P));
    if (recvbuf == MPI_IN_PLACE)
        return xchg_error_code(MPI_ERR_BUFFER, "recvbuf is MPI_IN_PLACE: only sendbuf "
                               "may be MPI_IN_PLACE");
    if ((rc = check_counts(recvcounts, rdispls, P, "recvcounts", "rdispls")) != MPI_SUCCESS)
        return rc;
    if ((rc = check_type(recvtype, "recvtype")) != MPI_SUCCESS)
        return rc;
    if ((rc = check_buffer(recvbuf, recvcounts, P, recvtype, "recvbuf", "recvcounts")) !=
        MPI_SUCCESS)
        return rc;
    if (sendbuf == MPI_IN_PLACE)
        return MPI_SUCCESS; /* send arguments are ignored */
    if ((rc = check_counts(sendcounts, sdispls, P, "sendcounts", "sdispls")) != MPI_SUCCESS)
        return rc;
    if ((rc = check_type(sendtype, "sendtype")) != MPI_SUCCESS)
        return rc;
    if ((rc = check_buffer(sendbuf, sendcounts, P, sendtype, "sendbuf", "sendcounts")) !=
        MPI_SUCCESS)
        return rc;
    /* The same buffer on both sides: the exchange would overwrite blocks
     * before sending them (MPICH's MPI_Alltoallv refuses it too). */
    if (sendbuf && sendbuf == recvbuf && first_nonempty(sendcounts, P, sendtype) >= 0 &&
        first_nonempty(recvcounts, P, recvtype) >= 0)
        return xchg_error_code(MPI_ERR_BUFFER, "sendbuf and recvbuf are the same buffer; "
                               "use MPI_IN_PLACE as sendbuf to exchange in place");
    return MPI_SUCCESS;
}

/* One side of a neighbour exchange: arrays of `degree` entries (NULL
 * allowed when degree is 0, as MPI's empty neighbourhoods are), a
 * committed type, a buffer where data moves. */
static int check_neighbor_side(const void *buf, const int counts[], const int displs[],
                               MPI_Datatype type, int degree, const char *bname,
                               const char *cname, const char *dname, const char *tname)
{
    int rc;
    if (buf == MPI_IN_PLACE)
        return xchg_error_code(MPI_ERR_BUFFER, "%s is MPI_IN_PLACE, which a neighbour "
                               "exchange does not allow (MPI does not either)", bname);
    if (degree > 0 && (rc = check_counts(counts, displs, degree, cname, dname)) != MPI_SUCCESS)
        return rc;
    if ((rc = check_type(type, tname)) != MPI_SUCCESS)
        return rc;
    return degree > 0 ? check_buffer(buf, counts, degree, type, bname, cname) : MPI_SUCCESS;
}

int xchg_check_neighbor_arrays(const void *sendbuf, const int sendcounts[],
                               const int sdispls[], MPI_Datatype sendtype, int outdegree,
                               const void *recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, int indegree)
{
    int rc = check_neighbor_side(sendbuf, sendcounts, sdispls, sendtype, outdegree, "sendbuf",
                                 "sendcounts", "sdispls", "sendtype");
    if (rc == MPI_SUCCESS)
        rc = check_neighbor_side(recvbuf, recvcounts, rdispls, recvtype, indegree, "recvbuf",
                                 "recvcounts", "rdispls", "recvtype");
    return rc;
}

void xchg_block_span(const int counts[], const int displs[], int P,
                     const xchg_typeinfo *ti, MPI_Aint *lo, size_t *bytes)
{
    MPI_Aint l = 0, h = 0;
    int any = 0;
    for (int i = 0; i < P; i++) {
        if (counts[i] == 0 || ti->size == 0)
            continue;
        MPI_Aint b = (MPI_Aint)displs[i] * ti->extent + ti->true_lb;
        MPI_Aint e = b + (MPI_Aint)(counts[i] - 1) * ti->extent + ti->true_extent;
        if (!any || b < l) l = b;
        if (!any || e > h) h = e;
        any = 1;
    }
    *lo = l;
    *bytes = any ? (size_t)(h - l) : 0;
}
