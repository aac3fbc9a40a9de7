"""fasttok.load picks a reader by format=, content or suffix; a missing file
is FileNotFoundError; a source tree without its compiled modules says how to
fix the import."""

from __future__ import annotations

import base64
import shutil
import subprocess
import sys

import pytest

import fasttok
from conftest import DATA, REPO_ROOT
from fasttok.errors import UnknownEncodingError

MODEL = DATA / "vocab" / "sentencepiece" / "botchan_en_unigram_1000.model"


def test_load_of_a_missing_path_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        fasttok.load(tmp_path / "tokenizer.model")


@pytest.mark.usefixtures("data_dir")  # skipped without the test data
def test_sentencepiece_model_is_recognised_by_content_under_any_name(tmp_path):
    renamed = tmp_path / "tokenizer.model.v3"
    shutil.copy(MODEL, renamed)
    assert fasttok.load(renamed).encode("Hello world") == fasttok.load(MODEL).encode("Hello world")


def test_format_chooses_the_reader_whatever_the_file_is_called(tmp_path):
    path = tmp_path / "ranks.bin"
    path.write_bytes(b"".join(base64.b64encode(bytes([b])) + b" %d\n" % b for b in range(256)))
    enc = fasttok.load(path, format="tiktoken", pat_str=".", special_tokens={})
    assert enc.encode('!"') == [33, 34]


def test_unknown_format_lists_the_known_ones(tmp_path):
    with pytest.raises(UnknownEncodingError, match="known: tiktoken, gguf, sentencepiece"):
        fasttok.load(tmp_path / "x", format="martian")


def test_import_from_an_unbuilt_source_tree_says_how_to_build_it(tmp_path):
    shutil.copytree(REPO_ROOT / "fasttok", tmp_path / "fasttok",
                    ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    # -S: no site-packages, so neither an installed nor an editable fasttok can answer
    done = subprocess.run([sys.executable, "-S", "-c", "import fasttok"], cwd=tmp_path,
                          capture_output=True, text=True)
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 1 and "circular import" not in done.stderr
    assert last.startswith("ImportError: fasttok is imported from ") and "pip install -e ." in last
