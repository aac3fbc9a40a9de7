"""The table cache of ``tokenizer.json`` files: a byte-level BPE file loaded a
second time comes from the cache (no JSON record is built) and gives what
the file gives; the cache is keyed by the file's bytes and the
``tokenizer_config.json`` beside it, a damaged cache file is rebuilt, and
an encoding whose file changed after it was loaded refuses to read it back.

Every test points ``FASTTOK_CACHE_DIR`` at its own temporary folder.
"""

from __future__ import annotations

import json

import pytest

import fasttok
import fasttok.loaders.hf_tokenizer_json as hf_tokenizer_json
from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON, read_text
from fasttok.errors import FasttokError
from fasttok.shared._bytemap import bytes_to_unicode

TEXT = "the then thé <s> the\u0301"


# every test runs on a cache folder of its own (conftest's cache_dir)
pytestmark = pytest.mark.usefixtures("cache_dir")


def _document(merges=(("t", "h"), ("th", "e"), ("the", "n"))) -> dict:
    alphabet = bytes_to_unicode()
    vocab = {alphabet[b]: b for b in range(256)}
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    return {"version": "1.0",
            "added_tokens": [{"id": len(vocab), "content": "<s>", "single_word": False,
                              "lstrip": False, "rstrip": False, "normalized": False,
                              "special": True}],
            "normalizer": {"type": "NFC"},
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                              "trim_offsets": True, "use_regex": True},
            "post_processor": {"type": "TemplateProcessing",
                               "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                          {"Sequence": {"id": "A", "type_id": 0}}],
                               "pair": [{"Sequence": {"id": "A", "type_id": 0}},
                                        {"Sequence": {"id": "B", "type_id": 1}}],
                               "special_tokens": {"<s>": {"id": "<s>", "ids": [len(vocab)],
                                                          "tokens": ["<s>"]}}},
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                        "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None,
                      "continuing_subword_prefix": None, "end_of_word_suffix": None,
                      "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                      "vocab": vocab, "merges": [f"{a} {b}" for a, b in merges]}}


@pytest.fixture
def tokenizer_json(tmp_path):
    path = tmp_path / "tiny" / "tokenizer.json"
    path.parent.mkdir()
    path.write_text(json.dumps(_document()), encoding="utf-8")
    return path


def _facts(enc) -> tuple:
    ids = enc.encode(TEXT, allowed_special="all")
    return (enc.name, enc.n_vocab, enc.max_token_value, enc.special_tokens_set, ids,
            enc.encode(TEXT, allowed_special="all", add_special_tokens=True),
            enc.decode(ids), enc.decode_with_offsets(ids), enc.encode_ordinary(TEXT))


def _refuse_records(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("the JSON record was built again")
    monkeypatch.setattr(hf_tokenizer_json, "tokenizer_json_record", refuse)


def test_first_load_writes_one_cache_file(tokenizer_json, cache_dir):
    fasttok.load(tokenizer_json)
    assert len(list(cache_dir.glob("hf-*.tables"))) == 1


def test_second_load_builds_no_record(tokenizer_json, monkeypatch):
    expected = _facts(fasttok.load(tokenizer_json))
    _refuse_records(monkeypatch)
    assert _facts(fasttok.load(tokenizer_json)) == expected


def test_cached_encoding_reads_the_record_only_when_asked(tokenizer_json):
    fasttok.load(tokenizer_json)
    enc = fasttok.load(tokenizer_json)
    _facts(enc)
    assert "vocabulary" not in vars(enc)
    built = hf_tokenizer_json.load_tokenizer_json(str(tokenizer_json))
    assert (enc.vocabulary.tokens, enc.vocabulary.merges) == (built.tokens, built.merges)


def test_cached_encoding_samples_and_gives_token_bytes_as_the_file(tokenizer_json):
    first = fasttok.load(tokenizer_json)
    cached = fasttok.load(tokenizer_json)
    sampled = [enc.encode(TEXT, allowed_special="all", sample=True, alpha=0.5, seed=7)
               for enc in (first, cached)]
    pieces = [enc.decode_tokens_bytes(enc.encode(TEXT, allowed_special="all"))
              for enc in (first, cached)]
    assert sampled[0] == sampled[1] and pieces[0] == pieces[1]


def test_changed_file_is_read_again_not_served_from_the_cache(tokenizer_json):
    before = fasttok.load(tokenizer_json).encode("then")
    tokenizer_json.write_text(json.dumps(_document(merges=(("t", "h"),))), encoding="utf-8")
    after = fasttok.load(tokenizer_json).encode("then")
    assert len(before) == 1 and len(after) == 3


def test_a_file_changed_after_a_cached_load_refuses_to_be_read_back(tokenizer_json):
    fasttok.load(tokenizer_json)
    enc = fasttok.load(tokenizer_json)
    tokenizer_json.write_text(json.dumps(_document(merges=(("t", "h"),))), encoding="utf-8")
    with pytest.raises(FasttokError, match="changed after"):
        enc.vocabulary


def test_the_config_beside_the_file_is_part_of_the_key(tokenizer_json, cache_dir):
    fasttok.load(tokenizer_json)
    (tokenizer_json.parent / "tokenizer_config.json").write_text(
        json.dumps({"bos_token": "<s>", "add_bos_token": True}), encoding="utf-8")
    fasttok.load(tokenizer_json)
    assert len(list(cache_dir.glob("hf-*.tables"))) == 2


@pytest.mark.parametrize("at", [0, 200, -100])
def test_damaged_cache_file_is_rebuilt(tokenizer_json, cache_dir, at):
    expected = _facts(fasttok.load(tokenizer_json))
    (cache,) = cache_dir.glob("hf-*.tables")
    data = bytearray(cache.read_bytes())
    data[at] ^= 0x40
    cache.write_bytes(bytes(data))
    assert _facts(fasttok.load(tokenizer_json)) == expected


def test_cache_env_zero_writes_nothing(tokenizer_json, cache_dir, monkeypatch):
    monkeypatch.setenv("FASTTOK_CACHE", "0")
    fasttok.load(tokenizer_json)
    assert not cache_dir.exists()


def test_a_file_of_another_configuration_is_not_cached(tmp_path, cache_dir):
    path = tmp_path / "wordlevel.json"
    path.write_text(json.dumps({"model": {"type": "WordLevel", "vocab": {"a": 0, "[UNK]": 1},
                                          "unk_token": "[UNK]"},
                                "pre_tokenizer": {"type": "WhitespaceSplit"}}), encoding="utf-8")
    assert fasttok.load(path).encode("a a") == [0, 0]
    assert not cache_dir.exists()


@pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)
@pytest.mark.parametrize("name", ["llama3", "qwen3", "gpt4o"])
def test_cached_shared_file_encodes_the_test_lines_as_the_file(name):
    path = DATA / "vocab" / "hf" / name / "tokenizer.json"
    first = fasttok.load(path)
    cached = fasttok.load(path)
    lines = [json.loads(line)["text"] for line in
             read_text(DATA / "testcases" / "lines.jsonl").splitlines()]
    assert cached.encode_batch(lines, allowed_special="all") == \
        first.encode_batch(lines, allowed_special="all")
