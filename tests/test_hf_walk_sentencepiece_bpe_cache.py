"""The SentencePiece-style BPE walk with the pre-token cache
(``fasttok/shared/ft_piece_cache.h``) gives exactly what it gives without it,
and ``tokenizers``' answer.

The walk cuts each normalized stretch into spans where no merge can cross:
between two characters that are tokens on their own and that no token holds
side by side (their bytes at the seam, or the two characters). A span's
tokens follow from its bytes alone, so each thread keeps them in its cache
by the span's bytes, with each token's end. These tests hold the walk to
tokenizers with the cache on, off and at one entry (every lookup a miss or
an eviction), on Gemma 3 and Llama 2 and on small vocabularies whose merges
join characters that a coarser rule would cut apart.
"""

from __future__ import annotations

import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA, read_text
from test_hf_walk_sentencepiece_bpe import SHARED, _answer, _first_difference, _reference, \
    _small, _walked
from fasttok.shared import _piece_cache

tokenizers = pytest.importorskip("tokenizers")

SIZES = {"cache": 16384, "off": 0, "one-entry": 1}


@pytest.fixture
def cache_size():
    # the test sets the process's cache size; it is put back after
    previous = _piece_cache.entries()
    yield fasttok.set_pretoken_cache
    fasttok.set_pretoken_cache(previous)


@pytest.fixture(scope="module", params=SHARED)
def shared(request):
    walk, _ = _walked(request.param, "hf")
    return walk, _reference(request.param)


def _corpus_lines(count: int) -> list:
    lines = []
    for name in ("en", "code", "zh", "multi"):
        lines += read_text(DATA / "corpus" / f"{name}.txt").split("\n")[:count]
    return lines


@pytest.mark.parametrize("size", list(SIZES.values()), ids=list(SIZES))
def test_corpus_lines_and_a_whole_text_walk_as_tokenizers_at_every_cache_size(
        shared, size, cache_size):
    cache_size(size)
    walk, theirs = shared
    lines = _corpus_lines(40)
    # twice: the second pass finds the spans the first one kept
    assert _first_difference(walk, theirs, lines + lines + ["\n".join(lines)]) is None


_TEXT = st.lists(st.sampled_from(list("ab x.,'\u2019\u2581  \u0301\u00e9\u00a9\u3042\u4e2d\u6587\n\t")
                                 + ["\U0001F600", "<s>", "n\u2019t", "\u3002"]), max_size=20).map("".join)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(texts=st.lists(_TEXT, min_size=1, max_size=4), size=st.sampled_from(list(SIZES.values())))
def test_hypothesis_texts_walk_as_tokenizers_at_every_cache_size(texts, size, cache_size):
    cache_size(size)
    for name in SHARED:
        walk, _ = _walked(name, "hf")
        assert _first_difference(walk, _reference(name), texts + [" ".join(texts)]) is None


def test_threads_walking_one_batch_each_keep_their_own_cache(cache_size):
    # every thread of the batch asks its own table; at one entry the two
    # threads' entries evict on every span, and the answer stays the same
    walk, theirs = _walked("gemma3", "hf")[0], _reference("gemma3")
    texts = _corpus_lines(100)
    for size in (16384, 1):
        cache_size(size)
        assert walk.encode_many(texts, None, 2) == [walk.encode(t, None) for t in texts]
    found = walk.encode_many(texts, None, 2)
    for text, mine, reference in zip(texts, found, theirs.encode_batch(texts,
                                                                       add_special_tokens=False)):
        assert list(mine[0]) == reference.ids, text


def test_a_thread_of_its_own_fills_its_own_table(cache_size):
    cache_size(64)
    walk, _ = _walked("llama2", "hf")
    used = []

    def walk_and_look():
        walk.ids(" ".join(_corpus_lines(5)), None)
        used.append(_piece_cache.thread_info()["used"])

    thread = threading.Thread(target=walk_and_look)
    thread.start()
    thread.join()
    assert 0 < used[0] <= 64


