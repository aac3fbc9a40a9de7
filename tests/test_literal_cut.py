"""The compiled cut of a text at literal strings (added tokens) is the
regex split it replaces: leftmost first, then longest, as ``tokenizers``'
Aho-Corasick ``LeftmostLongest``; its ``find`` of the first string a mask
selects is the regex search of those strings (an encoding's
disallowed-special check)."""

from __future__ import annotations

import gc
import sys
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fasttok.shared._literal_cut import LiteralCut
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


def test_a_few_first_bytes_are_each_searched_and_the_nearest_taken():
    # two to four first bytes: each found by the C library's search, the
    # nearest match first whatever order the strings come in
    cut = LiteralCut(["<a>", "[b]", "{c}"])
    assert cut.split("[<{ x{c}[b]<a>") == ["[<{ x", "{c}", "", "[b]", "", "<a>", ""]
    assert cut.find("<x[b]<a>", b"\1\1\1") == 1


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(_ALPHABET, min_size=1, max_size=3), min_size=2, max_size=4),
       st.text(_ALPHABET, max_size=24))
def test_a_few_first_bytes_are_searched_as_the_rest(strings, text):
    assert LiteralCut(strings).split(text) == _regex_split(strings, text)


def _regex_find(strings: list, mask: bytes, text: str) -> int:
    # the first match among the selected strings, as the index of its last
    # place in strings (a repeated string is selected by that place's byte)
    last = {s: k for k, s in enumerate(strings)}
    pattern = longest_first([s for s, k in last.items() if mask[k]])
    found = None if pattern is None else pattern.search(text)
    return -1 if found is None else last[found.group()]


def test_find_gives_the_index_of_the_first_selected_string():
    cut = LiteralCut(["<a>", "<ab>", "b"])
    assert cut.find("x<ab>", b"\1\1\1") == 1
    assert cut.find("x<ab>", b"\1\0\1") == 2  # <ab> left out: the b inside it
    assert cut.find("x", b"\1\1\1") == -1


def test_a_repeated_string_is_found_as_its_last_index_and_selected_by_it():
    cut = LiteralCut(["<a>", "x", "<a>"])
    assert cut.find("<a>", b"\1\1\1") == 2
    assert cut.find("<a>", b"\1\1\0") == -1


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(_ALPHABET, max_size=4), max_size=8), st.text(_ALPHABET, max_size=30),
       st.randoms(use_true_random=False))
def test_the_cut_is_the_same_whatever_order_the_strings_come_in(strings, text, rng):
    shuffled = list(strings)
    rng.shuffle(shuffled)
    assert LiteralCut(shuffled).split(text) == LiteralCut(strings).split(text)


def test_find_searches_a_text_with_a_lone_surrogate():
    assert LiteralCut(["<s>"]).find("\ud800<s>", b"\1") == 0


def test_find_refuses_a_mask_shorter_than_the_strings():
    with pytest.raises(ValueError, match="2 bytes for 3 strings"):
        LiteralCut(["a", "b", "c"]).find("a", b"\1\1")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(_ALPHABET, max_size=4), max_size=6).flatmap(
    lambda strings: st.tuples(st.just(strings),
                              st.binary(min_size=len(strings), max_size=len(strings)))),
       st.text(_ALPHABET, max_size=20))
def test_find_is_the_regex_search_of_the_selected_strings(strings_and_mask, text):
    strings, mask = strings_and_mask
    assert LiteralCut(strings).find(text, mask) == _regex_find(strings, mask, text)


# occurs: the test every compiled walk asks of a text before it walks it whole

_WIDE = st.sampled_from(list("ab<>[\n é日ÿĀ") + ["\U0001f600", "\u0301", "\ud800", "\udfff", "\ud7ff"])


def test_occurs_finds_a_string_in_a_text_of_each_width():
    cut = LiteralCut(["<s>", "é!", "▁x"])
    assert [cut.occurs(t) for t in ["a<s>", "aé!", "日▁x", "😀<s>"]] == [True] * 4
    assert [cut.occurs(t) for t in ["a<s", "ée!", "日▁", "😀<"]] == [False] * 4


def test_a_lone_surrogate_occurs_only_when_asked_for():
    # the BPE walk leaves a text without UTF-8 to the cut, which declines it
    assert not LiteralCut(["<s>"]).occurs("日\ud800")
    assert LiteralCut(["<s>"]).occurs("日\ud800", True)
    assert LiteralCut([]).occurs("\udfff", True)
    assert LiteralCut(["\ud800"]).occurs("a\ud800")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(_WIDE, max_size=3), max_size=10), st.text(_WIDE, max_size=40),
       st.booleans())
def test_occurs_is_whether_some_string_is_in_the_text(strings, text, surrogates):
    # (up to ten strings: memchr, the UCS-2 search eight units at a time
    # and the unit-by-unit search each take some)
    expected = any(s and s in text for s in strings) or (
        surrogates and any(0xD800 <= ord(c) < 0xE000 for c in text))
    assert LiteralCut(strings).occurs(text, surrogates) == expected


@pytest.mark.parametrize("at", range(0, 80))
@pytest.mark.parametrize("wide", ["日", "\U0001f600"])
def test_strings_of_one_first_character_are_found_at_every_place_of_a_ucs2_or_ucs4_text(at, wide):
    # (one first character is searched 32 units a step of a 2-byte str, 16
    # of a 4-byte one, then unit by unit)
    cut = LiteralCut(["[CLS]", "[SEP]"])
    for n in (at + 5, at + 6, 100):
        text = (wide + "日" * at + "[SEP]" + "x" * n)[:n + 1]
        assert cut.occurs(text) == ("[SEP]" in text), (at, n)
        assert cut.occurs(text.replace("[SEP]", "[SEx]")) is False, (at, n)


def test_searches_on_threads_at_once_share_one_trie_built_by_the_first():
    # a batch's first texts on a new tokenizer ask a new LiteralCut from
    # every thread at once: each search sees no trie or the whole trie
    # (tests/test_hf_tokenizer_json.py crashed on a half-built one); Python
    # code run at each collection lets threads switch inside the build
    strings = [f"<tok{i}>" for i in range(3000)] + ["ab", "a", "\u00e9t\u00e9", "\u4e16"]
    texts = ["x<tok17>yab<tok2999>z" * 20, "\u00e9t\u00e9 \u4e16", "no token here", "\u00e9x"]
    want = [(LiteralCut(strings).split(t), LiteralCut(strings).occurs(t)) for t in texts]
    found = []

    def switch_here(phase, info):
        pass

    interval, threshold = sys.getswitchinterval(), gc.get_threshold()
    gc.callbacks.append(switch_here)
    sys.setswitchinterval(1e-6)
    gc.set_threshold(5)
    try:
        for _ in range(10):
            cut = LiteralCut(strings)
            start = threading.Barrier(6)

            def search(k):
                start.wait()
                found.append([(cut.split(t), cut.occurs(t)) for t in texts[k % 2:] + texts[:k % 2]])

            threads = [threading.Thread(target=search, args=(k,)) for k in range(6)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    finally:
        gc.callbacks.remove(switch_here)
        sys.setswitchinterval(interval)
        gc.set_threshold(*threshold)
    assert len(found) == 60
    assert all(sorted(f) == sorted(want) for f in found)
