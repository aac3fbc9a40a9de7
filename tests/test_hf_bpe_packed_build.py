"""A ``tokenizer.json`` BPE model built from the packed vocabulary and merges
of fasttok's compiled reader (``ModelObject``, ``packed_merge_slots``) is the
model the Python build makes from ``json.loads``' objects.

* The merge slots found in the packed UTF-8 are ``merge_slots``' on Python
  strings, rank for rank, on the shared SentencePiece-BPE files and on
  small models in both merge forms, with a continuing-subword prefix and
  special added tokens left out of the merges.
* The two builds give the same tokens, ids and offsets on corpus lines.
* A merge the packed build does not take (an unknown part, a merged token
  missing, a malformed merge) is reported by the Python build: the same
  error at the same JSON path. (A lone surrogate never reaches the packed
  build: the reader leaves its document to ``json.loads``, and the loader
  refuses it, as tokenizers does.)
"""

from __future__ import annotations

import copy
import json
import pickle
import re

import pytest

from conftest import DATA, DATA_MISSING, missing_data_reason
from fasttok.loaders.hf_tokenizer_json import ModelObject
from fasttok.loaders.json_document import parse_tokenizer_json
from fasttok.models import hf_bpe
from fasttok.models._hf_bpe import merge_slots, packed_merge_slots
from fasttok.models.hf_bpe import bpe_from_json
from fasttok.shared._json_reader import read_tokenizer_document
from fasttok.shared._tables import TokenTables

HF = DATA / "vocab" / "hf"
CORPUS = DATA / "corpus"


def fail(where, problem):
    return ValueError(f"{where}: {problem}")


def packed_object(model: dict) -> ModelObject:
    """The ``ModelObject`` of a document holding ``model``, read packed."""
    doc, packed = read_tokenizer_document(json.dumps({"model": model}).encode())
    assert packed is not None and packed.vocab is not None and packed.merges is not None
    return ModelObject(packed)


def both_builds(model: dict, never: frozenset = frozenset()) -> tuple:
    return (bpe_from_json(packed_object(model), "$.model", fail, never),
            bpe_from_json(model, "$.model", fail, never))


def python_slots(model: dict, cut: int = 0, skip=None):
    texts = list(model["vocab"])
    merges = model["merges"]
    legacy = bool(merges) and all(type(m) is str for m in merges)
    return merge_slots(merges, TokenTables([t.encode() for t in texts]), cut,
                       texts.index("") if "" in texts else -1, legacy=legacy, skip=skip)


def packed_slots(model: dict, cut: int = 0, skip=None):
    packed = packed_object(model).packed
    return packed_merge_slots(packed.vocab, packed.merges, cut, skip=skip)


def shared_file(name: str) -> tuple:
    path = HF / name / "tokenizer.json"
    if DATA_MISSING or not path.is_file():
        pytest.skip(missing_data_reason(path))
    data = path.read_bytes()
    model = json.loads(data)["model"]
    doc, packed = parse_tokenizer_json(data, str(path))
    return model, ModelObject(packed)


def corpus_lines(name: str, count: int) -> list:
    path = CORPUS / f"{name}.txt"
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    lines = path.read_text(encoding="utf-8").splitlines()[:count]
    # as the SentencePiece-style normalizers hand text to the model
    return ["▁" + line.replace(" ", "▁") for line in lines if line]


SMALL = {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "c": 3, "abc": 4, "": 5, "bc": 6},
         "merges": [["a", "b"], ["ab", "c"], ["b", "c"], ["a", "b"]]}


@pytest.mark.parametrize("merges", [
    [["a", "b"], ["ab", "c"], ["b", "c"], ["a", "b"]],
    ["#version: 0.2", "a b", "ab c", "b c"],
    [["", "a"], ["a", ""]],
])
def test_packed_merge_slots_are_merge_slots_of_the_python_strings(merges):
    model = dict(SMALL, merges=merges)
    assert packed_slots(model) == python_slots(model)


def test_packed_merge_slots_leave_out_merges_into_a_skipped_slot():
    skip = bytes([0, 0, 1, 0, 0, 0, 0])
    assert packed_slots(SMALL, skip=skip) == python_slots(SMALL, skip=skip)
    assert len(packed_slots(SMALL, skip=skip)) < len(packed_slots(SMALL))


def test_packed_merge_slots_join_under_a_continuing_subword_prefix():
    model = {"type": "BPE", "vocab": {"é": 0, "##è": 1, "éè": 2, "##ü": 3, "éèü": 4},
             "merges": ["é ##è", "éè ##ü"]}
    assert packed_slots(model, cut=2) == python_slots(model, cut=2) != packed_slots(model)


@pytest.mark.parametrize("merges", [
    [["a", "b"], ["a", "x"]],          # an unknown right part
    [["x", "b"]],                      # an unknown left part
    [["b", "a"]],                      # the merged token missing
    ["a b c"],                         # not two parts
    ["a b", ["a", "b"]],               # the forms mixed: the string is no pair
    [["a", "b"], "a b"],
])
def test_packed_merge_slots_stop_where_merge_slots_stop(merges):
    model = dict(SMALL, merges=merges)
    assert packed_slots(model) == python_slots(model)


@pytest.mark.parametrize("bad_at", [63, 64, 130])
def test_packed_merge_slots_stop_at_a_bad_merge_past_the_first_block(bad_at):
    # the parts of 64 merges are looked up together
    vocab = {chr(0x100 + k): k for k in range(200)}
    merges = [[chr(0x100 + k), chr(0x100 + k + 1)] for k in range(150)]
    vocab.update({a + b: 200 + k for k, (a, b) in enumerate(merges)})
    merges[bad_at] = [merges[bad_at][0], "x"]
    model = {"type": "BPE", "vocab": vocab, "merges": merges}
    assert packed_slots(model) == python_slots(model) == (bad_at, 1)
    merges[bad_at] = merges[0]
    assert len(packed_slots(model)) == 3 * 150


