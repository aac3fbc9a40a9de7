"""What the differential tests of tokenizers' normalizers and pre-tokenizers share.

* ``texts``: hypothesis text from every plane (no surrogates: a Rust string
  cannot hold them), runs of combining marks after varied bases, runs of
  every kind of whitespace, CJK, the empty string;
* :func:`reference_alignments`: what ``tokenizers`` reports for each
  normalized character, read through a ``Tokenizer`` whose WordLevel model
  knows no token and whose pre-tokenizer isolates every character (each
  character becomes one unknown token carrying its original span);
* :func:`ours_alignments`: the same from a fasttok normalizer;
* :func:`tokenizer_json`: a whole ``tokenizer.json`` around one stage, for
  building ``tokenizers``' component from the same JSON as fasttok's.
"""

from __future__ import annotations

import json

from hypothesis import strategies as st

from fasttok.shared.normalized import NormalizedString

WHITESPACE = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0", "\u1680",
              "\u2000", "\u200a", "\u200b", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000",
              "\ufeff", "\u180e"]


def _chars(lo: int, hi: int):
    return st.characters(min_codepoint=lo, max_codepoint=hi, blacklist_categories=("Cs",))


_bases = st.sampled_from(["a", "e", "Z", "ß", "ы", "ह", "ก", " ", "1", "", "ﬁ", "\u1100", "가",
                          "\r", "\x00", "Σ", "İ"])
_marks = st.lists(st.characters(categories=("Mn", "Mc", "Me")) | st.sampled_from(
    ["\u0301", "\u0323", "\u0308", "\u0344", "\u1161", "\u11a8", "\u200d", "\u3099"]),
    min_size=1, max_size=5).map("".join)
fragments = st.one_of(
    st.lists(st.sampled_from(WHITESPACE), min_size=1, max_size=12).map("".join),
    st.tuples(_bases, _marks).map("".join),
    st.text(alphabet=_chars(0x4E00, 0x9FFF) | _chars(0x3040, 0x30FF) | _chars(0xFF00, 0xFFEF),
            min_size=1, max_size=6),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=10),
    st.text(alphabet=_chars(0, 0x2FF), max_size=8),
    st.sampled_from(["Hello world", "it's", "I'M", "don't", "1234567", "  x  ", "a.b,c!",
                     "``quoted''", "▁a", "ǅ", "ΑΣ ΟΔΟΣ", "ﬃ", "①②", "𝐀𝐁", "\r\n"]),
)
texts = st.lists(fragments, max_size=10).map("".join)


def tokenizer_json(normalizer=None, pre_tokenizer=None) -> str:
    """A ``tokenizer.json`` with the given stages and a WordLevel model that
    knows only ``[UNK]``."""
    return json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
        "normalizer": normalizer, "pre_tokenizer": pre_tokenizer, "post_processor": None,
        "decoder": None,
        "model": {"type": "WordLevel", "vocab": {"[UNK]": 0}, "unk_token": "[UNK]"},
    })


def char_tokenizer(normalizer_spec: dict):
    """``tokenizers.Tokenizer`` running ``normalizer_spec`` and then giving each
    normalized character as one token (so its offsets are that character's span)."""
    import tokenizers

    return tokenizers.Tokenizer.from_str(tokenizer_json(
        normalizer_spec,
        {"type": "Split", "pattern": {"Regex": "(?m:.)"}, "behavior": "Isolated", "invert": False}))


def reference_alignments(tokenizer, text: str) -> list:
    return [tuple(o) for o in tokenizer.encode(text).offsets]


def ours_alignments(normalizer, text: str) -> tuple:
    ns = NormalizedString(text)
    normalizer.normalize(ns)
    return ns.normalized, ns.alignments


def fail(where: str, problem: str) -> Exception:
    return ValueError(f"{where}: {problem}")


def code_point_blocks(size: int = 2048) -> list:
    """Every code point but the surrogates, in blocks of ``size``."""
    cps = [cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000]
    return [cps[i:i + size] for i in range(0, len(cps), size)]
