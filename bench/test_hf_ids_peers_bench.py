"""``fasttok.load(path).encode`` against the ``tokenizer.json`` peers, ids only (issue 24).

Issue 24 asks of ``fasttok.load(...).encode``: on the Unigram files at least
2x ``kitoken`` and at least ``tokie``; one call per line on llama3 and qwen3
at least ``quicktok`` (PyPI ``quicktok-v1``). Every library loads the same
``tokenizer.json`` and encodes the first ``LINES`` lines of ``en.txt``,
``code.txt`` and ``zh.txt`` without post-processing (added tokens in the text
still matched, as ``tokenizers`` matches them):

* ``fasttok``: ``fasttok.load(path).encode(text, allowed_special="all")``;
* ``tokenizers``: ``Tokenizer.from_file``, ``encode(text, add_special_tokens=False).ids``
  (the reference every id is checked against);
* ``tokie``: ``Tokenizer.from_json``, ``encode(text, add_special_tokens=False).ids``
  (its ``encode_bytes`` skips the file's normalizer and post-processor
  rules differently: its ids differ from tokenizers' on every Unigram file);
* ``kitoken``: ``Kitoken.from_tokenizers_file`` with the file's padding and
  truncation steps taken out, ``encode(text, True)``; it refuses every
  Unigram file here but the T5 conversion ("Unknown token 0 not found in specials");
* ``quicktok``: ``quicktok.import_tokenizer(path, name, data_dir)`` (its one
  way to read a ``tokenizer.json``: a checked conversion into its own files,
  byte-level BPE only) into a temporary folder, then ``encode_ordinary``, its
  fastest single-text call (its ``encode`` checks for special tokens first).

Modes: ``lines`` is one call per line from Python (every line keeps its
LF) in a list comprehension written as the library's user writes it, the
call in its body with no wrapper between; ``whole`` one call on the lines
joined. Each is timed steady (a warm-up
round, then the median of ``ROUNDS``) and cold, marked ``c-``: the first pass
over the input on a tokenizer just loaded (the load is not timed; the median
of ``COLD_ROUNDS`` fresh loads).

Before anything is timed, every library's ids are compared with
``tokenizers``' on that very input: fasttok differing fails the benchmark; a
peer differing is timed under its name with a ``*`` (its own column in the
closing table) and listed with how many lines differ and the first
difference, so no figure of a peer that gives other ids passes unmarked. A
file a peer cannot load is a skip naming the peer's error, listed at the end.

    python -m pytest bench/test_hf_ids_peers_bench.py --benchmark-enable -q
    python -m pytest bench/test_hf_ids_peers_bench.py --benchmark-enable -q -k "steady and lines"
    python bench/test_hf_ids_peers_bench.py   # steady state, the libraries taking turns
    python bench/test_hf_ids_peers_bench.py u5000 ja8000   # the vocabularies so named
"""

from __future__ import annotations

import contextlib
import functools
import gc
import io
import tempfile
from pathlib import Path

import pytest

import fasttok
from conftest import DATA, NOTES, first_difference, read_text

HF = DATA / "vocab" / "hf"
# short names for the table (which shows 12 characters)
VOCABS = {"llama3": "llama3/tokenizer.json", "qwen3": "qwen3/tokenizer.json",
          "u4000-bf-spm": "unigram/botchan_unigram_4000_bytefallback.v5.24.0.from_spm_proto.json",
          "u5000-albert": "unigram/botchan_unigram_5000.v4.57.6.AlbertTokenizer.json",
          "u5000-t5": "unigram/botchan_unigram_5000.v5.24.0.T5Tokenizer.json",
          "u5000-spm": "unigram/botchan_unigram_5000.v5.24.0.from_spm_proto.json",
          "ja8000-xlnet": "unigram/kyoto_ja_unigram_8000.v4.57.6.XLNetTokenizer.json",
          "ja8000-spm": "unigram/kyoto_ja_unigram_8000.v5.24.0.from_spm_proto.json"}
FILES = ["en", "code", "zh"]
MODES = ["lines", "whole"]
LINES = 5_000  # the figure issue 24's per-line numbers are measured on
ROUNDS = 5
COLD_ROUNDS = 3


def _path(vocab: str) -> str:
    path = HF / VOCABS[vocab]
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return str(path)


@functools.lru_cache(maxsize=None)
def _lines(file: str) -> tuple:
    path = DATA / "corpus" / f"{file}.txt"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return tuple(line + "\n" for line in read_text(path).split("\n")[:LINES])


