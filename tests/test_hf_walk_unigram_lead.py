"""The Unigram walk of files whose normalizer starts with stages the
compiled walk does not run (``fasttok.formats.hf_unigram_path.UnigramLeadWalk``):
ALBERT's lowercasing (``NFKD``, ``StripAccents``, ``Lowercase`` after its
quote ``Replace`` stages), ``NFKC``, ``Strip`` and ``Nmt``. Those stages
run first, as themselves, the compiled walk after them; ids, character
offsets and word indices equal ``tokenizers``' and the pipeline's stages'
for both faces (``fasttok.load``'s, whose model never gives a control id,
and ``tokenizers'``). A text holding added tokens is walked stretch by
stretch between them.
"""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA
from fasttok.formats import hf_walks
from fasttok.formats.hf import control_ids
from fasttok.formats.hf_pipeline import pipeline_from_document
from fasttok.formats.hf_unigram_path import UnigramLeadWalk
from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record

tokenizers = pytest.importorskip("tokenizers")

_PIECES = ["\u2581", "a", "b", "c", "e", "i", "f", "s", "k", "x", "1", "2", "\u65e5", "\u672c",
           "\u2581a", "\u2581b", "ab", "abc", "fi", "ss", "\u00e9", "\u03c3", "\"", "\u2581\"",
           "\u2581ab", "12"]
_QUOTES = [{"type": "Replace", "pattern": {"String": "``"}, "content": "\""},
           {"type": "Replace", "pattern": {"String": "''"}, "content": "\""}]
_SQUEEZE = {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}
_LOWER = [{"type": "NFKD"}, {"type": "StripAccents"}, {"type": "Lowercase"}]


def _sequence(*stages) -> dict:
    return {"type": "Sequence", "normalizers": list(stages)}


def _added(token_id: int, content: str, **flags) -> dict:
    return {"id": token_id, "content": content, "special": True, "single_word": False,
            "lstrip": False, "rstrip": False, "normalized": False} | flags


def _document(normalizer: dict) -> dict:
    vocab = [["<unk>", 0.0], ["<s>", 0.0], ["</s>", 0.0]]
    vocab += [[piece, -1.0 - 0.1 * len(piece) - 0.01 * i] for i, piece in enumerate(_PIECES)]
    return {"normalizer": normalizer,
            "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581",
                              "prepend_scheme": "always", "split": True},
            "model": {"type": "Unigram", "unk_id": 0, "vocab": vocab, "byte_fallback": False},
            "added_tokens": [_added(0, "<unk>"), _added(1, "<s>"), _added(2, "</s>"),
                             _added(len(vocab), "<mask>", lstrip=True)]}


def _before_charsmap(*stages) -> dict:
    # stages before the charsmap of the shared T5 conversion
    path = DATA / "vocab" / "hf" / "unigram" / "botchan_unigram_5000.v5.24.0.T5Tokenizer.json"
    if not path.is_file():
        pytest.skip(f"{path} is missing")
    doc = copy.deepcopy(json.loads(path.read_text(encoding="utf-8")))
    doc["normalizer"] = _sequence(*stages, doc["normalizer"], _SQUEEZE)
    doc["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581",
                            "prepend_scheme": "always", "split": True}
    return doc


CONFIGURATIONS = {
    "ALBERT's lowercasing": lambda: _document(_sequence(*_QUOTES, *_LOWER, _SQUEEZE)),
    "ALBERT's lowercasing before a charsmap": lambda: _before_charsmap(*_QUOTES, *_LOWER),
    "DeBERTa-v3's Lowercase and Strip before a charsmap": lambda: _before_charsmap(
        {"type": "Lowercase"}, {"type": "Strip", "strip_left": True, "strip_right": True}),
    "NFKC": lambda: _document({"type": "NFKC"}),
    "Strip and Lowercase": lambda: _document(_sequence(
        {"type": "Strip", "strip_left": True, "strip_right": True}, {"type": "Lowercase"})),
    "Nmt then NFKC": lambda: _document(_sequence({"type": "Nmt"}, {"type": "NFKC"}, _SQUEEZE)),
}


@pytest.fixture(scope="module", params=list(CONFIGURATIONS))
def configuration(request):
    doc = CONFIGURATIONS[request.param]()
    record = tokenizer_json_record(json.dumps(doc), "t.json")
    faces = {}
    for face, never in (("tokenizers", frozenset()), ("fasttok.load", control_ids(record))):
        pipeline = pipeline_from_document(record, never=never)
        faces[face] = (pipeline, hf_walks.walk_for(record, pipeline))
    theirs = tokenizers.Tokenizer.from_str(json.dumps(doc))
    return record, faces, theirs


