"""Regex patterns of vocabulary files, compiled for fasttok's linear-time engine.

Two dialects reach fasttok: the Rust ``regex``/``fancy-regex`` one of
tiktoken's ``pat_str`` (and ``tekken.json``) and Hugging Face ``tokenizers``'
Oniguruma (Ruby syntax, ``tokenizer.json``). A pattern from a file is
untrusted: on a backtracking engine ``(a|aa)+$`` takes time exponential in
the text. :func:`compile_generic` and :func:`compile_onig` therefore parse
the pattern here and run it on the Pike VM of
:mod:`fasttok.shared._linear_regex`, which costs O(text x pattern) per search
and finds the same leftmost-first matches as a backtracking engine.

``\\p{..}``/``\\P{..}``, ``\\s`` and ``\\d`` are classes from fasttok's own
Unicode 16.0 tables, never from the interpreter's ``unicodedata``; ``\\w`` is
Unicode's word class (Oniguruma's and Rust's). What differs between the
dialects is the anchors: Rust's ``^``/``$`` are the ends of the text (lines
with ``(?m)``), Oniguruma's are line anchors, its ``\\z``/``\\Z`` the end
(before a final newline for ``\\Z``), and its ``(?m:..)`` lets ``.`` take a
newline; ``{n,m}+`` is possessive in Rust and a repeat of a repeat in Ruby.

Decisions (issue 30): what cannot run in linear time is refused with a
:class:`~fasttok.errors.FasttokError` naming the pattern, rather than run
under a work budget: backreferences, lookarounds of more than one character
class, possessive repeats and atomic groups of more than one class, and
``(?i)`` on letters outside the ASCII case orbits (fasttok's tables hold the
folding of those only). Bounded repeats are written out, up to
:data:`MAX_PROGRAM` instructions. Iterating the matches is linear too, by a
budget: a pattern that makes the engine rescan a long text (``a+b|a`` on a
run of ``a``, quadratic in every leftmost-first engine) raises instead.

:func:`translate_for_re` keeps the older translation to ``re``, the
reference the engine is tested against; :func:`char_class` spells a class
of the tables for ``re`` patterns of fasttok's own.

>>> [m.group() for m in compile_generic(r"\\p{N}+|\\s+").finditer("12 ٣٤")]
['12', ' ', '٣٤']
>>> [m.group() for m in compile_onig(r"b$").finditer("ab\\nab")]
['b', 'b']
"""

from __future__ import annotations

import functools
import re

from fasttok.errors import FasttokError
from fasttok.shared import _linear_regex

# _unicode and _hf_unicode_data are imported by the classes that read them:
# a Unigram conversion's patterns (' {2,}', '\\A +| +\\z') name no class, and
# the two were ~0.3 ms of its load

__all__ = ["compile_generic", "compile_onig", "translate_for_re", "char_class", "MAX_PROGRAM"]


def _onig_word_body() -> str:
    # imported on first use: hf_unicode makes its classes when asked for them
    from fasttok.shared.hf_unicode import ONIG_WORD

    return ONIG_WORD[1:-1]


def _class_body(specs: tuple) -> str:
    from fasttok.shared import _unicode

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


_SHORTHAND = {"s": ("White_Space",), "d": ("Nd",)}
# Oniguruma's \w is Unicode's word property (Alphabetic, marks, decimal
# digits, connector punctuation, Join_Control): a class of its own
_ONIG_SHORTHAND = dict(_SHORTHAND, w=None)
_ONIG_ESCAPES = {"z": r"\Z", "Z": r"(?=\n?\Z)", "h": "[0-9a-fA-F]", "H": "[^0-9a-fA-F]"}
_ONIG_IN_CLASS = {"h": "0-9a-fA-F"}


@functools.lru_cache(maxsize=64)
def compile_generic(pat_str: str) -> _linear_regex.Regex:
    """Compile a tiktoken/Rust-regex (fancy-regex) pattern for the linear-time engine.

    ``^``/``$`` are the ends of the text (lines with ``(?m)``), ``(?s)`` lets
    ``.`` match a newline, ``\\w`` is Unicode's word class. A pattern the
    engine cannot run in linear time raises :class:`~fasttok.errors.FasttokError`.

    >>> compile_generic(r"\\s+$").findall("a \\n")
    [' \\n']
    """
    return _Parser(pat_str, onig=False).compile()


