"""``fasttok.hf.Tokenizer.encode_batch``: the walk takes the batch's texts
together (``Walk.encode_many``; the byte-level, Unigram and BERT walks on
threads, without the GIL) and every input comes out exactly as ``encode``
gives it alone, in the batch's order, with truncation and padding on or off.
"""

from __future__ import annotations

import functools
import gc
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasttok.hf
import fasttok.models.interface
from conftest import DATA, missing_data_reason, read_jsonl, read_text
from fasttok.formats.walk import MIN_THREADED_TEXTS
from fasttok.shared._tables import TokenTables
from fasttok.shared.batching import default_threads
from fasttok.formats._byte_bpe import CoreBPE

tokenizers = pytest.importorskip("tokenizers")

# Gemma 3's and GPT-4o's vocabularies take seconds to load: their runs are slow tests
FILES = ("llama3", "qwen3", "llama2", "all-MiniLM-L6-v2",
         "unigram/botchan_unigram_5000.v5.24.0.T5Tokenizer.json",
         "unigram/kyoto_ja_unigram_8000.v5.24.0.from_spm_proto.json",
         pytest.param("gemma3", marks=pytest.mark.slow),
         pytest.param("gpt4o", marks=pytest.mark.slow))
BYTE_LEVEL = ("llama3", "qwen3")
T5 = "unigram/botchan_unigram_5000.v5.24.0.T5Tokenizer.json"
THREADED = BYTE_LEVEL + (T5, "unigram/kyoto_ja_unigram_8000.v5.24.0.from_spm_proto.json",
                        "all-MiniLM-L6-v2")
LINES_PER_CORPUS = 120


def _path(name: str) -> str:
    path = DATA / "vocab" / "hf" / name
    if path.suffix != ".json":
        path = path / "tokenizer.json"
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    return str(path)


@functools.lru_cache(maxsize=None)
def _tokenizer(name: str) -> "fasttok.hf.Tokenizer":
    return fasttok.hf.Tokenizer.from_file(_path(name))


@functools.lru_cache(maxsize=None)
def _reference(name: str) -> "tokenizers.Tokenizer":
    return tokenizers.Tokenizer.from_file(_path(name))


@functools.lru_cache(maxsize=None)
def _texts() -> tuple:
    texts = []
    for corpus in ("en", "code", "zh", "multi"):
        path = DATA / "corpus" / f"{corpus}.txt"
        if path.is_file():
            texts += read_text(path).split("\n")[:LINES_PER_CORPUS]
    path = DATA / "testcases" / "lines.jsonl"
    if path.is_file():
        texts += [row["text"] for row in read_jsonl(path)]
    return tuple(texts)


def _fields(e) -> tuple:
    return (e.ids, e.tokens, e.offsets, e.word_ids, e.type_ids, e.attention_mask,
            e.special_tokens_mask, e.sequence_ids, [_fields(o) for o in e.overflowing])


def _first_difference(batch: list, one_by_one: list, inputs: list) -> str | None:
    assert len(batch) == len(one_by_one)
    for item, mine, want in zip(inputs, batch, one_by_one):
        if _fields(mine) != _fields(want):
            return f"{item!r}: {_fields(mine)} != {_fields(want)}"
    return None


@pytest.fixture
def tok(request):
    tok = _tokenizer(request.param)
    yield tok
    tok.no_truncation()
    tok.no_padding()


@pytest.fixture
def two_threads(monkeypatch):
    # tokenizers' own setting of its threads: a batch on more threads than a
    # one-core machine would start
    monkeypatch.delenv("TOKENIZERS_PARALLELISM", raising=False)
    monkeypatch.setenv("RAYON_NUM_THREADS", "2")


@pytest.mark.parametrize("tok", FILES, indirect=True)
def test_batch_gives_each_text_as_encode_gives_it(tok, two_threads):
    texts = list(_texts())
    assert _first_difference(tok.encode_batch(texts), [tok.encode(t) for t in texts],
                             texts) is None


@pytest.mark.parametrize("tok", FILES, indirect=True)
def test_batch_with_truncation_and_fixed_padding_gives_each_text_as_encode(tok, two_threads):
    tok.enable_truncation(12, stride=3)
    tok.enable_padding(length=16)
    texts = list(_texts())
    assert _first_difference(tok.encode_batch(texts), [tok.encode(t) for t in texts],
                             texts) is None


# (loading tokenizers' copy of a large vocabulary takes a second or more)
@pytest.mark.parametrize("name", ["llama3", "all-MiniLM-L6-v2", T5] + [
    pytest.param(name, marks=pytest.mark.slow) for name in ("qwen3", "llama2", "gemma3")])
def test_batch_padded_to_its_longest_equals_tokenizers(name, two_threads):
    ours, theirs = _tokenizer(name), _reference(name)
    try:
        for tok in (ours, theirs):
            tok.enable_truncation(40)
            tok.enable_padding()
        texts = list(_texts())
        assert _first_difference(ours.encode_batch(texts), theirs.encode_batch(texts),
                                 texts) is None
    finally:
        for tok in (ours, theirs):
            tok.no_truncation()
            tok.no_padding()


@pytest.mark.parametrize("tok", ["llama3"], indirect=True)
def test_a_mixed_batch_keeps_its_order(tok, two_threads):
    texts = list(_texts()[:2 * MIN_THREADED_TEXTS])
    inputs = [(t, t[::-1]) if i % 3 == 0 else t for i, t in enumerate(texts)]
    assert _first_difference(tok.encode_batch(inputs), [tok.encode(x) for x in inputs],
                             inputs) is None