def _walked(walk, text, allowed=None):
    found = walk.encode(text, allowed)
    if found is None:
        return None
    spans = found[1]
    return list(found[0]), [(spans[i], spans[i + 1]) for i in range(0, len(spans), 2)], \
        list(found[2])


_PARTS = ["AB", "ab", "abc", "\u00c9", "e\u0301", "\ufb01", "\u0130", "\u00df", "\u03a3", "ss",
          " ", "  ", "\t", "\n", "``", "''", "\"", "\uff11\uff12", "12", "\u65e5\u672c",
          "\U0001F600", "\u00a0", "\u200b", "\u01c5", "x\u0308\u0327", "\u212b", "\u3000",
          "\u1100\u1161", "<s>", "<mask>"]
_TEXTS = st.lists(st.sampled_from(_PARTS), max_size=10).map("".join)


def test_each_configuration_has_the_lead_walk(configuration):
    _, faces, _ = configuration
    assert all(type(walk) is UnigramLeadWalk for _, walk in faces.values())


def test_walk_equals_tokenizers(configuration):
    _, faces, theirs = configuration
    walk = faces["tokenizers"][1]

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_TEXTS)
    def check(text):
        found = _walked(walk, text)
        e = theirs.encode(text, add_special_tokens=False)
        assert found == (e.ids, e.offsets, e.word_ids)
        assert walk.ids(text, None) == e.ids

    check()


@pytest.mark.parametrize("face", ["tokenizers", "fasttok.load"])
def test_walk_equals_the_stages_of_each_face(configuration, face):
    record, faces, _ = configuration
    pipeline, walk = faces[face]
    ids = sorted(i for _, i, _ in record.metadata["added_tokens"])
    allowed_sets = st.one_of(st.none(), st.sets(st.sampled_from(ids)).map(frozenset))

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_TEXTS, allowed_sets)
    def check(text, allowed):
        found = _walked(walk, text, allowed)
        if found is None:
            return
        staged = pipeline._encode_staged(text, 0, None, allowed)
        assert found == (staged.ids, staged.offsets, staged.word_ids)
        assert walk.ids(text, allowed) == staged.ids

    check()


def test_a_text_with_added_tokens_is_walked_stretch_by_stretch():
    # a fill-mask input: the lstrip mask takes the space before it
    doc = CONFIGURATIONS["ALBERT's lowercasing"]()
    record = tokenizer_json_record(json.dumps(doc), "t.json")
    walk = hf_walks.walk_for(record, pipeline_from_document(record))
    theirs = tokenizers.Tokenizer.from_str(json.dumps(doc))
    for text in ("The AB is <mask>.", "<s>AB  <mask></s>", "<mask>"):
        e = theirs.encode(text, add_special_tokens=False)
        assert _walked(walk, text) == (e.ids, e.offsets, e.word_ids), text


def test_metaspace_prepending_at_the_start_only_declines_a_stretch_after_a_token():
    doc = CONFIGURATIONS["NFKC"]()
    doc["pre_tokenizer"]["prepend_scheme"] = "first"
    record = tokenizer_json_record(json.dumps(doc), "t.json")
    walk = hf_walks.walk_for(record, pipeline_from_document(record))
    theirs = tokenizers.Tokenizer.from_str(json.dumps(doc))
    assert walk.encode("ab <s>b", None) is None
    e = theirs.encode("ab b<s>", add_special_tokens=False)
    assert _walked(walk, "ab b<s>") == (e.ids, e.offsets, e.word_ids)


def test_lowercase_offsets_point_into_the_users_text():
    # "İ" lowercases to two characters, both of its span; "ﬁ" decomposes to two
    doc = CONFIGURATIONS["Strip and Lowercase"]()
    record = tokenizer_json_record(json.dumps(doc), "t.json")
    walk = hf_walks.walk_for(record, pipeline_from_document(record))
    theirs = tokenizers.Tokenizer.from_str(json.dumps(doc))
    for text in ("  AB \u0130b  ", "\ufb01 AB", "", "   "):
        e = theirs.encode(text, add_special_tokens=False)
        assert _walked(walk, text) == (e.ids, e.offsets, e.word_ids), text
