"""Hugging Face ``tokenizers``' added tokens: where they cut the input.

``tokenizers`` (``AddedVocabulary``) looks for its added tokens before any
other stage, in two passes: first the tokens with ``normalized=false`` in the
raw text, then, in each stretch between those, the ``normalized=true`` ones
in the stretch's normalized text (their own content normalized the same
way). Each pass takes matches leftmost first and, at one position, longest
first (Aho-Corasick ``LeftmostLongest``). A ``single_word`` token only counts
when no word character touches it; ``lstrip``/``rstrip`` make the match take
the whitespace beside it, never what an earlier match took.

"Word" and "whitespace" are those of Rust's ``regex`` (``\\w`` and ``\\s``,
Unicode): word characters are the Alphabetic property, marks, decimal
digits, connector punctuation and Join_Control, as of Unicode 16.0 in the
installed ``tokenizers`` (the set Oniguruma's ``\\w`` matches, from
:mod:`fasttok.shared.hf_unicode`); whitespace is the ``White_Space``
property, which unlike ``str.isspace`` leaves out U+001C..U+001F.

>>> vocab = AddedTokens([AddedToken("[CLS]", 1, special=True),
...                      AddedToken("<mask>", 2, lstrip=True, normalized=False)])
>>> vocab.find_matches("[CLS] a <mask>b", normalized=False)
[(1, 0, 5), (None, 5, 7), (2, 7, 14), (None, 14, 15)]
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from fasttok.shared._literal_cut import LiteralCut


__all__ = ["AddedToken", "AddedTokens", "is_word_char", "WHITE_SPACE"]

#: the characters with Unicode's White_Space property (Rust's ``\\s``)
WHITE_SPACE = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
                        "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


@functools.cache
def _word() -> "re.Pattern[str]":
    # compiled on first use: importing should not cost the Unicode class
    from fasttok.shared.hf_unicode import ONIG_WORD

    return re.compile(ONIG_WORD)


def is_word_char(ch: str) -> bool:
    """Whether ``ch`` is a word character of Rust's ``regex`` ``\\w``.

    >>> is_word_char("a"), is_word_char("\\u0330"), is_word_char("-"), is_word_char("\\u2160")
    (True, True, False, True)
    """
    return _word().match(ch) is not None


class AddedToken:
    """One added token of ``tokenizer.json``'s ``added_tokens`` list.

    >>> AddedToken("<s>", 1, special=True)
    AddedToken('<s>', 1, special=True, normalized=False)
    """

    __slots__ = ("content", "id", "special", "single_word", "lstrip", "rstrip", "normalized")

    def __init__(self, content: str, id: int, *, special: bool = False, single_word: bool = False,
                 lstrip: bool = False, rstrip: bool = False,
                 normalized: Optional[bool] = None) -> None:
        self.content = content
        self.id = id
        self.special = special
        self.single_word = single_word
        self.lstrip = lstrip
        self.rstrip = rstrip
        # tokenizers' default: special tokens match the raw text, others the normalized
        self.normalized = (not special) if normalized is None else normalized

    def __repr__(self) -> str:
        flags = "".join(f", {name}=True" for name in ("special", "single_word", "lstrip", "rstrip")
                        if getattr(self, name))
        return f"AddedToken({self.content!r}, {self.id}{flags}, normalized={self.normalized})"


class _Matcher:
    # the tokens of one pass by their (matched) text, and their search
    def __init__(self, entries: list) -> None:
        by_text: dict = {}
        for text, token in entries:
            if text and text not in by_text:
                by_text[text] = token
        self.by_text = by_text
        # imported by the first matcher (a first encode's): a load makes none
        from fasttok.shared.literal_match import first_char_test

        self.may_occur = first_char_test(by_text)
        #: whether every token matches wherever its text is (no single_word,
        #: lstrip or rstrip), so that :meth:`split` cuts as find_matches does
        self.plain = not any(t.single_word or t.lstrip or t.rstrip for t in by_text.values())
        #: each token's id by its matched text
        self.ids = {text: token.id for text, token in by_text.items()}

    @functools.cached_property
    def regex(self) -> Optional["re.Pattern[str]"]:
        """The tokens' search, one group around it for ``re.split`` (the
        matches are the same), or ``None`` when there is no token. Built on
        first use: a compiled walk cuts with :attr:`cut` alone, and Gemma 3's
        6,415 tokens take 0.1-0.2 s to compile, on its first encode.
        """
        from fasttok.shared.literal_match import longest_first

        return longest_first(self.by_text, group=True)

    @functools.cached_property
    def literal(self) -> LiteralCut:
        """The tokens' texts as one compiled search (built, and its module
        imported, on first use: Gemma 3's trie takes milliseconds)."""
        from fasttok.shared._literal_cut import LiteralCut

        return LiteralCut(self.by_text)

    @functools.cached_property
    def cut(self) -> Callable[[str], Optional[list]]:
        """:meth:`split` in one compiled call, or ``None`` for a text with a
        lone surrogate."""
        return self.literal.split

    def split(self, text: str) -> list:
        """``text`` cut at the tokens, as ``re.split`` with a group cuts it:
        the text between tokens at even places, the tokens' texts at odd ones."""
        if not self.by_text:
            return [text]
        parts = self.cut(text)
        return self.regex.split(text) if parts is None else parts

    def occurs(self, text: str) -> bool:
        """Whether some token's text is in ``text`` (one compiled search).

        >>> matcher = AddedTokens([AddedToken("<m>", 3, normalized=False)]).matcher(False)
        >>> matcher.occurs("<x <m"), matcher.occurs("a<m>")
        (False, True)
        """
        return bool(self.by_text) and self.literal.occurs(text)

    def finditer(self, text: str) -> Iterable:
        if self.regex is None:
            return ()
        return self.regex.finditer(text)