@pytest.mark.parametrize("name", THREADED)
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("allowed", [None, frozenset()])
def test_walk_on_threads_equals_its_walk_text_by_text(name, threads, allowed):
    walk = _tokenizer(name)._pipeline.walk
    texts = list(_texts())
    assert walk.encode_many(texts, allowed, threads) == [walk.encode(t, allowed) for t in texts]


@pytest.mark.parametrize("name", ["llama3"])
def test_a_compiled_batch_gives_each_text_one_block_its_encoding_takes(name):
    # the byte-level walk: each text's tokens in one object, read as encode's
    # (ids, offsets, words) arrays, which the walked encoding holds as it is
    # (no arrays made for a text of a batch); the SentencePiece-style walk is
    # a model's, which may not make a post-processor's block
    tok = _tokenizer(name)
    walk = tok._pipeline.walk
    texts = list(_texts()[:2 * MIN_THREADED_TEXTS])
    found = walk.encode_many(texts, None, 2)
    for text, block in zip(texts, found):
        assert type(block) is not tuple and len(block) == 3
        assert tuple(block) == walk.encode(text, None)
    made = tok._pipeline._makers[True].make_many(found, texts, tok.encode)
    assert all(e._walked is block for e, block in zip(made, found))
    assert _first_difference(made, [tok.encode(t) for t in texts], texts) is None


@pytest.mark.parametrize("name", ["llama3", T5, "all-MiniLM-L6-v2"])
def test_a_small_batch_starts_no_thread(monkeypatch, name):
    walk = _tokenizer(name)._pipeline.walk

    def refuse(*args):
        raise AssertionError("threads started for a small batch")

    monkeypatch.setattr(fasttok.models.interface, "on_threads", refuse)
    texts = list(_texts()[:MIN_THREADED_TEXTS - 1])
    assert walk.encode_many(texts, None, 4) == [walk.encode(t, None) for t in texts]


@pytest.mark.parametrize("tok", ["llama3"], indirect=True)
def test_a_batch_sets_off_one_collection_at_most(tok, two_threads):
    # the collector paused while the batch makes its encodings (each pass
    # walked the batch's young lists again: one every 700 objects made),
    # and run once at most when it ends
    started = []

    def note(phase, info):
        started.append(phase == "start")

    texts = list(_texts()) * 4
    gc.collect()
    gc.callbacks.append(note)
    try:
        tok.encode_batch(texts)
    finally:
        gc.callbacks.remove(note)
    assert sum(started) <= 1


@pytest.mark.parametrize("tok", ["llama3", "all-MiniLM-L6-v2"], indirect=True)
def test_a_batchs_encodings_are_left_to_reference_counting(tok, two_threads):
    tok.no_truncation()
    tok.no_padding()
    encodings = tok.encode_batch(list(_texts()[:2 * MIN_THREADED_TEXTS]))
    assert not any(map(gc.is_tracked, encodings))


@pytest.mark.parametrize("inputs, message", [
    (["fine", "a\ud800b"], "TextEncodeInput must be Union"),
    ([("fine", "a\ud800b")], "TextInputSequence must be str")])
def test_a_lone_surrogate_in_a_batch_is_refused(inputs, message):
    # tokenizers' words: a batch's text is a TextEncodeInput, a pair's part a TextInputSequence
    with pytest.raises(TypeError, match=message):
        _tokenizer("llama3").encode_batch(inputs)


def test_the_compiled_batch_declines_what_encode_offsets_declines():
    # a surrogate pair is one code point of UTF-8 for two characters of str
    core = CoreBPE(TokenTables([bytes([i]) for i in range(256)]), {}, scanner="gpt2")
    texts = ["a\ud83d\ude00b", "ab", "", "\U0001F600 x"] * 20
    assert core.encode_offsets_many(texts) == [core.encode_offsets(t) for t in texts]
    assert core.encode_offsets_many(texts)[0] is None


_ADDED = ["<|begin_of_text|>", "<|end_of_text|>", "<|im_start|>", "<|endoftext|>", "</s>", "<pad>",
          "<unk>"]
_PARTS = ["a", "b", " ", "  ", "\n", "\t", "\r\n", "\u00a0", "1", "'s", "!", "\u0301", "\u0308",
          "\u07fd", "é", "e\u0301", "日", "한", "\U0001F600", "\U0001F44D\U0001F3FD", "\u212b",
          "\ufb01"] + _ADDED
_TEXT = st.lists(st.sampled_from(_PARTS), max_size=12).map("".join)


@pytest.mark.parametrize("tok", THREADED[:3], indirect=True)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(texts=st.lists(_TEXT, max_size=12), threaded=st.booleans())
def test_a_batch_of_generated_texts_equals_encode_of_each(tok, two_threads, texts, threaded):
    # a threaded batch: the drawn texts over and over, past MIN_THREADED_TEXTS
    if threaded and texts:
        texts = texts * (MIN_THREADED_TEXTS // len(texts) + 1)
    assert _first_difference(tok.encode_batch(texts), [tok.encode(t) for t in texts],
                             texts) is None


@pytest.mark.parametrize("env, expected", [
    ({"TOKENIZERS_PARALLELISM": "false", "RAYON_NUM_THREADS": "3"}, 1),
    ({"TOKENIZERS_PARALLELISM": "0"}, 1),
    ({"TOKENIZERS_PARALLELISM": "true", "RAYON_NUM_THREADS": "3"}, 3),
    ({"RAYON_RS_NUM_THREADS": "5"}, 5),
    ({"RAYON_NUM_THREADS": "0"}, os.cpu_count() or 1),
    ({}, os.cpu_count() or 1),
])
def test_batch_threads_follow_tokenizers_settings(monkeypatch, env, expected):
    for name in ("TOKENIZERS_PARALLELISM", "RAYON_NUM_THREADS", "RAYON_RS_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert default_threads() == expected
