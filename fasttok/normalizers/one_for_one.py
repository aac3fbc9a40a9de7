"""Where a normalizer's alignment is known without running it: it writes
each character of a text as it writes that character alone, each as one
character (:func:`one_for_one`: every offset kept) or as any number
(:func:`char_by_char`: each written character of the one it came from).

A walk that runs a normalizer's ``normalize_str`` (a ``str`` in, a ``str``
out, no alignment) instead of the stage's alignment-keeping ``normalize``
asks :func:`one_for_one` whether it may: there the stage's alignment maps
each character to itself (``tokenizers`` aligns each character a stage
writes to the character it came from), so the offsets of the normalized
text are those of the text (:func:`char_by_char`: those of the
characters they came from). What the normalizer makes of each character
alone is asked of it once a code point, the first time one is met.

"Alone" is inside a text: between two ``a`` where the normalizer keeps
them (a ``Strip`` drops a space standing alone, not one between letters).

>>> from fasttok.normalizers.simple import Lowercase
>>> respell = one_for_one(Lowercase().normalize_str)
>>> respell("AbC"), respell("\\u0130")
('abc', None)
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain, repeat
from typing import Optional

__all__ = ["one_for_one", "char_by_char"]


def _alone(normalize: Callable[[str], str], c: str) -> str:
    # what normalize makes of c inside a text: between two "a" where it
    # keeps them (a Strip would drop a space standing alone, not one between
    # letters), else alone
    padded = normalize(f"a{c}a")
    if len(padded) >= 2 and padded[0] == "a" and padded[-1] == "a":
        return padded[1:-1]
    return normalize(c)


class _Spelling(dict):
    # code point -> what normalize makes of that character (_alone) when it
    # is one character, else None (str.translate then drops it: the text
    # comes out shorter), each computed on first use
    def __init__(self, normalize: Callable[[str], str]) -> None:
        super().__init__()
        self._normalize = normalize

    def __missing__(self, cp: int) -> Optional[str]:
        out = _alone(self._normalize, chr(cp))
        out = self[cp] = out if len(out) == 1 else None
        return out


def one_for_one(normalize: Callable[[str], str]) -> Callable[[str], Optional[str]]:
    """``respell(text)``: ``normalize(text)`` where it writes each character
    as one character, as it writes that character alone, else ``None``.

    >>> from fasttok.normalizers.unicode_forms import NFKC
    >>> respell = one_for_one(NFKC().normalize_str)
    >>> respell("\\uff11\\uff0c"), respell("\\ufb01"), respell("e\\u0301")
    ('1,', None, None)
    """
    spelling = _Spelling(normalize)

    def respell(text: str) -> Optional[str]:
        out = normalize(text)
        if out == text or (len(out) == len(text) and text.translate(spelling) == out):
            return out
        return None

    return respell


class _Written(dict):
    # code point -> what normalize makes of that character (_alone), each
    # computed on first use
    def __init__(self, normalize: Callable[[str], str]) -> None:
        super().__init__()
        self._normalize = normalize

    def __missing__(self, cp: int) -> str:
        out = self[cp] = _alone(self._normalize, chr(cp))
        return out


def char_by_char(normalize: Callable[[str], str]) -> Callable[[str], Optional[tuple]]:
    """``written(text)``: ``(normalize(text), sources)`` where it writes each
    character as it writes that character alone (some as several characters,
    some as none: an ``NFKD`` and ``StripAccents``), ``sources[j]`` the index
    of the character ``normalize(text)[j]`` came from (the span ``tokenizers``
    aligns it to); else ``None`` (marks reordered, a ``Replace`` of two
    characters).

    >>> from fasttok.normalizers.sequence import Sequence
    >>> from fasttok.normalizers.strip import StripAccents
    >>> from fasttok.normalizers.unicode_forms import NFKD
    >>> written = char_by_char(Sequence([NFKD(), StripAccents()]).normalize_str)
    >>> written("\ufb01e\u0301")
    ('fie', [0, 0, 1])
    """
    spelled = _Written(normalize)
    spelled_as = spelled.__getitem__

    def written(text: str) -> Optional[tuple]:
        out = normalize(text)
        if text.translate(spelled) != out:
            return None
        lengths = map(len, map(spelled_as, map(ord, text)))
        return out, list(chain.from_iterable(map(repeat, range(len(text)), lengths)))

    return written
