"""BERT files of one BertNormalizer setting share one table of per-code-point
rules (:func:`fasttok.formats.hf_bert.bert_walk`), so a file loaded after
another asks the stages nothing they were asked before; files of other
settings get tables of their own and keep their own answers.
"""

from __future__ import annotations

import json

import pytest

from fasttok.formats.hf_bert import bert_walk
from fasttok.formats.hf_pipeline import pipeline_from_document
from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record

tokenizers = pytest.importorskip("tokenizers")

VOCAB = {"[UNK]": 0, "hello": 1, "Hello": 2, "world": 3, "WORLD": 4, "!": 5, "\u00e9t\u00e9": 6,
         "ete": 7}


def _document(lowercase: bool, strip_accents=None, vocab=VOCAB) -> str:
    return json.dumps({
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": strip_accents, "lowercase": lowercase},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": vocab}})


def _walk(document: str):
    record = tokenizer_json_record(document, "t.json")
    return bert_walk(record, pipeline_from_document(record))


def test_files_of_one_setting_share_their_rules():
    one = _walk(_document(lowercase=True))
    two = _walk(_document(lowercase=True, vocab={**VOCAB, "extra": 8}))
    assert one.rules is two.rules


@pytest.mark.parametrize("text", ["Hello WORLD!", "\u00c9t\u00e9 hello", "x\u00e9t\u00e9"])
def test_files_of_other_settings_keep_their_own_answers(text):
    settings = [(True, None), (False, None), (False, False), (True, False)]
    walks = [_walk(_document(*s)) for s in settings]
    assert len({id(w.rules) for w in walks}) == len(settings)
    for s, walk in zip(settings, walks):
        reference = tokenizers.Tokenizer.from_str(_document(*s))
        assert walk.ids(text, None) == reference.encode(text, add_special_tokens=False).ids, s
