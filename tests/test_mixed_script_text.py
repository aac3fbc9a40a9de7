"""Short texts mixing scripts (CJK, Latin-1, Greek/Cyrillic, kana, Hangul,
Arabic, punctuation, emoji) against tiktoken, and against ``tokenizers`` on
the byte-level ``tokenizer.json`` files, whose merge lists give the priority.

Merging starts from whole characters where that is provably safe for the
character's neighbours (atomic characters, see fasttok.shared._tables); these
texts put every kind of neighbour next to every kind of character.
"""

from __future__ import annotations

import random

import pytest

import fasttok
from conftest import DATA, HF_BYTE_LEVEL, assert_same_ids, missing_data_reason

POOLS = [
    [chr(c) for c in range(0x4E00, 0x4E00 + 400)],
    [chr(c) for c in range(0xA1, 0x250)],
    [chr(c) for c in range(0x391, 0x4FF)],
    list("abcdefghijklmnopqrstuvwxyz ,.!?'\"-\n\t0123456789"),
    [chr(c) for c in range(0x3040, 0x30FF)],
    [chr(c) for c in range(0xAC00, 0xAC00 + 300)],
    [chr(c) for c in range(0x600, 0x6FF)],
    [chr(c) for c in range(0x2000, 0x206F)],
    ["😀", "👍", "\u200d", "\ufe0f"],
]


def _mixed_texts(count: int):
    rng = random.Random(20261130)
    for _ in range(count):
        pools = rng.sample(POOLS, rng.randint(1, 3))
        yield "".join(rng.choice(rng.choice(pools)) for _ in range(rng.randint(1, 60)))


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "r50k_base"])
def test_mixed_script_texts_match_tiktoken(name, encoding_pair):
    ours, theirs = encoding_pair(name)
    for text in _mixed_texts(5000):
        assert_same_ids(ours.encode_ordinary(text), theirs.encode_ordinary(text), text)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_texts_around_the_stack_room_for_their_utf8_match_tiktoken(name, encoding_pair):
    # a line whose UTF-8 may take up to 1,024 bytes (fasttok.shared._utf8's
    # UTF8_ROOM: 3 a character of a 2-byte str, 2 of a 1-byte one, 4 of a
    # 4-byte one) is transcoded on the stack, a longer one into a buffer of
    # its own: every kind of str just under, at and over that size
    ours, theirs = encoding_pair(name)
    for unit, width in (("\xe9t\xe9 ", 2), ("\u65e5\u672c\u8a9e ", 3), ("\u043c\u0438\u0440 ", 3),
                        ("\U0001f600 a", 4)):
        for size in (1016, 1020, 1023, 1024, 1025, 1028, 1032):
            text = (unit * size)[:size // width]
            assert_same_ids(ours.encode_ordinary(text), theirs.encode_ordinary(text), text)
            assert_same_ids(ours.encode_ordinary(text + "\ud800"),
                            theirs.encode_ordinary(text + "\ud800"), text + "\ud800")


@pytest.mark.parametrize("name", HF_BYTE_LEVEL)
def test_mixed_script_texts_match_tokenizers_on_merge_lists(name):
    tokenizers = pytest.importorskip("tokenizers")
    path = DATA / "vocab" / "hf" / name / "tokenizer.json"
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    ours, theirs = fasttok.load(str(path)), tokenizers.Tokenizer.from_file(str(path))
    for text in _mixed_texts(3000):
        assert_same_ids(ours.encode_ordinary(text),
                        theirs.encode(text, add_special_tokens=False).ids, text)
