"""Decoding many ids holds memory in proportion to the ids and the text, not
a table per id: ``b"".join`` of 10^6 pieces kept an 80-byte ``Py_buffer``
per piece (an 11 MB decode of a GGUF peaked at 103 MB, attack cases 5811
and 6396); the pieces are appended to one buffer instead
(:func:`fasttok.decoders.joined.join_bytes`), and llama.cpp's clean-up
keeps the index of each byte it keeps in an array (a list of ints held 36
bytes a byte). Counted with ``tracemalloc``, never timed.
"""

from __future__ import annotations

import tracemalloc

import pytest

import fasttok
from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON
from fasttok.decoders.cleanup import clean_up_spaces_kept
from fasttok.decoders.hf_byte_level import ByteLevel
from fasttok.decoders.joined import join_bytes

N = 100_000


def _peak(call) -> int:
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_joining_pieces_holds_the_result_not_a_buffer_per_piece():
    pieces = [b"ab"] * N
    assert join_bytes(pieces) == b"ab" * N
    assert _peak(lambda: join_bytes(pieces)) < 8 * N  # b"".join: 80 per piece


def test_a_byte_level_decode_of_raw_tokens_holds_no_buffer_per_token():
    tokens = ["<b>", "a"] * (N // 2)  # "<b>" is no byte-level text: each token alone
    assert _peak(lambda: ByteLevel().decode(tokens)) < 40 * N


@pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)
@pytest.mark.parametrize("name", ["ggml-vocab-deepseek-coder.gguf", "ggml-vocab-llama-bpe.gguf"])
def test_a_gguf_decode_of_many_ids_holds_the_ids_and_the_text(name):
    enc = fasttok.load(str(DATA / "vocab" / "gguf" / name))
    n = N // 5
    ids = enc.encode_ordinary(" surprising") * n
    text = enc.decode_bytes(ids)
    # the ids checked (8 a piece), their pieces (8 a piece) and the text twice
    assert _peak(lambda: enc.decode_bytes(ids)) < 16 * n + 3 * len(text) + (64 << 10)
    # and each id's start, with the clean-up's index of the bytes it keeps (8 a byte)
    assert _peak(lambda: enc.decode_with_offsets(ids)) < 64 * n + 12 * len(text) + (64 << 10)


def test_the_clean_up_holds_its_byte_index_in_arrays():
    data = b"so it is , as it 's said ." * (N // 16)
    # two index arrays (8 a byte each), the pieces between cuts; lists of ints held 36 a byte each
    assert _peak(lambda: clean_up_spaces_kept(data)) < 32 * len(data)
