"""Iterating the matches of a pattern that can match empty, as Oniguruma's
``find_iter`` does (an empty match right after a match is skipped), costs
work linear in the text, counted in searches, never in seconds; a pattern
that makes the linear engine rescan the text is refused by its budget
first (:func:`fasttok.shared.normalized.match_spans`, which the Split and
Replace stages and the Replace decoder share; the decoder's own search loop
had no budget: ``(?:a+b)?`` on a fused run of 20,000 ``a`` took 11 s).
"""

from __future__ import annotations

import pytest

from fasttok.decoders.hf_replace import Replace
from fasttok.errors import FasttokError
from fasttok.shared.normalized import match_spans
from fasttok.shared.regex_translate import compile_onig

EMPTY_MATCHING = [r"a*", r"x*", r"", r"a*?", r"a{0,3}", r"\s*", r"a+b|", r"(?:a+b)?"]
TEXTS = {"letters": "a", "pairs": "ab", "words": "aaaa b"}


class _CountedSearches:
    """A compiled pattern whose ``search`` calls are counted."""

    def __init__(self, pattern: str) -> None:
        self.compiled = compile_onig(pattern)
        self.searches = 0

    def finditer(self, text: str):
        return self.compiled.finditer(text)

    def search(self, text: str, pos: int):
        self.searches += 1
        return self.compiled.search(text, pos)


def _searches(pattern: str, text: str):
    counted = _CountedSearches(pattern)
    try:
        match_spans(counted, text)
    except FasttokError:
        return None  # refused by the engine's budget before the search loop
    return counted.searches


@pytest.mark.parametrize("pattern", EMPTY_MATCHING)
@pytest.mark.parametrize("kind", sorted(TEXTS))
def test_the_search_loop_makes_at_most_one_search_a_position(pattern, kind):
    for n in (500, 2000):
        text = (TEXTS[kind] * n)[:n]
        searches = _searches(pattern, text)
        assert searches is None or searches <= len(text) + 2, (n, searches)


@pytest.mark.parametrize("pattern", ["(?:a+b)?", "a+b|", "(?:[a ]+x)?"])
def test_a_pattern_that_rescans_the_text_is_refused_before_the_search_loop(pattern):
    with pytest.raises(FasttokError, match="go over this text"):
        match_spans(_CountedSearches(pattern), "a" * 5000)


def test_the_replace_decoder_is_refused_where_its_pattern_rescans():
    # its own loop searched again from every position: quadratic, unbounded
    with pytest.raises(FasttokError, match="go over this text"):
        Replace(regex="(?:a+b)?", content="-").decode(["a" * 5000])


@pytest.mark.parametrize("pattern, text, expected", [
    ("a*", "baac", "-b-c-"), ("", "ab", "-a-b-"), ("a|", "aab", "--b-"), ("x*", "", ""),
])
def test_the_replace_decoder_skips_an_empty_match_after_a_match(pattern, text, expected):
    assert Replace(regex=pattern, content="-").decode([text]) == expected
