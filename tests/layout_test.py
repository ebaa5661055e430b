"""Checks src/'s layout rule from the sources themselves (see src/README.md):
no source file directly in src/, a folder includes only folders to its left,
ingest/, sink/ and report/ never include each other, and no include or call circle
between folders or between files."""
import os
import re
import sys

import testlib
from testlib import check

ORDER = ["common", "cell", "codec", "store"]
LEAVES = ["ingest", "sink", "report"]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# A function definition: a line starting at column 0 with a type and a name,
# and an opening brace before the next semicolon.
DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\(([^;{]*?)\)\s*\{", re.M)
CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')


def rank(folder):
    """Where a folder stands; ingest, sink and report share the rightmost place."""
    return ORDER.index(folder) if folder in ORDER else len(ORDER)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def strip(text):
    """The text without comments, keeping #include lines whole."""
    return COMMENT.sub(" ", text)


def cycles(graph):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def path_in(graph, comp):
    """One circle through comp, for the failure message."""
    start = comp[0]
    seen, prev, todo = {start}, {}, [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(graph.get(v, ())):
            if w == start:
                chain, x = [start], v
                while x != start:
                    chain.append(x)
                    x = prev[x]
                return " -> ".join([start] + list(reversed(chain[1:])) + [start])
            if w in comp and w not in seen:
                seen.add(w)
                prev[w] = v
                todo.append(w)
    return ", ".join(comp)


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "src")
    src = os.path.normpath(src)
    files = {}  # "folder/name.c" -> stripped text
    for name in sorted(os.listdir(src)):
        full = os.path.join(src, name)
        if os.path.isfile(full) and name.endswith((".c", ".h")):
            check(False, f"source file directly in src/: {name}")
        if os.path.isdir(full):
            check(name in ORDER + LEAVES, f"src/{name}/ is a folder the layout rule names")
            for f in sorted(os.listdir(full)):
                if f.endswith((".c", ".h")):
                    files[f"{name}/{f}"] = strip(read(os.path.join(full, f)))
    check(len(files) > 0, "src/ holds source files", src)

    includes = {f: [i for i in INCLUDE.findall(t) if i in files] for f, t in files.items()}

    # Folders: each include goes left (or stays), ingest and sink apart, no circle.
    folder_graph = {}
    for f, incs in includes.items():
        a = f.split("/")[0]
        for i in incs:
            b = i.split("/")[0]
            if a == b:
                continue
            folder_graph.setdefault(a, set()).add(b)
            check(rank(b) < rank(a), f"{f} includes {i}: {b}/ is not to the left of {a}/")
    for comp in cycles(folder_graph):
        check(False, "include circle between folders: " + " ".join(comp), path_in(folder_graph, comp))

    # Files: A depends on B when A calls a function B defines, or includes a
    # header declaring a function B defines (or B's own header).
    defined = {}  # function name -> defining .c
    for f, t in files.items():
        if f.endswith(".c"):
            for m in DEFINITION.finditer(STRING.sub('""', t)):
                defined.setdefault(m.group(1), f)
    implementers = {}
    for h, t in files.items():
        if h.endswith(".h"):
            impl = {defined[n] for n in CALL.findall(STRING.sub('""', t)) if n in defined}
            own = h[:-2] + ".c"
            if own in files:
                impl.add(own)
            implementers[h] = impl
    file_graph = {}
    for f, t in files.items():
        if not f.endswith(".c"):
            continue
        deps = set()
        for i in includes[f]:
            deps |= implementers.get(i, set())
        body = INCLUDE.sub("", STRING.sub('""', t))
        for n in CALL.findall(body):
            if n in defined:
                deps.add(defined[n])
        deps.discard(f)
        file_graph[f] = deps
    for comp in cycles(file_graph):
        check(False, "circle between files (include or call): " + " ".join(comp), path_in(file_graph, comp))
    return testlib.finish("layout")


if __name__ == "__main__":
    sys.exit(main())
