"""Every public method works on every kind of vocabulary, or raises a
``FasttokError`` that says why; bad arguments get the same exception type
whatever the vocabulary."""

from __future__ import annotations

from array import array

import pytest

import fasttok
from conftest import DATA_MISSING, MISSING_DATA_REASON, ONE_FILE_PER_KIND

pytestmark = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)

TEXTS = ["Hello world", "", "你好, wörld!\n\n  code = f(x)"]
HUGE_IDS = [2**63, 2**64 + 5, -(2**63) - 1, 10**30]


@pytest.fixture(scope="module", params=sorted(ONE_FILE_PER_KIND))
def enc(request):
    return fasttok.load(str(ONE_FILE_PER_KIND[request.param]))


def test_batches_flat_batches_counts_and_arrays_agree_with_encode(enc):
    lists = [enc.encode_ordinary(t) for t in TEXTS]
    assert enc.encode_ordinary_batch(TEXTS, num_threads=1) == lists
    assert enc.encode_batch(TEXTS, num_threads=2) == lists
    ids, offsets = enc.encode_batch(TEXTS, flat=True)
    assert isinstance(ids, array) and isinstance(offsets, array)
    assert [list(ids[offsets[i]:offsets[i + 1]]) for i in range(len(TEXTS))] == lists
    assert enc.encode_ordinary_batch(TEXTS, flat=True) == (ids, offsets)
    assert enc.count_batch(TEXTS) == [len(x) for x in lists]
    assert [enc.count(t) for t in TEXTS] == [len(x) for x in lists]
    assert [list(enc.encode_to_array(t)) for t in TEXTS] == lists


def test_sampling_draws_a_segmentation_or_says_why_it_cannot(enc):
    try:
        ids = enc.encode("unbelievable things", sample=True, alpha=0.5, seed=3)
    except fasttok.FasttokError as err:
        assert "cannot sample" in str(err)
    else:
        assert enc.decode(ids).strip() == "unbelievable things"


@pytest.mark.parametrize("token", HUGE_IDS)
def test_an_id_beyond_any_vocabulary_is_a_key_error_everywhere(enc, token):
    for call in (enc.decode, enc.decode_bytes, enc.decode_tokens_bytes, enc.decode_with_offsets):
        with pytest.raises(KeyError):
            call([1, token])
    with pytest.raises(KeyError):
        enc.decode_single_token_bytes(token)
    with pytest.raises(KeyError):
        enc.decode_stream().push(token)


@pytest.mark.parametrize("token", ["1", 1.0, None])
def test_an_id_that_is_no_int_is_a_type_error(enc, token):
    with pytest.raises(TypeError):
        enc.decode([token])
    with pytest.raises(TypeError):
        enc.decode_single_token_bytes(token)


@pytest.mark.parametrize("text", [None, b"bytes", 12])
def test_text_that_is_no_str_is_a_type_error(enc, text):
    for call in (enc.encode, enc.encode_ordinary, enc.count, enc.encode_to_array):
        with pytest.raises(TypeError):
            call(text)


def test_eot_token_is_an_id_of_the_vocabulary_or_says_why_there_is_none(enc):
    try:
        eot = enc.eot_token
    except fasttok.FasttokError as err:
        assert "end-of-sequence" in str(err)
    else:
        assert enc.decode_single_token_bytes(eot)
