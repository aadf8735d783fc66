#!/usr/bin/env python3
"""code_shape.py ROOT: the library's shape limits (docs/contributing.md):
no function in src/ longer than 100 lines, no internal header in src/
longer than 200. Prints each offender and exits 1; no build needed.

A function is a top-level '{' in column 0 whose line, or the lines just
above it, hold the parameter list; its length runs from its first line
(the return type's) to the matching '}' in column 0. Comments and string
literals are blanked first, so braces inside them do not count."""
import os
import re
import sys

FUNCTION_MAX, HEADER_MAX = 100, 200


def blank(text):
    """Comments and string/char literals as spaces, newlines kept."""
    out = re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                 lambda m: re.sub(r'[^\n]', ' ', m.group(0)), text, flags=re.S)
    return out.split('\n')


def functions(lines):
    """(name, first line, length) of each function definition."""
    depth, found, opened = 0, [], None
    for i, line in enumerate(lines):
        if depth == 0 and line.startswith('{'):
            # the signature: back to the line that opens it (the name's)
            j = i - 1
            while j >= 0 and lines[j].strip() and not re.match(r'[A-Za-z_]', lines[j]):
                j -= 1
            head = ' '.join(l.strip() for l in lines[j:i])
            m = re.search(r'([A-Za-z_]\w*)\s*\(', head)
            opened = (m.group(1), j + 1) if m and '=' not in head.split('(')[0] else None
        depth += line.count('{') - line.count('}')
        if depth == 0 and line.startswith('}') and opened:
            name, first = opened
            found.append((name, first, i + 2 - first))
            opened = None
    return found


def main(root):
    bad = 0
    for dirpath, _, files in sorted(os.walk(os.path.join(root, 'src'))):
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)
            with open(path, encoding='utf-8') as fh:
                text = fh.read()
            if f.endswith('.h'):
                n = text.count('\n')
                if n > HEADER_MAX:
                    print(f'{rel}: {n} lines, over {HEADER_MAX} for an internal header')
                    bad += 1
            elif f.endswith('.c'):
                for name, first, length in functions(blank(text)):
                    if length > FUNCTION_MAX:
                        print(f'{rel}:{first}: {name} is {length} lines, over {FUNCTION_MAX}')
                        bad += 1
    if bad:
        return 1
    print(f'code_shape: every function in src/ within {FUNCTION_MAX} lines, '
          f'every header within {HEADER_MAX}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else '.'))
