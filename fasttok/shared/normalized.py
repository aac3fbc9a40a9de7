"""Text with its alignment to the original, and its pre-tokenizer splits.

Hugging Face ``tokenizers`` keeps, for every byte of the normalized text, the
byte span of the original it came from; fasttok keeps the same per
character (every operation works on whole characters, so the two agree),
with spans counted in characters of the original, which is what
``tokenizers``' Python API reports. The rules are ``tokenizers`` 0.23.3's
``NormalizedString``:

* :meth:`NormalizedString.transform_range` rewrites a range from a sequence
  of ``(char, change)``: ``0`` replaces the next old character, ``1`` is a
  new character (it takes the span of the character before it, or ``(0, 0)``
  at the very start), ``-n`` replaces the next one and drops ``n`` more.
* a split keeps the slice of each piece: its original is the span from the
  first character's start to the last one's end.

Splitting patterns are ``re`` patterns (a character predicate is a one
character class, which matches exactly the characters it accepts), run as
Oniguruma's ``find_iter`` runs them: an empty match right where the last
match ended is skipped.

>>> ns = NormalizedString("Hé llo")
>>> ns.transform([("H", 0), ("e", 0), ("\\u0301", 1), (" ", 0), ("l", -1), ("o", 0)], 0)
>>> ns.normalized, ns.alignments[1:4], ns.offsets_of(4, 6)
('He\\u0301 lo', [(1, 2), (1, 2), (2, 3)], (3, 6))
>>> pts = PreTokenizedString("ab cd")
>>> pts.split(lambda i, ns: ns.split(re.compile(" "), "Removed"))
>>> pts.get_splits()
[('ab', (0, 2)), ('cd', (3, 5))]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable


__all__ = ["NormalizedString", "PreTokenizedString", "BEHAVIORS", "find_matches", "match_spans",
           "split_spans"]

BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")


def find_matches(pattern: "re.Pattern[str]", text: str, invert: bool = False) -> list:
    """``tokenizers``' ``Pattern::find_matches``: the text cut into
    ``((start, end), is_match)`` spans that cover it, in order.

    >>> find_matches(re.compile("-"), "a--b")
    [((0, 1), False), ((1, 2), True), ((2, 3), True), ((3, 4), False)]
    >>> find_matches(re.compile("x"), "")
    [((0, 0), False)]
    """
    if not text:
        return [((0, 0), invert)]
    out = []
    prev = 0
    for start, end in match_spans(pattern, text):
        if prev != start:
            out.append(((prev, start), invert))
        out.append(((start, end), not invert))
        prev = end
    if prev != len(text):
        out.append(((prev, len(text)), invert))
    return out


def match_spans(pattern: "re.Pattern[str]", text: str) -> list:
    """The ``(start, end)`` of each match of ``pattern`` (``re`` or the linear
    engine's :class:`~fasttok.shared._linear_regex.Regex`) as Oniguruma's
    ``find_iter`` gives them: an empty match right where the last match
    ended is skipped, and the search goes on one character further.

    The pattern's own iteration runs first: the linear engine's stops with
    :class:`~fasttok.errors.FasttokError` past its work budget (a search
    that runs far ahead of each match, ``(?:a+b)?`` on a run of ``a``). The
    loop after it searches from the positions that iteration searched from
    or one past them, so it stays within a constant times that work.

    >>> match_spans(re.compile("a*"), "baa")
    [(0, 0), (1, 3)]
    >>> match_spans(re.compile("a"), "baa")
    [(1, 2), (2, 3)]
    """
    spans = [m.span() for m in pattern.finditer(text)]
    if all(s != e for s, e in spans):
        return spans
    # re keeps an empty match that follows a match; Oniguruma's iterator
    # skips it and tries again one character on
    spans = []
    pos, last_end, n = 0, -1, len(text)
    while pos <= n:
        m = pattern.search(text, pos)
        if m is None:
            break
        s, e = m.span()
        if s == e and e == last_end:
            pos = e + 1
            continue
        spans.append((s, e))
        pos = last_end = e
        if s == e:
            pos = e + 1
    return spans


def split_spans(matches: list, behavior: str) -> list:
    """The ``(start, end)`` pieces a split with ``behavior`` keeps, from
    :func:`find_matches`' spans (``tokenizers``' ``NormalizedString::split``).

    >>> m = find_matches(re.compile("-"), "the-final--countdown")
    >>> split_spans(m, "MergedWithPrevious")
    [(0, 4), (4, 10), (10, 11), (11, 20)]
    >>> split_spans(m, "Contiguous")
    [(0, 3), (3, 4), (4, 9), (9, 11), (11, 20)]
    """
    if behavior == "Isolated":
        return [span for span, _ in matches]
    if behavior == "Removed":
        return [span for span, is_match in matches if not is_match]
    out: list = []
    previous = False
    if behavior == "Contiguous":
        for span, is_match in matches:
            if is_match == previous and out:
                out[-1] = (out[-1][0], span[1])
            else:
                out.append(span)
            previous = is_match
        return out
    if behavior == "MergedWithPrevious":
        for span, is_match in matches:
            if is_match and not previous and out:
                out[-1] = (out[-1][0], span[1])
            else:
                out.append(span)
            previous = is_match
        return out
    if behavior == "MergedWithNext":
        for span, is_match in reversed(matches):
            if is_match and not previous and out:
                out[-1] = (span[0], out[-1][1])
            else:
                out.append(span)
            previous = is_match
        out.reverse()
        return out
    raise ValueError(f"unknown split behavior {behavior!r}; known: {', '.join(BEHAVIORS)}")


class NormalizedString:
    """A normalized text, its original, and the original span of each character.

    ``alignments[i]`` is the ``(start, end)`` character span of ``original``
    that ``normalized[i]`` came from; ``original_shift`` is where
    ``original`` starts in the text the chain began with (a piece of a split
    keeps the whole text's offsets).

    >>> ns = NormalizedString("ab")
    >>> ns.prepend("_"); ns.normalized, ns.alignments
    ('_ab', [(0, 1), (0, 1), (1, 2)])
    """

    __slots__ = ("original", "normalized", "alignments", "original_shift")

    def __init__(self, original: str, normalized: str | None = None,
                 alignments: list | None = None, original_shift: int = 0) -> None:
        self.original = original
        self.normalized = original if normalized is None else normalized
        self.alignments = ([(i, i + 1) for i in range(len(original))]
                           if alignments is None else alignments)
        self.original_shift = original_shift

    def __repr__(self) -> str:
        return f"NormalizedString({self.original!r} -> {self.normalized!r})"

    def __len__(self) -> int:
        return len(self.normalized)

    def offsets_original(self) -> tuple:
        """The span of ``original`` in the text the chain began with.

        >>> NormalizedString("abc", original_shift=4).offsets_original()
        (4, 7)
        """
        return (self.original_shift, self.original_shift + len(self.original))

    def convert_offsets(self, start: int, end: int) -> tuple | None:
        """The span of ``original`` that normalized ``[start, end)`` covers
        (``tokenizers``' ``convert_offsets`` from the normalized side), or ``None``.

        >>> NormalizedString("abc").convert_offsets(1, 3)
        (1, 3)
        """
        if start == end:
            return (start, end)
        if start > end:
            return None
        if not self.normalized and start == end == 0:
            return (0, len(self.original))
        aligns = self.alignments
        if start >= len(aligns):
            return None
        # the two ends alone: slicing the span made every token of a long
        # byte-fallback run (all sharing the run's span) cost its length
        last = end - 1 if end <= len(aligns) else len(aligns) - 1
        return (aligns[start][0], aligns[last][1])

    def offsets_of(self, start: int, end: int) -> tuple | None:
        """The span, in the text the chain began with, of normalized ``[start, end)``.

        >>> NormalizedString("abc", original_shift=2).offsets_of(0, 2)
        (2, 4)
        """
        span = self.convert_offsets(start, end)
        if span is None:
            return None
        return (span[0] + self.original_shift, span[1] + self.original_shift)

    def slice(self, start: int, end: int) -> "NormalizedString | None":
        """The piece for normalized ``[start, end)``, keeping its offsets.

        >>> piece = NormalizedString("hello").slice(1, 3)
        >>> piece.normalized, piece.offsets_original()
        ('el', (1, 3))
        """
        span = self.convert_offsets(start, end)
        if span is None:
            return None
        lo, hi = span
        shift = lo
        original = self.original[lo:hi] if lo <= hi <= len(self.original) else ""
        return NormalizedString(original, self.normalized[start:end],
                                [(a - shift, b - shift) for a, b in self.alignments[start:end]],
                                self.original_shift + lo)

    def transform_range(self, start: int, end: int, dest: Iterable,
                        initial_offset: int = 0) -> None:
        """Replace normalized ``[start, end)`` by ``dest``, a sequence of
        ``(char, change)``; ``initial_offset`` old characters are dropped
        first (see the module's notes for ``change``).

        >>> ns = NormalizedString("abc")
        >>> ns.transform_range(1, 3, [("X", -1)], 0); ns.normalized, ns.alignments
        ('aX', [(0, 1), (1, 2)])
        """
        old = self.alignments
        offset = start + initial_offset
        chars = []
        aligns = []
        for c, change in dest:
            if change > 0:
                aligns.append(old[offset - 1] if offset >= 1 else (0, 0))
            else:
                aligns.append(old[offset])
                offset += 1 - change
            chars.append(c)
        self.normalized = self.normalized[:start] + "".join(chars) + self.normalized[end:]
        self.alignments = old[:start] + aligns + old[end:]

    def transform(self, dest: Iterable, initial_offset: int = 0) -> None:
        """:meth:`transform_range` over the whole normalized text.

        >>> ns = NormalizedString("ab")
        >>> ns.transform([("b", -1)], 0); ns.normalized, ns.alignments
        ('b', [(0, 1)])
        """
        self.transform_range(0, len(self.normalized), dest, initial_offset)

    def expand_chars(self, pieces: list) -> None:
        """Replace character ``i`` by the non-empty string ``pieces[i]``: its
        first character replaces it, the others are new and share its span
        (how ``tokenizers`` lowercases and maps bytes to characters).

        >>> ns = NormalizedString("İx"); ns.expand_chars(["i\\u0307", "x"])
        >>> ns.normalized, ns.alignments
        ('i̇x', [(0, 1), (0, 1), (1, 2)])
        """
        aligns = []
        for align, piece in zip(self.alignments, pieces):
            aligns.extend([align] * len(piece))
        self.normalized = "".join(pieces)
        self.alignments = aligns

    def byte_level(self) -> None:
        """Every byte of the text as its GPT-2 alphabet character; the
        characters of one original character share its span.

        >>> ns = NormalizedString("é "); ns.byte_level(); ns.normalized, ns.alignments
        ('Ã©Ġ', [(0, 1), (0, 1), (1, 2)])
        """
        # imported here: only byte-level files need the compiled byte map
        from fasttok.shared._bytemap import encode_byte_level

        text = self.normalized
        mapped = encode_byte_level(text.encode("utf-8"))
        if len(mapped) != len(text):
            self.alignments = [a for a, n in zip(self.alignments, _utf8_lengths(text))
                               for _ in range(n)]
        self.normalized = mapped

    def filter(self, keep: list) -> None:
        """Keep the characters whose flag in ``keep`` is true; each keeps its
        span (``tokenizers``' ``NormalizedString::filter``).

        >>> ns = NormalizedString("a-b"); ns.filter([True, False, True])
        >>> ns.normalized, ns.alignments
        ('ab', [(0, 1), (2, 3)])
        """
        if all(keep):
            return
        self.normalized = "".join(c for c, k in zip(self.normalized, keep) if k)
        self.alignments = [a for a, k in zip(self.alignments, keep) if k]

    def prepend(self, s: str) -> None:
        """Put ``s`` before the text (nothing happens to an empty text).

        >>> ns = NormalizedString("b"); ns.prepend("a"); ns.alignments
        [(0, 1), (0, 1)]
        """
        if self.normalized and s:
            first = self.alignments[0]
            self.normalized = s + self.normalized
            self.alignments = [first] * len(s) + self.alignments

    def append(self, s: str) -> None:
        """Put ``s`` after the text (nothing happens to an empty text).

        >>> ns = NormalizedString("a"); ns.append("b"); ns.alignments
        [(0, 1), (0, 1)]
        """
        if self.normalized and s:
            last = self.alignments[-1]
            self.normalized += s
            self.alignments = self.alignments + [last] * len(s)

    def replace(self, pattern: "re.Pattern[str]", content: str) -> None:
        """Replace every match of ``pattern`` by ``content``; the new
        characters take the span of the match's last character (of the one
        before an empty match).

        >>> ns = NormalizedString("a b"); ns.replace(re.compile(" "), "__")
        >>> ns.normalized, ns.alignments
        ('a__b', [(0, 1), (1, 2), (1, 2), (2, 3)])
        """
        spans = [span for span, is_match in find_matches(pattern, self.normalized) if is_match]
        if not spans:
            return
        # one pass over the matches: rewriting the text per match was
        # quadratic in their number (52 s for the spaces of 130 KB)
        text, old = self.normalized, self.alignments
        parts: list = []
        aligns: list = []
        at = 0
        for start, end in spans:
            parts.append(text[at:start])
            aligns += old[at:start]
            if end > start:
                span = old[end - 1]
            else:
                span = aligns[-1] if aligns else (0, 0)
            parts.append(content)
            aligns += [span] * len(content)
            at = end
        parts.append(text[at:])
        aligns += old[at:]
        self.normalized = "".join(parts)
        self.alignments = aligns

    def strip(self, left: bool, right: bool, chars: str) -> None:
        """Drop leading (``left``) and trailing (``right``) characters of ``chars``.

        >>> ns = NormalizedString(" a "); ns.strip(True, True, " "); ns.normalized, ns.alignments
        ('a', [(1, 2)])
        """
        text = self.normalized
        lead = len(text) - len(text.lstrip(chars)) if left else 0
        trail = len(text) - len(text.rstrip(chars)) if right else 0
        if lead == len(text):
            trail = 0
        if not lead and not trail:
            return
        stop = len(text) - trail
        if lead >= stop:
            self.normalized = ""
            self.alignments = []
            return
        self.normalized = text[lead:stop]
        self.alignments = self.alignments[lead:stop]

    def split(self, pattern: "re.Pattern[str]", behavior: str, invert: bool = False) -> list:
        """The pieces of a split on ``pattern`` with ``behavior`` (one of
        :data:`BEHAVIORS`), each keeping its offsets.

        >>> [p.normalized for p in NormalizedString("a-b").split(re.compile("-"), "MergedWithNext")]
        ['a', '-b']
        """
        spans = split_spans(find_matches(pattern, self.normalized, invert), behavior)
        return [self.slice(s, e) for s, e in spans]


def _utf8_lengths(text: str) -> list:
    return [1 if c < "\x80" else 2 if c < "\u0800" else 3 if c < "\U00010000" else 4
            for c in text]


class PreTokenizedString:
    """The splits of a text between pre-tokenization steps.

    ``splits`` holds one :class:`NormalizedString` per piece, each with the
    offsets of the whole text; :meth:`split` replaces every piece by the
    pieces a function returns, dropping empty ones, as ``tokenizers`` does.

    >>> pts = PreTokenizedString("a b")
    >>> pts.split(lambda i, ns: ns.split(re.compile(" "), "Isolated"))
    >>> [ns.normalized for ns in pts.splits]
    ['a', ' ', 'b']
    """

    __slots__ = ("original", "splits")

    def __init__(self, text: "str | NormalizedString") -> None:
        if isinstance(text, NormalizedString):
            self.original = text.original
            self.splits = [text]
        else:
            self.original = text
            self.splits = [NormalizedString(text)]

    def split(self, fn: Callable) -> None:
        """Replace each split by the non-empty ones ``fn(index, split)`` returns.

        >>> pts = PreTokenizedString("ab")
        >>> pts.split(lambda i, ns: [ns.slice(0, 1), ns.slice(1, 1)])
        >>> len(pts.splits)
        1
        """
        new = []
        for i, ns in enumerate(self.splits):
            new.extend(piece for piece in fn(i, ns) if piece.normalized)
        self.splits = new

    def normalize(self, fn: Callable) -> None:
        """Run ``fn(split)`` (which changes it in place) on every split.

        >>> pts = PreTokenizedString("ab"); pts.normalize(lambda ns: ns.prepend("_"))
        >>> pts.splits[0].normalized
        '_ab'
        """
        for ns in self.splits:
            fn(ns)

    def get_splits(self) -> list:
        """``[(piece, (start, end))]`` with offsets in the original text, as
        ``tokenizers``' ``pre_tokenize_str`` gives them.

        >>> PreTokenizedString("ab").get_splits()
        [('ab', (0, 2))]
        """
        return [(ns.normalized, ns.offsets_original()) for ns in self.splits]