@functools.lru_cache(maxsize=256)
def compile_onig(pat_str: str) -> _linear_regex.Regex:
    """Compile an Oniguruma pattern (as ``tokenizers`` reads it, Ruby syntax)
    for the linear-time engine: ``^``/``$`` are line anchors, ``(?m)`` lets
    ``.`` match a newline, ``\\h`` is a hexadecimal digit.

    >>> compile_onig(r"\\w+").findall("né ²x")
    ['né', 'x']
    """
    return _Parser(pat_str, onig=True).compile()


def translate_for_re(pat_str: str, onig: bool) -> "re.Pattern[str]":
    """The same pattern translated for the standard library's ``re`` (a
    backtracking engine, exponential on hostile patterns): the reference the
    linear-time engine is tested against.

    >>> translate_for_re(r"\\s+$", onig=False).pattern.endswith(r"\\Z")
    True
    """
    return _compile(pat_str, onig)


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
            m = pat_str[i + 1] in "pP" and _syntax("property").match(pat_str, i)
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
                body = _onig_word_body() if specs is None else _class_body(specs)
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


# ---------------------------------------------------------------------------
# The linear-time engine's compiler: a pattern of either dialect parsed into
# a tree, then into the program of fasttok.shared._linear_regex. Classes are
# sorted inclusive (first, last) code point ranges. Tree nodes:
#   ("set", ranges)                  one character of a class
#   ("cat", [node, ...]), ("alt", [node, ...])
#   ("rep", node, min, max or None, "greedy" | "lazy" | "possessive")
#   ("assert", anchor name), ("look", kind, ranges)

_MAX_CP = 0x10FFFF
#: the most instructions a pattern may compile to: bounded repeats are
#: written out, so ``(?:a{100}){100}`` would be 10,000 copies of ``a``
MAX_PROGRAM = 20_000
_ALL = ((0, _MAX_CP),)
_ESCAPED_CHARS = {"n": 10, "t": 9, "r": 13, "f": 12, "v": 11, "a": 7, "e": 27}
_LOOKS = {"(?=": "ahead", "(?!": "not_ahead", "(?<=": "behind", "(?<!": "not_behind"}
_HEX = ((0x30, 0x39), (0x41, 0x46), (0x61, 0x66))
# what cannot run in linear time, by the escape that starts it
_REFUSED_ESCAPES = {"k": "a backreference", "g": "a subroutine call", "G": "\\G",
                    "K": "\\K", "R": "\\R", "X": "\\X"}


def _normalize(ranges) -> tuple:
    out: list = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return tuple(out)


def _complement(ranges: tuple) -> tuple:
    out = []
    at = 0
    for lo, hi in ranges:
        if lo > at:
            out.append((at, lo - 1))
        at = hi + 1
    if at <= _MAX_CP:
        out.append((at, _MAX_CP))
    return tuple(out)


def _intersects(a: tuple, b: tuple) -> bool:
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i][1] < b[j][0]:
            i += 1
        elif b[j][1] < a[i][0]:
            j += 1
        else:
            return True
    return False


@functools.cache
def _word() -> tuple:
    # Oniguruma's \w as tokenizers has it; Rust's \w is the same Unicode
    # word class (Alphabetic, marks, Nd, Pc, Join_Control)
    from fasttok.shared import _hf_unicode_data

    items = (item.partition("-") for item in _hf_unicode_data.ONIG_WORD.split())
    return _normalize((int(lo, 16), int(hi or lo, 16)) for lo, _, hi in items)


@functools.cache
def _property(spec: str) -> tuple:
    from fasttok.shared import _unicode

    return tuple(_unicode.code_point_ranges(spec))


@functools.cache
def _folding() -> tuple:
    # (the orbit of each ASCII letter, as ranges; the cased code points that
    # are in no such orbit, whose folding fasttok's tables do not hold)
    orbits = {lower: _normalize((cp, cp) for cp in cps)
              for lower, cps in _linear_regex.ascii_fold_orbits().items()}
    members = _normalize(r for orbit in orbits.values() for r in orbit)
    cased = _normalize(list(_property("Lu")) + list(_property("Ll")) + list(_property("Lt"))
                       + [(0x345, 0x345), (0x2160, 0x217F), (0x24B6, 0x24E9)])
    unknown = []
    for lo, hi in cased:
        for a, b in _complement(members):
            if a <= hi and lo <= b:
                unknown.append((max(a, lo), min(b, hi)))
    return tuple(orbits.values()), tuple(unknown)


