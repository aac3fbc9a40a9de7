"""Leftmost-longest search over literal strings (added and special tokens),
checked against the rule spelled out by brute force."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fasttok.shared.literal_match import longest_first


def brute_force(texts: list, text: str) -> list:
    # at each place the longest string that starts there; after a match,
    # the search goes on where it ended
    found, i = [], 0
    while i < len(text):
        here = [t for t in texts if t and text.startswith(t, i)]
        if here:
            best = max(here, key=len)
            found.append(best)
            i += len(best)
        else:
            i += 1
    return found


ALPHABET = "ab<>\n|()[].*\\?é中"


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(st.text(ALPHABET, max_size=5), max_size=12),
       text=st.text(ALPHABET, max_size=40))
def test_matches_are_leftmost_then_longest(texts, text):
    pattern = longest_first(texts)
    got = [] if pattern is None else pattern.findall(text)
    assert got == brute_force(texts, text)


def test_a_shorter_string_is_taken_where_the_longer_ones_fail():
    assert longest_first(["<unused1>", "<unused12>", "<u"]).findall("<unused1x<unused12>") == \
        ["<u", "<unused12>"]


def test_runs_of_one_character_take_the_longest_string():
    runs = ["\n" * k for k in range(1, 31)]
    assert longest_first(runs).findall("\n" * 65) == ["\n" * 30, "\n" * 30, "\n" * 5]


def test_regex_metacharacters_are_literal():
    assert longest_first(["a.b", "(x)", "\\"]).findall("axb a.b (x) \\") == ["a.b", "(x)", "\\"]


def test_no_strings_or_only_empty_ones_give_no_pattern():
    assert longest_first([]) is None
    assert longest_first([""]) is None


def test_a_long_chain_of_prefixes_compiles_and_still_takes_the_longest():
    runs = ["a" * k for k in range(1, 700)]
    assert longest_first(runs).findall("a" * 1000 + "b" + "aa") == ["a" * 699, "a" * 301, "aa"]


def test_a_long_chain_of_branches_compiles():
    texts = ["x" * k + c for k in range(1, 400) for c in "yz"]
    assert longest_first(texts).findall("xxxz xy") == ["xxxz", "xy"]
