#!/usr/bin/env python3
"""Writes a SimGrid platform (XML) and a hostfile for a simulated cluster.

    sim/mkplatform.py --ranks 256 [--preset hpc|eth] [--topology flat|fattree]
                    [--rpn 16] [--bw 100Gbps] [--lat 1us] [--mem-bw GBPS|none] --out DIR

Creates DIR/platform.xml and DIR/hostfile (R lines "node-i" per node of R
ranks, so MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) sees nodes) and prints the
two paths. Defaults and their sources are in docs/simulation.md ("Platforms").
"""
import argparse
import math
import os
import sys

# Presets: link bandwidth and latency per node link, backbone/switch links,
# and the loopback link that carries the traffic between ranks of one node
# (shared memory). See docs/simulation.md ("Platforms") for where the numbers come from.
PRESETS = {
    # A message between nodes crosses node link + switch + node link, plus
    # the 0.2 us send and receive overheads of smpi.cfg: the latencies are
    # chosen so that sim/pingpong measures the documented MPI latency.
    # InfiniBand EDR/HDR-class interconnect: 100 Gb/s per node, MPI ping-pong
    # about 1.0-1.5 us (measured: 1.30 us).
    "hpc": dict(bw="100Gbps", lat="0.4us", bb_lat="0.1us"),
    # Commodity 10 Gb/s Ethernet with a kernel TCP stack: MPI ping-pong
    # about 10-15 us (measured: 11.4 us).
    "eth": dict(bw="10Gbps", lat="5us", bb_lat="1us"),
    # Today's many-core nodes (64-192 ranks each) on a 200 Gb/s network
    # (HDR-200, Slingshot-11): the same latencies as hpc, twice the bandwidth
    # per node. Used with --rpn 64 or 96.
    "hpc200": dict(bw="200Gbps", lat="0.4us", bb_lat="0.1us"),
}
# Shared memory between ranks of one node (both presets): ~20 GB/s copy
# bandwidth; 0.15 us plus the overheads gives an intra-node ping-pong of
# 0.55 us (typical figures: 0.3-0.7 us).
LOOPBACK = dict(loopback_bw="160Gbps", loopback_lat="0.15us")
# A node's memory bandwidth for the library's copies, in copied bytes per
# second per core of the node (50 GB/s for 16 ranks a node, 200 for 64): a
# memcpy reads and writes each byte, so a dual-socket 64-core node's STREAM
# figure of about 200-250 GB/s (AnandTech, EPYC 7601, 2017) is about
# 1.6-2 GB/s of copied bytes a core from DRAM; a call's copies (under 1 MB
# a node at 1,024 ranks and 16 B blocks) mostly stay in the shared L3,
# which is faster. 3.125 lies between; docs/simulation.md has the
# sensitivity (25, 50, 100 GB/s a node of 16).
MEM_GBPS_PER_CORE = 3.125