def _input(file: str, mode: str):
    lines = _lines(file)
    return "".join(lines) if mode == "whole" else lines


# ------------------------------------------------- loaders: path -> (whole, lines)
# Each gives ``whole(text) -> ids`` and ``lines(texts) -> [ids, ...]``, the
# loop written as a user of the library writes it (the call in the loop's
# body, no wrapper of the bench's between): a wrapper is a cost the user
# does not pay, and not the same cost for every library (a
# ``functools.partial`` with a keyword had CPython copy its dict and unpack
# it into a vector a call, ~1,000 instructions a line; a lambda a frame).


def _fasttok(path: str):
    enc = fasttok.load(path)
    return (lambda text: enc.encode(text, allowed_special="all"),
            lambda texts: [enc.encode(text, allowed_special="all") for text in texts])


def _tokenizers(path: str):
    tok = pytest.importorskip("tokenizers").Tokenizer.from_file(path)
    tok.no_truncation()
    tok.no_padding()
    return (lambda text: tok.encode(text, add_special_tokens=False).ids,
            lambda texts: [tok.encode(text, add_special_tokens=False).ids for text in texts])


def _tokie(path: str):
    tok = pytest.importorskip("tokie").Tokenizer.from_json(path)
    return (lambda text: tok.encode(text, add_special_tokens=False).ids,
            lambda texts: [tok.encode(text, add_special_tokens=False).ids for text in texts])


def _kitoken(path: str):
    tok = pytest.importorskip("kitoken").Kitoken.from_tokenizers_file(path)
    config = tok.config()
    config["processing"] = [step for step in config.get("processing", [])
                            if not {"Pad", "Truncate"} & set(step)]
    tok.set_config(config)
    return (lambda text: tok.encode(text, True),
            lambda texts: [tok.encode(text, True) for text in texts])


@functools.lru_cache(maxsize=None)
def _quicktok_import(path: str) -> tuple:
    # once a session (the import checks its result against tokenizers); the
    # folder lives as long as the cache holds it and goes at exit
    quicktok = pytest.importorskip("quicktok")
    folder = tempfile.TemporaryDirectory(prefix="fasttok-bench-quicktok-")
    name = Path(path).parent.name
    with contextlib.redirect_stdout(io.StringIO()):
        quicktok.import_tokenizer(path, name, data_dir=folder.name)
    return name, folder


def _quicktok(path: str):
    quicktok = pytest.importorskip("quicktok")
    name, folder = _quicktok_import(path)
    tok = quicktok.Tokenizer(name, folder.name)
    return tok.encode_ordinary, lambda texts: [tok.encode_ordinary(text) for text in texts]


LOADERS = {"fasttok": _fasttok, "tokenizers": _tokenizers, "tokie": _tokie,
           "kitoken": _kitoken, "quicktok": _quicktok}
REFUSED: dict = {}  # (impl, vocab) -> the error its load raised


def _load(impl: str, vocab: str):
    """``(whole, lines)`` of a freshly loaded ``impl`` (see the loaders), or a
    skip naming why it cannot load."""
    path = _path(vocab)
    if (impl, vocab) not in REFUSED:
        try:
            return LOADERS[impl](path)
        except pytest.skip.Exception:
            raise
        except Exception as exc:  # noqa: BLE001 - a peer's refusal is reported
            REFUSED[impl, vocab] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}"
            NOTES.append(f"{impl} cannot load {VOCABS[vocab]}: {REFUSED[impl, vocab]}")
    pytest.skip(f"{impl} cannot load {vocab}: {REFUSED[impl, vocab]}")


_loaded = functools.lru_cache(maxsize=None)(_load)


def _run(mode: str):
    # (whole, lines) of a loader, arg -> what the mode's call gives
    if mode == "whole":
        return lambda calls, arg: calls[0](arg)
    return lambda calls, arg: calls[1](arg)


@functools.lru_cache(maxsize=None)
def _reference(vocab: str, file: str, mode: str) -> list:
    return [list(ids) for ids in _answers(_loaded("tokenizers", vocab), file, mode)]


def _answers(calls, file: str, mode: str) -> list:
    # a list of id lists: one for the whole text, or one a line
    found = _run(mode)(calls, _input(file, mode))
    return [found] if mode == "whole" else found


