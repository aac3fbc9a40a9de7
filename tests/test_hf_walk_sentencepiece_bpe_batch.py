"""The SentencePiece-style BPE walk's batch (``StretchWalk.encode_many``):
each text as the walk's ``encode`` gives it, whether the chunk is walked in
the calling thread or beside others (each thread with its own pre-token
cache), and ``tokenizers``' answer for the batch.

Llama 2 (three added tokens) and Gemma 3 (its newlines are added tokens).
"""

from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, read_text
from fasttok.formats import hf_walks
from fasttok.formats.hf_pipeline import pipeline_from_document
from fasttok.formats.walk import MIN_THREADED_TEXTS
from fasttok.loaders.hf_tokenizer_json import load_tokenizer_json
from test_hf_walk_sentencepiece_bpe import SHARED, _path

tokenizers = pytest.importorskip("tokenizers")

_ADDED = ["<s>", "</s>", "<unk>", "<start_of_turn>", "<end_of_turn>", "<mask>"]
_PARTS = ["a", "b", " ", "  ", "\n", "\t", "\u00a0", "1", "!", "\u0301", "\u0308", "\u07fd",
          "é", "日", "한", "\U0001F600", "\U0001F44D\U0001F3FD", "\ufb01", "\u2581"] + _ADDED
_TEXT = st.lists(st.sampled_from(_PARTS), max_size=10).map("".join)


@functools.lru_cache(maxsize=None)
def _walk(name: str):
    record = load_tokenizer_json(str(_path(name)))
    return hf_walks.walk_for(record, pipeline_from_document(record))


@functools.lru_cache(maxsize=None)
def _lines() -> tuple:
    # corpus lines of every script, and one text of many lines
    lines = []
    for path in sorted((DATA / "corpus").glob("*.txt")):
        lines += read_text(path).split("\n")[:100]
    return tuple(lines + ["\n".join(lines[:40]), "", " ", "<s>a</s>\n<s>"])


@pytest.fixture(scope="module", params=SHARED)
def walk(request):
    return _walk(request.param)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("allowed", [None, frozenset()])
def test_a_batch_on_threads_equals_encode_of_each_text(walk, threads, allowed):
    texts = list(_lines())
    assert len(texts) > MIN_THREADED_TEXTS  # past the threshold: threads run
    assert walk.encode_many(texts, allowed, threads) == [walk.encode(t, allowed) for t in texts]


def test_the_chunk_call_declines_what_encode_declines(walk):
    # a lone surrogate: the cut declines the text, its neighbours are walked
    texts = ["a\ud800b", "ab", "", "x \udc80 <s>", "\U0001F600 x"]
    found = walk.encode_offsets_many(texts, None)
    assert found == [walk.encode(t, None) for t in texts]
    assert found[0] is None and found[3] is None and found[1] is not None


def test_a_batch_gives_tokenizers_ids_offsets_and_words(walk):
    name = SHARED[0] if _walk(SHARED[0]) is walk else SHARED[1]
    theirs = tokenizers.Tokenizer.from_file(str(_path(name)))
    texts = list(_lines())
    for text, mine, reference in zip(texts, walk.encode_many(texts, None, 2),
                                     theirs.encode_batch(texts, add_special_tokens=False)):
        assert list(mine[0]) == reference.ids, text
        assert list(mine[1]) == [o for span in reference.offsets for o in span], text
        assert list(mine[2]) == reference.word_ids, text


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(_TEXT, max_size=12), threaded=st.booleans())
def test_a_generated_batch_equals_encode_of_each_text(walk, texts, threaded):
    # threaded: the drawn texts over and over, past MIN_THREADED_TEXTS
    if threaded and texts:
        texts = texts * (MIN_THREADED_TEXTS // len(texts) + 1)
    assert walk.encode_many(texts, None, 2) == [walk.encode(t, None) for t in texts]
