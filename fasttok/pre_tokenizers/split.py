"""The splitting pre-tokenizers of ``tokenizers``: each cuts every piece where a
pattern matches and keeps or drops the matches by a behavior.

``Split`` takes a string or an Oniguruma regex; the others split on a class
of characters (one character per match, as ``tokenizers``' character
predicates do), with classes from fasttok's Unicode tables: whitespace is
the White_Space property (Rust's ``char::is_whitespace``), punctuation is
ASCII punctuation and the P categories of Unicode 8.0 (the
``unicode_categories`` crate's, :mod:`fasttok.shared.hf_unicode`), digits
are the N categories (``char::is_numeric``).

>>> Split(" ", "MergedWithPrevious").pre_tokenize_str("a b")
[('a ', (0, 2)), ('b', (2, 3))]
>>> WhitespaceSplit().split_str("a \\u3000b")
['a', 'b']
>>> BertPreTokenizer().pre_tokenize_str("Hi, you!")
[('Hi', (0, 2)), (',', (2, 3)), ('you', (4, 7)), ('!', (7, 8))]
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from fasttok.pre_tokenizers.base import PreTokenizer

if TYPE_CHECKING:
    from fasttok.shared.normalized import PreTokenizedString

# shared.normalized is imported where a split runs on Python strings: a
# compiled walk that asks a stage for its characters never needs it

__all__ = ["PatternSplit", "Split", "CharDelimiterSplit", "Whitespace", "WhitespaceSplit",
           "BertPreTokenizer", "Punctuation", "Digits", "WHITESPACE", "PUNCTUATION"]

_WHITE_SPACE = "White_Space"


# The classes are compiled on first use (WHITESPACE and PUNCTUATION, the
# module's names for two of them, through __getattr__), and the translator
# that spells them imported then: importing the stages should not cost their
# Unicode classes (punctuation's was ~1 ms of every tokenizer.json load).
@functools.cache
def _whitespace() -> "re.Pattern[str]":
    from fasttok.shared.regex_translate import char_class

    return re.compile(char_class(_WHITE_SPACE))


@functools.cache
def _punctuation() -> "re.Pattern[str]":
    import string

    from fasttok.shared.hf_unicode import PUNCTUATION

    return re.compile(f"[{re.escape(string.punctuation)}]|{PUNCTUATION}")


@functools.cache
def _not_whitespace() -> str:
    from fasttok.shared.regex_translate import char_class

    return "[^" + char_class(_WHITE_SPACE)[1:]


def __getattr__(name: str) -> "re.Pattern[str]":
    if name == "WHITESPACE":
        return _whitespace()
    if name == "PUNCTUATION":
        return _punctuation()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def _numeric() -> "re.Pattern[str]":
    # Rust's char::is_numeric, Unicode 17.0
    from fasttok.shared.hf_unicode import NUMERIC

    return re.compile(NUMERIC)


@functools.cache
def _words() -> "re.Pattern[str]":
    # compiled on first use: importing the stage should not cost its Unicode classes
    from fasttok.shared.regex_translate import compile_onig

    return compile_onig(r"\w+|[^\w\s]+")


class PatternSplit(PreTokenizer):
    """A pre-tokenizer made of splits, each ``(pattern, behavior, invert)``, in order.
    ``pieces``, when given, is a regex whose matches are the pieces the steps
    leave of a text, for :meth:`split_str` to find in one pass.

    >>> PatternSplit([(re.compile("-"), "Removed", False)]).split_str("a-b")
    ['a', 'b']
    """

    def __init__(self, steps: list, pieces: "re.Pattern[str] | None" = None) -> None:
        from fasttok.shared.normalized import BEHAVIORS

        for _, behavior, _ in steps:
            if behavior not in BEHAVIORS:
                raise ValueError(f"unknown split behavior {behavior!r}; known: "
                                 f"{', '.join(BEHAVIORS)}")
        self._steps = list(steps)
        self._pieces = pieces

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def pre_tokenize(self, pts: PreTokenizedString) -> None:
        for pattern, behavior, invert in self._steps:
            pts.split(lambda i, ns: ns.split(pattern, behavior, invert))

    def split_str(self, text: str) -> list:
        if self._pieces is not None:
            # one findall instead of a span tuple per match per step: a
            # third of the time of all-MiniLM-L6-v2's encode went there
            return self._pieces.findall(text)
        from fasttok.shared.normalized import find_matches, split_spans

        pieces = [text]
        for pattern, behavior, invert in self._steps:
            pieces = [p[s:e] for p in pieces
                      for s, e in split_spans(find_matches(pattern, p, invert), behavior) if s < e]
        return pieces


class Split(PatternSplit):
    """``tokenizers.pre_tokenizers.Split``: ``pattern`` is a literal string or,
    with ``regex=True``, an Oniguruma regex; ``invert`` splits on what does
    not match instead.

    >>> Split(r"\\d+", "Isolated", regex=True).split_str("ab12c")
    ['ab', '12', 'c']
    >>> Split(r"\\d+", "Removed", invert=True, regex=True).split_str("ab12c")
    ['12']
    """

    def __init__(self, pattern: str, behavior: str, invert: bool = False, *,
                 regex: bool = False) -> None:
        self.pattern = pattern
        self.behavior = behavior
        self.invert = invert
        self.regex = regex
        if regex:
            from fasttok.shared.regex_translate import compile_onig

            compiled = compile_onig(pattern)
        else:
            compiled = re.compile(re.escape(pattern))
        super().__init__([(compiled, behavior, invert)])

    def split_str(self, text: str) -> list:
        # a literal that does not occur leaves the text one piece (Gemma 3
        # splits at spaces its normalizer has replaced: a third of the time
        # of its encode went to finding none)
        if not self.regex and not self.invert and self.pattern and self.pattern not in text:
            return [text] if text else []
        return super().split_str(text)

    def __repr__(self) -> str:
        kind = "Regex" if self.regex else "String"
        return f"Split({kind}({self.pattern!r}), {self.behavior!r}, invert={self.invert})"


class CharDelimiterSplit(PatternSplit):
    """``tokenizers.pre_tokenizers.CharDelimiterSplit``: split on one character, dropping it.

    >>> CharDelimiterSplit("|").split_str("a||b")
    ['a', 'b']
    """

    def __init__(self, delimiter: str) -> None:
        self.delimiter = delimiter
        super().__init__([(re.compile(re.escape(delimiter)), "Removed", False)])


class Whitespace(PatternSplit):
    """``tokenizers.pre_tokenizers.Whitespace``: runs of word characters and
    runs of other non-space characters (``\\w+|[^\\w\\s]+``).

    >>> Whitespace().split_str("it's 12!")
    ['it', "'", 's', '12', '!']
    """

    def __init__(self) -> None:
        # what the inverted split keeps is the matches themselves
        super().__init__([(_words(), "Removed", True)], _words())


class WhitespaceSplit(PatternSplit):
    """``tokenizers.pre_tokenizers.WhitespaceSplit``: split on whitespace, dropping it.

    >>> WhitespaceSplit().split_str(" a\\tb ")
    ['a', 'b']
    """

    # Its patterns are compiled when the Python path first splits: a file
    # whose compiled walk cuts at cut_chars() never needs them (they were
    # a fifth of a T5 conversion's load)
    def __init__(self) -> None:
        pass

    @functools.cached_property
    def _steps(self) -> list:
        return [(_whitespace(), "Removed", False)]

    @functools.cached_property
    def _pieces(self) -> "re.Pattern[str]":
        return re.compile(_not_whitespace() + "+")

    @staticmethod
    def cut_chars() -> str:
        """The characters it cuts at and drops (White_Space, the class it
        splits on), in code point order: what a compiled walk splits at.

        >>> WhitespaceSplit.cut_chars()[:6] == "\\t\\n\\x0b\\x0c\\r "
        True
        """
        from fasttok.shared._unicode import code_point_ranges

        return "".join(chr(cp) for lo, hi in code_point_ranges(_WHITE_SPACE)
                       for cp in range(lo, hi + 1))


class BertPreTokenizer(PatternSplit):
    """``tokenizers.pre_tokenizers.BertPreTokenizer``: split on whitespace
    (dropped), then isolate every punctuation character.

    >>> BertPreTokenizer().split_str("a.b")
    ['a', '.', 'b']
    """

    def __init__(self) -> None:
        pass

    # compiled on first use, as WhitespaceSplit's: a BERT file's compiled
    # walk asks them only of the code points it meets (~4 ms of the load)
    @functools.cached_property
    def _steps(self) -> list:
        return [(_whitespace(), "Removed", False), (_punctuation(), "Isolated", False)]

    @functools.cached_property
    def _pieces(self) -> "re.Pattern[str]":
        # each punctuation character that is no whitespace, and the runs of
        # characters that are neither
        punctuation = f"(?!{_whitespace().pattern})(?:{_punctuation().pattern})"
        return re.compile(f"{punctuation}|(?:(?!{punctuation}){_not_whitespace()})+")


class Punctuation(PatternSplit):
    """``tokenizers.pre_tokenizers.Punctuation``: split on each punctuation character.

    >>> Punctuation("Contiguous").split_str("a,,b")
    ['a', ',,', 'b']
    """

    def __init__(self, behavior: str = "Isolated") -> None:
        self.behavior = behavior
        super().__init__([(_punctuation(), behavior, False)])


class Digits(PatternSplit):
    """``tokenizers.pre_tokenizers.Digits``: numeric characters apart from the
    rest, each alone with ``individual_digits``, else in runs.

    >>> Digits().split_str("a12b"), Digits(True).split_str("a12b")
    (['a', '12', 'b'], ['a', '1', '2', 'b'])
    """

    def __init__(self, individual_digits: bool = False) -> None:
        self.individual_digits = individual_digits
        super().__init__([(_numeric(), "Isolated" if individual_digits else "Contiguous", False)])


