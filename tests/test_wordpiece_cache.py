"""WordPiece with the pre-token cache (``fasttok/shared/ft_piece_cache.h``)
gives exactly what it gives without it.

The compiled WordPiece walk (:mod:`fasttok.models._wordpiece`) keeps each
normalized word's ids in the thread's cache, keyed by the model's owner
identity and the word's UTF-8: a word's ids depend on the automaton alone.
These tests hold the walk with the cache on, off and at one entry (every
lookup a miss or an eviction) to ``tokenizers`` on all-MiniLM-L6-v2 and to
itself on llama.cpp's BERT (GGUF ``bert``), check that two models in one
thread never share an answer, and that a thread's table never holds more
than its entries.
"""

from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA, data_file, read_text, without_truncation_or_padding
from fasttok.models._wordpiece import APPEND, SPACE, CodePointRules, WordPieceModel
from fasttok.shared import _piece_cache

tokenizers = pytest.importorskip("tokenizers")

MINILM = DATA / "vocab" / "hf" / "all-MiniLM-L6-v2" / "tokenizer.json"
BERT_GGUF = DATA / "vocab" / "gguf" / "ggml-vocab-bert-bge.gguf"
CORPUS = ("en", "code", "zh", "multi", "adversarial")
LINES = 400  # of each corpus file: every size below walks them all
SIZES = (16384, 0, 1)
WORD_START = "\u2581".encode()


@pytest.fixture
def cache_size():
    # the test sets the process's cache size; it is put back after
    previous = _piece_cache.entries()
    yield _piece_cache.set_entries
    _piece_cache.set_entries(previous)


@functools.lru_cache(maxsize=None)
def _minilm():
    return fasttok.load(data_file(MINILM))


@functools.lru_cache(maxsize=None)
def _reference():
    tok = without_truncation_or_padding(tokenizers.Tokenizer.from_file(str(data_file(MINILM))))
    return tok


@functools.lru_cache(maxsize=None)
def _lines(file: str) -> tuple:
    path = data_file(DATA / "corpus" / f"{file}.txt")
    return tuple(read_text(path).splitlines(True)[:LINES])


def _ids_at_each_size(encode, texts, set_entries) -> dict:
    # each size walks the texts twice: the second pass meets the words the
    # first one kept
    out = {}
    for size in SIZES:
        set_entries(size)
        out[size] = [[list(encode(t)) for t in texts] for _ in range(2)]
    return out


@pytest.mark.parametrize("file", CORPUS)
def test_minilm_ids_are_tokenizers_with_cache_on_off_and_one_entry(file, cache_size):
    lines = _lines(file)
    enc = _minilm()
    expected = [_reference().encode(t, add_special_tokens=False).ids for t in lines]
    found = _ids_at_each_size(lambda t: enc.encode(t, allowed_special="all"), lines, cache_size)
    for size, passes in found.items():
        for k, ids in enumerate(passes):
            assert ids == expected, f"cache of {size} entries, pass {k + 1}"


@pytest.mark.parametrize("file", ["en", "multi"])
def test_minilm_whole_text_is_tokenizers_with_cache_on_off_and_one_entry(file, cache_size):
    # a text of thousands of characters walks without the GIL, in its own buffers
    text = "".join(_lines(file))
    expected = _reference().encode(text, add_special_tokens=False).ids
    found = _ids_at_each_size(lambda t: _minilm().encode(t, allowed_special="all"), [text],
                              cache_size)
    assert all(passes == [[expected]] * 2 for passes in found.values())


@pytest.mark.parametrize("file", ["en", "multi"])
def test_llama_cpp_bert_ids_equal_with_cache_on_off_and_one_entry(file, cache_size):
    enc = fasttok.load(data_file(BERT_GGUF))
    found = _ids_at_each_size(enc.encode_ordinary, _lines(file), cache_size)
    first = found[SIZES[0]][0]
    assert all(passes == [first, first] for passes in found.values())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(st.sampled_from("ab Ab.\u00e9\u4e16x\u0301 "), max_size=12)
                | st.text(max_size=30), min_size=1, max_size=4))
def test_hypothesis_texts_give_one_answer_whatever_the_cache(cache_size, texts):
    enc = _minilm()
    found = _ids_at_each_size(lambda t: enc.encode(t, allowed_special="all"), texts, cache_size)
    first = found[SIZES[0]][0]
    assert first == [_reference().encode(t, add_special_tokens=False).ids for t in texts]
    assert all(passes == [first, first] for passes in found.values())


def _spaces_and_letters():
    return CodePointRules(lambda cps: [(SPACE if cp == 32 else APPEND, cp) for cp in cps])


def test_two_models_in_one_thread_never_share_an_answer(cache_size):
    # the same word, a token of each, under other ids: each model's
    # answer is kept under its own owner
    cache_size(16384)
    rules = _spaces_and_letters()
    one = WordPieceModel([b"[UNK]", WORD_START + b"ab"], 0)
    two = WordPieceModel([b"[UNK]", b"x", WORD_START + b"ab", WORD_START + b"a", b"b"], 0)
    for _ in range(3):
        assert one.encode_with("ab ab", rules) == [1, 1]
        assert two.encode_with("ab ab", rules) == [2, 2]
        assert one.encode("ab") == [1]
        assert two.encode("ab") == [2]


def test_a_word_longer_than_an_entry_holds_is_matched_every_time(cache_size):
    # 60 bytes do not fit in a 64-byte entry's 48 of key and ids
    cache_size(16384)
    m = WordPieceModel([b"[UNK]", WORD_START + b"a", b"a"], 0)
    for _ in range(2):
        assert m.encode_with("a" * 60, _spaces_and_letters()) == [1] + [2] * 59


def test_the_walk_fills_the_thread_cache_and_off_it_fills_none(cache_size):
    words = " ".join(f"w{i}" for i in range(200))
    m = WordPieceModel([b"[UNK]", WORD_START + b"w"] + [str(d).encode() for d in range(10)], 0)
    cache_size(1024)
    m.encode_with(words, _spaces_and_letters())
    assert _piece_cache.thread_info()["used"] >= 100
    cache_size(0)
    m.encode_with(words, _spaces_and_letters())
    assert _piece_cache.thread_info() == {"entries": 0, "used": 0, "long_entries": 0,
                                          "long_used": 0, "token_entries": 0, "token_used": 0,
                                          "bytes": 0,
                                          "payload": _piece_cache.thread_info()["payload"]}


@pytest.mark.parametrize("entries", [1, 64])
def test_a_thread_table_never_holds_more_than_its_entries(cache_size, entries):
    # thousands of distinct words through a table of a few entries
    cache_size(entries)
    words = " ".join(f"w{i}" for i in range(5000))
    WordPieceModel([b"[UNK]", WORD_START + b"w", b"0", b"1", b"2", b"3", b"4", b"5", b"6",
                    b"7", b"8", b"9"], 0).encode_with(words, _spaces_and_letters())
    info = _piece_cache.thread_info()
    assert info["entries"] == entries
    assert info["used"] <= entries
    assert info["bytes"] == 64 * entries


def test_threads_keep_tables_of_their_own(cache_size):
    cache_size(16384)
    lines = list(_lines("en")) + list(_lines("code"))
    enc = _minilm()
    serial = [enc.encode(t, allowed_special="all") for t in lines]
    assert enc.encode_batch(lines, allowed_special="all", num_threads=2) == serial
