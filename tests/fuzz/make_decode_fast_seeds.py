#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz_decode_fast target (tests/fuzz/corpus/decode_fast).

Every distinct line of the golden vectors (tests/data), the lines of small feeds
of each shape bench/gen_shapes.py writes, and hostile variants of a miss and a
dispatch: escapes of every kind, U+0000 and surrogates, invalid UTF-8, numbers
spelled every way JSON allows and some it does not, u64 and u32 edges,
duplicate, unknown, escaped and missing keys, values of the wrong type,
whitespace everywhere, nesting, trailing bytes. Each seed is one file named by
its SHA-1, as libFuzzer names its own; the same sources write the same seeds.

Usage: make_decode_fast_seeds.py
"""
import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus", "decode_fast")

IMPL = ('{"backend":"Cuda","op":"MatMul","dtypes":["F16","BF16"],"kernel_source":"cublas",'
        '"kernel_revision_hash":12345}')
HW = '{"compute_capability":[8,9],"hardware_sku":"NVIDIA GPU","driver_version":"552.44"}'
MISS = '{"schema":2,"wanted":"w:1","fallback":%s,"count":7,"hw":%s}' % (IMPL, HW)
DISPATCH = ('{"schema":2,"structure_key":"sk:1","chosen":%s,"candidates":[{"impl_id":%s,'
            '"latency_ns":100},{"impl_id":%s}],"count":3,"hw":%s}' % (IMPL, IMPL, IMPL, HW))

STRINGS = [
    r'"w\n1"', r'"w\"1"', r'"w\\1"', r'"w\/1"', r'"w\b\f\r\t1"', r'"\u0041"', r'"w\u00e9"',
    r'"w\u07FF\u0800"', r'"w\uFFFF"', r'"w\u0080"', r'"w\uD83D\uDE80"', r'"w\uDBFF\uDFFF"',
    r'"w\u0000"', r'"w\uD83D"', r'"w\uDE80"', r'"w\uDE80\uD83D"', r'"w\uD83Dx"',
    r'"w\uD83D\u0041"', r'"w\u12"', r'"w\u004G"', r'"w\x41"', r'"w\"', r'"w\'"', '""',
    '"w\t1"', '"w\x01"', '"w\x7f"', '"é"', '"日本"', '"🚀"', '"' + "z" * 2000 + '"',
]
BAD_UTF8 = [b"\xc3", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xff", b"\xe6\x97",
            b"\xc3\\n", b"\xe6\x97\xa5"]
NUMBERS = [
    "0", "00", "07", "-0", "-7", "7.0", "7e0", "1e2", "7E+1", "0.5", "-", "+7", " 7 ", '"7"',
    "null", "true", "7x", "0x1F", "18446744073709551615", "18446744073709551616",
    "99999999999999999999", "1" + "0" * 25, "1" * 70, "4294967295", "4294967296",
]
CCS = ["[8]", "[8,9,0]", "[]", "null", '[8,"9"]', "[4294967295,0]", "[4294967296,0]",
       "[ 8 , 9 ]", "[8,-9]", "[8,9.0]", "{}", '"8.9"', "[[8],9]", "[8,9,]", "[0,0]", "[01,2]"]
SCHEMAS = ["3", "02", "2.0", '"2"', "20", "-2", "2e0", "null", "2 "]
WRONG_TYPES = ["5", "null", "true", "false", "[]", "{}", '"x"', "[1]"]


def out(seeds, line):
    seeds.add(line if isinstance(line, bytes) else line.encode())


def variants(seeds, base, replacements):
    for old, new in replacements:
        if old in base:
            out(seeds, base.replace(old, new, 1))


def key_value(line, key):
    """The text of key's first value in line (a scalar or a bracketed value)."""
    start = line.index('"%s":' % key) + len(key) + 3
    depth, i = 0, start
    while True:
        c = line[i]
        if c in "[{":
            depth += 1
        elif c in "]}":
            if depth == 0:
                return line[start:i]
            depth -= 1
        elif c == "," and depth == 0:
            return line[start:i]
        elif c == '"' and depth == 0 and i == start:
            i = line.index('"', i + 1)
        i += 1


