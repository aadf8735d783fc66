#!/usr/bin/env python3
"""sim_flush_check.py SRC_DIR: fails when libxchg calls an MPI function that
src/core/sim_flush.h does not wrap.

In the SMPI build every MPI call of libxchg must first execute the copy
charges summed since the previous one (src/core/simcost.c); sim_flush.h
does it with one macro per MPI function. A call it misses would post a
message or wait before the rank's copies took their simulated time, and
the simulated results would change without anything failing. Comments
are stripped first (they name MPI functions too)."""
import pathlib
import re
import sys

src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "src")
header = (src / "core" / "sim_flush.h").read_text()
# a plain wrapper, or one that charges a set-up cost first (XCHG_SETUP_COMM,
# xchg_charge_setup_window) and then flushes
wrapped = set(re.findall(r"^#define (P?MPI_\w+)\(\.\.\.\) XCHG_FLUSHED\(\1,", header, re.M))
wrapped |= set(re.findall(r"^#define (P?MPI_\w+)\(\w+, \.\.\.\) XCHG_SETUP_COMM\(\1,",
                          header, re.M))
wrapped |= {a for a, b in re.findall(r"^#define (P?MPI_\w+)\([^)]*\)\s*\\?\s*"
                                     r"\(xchg_charge_setup_window\([^)]*\), "
                                     r"XCHG_FLUSHED\((P?MPI_\w+),", header, re.M) if a == b}
if not wrapped:
    sys.exit("sim_flush_check: no wrapped functions found in sim_flush.h")
call = re.compile(r"\b(P?MPI_[A-Z][a-z][a-z0-9_]*)\s*\(")
comments = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
strings = re.compile(r'"(?:\\.|[^"\\])*"')
missing = {}
files = [f for f in sorted(src.rglob("*.[ch]")) if f.name != "sim_flush.h"]
for f in files:
    text = strings.sub('""', comments.sub(" ", f.read_text()))
    for m in call.finditer(text):
        if m.group(1) not in wrapped:
            missing.setdefault(m.group(1), []).append(str(f))
for name, where in sorted(missing.items()):
    print(f"sim_flush_check: {name} (called in {', '.join(sorted(set(where)))}) "
          "is not wrapped in src/core/sim_flush.h")
print(f"sim_flush_check: {len(files)} files, {len(wrapped)} MPI functions wrapped, "
      f"{len(missing)} missing")
sys.exit(1 if missing else 0)
