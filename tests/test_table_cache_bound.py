"""The table cache's size: what `cache_info` counts, what `clear_cache` removes
(fasttok's entries, never another file), and the bound
(`FASTTOK_CACHE_MAX_BYTES`) that a write keeps by removing the least recently
used entries; `fasttok cache info|clear`.

Every test runs on a cache folder of its own (conftest's `cache_dir`).
Entries' ages are set with `os.utime`, never waited for.
"""

from __future__ import annotations

import base64
import hashlib
import os
import time

import pytest

from fasttok import table_cache
from fasttok.cli import main
from fasttok.errors import FasttokError
from fasttok.pre_tokenizers.patterns import GPT2
from fasttok.registry import EncodingSpec

pytestmark = pytest.mark.usefixtures("cache_dir")


def _entry(folder, name: str, size: int, age: int = 0, magic: bytes = table_cache._MAGIC):
    # a file shaped like a cache entry (its name and magic), last used age seconds ago
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_bytes(magic + bytes(size - len(magic)))
    when = time.time() - age
    os.utime(path, (when, when))
    return path


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """``load()`` of a small encoding, "tiny", from a rank file of its own:
    a load that reads or writes the cache entry ``tiny.tables``."""
    vocab = tmp_path / "vocab"
    vocab.mkdir()
    monkeypatch.setenv("FASTTOK_VOCAB_DIR", str(vocab))
    tokens = [bytes([b]) for b in range(256)] + [b"th", b"he", b"the"]
    data = b"".join(base64.b64encode(t) + b" %d\n" % r for r, t in enumerate(tokens))
    (vocab / "tiny.tiktoken").write_bytes(data)
    spec = EncodingSpec("tiny.tiktoken", hashlib.sha256(data).hexdigest(), GPT2, {})
    return lambda: table_cache.load_named_encoding("tiny", spec)


def _tiny_size(tiny, cache_dir) -> int:
    # the size of tiny's entry, written once and removed again
    tiny()
    path = cache_dir / "tiny.tables"
    size = path.stat().st_size
    path.unlink()
    return size


def _names(folder) -> set:
    return {p.name for p in folder.iterdir()}


def test_info_counts_the_entries_and_their_bytes(cache_dir):
    _entry(cache_dir, "a.tables", 1000)
    _entry(cache_dir, "hf-0123.tables", 3000, magic=table_cache._HF_MAGIC)
    info = table_cache.cache_info()
    assert (info.folder, info.entries, info.bytes) == (str(cache_dir), 2, 4000)


def test_info_counts_no_other_file(cache_dir):
    _entry(cache_dir, "a.tables", 1000)
    (cache_dir / "mine.tiktoken").write_bytes(b"x" * 500)
    (cache_dir / "notes.tables").write_bytes(b"not fasttok's")
    (cache_dir / "link.tables").symlink_to(cache_dir / "a.tables")
    _entry(cache_dir, ".a.tables.0123456789ab.tmp", 700)
    assert table_cache.cache_info()[1:3] == (1, 1000)


def test_info_of_a_missing_folder_is_empty(cache_dir):
    assert table_cache.cache_info()[1:3] == (0, 0)


def test_clear_removes_the_entries_and_nothing_else(cache_dir):
    _entry(cache_dir, "a.tables", 1000)
    _entry(cache_dir, "hf-0123.tables", 3000, magic=table_cache._HF_MAGIC)
    (cache_dir / "mine.tiktoken").write_bytes(b"x" * 500)
    (cache_dir / "notes.tables").write_bytes(b"not fasttok's")
    assert table_cache.clear_cache() == (2, 4000)
    assert _names(cache_dir) == {"mine.tiktoken", "notes.tables"}


def test_clear_leaves_a_young_temporary_file_to_its_writer(cache_dir):
    _entry(cache_dir, ".a.tables.0123456789ab.tmp", 700, age=10)
    _entry(cache_dir, ".b.tables.ba9876543210.tmp", 700, age=120)
    table_cache.clear_cache()
    assert _names(cache_dir) == {".a.tables.0123456789ab.tmp"}


def test_an_entry_is_written_under_a_temporary_name_clear_knows(tiny, cache_dir, monkeypatch):
    renamed = []
    replace = os.replace

    def spy(source, target):
        renamed.append((os.path.basename(source), os.path.basename(target)))
        replace(source, target)

    monkeypatch.setattr(os, "replace", spy)
    tiny()
    [(temporary, target)] = renamed
    assert target == "tiny.tables"
    assert table_cache._cache_names()[1].fullmatch(temporary)


def test_a_write_over_the_bound_removes_the_least_recently_used_entries(tiny, cache_dir,
                                                                         monkeypatch):
    size = _tiny_size(tiny, cache_dir)
    _entry(cache_dir, "old.tables", 1000, age=300)
    _entry(cache_dir, "older.tables", 1000, age=400)
    _entry(cache_dir, "new.tables", 1000, age=100)
    monkeypatch.setenv("FASTTOK_CACHE_MAX_BYTES", str(size + 1500))
    tiny()
    assert _names(cache_dir) == {"tiny.tables", "new.tables"}
    assert table_cache.cache_info().bytes == size + 1000


