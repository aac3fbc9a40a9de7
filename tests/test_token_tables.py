"""The compiled token tables behind every BPE model (``fasttok.shared._tables``).

BPE may start merging from whole characters (``atomic_char_count``) only
where that cannot change its result: with ranks, and with a merge list whose
merges spell their token; a character that no merge builds stays bytes.
"""

from __future__ import annotations

import random

import pytest

from fasttok.formats.tiktoken import byte_bpe_model
from fasttok.shared._tables import TokenTables

BYTES = [bytes([b]) for b in range(256)]
E_ACUTE = "é".encode("utf-8")  # c3 a9


def _encode(tables: TokenTables, text: str) -> list:
    # no whole-piece shortcut: every piece goes through the merges
    return byte_bpe_model(tables, {}, r"\S+|\s+",
                          whole_piece_lookup=False).encode_ordinary(text)


def test_rank_tables_start_merging_from_whole_characters():
    assert TokenTables(BYTES + [E_ACUTE]).atomic_char_count == 1


def test_merge_list_tables_start_merging_from_whole_characters():
    tables = TokenTables(BYTES + [E_ACUTE], merge_tokens=[(E_ACUTE[:1], E_ACUTE[1:])])
    assert tables.atomic_char_count == 1
    assert _encode(tables, "é") == [256]


def test_a_character_no_merge_builds_stays_bytes():
    tables = TokenTables(BYTES + [E_ACUTE, b"ab"], merge_tokens=[(b"a", b"b")])
    assert tables.atomic_char_count == 0
    assert _encode(tables, "é") == list(E_ACUTE)


def test_merges_that_make_other_tokens_than_their_parts_leave_characters_as_bytes():
    merged = TokenTables(BYTES + [E_ACUTE, b"x"], merges=[(0xC3, 0xA9, 257)])
    assert merged.atomic_char_count == 0


def test_a_character_is_not_whole_when_an_earlier_merge_crosses_its_edge():
    # "aé": the merge (a, c3) comes first, so é never forms after an a
    tables = TokenTables(BYTES + [b"a\xc3", E_ACUTE],
                         merge_tokens=[(b"a", b"\xc3"), (E_ACUTE[:1], E_ACUTE[1:])])
    assert _encode(tables, "aé") == [256, 0xA9]
    assert _encode(tables, "é") == [257]


def test_every_listed_merge_is_found_and_no_other_pair():
    rng = random.Random(7)
    tokens = list(BYTES)
    merges = []
    for _ in range(3000):
        left, right = rng.randrange(len(tokens)), rng.randrange(len(tokens))
        joined = tokens[left] + tokens[right]
        if joined in tokens or len(joined) > 8:
            continue
        merges.append((left, right))
        tokens.append(joined)
    tables = TokenTables(tokens, merges=merges)
    for priority, (left, right) in enumerate(merges):
        assert tables.pair(left, right) == (tokens.index(tokens[left] + tokens[right]), priority)
    listed = set(merges)
    unlisted = [(a, b) for a, b in ((rng.randrange(len(tokens)), rng.randrange(len(tokens)))
                                    for _ in range(3000)) if (a, b) not in listed]
    assert all(tables.pair(a, b) is None for a, b in unlisted)


def test_a_piece_that_is_a_token_no_merge_builds_is_merged_every_time():
    # "abc" is a token, but the merges only ever make (a, bc)
    tables = TokenTables(BYTES + [b"bc", b"abc"], merge_tokens=[(b"b", b"c")])
    model = byte_bpe_model(tables, {}, r"\S+", whole_piece_lookup=False)
    assert [model.encode_ordinary("abc") for _ in range(3)] == [[97, 256]] * 3


def test_a_piece_that_merges_back_into_its_token_is_that_token_every_time():
    tables = TokenTables(BYTES + [b"ab", b"abc"], merge_tokens=[(b"a", b"b"), (b"ab", b"c")])
    model = byte_bpe_model(tables, {}, r"\S+", whole_piece_lookup=False)
    assert [model.encode_ordinary("abc") for _ in range(3)] == [[257]] * 3


def test_merge_list_tables_read_back_keep_their_whole_characters():
    tables = TokenTables(BYTES + [E_ACUTE], merge_tokens=[(E_ACUTE[:1], E_ACUTE[1:])])
    assert TokenTables.from_bytes(tables.to_bytes()).atomic_char_count == 1


def test_tables_read_back_whose_merges_make_other_tokens_keep_bytes():
    merged = TokenTables(BYTES + [E_ACUTE, b"x"], merges=[(0xC3, 0xA9, 257)])
    assert TokenTables.from_bytes(merged.to_bytes()).atomic_char_count == 0


def test_short_calls_alternating_between_vocabularies_keep_each_ones_ids():
    # a thread's pair memo belongs to one vocabulary's tables at a time;
    # short calls use it only when it is theirs, long ones take it over
    import fasttok

    a, b = fasttok.get_encoding("cl100k_base"), fasttok.get_encoding("o200k_base")
    lines = ["hello wörld", "  def f(x):", "中文字符 text", "aaaa bbbb", "x" * 40]
    want_a, want_b = [a.encode(t) for t in lines], [b.encode(t) for t in lines]
    long_text = " ".join(lines) * 100
    got_a, got_b = [], []
    for t in lines:
        got_a.append(a.encode(t))
        b.encode(long_text)
        got_b.append(b.encode(t))
        a.encode(long_text)
    assert (got_a, got_b) == (want_a, want_b)


# Keys of 9 to 16 bytes: the slot holds the first 8 bytes, index.tails the last 8.
LONG = [b"abcdefghXYZ", b"abcdefghXYW", b"abcdefgh12345678", b"abcdefgh12345678!"]


def test_keys_of_9_to_16_bytes_with_the_same_first_8_are_told_apart_by_their_last_8():
    tables = TokenTables(BYTES + LONG)
    assert [tables.find(t) for t in LONG] == [256, 257, 258, 259]
    assert [tables.find(t) for t in (b"abcdefghXYV", b"abcdefgh12345679", b"abcdefgh1234567!")] \
        == [-1, -1, -1]


def test_tables_read_back_tell_long_keys_apart_like_the_built_ones():
    back = TokenTables.from_bytes(TokenTables(BYTES + LONG).to_bytes())
    assert [back.find(t) for t in LONG + [b"abcdefghXYV"]] == [256, 257, 258, 259, -1]


def test_a_piece_differing_from_a_token_in_its_last_bytes_is_not_that_token():
    from fasttok.formats._byte_bpe import CoreBPE

    core = CoreBPE(TokenTables(BYTES + [b" abcdefghXYZ"]), {}, scanner="gpt2")
    assert core.encode_ordinary(" abcdefghXYZ abcdefghXYW") == [256] + list(b" abcdefghXYW")


def test_lookup_only_tables_find_what_full_tables_find_and_build_no_merge_tables():
    tokens = BYTES + [E_ACUTE, b"ab", b"abc", "\u2581word".encode(), b"x" * 40]
    full, lookup = TokenTables(tokens), TokenTables(tokens, lookup_only=True)
    for data in tokens + [b"", b"abcd", b"x" * 41, E_ACUTE[::-1]]:
        assert lookup.find(data) == full.find(data)
    assert lookup.pair(ord("a"), ord("b")) == full.pair(ord("a"), ord("b"))
    assert full.atomic_char_count == 1 and lookup.atomic_char_count == 0
    with pytest.raises(ValueError, match="no merges"):
        TokenTables(tokens, merges=[(97, 98)], lookup_only=True)
