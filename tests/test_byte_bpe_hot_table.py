"""The hot table of a byte-level BPE model (``CoreBPE._fill_hot``): the
frequent pieces of 2 to 7 bytes that encode to one token, answered without
hashing the piece or reading the token index.

It must give what merging gives: a short token answers for its own bytes
only (not for a longer piece that starts with them), a collision of two
short tokens in one slot leaves the second one to the index, and a model
without the whole-piece lookup keeps out a token that BPE of its bytes
does not build.
"""

from __future__ import annotations

from conftest import assert_same_ids, encoding_pair
from fasttok.formats.tiktoken import byte_bpe_model
from fasttok.shared._tables import TokenTables

BYTES = [bytes([b]) for b in range(256)]
# the codes _fill_hot tries: HOT_TRIED << HOT_BITS
TRIED = 8 << 13


def _short_frequent_tokens(enc) -> list:
    out = []
    for code in range(TRIED):
        data = enc.decode_single_token_bytes(code)
        if 2 <= len(data) <= 7:
            try:
                out.append(data.decode("utf-8"))
            except UnicodeDecodeError:
                pass
    return out


def test_every_short_frequent_token_alone_gives_tiktokens_ids():
    # every candidate of the table, whether it won its slot or lost it
    pair = encoding_pair("cl100k_base")
    texts = _short_frequent_tokens(pair.theirs)
    assert len(texts) > 10_000
    ours = pair.ours.encode_ordinary_batch(texts, num_threads=1)
    theirs = pair.theirs.encode_ordinary_batch(texts, num_threads=1)
    if ours != theirs:
        i = next(i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b)
        assert_same_ids(ours[i], theirs[i], texts[i], enc=pair.theirs)


def test_a_piece_that_extends_a_short_token_with_zero_bytes_is_not_that_token():
    # a piece's first 8 bytes are read zero padded: its length tells "!!"
    # from "!!\0" and "!!\0\0"
    pair = encoding_pair("cl100k_base")
    for text in ("!!", "!!\0", "!!\0\0", " a\0", "\0\0"):
        assert_same_ids(pair.ours.encode_ordinary(text), pair.theirs.encode_ordinary(text),
                        text, enc=pair.theirs)


def test_without_the_whole_piece_lookup_a_short_token_no_merge_builds_is_not_hot():
    # "abc" is code 257, among the first tried, but the merges make (a, bc)
    tables = TokenTables(BYTES + [b"bc", b"abc"], merge_tokens=[(b"b", b"c")])
    model = byte_bpe_model(tables, {}, r"\S+", whole_piece_lookup=False)
    assert model.encode_many(["abc", "abc abc"]) == \
        [[97, 256], [97, 256, 97, 256]]


def test_with_the_whole_piece_lookup_a_short_token_is_hot_whatever_its_merges():
    tables = TokenTables(BYTES + [b"bc", b"abc"], merge_tokens=[(b"b", b"c")])
    model = byte_bpe_model(tables, {}, r"\S+")
    assert model.encode_many(["abc"]) == [[257]]
