"""The Unigram walk with the pre-token cache (``fasttok/shared/ft_piece_cache.h``)
gives exactly what it gives without it, and ``tokenizers``' answer.

The walk cuts each piece where the Metaspace replacement starts (no node
crosses one) and keeps each segment's Viterbi nodes from score 0 in the
thread's cache, with the least gap between two scores that Viterbi compared.
A segment later in a piece starts from another score, whose rounding can
turn a comparison; the walk takes the cached nodes only where the gap is
wide enough. These tests hold the walk to tokenizers with the cache on, off
and at one entry (every lookup a miss or an eviction), on the shared
Unigram files (T5, ALBERT, XLNet, and the SentencePiece conversions, whose
Metaspace does not split: a whole line is one piece), and on a vocabulary
made so that a segment tied from 0 splits otherwise after another word.
"""

from __future__ import annotations

import functools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA, missing_data_reason, read_jsonl, read_text, without_truncation_or_padding
from test_hf_walk_unigram import SHARED, UNIGRAM_DIR
from fasttok.formats import hf_walks
from fasttok.formats.hf_pipeline import pipeline_from_document
from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
from fasttok.shared import _piece_cache

tokenizers = pytest.importorskip("tokenizers")

SIZES = (16384, 0, 1)

# "▁ab" scores what "▁a" and "b" score together, exactly: from 0 the two
# paths tie (the first found, "▁ab", stays); after "▁x" the sum of the two
# rounds above the one ("▁a", "b" wins). Found by search; tokenizers agrees.
A, B, X = -6.550770429955353, -7.908361176241581, -1.0292099090649256
TIED = {"model": {"type": "Unigram", "unk_id": 0, "byte_fallback": False,
                  "vocab": [["<unk>", 0.0], ["\u2581x", X], ["\u2581a", A], ["b", B],
                            ["\u2581ab", A + B], ["\u2581", -12.0]]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581",
                          "prepend_scheme": "always", "split": False}}


# "b." is the one piece that holds two characters but "▁" (whose bytes
# are joined within it): a long word is cut between any two other
# characters, never inside "b.", which beats "b" and "." together
JOINED = {"model": {"type": "Unigram", "unk_id": 0, "byte_fallback": False,
                    "vocab": [["<unk>", 0.0], ["\u2581", -3.0], ["a", -2.0], ["b", -2.0],
                              [".", -2.0], ["c", -2.0], ["b.", -1.0]]},
          "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581",
                            "prepend_scheme": "always", "split": True}}


@pytest.fixture
def cache_size():
    # the test sets the process's cache size; it is put back after
    previous = _piece_cache.entries()
    yield fasttok.set_pretoken_cache
    fasttok.set_pretoken_cache(previous)


@functools.lru_cache(maxsize=None)
def _document(name: str) -> str:
    path = UNIGRAM_DIR / f"{name}.json"
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    return path.read_text(encoding="utf-8")


@functools.lru_cache(maxsize=None)
def _walk(document: str):
    record = tokenizer_json_record(document, "t.json")
    return hf_walks.walk_for(record, pipeline_from_document(record))


@functools.lru_cache(maxsize=None)
def _reference(document: str):
    theirs = without_truncation_or_padding(tokenizers.Tokenizer.from_str(document))
    return theirs


def _first_difference(document: str, texts) -> str | None:
    # the first text whose walked ids, offsets or words are not tokenizers'
    walk, theirs = _walk(document), _reference(document)
    for text in texts:
        encoding = theirs.encode(text, add_special_tokens=False)
        ids, offsets, words = walk.encode(text, None)[:3]
        got = (list(ids), list(zip(offsets[::2], offsets[1::2])), list(words))
        if walk.ids(text, None) != encoding.ids:
            return f"{text!r}: ids {walk.ids(text, None)} != {encoding.ids}"
        if got != (encoding.ids, encoding.offsets, encoding.word_ids):
            return f"{text!r}: encode {got} != tokenizers'"
    return None


def _corpus_lines(count: int) -> list:
    lines = [case["text"] for case in read_jsonl(DATA / "testcases" / "lines.jsonl")]
    for name in ("en", "code", "zh"):
        lines += read_text(DATA / "corpus" / f"{name}.txt").split("\n")[:count]
    return lines


@pytest.mark.parametrize("size", SIZES, ids=["cache", "off", "one-entry"])
@pytest.mark.parametrize("name", SHARED)
def test_corpus_lines_and_whole_texts_walk_as_tokenizers_at_every_cache_size(
        name, size, cache_size):
    cache_size(size)
    lines = _corpus_lines(60)
    # twice: the second pass finds the segments the first one kept; the
    # lines joined make long pieces, each segment after others' scores
    assert _first_difference(_document(name), lines + lines + ["\n".join(lines)]) is None


TEXT = st.text(st.sampled_from("ab x\u2581  \u0301\u00e9\u3042\U0001F600\n\t\u00a0"
                               "theinopq.,"), max_size=40)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(texts=st.lists(TEXT, min_size=1, max_size=4), size=st.sampled_from(SIZES))
