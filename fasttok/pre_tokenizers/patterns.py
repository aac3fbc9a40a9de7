"""Pre-tokenizer patterns: tiktoken's known ``pat_str`` strings and the generic path.

A pattern fasttok knows (the current and the older spelling of each of
tiktoken's; Llama 3's, which is cl100k's older spelling; Qwen 2's; Mistral's Tekken) runs
through a hand-written compiled scanner (:mod:`fasttok.pre_tokenizers._pretokenize`). Any
other pattern is translated for the standard library's ``re`` (3.11 has
possessive quantifiers and atomic groups) with ``\\p{..}``, ``\\s`` and
``\\d`` expanded from fasttok's own Unicode 16.0 tables, so custom encodings
work, only slower.

>>> scanner_for(CL100K)
'cl100k'
>>> [m.group() for m in compile_generic(r"\\p{N}+|\\s+").finditer("12 ٣٤")]
['12', ' ', '٣٤']
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Optional

from fasttok.shared import _unicode
from fasttok.errors import FasttokError
from fasttok.pre_tokenizers.tiktoken_patterns import (CL100K, CL100K_LEGACY, GPT2, GPT2_LEGACY,
                                                      LLAMA3, O200K, QWEN2, TEKKEN)

__all__ = ["GPT2", "GPT2_LEGACY", "CL100K", "CL100K_LEGACY", "LLAMA3", "QWEN2", "O200K",
           "TEKKEN", "scanner_for", "compile_generic", "pattern_splitter"]

# The two gpt2 spellings split every text identically (\s++$ only ever
# matches where \s+(?!\S) takes the whole trailing run anyway); the two
# cl100k spellings do not ("\n " at the end splits differently), so each has
# its own scanner.
_SCANNERS = {
    GPT2: "gpt2",
    GPT2_LEGACY: "gpt2",
    CL100K: "cl100k",
    CL100K_LEGACY: "cl100k_legacy",
    QWEN2: "qwen2",
    O200K: "o200k",
    TEKKEN: "tekken",
}


def scanner_for(pat_str: str) -> Optional[str]:
    """The compiled scanner that reproduces ``pat_str`` exactly, or ``None``.

    >>> scanner_for(O200K), scanner_for("[a-z]+")
    ('o200k', None)
    """
    return _SCANNERS.get(pat_str)


def _class_body(spec: str) -> str:
    out = []
    for lo, hi in _unicode.code_point_ranges(spec):
        out.append(_escape(lo) if lo == hi else f"{_escape(lo)}-{_escape(hi)}")
    return "".join(out)


def _escape(cp: int) -> str:
    return f"\\U{cp:08x}"


_PROPERTY = re.compile(r"\\([pP])\{([A-Za-z_]+)\}|\\([pP])([A-Z])")
_SHORTHAND = {"s": "White_Space", "d": "Nd"}


@functools.lru_cache(maxsize=64)
def compile_generic(pat_str: str) -> "re.Pattern[str]":
    """Translate a tiktoken/Rust-regex pattern into an equivalent ``re`` pattern.

    ``\\p{X}``/``\\P{X}`` (general categories, their one-letter classes and
    ``White_Space``), ``\\s``/``\\S`` and ``\\d``/``\\D`` become explicit code
    point classes from the Unicode 16.0 tables; ``$`` becomes ``\\Z`` because
    Rust's ``$`` never matches before a final newline. A pattern ``re`` still
    cannot compile raises :class:`~fasttok.errors.FasttokError`.

    >>> compile_generic(r"\\s+$").pattern.endswith(r"\\Z")
    True
    """
    out = []
    i = 0
    in_class = False
    class_start = -1
    n = len(pat_str)
    while i < n:
        c = pat_str[i]
        if c == "\\" and i + 1 < n:
            m = _PROPERTY.match(pat_str, i)
            if m:
                negated = (m.group(1) or m.group(3)) == "P"
                spec = m.group(2) or m.group(4)
                try:
                    body = _class_body(spec)
                except ValueError as exc:
                    raise FasttokError(f"pattern {pat_str!r}: {exc}") from None
                out.append(_in_or_out(body, negated, in_class, pat_str))
                i = m.end()
                continue
            e = pat_str[i + 1]
            if e.lower() in _SHORTHAND:
                out.append(_in_or_out(_class_body(_SHORTHAND[e.lower()]), e.isupper(), in_class,
                                      pat_str))
                i += 2
                continue
            out.append(pat_str[i:i + 2])
            i += 2
            continue
        if in_class:
            if c == "]" and i > class_start:
                in_class = False
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            class_start = i + 1
            if i + 1 < n and pat_str[i + 1] == "^":
                class_start += 1
                out.append("[^")
                i += 2
                continue
        out.append(r"\Z" if c == "$" else c)
        i += 1
    try:
        return re.compile("".join(out))
    except re.error as exc:
        raise FasttokError(f"pattern {pat_str!r} cannot be run by Python's re: {exc}") from None


def _in_or_out(body: str, negated: bool, in_class: bool, pat_str: str) -> str:
    if not in_class:
        return f"[{'^' if negated else ''}{body}]"
    if negated:
        raise FasttokError(
            f"pattern {pat_str!r}: a negated class (\\P, \\S, \\D) inside [...] is not supported "
            "by the generic path; rewrite it as a negated class [^...]")
    return body


def pattern_splitter(pat_str: str) -> Callable[[str], list]:
    """A function splitting text into the pieces ``pat_str`` matches, leftmost first.

    >>> pattern_splitter(r"\\d+|\\s+")("12 34")
    ['12', ' ', '34']
    """
    finditer = compile_generic(pat_str).finditer
    return lambda text: [m.group() for m in finditer(text)]
