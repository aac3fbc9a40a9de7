"""Lowercase, Prepend and the byte-level normalizer, as ``tokenizers`` has them.

>>> Lowercase().normalize_str("ΑΣ Σ")
'ασ σ'
>>> Prepend("▁").normalize_str("a")
'▁a'
>>> ByteLevel().normalize_str("é ")
'Ã©Ġ'
"""

from __future__ import annotations

from fasttok.shared._bytemap import encode_byte_level
from fasttok.shared import hf_unicode
from fasttok.shared.normalized import NormalizedString

__all__ = ["Lowercase", "Prepend", "ByteLevel", "lowercase", "lowercase_ns"]


def lowercase(text: str) -> str:
    """Rust's ``char::to_lowercase`` (Unicode 17.0) on each character: no
    context, so a final capital sigma is ``σ`` (``str.lower`` alone would give
    ``ς``); letters newer than the interpreter's Unicode come from fasttok's
    tables (:data:`fasttok.shared.hf_unicode.LOWERCASE`).

    >>> lowercase("ΣΑΣ"), lowercase("\U00010d50") == "\U00010d70"
    ('σασ', True)
    """
    # the tables are made on first use (importing the stages should not cost them)
    fixes = hf_unicode.LOWERCASE_FIXES
    if fixes is None:
        return text.translate(hf_unicode.LOWERCASE)
    return text.replace("Σ", "σ").translate(fixes).lower()


def lowercase_ns(ns: NormalizedString) -> None:
    """``tokenizers``' ``NormalizedString::lowercase``: a character that
    lowercases to several keeps its span for all of them.

    >>> ns = NormalizedString("İ"); lowercase_ns(ns); ns.alignments
    [(0, 1), (0, 1)]
    """
    text = ns.normalized
    low = lowercase(text)
    if len(low) == len(text):
        ns.normalized = low
    else:
        ns.expand_chars([lowercase(c) for c in text])


class Lowercase:
    """``tokenizers.normalizers.Lowercase``.

    >>> Lowercase().normalize_str("ÀB")
    'àb'
    """

    def __repr__(self) -> str:
        return "Lowercase()"

    def normalize(self, ns: NormalizedString) -> None:
        lowercase_ns(ns)

    def normalize_str(self, text: str) -> str:
        return lowercase(text)


class Prepend:
    """``tokenizers.normalizers.Prepend``: ``prepend`` before a non-empty text.

    >>> Prepend("_").normalize_str(""), Prepend("_").normalize_str("x")
    ('', '_x')
    """

    def __init__(self, prepend: str) -> None:
        self.prepend = prepend

    def __repr__(self) -> str:
        return f"Prepend({self.prepend!r})"

    def normalize(self, ns: NormalizedString) -> None:
        ns.prepend(self.prepend)

    def normalize_str(self, text: str) -> str:
        return self.prepend + text if text else text


class ByteLevel:
    """``tokenizers.normalizers.ByteLevel``: every byte as its GPT-2 character.

    >>> ByteLevel().normalize_str("a b")
    'aĠb'
    """

    def __repr__(self) -> str:
        return "ByteLevel()"

    def normalize(self, ns: NormalizedString) -> None:
        ns.byte_level()

    def normalize_str(self, text: str) -> str:
        return encode_byte_level(text.encode("utf-8"))
