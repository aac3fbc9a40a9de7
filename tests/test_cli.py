"""The fasttok command: encode, decode, count, inspect, bench, train, cache."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fasttok.cli import main


def test_encode_prints_ids(capsys):
    assert main(["encode", "-e", "cl100k_base", "--ids", "hello world"]) == 0
    assert capsys.readouterr().out.split() == ["15339", "1917"]


def _terminal(monkeypatch, stream) -> None:
    monkeypatch.setattr(stream, "isatty", lambda: True)


def test_show_colours_each_token_on_a_terminal(capsys, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    _terminal(monkeypatch, sys.stdout)
    assert main(["encode", "-e", "cl100k_base", "--show", "hello world"]) == 0
    assert capsys.readouterr().out.count("\x1b[0m") == 2


def test_show_has_no_colour_when_not_a_terminal(capsys):
    assert main(["encode", "-e", "cl100k_base", "--show", "hello world"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and out.splitlines()[0] == "hello| world"


def test_show_has_no_colour_with_no_color_set(capsys, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    _terminal(monkeypatch, sys.stdout)
    assert main(["encode", "-e", "cl100k_base", "--show", "hello world"]) == 0
    assert "\x1b" not in capsys.readouterr().out


def test_show_prints_the_ids_and_the_count_under_the_pieces(capsys):
    assert main(["encode", "-e", "cl100k_base", "--show", "hello world"]) == 0
    assert capsys.readouterr().out.splitlines()[1:3] == ["15339 1917", "2 tokens (--ids prints the ids alone)"]


def test_show_prints_a_piece_that_splits_a_character_as_bytes(capsys):
    assert main(["encode", "-e", "cl100k_base", "--show", "\U0001d518"]) == 0
    out = capsys.readouterr().out
    assert "\ufffd" not in out and out.splitlines()[0] == "\\xf0\\x9d|\\x94|\\x98"


def test_version_prints_the_version(capsys):
    import fasttok

    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == f"fasttok {fasttok.__version__}"


@pytest.mark.parametrize("command", ["decode", "bench", "encode", "count"])
def test_no_input_on_a_terminal_prints_usage_instead_of_waiting(command, capsys, monkeypatch):
    _terminal(monkeypatch, sys.stdin)
    assert main([command]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: fasttok {command}") and "no input" in err


@pytest.mark.parametrize("command, out", [("encode", "15339 1917"), ("count", "2")])
def test_no_input_and_stdin_piped_reads_stdin(command, out):
    proc = _fasttok(command, "-e", "cl100k_base", input=b"hello world")
    assert (proc.returncode, proc.stdout.decode().strip()) == (0, out)


def _file(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_count_of_an_argument_naming_a_file_counts_the_file(tmp_path, capsys):
    path = _file(tmp_path, "big.txt", "hello world hello world")
    assert main(["count", "-e", "cl100k_base", path]) == 0
    assert capsys.readouterr().out.strip() == "4"


def test_encode_of_arguments_all_naming_files_encodes_them_in_order(tmp_path, capsys):
    a, b = _file(tmp_path, "a.txt", "hello"), _file(tmp_path, "b.txt", " world")
    assert main(["encode", "--ids", "-e", "cl100k_base", a, b]) == 0
    assert capsys.readouterr().out.split() == ["15339", "1917"]


def test_an_argument_naming_a_file_is_text_with_the_text_option(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _file(tmp_path, "hello", "a much longer text than the one word of its name")
    assert main(["count", "-e", "cl100k_base", "--text", "hello"]) == 0
    assert capsys.readouterr().out.strip() == "1"


def test_arguments_not_all_naming_files_are_text(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _file(tmp_path, "world", "a much longer text than the one word of its name")
    assert main(["encode", "--ids", "-e", "cl100k_base", "hello", "world"]) == 0
    assert capsys.readouterr().out.split() == ["15339", "1917"]


def test_several_files_are_read_in_order(tmp_path, capsys):
    a, b = _file(tmp_path, "a.txt", "hello"), _file(tmp_path, "b.txt", " world")
    assert main(["encode", "--ids", "-e", "cl100k_base", "-f", a, "-f", b]) == 0
    assert capsys.readouterr().out.split() == ["15339", "1917"]


def test_file_dash_reads_stdin_in_its_place(tmp_path):
    a = _file(tmp_path, "a.txt", "hello")
    proc = _fasttok("encode", "--ids", "-e", "cl100k_base", "-f", a, "-f", "-", input=b" world")
    assert (proc.returncode, proc.stdout.split()) == (0, [b"15339", b"1917"])


def test_bench_file_dash_times_stdin():
    proc = _fasttok("bench", "-e", "cl100k_base", "-f", "-", "--repeat", "1", input=b"hello")
    assert proc.returncode == 0 and proc.stdout.splitlines()[-1].startswith(b"stdin ")


def test_text_and_a_file_together_are_an_error(tmp_path, capsys):
    a = _file(tmp_path, "a.txt", "hello")
    assert main(["count", "-e", "cl100k_base", "-f", a, "world"]) == 2
    assert "not both" in capsys.readouterr().err


def test_bench_of_empty_input_is_an_error(tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert main(["bench", "-f", str(empty)]) == 2
    assert f"nothing to time: {empty} is empty" in capsys.readouterr().err


def test_bench_with_repeat_zero_is_an_error(tmp_path, capsys):
    text = tmp_path / "t.txt"
    text.write_text("hello")
    assert main(["bench", "-f", str(text), "--repeat", "0"]) == 2
    assert "--repeat must be at least 1" in capsys.readouterr().err


def test_stdin_that_is_not_utf8_is_an_error_like_a_file():
    proc = subprocess.run([sys.executable, "-m", "fasttok", "count"], input="世界".encode()[:-1],
                          capture_output=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.decode().strip() == "fasttok: standard input: not UTF-8 text (byte 3: unexpected end of data)"


@pytest.mark.usefixtures("data_dir")  # skipped without the test data
def test_inspect_of_a_model_file_counts_its_control_pieces_as_special(capsys):
    from conftest import DATA

    model = DATA / "vocab" / "sentencepiece" / "botchan_en_unigram_1000.model"
    assert main(["inspect", str(model)]) == 0
    rows = dict(line.split("  ", 1) for line in capsys.readouterr().out.splitlines())
    assert rows["mergeable tokens"].strip() == "997" and rows["special tokens"].strip() == "3"
    assert rows["special ids"].strip() == "<unk>=0, <s>=1, </s>=2"


def test_decode_prints_text(capsys):
    assert main(["decode", "-e", "cl100k_base", "15339", "1917"]) == 0
    assert capsys.readouterr().out == "hello world\n"


@pytest.mark.parametrize("ids", [["[15339, 1917]"], ["15339,1917"], ["15339, 1917"],
                                 ["[15339,", "1917]"]])
def test_decode_reads_a_list_and_ids_apart_by_commas(ids, capsys):
    assert main(["decode", "-e", "cl100k_base", *ids]) == 0
    assert capsys.readouterr().out == "hello world\n"


def test_decode_reads_a_list_piped_in():
    proc = _fasttok("decode", "-e", "cl100k_base", input=b"[15339, 1917]\n")
    assert (proc.returncode, proc.stdout) == (0, b"hello world\n")


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


def _corpus(tmp_path):
    text = tmp_path / "docs.txt"
    text.write_text("hello world, hello there\nthe other world 12345\n" * 40, encoding="utf-8")
    return text


def test_train_writes_a_tiktoken_file_and_the_call_that_loads_it(tmp_path, capsys):
    import fasttok

    out = tmp_path / "v.tiktoken"
    assert main(["train", str(_corpus(tmp_path)), "--vocab-size", "300", "--special-token",
                 "<|end|>", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    call = next(line.strip() for line in printed.out.splitlines() if "fasttok.load(" in line)
    enc = eval(call, {"fasttok": fasttok})
    assert enc.encode("hello world<|end|>", allowed_special="all")[-1] == enc.max_token_value
    assert "unique pre-tokens" in printed.out and "peak memory" in printed.out
    assert "\r" not in printed.err  # stderr is no terminal here: no progress bar


def test_train_writes_a_tokenizer_json_from_jsonl(tmp_path, capsys):
    tokenizers = pytest.importorskip("tokenizers")
    lines = tmp_path / "docs.jsonl"
    lines.write_text('{"text": "hello world"}\n{"text": "hello there"}\n' * 20, encoding="utf-8")
    out = tmp_path / "tokenizer.json"
    assert main(["train", str(lines), "--field", "text", "--vocab-size", "270", "--flavour", "hf",
                 "--quiet", "--out", str(out)]) == 0
    tok = tokenizers.Tokenizer.from_file(str(out))
    import fasttok
    assert tok.encode("hello world", add_special_tokens=False).ids == \
        fasttok.load(out).encode("hello world")


def test_train_writes_a_gguf_that_fasttok_reads_back(tmp_path, capsys):
    import fasttok

    out = tmp_path / "v.gguf"
    assert main(["train", str(_corpus(tmp_path)), "--vocab-size", "300", "--quiet",
                 "--out", str(out)]) == 0
    back = fasttok.load(str(out))
    assert back.decode(back.encode("hello world")) == "hello world"
    assert len(back.encode("hello world")) < len("hello world")


def test_train_shows_progress_only_on_a_terminal_and_not_when_quiet(tmp_path, capsys, monkeypatch):
    _terminal(monkeypatch, sys.stderr)
    args = ["train", str(_corpus(tmp_path)), "--vocab-size", "280", "--out",
            str(tmp_path / "v.tiktoken")]
    assert main(args) == 0
    assert "merging" in capsys.readouterr().err
    assert main(args + ["--quiet"]) == 0
    assert "merging" not in capsys.readouterr().err


def test_train_names_the_line_of_a_bad_json_document(tmp_path, capsys):
    lines = tmp_path / "docs.jsonl"
    lines.write_text('{"text": "a"}\n{"body": "b"}\n', encoding="utf-8")
    assert main(["train", str(lines), "--field", "text", "--vocab-size", "300",
                 "--out", str(tmp_path / "v.tiktoken")]) == 2
    assert f"{lines}: line 2: not a JSON object with a 'text' field" in capsys.readouterr().err


def _refuse_training(monkeypatch) -> None:
    import fasttok.trainers.bpe
    import fasttok.trainers.unigram
    import fasttok.trainers.wordpiece

    def refuse(*args, **kwargs):
        raise AssertionError("trained although --out cannot be written")
    for module, name in ((fasttok.trainers.bpe, "train_bpe"),
                         (fasttok.trainers.unigram, "train_unigram"),
                         (fasttok.trainers.wordpiece, "train_wordpiece")):
        monkeypatch.setattr(module, name, refuse)


@pytest.mark.parametrize("model, out", [("bpe", "v.tiktoken"), ("unigram", "x.model"),
                                        ("wordpiece", "vocab.txt")])
def test_train_out_into_a_missing_folder_fails_before_training(model, out, tmp_path, capsys,
                                                                monkeypatch):
    _refuse_training(monkeypatch)
    target = tmp_path / "missing" / out
    assert main(["train", str(_corpus(tmp_path)), "--model", model, "--vocab-size", "300",
                 "--out", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{tmp_path / 'missing'} does not exist" in err


def test_train_out_that_is_a_folder_fails_before_training(tmp_path, capsys, monkeypatch):
    _refuse_training(monkeypatch)
    folder = tmp_path / "v.tiktoken"
    folder.mkdir()
    assert main(["train", str(_corpus(tmp_path)), "--vocab-size", "300", "--out", str(folder)]) == 2
    assert "is a folder" in capsys.readouterr().err


@pytest.mark.parametrize("options, message", [
    (["--vocab-size", "100"], "--vocab-size 100 is too small"),
    (["--vocab-size", "300", "--max-pretokens", "0"], "--max-pretokens must be 1 or more"),
    (["--vocab-size", "300", "--min-frequency", "-1"], "--min-frequency must be 0 or more"),
    (["--vocab-size", "300", "--flavour", "hf", "--limit-alphabet", "-1"],
     "--limit-alphabet must be 0 or more"),
    (["--vocab-size", "300", "--limit-alphabet", "3"], "options: add --flavour hf"),
    (["--vocab-size", "300", "--model", "unigram", "--character-coverage", "2"],
     "--character-coverage must be in (0, 1]"),
    (["--vocab-size", "3", "--model", "unigram"],
     "raise --vocab-size or lower --character-coverage"),
], ids=["vocab-size", "max-pretokens", "min-frequency", "limit-alphabet", "flavour",
        "character-coverage", "unigram vocab-size"])
def test_train_errors_name_the_options_not_python_arguments(options, message, tmp_path, capsys):
    out = tmp_path / ("x.model" if "unigram" in options else "v.tiktoken")
    assert main(["train", str(_corpus(tmp_path)), *options, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and "_" not in err.replace(str(tmp_path), "")


def test_a_file_of_unknown_type_is_an_error_naming_the_format_option(tmp_path, capsys):
    path = _file(tmp_path, "vocab.bin", "not a vocabulary")
    assert main(["count", "-e", path, "hi"]) == 2
    assert capsys.readouterr().err.rstrip().endswith("pass --format to choose one")


def test_format_chooses_the_reader_of_a_vocabulary_file(tmp_path, capsys):
    out = tmp_path / "tokenizer.json"
    assert main(["train", str(_corpus(tmp_path)), "--vocab-size", "280", "--quiet",
                 "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["inspect", str(out), "--format", "gguf"]) == 2
    assert "not a GGUF file" in capsys.readouterr().err


def test_format_with_an_encoding_name_is_an_error(capsys):
    assert main(["count", "-e", "cl100k_base", "--format", "gguf", "hi"]) == 2
    assert "--format gguf: cl100k_base is no file" in capsys.readouterr().err


# ---------------------------------------------------------------- one line, never a traceback

def _fasttok(*args, env=None, **kwargs) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, "-m", "fasttok", *args], capture_output=True,
                          timeout=120, env={**os.environ, **(env or {})}, **kwargs)


def _one_line_error(proc, status: int = 2) -> str:
    err = proc.stderr.decode("utf-8", "backslashreplace")
    assert (proc.returncode, "Traceback" in err, err.count("\n")) == (status, False, 1), err
    return err


def test_output_the_terminal_encoding_cannot_write_is_one_line_not_a_traceback():
    proc = _fasttok("decode", "-e", "cl100k_base", "57668", env={"PYTHONIOENCODING": "ascii"})
    assert "set PYTHONIOENCODING=utf-8" in _one_line_error(proc)


def test_c_locale_output_is_written_or_one_line_never_a_traceback():
    proc = _fasttok("encode", "--show", "-e", "cl100k_base", "héllo 你",
                    env={"LC_ALL": "C", "LANG": "C", "PYTHONIOENCODING": "", "PYTHONUTF8": ""})
    if proc.returncode:
        _one_line_error(proc)
    else:
        assert proc.stdout.decode("utf-8").splitlines()[0].replace("|", "") == "héllo 你"


def test_train_with_a_vocab_size_beyond_32_bit_ids_is_one_line(tmp_path):
    # 10**23 overflowed a C integer inside the merge loop, with a traceback
    proc = _fasttok("train", str(_corpus(tmp_path)), "--vocab-size", "4294967296",
                    "--out", str(tmp_path / "v.tiktoken"))
    assert "more than 32-bit ids can number" in _one_line_error(proc)


@pytest.mark.parametrize("model, out, threads", [("bpe", "v.tiktoken", "0"),
                                                 ("unigram", "x.model", "-3")])
def test_train_with_threads_below_one_is_one_line(tmp_path, model, out, threads):
    proc = _fasttok("train", str(_corpus(tmp_path)), "--model", model, "--vocab-size", "300",
                    "--threads", threads, "--out", str(tmp_path / out))
    assert f"--threads must be 1 or more, not {threads}" in _one_line_error(proc)


@pytest.mark.parametrize("args", [["train", "{missing}", "--vocab-size", "300", "--out", "{out}"],
                                  ["encode", "-e", "{missing}.tiktoken", "hi"]],
                         ids=["train corpus", "encode -e"])
def test_a_missing_file_is_one_line_naming_it(tmp_path, args):
    missing = str(tmp_path / "nowhere")
    proc = _fasttok(*(a.format(missing=missing, out=tmp_path / "v.tiktoken") for a in args))
    assert missing in _one_line_error(proc)


@pytest.mark.parametrize("token", ["1.5", str(10**23)])
def test_decode_of_a_bad_id_is_one_line(token):
    proc = _fasttok("decode", "-e", "cl100k_base", "--", token)
    assert token in _one_line_error(proc)


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path):
    text = tmp_path / "big.txt"
    text.write_text("hello world\n" * 100_000, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "fasttok", "encode", "--ids", "-e",
                             "cl100k_base", "-f", str(text)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(10)
    proc.stdout.close()  # as `| head -c 10` does
    err = proc.stderr.read().decode()
    assert (proc.wait(timeout=120), err) == (1, "")


def test_an_unforeseen_failure_is_one_line_saying_to_report_it(monkeypatch, capsys):
    import fasttok.cli

    def broken(*args):
        raise RuntimeError("something no check foresaw")
    monkeypatch.setattr(fasttok.cli, "_encoding", broken)
    monkeypatch.delenv("FASTTOK_TRACEBACK", raising=False)
    assert main(["count", "-e", "cl100k_base", "hi"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "internal error: RuntimeError: something no check foresaw" in err
