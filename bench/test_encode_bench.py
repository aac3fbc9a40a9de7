"""Encode throughput: fasttok and its peers on the benchmark corpora.

For cl100k_base and o200k_base, on each of en, code, zh and multi:

* ``whole``: the file as one string (``encode_ordinary(text)``);
* ``loop``: its lines, one ``encode_ordinary(line)`` call each from a Python loop
  (measures the per-call cost as much as the merge loop);
* ``batch1`` and ``batch2``: its lines through the library's batch call with
  1 and 2 threads (``encode_ordinary_batch(lines, num_threads=2)``; quicktok
  ``encode_batch``, which returns flat numpy arrays; rs_bpe
  ``encode_batch_parallel``). The summary also gives fasttok's batch1 time
  over its batch2 time: how much a second thread buys.

Each benchmark first checks that the implementation's ids equal fasttok's for that
input (fasttok's own batch result is checked against its loop result), then times
5 rounds (9 for the batch modes) after 1 warm-up round.
"""

from __future__ import annotations

import pytest

ENCODINGS = ("cl100k_base", "o200k_base")
FILES = ("en", "code", "zh", "multi")
MODES = ("whole", "loop", "batch1", "batch2")
IMPLS = ("fasttok", "tiktoken", "quicktok", "rs_bpe", "bpe_openai", "hf_tokenizers")


@pytest.mark.parametrize("impl", IMPLS, ids=[f"impl={name}" for name in IMPLS])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("file", FILES)
@pytest.mark.parametrize("enc_name", ENCODINGS)
def test_encode(benchmark, implementation, corpus, corpus_lines, check_exact, enc_name, file, mode, impl):
    lib = implementation(impl, enc_name)
    if mode == "whole":
        arg = corpus(file)
        fn = lib.whole
        key = (file, "whole")

        def run(i):
            return i.whole(arg)
    else:
        arg = corpus_lines(file)
        key = (file, "lines")
        if mode == "loop":
            fn = lib.loop

            def run(i):
                return i.loop(arg)
        else:
            threads = int(mode[len("batch"):])

            def fn(lines):
                return lib.batch(lines, threads)

            def run(i):
                return i.as_lists(i.batch(arg, threads))

    check_exact(f"{enc_name}/{file}/{mode}", impl, enc_name, key, run)

    benchmark.group = f"{enc_name}-{file}-{mode}"
    benchmark.extra_info.update(kind="encode", encoding=enc_name, file=file, mode=mode, impl=impl,
                                bytes=len(corpus(file).encode("utf-8")))
    # two threads share the machine with whatever else runs on it: their
    # rounds spread more, so the batch modes take more of them
    rounds = 9 if mode.startswith("batch") else 5
    benchmark.pedantic(fn, args=(arg,), rounds=rounds, iterations=1, warmup_rounds=1)