def hostile(seeds):
    for base in (MISS, DISPATCH):
        out(seeds, base)
        b = base.encode()
        for s in STRINGS:
            variants(seeds, base, [('"w:1"', s), ('"sk:1"', s), ('"F16"', s), ('"cublas"', s),
                                   ('"NVIDIA GPU"', s)])
        for bad in BAD_UTF8:
            out(seeds, b.replace(b'"NVIDIA GPU"', b'"NVIDIA' + bad + b'GPU"', 1))
            out(seeds, b.replace(b'"op"', b'"o' + bad + b'p"', 1))
            out(seeds, b + b" " + bad)
        for n in NUMBERS:
            variants(seeds, base, [('"count":7', '"count":' + n), ('"count":3', '"count":' + n),
                                   ("12345", n), ('"latency_ns":100', '"latency_ns":' + n)])
        for cc in CCS:
            variants(seeds, base, [("[8,9]", cc)])
        variants(seeds, base, [('"compute_capability":[8,9],', ""),
                               ('"compute_capability":[8,9],', '"compute_capability":null,')])
        for s in SCHEMAS:
            variants(seeds, base, [('"schema":2', '"schema":' + s)])
        # every key missing, duplicated, escaped, and given each wrong type
        keys = ["schema", "wanted", "fallback", "structure_key", "chosen", "candidates", "count",
                "hw", "backend", "op", "dtypes", "kernel_source", "kernel_revision_hash",
                "compute_capability", "hardware_sku", "driver_version", "impl_id", "latency_ns"]
        for k in keys:
            tag = '"%s":' % k
            if tag not in base:
                continue
            value = key_value(base, k)
            member = tag + value
            variants(seeds, base, [(member + ",", ""), ("," + member, ""),
                                   (member, member + "," + member),
                                   (tag, '"%s\\u0020":' % k), (tag, '"%s\\u%04x%s":' % (
                                       k[:1], ord(k[1]), k[2:])),
                                   (tag, '"%s" :' % k), (tag, '"%s"' % k)])
            for t in WRONG_TYPES:
                variants(seeds, base, [(member, tag + t)])
        # unknown keys at every level, with every kind of value, repeated, escaped, many
        unknown = ['"extra":%s,' % v for v in NUMBERS + STRINGS + WRONG_TYPES + [
            '{"a":[1,2,{"b":null}]}', "[[[[[[1]]]]]]", "[[[1]]]", '{"a":1,"a":2}', "1e999",
            "-1.5e-3", "1" * 40, "1" * 41, "1" * 63, "1" * 64, "{ }", "[ ]", "[1,]", '{"a"}',
            "{,}", "tru", "falsey", "nul", r'"\u0000"', "1", "[" * 40 + "1" + "]" * 40,
            '{"a":' * 59 + "1" + "}" * 59, '{"a":' * 60 + "1" + "}" * 60]]
        unknown += ['"extra":1,"extra":2,', '"\\u0065xtra":1,', '"extra":1,"backend":"x",',
                    '"extra":1,"count ":2,', "".join('"k%d":%d,' % (i, i) for i in range(16)),
                    "".join('"k%d":%d,' % (i, i) for i in range(17))]
        for where in ('{"schema"', '{"backend"', '{"compute_capability"', '{"impl_id"'):
            for extra in unknown:
                variants(seeds, base, [(where, "{" + extra + where[1:])])
        variants(seeds, base, [("}", ',"extra":1}'), ("}}", '},"extra":{"a":[]}}')])
        # the keys of the other kind
        variants(seeds, base, [('"count"', '"structure_key":"x","count"'),
                               ('"count"', '"chosen":%s,"count"' % IMPL),
                               ('"count"', '"wanted":"x","count"'),
                               ('"count"', '"fallback":%s,"count"' % IMPL),
                               ('"count"', '"candidates":[],"count"'),
                               ('"structure_key":"sk:1"', '"structure_key":null'),
                               ('"latency_ns":100', '"latency_ns":null'),
                               ('"candidates":[', '"candidates":[ ]'),
                               ('"dtypes":["F16","BF16"]', '"dtypes":[]'),
                               ('"dtypes":["F16","BF16"]', '"dtypes":[ ]'),
                               ('"dtypes":["F16","BF16"]', '"dtypes":["F16",]'),
                               ('"dtypes":["F16","BF16"]', '"dtypes":["F16" "BF16"]'),
                               ('"candidates":[', '"candidates":[' + ('{"impl_id":%s},' % IMPL) * 20)])
        # whitespace: every kind after every structural byte, and around the line
        for ws in (" ", "\t", "\r", "\n", "\v", "\f", "\x00", "  \t\r\n "):
            spaced = base
            for c in "{}[]:,":
                spaced = spaced.replace(c, c + ws)
            out(seeds, spaced)
            spaced = base
            for c in "{}[]:,":
                spaced = spaced.replace(c, ws + c)
            out(seeds, spaced)
            out(seeds, ws + base + ws)
        out(seeds, b"\xef\xbb\xbf" + b)
        for tail in ("x", "}", ",", " {}", "\x00", "\r", " \r\n", "]", "null"):
            out(seeds, base + tail)
        for cut in (1, 2, len(base) // 3, len(base) // 2, len(base) - 2, len(base) - 1):
            out(seeds, base[:cut])
        for lit in ("nul", "nulll", "NULL", "True", "n"):
            variants(seeds, base, [('"structure_key":"sk:1"', '"structure_key":' + lit),
                                   ("[8,9]", lit)])
        variants(seeds, base, [("}", "}}"), ('"w:1"', "'w:1'"), ("{", "["), ("2,", "2,,"),
                               ('"schema"', "schema"), ("{", "{/*c*/")])
    for line in ("", "{}", "[]", '"x"', "null", "{", "}", " ", "{\"schema\":2}", "\x00"):
        out(seeds, line)


def golden(seeds):
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "data", "**", "*.jsonl"),
                                 recursive=True)):
        with open(path, "rb") as f:
            for line in f.read().split(b"\n"):
                if line:
                    out(seeds, line)


def shapes(seeds):
    gen = os.path.join(ROOT, "bench", "gen_shapes.py")
    with tempfile.TemporaryDirectory() as tmp:
        for args in (["adversarial", "--runs", "1", "--lines", "12", "--cells", "12"],
                     ["highcard", "--lines", "24", "--cells", "16", "--candidates", "0.5"],
                     ["flush", "--runs", "1", "--cells", "12", "--candidates", "0.5"]):
            d = os.path.join(tmp, args[0])
            subprocess.run([sys.executable, gen, args[0], d] + args[1:], check=True)
            for path in sorted(glob.glob(os.path.join(d, "**", "*.jsonl"), recursive=True)):
                with open(path, "rb") as f:
                    for line in f.read().split(b"\n"):
                        if line:
                            out(seeds, line)


def main():
    seeds = set()
    golden(seeds)
    shapes(seeds)
    hostile(seeds)
    shutil.rmtree(CORPUS, ignore_errors=True)
    os.makedirs(CORPUS)
    for s in seeds:
        with open(os.path.join(CORPUS, hashlib.sha1(s).hexdigest()), "wb") as f:
            f.write(s)
    print(f"{len(seeds)} seeds in {CORPUS}")


if __name__ == "__main__":
    main()
