"""The vocabularies the inference tests run on: one of every kind fasttok
reads (tiktoken, GGUF gpt2/llama/bert/t5, SentencePiece ``.model`` Unigram
and BPE, ``tokenizer.json`` byte-level, Metaspace BPE, WordPiece and
Unigram, ``tekken.json``), and hypothesis text made of what moves token
boundaries: words, runs of spaces and newlines, digits, contractions,
punctuation, accents composed and combining, CJK, emoji."""

from __future__ import annotations

import importlib.resources

from hypothesis import strategies as st

import fasttok
from conftest import DATA, ONE_FILE_PER_KIND

HF = DATA / "vocab" / "hf"
FILES = dict(ONE_FILE_PER_KIND) | {
    "hf_metaspace_bpe": HF / "llama2" / "tokenizer.json",
    "hf_wordpiece": HF / "all-MiniLM-L6-v2" / "tokenizer.json",
    "hf_unigram": HF / "unigram" / "botchan_unigram_5000.v5.24.0.T5Tokenizer.json",
}


def _tekken() -> str | None:
    try:
        data = importlib.resources.files("mistral_common") / "data" / "tekken_240911.json"
    except ModuleNotFoundError:
        return None
    return str(data) if data.is_file() else None


if _tekken():
    FILES["tekken"] = _tekken()

_LOADED: dict = {}


def load(kind: str):
    """The encoding of ``kind``'s file, loaded once."""
    if kind not in _LOADED:
        _LOADED[kind] = fasttok.load(str(FILES[kind]))
    return _LOADED[kind]


PIECES = st.sampled_from([
    "the", "The", "qu", "quick", "unbelievable", "don", "'t", "'s", "I'm", " ", "  ", "   ",
    "\n", "\n\n", "\t", " \n", "\r\n", "0", "12", "1234", ".", ",", "!", "?", "(", ")", "=",
    "é", "e\u0301", "\u0301", "ñ", "ß", "Straße", "你好", "中", "日本語", "🎉", "\u00a0", "\u3000",
    "x", "a", "b", "-", "_", "<", "|", "<|endoftext|>",
])
TEXTS = st.lists(PIECES, max_size=14).map("".join)


def unspaced(name: str, size: int) -> str:
    """``size`` characters of long text without whitespace: ``zh`` (the Chinese corpus file's
    characters, punctuation included), ``han`` (its Han characters alone), ``urls`` (URLs
    joined) or ``letters`` (one letter), repeated where the source is shorter."""
    if name == "letters":
        return "a" * size
    if name == "urls":
        text = "".join(f"https://example.com/p{i}/item?id={i * 7}&q=a{i % 13}#f"
                       for i in range(3_000))
    else:
        text = "".join((DATA / "corpus" / "zh.txt").read_text(encoding="utf-8").split())
        if name == "han":
            text = "".join(ch for ch in text if "\u4e00" <= ch <= "\u9fff")
    return (text * (size // len(text) + 1))[:size]


def pushed(enc, text: str, cuts: list, asks: list = (), **special) -> tuple:
    """``(appender, ids its pushes returned)`` for ``text`` pushed in the
    pieces ``cuts`` makes; after each piece ``asks`` marks, the final and
    pending ids are checked to be ``encode`` of the text so far."""
    a = enc.appender(**special)
    stable: list = []
    ends = sorted(set(cuts)) + [len(text)]
    for i, (start, end) in enumerate(zip([0] + ends[:-1], ends)):
        stable += a.push(text[start:end])
        if i < len(asks) and asks[i]:
            assert a.ids + a.pending_ids() == enc.encode(text[:end], **special)
    return a, stable


def check_split(enc, text: str, more: str, data, **special) -> None:
    """The appender's contract for ``text`` pushed in pieces ``data`` draws,
    the pending ids asked after some: the pushes' ids are the final ids,
    ``flush`` and ``count`` are ``encode``'s, and the final ids begin the
    encoding of ``text + more``."""
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(text)), max_size=12))))
    asks = data.draw(st.lists(st.booleans(), min_size=len(cuts) + 1, max_size=len(cuts) + 1))
    whole = enc.encode(text, **special)
    a, stable = pushed(enc, text, cuts, asks, **special)
    assert a.ids == stable
    assert a.flush() == whole
    assert a.count() == len(whole)
    assert enc.encode(text + more, **special)[:len(stable)] == stable
