"""``fasttok.load`` and ``fasttok.hf.Tokenizer.from_file`` are two faces of one
reading of a ``tokenizer.json`` (:func:`fasttok.tokenizer_json.read_tokenizer_json`):
the drop-in reads and writes the same table cache, gives the same encodings
from it as from the file, and builds no model it has not been asked for.

Every test points ``FASTTOK_CACHE_DIR`` at its own temporary folder.
"""

from __future__ import annotations

import json
import pickle

import pytest

import fasttok
import fasttok.hf
import fasttok.loaders.hf_tokenizer_json as hf_tokenizer_json
from fasttok.formats.tiktoken import byte_bpe_tables
from fasttok.formats.hf_pipeline import pipeline_from_document
from fasttok.formats.hf_byte_level import byte_level_token_strings
from fasttok.tokenizer_json import read_tokenizer_json
from test_tokenizer_json_cache import TEXT, _document, _refuse_records

pytestmark = pytest.mark.usefixtures("cache_dir")

TEXTS = [TEXT, "", "then the", "é\u0301 <s><s> th", "🙂 the"]


@pytest.fixture
def tokenizer_json(tmp_path):
    path = tmp_path / "tiny" / "tokenizer.json"
    path.parent.mkdir()
    path.write_text(json.dumps(_document()), encoding="utf-8")
    return path


def _encodings(tok) -> list:
    return [(e.ids, e.tokens, e.offsets, e.word_ids) for e in map(tok.encode, TEXTS)]


def test_drop_in_writes_the_cache_that_load_reads(tokenizer_json, cache_dir, monkeypatch):
    monkeypatch.setenv("FASTTOK_CACHE", "0")
    expected = fasttok.load(tokenizer_json).encode(TEXT, allowed_special="all")
    monkeypatch.delenv("FASTTOK_CACHE")
    fasttok.hf.Tokenizer.from_file(tokenizer_json)
    assert len(list(cache_dir.glob("hf-*.tables"))) == 1
    _refuse_records(monkeypatch)
    assert fasttok.load(tokenizer_json).encode(TEXT, allowed_special="all") == expected


def test_drop_in_reads_the_cache_that_load_writes(tokenizer_json, monkeypatch):
    expected = _encodings(fasttok.hf.Tokenizer.from_file(tokenizer_json))
    fasttok.load(tokenizer_json)
    with monkeypatch.context() as patch:
        _refuse_records(patch)
        cached = fasttok.hf.Tokenizer.from_file(tokenizer_json)
    assert _encodings(cached) == expected


def test_drop_in_from_the_cache_decodes_and_pickles_as_from_the_file(tokenizer_json):
    first = fasttok.hf.Tokenizer.from_file(tokenizer_json)
    cached = fasttok.hf.Tokenizer.from_file(tokenizer_json)
    ids = first.encode(TEXT).ids
    assert cached.decode(ids) == first.decode(ids)
    assert _encodings(pickle.loads(pickle.dumps(cached))) == _encodings(first)


def test_drop_in_leaves_a_byte_level_files_python_model_unbuilt(tokenizer_json):
    for _ in range(2):  # from the file, then from the cache
        tok = fasttok.hf.Tokenizer.from_file(tokenizer_json)
        assert tok._pipeline._model is None


def test_a_cached_record_carries_its_tables(tokenizer_json):
    built = read_tokenizer_json(tokenizer_json)
    cached = read_tokenizer_json(tokenizer_json)
    assert cached.record.tokens == () and cached.model_document is not None
    assert byte_bpe_tables(cached.record) is cached.record.metadata["tables"]
    assert cached.record.metadata["tables"].to_bytes() == \
        built.record.metadata["tables"].to_bytes()
    assert cached.max_token_value == built.max_token_value


def test_whole_record_has_no_tables_and_pickles(tokenizer_json):
    for _ in range(2):
        whole = read_tokenizer_json(tokenizer_json).whole()
        assert "tables" not in whole.metadata and whole.tokens
        assert pickle.loads(pickle.dumps(whole)).tokens == whole.tokens


def test_model_token_strings_are_the_python_models_without_building_it(tokenizer_json):
    built, cached = read_tokenizer_json(tokenizer_json), read_tokenizer_json(tokenizer_json)
    pipeline = pipeline_from_document(built.whole())
    model = pipeline.model
    expected = [model.id_to_token(i) for i in range(model.get_vocab_size())]
    for parts in (built, cached):
        strings = byte_level_token_strings(parts.record)
        assert [s for i, s in enumerate(strings) if i not in pipeline.added_ids] == \
            [s for i, s in enumerate(expected) if i not in pipeline.added_ids]


def test_a_file_that_is_not_byte_level_has_no_tables(tmp_path, cache_dir):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps({"model": {"type": "WordLevel", "vocab": {"a": 0},
                                          "unk_token": "a"}}), encoding="utf-8")
    parts = read_tokenizer_json(path)
    assert "tables" not in parts.record.metadata and parts.model_document is None
    assert not list(cache_dir.glob("hf-*.tables"))


def _wordlevel_record(vocab: dict, added: list):
    doc = {"model": {"type": "WordLevel", "vocab": vocab, "unk_token": "a"},
           "added_tokens": [{"id": i, "content": c, "special": True} for c, i in added]}
    return hf_tokenizer_json.tokenizer_json_record(json.dumps(doc), "t.json")


@pytest.mark.parametrize("added", [[], [("c", 2)], [("a", 0), ("c", 2)], [("z", 9)]])
def test_record_tokens_do_not_depend_on_the_order_the_vocabulary_is_listed_in(added):
    in_order = _wordlevel_record({"a": 0, "b": 1, "c": 2}, added)
    shuffled = _wordlevel_record({"c": 2, "a": 0, "b": 1}, added)
    assert (in_order.tokens, in_order.ids) == (shuffled.tokens, shuffled.ids)
    left_out = {i for _, i in added}
    assert [t for i, t in enumerate(in_order.tokens) if i in left_out] == \
        [None] * len([i for i in left_out if i < len(in_order.tokens)])


def test_record_of_an_added_token_on_the_last_id_ends_before_it():
    assert _wordlevel_record({"a": 0, "b": 1, "c": 2}, [("c", 2)]).tokens == (b"a", b"b")


def test_record_of_spread_ids_lists_them_beside_the_tokens():
    record = _wordlevel_record({"a": 0, "b": 1, "far": 10**6}, [("b", 1)])
    assert (record.tokens, record.ids) == ((b"a", b"far"), (0, 10**6))
