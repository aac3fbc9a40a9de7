"""A short ASCII word that is no token is matched by probes of the token
index from the longest span down at each place (falling back on the
automaton past a budget of probes; past the word's start, from the longest
text without the word-start bytes unless the word holds them there): the
same ids as the automaton's greedy longest match
(:meth:`WordPieceModel.match_word`).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fasttok.models._wordpiece import APPEND, SPACE, CodePointRules, WordPieceModel

START = "\u2581".encode()
# word-initial and continuation pieces that overlap, a piece holding the
# word start, and no piece for "c": every way a cut can go
TOKENS = [b"[UNK]", START, START + b"a", START + b"ab", START + b"abb", b"a", b"b", b"ab",
          b"ba", b"bab", b"abab", b"bb", START + b"b" * 6, b"b" * 9]


def _rules():
    return CodePointRules(lambda cps: [(SPACE if cp == 32 else APPEND, cp) for cp in cps])


def _automaton(m, text):
    return [i for word in text.split() for i in m.match_word(START + word.encode())]


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from("ab c"), max_size=60))
def test_probing_gives_the_automaton_ids(text):
    m = WordPieceModel(TOKENS, 0)
    assert m.encode_with(text, _rules()) == _automaton(m, text)


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from("ab\u2581 "), max_size=40))
def test_probing_past_a_words_start_finds_word_start_texts_held_inside_it(text):
    # a place past the word's start is probed from the longest text without
    # the word-start bytes down (here 1 byte), unless the word holds them
    # there: then from the longest text of all (5 bytes)
    m = WordPieceModel([b"?", START + b"a", b"a", b"b", START + b"ab", START + b"bb"], 0)
    assert m.encode_with(text, _rules()) == _automaton(m, text)


def test_a_word_of_one_letter_pieces_past_the_budget_gives_the_automaton_ids():
    # twenty pieces of one byte: the probes from the longest span down run
    # out of budget and the automaton finishes the word
    m = WordPieceModel([b"[UNK]", START + b"x", b"x", b"y"], 0)
    word = "x" + "xy" * 10
    assert m.encode_with(word, _rules()) == _automaton(m, word) == [1] + [2, 3] * 10


def test_a_word_with_no_token_at_some_place_is_unknown():
    m = WordPieceModel(TOKENS, 0)
    assert m.encode_with("abc ab", _rules()) == [0, 3]
