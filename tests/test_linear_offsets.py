"""The offsets of ``fasttok.hf.Tokenizer.encode`` cost linear work in the
input, counted in alignment entries read (never in seconds), and stay
``tokenizers``' on long runs of one character.

* Every token of a run the model cannot spell (a byte-fallback run of CJK)
  shares the run's span; finding a token's span reads the two ends of its
  alignment, not the whole run, so ``'日' * n`` reads ``O(n)`` entries (it
  read ``O(n²)``: 30 s for 65536 characters, attack case 108).
* The ids, tokens, offsets and word ids of long runs of one CJK character,
  letter, space, combining mark or newline, alone, as a pair and truncated
  with a stride, are ``tokenizers``'.
"""

from __future__ import annotations

import pytest

import fasttok.hf
from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON
from fasttok.shared.normalized import NormalizedString

tokenizers = pytest.importorskip("tokenizers")

pytestmark = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)

HF = DATA / "vocab" / "hf"
FILES = {
    "unigram_byte_fallback": HF / "unigram" / "botchan_unigram_4000_bytefallback.v5.24.0"
    ".from_spm_proto.json",
    "bpe_byte_fallback": HF / "llama2" / "tokenizer.json",
    "wordpiece": HF / "all-MiniLM-L6-v2" / "tokenizer.json",
}
RUNS = {"cjk": "日", "letter": "a", "space": " ", "combining_mark": "\u0301", "newline": "\n"}
_LOADED: dict = {}


def _pair_of_tokenizers(kind: str) -> tuple:
    if kind not in _LOADED:
        path = str(FILES[kind])
        ours, theirs = fasttok.hf.Tokenizer.from_file(path), tokenizers.Tokenizer.from_file(path)
        # the files' own truncation (MiniLM: 128) would hide the long inputs
        ours.no_truncation()
        theirs.no_truncation()
        _LOADED[kind] = (ours, theirs)
    return _LOADED[kind]


class _CountingList(list):
    """A list that counts the entries read through indexing and slicing."""

    reads = 0

    def __getitem__(self, key):
        found = super().__getitem__(key)
        _CountingList.reads += len(found) if isinstance(key, slice) else 1
        return found


def _alignment_reads(monkeypatch, tok, text: str) -> int:
    # the stages' own offsets (the oracle the compiled walks are held to):
    # each NormalizedString whose offsets are asked for gets its alignment
    # wrapped once (a copy per string, not per token, so the wrapping itself
    # stays linear), then every entry read is counted
    convert = NormalizedString.convert_offsets

    def counted(self, start: int, end: int):
        if type(self.alignments) is not _CountingList:
            self.alignments = _CountingList(self.alignments)
        return convert(self, start, end)

    monkeypatch.setattr(NormalizedString, "convert_offsets", counted)
    monkeypatch.setattr(tok._pipeline, "walk", None)
    _CountingList.reads = 0
    tok.encode(text)
    monkeypatch.setattr(NormalizedString, "convert_offsets", convert)
    return _CountingList.reads


@pytest.mark.parametrize("kind", ["unigram_byte_fallback", "bpe_byte_fallback"])
@pytest.mark.parametrize("run", sorted(RUNS))
def test_offsets_read_alignment_entries_linear_in_the_input(monkeypatch, kind, run):
    tok = _pair_of_tokenizers(kind)[0]
    base = 250
    reads = {k: _alignment_reads(monkeypatch, tok, RUNS[run] * (base * k)) for k in (1, 2, 4, 8)}
    assert reads[1] > 0
    for k in (2, 4, 8):
        # linear up to a constant at the ends; a quadratic path reads k² times as many
        assert reads[k] <= k * reads[1] + 64, reads


def test_offsets_of_a_token_in_a_long_shared_span_reads_its_two_ends():
    # a byte-fallback run: every normalized character maps to the whole run
    ns = NormalizedString("日" * 1000, "日" * 1000, _CountingList([(0, 1000)] * 1000))
    _CountingList.reads = 0
    assert ns.offsets_of(0, 1000) == (0, 1000)
    assert _CountingList.reads <= 2


def _fields(enc) -> tuple:
    return enc.ids, enc.tokens, enc.offsets, enc.word_ids, enc.type_ids


@pytest.mark.parametrize("kind", sorted(FILES))
@pytest.mark.parametrize("run", sorted(RUNS))
def test_long_run_encodes_as_tokenizers_does(kind, run):
    ours, theirs = _pair_of_tokenizers(kind)
    text = RUNS[run] * 1000
    assert _fields(ours.encode(text)) == _fields(theirs.encode(text))


@pytest.mark.parametrize("kind", sorted(FILES))
@pytest.mark.parametrize("run", ["cjk", "letter"])
def test_long_run_pair_encodes_as_tokenizers_does(kind, run):
    ours, theirs = _pair_of_tokenizers(kind)
    text = RUNS[run] * 500
    assert _fields(ours.encode(text, "ab " + text)) == _fields(theirs.encode(text, "ab " + text))


@pytest.mark.parametrize("kind", sorted(FILES))
@pytest.mark.parametrize("run", ["cjk", "space"])
def test_long_run_truncated_with_a_stride_overflows_as_tokenizers_does(kind, run):
    ours, theirs = _pair_of_tokenizers(kind)
    text = RUNS[run] * 1000
    try:
        for tok in (ours, theirs):
            tok.enable_truncation(max_length=64, stride=16)
        mine, reference = ours.encode(text), theirs.encode(text)
    finally:
        for tok in (ours, theirs):
            tok.no_truncation()
    assert _fields(mine) == _fields(reference)
    assert [_fields(o) for o in mine.overflowing] == [_fields(o) for o in reference.overflowing]
