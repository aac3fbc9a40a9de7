"""Cuts in byte-level BPE: points of a piece that no token can cross.

A piece is merged a run of parts at a time between such points (``_crossable``
in ``fasttok/models/_bpe.pyx``): where no token holds the two bytes either
side (``token_bigrams``), none starts or ends with them (``token_edges``) and
none holds the four bytes around the point (``token_windows``). Each rule
below has a vocabulary where leaving it out would cut where a token crosses;
A character between two cuts is looked up in a table of each character's own
encoding (``char_ids`` in ``fasttok/shared/_tables.pxd``), learned the first
time, and a stretch of up to 16 bytes between cuts in the thread's memo
(``StretchEntry`` in ``fasttok/models/_bpe.pxd``); the tests here encode each
text twice, so both the learning and the reading give the ids. The property tests run Chinese and mixed text, short and
long pieces and runs of one character, against tiktoken and tokenizers.
"""

from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import DATA, assert_same_ids, data_file, without_truncation_or_padding
import fasttok
from fasttok.formats.tiktoken import byte_bpe_model
from fasttok.shared._tables import TokenTables

BYTES = [bytes([b]) for b in range(256)]
E_ACUTE = "é".encode("utf-8")  # a character that is a token: the parts start from it whole


def _encode(tokens: list, text: str) -> list:
    # ranks by position; every piece goes through the merges; each text (no
    # spaces) is encoded twice (a character's table entry learned, then
    # read), then many times in a text long enough to take the thread's memo
    # (a stretch of characters kept there, then read)
    model = byte_bpe_model(TokenTables(tokens), {}, r"\S+|\s+", whole_piece_lookup=False)
    first = model.encode_ordinary(text)
    assert model.encode_ordinary(text) == first
    copies = 4096 // len(text.encode("utf-8"))
    assert model.encode_ordinary(" ".join([text] * copies)) == ([*first, ord(" ")] * copies)[:-1]
    return first


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


ZHONG = "中".encode("utf-8")
WEN = "文".encode("utf-8")


def test_a_character_that_is_no_token_between_cuts_is_its_own_bytes_merged():
    # 中's first two bytes are a token, its last byte stays alone; the
    # byte pair between two 中 is in no token
    ids = [256, ZHONG[2]]
    assert _encode(BYTES + [ZHONG[:2]], "中中中") == ids * 3
    assert _encode(BYTES + [ZHONG[:2]], "a中") == [ord("a")] + ids


def test_a_token_across_two_characters_keeps_them_merged_together():
    # 中's last byte and 文's first make a token ranked after 中's first two
    # bytes: alone each character would be [256, 中[2]] and its three bytes
    tokens = BYTES + [ZHONG[:2], ZHONG[2:] + WEN[:1]]
    assert _encode(tokens, "中文") == [256, 257, WEN[1], WEN[2]]
    assert _encode(tokens, "文中文中") == [WEN[0], WEN[1], WEN[2], 256, 257, WEN[1], WEN[2], 256, ZHONG[2]]


def test_stretches_that_differ_only_past_their_eighth_byte_keep_their_own_ids():
    # both boundaries are crossed by a token: each piece is one stretch of
    # 9 bytes, and 中 and 丰 share their first two bytes
    feng = "丰".encode("utf-8")
    tokens = BYTES + [ZHONG[2:] + WEN[:1], WEN[2:] + ZHONG[:1]]
    one = [ZHONG[0], ZHONG[1], 256, WEN[1], 257, ZHONG[1], ZHONG[2]]
    other = one[:-1] + [feng[2]]
    assert _encode(tokens, "中文中") == one
    assert _encode(tokens, "中文丰") == other
    model = byte_bpe_model(TokenTables(tokens), {}, r"\S+|\s+", whole_piece_lookup=False)
    assert model.encode_ordinary("中文中 中文丰 " * 300) == [*one, ord(" "), *other, ord(" ")] * 300


def test_a_token_across_two_characters_ranked_first_takes_the_bytes_from_them():
    # the crossing token comes before 中's own merge: 中 is never whole
    tokens = BYTES + [ZHONG[2:] + WEN[:1], ZHONG[:2]]
    assert _encode(tokens, "中文") == [257, 256, WEN[1], WEN[2]]


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

# Runs of one character (of CJK, kana, Latin-1, a space) one after another.
REPEATED_TEXT = st.lists(st.tuples(st.sampled_from("的中文一们，。のアé ß0a"), st.integers(1, 30)),
                         min_size=1, max_size=6).map(lambda runs: "".join(c * k for c, k in runs))


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


@SETTINGS
@given(text=REPEATED_TEXT)
@example(text="的" * 30 + "中" * 30)
def test_runs_of_one_character_match_tiktoken(encoding_pair, text):
    for name in ("cl100k_base", "o200k_base"):
        ours, theirs = encoding_pair(name)
        assert_same_ids(ours.encode_ordinary(text), theirs.encode_ordinary(text), text, enc=theirs)


@functools.lru_cache(maxsize=None)
def _hf_pair(name: str) -> tuple:
    path = str(data_file(DATA / "vocab" / "hf" / name / "tokenizer.json"))
    tokenizers = pytest.importorskip("tokenizers")
    return fasttok.load(path), without_truncation_or_padding(tokenizers.Tokenizer.from_file(path))


@pytest.mark.parametrize("name", ["llama3", "qwen3"])
def test_chinese_mixed_and_repeated_text_matches_tokenizers_merge_lists(name):
    ours, theirs = _hf_pair(name)

    @SETTINGS
    @given(text=CJK_TEXT | REPEATED_TEXT)
    @example(text="齊宣王見顏斶，曰：「斶前！」斶亦曰：「王前！」")
    def check(text):
        assert ours.encode(text) == theirs.encode(text, add_special_tokens=False).ids, text

    check()
