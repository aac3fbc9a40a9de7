"""``decode_with_offsets`` of a ``tokenizer.json`` on the Python pipeline reads
every id's start off one decode for the decoder chains of real files, and
the starts are the definition's: token ``i`` starts where ``decode(ids[:i])``
stops agreeing with ``decode(ids)``, never before token ``i - 1``.

* The one-pass starts (:func:`fasttok.decoders.hf_starts.token_starts`)
  equal decoding every prefix, for each chain it reads, on token lists
  heavy in byte tokens (valid and broken UTF-8, runs that decode to spaces
  or to U+FFFD's own bytes) beside the stripped character.
* The chains it does not read give ``None`` (the caller decodes in windows).
* Work is counted in token look-ups, never in seconds: a run of 100,000
  byte pieces (attack case 1314) and 10^6 ids of one piece (cases 3687,
  7347) were decoded once per id in a window, a run once per id of the run.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON
from fasttok.decoders.hf_starts import token_starts
from fasttok.errors import ReferenceFailsError
from fasttok.loaders.hf_stage_json import decoder_from_json

SPACE_TO_BLANK = {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}


def _strip(content: str, start: int, stop: int = 0) -> dict:
    return {"type": "Strip", "content": content, "start": start, "stop": stop}


def _sequence(*decoders: dict) -> dict:
    return {"type": "Sequence", "decoders": list(decoders)}


READ = {
    "llama2": _sequence(SPACE_TO_BLANK, {"type": "ByteFallback"}, {"type": "Fuse"}, _strip(" ", 1)),
    "gemma3": _sequence(SPACE_TO_BLANK, {"type": "ByteFallback"}, {"type": "Fuse"}),
    "strip_two_spaces": _sequence(SPACE_TO_BLANK, {"type": "ByteFallback"}, {"type": "Fuse"},
                                  _strip(" ", 2)),
    "strip_letters": _sequence({"type": "ByteFallback"}, {"type": "Fuse"}, _strip("a", 3)),
    "byte_fallback": {"type": "ByteFallback"},
    "fuse_strip": _sequence(SPACE_TO_BLANK, {"type": "Fuse"}, _strip(" ", 1)),
    "metaspace": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always",
                  "split": True},
    "wordpiece": {"type": "WordPiece", "prefix": "##", "cleanup": True},
    "strip_each_token": _strip("a", 1, 1),
    "no_decoder": None,
}
NOT_READ = {
    "ctc": {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": True},
    "bpe_suffix": {"type": "BPEDecoder", "suffix": "</w>"},
    "byte_level": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                   "use_regex": True},
    "regex_after_fuse": _sequence({"type": "Fuse"}, {"type": "Replace",
                                                     "pattern": {"Regex": "a+b"}, "content": "X"}),
    "strip_end_after_fuse": _sequence({"type": "Fuse"}, _strip(" ", 0, 1)),
    "byte_fallback_then_metaspace": _sequence({"type": "ByteFallback"}, READ["metaspace"]),
}
BYTE_TOKENS = ["<0xE4>", "<0xBD>", "<0xA0>", "<0xFF>", "<0x41>", "<0x20>", "<0xEF>", "<0xBF>",
               "<0xC3>", "<0xA9>", "<0x61>"]
TOKENS = BYTE_TOKENS + ["\u2581a", "a", "b", "##b", " .", "\u2581", "", "\u2581\u2581", "\ufffd",
                        "aa", " ", "\u00e9", "<0xZZ>"]


def _decoder(spec):
    return decoder_from_json(spec, "$.decoder", lambda where, problem: ValueError(problem))


def _starts_decoding_every_prefix(decoder, tokens: list) -> tuple:
    def decode(part: list) -> bytes:
        text = " ".join(part) if decoder is None else decoder.decode(part)
        return text.encode("utf-8")

    whole, starts = decode(tokens), []
    for i in range(len(tokens)):
        prefix = decode(tokens[:i])
        agreed = next((k for k, (a, b) in enumerate(zip(prefix, whole)) if a != b),
                      min(len(prefix), len(whole)))
        starts.append(max(agreed, starts[-1] if starts else 0))
    return whole, starts


@pytest.mark.parametrize("kind", sorted(READ))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tokens=st.lists(st.one_of(st.sampled_from(BYTE_TOKENS), st.sampled_from(TOKENS)),
                       max_size=16))
def test_one_pass_starts_are_where_each_prefix_stops_agreeing(kind, tokens):
    decoder = _decoder(READ[kind])
    try:
        expected = _starts_decoding_every_prefix(decoder, tokens)
    except ReferenceFailsError:  # tokenizers panics there (Strip past a token's start)
        assume(False)
    assert token_starts(decoder, tokens) == expected


@pytest.mark.parametrize("kind", sorted(NOT_READ))
def test_other_chains_are_left_to_window_decoding(kind):
    assert token_starts(_decoder(NOT_READ[kind]), ["a", "<0x41>"]) is None


HF = DATA / "vocab" / "hf"
FILES = {
    "unigram_byte_fallback": HF / "unigram" / "botchan_unigram_4000_bytefallback.v5.24.0"
    ".from_spm_proto.json",
    "unigram_metaspace": HF / "unigram" / "botchan_unigram_5000.v4.57.6.AlbertTokenizer.json",
    "bpe_byte_fallback_fuse": HF / "gemma3" / "tokenizer.json",
    "bpe_byte_fallback_fuse_strip": HF / "llama2" / "tokenizer.json",
    "wordpiece": HF / "all-MiniLM-L6-v2" / "tokenizer.json",
}


@pytest.fixture(scope="module")
def loaded() -> dict:
    return {}


def _encoding(loaded: dict, kind: str) -> fasttok.Encoding:
    if kind not in loaded:
        loaded[kind] = fasttok.load(str(FILES[kind]))
    return loaded[kind]


def _look_ups(loaded: dict, kind: str, ids: list, monkeypatch) -> int:
    pipeline = loaded[kind]._core.pipeline
    count = [0]
    id_to_token = pipeline.id_to_token

    def counted(token_id: int):
        count[0] += 1
        return id_to_token(token_id)

    monkeypatch.setattr(pipeline, "id_to_token", counted)
    text, offsets = loaded[kind].decode_with_offsets(ids)
    monkeypatch.setattr(pipeline, "id_to_token", id_to_token)
    assert len(offsets) == len(ids)
    return count[0]


def _byte_piece(enc: fasttok.Encoding, byte: int) -> int:
    return enc._core.pipeline.token_to_id(f"<0x{byte:02X}>")


@pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)
@pytest.mark.parametrize("kind", ["unigram_byte_fallback", "bpe_byte_fallback_fuse",
                                  "bpe_byte_fallback_fuse_strip"])
@pytest.mark.parametrize("byte", [0xC0, 0x41, 0x20])
def test_a_run_of_byte_pieces_is_read_once(loaded, kind, byte, monkeypatch):
    piece = _byte_piece(_encoding(loaded, kind), byte)
    for n in (1000, 4000):
        # decoded in windows, each id of a run re-read the run: n²/2 look-ups
        assert _look_ups(loaded, kind, [piece] * n, monkeypatch) <= 2 * n


@pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)
@pytest.mark.parametrize("kind", sorted(FILES))
def test_each_id_is_looked_up_a_bounded_number_of_times(loaded, kind, monkeypatch):
    ids = _encoding(loaded, kind).encode_ordinary("The quick brown fox, 日本語 jumping over 12 dogs. " * 40)
    # windows looked each id up some 20 times
    assert _look_ups(loaded, kind, ids, monkeypatch) <= 2 * len(ids)
