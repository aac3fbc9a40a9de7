"""What an appender encodes when the pending ids are asked after every push,
on the Unigram kinds, whose windows carry the Viterbi's score.

    python bench/appender_costs.py

Each text is pushed 50 characters at a time with ``pending_ids()`` after
every push; printed: the characters the appender encoded per character
pushed (``Appender.encoded_chars``) and, in brackets, the pending text's
length at the end. Texts: 100 KB of en.txt (whitespace joined by single
spaces), 20k characters of zh.txt without whitespace, its Han characters
alone, URLs, random digits and random 6s and 8s. ``flush()`` is checked
equal to ``encode`` of the whole text. Re-encoding the pending text at
every push, as an appender that cannot cut does, costs about 200 here.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import fasttok

DATA = Path(os.environ.get("FASTTOK_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
VOCABS = {
    "T5 tokenizer.json": DATA / "vocab" / "hf" / "unigram" / "botchan_unigram_5000.v5.24.0.T5Tokenizer.json",
    "XLNet tokenizer.json": DATA / "vocab" / "hf" / "unigram"
    / "kyoto_ja_unigram_8000.v4.57.6.XLNetTokenizer.json",
    "GGUF t5": DATA / "vocab" / "gguf" / "ggml-vocab-nomic-bert-moe.gguf",
    "kyoto .model": DATA / "vocab" / "sentencepiece" / "kyoto_ja_unigram_8000.model",
}
SIZE = 20_000
PUSH = 50


def texts() -> dict:
    """The texts by name."""
    rng = random.Random(1)
    zh = "".join((DATA / "corpus" / "zh.txt").read_text(encoding="utf-8").split())
    urls = "".join(f"https://example.com/p{i}/item?id={i * 7}&q=a{i % 13}#f" for i in range(3_000))
    return {
        "en": " ".join((DATA / "corpus" / "en.txt").read_text(encoding="utf-8").split())[:100_000],
        "zh": zh[:SIZE],
        "han": "".join(ch for ch in zh if "\u4e00" <= ch <= "\u9fff")[:SIZE],
        "urls": urls[:SIZE],
        "digits": "".join(rng.choice("0123456789") for _ in range(SIZE)),
        "6/8": "".join(rng.choice("68") for _ in range(SIZE)),
    }


def cost(enc, text: str) -> tuple:
    """(characters encoded per character pushed, pending length at the end)."""
    a = enc.appender(disallowed_special=())
    for start in range(0, len(text), PUSH):
        a.push(text[start:start + PUSH])
        a.pending_ids()
    if a.flush() != enc.encode(text, disallowed_special=()):
        raise AssertionError("the appender's ids differ from encode's")
    return a.encoded_chars / len(text), len(a.pending)


def main() -> None:
    named = texts()
    print(f"{'vocabulary':22}" + "".join(f"{name:>15}" for name in named))
    for vocab, path in VOCABS.items():
        enc = fasttok.load(str(path))
        cells = [cost(enc, text) for text in named.values()]
        print(f"{vocab:22}" + "".join(f"{c:8.1f} ({p:>4})" for c, p in cells))


if __name__ == "__main__":
    main()
