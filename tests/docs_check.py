#!/usr/bin/env python3
"""docs_check.py [ROOT]: fails when the user-facing docs drift.

README.md is a user's front page and docs/ says what is true now; what
changed and when belongs in CHANGELOG.md and git. So this fails when:
  - README.md has more than 200 lines;
  - README.md, docs/**/*.md (not docs/sim/cells/) or a comment in src/,
    include/, tools/ or examples/ (C sources and headers) holds a date
    (YYYY-MM-DD), the word "session" or "withdrawn", or an 8-hex-digit
    model hash (letters and digits, not a 0x literal; a path under
    docs/sim/, where the study keeps its data by model, may name one);
  - a relative markdown link in README.md or docs/**/*.md names a file
    that does not exist, or an anchor that is no heading of that file
    (GitHub's heading ids);
  - a doc path in a C comment (docs/NAME.md, sim/README.md, README.md) or
    in the prose of a page does not exist, or the heading quoted right
    after it ("docs/user-guide.md, "Nonblocking use"") is no heading there.
Code (outside comments) and fenced blocks are not searched for the words.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
README_MAX_LINES = 200

DATE = re.compile(r"\b(?:19|20)\d\d-[01]\d-[0-3]\d\b")
WORDS = re.compile(r"\b(sessions?|withdrawn)\b", re.I)
HEX8 = re.compile(r"\b[0-9a-f]{8}\b")
failures = []


def fail(where, what):
    line = f"{where}: {what}"
    if line not in failures:
        failures.append(line)


def md_pages():
    pages = [ROOT / "README.md"]
    pages += sorted(p for p in (ROOT / "docs").rglob("*.md")
                    if "cells" not in p.relative_to(ROOT / "docs").parts)
    return [p for p in pages if p.is_file()]


def rel(p):
    return str(p.relative_to(ROOT))


# ---- headings and GitHub's ids -------------------------------------------

def strip_inline(text):
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links -> their text
    text = re.sub(r"<[^>]+>", "", text)                      # html tags
    return text.replace("`", "").replace("*", "")


def slug(heading):
    s = strip_inline(heading).strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def outside_fences(lines):
    """(line number, line) of the lines outside ``` fences."""
    fence = None
    for n, line in enumerate(lines, 1):
        m = re.match(r"\s*(```+|~~~+)", line)
        if m:
            if fence is None:
                fence = m.group(1)[:3]
            elif m.group(1).startswith(fence):
                fence = None
            continue
        if fence is None:
            yield n, line


_anchors = {}


def anchors(path):
    """Every id a link may name in a markdown file, and its headings' texts."""
    if path not in _anchors:
        ids, texts, seen = set(), set(), {}
        lines = path.read_text(encoding="utf-8").splitlines()
        for _, line in outside_fences(lines):
            m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                base = slug(m.group(1))
                k = seen.get(base, 0)
                seen[base] = k + 1
                ids.add(base if k == 0 else f"{base}-{k}")
                texts.add(norm(strip_inline(m.group(1))))
            for a in re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", line):
                ids.add(a)
        _anchors[path] = (ids, texts)
    return _anchors[path]


def norm(text):
    return re.sub(r"\s+", " ", text).strip().lower().rstrip(".:")


# ---- the words ------------------------------------------------------------

def check_words(where, text):
    for m in DATE.finditer(text):
        fail(where, f"a date ({m.group(0)}): history goes to CHANGELOG.md")
    for m in WORDS.finditer(text):
        fail(where, f"the word '{m.group(0)}': say what is true now (history: CHANGELOG.md)")
    for m in HEX8.finditer(text):
        h = m.group(0)
        if not (re.search(r"[a-f]", h) and re.search(r"\d", h)):
            continue
        token = text[text.rfind(" ", 0, m.start()) + 1:m.end()]
        if "docs/sim/" in token or "cells/" in token:
            continue
        fail(where, f"a model hash ({h}): name what the figure was measured with instead")


def markdown_prose(path):
    """(line number, text) of a page's lines outside fences."""
    return list(outside_fences(path.read_text(encoding="utf-8").splitlines()))


# ---- links ---------------------------------------------------------------

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
QUOTED_REF = re.compile(
    r"((?:\.\./)*(?:docs/[\w./-]+\.md|sim/README(?:\.md)?|README\.md|[\w-]+\.md))"
    r"\)?(?:,|:)?\s*(?:heading\s+)?\"([^\"]+)\"")


