"""Every public method works on every kind of vocabulary, or, where a kind
cannot do it (WordPiece cannot sample), raises a ``FasttokError`` that says
why; bad arguments get the same exception type whatever the vocabulary."""

from __future__ import annotations

from array import array

import pytest

import fasttok
from conftest import DATA_MISSING, MISSING_DATA_REASON, ONE_FILE_PER_KIND

pytestmark = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)

TEXTS = ["Hello world", "", "你好, wörld!\n\n  code = f(x)"]
HUGE_IDS = [2**63, 2**64 + 5, -(2**63) - 1, 10**30]


# What the one vocabulary of each kind names as its end-of-sequence token;
# bert-bge's GGUF names none.
END_OF_SEQUENCE = {
    "tiktoken": b"<|endoftext|>",
    "gguf_gpt2": "<\uff5cend\u2581of\u2581sentence\uff5c>".encode(),
    "gguf_llama": b"</s>",
    "gguf_t5": b"</s>",
    "spm_unigram": b"</s>",
    "spm_bpe": b"</s>",
    "hf_byte_bpe": b"<|endoftext|>",
}
CANNOT_SAMPLE = {"gguf_bert"}  # WordPiece: one segmentation per word
_LOADED: dict = {}


def _load(kind: str):
    if kind not in _LOADED:
        _LOADED[kind] = fasttok.load(str(ONE_FILE_PER_KIND[kind]))
    return _LOADED[kind]


@pytest.fixture(scope="module", params=sorted(ONE_FILE_PER_KIND))
def enc(request):
    return _load(request.param)


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


@pytest.mark.parametrize("kind", sorted(set(ONE_FILE_PER_KIND) - CANNOT_SAMPLE))
def test_sampling_draws_a_segmentation_of_the_text(kind):
    enc = _load(kind)
    ids = enc.encode("unbelievable things", sample=True, alpha=0.5, seed=3)
    assert enc.decode(ids) == "unbelievable things"


@pytest.mark.parametrize("kind", sorted(CANNOT_SAMPLE))
def test_sampling_a_wordpiece_vocabulary_says_it_cannot(kind):
    with pytest.raises(fasttok.FasttokError, match="cannot sample"):
        _load(kind).encode("unbelievable things", sample=True, alpha=0.5, seed=3)


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


@pytest.mark.parametrize("kind", sorted(END_OF_SEQUENCE))
def test_eot_token_is_the_end_of_sequence_token_the_file_names(kind):
    enc = _load(kind)
    assert enc.decode_single_token_bytes(enc.eot_token) == END_OF_SEQUENCE[kind]


@pytest.mark.parametrize("kind", sorted(set(ONE_FILE_PER_KIND) - set(END_OF_SEQUENCE)))
def test_eot_token_of_a_vocabulary_without_one_says_there_is_none(kind):
    with pytest.raises(fasttok.FasttokError, match="end-of-sequence"):
        _load(kind).eot_token
