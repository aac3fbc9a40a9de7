"""The rank files shipped inside the package: OpenAI's exact files, found
before any folder on the search path, never for a spec pinned to other
contents."""

from __future__ import annotations

import base64
import gzip
import hashlib
import os

import pytest

import fasttok
from fasttok import embedded, table_cache
from fasttok.errors import UnknownEncodingError, VocabularyFileError
from fasttok.loaders.tiktoken_file import read_source
from fasttok.pre_tokenizers.patterns import GPT2
from fasttok.registry import ENCODINGS, EncodingSpec


@pytest.fixture
def empty_search_path(tmp_path, monkeypatch):
    """No rank file anywhere but in the package; a table cache of this test's own."""
    monkeypatch.setenv("FASTTOK_VOCAB_DIR", str(tmp_path / "vocab"))
    monkeypatch.setenv("FASTTOK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr("fasttok.registry.vocab_search_path", lambda: [str(tmp_path / "vocab")])
    monkeypatch.setattr(fasttok, "_cache", {})
    return tmp_path


@pytest.mark.parametrize("filename", sorted(embedded.SHA256))
def test_shipped_rank_file_decompresses_to_openais_sha256(filename):
    with open(os.path.join(embedded.FOLDER, filename + ".gz"), "rb") as f:
        assert hashlib.sha256(gzip.decompress(f.read())).hexdigest() == embedded.SHA256[filename]


def test_every_named_encoding_is_built_from_a_shipped_file():
    for name, spec in ENCODINGS.items():
        assert embedded.embedded_file(spec.file, spec.sha256) is not None, name


@pytest.mark.parametrize("cache", [False, True])
def test_named_encodings_load_with_nothing_on_the_search_path(empty_search_path, cache):
    for name, text, ids in [("cl100k_base", "hello world", [15339, 1917]),
                            ("o200k_base", "hello world", [24912, 2375]),
                            ("gpt2", "hello world", [31373, 995])]:
        enc = table_cache.load_named_encoding(name, ENCODINGS[name], cache=cache)
        assert enc.encode(text) == ids and enc.decode(ids) == text


def test_shipped_copy_is_found_before_the_vocab_dir(empty_search_path):
    vocab = empty_search_path / "vocab"
    vocab.mkdir()
    # a well-formed file of the same name with other tokens: never read
    (vocab / "r50k_base.tiktoken").write_bytes(
        b"".join(base64.b64encode(bytes([b])) + b" %d\n" % b for b in range(256)))
    assert fasttok.get_encoding("r50k_base").encode("hello world") == [31373, 995]


def test_shipped_copy_is_not_used_for_a_spec_pinned_to_other_contents(empty_search_path):
    spec = EncodingSpec("r50k_base.tiktoken", "0" * 64, GPT2, {})
    with pytest.raises(UnknownEncodingError, match=r"r50k_base\.tiktoken was not found; looked in"):
        table_cache.load_named_encoding("other_r50k", spec)


def test_cached_load_of_a_shipped_file_does_not_decompress_it(empty_search_path, monkeypatch):
    table_cache.load_named_encoding("cl100k_base", ENCODINGS["cl100k_base"])

    def refuse(*args, **kwargs):
        raise AssertionError("the shipped rank file was read although the cache holds the tables")
    monkeypatch.setattr(gzip, "decompress", refuse)
    enc = table_cache.load_named_encoding("cl100k_base", ENCODINGS["cl100k_base"])
    assert enc.encode("hello world") == [15339, 1917]


def test_truncated_gzip_rank_file_names_the_file(tmp_path):
    path = tmp_path / "x.tiktoken.gz"
    path.write_bytes(gzip.compress(b"IQ== 0\n" * 100)[:-10])
    with pytest.raises(VocabularyFileError, match=r"x\.tiktoken\.gz: not a complete gzip stream"):
        read_source(path)