def check_target(where, page, target):
    """A link of markdown file `page`: its file exists, its anchor is a heading."""
    if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("//"):
        return  # http:, https:, mailto:
    path_part, _, anchor = target.partition("#")
    dest = (page.parent / path_part).resolve() if path_part else page
    if not dest.exists():
        fail(where, f"link to {target}: {path_part} does not exist")
        return
    if anchor and dest.is_file() and dest.suffix == ".md" and anchor not in anchors(dest)[0]:
        fail(where, f"link to {target}: no heading '#{anchor}' in {rel(dest)}")


def resolve_doc(name, base_dir):
    """A doc path as written in prose or a comment: relative to the page,
    else to the repository root."""
    if name == "sim/README":
        name = "sim/README.md"
    for d in (base_dir, ROOT):
        p = (d / name).resolve()
        if p.exists():
            return p
    return None


def check_quoted_refs(where, base_dir, text, paths_must_exist):
    for m in QUOTED_REF.finditer(text):
        page = resolve_doc(m.group(1), base_dir)
        if page is None:
            if paths_must_exist or "/" in m.group(1):
                fail(where, f"{m.group(1)} does not exist")
            continue
        if not has_heading(page, m.group(2)):
            fail(where, f"{m.group(1)} has no heading \"{m.group(2)}\"")


def has_heading(page, quoted):
    """A quoted heading names a heading of the page: all of it, or its
    beginning up to a word boundary ("SMPI settings" for "SMPI settings
    (smpi.cfg)")."""
    ids, texts = anchors(page)
    q = norm(strip_inline(quoted))
    if slug(quoted) in ids:
        return True
    return any(t == q or (t.startswith(q) and not t[len(q)].isalnum()) for t in texts)


def check_markdown(path):
    lines = markdown_prose(path)
    text = "\n".join(line for _, line in lines)
    for n, line in lines:
        where = f"{rel(path)}:{n}"
        check_words(where, line)
        for m in LINK.finditer(line):
            check_target(where, path, m.group(1))
    # quoted headings may wrap: check the page's prose as one text
    joined = re.sub(r"\s*\n\s*", " ", text)
    for m in DOC_PATH.finditer(re.sub(r"\]\([^)]*\)", "]", joined)):  # links: above
        if resolve_doc(m.group(1), path.parent) is None:
            fail(rel(path), f"{m.group(1)} does not exist")
    check_quoted_refs(rel(path), path.parent, joined, False)


# ---- C comments ------------------------------------------------------------

COMMENT_OR_STRING = re.compile(
    r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)


def comments(text):
    """(line number, comment text) of every comment of a C file."""
    for m in COMMENT_OR_STRING.finditer(text):
        c = m.group(0)
        if c.startswith(("/*", "//")):
            yield text.count("\n", 0, m.start()) + 1, c


DOC_PATH = re.compile(r"(?<![\w/])((?:docs/[\w./-]+\.md)|sim/README(?:\.md)?|README\.md)")


def check_c(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    for line, c in comments(text):
        where = f"{rel(path)}:{line}"
        check_words(where, c)
        flat = re.sub(r"\s*\n\s*\*?\s*", " ", c)
        for m in DOC_PATH.finditer(flat):
            if resolve_doc(m.group(1), ROOT) is None:
                fail(where, f"{m.group(1)} does not exist")
        check_quoted_refs(where, ROOT, flat, True)


def main():
    readme = ROOT / "README.md"
    n = len(readme.read_text(encoding="utf-8").splitlines())
    if n > README_MAX_LINES:
        fail("README.md", f"{n} lines, more than {README_MAX_LINES}: move detail into docs/")
    pages = md_pages()
    for p in pages:
        check_markdown(p)
    sources = []
    for d in ("src", "include", "tools", "examples"):
        if (ROOT / d).is_dir():
            sources += sorted(p for p in (ROOT / d).rglob("*")
                              if p.suffix in (".c", ".h", ".in") and p.is_file())
    for p in sources:
        check_c(p)
    for f in failures:
        print("docs_check: " + f)
    print(f"docs_check: README.md {n} lines, {len(pages)} pages, {len(sources)} sources, "
          f"{len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
