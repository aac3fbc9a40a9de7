"""Regex patterns of vocabulary files translated for the standard library's ``re``.

Two dialects reach fasttok: the Rust ``regex``/``fancy-regex`` one of
tiktoken's ``pat_str`` and Hugging Face ``tokenizers``' Oniguruma (Ruby
syntax). Both spell Unicode classes ``\\p{L}``; ``re`` has none, so
``\\p{..}``/``\\P{..}``, ``\\s``, ``\\d`` (and for Oniguruma ``\\w``, ``\\h``)
become explicit code point classes from fasttok's own Unicode 16.0 tables,
never from the interpreter's ``unicodedata``. What differs between the
dialects is the anchors: Rust's ``$`` is the end of the text, Oniguruma's
``^``/``$`` are line anchors (``re.M``), its ``\\z``/``\\Z`` the end (before a
final newline for ``\\Z``), and its ``(?m:..)`` is ``re``'s ``(?s:..)``.

>>> [m.group() for m in compile_generic(r"\\p{N}+|\\s+").finditer("12 ٣٤")]
['12', ' ', '٣٤']
>>> [m.group() for m in compile_onig(r"b$").finditer("ab\\nab")]
['b', 'b']
"""

from __future__ import annotations

import functools
import re

from fasttok.errors import FasttokError
from fasttok.shared import _unicode
from fasttok.shared.hf_unicode import ONIG_WORD

__all__ = ["compile_generic", "compile_onig", "char_class"]


def _class_body(specs: tuple) -> str:
    out = []
    for spec in specs:
        for lo, hi in _unicode.code_point_ranges(spec):
            out.append(_escape(lo) if lo == hi else f"{_escape(lo)}-{_escape(hi)}")
    return "".join(out)


@functools.lru_cache(maxsize=None)
def char_class(*specs: str, extra: str = "") -> str:
    """A ``re`` character class of the code points of ``specs`` (Unicode 16.0
    general categories, their one-letter classes, ``White_Space``), plus the
    literal characters ``extra``.

    >>> re.findall(char_class("Zl", extra="x"), "a\u2028x")
    ['\u2028', 'x']
    """
    return f"[{_class_body(specs)}{re.escape(extra) if extra else ''}]"


# Characters a class may not hold as themselves: its syntax, and the
# doubled characters re reserves for set operations.
_CLASS_SYNTAX = frozenset(map(ord, "\\]-[^&~|"))


def _escape(cp: int) -> str:
    # A class member as itself where that is safe: re parses a literal
    # character faster than an escape, and \p{L} alone is 1,700 ranges
    # (10 against 16 ms to compile, paid by every pattern that holds it).
    if cp > 0x20 and cp not in _CLASS_SYNTAX:
        return chr(cp)
    return f"\\U{cp:08x}"


_PROPERTY = re.compile(r"\\([pP])\{\^?([A-Za-z_]+)\}|\\([pP])([A-Z])")
_SHORTHAND = {"s": ("White_Space",), "d": ("Nd",)}
# Oniguruma's \w is Unicode's word property (Alphabetic, marks, decimal
# digits, connector punctuation, Join_Control): a class of its own
_ONIG_SHORTHAND = dict(_SHORTHAND, w=None)
_ONIG_WORD_BODY = ONIG_WORD[1:-1]
_ONIG_ESCAPES = {"z": r"\Z", "Z": r"(?=\n?\Z)", "h": "[0-9a-fA-F]", "H": "[^0-9a-fA-F]"}
_ONIG_IN_CLASS = {"h": "0-9a-fA-F"}


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
    return _compile(pat_str, onig=False)


@functools.lru_cache(maxsize=256)
def compile_onig(pat_str: str) -> "re.Pattern[str]":
    """Translate an Oniguruma pattern (as ``tokenizers`` compiles it) for ``re``.

    >>> compile_onig(r"\\w+").findall("né ²x")
    ['né', 'x']
    """
    return _compile(pat_str, onig=True)


def _compile(pat_str: str, onig: bool) -> "re.Pattern[str]":
    shorthand = _ONIG_SHORTHAND if onig else _SHORTHAND
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
                if pat_str[i + 2:i + 4] == "{^":
                    negated = not negated
                try:
                    body = _class_body((spec,))
                except ValueError as exc:
                    raise FasttokError(f"pattern {pat_str!r}: {exc}") from None
                out.append(_in_or_out(body, negated, in_class, pat_str))
                i = m.end()
                continue
            e = pat_str[i + 1]
            if e.lower() in shorthand:
                specs = shorthand[e.lower()]
                body = _ONIG_WORD_BODY if specs is None else _class_body(specs)
                out.append(_in_or_out(body, e.isupper(), in_class, pat_str))
                i += 2
                continue
            if onig and in_class and e in _ONIG_IN_CLASS:
                out.append(_ONIG_IN_CLASS[e])
                i += 2
                continue
            if onig and not in_class and e in _ONIG_ESCAPES:
                out.append(_ONIG_ESCAPES[e])
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
        if onig and c == "(" and pat_str.startswith("(?", i):
            # Ruby's (?m) is dotall; its (?s) does not exist
            j = i + 2
            while j < n and pat_str[j] in "imx-":
                j += 1
            if j < n and pat_str[j] in ":)" and j > i + 2:
                out.append("(?" + pat_str[i + 2:j].replace("m", "s"))
                i = j
                continue
        if c == "$":
            out.append("$" if onig else r"\Z")
        else:
            out.append(c)
        i += 1
    try:
        return re.compile("".join(out), re.M if onig else 0)
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
