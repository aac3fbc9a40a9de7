"""``fasttok.load("tokenizer.json").encode_as_pieces`` against ``tokenizers``.

The pieces of a text are ``tokenizers``' ``Encoding.tokens`` of
``encode(text, add_special_tokens=False)`` where it matches no added token
(``encode_as_pieces`` matches none, as ``encode_ordinary``): the token
strings of the compiled walk's ids, a Unigram's unknown run spelled as its
text, byte fallback as ``<0xXX>``. Every shared file that is not byte-level
(those have no pieces) is checked on ``testcases/lines.jsonl``, a sample of
every corpus file and hypothesis text.
"""

from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA, DATA_MISSING, HF_OTHER, MISSING_DATA_REASON, Mismatches, data_file, \
    read_jsonl, read_text, without_truncation_or_padding

tokenizers = pytest.importorskip("tokenizers")

HF = DATA / "vocab" / "hf"
FILES = tuple(f"{name}/tokenizer.json" for name in HF_OTHER) + tuple(
    f"unigram/{name}.json" for name in (
        "botchan_unigram_4000_bytefallback.v5.24.0.from_spm_proto",
        "botchan_unigram_5000.v4.57.6.AlbertTokenizer",
        "botchan_unigram_5000.v5.24.0.T5Tokenizer",
        "botchan_unigram_5000.v5.24.0.from_spm_proto",
        "kyoto_ja_unigram_8000.v4.57.6.XLNetTokenizer",
        "kyoto_ja_unigram_8000.v5.24.0.from_spm_proto"))
SAMPLE_EVERY = 40  # corpus lines per file: one in this many


@functools.lru_cache(maxsize=None)
def _pair(name: str) -> tuple:
    path = str(data_file(HF / name))
    return fasttok.load(path), without_truncation_or_padding(tokenizers.Tokenizer.from_file(path))


def _compare(name: str, texts: list, what: str) -> None:
    # texts where tokenizers matches an added token (or its model gives a
    # control id) have no reference: encode_as_pieces matches none
    ours, theirs = _pair(name)
    added = set(theirs.get_added_tokens_decoder())
    found = Mismatches(f"{name}: {what}")
    for i, (text, ref) in enumerate(zip(texts, theirs.encode_batch(
            texts, add_special_tokens=False))):
        if added.isdisjoint(ref.ids):
            mine = ours.encode_as_pieces(text)
            found.check(None if mine == ref.tokens else
                        f"{text!r}: {mine} != tokenizers' {ref.tokens}", str(i))
    found.assert_none()


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@pytest.mark.parametrize("name", FILES)
def test_pieces_equal_tokenizers_tokens_on_every_shared_test_line(name):
    path = data_file(DATA / "testcases" / "lines.jsonl")
    _compare(name, [c["text"] for c in read_jsonl(path) if _utf8(c["text"])], "lines.jsonl")


@pytest.mark.parametrize("name", FILES)
def test_pieces_equal_tokenizers_tokens_on_a_sample_of_every_corpus_file(name):
    if DATA_MISSING:
        pytest.skip(MISSING_DATA_REASON)
    lines = []
    for path in sorted((DATA / "corpus").glob("*.txt")):
        lines += read_text(path).split("\n")[::SAMPLE_EVERY]
    _compare(name, [line for line in lines if _utf8(line)], f"one corpus line in {SAMPLE_EVERY}")


# letters, spaces a normalizer squeezes, characters the small Unigram
# vocabularies lack (unknown runs, byte fallback) and combining marks
_TEXT = st.text(st.characters(codec="utf-8"), max_size=40) | st.text(
    st.sampled_from("ab é\u0301  \n\t'S1٣你語>!Ⅻ\U0001F999\u3000"), max_size=40)


@pytest.mark.parametrize("name", FILES)
def test_pieces_equal_tokenizers_tokens_on_hypothesis_text(name):
    ours, theirs = _pair(name)

    @settings(max_examples=150, derandomize=True, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(_TEXT)
    def check(text):
        _compare(name, [text], "hypothesis text")

    check()


@pytest.mark.parametrize("name", FILES)
def test_pieces_come_from_the_walk_not_the_stages(name, monkeypatch):
    ours, theirs = _pair(name)
    pipeline = ours._core.pipeline
    assert pipeline.walk is not None

    def staged(*args):
        raise AssertionError("the stages ran")

    monkeypatch.setattr(pipeline, "_splits", staged)
    text = "Unknown 你 runs\u3000and  spaces"
    assert ours.encode_as_pieces(text) == theirs.encode(text, add_special_tokens=False).tokens
