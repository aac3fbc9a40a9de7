"""Structure-aware fuzzing of vocabulary files, run in child processes.

A *case* is ``(format, case id)``: the id seeds a ``random.Random``, which
picks a seed file (a tiny hand-built one, now and then a real file from
``$FASTTOK_DATA``) and one to three mutations. Mutations know the container:

* ``.tiktoken``: lines of ``base64 rank``; ranks, tokens, duplicates, layout.
* GGUF: the header and the typed key/value list; counts, lengths, value types,
  token texts and types, ids, merges, flags, the charsmap, truncation at every
  structure boundary.
* SentencePiece ``.model``: the protobuf fields of ``ModelProto`` and its
  pieces, trainer and normalizer specs; wire types, lengths, enum values,
  ids, duplicates, the charsmap trie.
* ``tokenizer.json`` and ``tekken.json``: the parsed tree
  (:mod:`fuzzing_json`); keys, value types, ids, component types, regexes,
  lists, nesting depth.

plus byte-level truncations and bit flips. Generating a case needs only the
standard library, so the parent process makes the same bytes as the child.

Each case must end in *loads, then encodes and decodes a fixed set of
hostile strings without error* or in a ``VocabularyFileError`` from the
load. The runner (:func:`run_cases`, shared with ``tests/attack.py``) starts
worker processes (this file run as a script) that each take a batch of case
ids, under an address-space limit; the parent kills a worker that spends too
much CPU on one case, or sleeps in it without using any, counted from the
moment the worker says it starts the case (see :class:`Limits`), and starts a
new one for the rest of the batch, so a crash or a hang is pinned to its
case. Per case the worker measures CPU time and the peak RSS growth
(``VmHWM`` after resetting it through ``/proc/self/clear_refs``).

Reproduce one case in-process (prints the traceback)::

    python tests/fuzzing.py case gguf 1234

Write its file for a debugger or another library::

    python tests/fuzzing.py write gguf 1234 /tmp
"""

from __future__ import annotations

import base64
import collections
import dataclasses
import json
import math
import os
import random
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Optional

import fuzzing_json

FORMATS = ("tiktoken", "gguf", "model", "tokenizer.json", "tekken")
SUFFIX = {"tiktoken": ".tiktoken", "gguf": ".gguf", "model": ".model",
          "tokenizer.json": "-tokenizer.json", "tekken": "-tekken.json", "selftest": ".bin"}

# Address space a worker may add to what it holds after importing fasttok.
ADDRESS_SPACE_HEADROOM = 1 << 30

# Texts every loaded vocabulary encodes (with and without special tokens,
# with BOS/EOS) and decodes back.
HOSTILE_TEXTS = (
    "", " ", "hello world", "The quick brown fox, isn't it?  \n\n\tdone.",
    "<|endoftext|>", "a<|endoftext|>b<|fim_prefix|>c<|im_end|>",
    "<s></s><unk><pad>[CLS][SEP][MASK][UNK]<mask><tool>", "<0x41><0xZZ>[UNK_BYTE_0x41]",
    "\x00\x01\x7f", "a" * 3000, " " * 2000, "\n" * 500, "ab" * 1500, "\u2581" * 300,
    "x\ud800y", "\udfff", "\ud83d\ude00 paired", "日本語のテキスト、東京。", "ＨｅｌｌｏⅫ①ﬁ…™",
    "\u3000\u200b\u200d\ufeff", "مرحبا بالعالم", "Привет мир", "😀" * 200, "A\u030a e\u0301",
    "한국어 텍스트", "1234567890 3.14159", "\ufffd\U0010ffff",
)

# ---------------------------------------------------------------------------
# Shared helpers


def bytes_to_unicode() -> dict:
    """GPT-2's byte -> printable character map (the byte-level alphabet)."""
    keep = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    mapping = {b: chr(b) for b in keep}
    extra = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + extra)
            extra += 1
    return dict(sorted(mapping.items()))


BYTE_LEVEL = bytes_to_unicode()


INTERESTING_INTS = (0, 1, 2, 3, 7, 255, 256, 300, 65535, 2**31 - 1, 2**31, 2**32 - 1, 2**32,
                    2**63 - 1, 2**63, 2**64 - 1)

# Texts llama.cpp treats specially (EOG, FIM, gpt-oss channel texts).
SPECIAL_TEXTS = ("<|endoftext|>", "<|im_end|>", "</s>", "<s>", "<|fim_prefix|>", "<|fim_middle|>",
                 "<|fim_suffix|>", "<|end|>", "<|return|>", "<|call|>", "<|channel|>",
                 "<|message|>", "[MASK]", "<mask>", "<unk>", "[PAD]", "<0x41>", "\u2581",
                 "[EMPTY_3]", "<|tool_response>", "<eos>")


def build_charsmap(rules: dict) -> bytes:
    """A SentencePiece ``precompiled_charsmap`` for ``{source text: replacement}``
    (a source given as ``bytes`` is those bytes, which may end inside a character).

    A darts-clone double array: every node's children sit at ``base ^ byte``
    and its leaf (the replacement's offset) at ``base``; bases are chosen
    greedily so no two positions collide.
    """
    strings = bytearray()
    root: dict = {"kids": {}, "value": None}
    for src, dst in rules.items():
        node = root
        for b in src if isinstance(src, bytes) else src.encode("utf-8"):
            node = node["kids"].setdefault(b, {"kids": {}, "value": None})
        node["value"] = len(strings)
        strings += dst.encode("utf-8") + b"\0"
    units: dict = {}
    bases: set = set()
    queue = [(root, 0, 0)]
    while queue:
        node, pos, label = queue.pop(0)
        needed = list(node["kids"]) + ([0] if node["value"] is not None else [])
        base = 1
        while base in bases or any((base ^ c) in units or (base ^ c) == 0 for c in needed):
            base += 1
        bases.add(base)
        offset = pos ^ base
        units[pos] = label | ((node["value"] is not None) << 8) | (offset << 10)
        if node["value"] is not None:
            units[base] = 0x80000000 | node["value"]
        for c, kid in node["kids"].items():
            units[base ^ c] = c  # placeholder, filled when the child is visited
            queue.append((kid, base ^ c, c))
    size = max(units) + 1
    trie = b"".join(struct.pack("<I", units.get(i, 0)) for i in range(size))
    return struct.pack("<I", len(trie)) + trie + bytes(strings)


CHARSMAP_RULES = {"Ａ": "A", "ｅ": "e", "ｌ": "l", "Ⅻ": "XII", "①": "1", "ﬁ": "fi", "…": "...",
                  "™": "TM", "\u3000": " ", "A\u030a": "Å", "\u200b": "", "\ufeff": ""}


