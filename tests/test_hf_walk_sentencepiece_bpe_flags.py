"""The SentencePiece-style BPE walk of files with added tokens given
``lstrip``, ``rstrip`` or ``single_word`` (a Llama 2 conversion with a
RoBERTa-style mask): a text in which one occurs is left to the stages, any
other is walked, its plain added tokens cut as ``tokenizers`` cuts them;
ids, offsets and word ids equal ``tokenizers``' and the stages' of both
faces (``fasttok.load``'s, whose model never gives a control id, and
``tokenizers``').
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fasttok.formats import hf_walks
from fasttok.formats.hf import control_ids
from fasttok.formats.hf_pipeline import pipeline_from_document
from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
from fasttok.models.hf_bpe import StretchWalker

tokenizers = pytest.importorskip("tokenizers")

_FLAGGED = ("<mask>", "[R]", "hi")


def _added(token_id: int, content: str, **flags) -> dict:
    return {"id": token_id, "content": content, "special": True, "single_word": False,
            "lstrip": False, "rstrip": False, "normalized": False} | flags


def _document() -> dict:
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for piece in ["\u2581", "a", "b", "h", "i", "\u2581a", "ab", "\u2581ab", "hi", "\u2581hi",
                  "\u65e5", "\u672c", "\u65e5\u672c"]:
        vocab[piece] = len(vocab)
    merges = [["\u2581", "a"], ["a", "b"], ["\u2581a", "b"], ["h", "i"], ["\u2581", "hi"],
              ["\u65e5", "\u672c"]]
    n = len(vocab)
    return {"normalizer": {"type": "Sequence", "normalizers": [
                {"type": "Prepend", "prepend": "\u2581"},
                {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
            "pre_tokenizer": None,
            "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": True,
                      "byte_fallback": True, "vocab": vocab, "merges": merges},
            "added_tokens": [_added(0, "<unk>"), _added(1, "<s>"), _added(2, "</s>"),
                             _added(n, "<mask>", lstrip=True), _added(n + 1, "[R]", rstrip=True),
                             _added(n + 2, "hi", single_word=True, special=False)]}


@pytest.fixture(scope="module")
def faces():
    doc = _document()
    record = tokenizer_json_record(json.dumps(doc), "t.json")
    found = {}
    for face, never in (("tokenizers", frozenset()), ("fasttok.load", control_ids(record))):
        pipeline = pipeline_from_document(record, never=never)
        found[face] = (pipeline, hf_walks.walk_for(record, pipeline))
    return record, found, tokenizers.Tokenizer.from_str(json.dumps(doc))


def _walked(walk, text, allowed=None):
    found = walk.encode(text, allowed)
    if found is None:
        return None
    ids, spans, words = found
    return list(ids), [(spans[i], spans[i + 1]) for i in range(0, len(spans), 2)], list(words)


_PARTS = ["a", "ab", "b", " ", "  ", "hi", "h", "<s>", "</s>", "<mask>", "[R]", "\u65e5\u672c",
          "\u00e9", "\U0001F600", "\n", "\u2581"]
_TEXTS = st.lists(st.sampled_from(_PARTS), max_size=10).map("".join)


def test_the_file_has_the_walk(faces):
    _, found, _ = faces
    assert all(isinstance(walk, StretchWalker) for _, walk in found.values())


def test_walk_equals_tokenizers_where_no_flagged_token_occurs(faces):
    _, found, theirs = faces
    walk = found["tokenizers"][1]

    @settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_TEXTS)
    def check(text):
        mine = _walked(walk, text)
        if mine is None:
            assert any(flagged in text for flagged in _FLAGGED)
            return
        e = theirs.encode(text, add_special_tokens=False)
        assert mine == (e.ids, e.offsets, e.word_ids)
        assert walk.ids(text, None) == e.ids

    check()


@pytest.mark.parametrize("face", ["tokenizers", "fasttok.load"])
def test_walk_equals_the_stages_of_each_face(faces, face):
    record, found, _ = faces
    pipeline, walk = found[face]
    ids = sorted(i for _, i, _ in record.metadata["added_tokens"])

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_TEXTS, st.one_of(st.none(), st.sets(st.sampled_from(ids)).map(frozenset)))
    def check(text, allowed):
        mine = _walked(walk, text, allowed)
        if mine is None:
            return
        staged = pipeline._encode_staged(text, 0, None, allowed)
        assert mine == (staged.ids, staged.offsets, staged.word_ids)

    check()


def test_only_texts_holding_a_flagged_token_are_declined(faces):
    _, found, _ = faces
    walk = found["tokenizers"][1]
    assert walk.encode("ab <s> ab", None) is not None
    assert walk.encode("ab <mask>", None) is None
    assert walk.ids("a [R] b", None) is None
