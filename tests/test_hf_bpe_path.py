"""SentencePiece-style BPE ``tokenizer.json`` files in one compiled call a text
(``fasttok.formats.hf_bpe_path``) against ``tokenizers``.

Gemma 3 (Replace of spaces, a Split at spaces, 6,415 added tokens) and
Llama 2 (Prepend and Replace) take the path; what it does for each
normalizer it accepts is checked on small documents, and what it refuses
keeps the stages' path.
"""

from __future__ import annotations

import functools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA, DATA_MISSING, data_file, describe_mismatch, missing_data_reason, read_text, \
    without_truncation_or_padding

tokenizers = pytest.importorskip("tokenizers")

SHARED = ("gemma3", "llama2")


@functools.lru_cache(maxsize=None)
def _shared(name: str) -> tuple:
    path = str(data_file(DATA / "vocab" / "hf" / name / "tokenizer.json"))
    return fasttok.load(path), without_truncation_or_padding(tokenizers.Tokenizer.from_file(path))


@pytest.fixture(scope="module", params=SHARED)
def shared(request):
    return _shared(request.param)


def _assert_same(ours, theirs, texts) -> None:
    for text in texts:
        mine = ours.encode(text, allowed_special="all")
        want = theirs.encode(text, add_special_tokens=False).ids
        assert mine == want, describe_mismatch(mine, want, text, enc=ours)


def test_sentencepiece_style_files_take_the_one_call_path(shared):
    ours, _ = shared
    assert type(ours._core.pipeline.walk).__name__ == "StretchWalk"


def test_corpus_lines_and_whole_texts_give_tokenizers_ids(shared):
    if DATA_MISSING:
        pytest.skip(missing_data_reason(DATA))
    ours, theirs = shared
    for path in sorted((DATA / "corpus").glob("*.txt")):
        lines = read_text(path).split("\n")
        _assert_same(ours, theirs, lines[::40])
        _assert_same(ours, theirs, ["\n".join(lines[:2000])])


_PIECES = st.sampled_from([" ", "  ", "\n", "\n\n", "\t", "▁", "▁▁", "<start_of_turn>", "<s>",
                           "</s>", "<unused7>", "a", "é", "中", "😀", "\u0301", "x y"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=12))
def test_spaces_newlines_and_added_token_texts_give_tokenizers_ids(parts):
    for name in SHARED:
        ours, theirs = _shared(name)
        _assert_same(ours, theirs, ["".join(parts)])


def _doc(normalizer, pre_tokenizer=None) -> dict:
    chars = ["a", "b", " ", "_", "▁", "<unk>"]
    vocab = {c: i for i, c in enumerate(chars)}
    merges = [("_", "a"), ("▁", "a"), ("a", "b"), (" ", "a")]
    for left, right in merges:
        vocab[left + right] = len(vocab)
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": len(vocab), "content": "<x>", "single_word": False,
                          "lstrip": False, "rstrip": False, "normalized": False,
                          "special": True}],
        "normalizer": normalizer, "pre_tokenizer": pre_tokenizer, "post_processor": None,
        "decoder": None,
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>",
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": True, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": [list(m) for m in merges]},
    }


def _replace(content: str) -> dict:
    return {"type": "Replace", "pattern": {"String": " "}, "content": content}


def _prepend(text: str) -> dict:
    return {"type": "Prepend", "prepend": text}


def _sequence(*normalizers) -> dict:
    return {"type": "Sequence", "normalizers": list(normalizers)}


TAKEN = {
    "replace": (_replace("▁"), None),
    "prepend-then-replace": (_sequence(_prepend("_ "), _replace("▁")), None),
    "replace-then-prepend": (_sequence(_replace("_"), _prepend("▁")), None),
    "split-at-replaced-spaces": (_replace("_"), {"type": "Split", "pattern": {"String": " "},
                                                 "behavior": "MergedWithPrevious",
                                                 "invert": False}),
    "none": (None, None),
}
REFUSED = {
    "replace-by-nothing": (_sequence(_replace(""), _prepend("▁")), None),
    "two-prepends": (_sequence(_prepend("▁"), _prepend("_")), None),
    "split-at-kept-spaces": (_prepend("▁"), {"type": "Split", "pattern": {"String": " "},
                                             "behavior": "Isolated", "invert": False}),
    "lowercase": (_sequence({"type": "Lowercase"}, _replace("▁")), None),
}
TEXTS = ["a b", " ", "ab<x>ab", "<x> <x>", "", "<x>", "b  a<x> ", "ab ab", "c a"]


def _load(tmp_path, doc: dict) -> tuple:
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return fasttok.load(str(path)), tokenizers.Tokenizer.from_str(json.dumps(doc))


@pytest.mark.parametrize("case", list(TAKEN))
def test_each_accepted_normalizer_gives_tokenizers_ids(tmp_path, case):
    ours, theirs = _load(tmp_path, _doc(*TAKEN[case]))
    assert type(ours._core.pipeline.walk).__name__ == "StretchWalk"
    _assert_same(ours, theirs, TEXTS)


@pytest.mark.parametrize("case", list(REFUSED))
def test_other_stages_keep_their_own_path_and_tokenizers_ids(tmp_path, case):
    ours, theirs = _load(tmp_path, _doc(*REFUSED[case]))
    assert type(ours._core.pipeline.walk).__name__ != "StretchWalk"
    _assert_same(ours, theirs, TEXTS)


def test_an_added_token_with_lstrip_keeps_the_stages_path(tmp_path):
    doc = _doc(_replace("▁"))
    doc["added_tokens"][0]["lstrip"] = True
    ours, theirs = _load(tmp_path, doc)
    assert not ours._core.pipeline.added.matcher(False).plain
    _assert_same(ours, theirs, TEXTS)