def charsmap_mutations(rng: random.Random, blob: bytes) -> tuple:
    """``(new blob, kind)``: one targeted edit of a charsmap's framing or trie."""
    kind = rng.choice(("size", "unit_offset", "unit_flip", "strings_cut", "no_nul", "tiny",
                       "leaf_value", "root_offset"))
    data = bytearray(blob)
    n_units = (len(blob) - 4) // 4 if len(blob) >= 4 else 0
    trie_size = int.from_bytes(data[:4], "little") if len(data) >= 4 else 0
    if kind == "size" or n_units == 0:
        data[:4] = struct.pack("<I", rng.choice((0, 1, 3, 4, trie_size - 4, trie_size + 4,
                                                 len(blob) - 4, len(blob), 2**32 - 1)) % 2**32)
    elif kind in ("unit_offset", "root_offset", "unit_flip", "leaf_value"):
        units = max(1, min(n_units, trie_size // 4))
        i = 0 if kind == "root_offset" else rng.randrange(units)
        u = int.from_bytes(data[4 + 4 * i:8 + 4 * i], "little")
        if kind == "unit_flip":
            u ^= 1 << rng.randrange(32)
        elif kind == "leaf_value":
            u = 0x80000000 | rng.choice((0, 1, len(blob), 2**31 - 1, rng.randrange(2**31)))
        else:
            u = (u & 0x3FF) | (rng.choice((1, 255, 256, 4095, 2**21 - 1, rng.randrange(2**22)))
                               << 10)
        data[4 + 4 * i:8 + 4 * i] = struct.pack("<I", u & 0xFFFFFFFF)
    elif kind == "strings_cut":
        data = data[:4 + trie_size + rng.randrange(0, max(1, len(data) - 4 - trie_size))]
    elif kind == "no_nul":
        data = bytearray(data[:4 + trie_size]) + data[4 + trie_size:].replace(b"\0", b"x")
    else:
        data = data[:rng.randrange(0, 8)]
    return bytes(data), f"charsmap_{kind}"


# ---------------------------------------------------------------------------
# Serialized-bytes mutations, given the boundaries and numeric fields the
# serializer recorded.

@dataclasses.dataclass
class Layout:
    """Where a serialized file's structure is: element ends and count/length fields."""

    boundaries: list = dataclasses.field(default_factory=list)
    fields: list = dataclasses.field(default_factory=list)  # (offset, width or "varint", what)


def byte_mutation(rng: random.Random, data: bytes, layout: Layout) -> tuple:
    """``(new data, kind)``: a cut at a recorded boundary or anywhere, a lie in a
    recorded count or length, bit flips, or inserted or deleted bytes."""
    kind = rng.choice(("truncate_boundary", "truncate_boundary", "truncate_random", "bitflip",
                       "bitflip", "lie_field", "lie_field", "insert_bytes", "delete_bytes"))
    if not data:
        return data, kind
    if kind == "truncate_boundary" and layout.boundaries:
        cut = rng.choice(layout.boundaries)
        return data[:cut + rng.choice((0, 0, -1, 1))], kind
    if kind == "lie_field" and layout.fields:
        offset, width, _ = rng.choice(layout.fields)
        return _lie(rng, data, offset, width), kind
    buf = bytearray(data)
    if kind == "bitflip":
        for _ in range(rng.choice((1, 1, 2, 4, 16))):
            i = rng.randrange(len(buf))
            buf[i] ^= 1 << rng.randrange(8)
        return bytes(buf), kind
    i = rng.randrange(len(buf) + 1)
    if kind == "insert_bytes":
        buf[i:i] = rng.randbytes(rng.choice((1, 2, 8, 100)))
        return bytes(buf), kind
    if kind == "delete_bytes":
        del buf[i:i + rng.choice((1, 2, 8, 100))]
        return bytes(buf), kind
    return data[:rng.randrange(len(data))], "truncate_random"


def _lie(rng: random.Random, data: bytes, offset: int, width) -> bytes:
    value = rng.choice(INTERESTING_INTS + (rng.randrange(2**16),))
    if width == "varint":
        _, end = read_varint(data, offset)
        new = varint(value % 2**64)
        return data[:offset] + new + data[end:]
    fmt = {4: "<I", 8: "<Q"}[width]
    value %= 2 ** (8 * width)
    current = int.from_bytes(data[offset:offset + width], "little")
    if rng.random() < 0.4:
        value = max(0, current + rng.choice((-2, -1, 1, 2)))  # off by one or two
    return data[:offset] + struct.pack(fmt, value % 2 ** (8 * width)) + data[offset + width:]


# ---------------------------------------------------------------------------
# .tiktoken

TIKTOKEN_WORDS = ("th", "he", "in", "er", "an", " t", " a", "the", " the", "ing", "and", " and",
                  "re", "on", " o", "at", "en", "nd", "es", " s", "or", "ou", " w", "is", "it",
                  " i", " c", "al", "ed", " b", "ar", " f", " p", "le", "to", " m", "ion", " in",
                  "hello", " world", "\n\n", "  ", "日")


def tiktoken_seed() -> list:
    """A 299-token rank list: the 256 bytes in a permuted order, then 43 longer tokens.

    The cases give the special tokens ids 300 and 301, so id 299 is a hole
    (p50k_base has one too)."""
    order = list(range(256))
    random.Random(300).shuffle(order)
    lines = [(bytes([b]), rank) for rank, b in enumerate(order)]
    for word in TIKTOKEN_WORDS:
        lines.append((word.encode("utf-8"), len(lines)))
    return lines


def parse_tiktoken(data: bytes) -> list:
    """A real file's ``[(token bytes, rank), ...]``."""
    out = []
    for line in data.splitlines():
        tok, rank = line.split()
        out.append((base64.b64decode(tok), int(rank)))
    return out


def _next_rank(lines: list) -> int:
    return max((r for _, r in lines if isinstance(r, int)), default=-1) + 1


def _tiktoken_line_edit(rng: random.Random, lines: list) -> str:
    kinds = ("duplicate_token", "duplicate_rank", "rank_gap", "rank_huge", "rank_digits",
             "rank_negative", "empty_token", "remove_line", "swap_ranks", "special_text_token",
             "shuffle", "long_token")
    kind = rng.choice(kinds)
    i = rng.randrange(len(lines))
    tok, rank = lines[i]
    if kind == "duplicate_token":
        lines.append((tok, _next_rank(lines)))
    elif kind == "duplicate_rank":
        lines.append((b"zz" + rng.randbytes(2), rank))
    elif kind == "rank_gap":
        lines[i] = (tok, _next_rank(lines) - 1 + rng.choice((1, 10, 1000, 100_000)))
    elif kind == "rank_huge":
        lines[i] = (tok, rng.choice((3 * 10**8, 2**31 - 1, 2**32 - 2, 2**32 - 1, 2**40)))
    elif kind == "rank_digits":
        lines[i] = (tok, "9" * rng.choice((20, 4299, 4301, 10000)))
    elif kind == "rank_negative":
        lines[i] = (tok, -rank - 1 if isinstance(rank, int) else "-" + rank)
    elif kind == "empty_token":
        lines[i] = (b"", rank)
    elif kind == "remove_line":
        del lines[i]
    elif kind == "swap_ranks":
        j = rng.randrange(len(lines))
        lines[i], lines[j] = (tok, lines[j][1]), (lines[j][0], rank)
    elif kind == "special_text_token":
        lines.append((rng.choice(SPECIAL_TEXTS).encode(), _next_rank(lines)))
    elif kind == "shuffle":
        rng.shuffle(lines)
    else:
        lines.append((rng.randbytes(rng.choice((100, 5000))), _next_rank(lines)))
    return f"tiktoken_{kind}"


def _tiktoken_serialize(lines: list) -> tuple:
    out = bytearray()
    layout = Layout()
    for tok, rank in lines:
        out += base64.b64encode(tok) + b" "
        layout.boundaries.append(len(out))
        out += str(rank).encode() + b"\n"
        layout.boundaries.append(len(out))
    return bytes(out), layout


def _tiktoken_text_edit(rng: random.Random, data: bytes) -> tuple:
    kind = rng.choice(("crlf", "bad_base64", "extra_field", "missing_rank", "blank_lines",
                       "inner_padding", "tabs", "no_final_newline", "non_ascii_rank"))
    lines = data.split(b"\n")
    i = rng.randrange(max(1, len(lines) - 1))
    if kind == "crlf":
        data = data.replace(b"\n", b"\r\n")
    elif kind == "bad_base64":
        lines[i] = b"!!@@" + lines[i]
    elif kind == "extra_field":
        lines[i] += b" 7"
    elif kind == "missing_rank":
        lines[i] = lines[i].split(b" ")[0]
    elif kind == "blank_lines":
        lines.insert(i, b"   ")
    elif kind == "inner_padding":
        lines[i] = b"QQ==QQ== " + lines[i].split(b" ")[-1]
    elif kind == "tabs":
        lines[i] = lines[i].replace(b" ", b"\t")
    elif kind == "non_ascii_rank":
        lines[i] = lines[i].split(b" ")[0] + " \u0663".encode()
    if kind not in ("crlf", "no_final_newline"):
        data = b"\n".join(lines)
    elif kind == "no_final_newline":
        data = data.rstrip(b"\n")
    return data, f"tiktoken_{kind}"


# ---------------------------------------------------------------------------
# GGUF: a document is [version, tensor_count, [[key, type, value], ...]];
# an array value is (element type, [items]).

STR, ARR, BOOL, U8, U32, I32, F32 = 8, 9, 7, 0, 4, 5, 6
_GGUF_FMT = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 10: "Q", 11: "q", 12: "d"}
GGUF_PRE_NAMES = ("default", "gpt-2", "llama-bpe", "qwen2", "deepseek-coder", "deepseek-llm",
                  "falcon", "command-r", "starcoder", "refact", "mpt", "bert-bge", "kimi-k2",
                  "jina-v2-code", "chameleon", "tekken", "martian", "")


def gguf_serialize(doc: list) -> tuple:
    """``(file bytes, Layout)`` of a GGUF document (counts written as they are)."""
    version, tensor_count, kvs = doc
    out = bytearray(struct.pack("<4sIQQ", b"GGUF", version, tensor_count, len(kvs)))
    layout = Layout(boundaries=[4, 8, 16, 24],
                    fields=[(8, 8, "tensor_count"), (16, 8, "kv_count")])

    def string(raw: bytes, what: str) -> None:
        layout.fields.append((len(out), 8, what))
        out.extend(struct.pack("<Q", len(raw)))
        layout.boundaries.append(len(out))
        out.extend(raw)
        layout.boundaries.append(len(out))

    def value(vtype: int, v, what: str) -> None:
        if vtype in _GGUF_FMT:
            out.extend(struct.pack("<" + _GGUF_FMT[vtype], _fit(vtype, v)))
        elif vtype == BOOL:
            out.append(v & 0xFF)
        elif vtype == STR:
            string(v if isinstance(v, bytes) else v.encode("utf-8"), what)
        elif vtype == ARR:
            etype, items = v
            layout.fields.append((len(out), 4, what + " element type"))
            layout.fields.append((len(out) + 4, 8, what + " count"))
            out.extend(struct.pack("<IQ", etype, len(items)))
            layout.boundaries.append(len(out))
            for item in items[:64]:
                value(etype, item, what)
            for item in items[64:]:  # boundaries only: a 300-token array has enough
                if etype == STR:
                    raw = item if isinstance(item, bytes) else item.encode("utf-8")
                    out.extend(struct.pack("<Q", len(raw)) + raw)
                else:
                    value(etype, item, what)
        else:
            out.extend(v)  # an unknown type code: raw payload
        layout.boundaries.append(len(out))

    for key, vtype, v in kvs:
        string(key.encode("utf-8"), "key")
        layout.fields.append((len(out), 4, key + " type"))
        out.extend(struct.pack("<I", vtype))
        value(vtype, v, key)
    return bytes(out), layout


def _fit(vtype: int, v):
    # a number as the field's type stores it: integers wrap, floats stay
    if not isinstance(v, int) or vtype not in _INTEGER_TYPES:
        return float(v) if vtype in (F32, 12) else v
    bits = 8 * struct.calcsize(_GGUF_FMT[vtype])
    if _GGUF_FMT[vtype].isupper():
        return v % 2**bits
    return (v + 2**(bits - 1)) % 2**bits - 2**(bits - 1)


def parse_gguf(data: bytes) -> list:
    """A real file's document (the inverse of :func:`gguf_serialize`)."""
    _, version, tensor_count, n = struct.unpack_from("<4sIQQ", data)
    pos = 24

    def string() -> str:
        nonlocal pos
        (size,) = struct.unpack_from("<Q", data, pos)
        pos += 8 + size
        return data[pos - size:pos].decode("utf-8")

    def value(vtype: int):
        nonlocal pos
        if vtype in _GGUF_FMT:
            (v,) = struct.unpack_from("<" + _GGUF_FMT[vtype], data, pos)
            pos += struct.calcsize(_GGUF_FMT[vtype])
            return v
        if vtype == BOOL:
            pos += 1
            return data[pos - 1]
        if vtype == STR:
            return string()
        etype, count = struct.unpack_from("<IQ", data, pos)
        pos += 12
        return (etype, [value(etype) for _ in range(count)])

    kvs = []
    for _ in range(n):
        key = string()
        (vtype,) = struct.unpack_from("<I", data, pos)
        pos += 4
        kvs.append([key, vtype, value(vtype)])
    return [version, tensor_count, kvs]


def _kv(key: str, vtype: int, value) -> list:
    return ["tokenizer.ggml." + key, vtype, value]


def gguf_gpt2_seed(pre: str) -> list:
    """A gpt2 vocabulary: the 256 byte-level tokens, merges for a few words, four specials."""
    tokens = [BYTE_LEVEL[b] for b in range(256)]
    merges = []
    for word in ("Ġthe", "the", "Ġa", "and", "ing", "Ġw", "Ġwor", "he", "llo", "Ġhello"):
        for k in range(1, len(word)):
            left, right = word[:k], word[k]
            if left + right not in tokens:
                merges.append(f"{left} {right}")
                tokens.append(left + right)
    types = [1] * len(tokens)
    for text, kind in (("<|endoftext|>", 3), ("<|im_end|>", 3), ("<|fim_prefix|>", 3),
                       ("<tool>", 4)):
        tokens.append(text)
        types.append(kind)
    return [3, 0, [["general.architecture", STR, "gpt2"], _kv("model", STR, "gpt2"),
                   _kv("pre", STR, pre), _kv("tokens", ARR, (STR, tokens)),
                   _kv("token_type", ARR, (I32, types)), _kv("merges", ARR, (STR, merges)),
                   _kv("bos_token_id", U32, len(tokens) - 4),
                   _kv("eos_token_id", U32, len(tokens) - 4)]]


def _spm_pieces(byte_pieces: bool) -> tuple:
    pieces = [("<unk>", 2), ("<s>", 3), ("</s>", 3)]
    if byte_pieces:
        pieces += [(f"<0x{b:02X}>", 6) for b in range(256)]
    words = ["\u2581", *"abcdefghijklmnopqrstuvwxyz.,!?'", "\u2581t", "he", "\u2581the", "in",
             "\u2581a", "er", "\u2581w", "or", "ld", "\u2581wor", "\u2581world", "ll", "\u2581he",
             "\u2581hello", "ing", "\u2581and", "日", "本", "語", "\u2581<tool>"]
    pieces += [(w, 1) for w in words]
    scores = [0.0] * len(pieces)
    for i in range(len(pieces)):
        if pieces[i][1] == 1:
            scores[i] = -1.0 - i * 0.25
    return pieces, scores


def gguf_spm_seed(model: str) -> list:
    """A ``llama`` (with the 256 byte pieces) or ``t5`` (with a charsmap) vocabulary."""
    pieces, scores = _spm_pieces(byte_pieces=model == "llama")
    kvs = [["general.architecture", STR, model], _kv("model", STR, model),
           _kv("tokens", ARR, (STR, [p for p, _ in pieces])),
           _kv("token_type", ARR, (I32, [t for _, t in pieces])),
           _kv("scores", ARR, (F32, scores)),
           _kv("unknown_token_id", U32, 0), _kv("bos_token_id", U32, 1),
           _kv("eos_token_id", U32, 2)]
    if model == "t5":
        kvs += [_kv("precompiled_charsmap", ARR, (U8, list(build_charsmap(CHARSMAP_RULES)))),
                _kv("add_space_prefix", BOOL, 1), _kv("remove_extra_whitespaces", BOOL, 1)]
    return [3, 0, kvs]


def gguf_bert_seed() -> list:
    """A ``bert`` (WordPiece) vocabulary: word-initial ``▁`` pieces and continuations."""
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    types = [3, 2, 3, 3, 3]
    for w in ("the", "hello", "world", "quick", "fox", "un", "aff", "able", *"abcdefghijklmno",
              ",", ".", "!", "'", "?", "日", "本"):
        tokens += ["\u2581" + w, w]
        types += [1, 1]
    return [3, 0, [["general.architecture", STR, "bert"], _kv("model", STR, "bert"),
                   _kv("pre", STR, "bert-bge"), _kv("tokens", ARR, (STR, tokens)),
                   _kv("token_type", ARR, (I32, types)), _kv("bos_token_id", U32, 2),
                   _kv("seperator_token_id", U32, 3), _kv("unknown_token_id", U32, 1),
                   _kv("padding_token_id", U32, 0), _kv("mask_token_id", U32, 4)]]


def _find_kv(kvs: list, key: str) -> Optional[list]:
    return next((kv for kv in kvs if kv[0] == key), None)


_INTEGER_TYPES = (0, 1, 2, 3, 4, 5, 10, 11)


def _array(kvs: list, key: str, etypes: tuple) -> Optional[list]:
    """The items of array ``key`` if its elements have one of ``etypes`` (earlier
    mutations may have changed its type)."""
    kv = _find_kv(kvs, key)
    if kv is None or kv[1] != ARR or kv[2][0] not in etypes:
        return None
    return kv[2][1]


def gguf_semantic_mutation(rng: random.Random, doc: list) -> str:
    """Edit one thing ``doc`` means (a key, a type, ids, tokens, ...); return its kind."""
    kvs = doc[2]
    tokens = _array(kvs, "tokenizer.ggml.tokens", (STR,))
    kind = rng.choice(("model", "pre", "ids", "token_type", "duplicate_token",
                       "duplicate_nonutf8_byte_token", "empty_token", "giant_token",
                       "special_text", "scores", "merges", "remove_key", "wrong_type",
                       "array_length", "flags", "charsmap", "duplicate_key", "unknown_key",
                       "version", "tensor_count", "token_utf8"))
    if kind == "model":
        _set(kvs, "tokenizer.ggml.model", STR, rng.choice(("gpt2", "llama", "t5", "bert",
                                                           "rwkv", "", "GPT2")))
    elif kind == "pre":
        _set(kvs, "tokenizer.ggml.pre", STR, rng.choice(GGUF_PRE_NAMES))
    elif kind == "ids":
        key = "tokenizer.ggml." + rng.choice(("bos_token_id", "eos_token_id", "unknown_token_id",
                                              "seperator_token_id", "padding_token_id",
                                              "mask_token_id", "eot_token_id",
                                              "fim_pre_token_id", "cls_token_id"))
        n = len(tokens or ())
        vtype, value = rng.choice(((U32, n - 1), (U32, n), (U32, 2**32 - 1), (I32, -1),
                                   (11, -2**63), (10, 2**64 - 1), (STR, "1"), (F32, 1.0),
                                   (U32, rng.randrange(max(1, n)))))
        _set(kvs, key, vtype, value)
    elif kind == "token_type" and tokens:
        items = _array(kvs, "tokenizer.ggml.token_type", _INTEGER_TYPES)
        if items:
            for _ in range(rng.choice((1, 3, 20))):
                items[rng.randrange(len(items))] = rng.choice((0, 1, 2, 3, 4, 5, 6, 7, 99, -1))
    elif kind in ("duplicate_token", "duplicate_nonutf8_byte_token") and tokens:
        i, j = rng.randrange(len(tokens)), rng.randrange(len(tokens))
        tokens[j] = (BYTE_LEVEL[rng.randrange(0x80, 0x100)] if kind.startswith("duplicate_non")
                     else tokens[i])
    elif kind == "empty_token" and tokens:
        tokens[rng.randrange(len(tokens))] = ""
    elif kind == "giant_token" and tokens:
        tokens[rng.randrange(len(tokens))] = rng.choice(("a", "\u2581a", "Ġ", "日")) * rng.choice(
            (300, 5000, 40000))
    elif kind == "special_text" and tokens:
        tokens[rng.randrange(len(tokens))] = rng.choice(SPECIAL_TEXTS)
    elif kind == "scores":
        n = len(tokens or ())
        etype = rng.choice((F32, F32, 12, I32))
        pick = ((lambda: rng.randrange(-100, 100)) if etype == I32 else
                (lambda: rng.choice((-1.0, 0.0, math.nan, math.inf, -math.inf, 3.4e38, -1e-45))))
        _set(kvs, "tokenizer.ggml.scores", ARR, (etype, [pick() for _ in range(n)]))
    elif kind == "merges":
        merges = _array(kvs, "tokenizer.ggml.merges", (STR,)) or []
        extra = [rng.choice(("a", "Ġ", "x y z", " a", "a ", "ab", "\u2581 a", "Ġt he", "<s> a",
                             "  ", "Ġ Ġ", "é è"))
                 for _ in range(rng.choice((1, 5, 50)))]
        merges[rng.randrange(len(merges) + 1):0] = extra
        _set(kvs, "tokenizer.ggml.merges", ARR, (STR, merges))
    elif kind == "remove_key" and kvs:
        del kvs[rng.randrange(len(kvs))]
    elif kind == "wrong_type" and kvs:
        kv = rng.choice(kvs)
        kv[1], kv[2] = rng.choice(((U32, 7), (STR, "x"), (BOOL, 1), (ARR, (U32, [1, 2])),
                                   (ARR, (STR, ["a"])), (ARR, (ARR, [(U8, [1])])), (F32, 0.5),
                                   (13, b"\0" * 8)))
    elif kind == "array_length":
        key = rng.choice(("tokenizer.ggml.token_type", "tokenizer.ggml.scores",
                          "tokenizer.ggml.tokens"))
        kv = _find_kv(kvs, key)
        if kv is not None and kv[1] == ARR:
            items = kv[2][1]
            if rng.random() < 0.5 and items:
                del items[rng.randrange(len(items)):]
            else:
                items.extend(items[:rng.choice((1, 10))])
    elif kind == "flags":
        key = "tokenizer.ggml." + rng.choice(("add_bos_token", "add_eos_token", "add_sep_token",
                                              "add_space_prefix", "remove_extra_whitespaces"))
        _set(kvs, key, *rng.choice(((BOOL, 0), (BOOL, 1), (BOOL, 2), (U8, 1), (I32, 2),
                                    (STR, "true"))))
    elif kind == "charsmap":
        items = _array(kvs, "tokenizer.ggml.precompiled_charsmap", (U8, 1))
        blob = (bytes(b & 0xFF for b in items) if items is not None
                else build_charsmap(CHARSMAP_RULES))
        blob, kind = charsmap_mutations(rng, blob)
        _set(kvs, "tokenizer.ggml.precompiled_charsmap", ARR, (U8, list(blob)))
    elif kind == "duplicate_key" and kvs:
        kvs.insert(rng.randrange(len(kvs) + 1), list(rng.choice(kvs)))
    elif kind == "unknown_key":
        depth_value = (U8, [1])
        for _ in range(rng.choice((1, 3, 9, 12))):
            depth_value = (ARR, [depth_value])
        kvs.insert(rng.randrange(len(kvs) + 1),
                   rng.choice((["x.y", ARR, depth_value], ["tokenizer.x", U32, 1],
                               ["tokenizer.ggml.extra", ARR, (STR, ["a", "b"])],
                               ["general.name", STR, rng.choice(("phi-3", "modern-bert"))])))
    elif kind == "version":
        doc[0] = rng.choice((0, 1, 2, 4, 0x03000000, 2**32 - 1))
    elif kind == "tensor_count":
        doc[1] = rng.choice((1, 2**20, 2**63))
    elif kind == "token_utf8" and tokens:
        i = rng.randrange(len(tokens))
        raw = tokens[i].encode("utf-8") if isinstance(tokens[i], str) else tokens[i]
        tokens[i] = raw + rng.choice((b"\xff", b"\xc3", b"\xed\xa0\x80"))
    return "gguf_" + kind


def _set(kvs: list, key: str, vtype: int, value) -> None:
    kv = _find_kv(kvs, key)
    if kv is None:
        kvs.append([key, vtype, value])
    else:
        kv[1], kv[2] = vtype, value


# ---------------------------------------------------------------------------
# SentencePiece .model: a message is [[field number, wire type, value], ...];
# a length-delimited value is bytes or (for sub-messages) a message.

VARINT, FIXED64, LEN, FIXED32 = 0, 1, 2, 5
_SUBMESSAGES = (1, 2, 3, 5)  # ModelProto: pieces, trainer_spec, normalizer_spec, denormalizer


def varint(n: int) -> bytes:
    """Protobuf's varint of ``n`` (taken modulo 2**64)."""
    n &= 2**64 - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def read_varint(buf: bytes, pos: int) -> tuple:
    """``(value, next position)`` of the varint at ``pos``."""
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return result, pos


def proto_serialize(msg: list) -> tuple:
    """``(file bytes, Layout)`` of a message; lengths are the true ones."""
    out = bytearray()
    layout = Layout()

    def emit(m: list) -> None:
        for number, wire, value in m:
            out.extend(varint((number << 3) | wire))
            if wire == VARINT:
                out.extend(varint(value) if isinstance(value, int) else value)
            elif wire == LEN:
                body = _serialize_plain(value) if isinstance(value, list) else value
                layout.fields.append((len(out), "varint", f"length of field {number}"))
                out.extend(varint(len(body)))
                if isinstance(value, list):
                    emit(value)
                else:
                    out.extend(body)
            else:
                out.extend(value)
            layout.boundaries.append(len(out))

    emit(msg)
    return bytes(out), layout


def _serialize_plain(msg: list) -> bytes:
    return proto_serialize(msg)[0]


def parse_proto(buf: bytes, top: bool = True) -> list:
    """A real ``.model`` file's ModelProto as a message (sub-messages parsed one level)."""
    msg, pos = [], 0
    while pos < len(buf):
        tag, pos = read_varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        if wire == VARINT:
            value, pos = read_varint(buf, pos)
        elif wire == LEN:
            n, pos = read_varint(buf, pos)
            value = buf[pos:pos + n]
            pos += n
            if top and number in _SUBMESSAGES:
                value = parse_proto(value, top=False)
        else:
            size = 8 if wire == FIXED64 else 4
            value = buf[pos:pos + size]
            pos += size
        msg.append([number, wire, value])
    return msg


def _piece(text: str, score: float, kind: int) -> list:
    fields = [[1, LEN, text.encode("utf-8")], [2, FIXED32, struct.pack("<f", score)]]
    if kind != 1:
        fields.append([3, VARINT, kind])
    return [1, LEN, fields]


def model_seed(model_type: int, byte_fallback: bool, charsmap: bool, denormalizer: bool) -> list:
    """A ModelProto: unk/bos/eos, optional byte pieces, a user-defined piece, specs."""
    pieces, scores = _spm_pieces(byte_pieces=byte_fallback)
    pieces = [(p, 4 if p == "\u2581<tool>" else t) for p, t in pieces]
    msg = [_piece(p, s, t) for (p, t), s in zip(pieces, scores)]
    trainer = [[3, VARINT, model_type], [4, VARINT, len(pieces)], [40, VARINT, 0],
               [41, VARINT, 1], [42, VARINT, 2], [43, VARINT, 2**64 - 1]]
    if byte_fallback:
        trainer.append([35, VARINT, 1])
    msg.append([2, LEN, trainer])
    normalizer = [[1, LEN, b"nmt_nfkc" if charsmap else b"identity"]]
    if charsmap:
        normalizer.append([2, LEN, build_charsmap(CHARSMAP_RULES)])
    msg.append([3, LEN, normalizer])
    if denormalizer:
        msg.append([5, LEN, [[2, LEN, build_charsmap({"\u2581": " ", "TM": "™"})],
                             [3, VARINT, 0], [4, VARINT, 0]]])
    return msg


def model_semantic_mutation(rng: random.Random, msg: list) -> str:
    """Edit one field of ``msg`` or its sub-messages by meaning; return the kind."""
    pieces = [f for f in msg if f[0] == 1 and isinstance(f[2], list)]
    specs = {n: next((f for f in msg if f[0] == n and isinstance(f[2], list)), None)
             for n in (2, 3, 5)}
    kind = rng.choice(("piece_type", "duplicate_piece", "empty_piece", "nul_piece",
                       "giant_piece", "remove_piece", "second_unknown", "byte_piece", "score",
                       "model_type", "trainer_id", "byte_fallback", "trainer_piece_name",
                       "normalizer_flags", "charsmap", "denormalizer", "wire_type",
                       "unknown_field", "repeat_field", "user_defined", "piece_utf8",
                       "overlong_varint"))
    if kind == "piece_type" and pieces:
        _set_field(rng.choice(pieces)[2], 3, VARINT,
                   rng.choice((0, 1, 2, 3, 4, 5, 6, 7, 99, 2**64 - 1)))
    elif kind == "duplicate_piece" and pieces:
        at = msg.index(rng.choice(pieces))
        msg.insert(rng.randrange(len(msg) + 1), [1, LEN, [list(f) for f in msg[at][2]]])
    elif kind in ("empty_piece", "nul_piece", "giant_piece", "piece_utf8") and pieces:
        text = {"empty_piece": b"", "nul_piece": b"a\0b",
                "giant_piece": "\u2581ab".encode() * rng.choice((100, 2666, 2700)),
                "piece_utf8": b"\xe2\x96"}[kind]
        _set_field(rng.choice(pieces)[2], 1, LEN, text)
    elif kind == "remove_piece" and pieces:
        msg.remove(rng.choice(pieces[:4] if rng.random() < 0.5 else pieces))
    elif kind == "second_unknown" and pieces:
        _set_field(rng.choice(pieces)[2], 3, VARINT, 2)
    elif kind == "byte_piece" and pieces:
        _set_field(rng.choice(pieces)[2], 1, LEN,
                   rng.choice((b"<0xZZ>", b"<0x4a>", b"<0x100>", b"<0x41>")))
    elif kind == "score" and pieces:
        _set_field(rng.choice(pieces)[2], 2, FIXED32, struct.pack(
            "<f", rng.choice((math.nan, math.inf, -math.inf, 3.4e38, -3.4e38, 0.0))))
    elif kind == "model_type" and specs[2]:
        _set_field(specs[2][2], 3, VARINT, rng.choice((0, 1, 2, 3, 4, 5)))
    elif kind == "trainer_id" and specs[2]:
        _set_field(specs[2][2], rng.choice((4, 40, 41, 42, 43, 20)), VARINT,
                   rng.choice((0, 1, 2, len(pieces), len(pieces) - 1, 2**64 - 1, 2**31,
                               2**63)))
    elif kind == "byte_fallback" and specs[2]:
        _set_field(specs[2][2], 35, VARINT, rng.choice((0, 1, 2)))
    elif kind == "trainer_piece_name" and specs[2]:
        _set_field(specs[2][2], rng.choice((45, 46, 47, 48, 44)), LEN,
                   rng.choice((b"<unk>", b"a", b"", b"\xff", "\u2581the".encode())))
    elif kind == "normalizer_flags" and specs[3]:
        if rng.random() < 0.3 and specs[2]:
            _set_field(specs[2][2], 24, VARINT, 1)  # treat_whitespace_as_suffix
        _set_field(specs[3][2], rng.choice((3, 4, 5)), VARINT, rng.choice((0, 1, 2)))
    elif kind == "charsmap" and specs[3]:
        current = next((f[2] for f in specs[3][2] if f[0] == 2 and f[1] == LEN), None)
        blob, kind = charsmap_mutations(rng, current or build_charsmap(CHARSMAP_RULES))
        _set_field(specs[3][2], 2, LEN, blob)
    elif kind == "denormalizer":
        blob, _ = charsmap_mutations(rng, build_charsmap({"\u2581": " ", "a": "b"}))
        msg.append([5, LEN, [[2, LEN, blob]]])
    elif kind == "wire_type" and msg:
        field = rng.choice(msg)
        sub = field[2] if isinstance(field[2], list) and field[2] else None
        target = rng.choice(sub) if sub and rng.random() < 0.7 else field
        wire = rng.choice((0, 1, 2, 3, 4, 5, 6, 7))
        target[1], target[2] = wire, {0: 1, 1: b"\0" * 8, 2: b"xx", 5: b"\0" * 4}.get(wire, b"")
    elif kind == "unknown_field":
        target = rng.choice([msg] + [f[2] for f in msg if isinstance(f[2], list)])
        target.insert(rng.randrange(len(target) + 1), rng.choice(
            ([99, VARINT, 5], [7, LEN, b"abc"], [1000, FIXED64, b"\0" * 8],
             [2**29 - 1, FIXED32, b"\0" * 4], [0, VARINT, 1], [2**29, VARINT, 1])))
    elif kind == "repeat_field" and msg:
        field = rng.choice([f for f in msg if f[0] != 1] or msg)
        msg.append([field[0], field[1], [list(f) for f in field[2]]
                    if isinstance(field[2], list) else field[2]])
    elif kind == "user_defined":
        for text in rng.sample(("\u2581", "a", "ab", "hello", "<s>", "\u2581<tool>", "日本"), 3):
            msg.insert(1, _piece(text, 0.0, 4))
    elif kind == "overlong_varint" and specs[2]:
        # raw varint bytes: longer than 10 bytes, or wider than 64 bits
        _set_field(specs[2][2], rng.choice((3, 4, 40)), VARINT,
                   rng.choice((b"\x80" * 10 + b"\x01", b"\xff" * 9 + b"\x02", b"\x80")))
    return "model_" + kind


def _set_field(msg: list, number: int, wire: int, value) -> None:
    for f in msg:
        if f[0] == number:
            f[1], f[2] = wire, value
            return
    msg.append([number, wire, value])


# ---------------------------------------------------------------------------
# Cases

@dataclasses.dataclass
class Case:
    """One fuzz case: the file's bytes, how to load it, and what was done to it."""

    fmt: str
    case_id: int
    data: bytes
    kinds: tuple
    seed: str
    options: dict = dataclasses.field(default_factory=dict)


def _data_dir() -> Optional[Path]:
    path = Path(os.environ.get("FASTTOK_DATA") or Path(__file__).resolve().parents[2]
                / "shared" / "data")
    return path if (path / "vocab").is_dir() else None


# The real files mutated now and then: small ones, so that a case stays within
# the CPU bound (nomic-bert-moe, the one real t5 file, takes ~1.3 s to load).
REAL_FILES = {
    "tiktoken": ("tiktoken/r50k_base.tiktoken",),
    "gguf": ("gguf/ggml-vocab-bert-bge.gguf", "gguf/ggml-vocab-llama-spm.gguf",
             "gguf/ggml-vocab-deepseek-coder.gguf"),
    "model": ("sentencepiece/botchan_bpe_8000_bytefallback.model",
              "sentencepiece/botchan_en_unigram_1000.model",
              "sentencepiece/botchan_unigram_2000_userdef_cf.model"),
    "tokenizer.json": ("hf/all-MiniLM-L6-v2/tokenizer.json",
                       "hf/unigram/botchan_unigram_5000.v5.24.0.T5Tokenizer.json"),
    "tekken": (),
}
REAL_FILE_SHARE = 0.02


@lru_cache(maxsize=None)
def _real_seed(fmt: str, rel: str):
    data = (_data_dir() / "vocab" / rel).read_bytes()
    return {"tiktoken": parse_tiktoken, "gguf": parse_gguf, "model": parse_proto,
            "tokenizer.json": json.loads}[fmt](data)


@lru_cache(maxsize=None)
def _tiny_seeds(fmt: str) -> dict:
    if fmt == "tiktoken":
        return {"tiny-299": tiktoken_seed()}
    if fmt == "gguf":
        return {"gpt2-gpt-2": gguf_gpt2_seed("gpt-2"), "gpt2-llama-bpe": gguf_gpt2_seed("llama-bpe"),
                "llama": gguf_spm_seed("llama"), "t5": gguf_spm_seed("t5"),
                "bert": gguf_bert_seed()}
    if fmt == "tokenizer.json":
        return fuzzing_json.tokenizer_json_seeds(build_charsmap(CHARSMAP_RULES), BYTE_LEVEL)
    if fmt == "tekken":
        return fuzzing_json.tekken_seeds()
    return {"unigram-charsmap": model_seed(1, False, True, False),
            "bpe-identity": model_seed(2, False, False, False),
            "bpe-byte-fallback": model_seed(2, True, False, True),
            "unigram-byte-fallback": model_seed(1, True, True, False)}


def _deep_copy(doc):
    if isinstance(doc, dict):
        return {k: _deep_copy(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_deep_copy(x) for x in doc]
    if isinstance(doc, tuple):
        return tuple(_deep_copy(x) for x in doc)
    return doc


# pat_str for fuzzed .tiktoken files: cl100k_base's and gpt2's
TIKTOKEN_PATTERNS = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s""",
)


# The pseudo-format "selftest" misbehaves on purpose, to test the runner:
# case id % 6 -> what its case does ("hang" sleeps, "spin" burns CPU).
SELFTEST_BEHAVIOURS = ("ok", "raise", "crash", "hang", "allocate", "spin")


def make_case(fmt: str, case_id: int) -> Case:
    """The case ``case_id`` of ``fmt``: the same bytes in every process."""
    if fmt == "selftest":
        behaviour = SELFTEST_BEHAVIOURS[case_id % len(SELFTEST_BEHAVIOURS)]
        return Case(fmt, case_id, behaviour.encode(), (behaviour,), "selftest")
    rng = random.Random(f"fasttok-fuzz/{fmt}/{case_id}")
    seeds = _tiny_seeds(fmt)
    # drawn whether or not the data is there, so that ids pick the same mutations
    use_real = rng.random() < REAL_FILE_SHARE
    if use_real and _data_dir() is not None and REAL_FILES[fmt]:
        seed = rng.choice(REAL_FILES[fmt])
        doc = _deep_copy(_real_seed(fmt, seed))
    else:
        seed = rng.choice(sorted(seeds))
        doc = _deep_copy(seeds[seed])
    kinds = []
    semantic = {"tiktoken": _tiktoken_line_edit, "gguf": gguf_semantic_mutation,
                "model": model_semantic_mutation,
                "tokenizer.json": fuzzing_json.json_semantic_mutation,
                "tekken": fuzzing_json.json_semantic_mutation}[fmt]
    for _ in range(rng.choice((0, 1, 1, 1, 2, 3))):
        kinds.append(semantic(rng, doc))
    if fmt == "tiktoken":
        data, layout = _tiktoken_serialize(doc)
        if rng.random() < 0.2:
            data, kind = _tiktoken_text_edit(rng, data)
            kinds.append(kind)
    elif fmt == "gguf":
        data, layout = gguf_serialize(doc)
    elif fmt in ("tokenizer.json", "tekken"):
        data, boundaries = fuzzing_json.json_serialize(doc)
        layout = Layout(boundaries=boundaries)
    else:
        data, layout = proto_serialize(doc)
    if not kinds or rng.random() < 0.3:
        data, kind = byte_mutation(rng, data, layout)
        kinds.append(kind)
    options = {}
    if fmt == "tiktoken":
        top = 300 if seed.startswith("tiny") else 50256
        options = {"pat_str": rng.choice(TIKTOKEN_PATTERNS),
                   "special_tokens": {"<|endoftext|>": top, "<|fim_prefix|>": top + 1}}
    return Case(fmt, case_id, data, tuple(kinds), seed, options)


# ---------------------------------------------------------------------------
# Running one case (in a worker)

def exercise(enc) -> None:
    """Encode and decode :data:`HOSTILE_TEXTS` every way a caller would.

    A decode may end in ``ReferenceFailsError`` (the reference library fails
    there too, and fasttok says so); any other error is a finding."""
    from fasttok.errors import ReferenceFailsError

    top = enc.max_token_value
    for text in HOSTILE_TEXTS:
        runs = (enc.encode(text, allowed_special="all"),
                enc.encode(text, disallowed_special=()),
                enc.encode_ordinary(text),
                enc.encode(text, allowed_special="all", add_special_tokens=True))
        for ids in runs:
            bad = [t for t in ids if not (isinstance(t, int) and 0 <= t <= top)]
            if bad:
                raise AssertionError(f"encode({text[:30]!r}) gave ids outside 0..{top}: {bad[:5]}")
            for decode in (enc.decode, enc.decode_bytes):
                try:
                    decode(ids)
                except ReferenceFailsError:
                    pass
            for t in set(ids):
                enc.decode_single_token_bytes(t)
    for t in range(min(top + 1, 600)):
        try:
            enc.decode_single_token_bytes(t)
        except KeyError:  # an id the vocabulary skips (p50k has such a hole)
            pass


def run_one(case: Case, path: str) -> tuple:
    """``(outcome, detail)`` of loading ``case`` from ``path`` and exercising it."""
    import fasttok
    from fasttok.errors import VocabularyFileError

    with open(path, "wb") as f:
        f.write(case.data)
    if case.fmt == "selftest":
        return _misbehave(case.kinds[0])
    try:
        enc = fasttok.load(path, **case.options)
    except VocabularyFileError as exc:
        return "file_error", str(exc)[:300]
    except MemoryError:
        return "memory_error", traceback.format_exc()[-3000:]
    except Exception:  # noqa: BLE001 - any other exception is what the fuzzer looks for
        return "exception", traceback.format_exc()[-3000:]
    try:
        exercise(enc)
    except MemoryError:
        return "memory_error", traceback.format_exc()[-3000:]
    except Exception:  # noqa: BLE001
        return "exception", "while encoding: " + traceback.format_exc()[-3000:]
    return "ok", ""


def _misbehave(behaviour: str) -> tuple:
    if behaviour == "raise":
        return "exception", "RuntimeError: raised on purpose"
    if behaviour == "crash":
        os.kill(os.getpid(), 11)
    if behaviour == "hang":
        time.sleep(3600)
    if behaviour == "spin":
        while True:
            pass
    if behaviour == "allocate":
        block = bytearray(200 << 20)
        block[::4096] = b"x" * len(block[::4096])  # touch every page
    return "ok", ""


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _limit_address_space(headroom: int = ADDRESS_SPACE_HEADROOM) -> None:
    import resource

    limit = _status_kib("VmSize") * 1024 + headroom
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def worker_main() -> None:
    """Run the fuzz cases of the format ``sys.argv[2]`` (see :func:`serve`)."""
    import fasttok  # noqa: F401 - imported before the address-space limit is set
    import fasttok.formats._byte_bpe  # noqa: F401
    import fasttok.formats._sentencepiece  # noqa: F401
    import fasttok.formats.gguf  # noqa: F401

    fmt = sys.argv[2]
    folder = tempfile.mkdtemp(prefix="fasttok-fuzz-")
    path = os.path.join(folder, "case" + SUFFIX[fmt])

    def run(case_id: int, _: None) -> dict:
        case = make_case(fmt, case_id)
        outcome, detail = run_one(case, path)
        return {"outcome": outcome, "detail": detail, "size": len(case.data), "kinds": case.kinds}

    try:
        serve(run)
    finally:
        if os.path.exists(path):
            os.unlink(path)
        os.rmdir(folder)


# ---------------------------------------------------------------------------
# The runner, shared with the attack suite (tests/attack.py). A worker
# (:func:`serve`) and the parent (:func:`run_cases`) speak one JSON object a
# line: ``{"start": id}`` when the worker begins a case, then its result. The
# parent times a case from its start line, so the worker's start-up (an
# interpreter and fasttok's imports, slow on a loaded machine) is never taken
# for a hang, and it times CPU, not wall clock: a case on a machine shared
# with other jobs gets less CPU per second but needs no more of it.

@dataclasses.dataclass(frozen=True)
class Limits:
    """The bounds a case keeps, and when the parent gives up on its worker.

    A case fails as ``slow`` past ``cpu_seconds`` of CPU and as ``rss`` when
    its peak RSS grows past ``rss_factor`` times its input's size plus
    ``rss_allowance``. The parent kills the worker (``timeout``) once it has
    spent ``hang_seconds`` of CPU (all threads) on one case, or has slept for
    ``stall_seconds`` without using any (a deadlock, a sleep). Without
    ``/proc`` the parent falls back to ``hang_seconds`` of wall clock.

    >>> Limits(cpu_seconds=5).hang_seconds
    10.0
    """

    cpu_seconds: float = 1.0
    rss_factor: int = 20
    rss_allowance: int = 48 << 20
    hang_seconds: float = 10.0
    stall_seconds: float = 10.0


# A worker's start-up, before its first case, has its own generous bound.
STARTUP_LIMITS = Limits(hang_seconds=120.0, stall_seconds=120.0)


@dataclasses.dataclass(frozen=True)
class Suite:
    """A family of numbered cases: how to start a worker for them, and how to show one.

    ``worker`` is the command line after the interpreter; ``kinds(id)``
    labels a case (failures are grouped by label) and ``show(id, folder)``
    gives the lines that describe a failing case and rerun it (it may write
    the case's input into ``folder``)."""

    name: str
    worker: tuple
    kinds: Callable[[int], tuple]
    show: Callable[[int, Path], list]
    limits: Limits = Limits()


def serve(run: Callable[[int, Any], dict],
          prepare: Callable[[int], Any] = lambda case_id: None,
          headroom: int = ADDRESS_SPACE_HEADROOM) -> None:
    """The worker loop: run the case ids of a JSON list on stdin, report on stdout.

    ``run(id, prepare(id))`` returns the result's fields (``outcome``,
    ``detail``, ``size``, ``kinds``); this adds the CPU time and the peak RSS
    growth (``VmHWM`` after resetting it through ``/proc/self/clear_refs``),
    both without ``prepare`` (a shared vocabulary a case needs loaded). Call
    it after the imports: it limits the address space to what the process
    holds then plus ``headroom``."""
    results = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything printed goes to stderr, not into the results
    _limit_address_space(headroom)
    for case_id in json.loads(sys.stdin.readline()):
        results.write(json.dumps({"start": case_id}) + "\n")
        prepared = prepare(case_id)
        measured = _reset_peak_rss()
        before = _status_kib("VmRSS")
        cpu = time.process_time()
        fields = run(case_id, prepared)
        cpu = time.process_time() - cpu
        growth = (_status_kib("VmHWM") - before) * 1024 if measured else 0
        results.write(json.dumps(dict(fields, case=case_id, cpu=round(cpu, 4),
                                      rss_growth=growth)) + "\n")


@dataclasses.dataclass
class Result:
    """What happened to one case."""

    case: int
    outcome: str  # ok, file_error, exception, memory_error, crash, timeout
    detail: str = ""
    cpu: float = 0.0
    rss_growth: int = 0
    size: int = 0
    kinds: tuple = ()  # the labels of the case (the mutations that made a fuzz case)
    limits: Limits = Limits()

    @property
    def problems(self) -> list:
        """Every way this case broke the rules (empty: it passed)."""
        out = []
        if self.outcome not in ("ok", "file_error"):
            out.append(self.outcome)
        if self.cpu > self.limits.cpu_seconds:
            out.append("slow")
        if self.rss_growth > self.limits.rss_factor * self.size + self.limits.rss_allowance:
            out.append("rss")
        return out


@dataclasses.dataclass
class Report:
    """The results of one run over many cases of one suite."""

    suite: Suite
    results: list

    def counts(self) -> dict:
        return dict(collections.Counter(r.outcome for r in self.results))

    def failures(self) -> list:
        return [r for r in self.results if r.problems]

    def describe(self, limit: int = 8) -> str:
        """A summary by label, with the first failures shown (and their inputs written out)."""
        failures = self.failures()
        lines = [f"{self.suite.name}: {len(self.results)} cases, outcomes {self.counts()}, "
                 f"{len(failures)} failing"]
        # Per label: how many of the cases it was on failed, and how; the
        # label behind a failure is the one whose cases fail most often.
        with_kind = collections.Counter(k for r in self.results for k in set(r.kinds))
        failed = collections.defaultdict(collections.Counter)
        for r in failures:
            for kind in set(r.kinds):
                failed[kind].update(r.problems)
        ranked = sorted(failed, key=lambda k: (-sum(failed[k].values()) / with_kind[k], k))
        for kind in ranked:
            n = sum(1 for r in failures if kind in r.kinds)
            lines.append(f"  {kind}: {n} of its {with_kind[kind]} cases failed "
                         f"({', '.join(f'{p} {c}' for p, c in failed[kind].most_common())})")
        folder = Path(tempfile.mkdtemp(prefix=f"fasttok-{self.suite.name}-")) if failures else None
        for r in failures[:limit]:
            detail = r.detail.strip().splitlines()[-1:] if r.detail else []
            show = self.suite.show(r.case, folder)
            lines.append(f"- case {r.case} ({show[0]}): {'+'.join(r.problems)} cpu={r.cpu:.2f}s "
                         f"rss+={r.rss_growth >> 20} MiB size={r.size}: {' '.join(detail)[:300]}")
            lines.extend("    " + line for line in show[1:])
        return "\n".join(lines)


def _cpu_and_state(pid: int) -> Optional[tuple]:
    """``(CPU seconds of every thread, scheduler state letter)`` of a process, from /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            # after the parenthesised command: state is field 3, utime and stime 14 and 15
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), fields[0].decode()
    except (OSError, IndexError, ValueError):
        return None


class _CaseClock:
    """How long a worker has been on its case, counted from its start line."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.restart(STARTUP_LIMITS)

    def restart(self, limits: Limits) -> None:
        self.limits = limits
        self.wall = self.progress = time.monotonic()
        stat = _cpu_and_state(self.pid)
        self.cpu = self.last_cpu = stat[0] if stat else None

    def hung(self) -> str:
        """Why the case counts as hung, or ``""``."""
        now = time.monotonic()
        stat = _cpu_and_state(self.pid) if self.cpu is not None else None
        if stat is None:
            late = now - self.wall > self.limits.hang_seconds
            return f"no result after {self.limits.hang_seconds} s" if late else ""
        cpu, state = stat
        if cpu - self.cpu > self.limits.hang_seconds:
            return f"used more than {self.limits.hang_seconds} s of CPU on the case"
        # A worker starved by a loaded machine is runnable ("R") or gets some
        # CPU now and then; a sleeping one that gets none is stuck.
        if cpu != self.last_cpu or state == "R":
            self.last_cpu, self.progress = cpu, now
        elif now - self.progress > self.limits.stall_seconds:
            return f"asleep ({state}) without using CPU for {self.limits.stall_seconds} s"
        return ""


class _Worker:
    """One worker process and a line reader over its results pipe."""

    def __init__(self, command: tuple, ids: list) -> None:
        self.stderr = tempfile.TemporaryFile()
        # the worker's temporary files, removed here: a worker killed for a
        # hang or crashed on purpose never gets to remove its own
        self.folder = tempfile.mkdtemp(prefix="fasttok-worker-")
        # One malloc arena a thread would reserve 64 MiB of address space
        # each, which the worker's limit counts though little of it is used.
        self.proc = subprocess.Popen([sys.executable, *command], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr,
                                     env=dict(os.environ, MALLOC_ARENA_MAX="2",
                                              TMPDIR=self.folder))
        self.clock = _CaseClock(self.proc.pid)
        self.proc.stdin.write((json.dumps(ids) + "\n").encode())
        self.proc.stdin.close()
        self.pending = b""

    def next_line(self):
        """The next line of output; ``b""`` at its end, a ``str`` saying why the case hangs."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.pending:
            why = self.clock.hung()
            if why:
                return why
            if select.select([fd], [], [], 0.1)[0]:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    return b""
                self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line

    def stop(self) -> str:
        """Kill (if still running) and reap; the tail of its stderr."""
        if self.stderr.closed:
            return ""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.folder, ignore_errors=True)
        self.proc.stdout.close()
        self.stderr.seek(0)
        tail = self.stderr.read()[-2000:].decode("utf-8", "replace")
        self.stderr.close()
        return tail


def run_batch(suite: Suite, ids: list, limits: Limits) -> list:
    """Results for ``ids``, in order, restarting the worker after a crash or hang."""
    results: list = []
    todo = list(ids)
    while todo:
        worker = _Worker(suite.worker, todo)
        done = 0
        try:
            while done < len(todo):
                line = worker.next_line()
                if line:
                    fields = json.loads(line) if isinstance(line, bytes) else {}
                    if "start" in fields:
                        worker.clock.restart(limits)
                        continue
                    if fields:
                        results.append(Result(**dict(fields, kinds=tuple(fields["kinds"])),
                                              limits=limits))
                        done += 1
                        continue
                case = todo[done]
                try:
                    kinds = suite.kinds(case)
                except Exception as exc:  # noqa: BLE001 - a bug of the suite, shown as this case's
                    kinds = (f"making the case raised {type(exc).__name__}",)
                if line:
                    worker.stop()
                    results.append(Result(case, "timeout", line, kinds=kinds, limits=limits))
                else:
                    code = worker.proc.wait()
                    tail = worker.stop()
                    what = f"signal {-code}" if code < 0 else f"exit status {code}"
                    results.append(Result(case, "crash", f"worker died ({what}): {tail}",
                                          kinds=kinds, limits=limits))
                done += 1
                break
        finally:
            worker.stop()
        todo = todo[done:]
    return results


def run_cases(suite, ids, *, batch: int = 250, workers: int = 2,
              limits: Optional[Limits] = None) -> Report:
    """Run the cases ``ids`` of ``suite`` (a :class:`Suite`, or a fuzz format's
    name) in ``workers`` parallel worker processes, under ``limits`` (the
    suite's by default)."""
    suite = fuzz_suite(suite) if isinstance(suite, str) else suite
    limits = limits or suite.limits
    ids = list(ids)
    batches = [ids[i:i + batch] for i in range(0, len(ids), batch)]
    out: dict = {}
    lock = threading.Lock()

    def drain() -> None:
        while True:
            with lock:
                if not batches:
                    return
                todo = batches.pop(0)
            for r in run_batch(suite, todo, limits):
                out[r.case] = r

    threads = [threading.Thread(target=drain) for _ in range(max(1, workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return Report(suite, [out[i] for i in ids])


def _show_fuzz_case(fmt: str, case_id: int, folder: Path) -> list:
    case = make_case(fmt, case_id)
    path = folder / f"case-{case_id}{SUFFIX[fmt]}"
    path.write_bytes(case.data)
    return [f"{case.seed}; {', '.join(case.kinds)}",
            f"file {path}; rerun: python tests/fuzzing.py case {fmt} {case_id}"]


def fuzz_suite(fmt: str) -> Suite:
    """The fuzz cases of one format as a :class:`Suite`.

    >>> fuzz_suite("gguf").limits.cpu_seconds
    1.0
    """
    return Suite(fmt, (os.path.abspath(__file__), "worker", fmt),
                 lambda case_id: make_case(fmt, case_id).kinds,
                 lambda case_id, folder: _show_fuzz_case(fmt, case_id, folder))


def _main(argv: list) -> int:
    command = argv[1] if len(argv) > 1 else ""
    if command == "worker":
        worker_main()
        return 0
    if command == "case" and len(argv) == 4:
        case = make_case(argv[2], int(argv[3]))
        print(f"case {case.case_id} of {case.fmt}: seed {case.seed}, {', '.join(case.kinds)}, "
              f"{len(case.data)} bytes")
        import fasttok  # noqa: F401 - imported before the address-space limit is set

        _limit_address_space()
        with tempfile.TemporaryDirectory() as folder:
            outcome, detail = run_one(case, os.path.join(folder, "case" + SUFFIX[case.fmt]))
        print(outcome, detail, sep="\n")
        return 0 if outcome in ("ok", "file_error") else 1
    if command == "write" and len(argv) == 5:
        case = make_case(argv[2], int(argv[3]))
        path = Path(argv[4]) / f"case-{case.case_id}{SUFFIX[case.fmt]}"
        path.write_bytes(case.data)
        print(path, json.dumps(case.options) if case.options else "")
        return 0
    if command == "run" and len(argv) in (4, 5):
        start, _, stop = argv[3].partition(":")
        report = run_cases(argv[2], range(int(start), int(stop)),
                           workers=int(argv[4]) if len(argv) == 5 else 2)
        print(report.describe())
        return 0 if not report.failures() else 1
    print(__doc__.split("Reproduce")[0].strip(), "\n\nusage: fuzzing.py case FMT ID | write FMT "
          "ID DIR | run FMT START:STOP [WORKERS]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
