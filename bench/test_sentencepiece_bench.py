"""Encode throughput of SentencePiece models: fasttok and the ``sentencepiece`` package.

For a Unigram and a BPE ``.model`` (botchan_unigram_5000, botchan_bpe_8000_bytefallback),
on each of en, code, zh and multi, single thread, same process, ids checked equal first:

* ``lines``: the file's lines in one batch call (``encode_ordinary_batch(lines,
  num_threads=1)``; ``sentencepiece.encode(lines, num_threads=1)``);
* ``whole``: the file as one string.

``test_sentencepiece_long_input`` times fasttok alone on one unit repeated to 50k and
to 200k characters (groups ``spm-long-<model>-<unit>``): linear time is 4x from one to
the other, quadratic 16x.

The two libraries run in alternating blocks (three runs of one, then three of the
other, three times over) and each keeps its best run: a library's first run after
the other's is slower for reasons that are not its own (the C allocator's state
left behind decides whether its big arrays come back with fresh pages). The
session ends with a table of sentencepiece time / fasttok time (> 1: fasttok is
faster), the CPU time of this process.

    python -m pytest bench/test_sentencepiece_bench.py --benchmark-enable -q
"""

from __future__ import annotations

import time

import pytest

spm = pytest.importorskip("sentencepiece")

MODELS = ("botchan_unigram_5000", "botchan_bpe_8000_bytefallback")
FILES = ("en", "code", "zh", "multi")
MODES = ("lines", "whole")
BLOCKS = 3
RUNS = 3

_loaded: dict = {}
_results: dict = {}


class _RatioTable:
    """Prints the sentencepiece / fasttok ratios when the session ends."""

    def pytest_terminal_summary(self, terminalreporter):
        if not _results:
            return
        terminalreporter.write_sep("=", "sentencepiece time / fasttok time (best of "
                                        f"{BLOCKS * RUNS}, CPU time; > 1: fasttok is faster)")
        head = f"{'model':<30} {'file':<6} {'mode':<6} {'fasttok ms':>11} {'spm ms':>9} {'ratio':>7}"
        terminalreporter.write_line(head)
        for (name, file, mode), (ours, theirs) in sorted(_results.items()):
            terminalreporter.write_line(f"{name:<30} {file:<6} {mode:<6} {ours * 1e3:11.1f} "
                                        f"{theirs * 1e3:9.1f} {theirs / ours:7.2f}")


@pytest.fixture(scope="module", autouse=True)
def ratio_table(request):
    if not request.config.pluginmanager.has_plugin("spm-ratio-table"):
        request.config.pluginmanager.register(_RatioTable(), "spm-ratio-table")
    yield


def _pair(data_dir, name):
    if name not in _loaded:
        import fasttok
        path = data_dir / "vocab" / "sentencepiece" / f"{name}.model"
        _loaded[name] = (fasttok.load(path), spm.SentencePieceProcessor(model_file=str(path)))
    return _loaded[name]


def _best(fn) -> float:
    times = []
    for _ in range(RUNS):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def side_by_side(ours, theirs) -> tuple[float, float]:
    """Best CPU times of two calls, run in alternating blocks."""
    best_ours = best_theirs = float("inf")
    for _ in range(BLOCKS):
        best_ours = min(best_ours, _best(ours))
        best_theirs = min(best_theirs, _best(theirs))
    return best_ours, best_theirs


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("file", FILES)
@pytest.mark.parametrize("name", MODELS)
def test_sentencepiece_encode(benchmark, data_dir, corpus, name, file, mode):
    enc, sp = _pair(data_dir, name)
    text = corpus(file)
    arg = text.split("\n") if mode == "lines" else text
    if mode == "lines":
        ours = lambda: enc.encode_ordinary_batch(arg, num_threads=1)  # noqa: E731
    else:
        ours = lambda: enc.encode_ordinary(arg)  # noqa: E731
    # sentencepiece encodes a list on every core unless told otherwise
    theirs = lambda: sp.encode(arg, num_threads=1)  # noqa: E731
    assert ours() == theirs(), f"{name}/{file}/{mode}: fasttok and sentencepiece disagree"
    t_ours, t_theirs = side_by_side(ours, theirs)
    _results[(name, file, mode)] = (t_ours, t_theirs)
    benchmark.group = f"spm-{name}-{file}-{mode}"
    benchmark.extra_info.update(kind="spm-encode", model=name, file=file, mode=mode,
                                bytes=len(text.encode("utf-8")), fasttok_s=t_ours,
                                sentencepiece_s=t_theirs, ratio=t_theirs / t_ours)
    benchmark.pedantic(ours, rounds=RUNS, warmup_rounds=0)


@pytest.mark.parametrize("size", [50_000, 200_000])
@pytest.mark.parametrize("unit", ["a", "ab ", "\u9f8d", " "], ids=["a", "ab_space", "cjk", "space"])
@pytest.mark.parametrize("name", MODELS)
def test_sentencepiece_long_input(benchmark, data_dir, name, unit, size):
    enc, _ = _pair(data_dir, name)
    text = unit * (size // len(unit))
    benchmark.group = f"spm-long-{name}-{unit!r}"
    benchmark.extra_info.update(kind="spm-long", model=name, unit=unit, chars=len(text))
    benchmark.pedantic(enc.encode, args=(text,), rounds=3, iterations=1, warmup_rounds=1)
