#!/usr/bin/env python3
"""docs_options.py SOURCE_DIR TOOLS_DIR LAUNCH...: tool options cannot drift.

For every tool (xchg-bench and its dsde, neighbor, overlap and setup modes,
xchg-tune, xchg-plot), `TOOL --help` exits 0 (MPI tools are started by
LAUNCH, one rank). Then for each doc that describes tools (DOCS below, each
section mapped to its tools by its heading):
  - every option (--name) the section names appears in the --help of one
    of the section's tools or of the tool named last before it in its
    paragraph; an option after another program's name (mpiexec, srun,
    cmake, ...) in its paragraph, or in FOREIGN, is that program's;
  - where the doc is a tool's reference (REFERENCE), every option of that
    tool's --help appears in a section of the doc mapped to the tool.
A doc that does not exist yet is reported and skipped, not failed: the
tools' --help must still exit 0. Prints every mismatch; exits 1 on any.
"""
import os
import re
import subprocess
import sys

OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")

# doc -> (tools of a section whose heading names none of HEADINGS, and
# heading keyword -> tools); the keyword is matched as a word, case aside.
DOCS = {
    "docs/benchmarking.md": (["xchg-bench", "xchg-plot"],
                             {"dsde": ["xchg-bench dsde"],
                              "neighbor": ["xchg-bench neighbor"],
                              "overlap": ["xchg-bench overlap"],
                              "setup": ["xchg-bench setup"],
                              "xchg-plot": ["xchg-plot"],
                              "xchg-tune": ["xchg-tune"]}),
    "docs/tuning.md": (["xchg-tune"], {"xchg-bench": ["xchg-bench"]}),
    "docs/record-replay.md": (["xchg-bench", "xchg-tune"], {}),
}
# The docs that are a tool's reference: every option of its --help there.
REFERENCE = {
    "xchg-bench": "docs/benchmarking.md",
    "xchg-bench dsde": "docs/benchmarking.md",
    "xchg-bench neighbor": "docs/benchmarking.md",
    "xchg-bench overlap": "docs/benchmarking.md",
    "xchg-bench setup": "docs/benchmarking.md",
    "xchg-plot": "docs/benchmarking.md",
    "xchg-tune": "docs/tuning.md",
}
# Options of other programs that the docs show beside the tools: the
# launchers' (mpiexec --mca, --oversubscribe, --bind-to, --map-by), cmake's
# and pkg-config's.
FOREIGN = {"--mca", "--oversubscribe", "--bind-to", "--map-by", "--install", "--prefix",
           "--build", "--cflags", "--libs", "--variable"}
# The programs a paragraph may name before an option: ours (a path before
# the name is allowed: build/mpich/tools/xchg-bench), then others'.
PROGRAM = re.compile(r"(?<![\w-])(xchg-bench(?:\s+(?:dsde|neighbor|overlap|setup)\b)?|"
                     r"xchg-tune|xchg-plot|tools/plot|mpiexec|mpirun|srun|cmake|pkg-config|sbatch|"
                     r"aprun|jsrun|flux)(?![\w-])")
# Every tool has --help; the docs need not say so in every section.
IMPLICIT = {"--help"}


def tool_help(tool, tools_dir, launch):
    """(exit code, text) of `tool --help`."""
    words = tool.split()
    exe = os.path.join(tools_dir, words[0])
    if words[0] == "xchg-plot":
        cmd = [sys.executable, exe]
    else:
        cmd = launch + [exe]
    cmd += words[1:] + ["--help"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=60)
    return p.returncode, p.stdout, " ".join(cmd)


def sections(path, default, headings):
    """[(heading, tools, text)] of the doc's sections."""
    out, heading, text = [], "", []
    fenced = False

    def close():
        tools = default
        for key, t in headings.items():
            if re.search(r"(?<![\w-])" + re.escape(key) + r"(?![\w-])", heading, re.I):
                tools = t
                break
        out.append((heading, tools, "".join(text)))

    with open(path) as f:
        for line in f:
            if line.startswith("```"):
                fenced = not fenced
            if not fenced and re.match(r"#{1,6} ", line):
                close()
                heading, text = line.strip("# \n"), []
            else:
                text.append(line)
    close()
    return out


def options_of(text):
    """(option, the program named last before it in its paragraph or None)."""
    out = []
    for para in re.split(r"\n\s*\n", text):
        programs = [(m.start(), " ".join(m.group(1).split())) for m in PROGRAM.finditer(para)]
        for m in OPTION.finditer(para):
            before = [name for at, name in programs if at < m.start()]
            named = before[-1] if before else None
            out.append((m.group(0), "xchg-plot" if named == "tools/plot" else named))
    return out


def main():
    src, tools_dir, launch = sys.argv[1], sys.argv[2], sys.argv[3:]
    bad = []
    helps = {}
    for tool in REFERENCE:
        code, text, cmd = tool_help(tool, tools_dir, launch)
        if code != 0:
            bad.append(f"`{cmd}` exited {code}:\n{text}")
        helps[tool] = set(OPTION.findall(text))
        if not helps[tool] - IMPLICIT:
            bad.append(f"`{cmd}` names no option:\n{text}")
    documented = {tool: set() for tool in REFERENCE}
    for doc, (default, headings) in DOCS.items():
        path = os.path.join(src, doc)
        if not os.path.exists(path):
            print(f"docs_options: {doc} does not exist: not checked")
            continue
        for heading, tools, text in sections(path, default, headings):
            for opt, named in options_of(text):
                if opt in FOREIGN or (named and named not in REFERENCE):
                    continue
                candidates = tools + ([named] if named and named not in tools else [])
                if not any(opt in helps[t] for t in candidates):
                    bad.append(f"{doc}, section \"{heading or '(top)'}\": {opt} is in no "
                               f"--help of {', '.join(candidates)}")
                for t in candidates:
                    if REFERENCE.get(t) == doc:
                        documented[t].add(opt)
    for tool, doc in REFERENCE.items():
        if not os.path.exists(os.path.join(src, doc)):
            continue
        for opt in sorted(helps[tool] - documented[tool] - IMPLICIT):
            bad.append(f"{tool} --help has {opt}, which {doc} does not describe (in a section "
                       f"about {tool})")
    for b in bad:
        print("docs_options: " + b)
    if bad:
        print(f"docs_options: FAILED ({len(bad)} problems)")
        return 1
    print(f"docs_options: passed ({len(REFERENCE)} tools' --help exit 0; "
          f"{len(DOCS)} docs' options in their tools' --help and back)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