class _Parser:
    """One pattern's parse: ``compile()`` gives its :class:`_linear_regex.Regex`."""

    def __init__(self, pattern: str, onig: bool) -> None:
        self.p = pattern
        self.onig = onig
        self.i = 0
        self.code: list = []
        self.classes: dict = {}

    def fail(self, problem: str) -> FasttokError:
        return FasttokError(f"pattern {self.p!r}, at character {self.i}: {problem}")

    def refuse(self, what: str) -> FasttokError:
        return self.fail(f"{what} cannot run in linear time, and fasttok runs the patterns "
                         "of vocabulary files only in linear time; rewrite the pattern without it")

    def compile(self) -> _linear_regex.Regex:
        tree = self.alternation(frozenset())
        if self.i < len(self.p):
            raise self.fail("unbalanced ')'")
        self.emit(tree)
        self.put("match")
        return _linear_regex.Regex(self.p, self.code, list(self.classes))

    # -- parsing ------------------------------------------------------------

    def peek(self, k: int = 0) -> str:
        return self.p[self.i + k] if self.i + k < len(self.p) else ""

    def alternation(self, flags: frozenset) -> tuple:
        box = [flags]  # an inline (?i) changes the flags for the rest of the group
        branches = [self.sequence(box)]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.sequence(box))
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def sequence(self, box: list) -> tuple:
        items = []
        while self.i < len(self.p) and self.peek() not in "|)":
            atom = self.atom(box)
            if atom is not None:
                items.append(self.quantified(atom))
        return items[0] if len(items) == 1 else ("cat", items)

    def quantified(self, atom: tuple) -> tuple:
        brace = False
        while True:
            at = self.i
            c = self.peek()
            if c in ("*", "+", "?"):
                lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
                self.i += 1
                brace = False
            elif c == "{" and (bounds := self.bounds()) is not None:
                lo, hi = bounds
                brace = True
            else:
                return atom
            if atom[0] in ("assert", "look"):
                self.i = at
                raise self.fail("nothing to repeat")
            mode = "greedy"
            if self.peek() == "?":
                mode = "lazy"
                self.i += 1
            elif self.peek() == "+" and not (self.onig and brace):
                # Ruby syntax (tokenizers' Oniguruma) reads {n,m}+ as a repeat of
                # {n,m}, the other dialects as possessive
                mode = "possessive"
                self.i += 1
            if mode == "possessive":
                if _single(atom)[0] != "set":
                    raise self.refuse("a possessive repeat of more than one character class")
                atom = _single(atom)
            atom = ("rep", atom, lo, hi, mode)
            nxt = self.peek()
            if nxt in ("*", "+", "?") or (nxt == "{" and self.bounds(peek=True) is not None):
                if not (self.onig and brace and nxt == "+"):
                    raise self.fail("multiple repeat; put the repeated part in a group (?:...)")

    def bounds(self, peek: bool = False):
        # {n}, {n,}, {,m} or {n,m} at the cursor, digits as re's \d reads
        # them (str.isdecimal), else None; scanned by hand: compiling a re
        # for it was ~0.5M of the ~0.9M instructions a Unigram conversion's
        # three Replace patterns took to compile at load
        p, start = self.p, self.i
        if not p.startswith("{", start):
            return None
        low_end = _decimal_end(p, start + 1)
        end, comma = low_end, p.startswith(",", low_end)
        if comma:
            end = _decimal_end(p, low_end + 1)
        if not p.startswith("}", end):
            return None
        low, high = p[start + 1:low_end], p[low_end + 1:end] if comma else ""
        if not low and not high:
            return None
        lo = int(low or 0)
        hi = int(high) if high else None if comma else lo
        if hi is not None and hi < lo:
            raise self.fail(f"repeat {p[start:end + 1]} has its maximum below its minimum")
        if not peek:
            self.i = end + 1
        return lo, hi

    def atom(self, box: list):
        flags = box[0]
        c = self.p[self.i]
        if c == "(":
            return self.group(box)
        if c == "[":
            self.i += 1
            ranges, negated = self.bracket(flags)
            # folded before the negation: (?i)[^a] takes neither a nor A
            ranges = self.fold(ranges, flags)
            return ("set", _complement(ranges) if negated else ranges)
        if c in "*+?":
            raise self.fail("nothing to repeat")
        self.i += 1
        if c == ".":
            dotall = "s" in flags
            return ("set", _ALL if dotall else _complement(((10, 10),)))
        if c == "^":
            return ("assert", "line_start" if self.onig or "m" in flags else "text_start")
        if c == "$":
            return ("assert", "line_end" if self.onig or "m" in flags else "text_end")
        if c == "\\":
            self.i -= 1
            return self.escape(flags, in_class=False)
        return ("set", self.fold(((ord(c), ord(c)),), flags))

    def group(self, box: list):
        p, start = self.p, self.i
        flags = box[0]
        look = next((k for k in ("(?<=", "(?<!", "(?=", "(?!") if p.startswith(k, start)), None)
        if look is not None:
            self.i += len(look)
            inner = _single(self.alternation(flags))
            self.close(start)
            if inner[0] != "set":
                raise self.refuse("a lookaround of more than one character class")
            return ("look", _LOOKS[look], inner[1])
        if p.startswith("(?#", start):
            end = p.find(")", start)
            if end < 0:
                raise self.fail("unterminated comment (?#...")
            self.i = end + 1
            return None
        if p.startswith("(?>", start):
            self.i += 3
            inner = _single(self.alternation(flags))
            self.close(start)
            if inner[0] == "set":
                return inner
            if inner[0] == "rep" and inner[4] == "greedy" and _single(inner[1])[0] == "set":
                return ("rep", _single(inner[1]), inner[2], inner[3], "possessive")
            raise self.refuse("an atomic group (?>...) of more than a repeated character class")
        m = _syntax("group_name").match(p, start)
        if m is not None or not p.startswith("(?", start):
            self.i = m.end() if m is not None else start + 1
            node = self.alternation(flags)
            self.close(start)
            return ("cat", [node])  # a group: never unwrapped into a bare assertion's repeat
        m = _syntax("flags").match(p, start)
        if m is None:
            raise self.fail(f"unknown group syntax {p[start:start + 4]!r}")
        on, off = set(m.group(1)), set(m.group(2) or "")
        for f in on | off:
            if f not in "ims":
                self.i = start
                raise self.fail(f"unsupported flag {f!r} (fasttok knows i, m and s)")
        if self.onig:
            # Ruby's (?m) is the dot-all flag; its ^ and $ are always line anchors
            on = {"s" if f == "m" else f for f in on}
            off = {"s" if f == "m" else f for f in off}
        new = frozenset((flags | on) - off)
        self.i = m.end()
        if m.group(3) == ")":
            box[0] = new
            return None
        node = self.alternation(new)
        self.close(start)
        return ("cat", [node])

    def close(self, start: int) -> None:
        if self.peek() != ")":
            self.i = start
            raise self.fail("unterminated group")
        self.i += 1

    def bracket(self, flags: frozenset) -> tuple:
        # after the '[': (the ranges of its members, whether it is negated)
        start = self.i - 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        parts: list = []
        first = True
        while True:
            c = self.peek()
            if c == "":
                self.i = start
                raise self.fail("unterminated character class [")
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            if c == "[":
                raise self.fail("nested classes and POSIX classes [:...:] are not supported; "
                                "write the ranges out")
            if self.p.startswith("&&", self.i):
                raise self.fail("class intersection && is not supported")
            lo = self.class_atom(flags)
            if isinstance(lo, tuple):
                parts.extend(lo)
                continue
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                hi = self.class_atom(flags)
                if isinstance(hi, tuple):
                    raise self.fail("a range must end with a single character")
                if hi < lo:
                    raise self.fail(f"range {chr(lo)!r}-{chr(hi)!r} is out of order")
                parts.append((lo, hi))
            else:
                parts.append((lo, lo))
        return _normalize(parts), negated

    def class_atom(self, flags: frozenset):
        # a code point, or the ranges of an escape such as \p{L}
        c = self.p[self.i]
        if c != "\\":
            self.i += 1
            return ord(c)
        node = self.escape(flags, in_class=True)
        r = node[1]
        return r[0][0] if len(r) == 1 and r[0][0] == r[0][1] and node[0] == "char" else r

    def shorthand(self, e: str) -> "tuple | None":
        # the ranges of the class escape \e (lowercase), or None: each class
        # made when a pattern first names it (\w's was most of compiling \A)
        if e == "s":
            return _property("White_Space")
        if e == "d":
            return _property("Nd")
        if e == "w":
            return _word()
        return _HEX if e == "h" and self.onig else None

    def escape(self, flags: frozenset, in_class: bool) -> tuple:
        # at a backslash: ("set", ranges) or ("assert", name) outside a class;
        # inside one, ("char", ((cp, cp),)) for a character, ("set", ranges) for a class
        p, at = self.p, self.i
        if at + 1 >= len(p):
            raise self.fail("pattern ends with a backslash")
        m = p[at + 1] in "pP" and _syntax("property").match(p, at)
        if m:
            negated = (m.group(1) or m.group(3)) == "P"
            if p[at + 2:at + 4] == "{^":
                negated = not negated
            try:
                ranges = _property(m.group(2) or m.group(4))
            except ValueError as exc:
                raise self.fail(str(exc)) from None
            self.i = m.end()
            return self.class_escape(ranges, negated, flags, in_class)
        e = p[at + 1]
        self.i = at + 2
        shorthand = self.shorthand(e.lower())
        if shorthand is not None:
            return self.class_escape(shorthand, e.isupper(), flags, in_class)
        if not in_class:
            anchor = {"A": "text_start", "z": "text_end", "b": "word", "B": "not_word",
                      "Z": "end_newline" if self.onig else "text_end"}.get(e)
            if anchor is not None:
                return ("assert", anchor)
        if e in _ESCAPED_CHARS:
            cp = _ESCAPED_CHARS[e]
        elif e == "b":  # in a class, a backspace
            cp = 8
        elif e == "0":
            digits = re.match(r"[0-7]{0,2}", p[self.i:]).group()
            self.i += len(digits)
            cp = int(digits or "0", 8)
        elif e in "xuU":
            cp = self.hex_escape(e)
        elif e.isdigit():
            raise self.refuse("a backreference")
        elif e in _REFUSED_ESCAPES:
            raise self.refuse(_REFUSED_ESCAPES[e])
        elif e.isalnum():
            self.i = at
            raise self.fail(f"unknown escape \\{e}")
        else:
            cp = ord(e)
        if in_class:
            return ("char", ((cp, cp),))
        return ("set", self.fold(((cp, cp),), flags))

    def class_escape(self, ranges: tuple, negated: bool, flags: frozenset,
                     in_class: bool) -> tuple:
        if not in_class:
            ranges = self.fold(ranges, flags)
        return ("set", _complement(ranges) if negated else ranges)

    def hex_escape(self, e: str) -> int:
        p = self.p
        if e == "x" and self.peek() == "{":
            end = p.find("}", self.i)
            digits = p[self.i + 1:end] if end > 0 else ""
            self.i = end + 1
        else:
            width = {"x": 2, "u": 4, "U": 8}[e]
            digits = p[self.i:self.i + width]
            self.i += width
            if len(digits) != width:
                digits = ""
        try:
            cp = int(digits, 16)
        except ValueError:
            cp = -1
        if not 0 <= cp <= _MAX_CP or not all(d in "0123456789abcdefABCDEF" for d in digits):
            raise self.fail(f"bad \\{e} escape")
        return cp

    def fold(self, ranges: tuple, flags: frozenset) -> tuple:
        """``ranges`` closed under simple case folding when ``(?i)`` is on."""
        if "i" not in flags:
            return ranges
        orbits, unknown = _folding()
        if _intersects(ranges, unknown):
            raise self.fail("case-insensitive matching of letters outside the ASCII case "
                            "orbits (such as \\p{L}, \\w or é under (?i)) is not supported; "
                            "list both cases in a class instead")
        return _normalize(list(ranges) + [r for orbit in orbits if _intersects(ranges, orbit)
                                          for r in orbit])

    # -- code generation ----------------------------------------------------

    def put(self, op: str, a: int = 0, b: int = 0) -> int:
        if len(self.code) >= MAX_PROGRAM:
            raise self.fail(f"the pattern expands to more than {MAX_PROGRAM:,} instructions "
                            "(bounded repeats are written out); use smaller repeat counts")
        self.code.append([_linear_regex.OPS[op], a, b])
        return len(self.code) - 1

    def klass(self, ranges: tuple) -> int:
        return self.classes.setdefault(ranges, len(self.classes))

    def emit(self, node: tuple) -> None:
        kind = node[0]
        if kind == "set":
            r = node[1]
            if len(r) == 1 and r[0][0] == r[0][1]:
                self.put("char", r[0][0])
            else:
                self.put("class", self.klass(r))
        elif kind == "cat":
            for item in node[1]:
                self.emit(item)
        elif kind == "alt":
            exits = []
            for branch in node[1][:-1]:
                split = self.put("split", len(self.code) + 1)
                self.emit(branch)
                exits.append(self.put("jmp"))
                self.code[split][2] = len(self.code)
            self.emit(node[1][-1])
            for j in exits:
                self.code[j][1] = len(self.code)
        elif kind == "assert":
            # the word class only for \b and \B (the others never read it)
            word = node[1] in ("word", "not_word")
            self.put("assert", _linear_regex.ANCHORS[node[1]], self.klass(_word()) if word else 0)
        elif kind == "look":
            self.put("look", self.klass(node[2]), _linear_regex.LOOKS[node[1]])
        else:
            self.emit_repeat(*node[1:])

    def emit_repeat(self, item: tuple, lo: int, hi, mode: str) -> None:
        if mode == "possessive":
            for _ in range(lo):
                self.emit(item)
            if hi is None:
                self.put("run", self.klass(item[1]))
            for _ in range(0 if hi is None else hi - lo):
                self.put("opt", self.klass(item[1]))
            return
        if hi is None and lo > 0:
            # x{m,} as m-1 copies and x+; an iteration that took nothing ends
            # the loop (the loop op checks whether the marker at its start
            # was passed at this position), as in backtracking engines
            for _ in range(lo - 1):
                self.emit(item)
            start = self.put("jmp", len(self.code) + 1)
            self.emit(item)
            back = self.put("loop", start)
            split = self.put("split")
            self.code[back][2] = len(self.code)
            self.code[split][1:] = ([start, len(self.code)] if mode == "greedy"
                                    else [len(self.code), start])
            return
        for _ in range(lo):
            self.emit(item)
        if hi is None:
            loop = self.put("split")
            self.emit(item)
            back = self.put("loop", loop)
            self.put("jmp", loop)
            self.code[back][2] = len(self.code)
            self.branch(loop, len(self.code), mode)
            return
        # x{0,2} as (?:x(?:x)?)?: each further copy only after the one before
        splits = []
        for _ in range(hi - lo):
            splits.append(self.put("split"))
            self.emit(item)
        for split in splits:
            self.branch(split, len(self.code), mode)

    def branch(self, split: int, out: int, mode: str) -> None:
        # the split into the body (just after it) or out, preferring the body when greedy
        body = split + 1
        self.code[split][1:] = [body, out] if mode == "greedy" else [out, body]


def _decimal_end(p: str, i: int) -> int:
    # the end of the run of decimal digits at i
    while i < len(p) and p[i].isdecimal():
        i += 1
    return i


def _single(node: tuple) -> tuple:
    while node[0] in ("cat", "alt") and len(node[1]) == 1:
        node = node[1][0]
    return node


# the pattern syntax read with re, each compiled when a pattern first has it
# (compiled at import they were ~0.4 ms of a load with a regex Replace); a
# repeat's bounds are scanned by hand (_Parser.bounds): every Unigram
# conversion's ' {2,}' has them
_SYNTAX = {
    "property": r"\\([pP])\{\^?([A-Za-z_]+)\}|\\([pP])([A-Z])",
    "group_name": r"\(\?P?<(?![=!])\w+>|\(\?'\w+'",
    "flags": r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])",
}


@functools.cache
def _syntax(name: str) -> "re.Pattern[str]":
    return re.compile(_SYNTAX[name])
