"""The compiled cut of a text at literal strings (added tokens) is the
regex split it replaces: leftmost first, then longest, as ``tokenizers``'
Aho-Corasick ``LeftmostLongest``."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fasttok.added_tokens._literal_cut import LiteralCut
from fasttok.shared.literal_match import longest_first

_ALPHABET = st.sampled_from(list("ab<>\n é日") + ["\U0001f600", "\u0301"])


def _regex_split(strings: list, text: str) -> list:
    pattern = longest_first(strings, group=True)
    return [text] if pattern is None else pattern.split(text)


def test_the_longest_string_at_the_leftmost_place_is_cut_out():
    assert LiteralCut(["<a>", "<ab>", "\n"]).split("x<ab>\n<a>") == \
        ["x", "<ab>", "", "\n", "", "<a>", ""]


def test_cut_places_are_characters_of_the_text():
    assert LiteralCut(["日"]).split("é日😀日") == ["é", "日", "😀", "日", ""]


def test_a_text_with_a_lone_surrogate_is_not_cut():
    assert LiteralCut(["a"]).split("a\ud800") is None


def test_no_strings_and_empty_strings_cut_nothing():
    assert LiteralCut([]).split("abc") == ["abc"]
    assert LiteralCut([""]).split("abc") == ["abc"]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(_ALPHABET, max_size=4), max_size=6), st.text(_ALPHABET, max_size=20))
def test_the_cut_is_the_regex_split(strings, text):
    assert LiteralCut(strings).split(text) == _regex_split(strings, text)


@settings(max_examples=100, deadline=None)
@given(st.text(_ALPHABET, min_size=1, max_size=4), st.text(_ALPHABET, max_size=20))
def test_one_first_byte_is_searched_as_the_rest(string, text):
    # strings sharing their first byte take the C library's search
    strings = [string, string + "a", string[:1]]
    assert LiteralCut(strings).split(text) == _regex_split(strings, text)
