"""Code point classes, lowercase and "NFD" exactly as llama.cpp computes them.

llama.cpp's tokenizers do not ask a regex engine or the C library what a
character is: they read their own generated Unicode 15.1 tables (one category
flag per code point, a White_Space set, the simple lowercase map and a map to
the first code point of the canonical decomposition). The data lives in
:mod:`fasttok.shared._llama_unicode_data`, generated from a pinned UCD by
``tools/gen_llama_unicode.py``; this module turns it into the few lookups the
GGUF models need (built at import, about 15 ms).

Two text transforms mirror what llama.cpp hands to ``std::regex``:

* :data:`COLLAPSE` (a ``str.translate`` table): ASCII stays, every other code
  point becomes one stand-in character for its class -- ``\\x0b`` for
  whitespace, ``\\xd1`` number, ``\\xd2`` letter, ``\\xd3`` punctuation,
  ``\\xd4`` mark, ``\\xd5`` symbol, ``\\xd0`` anything else (:data:`STAND_INS`).
  A pattern with ``\\p{..}`` runs on this text (see
  :mod:`fasttok.pre_tokenizers.gguf`), and the compiled llama.cpp scanners
  (:mod:`fasttok.pre_tokenizers._pretokenize`) look each code point's class up in it.
* :data:`WIDE`: only non-ASCII whitespace becomes ``\\x0b`` (the engine's
  ``\\s`` knows ASCII whitespace only); patterns without ``\\p{..}`` run on it.

>>> category(ord("a")) == LETTER, category(0x0378) == UNDEFINED
(True, True)
>>> "Ωé ١".translate(COLLAPSE)
'\\xd2\\xd2 \\xd1'
>>> chr(tolower(ord("Σ"))), chr(nfd_first(ord("é")))
('σ', 'e')
"""

from __future__ import annotations

import bisect

from fasttok.shared import _llama_unicode_data as _data

__all__ = ["UNDEFINED", "NUMBER", "LETTER", "SEPARATOR", "ACCENT_MARK", "PUNCTUATION",
           "SYMBOL", "CONTROL", "UNICODE_VERSION", "category", "is_whitespace", "tolower",
           "nfd_first", "COLLAPSE", "STAND_INS", "WIDE", "class_ranges", "lowercase_pairs",
           "nfd_first_ranges"]

UNDEFINED = 0x01
NUMBER = 0x02
LETTER = 0x04
SEPARATOR = 0x08
ACCENT_MARK = 0x10
PUNCTUATION = 0x20
SYMBOL = 0x40
CONTROL = 0x80

UNICODE_VERSION = _data.UNICODE_VERSION


def _pairs(text: str) -> list:
    return [tuple(int(x, 16) for x in item.split(":")) for item in text.split()]


_RANGES = _pairs(_data.CATEGORY_RANGES)
_STARTS = [s for s, _ in _RANGES]
_FLAGS = [f for _, f in _RANGES]
_WHITE_SPACE = frozenset(int(x, 16) for x in _data.WHITE_SPACE.split())
_LOWER = dict(_pairs(_data.LOWERCASE))
_NFD = _pairs(_data.NFD_FIRST)
_NFD_STARTS = [r[0] for r in _NFD]


def category(cp: int) -> int:
    """llama.cpp's category flag of a code point (one of the constants above).

    >>> category(0x20) == SEPARATOR, category(0xE000) == CONTROL
    (True, True)
    """
    if cp >= 0x110000:
        return UNDEFINED
    return _FLAGS[bisect.bisect_right(_STARTS, cp) - 1]


def is_whitespace(cp: int) -> bool:
    """White_Space, as llama.cpp's ``is_whitespace`` flag (no U+001C..U+001F, no U+200B).

    >>> is_whitespace(0x85), is_whitespace(0x1C)
    (True, False)
    """
    return cp in _WHITE_SPACE


def tolower(cp: int) -> int:
    """UnicodeData's simple lowercase mapping (llama.cpp's ``unicode_tolower``).

    >>> chr(tolower(ord("İ"))), chr(tolower(0x212A))
    ('i', 'k')
    """
    return _LOWER.get(cp, cp)


def nfd_first(cp: int) -> int:
    """The first code point of ``cp``'s canonical decomposition (llama.cpp's "NFD").

    >>> hex(nfd_first(0xD55C))   # HANGUL SYLLABLE HAN -> its leading consonant
    '0x1112'
    """
    i = bisect.bisect_right(_NFD_STARTS, cp) - 1
    if i >= 0:
        first, last, target = _NFD[i]
        if cp <= last:
            return target
    return cp


# The character COLLAPSE puts for each class of non-ASCII code point
# (llama.cpp's k_ucat_cpt, and \x0b for whitespace, which std::regex's \s
# matches). The compiled llama.cpp scanners read COLLAPSE through this too.
STAND_INS = {"whitespace": "\x0b", "number": "\xd1", "letter": "\xd2", "punctuation": "\xd3",
             "mark": "\xd4", "symbol": "\xd5", "other": "\xd0"}
_CLASS_OF_FLAG = {NUMBER: "number", LETTER: "letter", PUNCTUATION: "punctuation",
                  ACCENT_MARK: "mark", SYMBOL: "symbol"}


def _collapse_table() -> str:
    # One character per code point (a 1.1 MB Latin-1 str): str.translate
    # indexes it like a sequence, at C speed and with no per-character cache.
    table = bytearray(STAND_INS["other"].encode("latin-1")) * 0x110000
    ends = _STARTS[1:] + [0x110000]
    for start, end, flag in zip(_STARTS, ends, _FLAGS):
        name = _CLASS_OF_FLAG.get(flag)
        if name is not None:
            table[start:end] = STAND_INS[name].encode("latin-1") * (end - start)
    for cp in _WHITE_SPACE:
        table[cp] = ord(STAND_INS["whitespace"])
    table[:128] = bytes(range(128))
    return table.decode("latin-1")


COLLAPSE = _collapse_table()
WIDE = {cp: "\x0b" for cp in _WHITE_SPACE if cp >= 0x80}


def class_ranges(flag: int) -> list:
    """``(first, last)`` ranges of the code points with category ``flag``
    (or White_Space when ``flag`` is 0x100).

    >>> class_ranges(0x100)[:2]
    [(9, 13), (32, 32)]
    """
    if flag == 0x100:
        out: list = []
        for cp in sorted(_WHITE_SPACE):
            if out and out[-1][1] == cp - 1:
                out[-1] = (out[-1][0], cp)
            else:
                out.append((cp, cp))
        return out
    ends = _STARTS[1:] + [0x110000]
    return [(s, e - 1) for s, e, f in zip(_STARTS, ends, _FLAGS) if f == flag]


def lowercase_pairs() -> list:
    """``(code point, lowercase)`` for every code point :func:`tolower` changes, in order.

    >>> lowercase_pairs()[0]
    (65, 97)
    """
    return sorted(_LOWER.items())


def nfd_first_ranges() -> list:
    """``(first, last, target)``: the code points of ``first..last`` have ``target`` as the
    first code point of their decomposition (:func:`nfd_first`); others map to themselves.

    >>> nfd_first_ranges()[0]
    (192, 197, 65)
    """
    return list(_NFD)
