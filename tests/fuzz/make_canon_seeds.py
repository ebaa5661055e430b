#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz_canon target (tests/fuzz/corpus/canon).

Each seed is a mode byte and a text (see fuzz_canon.c): '0' a dispatch's
candidates, '1' a dispatch's dtypes, '2' a miss's dtypes, '3' both (dtypes,
a newline, candidates). The canonical texts are cut, byte for byte, from the
encoder's own output: the golden exports in tests/data and any exports given
on the command line. Around them go variants that the encoder never writes
and the round trip must refuse, and a few it writes that look odd.

Usage: make_canon_seeds.py [EXPORTED_DISPATCHES_JSONL [MAX]]
"""
import hashlib
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus", "canon")
DATA = os.path.join(ROOT, "tests", "data")


def values(path, key):
    """The raw text of every value of "key" in an exported feed."""
    decoder = json.JSONDecoder()
    needle = '"%s":' % key
    with open(path, encoding="utf-8") as f:
        for line in f:
            at = line.find(needle)
            while at >= 0:
                start = at + len(needle)
                _, end = decoder.raw_decode(line, start)
                yield line[start:end].encode("utf-8")
                at = line.find(needle, end)


A = (b'{"impl_id":{"backend":"Cuda","op":"MatMul","dtypes":["F16","F32"],'
     b'"kernel_source":"cublas","kernel_revision_hash":128162},"latency_ns":93561}')
B = (b'{"impl_id":{"backend":"Vulkan","op":"FlashAttn","dtypes":[],'
     b'"kernel_source":"sk4|mm","kernel_revision_hash":18446744073709551615}}')
CANDS = b"[" + A + b"," + B + b"]"
DTYPES = b'["F16","F32"]'


def in_string(s):
    """A candidates list whose backend is the string text s (raw JSON)."""
    return CANDS.replace(b'"Cuda"', b'"' + s + b'"', 1)


def number(s):
    return CANDS.replace(b"128162", s, 1)


def latency(s):
    return CANDS.replace(b"93561", s, 1)


HOSTILE_STRINGS = [
    b"a\\/b", b"\\u0041", b"\\u001F", b"\\u001f", b"\\u0000", b"\\u000a", b"\\n", b"\\t",
    b"\\u0008", b"\\b", b"\\u000b", b"\\u007f", b"\\u00e9", b"\\ud83d\\ude00", b"\\ud800",
    b"\\udc00", b"\\ud800\\u0041", b"\\x41", b"\\", b"\\u12", b"\\u00g1", b"\\\\", b'\\"',
    b"\x00", b"\x01", b"\x1f", b"\x7f", b"\t", b"\n", b"\xc3\xa9", b"\xe2\x82\xac",
    b"\xf0\x9f\x98\x80", b"\xff", b"\xc0\x80", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80", b"\xf8\x88\x80\x80\x80", b"\x80", b"",
]

HOSTILE_NUMBERS = [
    b"0", b"00", b"01", b"-0", b"-1", b"1e3", b"1E3", b"1.0", b"1.", b"+1", b"0x10",
    b"18446744073709551615", b"18446744073709551616", b"99999999999999999999",
    b"184467440737095516150", b"1" * 64, b"1" * 400, b"", b"null", b'"5"', b"true", b"5 ",
    b" 5",
]

STRUCTURE = [
    b"", b"[]", b"[ ]", b" []", b"[] ", b"[]\n", b"[{}]", b"null", b"{}", b"[", b"]",
    b"[[]]", b"[]x", b"[],", b"[]]", b"[" + A + b"]", b"[" + B + b"]", b"[" + A + b",]",
    b"[," + A + b"]", b"[" + A + b" ," + B + b"]", b"[" + A + b"," + A + b"]",
    b"[" + A + b"][" + B + b"]", b"[" + A + b"]," + b'"count":5',
    b"[" + A + b"],\"candidates\":[" + B + b"]",
    CANDS.replace(b":", b": ", 1), CANDS.replace(b",", b" ,", 1), CANDS.replace(b"{", b"{ ", 1),
    CANDS.replace(b"}", b"\n}", 1), CANDS.replace(b"]", b"\t]", 1),
    latency(b"93561,\"latency_ns\":1"), latency(b"null"),
    CANDS.replace(b',"latency_ns":93561', b',"latency_ns":null'),
    A.replace(b'{"impl_id":', b'{"latency_ns":1,"impl_id":', 1).replace(b',"latency_ns":93561', b""),
    CANDS.replace(b'"backend":"Cuda","op":"MatMul"', b'"op":"MatMul","backend":"Cuda"', 1),
    CANDS.replace(b'"backend":"Cuda",', b'"backend":"Cuda","backend":"Cuda",', 1),
    CANDS.replace(b'"op":"MatMul",', b"", 1),
    CANDS.replace(b',"kernel_revision_hash":128162', b"", 1),
    CANDS.replace(b'"kernel_revision_hash":128162', b'"kernel_revision_hash":128162,"x":1', 1),
    CANDS.replace(b'"latency_ns":93561', b'"latency_ns":93561,"x":1', 1),
    CANDS.replace(b'"dtypes":["F16","F32"]', b'"dtypes":[["F16"],"F32"]', 1),
    CANDS.replace(b'"dtypes":["F16","F32"]', b'"dtypes":"F16"', 1),
    CANDS.replace(b'"dtypes":["F16","F32"]', b'"dtypes":[1]', 1),
    CANDS.replace(b'{"impl_id":{', b'{"impl_id":[{', 1).replace(b"128162}", b"128162}]", 1),
    CANDS.replace(b'"impl_id"', b'"impl\\u005fid"', 1),
    CANDS.replace(b'"backend"', b'"Backend"', 1),
    CANDS.replace(b'"Cuda"', b"null", 1),
    CANDS.replace(b'"Cuda"', b"5", 1),
    b"[" + b"[" * 8 + b"]" * 8 + b"]",
    CANDS[:-1], CANDS[:len(CANDS) // 2], CANDS + b"]",
]

DTYPES_VARIANTS = [
    b"[]", b'["F32"]', DTYPES, b"", b"[ ]", b'[ "F16"]', b'["F16" ,"F32"]', b'["F16",]', b'[,"F16"]',
    b'["F16"', b'"F16"', b"[1]", b"[null]", b'[["F16"]]', b'{"a":"F16"}', b'["F16"]x',
    b'["F16"],"op":"x"', b'["F16"],"dtypes":["F32"]', b'["F16"]\n',
]


def seeds():
    out = []
    for kind in ("basic", "nasty"):
        expected = os.path.join(DATA, kind, "expected")
        out += [b"0" + v for v in values(os.path.join(expected, "dispatches.jsonl"), "candidates")]
        out += [b"1" + v for v in values(os.path.join(expected, "dispatches.jsonl"), "dtypes")]
        out += [b"2" + v for v in values(os.path.join(expected, "misses.jsonl"), "dtypes")]
    if len(sys.argv) > 1:
        limit = int(sys.argv[2]) if len(sys.argv) > 2 else 50
        found = sorted(set(values(sys.argv[1], "candidates")))
        out += [b"0" + v for v in found[:limit]]
    out.append(b"0" + CANDS)
    out += [b"0" + in_string(s) for s in HOSTILE_STRINGS]
    out += [b"0" + number(s) for s in HOSTILE_NUMBERS]
    out += [b"0" + latency(s) for s in HOSTILE_NUMBERS]
    out += [b"0" + s for s in STRUCTURE]
    for s in HOSTILE_STRINGS:
        out += [b"1" + b'["' + s + b'"]', b"2" + b'["F32","' + s + b'"]']
    out += [mode + s for s in DTYPES_VARIANTS for mode in (b"1", b"2")]
    out += [b"3" + d + b"\n" + c for d in (DTYPES, b"[]", b'["F16" ]') for c in (CANDS, b"[]", b"", b"[ ]")]
    return out


def main():
    os.makedirs(CORPUS, exist_ok=True)
    written = set()
    for seed in seeds():
        name = hashlib.sha1(seed).hexdigest()
        if name in written:
            continue
        written.add(name)
        with open(os.path.join(CORPUS, name), "wb") as f:
            f.write(seed)
    print("%d seeds in %s" % (len(written), CORPUS))


if __name__ == "__main__":
    main()
