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
from fasttok.shared.normalized import NormalizedString

__all__ = ["Lowercase", "Prepend", "ByteLevel", "lowercase", "utf8_lengths"]


def lowercase(text: str) -> str:
    """Rust's ``char::to_lowercase`` on each character: no context, so a final
    capital sigma is ``σ`` (``str.lower`` alone would give ``ς``).

    >>> lowercase("ΣΑΣ")
    'σασ'
    """
    return text.replace("Σ", "σ").lower()


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


def utf8_lengths(text: str) -> list:
    """The UTF-8 length of each character.

    >>> utf8_lengths("aé€😀")
    [1, 2, 3, 4]
    """
    return [1 if c < "\x80" else 2 if c < "\u0800" else 3 if c < "\U00010000" else 4
            for c in text]


def byte_level_ns(ns: NormalizedString) -> None:
    """Each byte of the text becomes its GPT-2 alphabet character; the
    characters of one original character share its span.

    >>> ns = NormalizedString("é"); byte_level_ns(ns); ns.normalized, ns.alignments
    ('Ã©', [(0, 1), (0, 1)])
    """
    text = ns.normalized
    mapped = encode_byte_level(text.encode("utf-8"))
    if len(mapped) != len(text):
        ns.alignments = [a for a, n in zip(ns.alignments, utf8_lengths(text)) for _ in range(n)]
    ns.normalized = mapped


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
        byte_level_ns(ns)

    def normalize_str(self, text: str) -> str:
        return encode_byte_level(text.encode("utf-8"))
