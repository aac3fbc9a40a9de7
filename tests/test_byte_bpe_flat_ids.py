"""Byte-level BPE's flat batch (``encode_many_flat``): one ``array('I')`` of
ids and one ``array('Q')`` of the documents' offsets, each id tested against
the vocabulary as it is copied into the array (a byte without a token is
refused there, as the one-text calls refuse it).
"""

from __future__ import annotations

from itertools import accumulate

import pytest

from fasttok.errors import FasttokError
from fasttok.formats._byte_bpe import CoreBPE
from fasttok.shared._tables import TokenTables

BYTES = [bytes([i]) for i in range(256)]


def test_flat_ids_and_offsets_are_the_texts_encoded_one_at_a_time():
    core = CoreBPE(TokenTables(BYTES + [b"ab", b" ab"]), {}, scanner="gpt2")
    texts = ["ab", "", "a b ab", "\u4e16 ab" * 50, "x", ""]
    ids, offsets = core.encode_many_flat(texts)
    each = [core.encode_ordinary(text) for text in texts]
    assert (ids.typecode, offsets.typecode) == ("I", "Q")
    assert offsets.tolist() == [0, *accumulate(len(one) for one in each)]
    assert [ids[a:b].tolist() for a, b in zip(offsets, offsets[1:])] == each


@pytest.mark.parametrize("at", [0, 1, 7, 40])
def test_a_byte_without_a_token_is_refused_wherever_it_stands_in_a_flat_batch(at):
    core = CoreBPE(TokenTables([b"a", b"b", b"ab"]), {}, scanner="gpt2")
    texts = ["ab", "ba"] * 25
    assert core.encode_many_flat(texts)[0][:5].tolist() == [2, 1, 0, 2, 1]
    texts[at] = "a b"  # no token for the space
    with pytest.raises(FasttokError, match="not byte-complete"):
        core.encode_many_flat(texts)
