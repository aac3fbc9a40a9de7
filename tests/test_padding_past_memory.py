"""Padding to a length this process cannot hold is a ``FasttokError`` raised
before anything is allocated (``tokenizers`` aborts the process there; a
``MemoryError`` came from deep inside ``Encoding.pad``, attack case 8223:
``pad_to_multiple_of=10**9``). The rule: the padded positions of a batch,
at :data:`~fasttok.post_processors.padding.PADDED_POSITION_BYTES` each, must
fit in :func:`~fasttok.post_processors.padding.memory_room` (physical memory,
or less under an address-space limit). Sizes are counted, never timed.
"""

from __future__ import annotations

import json
import tracemalloc

import pytest

import fasttok.hf
from fasttok.errors import FasttokError
from fasttok.post_processors import padding

DOCUMENT = {"model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "[PAD]": 1, "hi": 2, "ho": 3},
                      "unk_token": "[UNK]"},
            "pre_tokenizer": {"type": "WhitespaceSplit"}}


@pytest.fixture()
def tok():
    return fasttok.hf.Tokenizer.from_str(json.dumps(DOCUMENT))


@pytest.mark.parametrize("how", [{"length": 2**40}, {"length": 9, "pad_to_multiple_of": 10**15}])
def test_padding_past_any_machines_memory_is_refused_before_allocating(tok, how):
    tok.enable_padding(pad_id=1, **how)
    tracemalloc.start()
    try:
        with pytest.raises(FasttokError, match="pad to a smaller length"):
            tok.encode_batch(["hi ho", "hi"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_padding_past_the_room_left_is_refused(tok, monkeypatch):
    monkeypatch.setattr(padding, "memory_room", lambda: 1 << 20)
    tok.enable_padding(pad_id=1, length=(1 << 20) // padding.PADDED_POSITION_BYTES + 8)
    with pytest.raises(FasttokError, match="more than the 0.0 GiB"):
        tok.encode("hi")


def test_padding_that_fits_pads(tok, monkeypatch):
    monkeypatch.setattr(padding, "memory_room", lambda: 1 << 20)
    tok.enable_padding(pad_id=1, length=700)
    enc = tok.encode("hi")
    assert enc.ids == [2] + [1] * 699 and enc.attention_mask.count(1) == 1


def test_the_room_is_known_here_and_positive():
    room = padding.memory_room()
    assert room is None or room > 0
