"""Encode throughput of SentencePiece models: fasttok and the ``sentencepiece`` package.

For a Unigram and a BPE ``.model`` (botchan_unigram_5000, botchan_bpe_8000_bytefallback),
on each of en, code, zh and multi, single thread, same process:

* ``lines``: the file's lines in one batch call (``encode_ordinary_batch(lines,
  num_threads=1)``; ``sentencepiece.encode(lines, num_threads=1)``), ids checked equal first;
* ``whole``: the file as one string. For BPE the ids are checked equal; for
  Unigram they are not (over a whole file sentencepiece's float32 path scores
  break near-ties in a way fasttok does not reproduce; see fasttok/_unigram.pyx).

    python -m pytest bench/test_sentencepiece_bench.py --benchmark-enable -q
"""

from __future__ import annotations

import pytest

spm = pytest.importorskip("sentencepiece")

MODELS = ("botchan_unigram_5000", "botchan_bpe_8000_bytefallback")
FILES = ("en", "code", "zh", "multi")
MODES = ("lines", "whole")
IMPLS = ("fasttok", "sentencepiece")

_loaded: dict = {}


def _pair(data_dir, name):
    if name not in _loaded:
        import fasttok
        path = data_dir / "vocab" / "sentencepiece" / f"{name}.model"
        _loaded[name] = (fasttok.load(path), spm.SentencePieceProcessor(model_file=str(path)))
    return _loaded[name]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("file", FILES)
@pytest.mark.parametrize("name", MODELS)
def test_sentencepiece_encode(benchmark, data_dir, corpus, name, file, mode, impl):
    enc, sp = _pair(data_dir, name)
    text = corpus(file)
    arg = text.split("\n") if mode == "lines" else text
    if mode == "lines":
        ours = lambda: enc.encode_ordinary_batch(arg, num_threads=1)  # noqa: E731
    else:
        ours = lambda: enc.encode_ordinary(arg)  # noqa: E731
    # sentencepiece encodes a list on every core unless told otherwise
    theirs = lambda: sp.encode(arg, num_threads=1)  # noqa: E731
    if impl == "fasttok" and (mode == "lines" or "bpe" in name):
        assert ours() == theirs(), f"{name}/{file}/{mode}: fasttok and sentencepiece disagree"
    benchmark.group = f"spm-{name}-{file}-{mode}"
    benchmark.extra_info.update(kind="spm-encode", model=name, file=file, mode=mode, impl=impl,
                                bytes=len(text.encode("utf-8")))
    benchmark.pedantic(ours if impl == "fasttok" else theirs, rounds=3, warmup_rounds=1)