def test_two_walks_in_one_thread_keep_their_own_answers(cache_size):
    # the same spans ("▁the", "▁of") under two vocabularies, alternately:
    # an entry is its model's (an owner identity each), never the other's
    cache_size(16384)
    for line in _corpus_lines(15):
        for name in SHARED:
            walk, _ = _walked(name, "hf")
            assert _first_difference(walk, _reference(name), [line]) is None


def test_the_walk_keeps_no_more_than_the_set_entries(cache_size):
    cache_size(4)
    _walked("llama2", "hf")[0].ids("\n".join(_corpus_lines(30)), None)
    info = _piece_cache.thread_info()
    assert info["entries"] == 4 and 0 < info["used"] <= 4 and info["bytes"] == 4 * 64


# ------------------------------------------------- where the spans are cut

def _pairs_doc(merges: list) -> dict:
    # a Replace-normalized byte-fallback BPE of "▁", "é", "©", "x" and the merges
    vocab = {"<unk>": 0}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for c in "\u2581\u00e9\u00a9x":
        vocab[c] = len(vocab)
    for left, right in merges:
        for token in (left, right, left + right):
            vocab.setdefault(token, len(vocab))
    return {"normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
            "model": {"type": "BPE", "unk_token": "<unk>", "byte_fallback": True,
                      "fuse_unk": True, "vocab": vocab, "merges": [list(m) for m in merges]}}


@pytest.mark.parametrize("merges, text, tokens", [
    # "é" (C3 A9) and "x" side by side in a token: merged, though the
    # cut by bytes alone could not tell it from "©x" (C2 A9, "x")
    ([("é", "x")], "éx ©x", ["éx", "▁", "©", "x"]),
    ([("©", "x")], "éx ©x", ["é", "x", "▁", "©x"]),
    # two CJK characters, and a character of four bytes
    ([("中", "文")], "中文 文中", ["中文", "▁", "文", "中"]),
    ([("😀", "a")], "😀a a😀", ["😀a", "▁", "a", "😀"]),
    # the space's replacement after a word: Gemma 3 has "n’t", so the
    # bytes "n", E2 stand side by side in a token, yet "n▁" is in none
    ([("n", "’"), ("▁", "t")], "n’t n t", ["n’", "t", "▁", "n", "▁t"]),
])
def test_characters_merged_side_by_side_are_never_cut_apart(merges, text, tokens, cache_size):
    document = _pairs_doc(merges)
    walk, theirs = _small(document)
    names = {v: k for k, v in document["model"]["vocab"].items()}
    for size in SIZES.values():
        cache_size(size)
        for _ in range(2):  # the second time from the cache
            ids = _answer(walk, text)[0]
            assert [names[i] for i in ids] == tokens
            assert ids == theirs.encode(text, add_special_tokens=False).ids


def test_a_span_past_an_entry_walks_as_tokenizers(shared, cache_size):
    # spans longer than an entry holds (48 bytes) are merged every time
    cache_size(16384)
    walk, theirs = shared
    texts = ["x" * 60, "日本語" * 30, ("\u2581" * 20 + "a") * 3, "a" * 47, "a" * 48, "a" * 49]
    assert _first_difference(walk, theirs, texts + texts) is None


def test_a_vocabulary_with_a_token_that_is_not_utf8_cuts_by_bytes_alone():
    # tokens given to the core as bytes: a token that is not UTF-8 has no
    # characters to pair, so only the byte seams cut, and merges still win
    from fasttok.models._hf_bpe import HfBpeCore
    tokens = [b"<unk>", b"a", b"b", b"ab", b"\xff"]
    core = HfBpeCore(tokens, tuple(range(5)), [(1, 2, 3)], names=tuple(map(repr, tokens)),
                     unk_slot=0, unk_token="<unk>")
    assert core.tokenize_ids("abab") == [3, 3]
    assert core.tokenize_ids("ba\xff") == [2, 1, 0]