@functools.lru_cache(maxsize=None)
def _label(impl: str, vocab: str, file: str, mode: str) -> str:
    """``impl``, or ``impl*`` (reported) when its ids differ from tokenizers'."""
    got = [list(ids) for ids in _answers(_loaded(impl, vocab), file, mode)]
    expected = _reference(vocab, file, mode)
    # the kept answers are many lists: frozen, the collections timed code
    # sets off do not walk them (as bench/conftest.py's check_exact)
    gc.freeze()
    if got == expected:
        return impl
    where = f"{vocab}/{file}/{mode}: {impl} != tokenizers"
    if impl == "fasttok":
        pytest.fail(f"{where}: {first_difference(got, expected)}", pytrace=False)
    differ = sum(a != b for a, b in zip(got, expected)) + abs(len(got) - len(expected))
    NOTES.append(f"ids differ, timed as {impl}*: {where} on {differ} of {len(expected)} "
                 f"calls; {first_difference(got, expected)}")
    return impl + "*"


@pytest.mark.parametrize("impl", list(LOADERS))
@pytest.mark.parametrize("cold", [False, True], ids=["steady", "cold"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("file", FILES)
@pytest.mark.parametrize("vocab", list(VOCABS))
def test_hf_ids_peers(benchmark, vocab, file, mode, cold, impl):
    label = _label(impl, vocab, file, mode)
    arg = _input(file, mode)
    run = _run(mode)
    benchmark.group = f"hf-ids-{vocab}-{file}-{'c-' if cold else ''}{mode}"
    benchmark.extra_info.update(kind="encode", encoding=vocab, file=file,
                                mode=("c-" if cold else "") + mode, impl=label,
                                bytes=len("".join(_lines(file)).encode("utf-8")))
    if cold:
        benchmark.pedantic(run, setup=lambda: ((_load(impl, vocab), arg), {}),
                           rounds=COLD_ROUNDS, iterations=1)
    else:
        benchmark.pedantic(run, args=(_loaded(impl, vocab), arg), rounds=ROUNDS, iterations=1,
                           warmup_rounds=1)


def alternating_table(rounds: int = 5, names: tuple = ()) -> list:
    """The steady-state ratios (peer time / fasttok time) with the libraries
    taking turns round by round, the best of ``rounds`` each: on a shared
    machine, what else runs slows every library of a round alike, where
    pytest-benchmark's rounds of one library after another's do not. Times
    are the process's CPU time (``time.process_time``), not the wall clock:
    on a machine loaded past its cores the wall clock counts the time other
    processes ran (a 2-core VM at load 7 gave fasttok 3-5 us a line by the
    wall clock, 1.8 by CPU time).
    A peer whose ids differ is marked ``*``; one that cannot load the file, ``-``.
    ``names``: the vocabularies whose name holds one of them (all if empty)."""
    import time

    peers = [impl for impl in LOADERS if impl != "fasttok"]
    out = [f"{'file':<13}{'text':<6}{'mode':<7}{'fasttok us':>11}"
           + "".join(f"{p:>12}" for p in peers)]
    for vocab in [v for v in VOCABS if not names or any(n in v for n in names)]:
        for file in FILES:
            for mode in MODES:
                run = _run(mode)
                arg = _input(file, mode)
                encoders, marks = {}, {}
                for impl in LOADERS:
                    try:
                        marks[impl] = "*" if _label(impl, vocab, file, mode).endswith("*") else ""
                        encoders[impl] = _loaded(impl, vocab)
                    except pytest.skip.Exception:
                        pass
                best = dict.fromkeys(encoders, float("inf"))
                for impl, encode in encoders.items():
                    run(encode, arg)  # warm-up
                for _ in range(rounds):
                    for impl, encode in encoders.items():
                        start = time.process_time()
                        run(encode, arg)
                        best[impl] = min(best[impl], time.process_time() - start)
                calls = len(arg) if mode == "lines" else 1
                cells = [f"{best[p] / best['fasttok']:.2f}{marks[p]}" if p in best else "-"
                         for p in peers]
                out.append(f"{vocab:<13}{file:<6}{mode:<7}{best['fasttok'] / calls * 1e6:11.2f}"
                           + "".join(f"{c:>12}" for c in cells))
    return out


if __name__ == "__main__":
    # python bench/test_hf_ids_peers_bench.py [name ...]: the alternating
    # table of the vocabularies named (a part of the name: "u5000"), then the
    # notes (peers that differ or cannot load)
    import sys

    print("\n".join(alternating_table(names=tuple(sys.argv[1:]))))
    print("\n".join(dict.fromkeys(NOTES)))
