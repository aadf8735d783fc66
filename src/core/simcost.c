/*
 * simcost.c - simulated cost of libxchg's local copies (SMPI build only).
 *
 * The simulation runs with smpi/simulate-computation:no (deterministic,
 * independent of this machine's load), so copies and packing would be free.
 * Instead every copy site calls xchg_charge_copy(bytes), which charges a
 * fixed model: XCHG_SIM_COPY_NS_DEFAULT per call plus bytes at
 * XCHG_SIM_COPY_GBPS_DEFAULT, as computation on the rank's simulated core.
 * Both can be overridden once per run with the environment variables
 * XCHG_SIM_COPY_NS and XCHG_SIM_COPY_GBPS (docs/simulation.md).
 * Outside XCHG_SMPI, xchg_charge_copy is an empty inline (core.h).
 *
 * Charges are summed and executed as one computation when the rank next
 * calls MPI or leaves libxchg (xchg_charge_flush: every MPI call libxchg
 * makes flushes first, see sim_flush.h, and xchg_raise, the exit of every
 * entry point, flushes too). The rank's core does nothing else in
 * between (one simulated core per rank), so the simulated time is the
 * same as one computation per copy, but the simulator handles one
 * activity instead of thousands: at 1024 ranks node_pairs charges about
 * 2,000 copies per rank and call, which were two thirds of the
 * simulation's CPU time. XCHG_SIM_COPY_BATCH=0 charges every copy at once
 * (CTest smpi.copy_charges.* compares both).
 */
#include "core.h"

#ifdef XCHG_SMPI
#include <simgrid/host.h>
#include <stdlib.h>
#include <string.h>

/* Per-call cost (ns) and bandwidth (GB/s = 1e9 B/s) of one copy: a memcpy
 * of a cache-resident block costs tens of ns to start; 5 GB/s is a single
 * core's copy rate for data that is not in cache (read + write). */
#define XCHG_SIM_COPY_NS_DEFAULT 10.0
#define XCHG_SIM_COPY_GBPS_DEFAULT 5.0

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

/* Read once per simulated rank (SMPI privatizes these globals). */
static int cost_ready, batch = 1;
static double cost_per_call_s, cost_per_byte_s;
static double pending_s; /* charged, not yet executed */

static void execute(double seconds)
{
    /* smpi_execute() would scale by smpi/host-speed (the speed of the
     * machine running the simulation) and drop anything under
     * smpi/cpu-threshold (1 us); flops at this simulated core's speed give
     * exactly `seconds`. */
    smpi_execute_flops(seconds * sg_host_get_speed(sg_host_self()));
}

void xchg_charge_copies(size_t calls, size_t bytes)
{
    if (!cost_ready) {
        cost_per_call_s = env_double("XCHG_SIM_COPY_NS", XCHG_SIM_COPY_NS_DEFAULT, 0) * 1e-9;
        cost_per_byte_s = 1.0 / (env_double("XCHG_SIM_COPY_GBPS",
                                            XCHG_SIM_COPY_GBPS_DEFAULT, 1) * 1e9);
        const char *b = getenv("XCHG_SIM_COPY_BATCH");
        batch = !(b && strcmp(b, "0") == 0);
        cost_ready = 1;
    }
    double seconds = (double)calls * cost_per_call_s + (double)bytes * cost_per_byte_s;
    if (seconds <= 0)
        return;
    if (batch)
        pending_s += seconds;
    else
        execute(seconds);
}

void xchg_charge_copy(size_t bytes)
{
    xchg_charge_copies(1, bytes);
}

void xchg_charge_flush(void)
{
    if (pending_s > 0) {
        double s = pending_s;
        pending_s = 0;
        execute(s);
    }
}
#endif