def bw_times(bw, n):
    """'100Gbps' times n, in Gbps."""
    assert bw.endswith("Gbps")
    return f"{float(bw[:-4]) * n:g}Gbps"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", type=int, required=True, help="number of MPI ranks")
    ap.add_argument("--rpn", type=int, default=16, help="ranks per node (default 16)")
    ap.add_argument("--preset", choices=sorted(PRESETS), default="hpc")
    ap.add_argument("--topology", choices=["flat", "fattree"], default="flat")
    ap.add_argument("--bw", help="node link bandwidth, e.g. 100Gbps (overrides preset)")
    ap.add_argument("--lat", help="node link latency, e.g. 1us (overrides preset)")
    ap.add_argument("--leaf", type=int, default=16,
                    help="fat tree: nodes per leaf switch (default 16)")
    ap.add_argument("--backbone", choices=["shared", "fatpipe", "none"], default="shared",
                    help="flat: one shared backbone of nodes x link bandwidth (shared, "
                         "default) or a switch never shared (fatpipe: same results, but "
                         "SimGrid 3.32 simulates it 10-100x slower), or no switch link at "
                         "all (none: its latency split over the two node links; the same "
                         "routes' latency and bandwidth, and what lets "
                         "maxmin/concurrency-limit pay off, docs/simulation.md)")
    ap.add_argument("--mem-bw", default="auto",
                    help="a node's memory bandwidth for copies in GB/s of copied bytes, "
                         f"shared by its ranks (default {MEM_GBPS_PER_CORE:g} per rank of a "
                         "node), or none: no shared limit (every rank copies at its core's "
                         "rate, the older model)")
    ap.add_argument("--out", required=True, help="directory for platform.xml and hostfile")
    a = ap.parse_args()
    if a.ranks < 1 or a.rpn < 1:
        sys.exit("mkplatform.py: --ranks and --rpn must be positive")

    p = dict(PRESETS[a.preset])
    if a.bw:
        p["bw"] = a.bw
    if a.lat:
        p["lat"] = a.lat
    nodes = math.ceil(a.ranks / a.rpn)
    # One core per rank of a node: ranks charged for computation (MPI_Iprobe,
    # charged copies) at the same time do not share one CPU.
    common = (f'speed="100Gf" core="{a.rpn}" bw="{p["bw"]}" lat="{p["lat"]}" '
              f'loopback_bw="{LOOPBACK["loopback_bw"]}" '
              f'loopback_lat="{LOOPBACK["loopback_lat"]}" sharing_policy="SPLITDUPLEX"')
    if a.topology == "flat" and a.backbone == "none":
        # Two node links per message and nothing between them: the switch's
        # latency goes half to each link, so a message between nodes sees
        # the same latency as with a backbone. The shared backbone (nodes x
        # link bandwidth) never bound, so bandwidths are unchanged too.
        half = float(p["bb_lat"][:-2]) / 2
        lat = f'{float(p["lat"][:-2]) + half:g}us'
        common = common.replace(f'lat="{p["lat"]}"', f'lat="{lat}"', 1)
        cluster = (f'<cluster id="c" prefix="node-" radical="0-{nodes - 1}" suffix="" '
                   f'{common}/>')
    elif a.topology == "flat":
        bb = (f'bb_bw="{p["bw"]}" bb_sharing_policy="FATPIPE"' if a.backbone == "fatpipe"
              else f'bb_bw="{bw_times(p["bw"], nodes)}" bb_sharing_policy="SHARED"')
        # One non-blocking switch (full bisection): each node's full-duplex
        # link is shared by the node's ranks; the switch is a backbone of
        # nodes x link bandwidth, so it never limits more than the links do.
        # (A FATPIPE backbone says the same more literally, but SimGrid 3.32
        # took minutes instead of seconds for P=64 alltoalls with it.)
        cluster = (f'<cluster id="c" prefix="node-" radical="0-{nodes - 1}" suffix="" '
                   f'{common} {bb} bb_lat="{p["bb_lat"]}"/>')
    else:
        # Two-level fat tree with full bisection: `leaf` nodes per leaf switch,
        # `leaf` top switches, one link from every leaf to every top switch.
        # SimGrid needs exactly leaf x leaves hosts: round the node count up.
        leaf = max(1, min(a.leaf, nodes))
        leaves = math.ceil(nodes / leaf)
        nodes = leaf * leaves
        cluster = (f'<cluster id="c" prefix="node-" radical="0-{nodes - 1}" suffix="" '
                   f'{common} topology="FAT_TREE" '
                   f'topo_parameters="2;{leaf},{leaves};1,{leaf};1,1"/>')

    # One memory host per node, "mem-i" for "node-i" (src/core/simcost.c):
    # its speed is the node's copy bandwidth in bytes/s, shared max-min by
    # the copies its ranks run there, each bounded by its core's rate. It
    # runs no rank and has no links.
    if a.mem_bw == "none":
        memory = ""
    else:
        gbps = a.rpn * MEM_GBPS_PER_CORE if a.mem_bw == "auto" else float(a.mem_bw)
        if not gbps > 0:
            sys.exit("mkplatform.py: --mem-bw must be positive, auto or none")
        memory = ('<zone id="memory" routing="None">\n' +
                  "".join(f'  <host id="mem-{i}" speed="{gbps:g}Gf"/>\n' for i in range(nodes)) +
                  "</zone>\n")
    os.makedirs(a.out, exist_ok=True)
    xml = os.path.join(a.out, "platform.xml")
    hosts = os.path.join(a.out, "hostfile")
    with open(xml, "w") as f:
        f.write("<?xml version='1.0'?>\n"
                '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
                '<platform version="4.1">\n'
                f"<!-- {a.topology}, preset {a.preset}, {a.ranks} ranks, {a.rpn} per node, "
                f"memory {a.mem_bw} (sim/mkplatform.py) -->\n"
                '<zone id="world" routing="Full">\n'
                f"{cluster}\n{memory}</zone>\n</platform>\n")
    with open(hosts, "w") as f:
        left = a.ranks
        for i in range(nodes):
            n = min(a.rpn, left)
            if n <= 0:
                break
            # One line per rank: smpirun unrolls "host:R" lines into a
            # temporary file in the current folder, kept there on failure.
            f.write(f"node-{i}\n" * n)
            left -= n
    print(xml)
    print(hosts)


if __name__ == "__main__":
    main()
