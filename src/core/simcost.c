/*
 * simcost.c - simulated cost of libxchg's local work (SMPI build only).
 *
 * The simulation runs with smpi/simulate-computation:no (deterministic,
 * independent of this machine's load), so local work would be free.
 * Instead the library charges it from calibrated per-operation costs
 * (core/calibrated.h, measured by sim/calibrate/run):
 *
 *   copies   xchg_charge_copy(bytes) at every copy site: a fixed cost per
 *            copy on the rank's core, and the bytes through the node's
 *            memory. Where the platform has a memory host for the node
 *            ("mem-N" for host "node-N", sim/mkplatform.py), the bytes are
 *            an execution on it bounded by one core's copy rate: the
 *            node's ranks share its memory bandwidth max-min, none faster
 *            than its core. Without one, bytes at one core's rate on the
 *            rank's own core (no shared limit).
 *   CPU work xchg_charge_ops(op, n): argument checks, loops over peers,
 *            block-size sums, the model's ranking, on the rank's core; a
 *            flag of a node window seen by a member that waited for it
 *            (node/shm_window.c: the real code's synchronisation, asleep
 *            on SimGrid conditions).
 *   set-up   xchg_charge_setup_*: what MPI_Comm_dup, MPI_Comm_split_type
 *            and the shared windows cost on real MPI (SMPI's cost little),
 *            called by sim_flush.h's wrappers of those functions.
 *
 * Overrides, read once per simulated rank: XCHG_SIM_COPY_NS,
 * XCHG_SIM_COPY_GBPS (the core's rate), XCHG_SIM_NODE_MEMORY=0 (no shared
 * limit even where the platform has one), XCHG_SIM_OPS=0 (CPU work and
 * set-up free, the older model), docs/simulation.md.
 *
 * Charges are summed and executed when the rank next calls MPI or leaves
 * libxchg (xchg_charge_flush: every MPI call libxchg makes flushes first,
 * see sim_flush.h, and xchg_raise, the exit of every entry point, flushes
 * too): first the core's share, then the memory's. The rank's core does
 * nothing else in between (one simulated core per rank), so the simulated
 * time is that of one computation per copy where memory is not shared,
 * but the simulator handles one activity instead of thousands (at 1024
 * ranks node_pairs charges about 2,000 copies per rank and call).
 * XCHG_SIM_COPY_BATCH=0 charges every copy at once (CTest
 * smpi.copy_charges.* compares both without the node limit).
 * Outside XCHG_SMPI these are empty inlines (core.h).
 */
#include "core.h"

#ifdef XCHG_SMPI
#include <math.h>
#include <simgrid/actor.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrated.h"

static double env_double(const char *name, double dflt, int positive)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    double v = strtod(s, &end);
    if (*end || v < 0 || (positive && v == 0))
        return dflt;
    return v;
}

static int env_off(const char *name)
{
    const char *s = getenv(name);
    return s && strcmp(s, "0") == 0;
}

/* Read once per simulated rank (SMPI privatizes these globals). */
static int cost_ready, batch = 1, ops_on = 1;
static double cost_per_call_s, core_Bps;
static double op_s[XCHG_OP_COUNT];
static sg_host_t memory; /* the node's memory host, or NULL */
static double pending_s;     /* core time charged, not yet executed */
static double pending_bytes; /* bytes through memory, not yet executed */

/* The node's memory host: "mem-N" for this rank's host "node-N". */
static sg_host_t memory_of_node(void)
{
    const char *name = sg_host_get_name(sg_host_self());
    if (strncmp(name, "node-", 5) != 0)
        return NULL;
    char mem[64];
    snprintf(mem, sizeof mem, "mem-%s", name + 5);
    return sg_host_by_name(mem);
}

