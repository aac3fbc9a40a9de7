"""Every writer replaces its file all at once: a write that fails midway (a
full disk, an interrupt) leaves the old file byte for byte and no temporary
file beside it; a write that succeeds leaves the new file, with the old
file's permissions, and nothing else.

The failure is injected where the bytes reach the disk: ``os.write`` writes
half of what it is given and then raises ENOSPC, as a full disk does.
"""

from __future__ import annotations

import errno
import os
import stat

import pytest

import fasttok
from fasttok.loaders.gguf_writer import write_gguf
from fasttok.loaders.hf_tokenizer_json_writer import write_document, write_tokenizer_json
from fasttok.loaders.sentencepiece_model import ModelProto, SentencePiece
from fasttok.loaders.sentencepiece_model_writer import dump_model_proto, write_model_proto
from fasttok.loaders.tiktoken_writer import write_tiktoken
from fasttok.loaders.vocab_txt_writer import write_vocab_txt
from fasttok.shared import atomic_write
from fasttok.shared.atomic_write import write_atomically

OLD = b"the old, good vocabulary\n" * 40

WRITERS = {
    "tiktoken": lambda p: write_tiktoken(p, {bytes([b]): b for b in range(256)}),
    "vocab.txt": lambda p: write_vocab_txt(p, {f"t{i}": i for i in range(300)}),
    "tokenizer.json": lambda p: write_tokenizer_json(p, {bytes([b]): b for b in range(256)}, [],
                                                     r"\w+", {}),
    "tokenizer.json document": lambda p: write_document(p, {"version": "1.0", "x": "é" * 300}),
    "gguf": lambda p: write_gguf(p, fasttok.train([], vocab_size=256).vocabulary),
    "sentencepiece model": lambda p: dump_model_proto(
        ModelProto(pieces=tuple(SentencePiece(f"p{i}", -i, 1) for i in range(300))), p),
}


@pytest.fixture
def old_file(tmp_path):
    path = tmp_path / "vocab.out"
    path.write_bytes(OLD)
    os.chmod(path, 0o640)
    return path


@pytest.fixture
def full_disk(monkeypatch):
    """``os.write`` writes half of what it is given, then fails as a full disk does."""
    real = os.write

    def half_then_full(fd, data):
        real(fd, bytes(data[:max(1, len(data) // 2)]))
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(atomic_write.os, "write", half_then_full)


def _names(folder) -> list:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("writer", WRITERS)
def test_write_failing_midway_leaves_the_old_file_intact(writer, old_file, full_disk):
    with pytest.raises(OSError, match="No space"):
        WRITERS[writer](old_file)
    assert old_file.read_bytes() == OLD


@pytest.mark.parametrize("writer", WRITERS)
def test_write_failing_midway_leaves_no_temporary_file(writer, old_file, full_disk):
    with pytest.raises(OSError):
        WRITERS[writer](old_file)
    assert _names(old_file.parent) == [old_file.name]


@pytest.mark.parametrize("writer", WRITERS)
def test_write_replaces_the_old_file_and_keeps_its_permissions(writer, old_file):
    WRITERS[writer](old_file)
    assert (old_file.read_bytes() != OLD, stat.S_IMODE(old_file.stat().st_mode),
            _names(old_file.parent)) == (True, 0o640, [old_file.name])


def test_sentencepiece_model_written_is_the_serialized_proto(tmp_path):
    proto = ModelProto(pieces=(SentencePiece("<unk>", 0.0, 2),))
    dump_model_proto(proto, tmp_path / "m.model")
    assert (tmp_path / "m.model").read_bytes() == write_model_proto(proto)


def test_interrupt_midway_leaves_the_old_file_and_no_temporary_file(old_file, monkeypatch):
    def interrupted(fd, data):
        raise KeyboardInterrupt
    monkeypatch.setattr(atomic_write.os, "write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(old_file, b"new")
    assert (old_file.read_bytes(), _names(old_file.parent)) == (OLD, [old_file.name])


def test_failed_fsync_leaves_the_old_file_intact(old_file, monkeypatch):
    def failing(fd):
        raise OSError(errno.EIO, "Input/output error")
    monkeypatch.setattr(atomic_write.os, "fsync", failing)
    with pytest.raises(OSError, match="Input/output"):
        write_atomically(old_file, b"new")
    assert (old_file.read_bytes(), _names(old_file.parent)) == (OLD, [old_file.name])


def test_data_is_fsynced_before_the_rename_and_the_folder_after(old_file, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(atomic_write.os, "fsync",
                        lambda fd: events.append(
                            "folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
                        or real_fsync(fd))
    monkeypatch.setattr(atomic_write.os, "replace",
                        lambda a, b: events.append("rename") or real_replace(a, b))
    write_atomically(old_file, b"new")
    assert events == ["file", "rename", "folder"]


def test_not_durable_skips_the_fsyncs(old_file, monkeypatch):
    calls = []
    monkeypatch.setattr(atomic_write.os, "fsync", calls.append)
    write_atomically(old_file, b"new", durable=False)
    assert (calls, old_file.read_bytes()) == ([], b"new")


def test_new_file_gets_the_umask_permissions(tmp_path):
    old = os.umask(0o027)
    try:
        write_atomically(tmp_path / "new.txt", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640


def test_given_mode_is_the_new_files_permissions(old_file):
    write_atomically(old_file, b"x", mode=0o600)
    assert stat.S_IMODE(old_file.stat().st_mode) == 0o600


def test_symbolic_link_is_kept_and_the_file_it_names_replaced(old_file, tmp_path):
    link = tmp_path / "link"
    link.symlink_to(old_file)
    write_atomically(link, b"new")
    assert (link.is_symlink(), old_file.read_bytes()) == (True, b"new")


def test_device_target_is_written_in_place_not_replaced():
    before = os.stat(os.devnull)
    write_atomically(os.devnull, b"discarded")
    after = os.stat(os.devnull)
    assert (stat.S_ISCHR(after.st_mode), after.st_ino) == (True, before.st_ino)


def test_serializer_error_leaves_the_old_file_intact(old_file):
    with pytest.raises(fasttok.errors.FasttokError):
        write_vocab_txt(old_file, {"a\n": 0})
    assert old_file.read_bytes() == OLD


@pytest.mark.parametrize("out", ["v.tiktoken", "tokenizer.json", "v.gguf"])
def test_train_out_over_a_good_file_on_a_full_disk_keeps_the_good_file(out, tmp_path, full_disk,
                                                                        capsys):
    from fasttok.cli import main

    corpus = tmp_path / "docs.txt"
    corpus.write_text("hello world, hello there\n" * 20, encoding="utf-8")
    target = tmp_path / out
    target.write_bytes(OLD)
    assert main(["train", str(corpus), "--vocab-size", "270", "--quiet", "--out",
                 str(target)]) == 2
    assert (target.read_bytes(), sorted(p.name for p in tmp_path.iterdir())) == (
        OLD, sorted(["docs.txt", out]))
    assert "No space left on device" in capsys.readouterr().err


def test_write_into_a_missing_folder_names_the_file_not_a_temporary_one(tmp_path):
    target = tmp_path / "missing" / "v.tiktoken"
    with pytest.raises(FileNotFoundError) as error:
        write_atomically(target, b"x")
    assert error.value.filename == str(target)
