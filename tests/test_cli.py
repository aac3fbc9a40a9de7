"""The fasttok command: encode, decode, count, inspect, bench."""

from __future__ import annotations

import subprocess
import sys

from fasttok.cli import main


def test_encode_prints_ids(capsys):
    assert main(["encode", "-e", "cl100k_base", "--ids", "hello world"]) == 0
    assert capsys.readouterr().out.split() == ["15339", "1917"]


def test_encode_show_colours_each_token_and_counts_them(capsys):
    assert main(["encode", "-e", "cl100k_base", "--show", "hello world"]) == 0
    out = capsys.readouterr().out
    assert out.count("\x1b[0m") == 2 and "2 tokens" in out


def test_decode_prints_text(capsys):
    assert main(["decode", "-e", "cl100k_base", "15339", "1917"]) == 0
    assert capsys.readouterr().out == "hello world\n"


def test_decode_of_an_unknown_id_is_an_error_not_a_traceback(capsys):
    assert main(["decode", "-e", "cl100k_base", "99999999"]) == 2
    assert "not in cl100k_base's vocabulary" in capsys.readouterr().err


def test_a_missing_vocabulary_file_is_named_as_missing(tmp_path, capsys):
    missing = tmp_path / "tokenizer.model"
    assert main(["inspect", str(missing)]) == 2
    assert f"{missing}: no such file" in capsys.readouterr().err


def test_count_prints_the_number_of_tokens(capsys):
    assert main(["count", "-e", "o200k_base", "hello world"]) == 0
    assert capsys.readouterr().out.strip() == "2"


def test_inspect_shows_the_counts_people_confuse(capsys):
    assert main(["inspect", "p50k_base"]) == 0
    out = capsys.readouterr().out
    assert "mergeable tokens           50280" in out
    assert "len (mergeable + special)  50281" in out
    assert "n_vocab (max id + 1)       50281" in out
    assert "gpt2 scanner (compiled)" in out


def test_bench_times_fasttok_beside_tiktoken(tmp_path, capsys):
    text = tmp_path / "t.txt"
    text.write_text("hello world, this is a small text\n" * 50, encoding="utf-8")
    assert main(["bench", "-e", "cl100k_base", "-f", str(text), "--repeat", "1"]) == 0
    row = capsys.readouterr().out.splitlines()[-1]
    assert row.startswith("t.txt") and row.endswith("x")


def test_a_text_file_that_is_not_utf8_is_an_error_naming_it(tmp_path, capsys):
    text = tmp_path / "cut.txt"
    text.write_bytes("世界".encode("utf-8")[:-1])  # cut inside a character
    assert main(["bench", "-e", "cl100k_base", "-f", str(text), "--repeat", "1"]) == 2
    assert f"{text}: not UTF-8 text (byte 3" in capsys.readouterr().err
    assert main(["count", "-e", "cl100k_base", "-f", str(text)]) == 2
    assert f"{text}: not UTF-8 text" in capsys.readouterr().err


def test_python_dash_m_runs_the_same_command():
    proc = subprocess.run([sys.executable, "-m", "fasttok", "count", "-e", "cl100k_base", "hi"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "1"
