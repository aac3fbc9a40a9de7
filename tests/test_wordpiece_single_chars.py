"""Words of one code point take their ids from tables the WordPiece model
makes (ASCII when it is built, the rest of the BMP when a str past Latin-1 is
first walked): the same ids as greedy longest match over the word.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fasttok.models._wordpiece import ALONE, SPACE, CodePointRules, WordPieceModel

START = "\u2581".encode()


def _alone():
    # every code point a word of its own, space a space
    return CodePointRules(lambda cps: [(SPACE if cp == 32 else ALONE, cp) for cp in cps])


def _model(texts, unk=0):
    return WordPieceModel([t if t is None or isinstance(t, bytes) else t.encode() for t in texts],
                          unk)


def test_a_token_word_is_its_token():
    m = _model([b"[UNK]", START + "世".encode(), START + b"a"])
    assert m.encode_with("世 a", _alone()) == [1, 2]


def test_a_word_no_token_starts_is_unknown():
    m = _model([b"[UNK]", START + b"a", "界".encode()])
    assert m.encode_with("世 \u00e9", _alone()) == [0, 0]


def test_a_word_whose_start_alone_is_a_token_is_matched():
    # the word start is a token, the character a continuation: two ids
    m = _model([b"[UNK]", START, "é".encode(), "世".encode()])
    assert m.encode_with("\u00e9 世", _alone()) == [1, 2, 1, 3]


def test_an_ascii_word_whose_start_alone_is_a_token_is_matched():
    m = _model([b"[UNK]", START, b"b", START + b"a"])
    assert m.encode_with("b a", _alone()) == [1, 2, 3]


def test_a_word_whose_first_bytes_start_a_token_is_matched():
    # a token of the word start and the first byte of a two-byte character
    m = _model([b"[UNK]", START + b"\xc3", b"\xa9"])
    assert m.encode_with("\u00e9 \u4e16", _alone()) == [1, 2, 0]


def test_without_an_unknown_token_a_word_none_starts_gives_nothing():
    m = WordPieceModel([START + b"a"], None)
    assert m.encode_with("世 a", _alone()) == [0]


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(max_codepoint=0xFFFF, exclude_categories=("Cs",)), max_size=8))
def test_one_code_point_words_equal_longest_match(text):
    # a vocabulary holding some characters whole, some after the start
    # alone, and bytes of others
    m = _model([b"[UNK]", START, START + "é".encode(), "é".encode(), START + "世".encode(),
                "界".encode(), b"\xe4", START + b"\xe4\xb8"])
    text += " \u4e16"  # past Latin-1: the table is made
    words = [c for c in text if c != " "]
    expected = [i for c in words for i in m.match_word(START + c.encode())]
    assert m.encode_with(text, _alone()) == expected
