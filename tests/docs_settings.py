#!/usr/bin/env python3
"""docs_settings.py SETTINGS_TABLE SOURCE_DIR: docs/settings.md cannot drift.

- Every setting of the library's table (src/core/settings.c, printed by the
  program SETTINGS_TABLE as NAME<tab>RANGE<tab>DEFAULT) has a row in
  docs/settings.md whose values and default columns say exactly that
  (backticks aside), and the docs list no setting the table lacks.
- Every environment variable named XCHG_* (or MPIR_CVAR_*) that the sources
  under src/ and tools/ read (getenv, env_double, env_off, os.environ) is listed in
  docs/settings.md, and every variable the docs list is read somewhere.
Prints each mismatch and exits 1 if there is any.
"""
import os
import re
import subprocess
import sys

# How the sources read a variable: C getenv() (and simcost.c's env_double and env_off),
# Python's os.environ / os.getenv.
READ = re.compile(r'(?:\bgetenv|\benv_double|\benv_off|os\.environ\.get|os\.environ|os\.getenv)'
                  r'\s*[\(\[]\s*"([A-Z][A-Z0-9_]*)"')
OURS = re.compile(r'^(XCHG_|MPIR_CVAR_)')


def clean(cell):
    return " ".join(cell.replace("`", "").split())


def doc_rows(path):
    """{name: (values, default, section)} of every table row naming a variable."""
    rows, section = {}, ""
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                section = line.strip("# \n")
            m = re.match(r'^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|', line)
            if not m:
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 4:
                sys.exit(f"docs_settings: {path}: row of {m.group(1)} has {len(cells)} cells, "
                         "expected variable | values | default | what")
            rows[m.group(1)] = (clean(cells[1]), clean(cells[2]), section)
    return rows


def read_in_sources(src):
    """{variable: [file, ...]} of the XCHG_*/MPIR_CVAR_* variables read in src/, tools/."""
    found = {}
    for top in ("src", "tools"):
        for dirpath, _, files in os.walk(os.path.join(src, top)):
            for fn in files:
                path = os.path.join(dirpath, fn)
                try:
                    text = open(path, encoding="utf-8").read()
                except (UnicodeDecodeError, OSError):
                    continue
                for name in READ.findall(text):
                    if OURS.match(name):
                        found.setdefault(name, []).append(os.path.relpath(path, src))
    return found


def main():
    table_prog, src = sys.argv[1], sys.argv[2]
    docs = os.path.join(src, "docs", "settings.md")
    out = subprocess.run([table_prog], check=True, capture_output=True, text=True).stdout
    table = {}
    for line in out.splitlines():
        name, rng, dflt = line.split("\t")
        table[name] = (clean(rng), clean(dflt))
    rows = doc_rows(docs)
    read = read_in_sources(src)
    bad = []
    if len(table) < 10 or "XCHG_TUNING_FILE" not in read:
        bad.append(f"the checker found {len(table)} settings and {len(read)} variables read: "
                   "broken (settings_table or the source scan)")
    for name, (rng, dflt) in table.items():
        if name not in rows:
            bad.append(f"{name} (settings.c's table) is not in docs/settings.md")
            continue
        vals, ddflt, _ = rows[name]
        if vals != rng:
            bad.append(f"{name}: docs/settings.md says values '{vals}', settings.c '{rng}'")
        if ddflt != dflt:
            bad.append(f"{name}: docs/settings.md says default '{ddflt}', settings.c '{dflt}'")
    for name, files in sorted(read.items()):
        if name not in rows:
            bad.append(f"{name} is read in {', '.join(sorted(set(files)))} but not listed in "
                       "docs/settings.md")
    for name in sorted(rows):
        if name not in table and name not in read:
            bad.append(f"{name} is listed in docs/settings.md but nothing in src/ or tools/ "
                       "reads it")
    for b in bad:
        print("docs_settings: " + b)
    if bad:
        print(f"docs_settings: FAILED ({len(bad)} problems)")
        return 1
    print(f"docs_settings: passed ({len(table)} settings of the table, {len(read)} variables "
          f"read in src/ and tools/, {len(rows)} rows in docs/settings.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
