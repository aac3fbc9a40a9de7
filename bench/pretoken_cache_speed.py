"""Byte-level BPE against gigatoken 0.10.0 and quicktok-v1, as issue 25 measures steady state.

    python bench/pretoken_cache_speed.py [VOCABS] [CORPORA] [MODES]
    python bench/pretoken_cache_speed.py cl100k,llama3 en,code lines
    FASTTOK_PRETOKEN_CACHE=0 python bench/pretoken_cache_speed.py   # the pre-token cache off

VOCABS: cl100k, o200k (the .tiktoken files; fasttok.get_encoding, gigatoken's
from_tiktoken, quicktok.get_encoding) and llama3, qwen3 (their tokenizer.json:
fasttok.load, gigatoken.Tokenizer, quicktok.import_tokenizer into a temporary
folder). ``whole``: every library encodes the first half of the corpus file,
then the unseen second half in 5 slices, the libraries taking turns slice by
slice; CPU time summed. ``lines``: the first 5,000 lines, one call each, a warm
round, then the best of 5 rounds taking turns. Printed: fasttok's MB/s and
each peer's time divided by fasttok's (above 1: fasttok is faster), with a
note when the ids differ.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import sys
import tempfile
import time
from pathlib import Path

import fasttok

DATA = Path(os.environ.get("FASTTOK_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
LINES = 5_000
SLICES = 5
ROUNDS = 5


def load(vocab: str) -> dict:
    """``{library: text -> ids}`` for one vocabulary."""
    import gigatoken
    import quicktok

    if vocab in ("cl100k", "o200k"):
        ours = fasttok.get_encoding(f"{vocab}_base")
        giga = gigatoken.Tokenizer.from_tiktoken(str(DATA / "vocab" / "tiktoken" / f"{vocab}_base.tiktoken"))
        return {"fasttok": ours.encode_ordinary, "gigatoken": giga.encode,
                "quicktok": quicktok.get_encoding(f"{vocab}_base").encode_ordinary}
    path = str(DATA / "vocab" / "hf" / vocab / "tokenizer.json")
    ours = fasttok.load(path)
    folder = tempfile.mkdtemp(prefix="fasttok-bench-quicktok-")
    with contextlib.redirect_stdout(io.StringIO()):
        quicktok.import_tokenizer(path, vocab, data_dir=folder)
    return {"fasttok": lambda text: ours.encode(text, allowed_special="all"),
            "gigatoken": gigatoken.Tokenizer(path).encode,
            "quicktok": quicktok.Tokenizer(vocab, folder).encode_ordinary}


def cpu(call) -> float:
    gc.collect()
    start = time.process_time()
    call()
    return time.process_time() - start


def whole(libs: dict, text: str) -> tuple:
    half = len(text) // 2
    cuts = [half + (len(text) - half) * k // SLICES for k in range(SLICES + 1)]
    for encode in libs.values():
        encode(text[:half])
    total = dict.fromkeys(libs, 0.0)
    order = list(libs.items())
    for k in range(SLICES):
        piece = text[cuts[k]:cuts[k + 1]]
        for name, encode in (order if k % 2 == 0 else order[::-1]):
            total[name] += cpu(lambda: encode(piece))
    rest = text[half:]
    same = {name: list(encode(rest)) == libs["fasttok"](rest) for name, encode in libs.items()}
    return total, len(rest.encode("utf-8")), same


def lines(libs: dict, text: str) -> tuple:
    each = [line + "\n" for line in text.split("\n")[:LINES]]
    expected = [libs["fasttok"](line) for line in each]
    same = {name: [list(encode(line)) for line in each] == expected for name, encode in libs.items()}
    best = dict.fromkeys(libs, float("inf"))
    for _ in range(ROUNDS):
        for name, encode in libs.items():
            best[name] = min(best[name], cpu(lambda: [encode(line) for line in each]))
    return best, sum(len(line.encode("utf-8")) for line in each), same


def main() -> None:
    args = sys.argv[1:] + [None] * 3
    vocabs = (args[0] or "cl100k,o200k,llama3,qwen3").split(",")
    corpora = (args[1] or "en,code,zh,multi").split(",")
    modes = (args[2] or "whole,lines").split(",")
    from fasttok.shared._piece_cache import entries  # FASTTOK_PRETOKEN_CACHE, read at import

    print(f"pre-token cache entries: {entries()}")
    for vocab in vocabs:
        libs = load(vocab)
        for corpus in corpora:
            text = (DATA / "corpus" / f"{corpus}.txt").read_bytes().decode("utf-8")
            for mode in modes:
                times, size, same = (whole if mode == "whole" else lines)(libs, text)
                ours = times["fasttok"]
                ratios = "  ".join(f"{name} {times[name] / ours:5.2f}{'' if same[name] else '*'}"
                                   for name in libs if name != "fasttok")
                print(f"{vocab:7} {corpus:6} {mode:5} fasttok {size / ours / 1e6:6.1f} MB/s  {ratios}",
                      flush=True)
    print("* the peer's ids differ from fasttok's")


if __name__ == "__main__":
    main()
