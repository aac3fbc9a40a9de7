"""The ids path of ``fasttok.load("tokenizer.json").encode``: the model asks
the configuration's walk first and repairs a text only after the walk
declines it; the Unigram walk runs its Replace stages in place and keeps a
call's buffers for the next. Each answer is ``tokenizers``'.
"""

from __future__ import annotations

import json

import pytest

import fasttok
from conftest import DATA, data_file, without_truncation_or_padding

tokenizers = pytest.importorskip("tokenizers")

HF = DATA / "vocab" / "hf"
# one file of each walk fasttok.load's plain model asks (the byte-level files have their own core)
WALKED = {"StretchWalk": "llama2/tokenizer.json", "BertWalk": "all-MiniLM-L6-v2/tokenizer.json",
          "UnigramPathWalk": "unigram/botchan_unigram_5000.v5.24.0.T5Tokenizer.json"}
T5 = "unigram/botchan_unigram_5000.v5.24.0.T5Tokenizer.json"
SURROGATE_TEXTS = ["a\ud800b", "\udfff", "x \udc80 y\n"]


def _path(name: str) -> str:
    return str(data_file(HF / name))


def _reference(document: str):
    return without_truncation_or_padding(tokenizers.Tokenizer.from_str(document))


def _repaired(text: str) -> str:
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


@pytest.mark.parametrize("walk", list(WALKED))
def test_a_lone_surrogate_is_declined_by_the_walk_and_encoded_as_its_repair(walk):
    path = _path(WALKED[walk])
    enc = fasttok.load(path)
    pipeline = enc._core.pipeline
    assert type(pipeline.walk).__name__ == walk
    reference = _reference(open(path, encoding="utf-8").read())
    for text in SURROGATE_TEXTS:
        assert pipeline.walk.ids(text, None) is None, text
        assert enc.encode(text, allowed_special="all") == \
            reference.encode(_repaired(text), add_special_tokens=False).ids, text


# A Replace of each kind the Unigram walk runs: a literal that shrinks, one
# that keeps the length, one that grows (the one not done in place), the
# runs at the ends trimmed, a run squeezed, the start doubled.
REPLACES = [
    {"type": "Replace", "pattern": {"String": "``"}, "content": "\""},
    {"type": "Replace", "pattern": {"String": "\t"}, "content": " "},
    {"type": "Replace", "pattern": {"String": "ab"}, "content": "abab"},
    {"type": "Replace", "pattern": {"Regex": "\\A +| +\\z"}, "content": ""},
    {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
    {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
    {"type": "Replace", "pattern": {"Regex": "\\A\u2581"}, "content": "\u2581\u2581"},
]
EDGE_TEXTS = ["", " ", "   ", "ab", " ab  ab\tab ", "``quoted''  \t text``", "\t\tlead",
              "trail \t ", "x" * 300 + "  " + "ab " * 200, "日本語 ab\tab"]


def _replaces_document() -> str:
    document = json.loads(open(_path(T5), encoding="utf-8").read())
    document["normalizer"] = {"type": "Sequence", "normalizers": REPLACES}
    return json.dumps(document)


def test_every_replace_kind_gives_the_ids_and_offsets_of_tokenizers(tmp_path):
    document = _replaces_document()
    path = tmp_path / "replaces.json"
    path.write_text(document, encoding="utf-8")
    enc = fasttok.load(str(path))
    walk = enc._core.pipeline.walk
    assert type(walk).__name__ == "UnigramPathWalk"
    reference = _reference(document)
    for text in EDGE_TEXTS:
        expected = reference.encode(text, add_special_tokens=False)
        assert enc.encode(text, allowed_special="all") == expected.ids, text
        ids, offsets = walk.encode(text, None)[:2]
        assert list(ids) == expected.ids, text
        assert list(zip(offsets[::2], offsets[1::2])) == [tuple(o) for o in expected.offsets], text


def test_calls_with_and_without_offsets_in_turn_give_tokenizers_answers():
    # the walk keeps a call's buffers for the next; a call without offsets
    # leaves the offset arrays behind, and long and short texts alternate
    path = _path(T5)
    walk = fasttok.load(path)._core.pipeline.walk
    reference = _reference(open(path, encoding="utf-8").read())
    texts = ["A short line.", "a longer one, " * 400, "", "日本語のテキスト " * 50, "x"]
    for round_ in range(2):
        for i, text in enumerate(texts):
            expected = reference.encode(text, add_special_tokens=False)
            if (i + round_) % 2:
                assert walk.ids(text, None) == expected.ids, text[:20]
            else:
                ids, offsets = walk.encode(text, None)[:2]
                assert list(ids) == expected.ids, text[:20]
                assert list(zip(offsets[::2], offsets[1::2])) == \
                    [tuple(o) for o in expected.offsets], text[:20]


def test_text_with_and_without_the_early_replace_patterns_gives_tokenizers_ids():
    # ALBERT's quote Replaces run before its charsmap; a text holding none of
    # their patterns goes to the charsmap as it is
    path = _path("unigram/botchan_unigram_5000.v4.57.6.AlbertTokenizer.json")
    enc = fasttok.load(path)
    reference = _reference(open(path, encoding="utf-8").read())
    for text in ["plain text", "it's `one` quote", "''.join(x)", "``quoted''", "a ` ` b ' ' c",
                 "end''", "``", "'", "caf\u00e9 ''\u00e9''"]:
        assert enc.encode(text, allowed_special="all") == \
            reference.encode(text, add_special_tokens=False).ids, text
