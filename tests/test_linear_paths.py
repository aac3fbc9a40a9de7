"""Paths whose cost must grow linearly with the input, counted in operations
(calls, tokens decoded), never in seconds; and the results they give stay
the reference's.

* ``encode_with_unstable`` tries only the splits of the unstable bytes that a
  token can start at (at most the longest token's length of them), so one
  long word costs one pass, and gives tiktoken's result on short texts; the
  possibilities of a long unstable run share its pieces, each merged once.
* ``decode_with_offsets`` of a ``tokenizer.json`` decoded by the Python
  pipeline decodes each id a bounded number of times, not every prefix, and
  its window decoding gives what decoding every prefix gives, for each kind
  of decoder.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON, reference_encoding
from fasttok.decoders.hf_starts import prefix_agreements
from fasttok.errors import ReferenceFailsError
from fasttok.formats.hf import _is_byte_token
from fasttok.loaders.hf_stage_json import decoder_from_json

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


def test_encode_with_unstable_of_a_run_of_spaces_is_tiktokens(cl100k, tiktoken_cl100k):
    assert _unstable(cl100k, " " * 100) == _unstable(tiktoken_cl100k, " " * 100)


class _CountingCore:
    """A model that counts the bytes it is asked to encode or merge."""

    def __init__(self, core) -> None:
        self.core, self.merged = core, 0

    def __getattr__(self, name: str):
        return getattr(self.core, name)

    def encode_bytes_piece(self, piece: bytes, *rule) -> list:
        self.merged += len(piece)
        return self.core.encode_bytes_piece(piece, *rule)

    def encode_many(self, texts: list, *allowed) -> list:
        self.merged += sum(len(t.encode()) for t in texts)
        return self.core.encode_many(texts, *allowed)

    def encode_many_flat(self, texts: list, *allowed) -> tuple:
        self.merged += sum(len(t.encode()) for t in texts)
        return self.core.encode_many_flat(texts, *allowed)


def test_encode_with_unstable_of_a_long_run_merges_its_pieces_once(monkeypatch):
    enc = fasttok.get_encoding("cl100k_base")
    counting = _CountingCore(enc._core)
    monkeypatch.setattr(enc, "_core", counting)
    run = 2000
    stable, completions = enc.encode_with_unstable(" " * run)
    # tens of thousands of tokens start with a space, each a possibility of
    # the whole run: merging each possibility's run again was quadratic
    assert len(completions) > 10_000
    longest = enc._longest_token
    assert counting.merged <= (longest + 1) * run + longest * len(completions)


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


# one decoder of each kind (and the chains that read across tokens: a Regex
# Replace after Fuse, Strip of the fused text, byte-fallback runs)
DECODERS = {
    "ctc": {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": True},
    "bpe_suffix": {"type": "BPEDecoder", "suffix": "</w>"},
    "fused_regex_replace": {"type": "Sequence", "decoders": [
        {"type": "Fuse"}, {"type": "Replace", "pattern": {"Regex": "a+b"}, "content": "X"}]},
    "byte_level": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                   "use_regex": True},
    "wordpiece": {"type": "WordPiece", "prefix": "##", "cleanup": True},
    "metaspace_first": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first",
                        "split": True},
    "byte_fallback_fuse_strip": {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
    "strip_both_ends": {"type": "Strip", "content": "a", "start": 1, "stop": 1},
}
TOKENS = ["<0xE4>", "<0xBD>", "<0xA0>", "<0xFF>", "<0x41>", "\u2581a", "a</w>", "b", "##b", " .",
          "'s", "<pad>", "|", "\u0120", "\u00c3\u00a9", "a", "ab", "", "\u2581", "."]


@pytest.mark.parametrize("kind", sorted(DECODERS))
@settings(max_examples=60, deadline=None)
@given(tokens=st.lists(st.sampled_from(TOKENS), max_size=24))
def test_window_decoding_agrees_with_decoding_every_prefix_for_each_decoder(kind, tokens):
    decoder = decoder_from_json(DECODERS[kind], "$.decoder", lambda where, problem: ValueError())
    try:
        whole = decoder.decode(tokens).encode("utf-8")
    except ReferenceFailsError:  # tokenizers panics on these (Strip past a token's start)
        assume(False)
    expected = []
    for i in range(len(tokens)):
        prefix = decoder.decode(tokens[:i]).encode("utf-8")
        expected.append(next((k for k, (a, b) in enumerate(zip(prefix, whole)) if a != b),
                             min(len(prefix), len(whole))))
    got = prefix_agreements(decoder.decode, tokens, whole,
                            lambda left, right: _is_byte_token(left) and _is_byte_token(right))
    assert list(got) == expected