static void cost_init(void)
{
    cost_per_call_s = env_double("XCHG_SIM_COPY_NS", XCHG_CAL_COPY_CALL_NS, 0) * 1e-9;
    core_Bps = env_double("XCHG_SIM_COPY_GBPS", XCHG_CAL_COPY_CORE_GBPS, 1) * 1e9;
    batch = !env_off("XCHG_SIM_COPY_BATCH");
    ops_on = !env_off("XCHG_SIM_OPS");
    memory = env_off("XCHG_SIM_NODE_MEMORY") ? NULL : memory_of_node();
    op_s[XCHG_OP_CHECK_PEER] = XCHG_CAL_CHECK_PEER_NS * 1e-9;
    op_s[XCHG_OP_PEER] = XCHG_CAL_PEER_NS * 1e-9;
    op_s[XCHG_OP_SIZE_SUM] = XCHG_CAL_SIZE_SUM_NS * 1e-9;
    op_s[XCHG_OP_MODEL] = XCHG_CAL_MODEL_NS * 1e-9;
    op_s[XCHG_OP_FLAG] = XCHG_CAL_FLAG_NS * 1e-9;
    cost_ready = 1;
}

static void execute(double seconds)
{
    /* smpi_execute() would scale by smpi/host-speed (the speed of the
     * machine running the simulation) and drop anything under
     * smpi/cpu-threshold (1 us); flops at this simulated core's speed give
     * exactly `seconds`. */
    if (seconds > 0)
        smpi_execute_flops(seconds * sg_host_get_speed(sg_host_self()));
}

/* bytes through the node's memory (its host's speed is bytes/s), at most
 * one core's rate; without a memory host, at the core's rate. */
static void execute_memory(double bytes)
{
    if (bytes <= 0)
        return;
    if (!memory) {
        execute(bytes / core_Bps);
        return;
    }
    sg_exec_t e = sg_actor_exec_init(bytes);
    sg_exec_set_host(e, memory);
    sg_exec_set_bound(e, core_Bps);
    sg_exec_start(e);
    sg_exec_wait(e);
}

static void charge(double core_s, double bytes)
{
    if (batch) {
        pending_s += core_s;
        pending_bytes += bytes;
        return;
    }
    execute(core_s);
    execute_memory(bytes);
}

void xchg_charge_copies(size_t calls, size_t bytes)
{
    if (!cost_ready)
        cost_init();
    if (calls || bytes)
        charge((double)calls * cost_per_call_s, (double)bytes);
}

void xchg_charge_copy(size_t bytes)
{
    xchg_charge_copies(1, bytes);
}

void xchg_charge_ops(xchg_op op, size_t n)
{
    if (!cost_ready)
        cost_init();
    if (ops_on && n && op >= 0 && op < XCHG_OP_COUNT)
        charge((double)n * op_s[op], 0.0);
}

static double rounds_of(MPI_Comm comm)
{
    int P = 1;
    if (MPI_Comm_size(comm, &P) != MPI_SUCCESS || P < 2)
        return 1.0;
    return ceil(log2((double)P));
}

/* Set-up is executed at once, never summed: a window may be freed from
 * an attribute's delete callback, outside any xchg call, where nothing
 * would flush the sum until a later call. */
static void charge_now(double seconds)
{
    xchg_charge_flush();
    execute(seconds);
}

/* Real MPI's cost of making a communicator (its collective agreement on a
 * context id, log P rounds), charged before the simulated call. */
void xchg_charge_setup_comm(MPI_Comm comm, int split_type)
{
    if (!cost_ready)
        cost_init();
    if (ops_on)
        charge_now(rounds_of(comm) *
                   (split_type ? XCHG_CAL_SPLIT_ROUND_US : XCHG_CAL_DUP_ROUND_US) * 1e-6);
}

void xchg_charge_setup_window(MPI_Aint bytes, int freed)
{
    if (!cost_ready)
        cost_init();
    if (!ops_on)
        return;
    if (freed)
        charge_now(XCHG_CAL_WIN_FREE_US * 1e-6);
    else
        charge_now((XCHG_CAL_WIN_US + XCHG_CAL_WIN_KIB_US * (double)bytes / 1024.0) * 1e-6);
}

void xchg_charge_flush(void)
{
    if (pending_s > 0 || pending_bytes > 0) {
        double s = pending_s, b = pending_bytes;
        pending_s = pending_bytes = 0;
        execute(s);
        execute_memory(b);
    }
}
#endif
