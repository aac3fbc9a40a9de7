"""Cuts in byte-level BPE: points of a piece that no token can cross.

A piece is merged a run of parts at a time between such points (``_crossable``
in ``fasttok/models/_bpe.pyx``): where no token holds the two bytes either
side (``token_bigrams``), none starts or ends with them (``token_edges``) and
none holds the four bytes around the point (``token_windows``). Each rule
below has a vocabulary where leaving it out would cut where a token crosses;
the property tests run Chinese and mixed text, short and long pieces, against
tiktoken.
"""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import assert_same_ids
from fasttok.formats.tiktoken import byte_bpe_model
from fasttok.shared._tables import TokenTables

BYTES = [bytes([b]) for b in range(256)]
E_ACUTE = "é".encode("utf-8")  # a character that is a token: the parts start from it whole


def _encode(tokens: list, text: str) -> list:
    # ranks by position; every piece goes through the merges
    return byte_bpe_model(TokenTables(tokens), {}, r"\S+|\s+",
                          whole_piece_lookup=False).encode_ordinary(text)


def test_a_token_that_starts_or_ends_at_the_point_keeps_it_whole_in_a_short_piece():
    # "xy" is a token of two bytes: the four bytes around x|y are in no token
    assert _encode(BYTES + [E_ACUTE, b"xy"], "éxyé") == [256, 257, 256]


def test_a_token_that_starts_or_ends_at_the_point_keeps_it_whole_in_a_long_piece():
    text = "a" * 30 + "xy" + "b" * 30
    assert _encode(BYTES + [b"xy"], text) == [ord("a")] * 30 + [256] + [ord("b")] * 30


def test_a_token_holding_the_four_bytes_around_the_point_keeps_it_whole():
    # "wxyz" is built from "wx" and "yz": no token starts or ends with "xy"
    tokens = BYTES + [E_ACUTE, b"wx", b"yz", b"wxyz"]
    assert _encode(tokens, "éwxyzé") == [256, 259, 256]
    assert _encode(tokens, "a" * 30 + "wxyz" + "b" * 30) == [ord("a")] * 30 + [259] + [ord("b")] * 30


def test_bytes_no_token_holds_together_are_cut():
    assert _encode(BYTES + [E_ACUTE, b"xy"], "éx") == [256, ord("x")]


SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

# Characters of Chinese text (common ideographs, CJK punctuation, full-width
# forms) with a little kana, Hangul, Latin and digits: a run of letters is one
# piece, short (the linear merge) or, past 48 bytes, long (the merge queue).
CJK_TEXT = st.text(
    st.sampled_from("的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过"
                    "家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经"
                    "齊宣王見顏斶曰前亦说臣闻古之君子，。、；：？！「」《》（）０１ＡＢ")
    | st.sampled_from("のはにをがアイウ한국어abcXYZ019 "),
    min_size=1, max_size=80)


@SETTINGS
@given(text=CJK_TEXT)
@example(text="齊宣王見顏斶，曰：「斶前！」斶亦曰：「王前！」")
@example(text="的" * 17 + "一是不了人我在有他这中大来上国个到说们为子和你地出道也时年")
def test_chinese_and_mixed_text_matches_tiktoken_cl100k(encoding_pair, text):
    ours, theirs = encoding_pair("cl100k_base")
    assert_same_ids(ours.encode_ordinary(text), theirs.encode_ordinary(text), text, enc=theirs)


@SETTINGS
@given(text=CJK_TEXT)
@example(text="齊宣王見顏斶，曰：「斶前！」斶亦曰：「王前！」")
def test_chinese_and_mixed_text_matches_tiktoken_o200k(encoding_pair, text):
    ours, theirs = encoding_pair("o200k_base")
    assert_same_ids(ours.encode_ordinary(text), theirs.encode_ordinary(text), text, enc=theirs)
