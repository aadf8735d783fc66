"""sim/bound.py: the simulated platform's lower bound for a study cell.

No exchange of a pattern can end before its busiest node has moved its
off-node bytes through its link: per node, the larger of the bytes leaving
it and the bytes entering it, over the link's bandwidth in one direction
(the presets' links are full duplex), plus one latency between nodes (the
ping-pong's half round trip: docs/simulation.md, "Platforms"). Bytes
between ranks of one node are not counted, nor any copy, overhead or
second round: it is a bound, not a model. With every rank on one node
there is no link to bound, and no figure.

The counts are xchg-bench's own (tools/bench/patterns.c, its defaults:
seed 1, density 0.25, zipf exponent 1, 1 hot receiver with 80%), computed
here from the same counter-based hash; ranks are placed on nodes in
blocks of the ranks per node, as sim/mkplatform.py's hostfile places
them. Sparse counts draw new partners every call: the bound is the mean
over the calls a cell times (its warm-up calls are skipped).
"""
import math

M64 = (1 << 64) - 1

# Link bandwidth per direction (bytes/s) and the latency between nodes (s)
# of each preset (sim/mkplatform.py; docs/simulation.md, "Platforms").
PRESETS = {"hpc": (12.5e9, 1.30e-6), "hpc200": (25.0e9, 1.30e-6), "eth": (1.25e9, 11.4e-6)}

S_RANDOM, S_SPARSE_SET, S_SPARSE_SIZE, S_ZIPF, S_HOT = 1, 2, 3, 4, 5
SEED, DENSITY, ZIPF_S, HOT, HOT_FRACTION = 1, 0.25, 1.0, 1, 0.8


def mix(x):
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def hash5(seed, stream, a, b, c):
    return mix(mix(mix(mix(seed ^ ((stream << 56) & M64)) ^ a) ^ b) ^ c)


def permute(key, n, x):
    """patterns.c's keyed bijection of [0, n)."""
    if n <= 1:
        return 0
    bits = 0
    while (1 << bits) < n:
        bits += 1
    half = (bits + 1) // 2
    mask = (1 << half) - 1
    v = x
    while True:
        L, R = v >> half, v & mask
        for r in range(4):
            t = L ^ (mix(key ^ ((r << 60) & M64) ^ R) & mask)
            L, R = R, t
        v = (L << half) | R
        if v < n:
            return v


def lround(x):
    """C's llround for the non-negative values used here (halves away from 0)."""
    return int(math.floor(x + 0.5))


def row(pattern, P, avg, i, it):
    """Rank i's send counts (bytes: MPI_BYTE) at call index it."""
    if pattern == "uniform":
        return [avg] * P
    if pattern == "random":
        return [hash5(SEED, S_RANDOM, i, j, 0) % (2 * avg + 1) for j in range(P)]
    if pattern == "sparse":
        k = min(P, max(1, math.ceil(DENSITY * P)))
        key = hash5(SEED, S_SPARSE_SET, i, it, 0)
        out = []
        for j in range(P):
            if permute(key, P, j) >= k:
                out.append(0)
            else:
                h = hash5(SEED, S_SPARSE_SIZE, i, j, it)
                out.append(avg - avg // 2 + h % (2 * (avg // 2) + 1))
        return out
    if pattern == "zipf":
        hsum = sum(r ** -ZIPF_S for r in range(1, P + 1))
        key = hash5(SEED, S_ZIPF, i, 0, 0)
        return [lround(avg * P * (permute(key, P, j) + 1) ** -ZIPF_S / hsum) for j in range(P)]
    if pattern == "hot":
        h = min(HOT, P)
        if h == P:
            return [avg] * P
        key = hash5(SEED, S_HOT, 0, 0, 0)
        hot_share, cold_share = HOT_FRACTION / h, (1.0 - HOT_FRACTION) / (P - h)
        return [lround(avg * P * (hot_share if permute(key, P, j) < h else cold_share))
                for j in range(P)]
    return None


# Recorded shapes (sim/study's application patterns): {name: (spec, rows
# of the recorded matrix)}, registered by register_recording. A name plays
# one recording per P, and bound_us's cache is keyed by P, so registering
# another P's recording leaves cached bounds true.
_recordings = {}


def register_recording(name, spec):
    """Makes pattern `name` the shape of a recording, spec PATH:N (the N-th
    shape of an XCHG_RECORD file), replayed as xchg-bench does at another
    P: rank i plays recorded rank floor(i P0 / P), block (i, j) is the
    recorded block between their players."""
    if _recordings.get(name, (None,))[0] == spec:
        return  # parsed already
    path, n = spec.rsplit(":", 1)
    shapes, cur = [], None
    with open(path) as fh:
        for line in fh:
            if line.startswith("#") or line.startswith("xchg-record"):
                continue
            if line.startswith("shape "):
                cur = []
                shapes.append(cur)
            elif cur is not None and line.strip():
                cur.append([int(x) for x in line.split()])
    _recordings[name] = (spec, shapes[int(n) - 1])


def recorded_row(name, P, i):
    m = _recordings[name][1]
    P0 = len(m)
    r = m[i * P0 // P]
    return [r[j * P0 // P] for j in range(P)]


def node_bytes(pattern, P, rpn, avg, it):
    """The busiest node's off-node bytes at call it: max over nodes of
    max(leaving, entering); None for a pattern not computed here."""
    nodes = -(-P // rpn)
    out, inn = [0] * nodes, [0] * nodes
    for i in range(P):
        r = recorded_row(pattern, P, i) if pattern in _recordings else row(pattern, P, avg, i, it)
        if r is None:
            return None
        ni = i // rpn
        for j, b in enumerate(r):
            nj = j // rpn
            if b and nj != ni:
                out[ni] += b
                inn[nj] += b
    return max(max(out), max(inn))


_cache = {}


def bound_us(pattern, P, rpn, preset, avg, calls=(1,), limit=4096):
    """The cell's bound in µs (mean over `calls`, the call indices it
    times), or None: one node, an unknown preset or pattern, or more than
    `limit` ranks (pure Python: about 10 s per pattern at 1,024 ranks)."""
    if preset not in PRESETS or P <= rpn or P > limit:
        return None
    key = (pattern, P, rpn, preset, avg, tuple(calls))
    if key not in _cache:
        bw, lat = PRESETS[preset]
        its = calls if pattern == "sparse" else calls[:1]
        vals = [node_bytes(pattern, P, rpn, avg, it) for it in its]
        _cache[key] = (None if any(v is None for v in vals)
                       else (sum(vals) / len(vals) / bw + lat) * 1e6)
    return _cache[key]