def test_a_write_within_the_bound_removes_nothing(tiny, cache_dir, monkeypatch):
    size = _tiny_size(tiny, cache_dir)
    _entry(cache_dir, "old.tables", 1000, age=300)
    monkeypatch.setenv("FASTTOK_CACHE_MAX_BYTES", str(size + 1000))
    tiny()
    assert _names(cache_dir) == {"tiny.tables", "old.tables"}


def test_the_bound_spares_other_files(tiny, cache_dir, monkeypatch):
    size = _tiny_size(tiny, cache_dir)
    (cache_dir / "mine.tiktoken").write_bytes(b"x" * 5000)
    os.utime(cache_dir / "mine.tiktoken", (0, 0))
    monkeypatch.setenv("FASTTOK_CACHE_MAX_BYTES", str(size))
    tiny()
    assert _names(cache_dir) == {"tiny.tables", "mine.tiktoken"}


def test_an_entry_larger_than_the_bound_is_not_written(tiny, cache_dir, monkeypatch):
    _entry(cache_dir, "old.tables", 1000, age=300)
    monkeypatch.setenv("FASTTOK_CACHE_MAX_BYTES", "2000")
    assert tiny().encode("the") == [258]
    assert _names(cache_dir) == {"old.tables"}


def test_a_load_from_an_entry_marks_it_recently_used(tiny, cache_dir):
    tiny()
    entry = cache_dir / "tiny.tables"
    os.utime(entry, (1000, 1000))
    tiny()
    assert entry.stat().st_mtime > time.time() - 60


def test_a_write_removes_a_temporary_file_left_behind_long_ago(tiny, cache_dir):
    _entry(cache_dir, ".a.tables.0123456789ab.tmp", 700, age=3600)
    _entry(cache_dir, ".b.tables.ba9876543210.tmp", 700, age=5)
    tiny()
    assert _names(cache_dir) == {"tiny.tables", ".b.tables.ba9876543210.tmp"}


@pytest.mark.parametrize("value, size", [("", 256 << 20), ("1000", 1000), ("4k", 4096),
                                         ("256M", 256 << 20), ("2G", 2 << 30)])
def test_max_bytes_reads_bytes_or_a_binary_unit(monkeypatch, value, size):
    monkeypatch.setenv("FASTTOK_CACHE_MAX_BYTES", value)
    assert table_cache.cache_max_bytes() == size


@pytest.mark.parametrize("value", ["1x", "-5", "1.5G", "M"])
def test_max_bytes_that_is_no_size_is_an_error_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv("FASTTOK_CACHE_MAX_BYTES", value)
    with pytest.raises(FasttokError, match="FASTTOK_CACHE_MAX_BYTES"):
        table_cache.cache_max_bytes()


def test_a_write_under_a_bound_that_is_no_size_keeps_to_the_default(tiny, cache_dir,
                                                                   monkeypatch):
    monkeypatch.setenv("FASTTOK_CACHE_MAX_BYTES", "lots")
    tiny()
    assert _names(cache_dir) == {"tiny.tables"}


def test_cli_cache_info_prints_folder_entries_size_and_bound(cache_dir, capsys, monkeypatch):
    _entry(cache_dir, "a.tables", 1000)
    monkeypatch.setenv("FASTTOK_CACHE_MAX_BYTES", "1M")
    assert main(["cache", "info"]) == 0
    lines = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())
    assert lines["folder"] == str(cache_dir)
    assert lines["cache"] == "on"
    assert lines["entries"] == "1"
    assert lines["size"].startswith("0.0 MiB (1000 bytes)")
    assert lines["bound"].startswith("1.0 MiB (1048576 bytes)")


def test_cli_cache_info_says_when_the_cache_is_off(cache_dir, capsys, monkeypatch):
    monkeypatch.setenv("FASTTOK_CACHE", "0")
    assert main(["cache", "info"]) == 0
    assert "cache    off (FASTTOK_CACHE=0)" in capsys.readouterr().out


def test_cli_cache_info_refuses_a_bound_that_is_no_size(capsys, monkeypatch):
    monkeypatch.setenv("FASTTOK_CACHE_MAX_BYTES", "1x")
    assert main(["cache", "info"]) == 2
    assert "FASTTOK_CACHE_MAX_BYTES='1x' is not a size" in capsys.readouterr().err


def test_cli_cache_clear_removes_the_entries(cache_dir, capsys):
    _entry(cache_dir, "a.tables", 1000)
    (cache_dir / "mine.tiktoken").write_bytes(b"x")
    assert main(["cache", "clear"]) == 0
    assert capsys.readouterr().out.strip() == (f"removed 1 entries, 0.0 MiB (1000 bytes), "
                                               f"from {cache_dir}")
    assert _names(cache_dir) == {"mine.tiktoken"}
