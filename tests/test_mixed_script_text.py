"""Short texts mixing scripts (CJK, Latin-1, Greek/Cyrillic, kana, Hangul,
Arabic, punctuation, emoji) against tiktoken.

Merging starts from whole characters where that is provably safe for the
character's neighbours (atomic characters, see fasttok.shared._tables); these
texts put every kind of neighbour next to every kind of character.
"""

from __future__ import annotations

import random

import pytest

from conftest import assert_same_ids

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


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "r50k_base"])
def test_mixed_script_texts_match_tiktoken(name, encoding_pair):
    ours, theirs = encoding_pair(name)
    rng = random.Random(20261130)
    for _ in range(5000):
        pools = rng.sample(POOLS, rng.randint(1, 3))
        text = "".join(rng.choice(rng.choice(pools)) for _ in range(rng.randint(1, 60)))
        assert_same_ids(ours.encode_ordinary(text), theirs.encode_ordinary(text), text)