def test_hypothesis_texts_walk_as_tokenizers_at_every_cache_size(texts, size, cache_size):
    cache_size(size)
    for name in ("botchan_unigram_5000.v5.24.0.from_spm_proto",
                 "botchan_unigram_5000.v5.24.0.T5Tokenizer"):
        assert _first_difference(_document(name), texts + [" ".join(texts)]) is None


def test_a_segment_tied_from_zero_splits_as_tokenizers_after_another_word(cache_size):
    cache_size(16384)
    document = json.dumps(TIED)
    theirs = _reference(document)
    # the premise: from 0 the tie keeps "▁ab", after "▁x" it turns
    assert theirs.encode("ab", add_special_tokens=False).ids == [4]
    assert theirs.encode("x ab", add_special_tokens=False).ids == [1, 2, 3]
    # "▁ab" kept from 0 first, then met after "▁x"
    assert _first_difference(document, ["ab", "x ab", "ab x ab ab", "x ab"]) is None


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(x=st.floats(-20.0, -0.01), a=st.floats(-20.0, -0.01), b=st.floats(-20.0, -0.01),
       words=st.lists(st.sampled_from(["x", "ab", "a", "b", "xab"]), min_size=1, max_size=8))
def test_tied_segments_after_any_scores_walk_as_tokenizers(x, a, b, words, cache_size):
    cache_size(16384)
    doc = json.loads(json.dumps(TIED))
    doc["model"]["vocab"][1:5] = [["\u2581x", x], ["\u2581a", a], ["b", b], ["\u2581ab", a + b]]
    document = json.dumps(doc)
    text = " ".join(words)
    assert _first_difference(document, ["ab", text, text]) is None


def test_ids_past_two_to_the_sixteen_come_back_from_the_cache_whole(cache_size):
    # a vocabulary of 65,542 pieces keeps its cached ids in 32 bits (under
    # 2 ** 16 they go two to a word): the pieces a text takes are the last
    cache_size(16384)
    doc = json.loads(json.dumps(TIED))
    filler = [[f"\u4e00{k:05d}", -20.0] for k in range(0x10000)]
    doc["model"]["vocab"][1:1] = filler
    document = json.dumps(doc)
    text = "x ab ab x b a"
    assert min(_reference(document).encode(text, add_special_tokens=False).ids) > 0xFFFF
    assert _first_difference(document, [text, text, "ab", text]) is None


def test_two_walks_in_one_thread_keep_their_own_answers(cache_size):
    # the same segments under two vocabularies, alternately: an entry is
    # its walk's (an owner identity each), never the other's
    cache_size(16384)
    names = ("botchan_unigram_5000.v5.24.0.from_spm_proto",
             "kyoto_ja_unigram_8000.v5.24.0.from_spm_proto")
    lines = _corpus_lines(40)
    for line in lines:
        for name in names:
            assert _first_difference(_document(name), [line]) is None


def test_the_walk_keeps_no_more_than_the_set_entries(cache_size):
    cache_size(4)
    _walk(_document("botchan_unigram_5000.v5.24.0.from_spm_proto")).ids(
        "\n".join(_corpus_lines(50)), None)
    info = _piece_cache.thread_info()
    assert info["entries"] == 4 and 0 < info["used"] <= 4 and info["bytes"] == 4 * 64


@pytest.mark.parametrize("split", [True, False], ids=["split", "one-piece"])
def test_a_long_segment_is_cut_only_where_no_piece_joins_its_bytes(split, cache_size):
    # a segment past 16 bytes goes to the cache in parts, cut where no
    # piece holds the byte before and the byte after (no node crosses
    # there): cut inside "b." too, the text would take "b" and "."
    cache_size(16384)
    doc = json.loads(json.dumps(JOINED))
    doc["pre_tokenizer"]["split"] = split
    document = json.dumps(doc)
    text = "a" * 40 + "b.c " + "ca" * 12 + "b.b."
    ids = _reference(document).encode(text, add_special_tokens=False).ids
    assert ids.count(6) == 3  # the premise: "b." taken each time
    assert _first_difference(document, [text, text, "x" + text, text.replace(" ", "")]) is None


def test_words_alike_at_their_start_spread_over_the_cache(cache_size):
    # 64 words of "▁", two letters, two that differ and "s": the sets come
    # from the hash's low bits, which must hang on the whole key
    # (ft_pc_hash's alone took them from its first five or six bytes: 8
    # sets at most here, 16 of the 64 words kept in 128 sets of two)
    cache_size(256)
    words = [f"ab{c}{d}s" for c in "cdefghij" for d in "klmnoprt"]
    _walk(_document("botchan_unigram_5000.v5.24.0.T5Tokenizer")).ids(" ".join(words), None)
    assert _piece_cache.thread_info()["used"] >= 48