class AddedTokens:
    """The added tokens of one tokenizer, as ``tokenizers`` matches them.

    ``normalize`` is the tokenizer's normalizer as a ``str -> str`` function
    (or ``None``): the content of a ``normalized=true`` token is matched in
    its normalized spelling.

    >>> AddedTokens([AddedToken("AB", 5)], normalize=str.lower).find_matches("xabx", normalized=True)
    [(None, 0, 1), (5, 1, 3), (None, 3, 4)]
    """

    def __init__(self, tokens: list, normalize: Optional[Callable[[str], str]] = None) -> None:
        self.tokens = list(tokens)
        self.by_id = {}
        for t in self.tokens:
            self.by_id.setdefault(t.id, t)
        self.by_content = {t.content: t.id for t in self.tokens}
        self.special_contents = frozenset(t.content for t in self.tokens if t.special)
        #: whether a second pass looks for tokens in the normalized text
        self.any_normalized = any(t.normalized for t in self.tokens)
        self._normalize = normalize
        self._matchers: dict = {}

    def matcher(self, normalized: bool, allowed: Optional[frozenset] = None) -> _Matcher:
        """The matcher of one pass (``allowed``: the ids that may match, all by default)."""
        key = (normalized, allowed)
        found = self._matchers.get(key)
        if found is None:
            entries = []
            for t in self.tokens:
                if t.normalized != normalized or (allowed is not None and t.id not in allowed):
                    continue
                text = t.content
                if normalized and self._normalize is not None:
                    text = self._normalize(text)
                entries.append((text, t))
            found = self._matchers[key] = _Matcher(entries)
        return found

    def occur_in(self, text: str, *, normalized: bool,
                 allowed: Optional[frozenset] = None) -> bool:
        """Whether some token of one pass occurs in ``text`` (where it may
        still not match: a ``single_word`` token beside a letter).

        >>> AddedTokens([AddedToken("<m>", 3)]).occur_in("a<m>", normalized=True)
        True
        """
        return self.matcher(normalized, allowed).occurs(text)

    def find_matches(self, text: str, *, normalized: bool,
                     allowed: Optional[frozenset] = None) -> list:
        """``[(id or None, start, end)]`` covering ``text``: the added tokens
        of one pass and the stretches between them (char offsets).

        >>> AddedTokens([AddedToken("<m>", 3, single_word=True)]).find_matches(
        ...     "a<m> <m>", normalized=True)
        [(None, 0, 5), (3, 5, 8)]
        """
        if not text:
            return [(None, 0, 0)]
        matcher = self.matcher(normalized, allowed)
        out = []
        done = 0
        n = len(text)
        for m in matcher.finditer(text):
            start, stop = m.start(), m.end()
            token = matcher.by_text[m.group()]
            if token.single_word:
                if start > 0 and is_word_char(text[start - 1]):
                    continue
                if stop < n and is_word_char(text[stop]):
                    continue
            if token.lstrip:
                s = start
                while s > 0 and text[s - 1] in WHITE_SPACE:
                    s -= 1
                start = max(s, done)
            if token.rstrip:
                while stop < n and text[stop] in WHITE_SPACE:
                    stop += 1
            if done < start:
                out.append((None, done, start))
            out.append((token.id, start, stop))
            done = stop
        if done != n:
            out.append((None, done, n))
        return out