def test_packed_merge_slots_name_a_cut_inside_a_character_as_the_merged_token():
    model = {"type": "BPE", "vocab": {"a": 0, "é": 1, "a\xa9": 2}, "merges": [["a", "é"]]}
    assert packed_slots(model, cut=1) == python_slots(model, cut=1) == (0, 2)


@pytest.mark.parametrize("merges, where, problem", [
    ([["a", "b"], ["a", "x"]], "$.model.merges[1]", "token `x` is not in the vocabulary"),
    ([["b", "a"]], "$.model.merges[0]", "the merged token of `b` and `a` is not in the vocabulary"),
    (["a b c"], "$.model.merges[0]", "expected two tokens"),
    (["a b", ["a", "b"]], "$.model.merges[0]", "expected a pair"),
])
def test_a_bad_merge_read_packed_fails_as_the_python_build_fails(merges, where, problem):
    model = {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": merges}
    for spec in (packed_object(model), model):
        with pytest.raises(ValueError, match=f"^{re.escape(where)}: {re.escape(problem)}"):
            bpe_from_json(spec, "$.model", fail)


def test_a_vocabulary_whose_ids_are_not_its_places_is_built_from_the_python_objects():
    model = {"type": "BPE", "vocab": {"b": 1, "a": 0, "ab": 2}, "merges": [["a", "b"]]}
    packed, plain = both_builds(model)
    assert packed.tokenize("abab") == plain.tokenize("abab") == [(2, "ab", (0, 2)), (2, "ab", (2, 4))]


def test_the_packed_build_makes_no_merge_slots_from_python_strings(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("merge_slots called on Python strings")
    monkeypatch.setattr(hf_bpe, "merge_slots", refuse)
    model = bpe_from_json(packed_object(SMALL), "$.model", fail)
    assert model.tokenize_ids("abc") == [0, 6]  # "a b" last listed: its later rank


def test_special_added_tokens_stay_out_of_the_merges_of_both_builds():
    packed, plain = both_builds(SMALL, never=frozenset({2}))
    assert packed.tokenize("abc") == plain.tokenize("abc") == [(0, "a", (0, 1)), (6, "bc", (1, 3))]


def test_a_packed_builds_unknown_token_and_never_ids_are_the_python_builds():
    # the packed build finds the unknown token and the never slots without
    # the token strings, which it decodes only when a tokenize names them
    model = {"type": "BPE", "unk_token": "<unk>", "fuse_unk": True,
             "vocab": {"é": 0, "<unk>": 1, "b": 2, "éb": 3, "bé": 4},
             "merges": [["é", "b"], ["b", "é"]]}
    found = {}
    for never in (frozenset(), frozenset({3, 99})):
        packed, plain = both_builds(model, never)
        found[never] = packed.tokenize("ébéxx")
        assert found[never] == plain.tokenize("ébéxx")
        assert packed.texts_by_id == plain.texts_by_id == tuple(model["vocab"])
    assert found == {frozenset(): [(3, "éb", (0, 2)), (0, "é", (2, 3)), (1, "<unk>", (3, 5))],
                     frozenset({3, 99}): [(0, "é", (0, 1)), (4, "bé", (1, 3)), (1, "<unk>", (3, 5))]}


def test_the_packed_builds_lookups_are_the_python_builds():
    packed, plain = both_builds(SMALL)
    assert packed.get_vocab() == plain.get_vocab() == SMALL["vocab"]
    assert packed.get_vocab_size() == plain.get_vocab_size() == 7
    for token in ("ab", "", "x"):
        assert packed.token_to_id(token) == plain.token_to_id(token)
    for token_id in (0, 5, 9):
        assert packed.id_to_token(token_id) == plain.id_to_token(token_id)


def test_texts_by_id_are_the_vocabularys_texts_at_their_ids_or_none_for_other_ids():
    packed, plain = both_builds(SMALL)
    assert packed.texts_by_id == plain.texts_by_id == tuple(SMALL["vocab"])
    sparse = dict(SMALL, vocab={"a": 0, "b": 1, "ab": 3, "c": 4, "abc": 5, "": 6, "bc": 7})
    assert all(model.texts_by_id is None for model in both_builds(sparse))


def test_a_model_object_pickles_and_copies_as_the_json_object():
    model = packed_object(SMALL)
    for made in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model)):  # both parts made
        assert type(made) is dict and made == SMALL


@pytest.mark.parametrize("name", ["llama2", pytest.param("gemma3", marks=pytest.mark.slow)])
def test_a_shared_files_packed_merge_slots_are_its_python_merge_slots(name):
    model, packed = shared_file(name)
    assert packed_slots_of(packed) == python_slots(model)


def packed_slots_of(model: ModelObject):
    return packed_merge_slots(model.packed.vocab, model.packed.merges, 0)


@pytest.mark.parametrize("name", ["llama2", pytest.param("gemma3", marks=pytest.mark.slow)])
def test_a_shared_files_packed_model_tokenizes_corpus_lines_as_its_python_model(name):
    model, packed = shared_file(name)
    ours = bpe_from_json(packed, "$.model", fail)
    plain = bpe_from_json(model, "$.model", fail)
    for corpus in ("en", "code", "zh"):
        for line in corpus_lines(corpus, 300):
            assert ours.tokenize(line) == plain.tokenize(line), (corpus, line)
