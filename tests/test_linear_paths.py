"""Paths whose cost must grow linearly with the input, counted in operations
(calls, tokens decoded), never in seconds; and the results they give stay
the reference's.

* ``encode_with_unstable`` tries only the splits of the unstable bytes that a
  token can start at (at most the longest token's length of them), so one
  long word costs one pass, and gives tiktoken's result on short texts.
* ``decode_with_offsets`` of a ``tokenizer.json`` decoded by the Python
  pipeline decodes each id a bounded number of times, not every prefix.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON, reference_encoding

pytestmark = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)


@pytest.fixture(scope="module")
def cl100k():
    return fasttok.get_encoding("cl100k_base")


@pytest.fixture(scope="module")
def tiktoken_cl100k():
    return reference_encoding("cl100k_base")[0]


def _unstable(enc, text: str) -> tuple:
    stable, completions = enc.encode_with_unstable(text)
    return stable, sorted(map(tuple, completions))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(st.sampled_from("ab ж.\n'x0é你🎉"), max_size=10))
def test_encode_with_unstable_is_tiktokens_on_short_texts(cl100k, tiktoken_cl100k, text):
    assert _unstable(cl100k, text) == _unstable(tiktoken_cl100k, text)


def _counted_tries(enc, monkeypatch) -> list:
    tries: list = []
    lookup = enc._tokens_starting_with

    def counted(prefix: bytes) -> list:
        tries.append(len(prefix))
        return lookup(prefix)

    monkeypatch.setattr(enc, "_tokens_starting_with", counted)
    return tries


@pytest.mark.parametrize("letters", [100_000, pytest.param(1_000_000, marks=pytest.mark.slow)])
def test_encode_with_unstable_of_one_long_word_tries_a_bounded_number_of_splits(
        cl100k, monkeypatch, letters):
    word = "ж" * letters
    tries = _counted_tries(cl100k, monkeypatch)
    stable, completions = cl100k.encode_with_unstable(word)
    assert len(tries) <= cl100k._longest_token + 1
    assert stable == [] and completions
    for ids in completions:
        assert cl100k.decode_bytes(ids).startswith(word.encode())


HF_PIPELINE_FILES = {
    "metaspace_byte_fallback_fuse_strip": DATA / "vocab" / "hf" / "llama2" / "tokenizer.json",
    "wordpiece_cleanup": DATA / "vocab" / "hf" / "all-MiniLM-L6-v2" / "tokenizer.json",
    "unigram_byte_fallback": DATA / "vocab" / "hf" / "unigram"
    / "botchan_unigram_4000_bytefallback.v5.24.0.from_spm_proto.json",
}
_PIPELINES: dict = {}


def _pipeline_encoding(kind: str) -> fasttok.Encoding:
    if kind not in _PIPELINES:
        _PIPELINES[kind] = fasttok.load(str(HF_PIPELINE_FILES[kind]))
    return _PIPELINES[kind]


def _starts_decoding_every_prefix(enc, ids: list) -> list:
    # the definition, one whole decode per prefix (quadratic): id i starts
    # where decode(ids[:i]) stops agreeing with decode(ids), never before id i-1
    whole, starts = enc.decode_bytes(ids), []
    for i in range(len(ids)):
        prefix = enc.decode_bytes(ids[:i])
        agreed = next((k for k, (a, b) in enumerate(zip(prefix, whole)) if a != b),
                      min(len(prefix), len(whole)))
        starts.append(max(agreed, starts[-1] if starts else 0))
    return starts


def _byte_offsets(enc, ids: list) -> list:
    return enc._core.decode_with_offsets(ids)[1]


@pytest.mark.parametrize("kind", sorted(HF_PIPELINE_FILES))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_pipeline_offsets_are_where_each_prefix_stops_agreeing(kind, data):
    enc = _pipeline_encoding(kind)
    pool = enc.encode("Hello , wörld! 你好 🎉 it 's  ok\n", allowed_special="all")
    byte_pieces = [i for i in range(300) if (enc._core.pipeline.id_to_token(i) or "").startswith("<0x")]
    ids = data.draw(st.lists(st.sampled_from(pool + byte_pieces[:40] + byte_pieces[-40:]),
                             max_size=30))
    assert _byte_offsets(enc, ids) == _starts_decoding_every_prefix(enc, ids)


@pytest.mark.parametrize("kind", sorted(HF_PIPELINE_FILES))
def test_pipeline_offsets_decode_each_id_a_bounded_number_of_times(kind, monkeypatch):
    enc = _pipeline_encoding(kind)
    pipeline = enc._core.pipeline
    ids = enc.encode_ordinary("The quick brown fox, jumping over 12 lazy dogs. " * 60)
    decoded: list = []
    decode = pipeline.decode

    def counted(part: list, skip_special_tokens: bool) -> str:
        decoded.append(len(part))
        return decode(part, skip_special_tokens)

    monkeypatch.setattr(pipeline, "decode", counted)
    text, offsets = enc.decode_with_offsets(ids)
    assert len(offsets) == len(ids) > 500
    assert sum(decoded) <= 16 * len(ids)  # every prefix whole: len(ids) / 2 times that
