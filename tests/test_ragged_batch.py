"""``encode_batch(ragged=True)`` and ``encode_batch_padded``: one id buffer
with document offsets, and the padded rectangle, each equal to ``encode``
text by text; numpy when it is installed (sharing the buffer), flat arrays
and a shape when it is not."""

from __future__ import annotations

import sys
from array import array

import pytest

import fasttok
from conftest import DATA_MISSING, MISSING_DATA_REASON
from fasttok.errors import FasttokError
from fasttok.shared.ragged import RaggedIds, pad

pytestmark = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)

TEXTS = ["Hello world, this is longer", "", "hi", "你好 🎉 wörld"]


@pytest.fixture(scope="module")
def enc():
    return fasttok.get_encoding("cl100k_base")


@pytest.fixture(scope="module")
def each(enc):
    return [enc.encode(t) for t in TEXTS]


@pytest.fixture
def no_numpy(monkeypatch):
    # a None entry makes `import numpy` raise ImportError
    monkeypatch.setitem(sys.modules, "numpy", None)


def test_ragged_batch_equals_encode_text_by_text(enc, each):
    batch = enc.encode_batch(TEXTS, ragged=True)
    assert isinstance(batch, RaggedIds) and len(batch) == len(TEXTS)
    assert [list(batch[i]) for i in range(len(TEXTS))] == each
    assert [list(doc) for doc in batch] == each and batch.to_lists() == each


def test_ragged_batch_is_the_flat_batch(enc):
    batch = enc.encode_batch(TEXTS * 50, ragged=True, num_threads=3)
    assert (batch.ids, batch.offsets) == enc.encode_batch(TEXTS * 50, flat=True, num_threads=1)


def test_ragged_indexing_counts_from_the_end_and_stops_at_it(enc, each):
    batch = enc.encode_batch(TEXTS, ragged=True)
    assert list(batch[-1]) == each[-1]
    with pytest.raises(IndexError):
        batch[len(TEXTS)]


def test_ragged_lengths_are_the_documents_lengths(enc, each):
    assert list(enc.encode_batch(TEXTS, ragged=True).lengths()) == [len(ids) for ids in each]


def test_ragged_to_numpy_shares_the_buffers(enc):
    np = pytest.importorskip("numpy")
    batch = enc.encode_batch(TEXTS, ragged=True)
    ids, offsets = batch.to_numpy()
    assert ids.dtype == np.uint32 and offsets.dtype == np.uint64
    assert ids.tolist() == list(batch.ids) and offsets.tolist() == list(batch.offsets)
    ids[0] = 7
    assert batch.ids[0] == 7


def test_ragged_to_numpy_without_numpy_says_what_to_do(enc, no_numpy):
    with pytest.raises(FasttokError, match="pip install numpy"):
        enc.encode_batch(TEXTS, ragged=True).to_numpy()


def test_ragged_offsets_must_span_the_ids():
    with pytest.raises(FasttokError, match="offsets must run from 0 to len"):
        RaggedIds(array("I", [1, 2]), array("Q", [0, 1]))


def _rows(padded):
    # rows of a padded batch, numpy or flat
    ids = padded.ids
    if hasattr(ids, "tolist") and not isinstance(ids, array):
        return ids.tolist(), padded.attention_mask.tolist(), padded.lengths.tolist()
    rows, width = padded.shape
    mask = list(padded.attention_mask)
    return ([list(ids[r * width:(r + 1) * width]) for r in range(rows)],
            [mask[r * width:(r + 1) * width] for r in range(rows)], list(padded.lengths))


def _expected(each, pad_id, width, side):
    rows, masks = [], []
    for ids in each:
        ids = ids[:width]
        fill = [pad_id] * (width - len(ids))
        rows.append(ids + fill if side == "right" else fill + ids)
        ones, zeros = [1] * len(ids), [0] * len(fill)
        masks.append(ones + zeros if side == "right" else zeros + ones)
    return rows, masks, [min(len(ids), width) for ids in each]


@pytest.mark.parametrize("side", ["right", "left"])
def test_padded_rows_are_each_texts_ids_padded_on_the_side(enc, each, side, no_numpy):
    padded = enc.encode_batch_padded(TEXTS, pad_id=99, side=side)
    width = max(map(len, each))
    assert isinstance(padded.ids, array) and padded.shape == (len(TEXTS), width)
    assert _rows(padded) == _expected(each, 99, width, side)


@pytest.mark.parametrize("side", ["right", "left"])
def test_padded_max_length_keeps_the_first_ids_of_longer_texts(enc, each, side, no_numpy):
    padded = enc.encode_batch_padded(TEXTS, pad_id=0, max_length=3, side=side)
    assert padded.shape == (len(TEXTS), 3)
    assert _rows(padded) == _expected(each, 0, 3, side)


@pytest.mark.parametrize("side", ["right", "left"])
def test_padded_with_numpy_is_the_same_rectangle_sharing_no_copy_of_ids(enc, each, side):
    np = pytest.importorskip("numpy")
    padded = enc.encode_batch_padded(TEXTS, pad_id=5, max_length=4, side=side)
    assert padded.ids.dtype == np.uint32 and padded.ids.shape == padded.shape
    assert padded.attention_mask.dtype == np.uint8 and padded.lengths.dtype == np.int64
    assert _rows(padded) == _expected(each, 5, 4, side)
    assert padded.ids.base is not None  # a view of the flat buffer


@pytest.mark.parametrize("use_numpy", [False, True])
def test_padded_empty_batch_is_zero_by_zero(enc, use_numpy):
    if use_numpy:
        pytest.importorskip("numpy")
    padded = pad(enc.encode_batch([], ragged=True), pad_id=0, use_numpy=use_numpy)
    assert padded.shape == (0, 0) and len(padded.ids) == 0


@pytest.mark.parametrize("arguments, message", [
    ({"pad_id": -1}, "pad_id must be an id"),
    ({"pad_id": 2**32}, "pad_id must be an id"),
    ({"pad_id": 0, "side": "middle"}, "side must be 'right' or 'left'"),
    ({"pad_id": 0, "max_length": -1}, "max_length must be an int of 0 or more"),
])
def test_padded_bad_arguments_say_which(enc, arguments, message):
    with pytest.raises(FasttokError, match=message):
        enc.encode_batch_padded(TEXTS, **arguments)
