"""Every part of a ``tokenizer.json`` is read by one field reader
(:class:`fasttok.shared.json_fields.Fields`): a field of the wrong kind or a
missing one is a ``VocabularyFileError`` naming the file and the JSON path,
in the same words whichever stage, the loader or the post-processing
settings hold it.
"""

from __future__ import annotations

import json

import pytest

from fasttok.errors import VocabularyFileError
from fasttok.formats.hf_pipeline import pipeline_from_document
from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record

_MODEL = {"type": "WordLevel", "vocab": {"a": 0, "<s>": 1}, "unk_token": "a"}


def _load(**parts) -> None:
    doc = {"model": _MODEL} | parts
    pipeline_from_document(tokenizer_json_record(json.dumps(doc), "t.json"))


CASES = {
    "model": ({"model": 1}, "$.model", "expected an object, got 1"),
    "added token flag": ({"added_tokens": [{"id": 1, "content": "<s>", "special": "no"}]},
                         "$.added_tokens[0].special", "expected a boolean or null, got 'no'"),
    "normalizer": ({"normalizer": {"type": "BertNormalizer", "clean_text": 1,
                                   "handle_chinese_chars": True, "lowercase": True}},
                   "$.normalizer.clean_text", "expected a boolean, got 1"),
    "pre-tokenizer": ({"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": "yes",
                                         "trim_offsets": True}},
                      "$.pre_tokenizer.add_prefix_space", "expected a boolean, got 'yes'"),
    "decoder": ({"decoder": {"type": "ByteLevel", "add_prefix_space": True,
                             "trim_offsets": None}},
                "$.decoder.trim_offsets", "expected a boolean, got null"),
    "post-processor": ({"post_processor": {"type": "ByteLevel", "add_prefix_space": 1,
                                           "trim_offsets": True}},
                       "$.post_processor.add_prefix_space", "expected a boolean, got 1"),
    "truncation": ({"truncation": {"max_length": -1, "stride": 0, "strategy": "LongestFirst"}},
                   "$.truncation.max_length",
                   "expected an integer from 0 to 18446744073709551615, got -1"),
    "padding": ({"padding": {"strategy": "BatchLongest", "direction": "Right", "pad_id": "0",
                             "pad_type_id": 0, "pad_token": "a"}},
                "$.padding.pad_id", "expected an integer from 0 to 4294967295, got '0'"),
    "template ids": ({"post_processor": {"type": "TemplateProcessing", "single": [], "pair": [],
                                         "special_tokens": {"<s>": {"id": "<s>", "ids": [-1],
                                                                    "tokens": ["<s>"]}}}},
                     "$.post_processor.special_tokens['<s>'].ids[0]",
                     "expected an integer from 0 to 4294967295, got -1"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_field_of_the_wrong_kind_is_named_by_file_and_json_path(case):
    parts, where, problem = CASES[case]
    with pytest.raises(VocabularyFileError) as error:
        _load(**parts)
    assert str(error.value).startswith(f"t.json: field {where!r}: ")
    assert str(error.value).endswith(problem)


MISSING = {
    "normalizer": ({"normalizer": {"type": "Strip", "strip_left": True}},
                   "$.normalizer.strip_right"),
    "pre-tokenizer": ({"pre_tokenizer": {"type": "Digits"}}, "$.pre_tokenizer.individual_digits"),
    "decoder": ({"decoder": {"type": "Strip", "content": " ", "start": 1}}, "$.decoder.stop"),
    "truncation": ({"truncation": {"max_length": 8, "strategy": "LongestFirst"}},
                   "$.truncation.stride"),
    "added token": ({"added_tokens": [{"id": 1}]}, "$.added_tokens[0].content"),
}


@pytest.mark.parametrize("case", MISSING)
def test_a_missing_field_is_named_by_file_and_json_path(case):
    parts, where = MISSING[case]
    with pytest.raises(VocabularyFileError) as error:
        _load(**parts)
    assert str(error.value) == f"t.json: field {where!r}: missing field"


@pytest.mark.parametrize("bad", [True, -1, 2**32, 1.0, "3"])
@pytest.mark.parametrize("model", [
    {"type": "BPE", "merges": []},
    {"type": "WordPiece", "unk_token": "a", "continuing_subword_prefix": "##",
     "max_input_chars_per_word": 100},
    {"type": "WordLevel", "unk_token": "a"},
])
def test_a_vocabulary_id_that_is_no_id_is_named_by_its_entry(model, bad):
    # the ids are checked by C loops all at once; the entry named is the culprit
    doc = {"model": model | {"vocab": {"a": 0, "<s>": 1, "b": bad, "c": 3}}}
    with pytest.raises(VocabularyFileError, match=r"t\.json: field '\$\.model\.vocab.*b"):
        _load(**doc)


def test_the_ids_of_a_vocabulary_are_checked_all_at_once():
    from fasttok.shared.json_fields import all_ints

    assert all_ints([0, 5, 2**32 - 1], 2**32)
    assert all_ints([], 2**32)
    for bad in ([0, True], [0, -1], [0, 2**32], [0, 1.0], [0, "1"], [None]):
        assert not all_ints(bad, 2**32), bad
