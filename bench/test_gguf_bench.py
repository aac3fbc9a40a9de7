"""GGUF vocabularies: fasttok against llama.cpp itself, side by side.

llama.cpp comes from the PyPI package ``llama-cpp-python`` (built from source;
``CMAKE_ARGS=-DGGML_NATIVE=OFF pip install llama-cpp-python==0.3.36``, about
ten minutes on two cores, so it is not part of the test extra). Without it
these benchmarks are skipped. Before timing, the ids of both are compared on
the same text. Load time of every GGUF file is benchmarked too (fasttok only).

    python -m pytest bench/test_gguf_bench.py --benchmark-enable -q
"""

from __future__ import annotations

import pytest

import fasttok
from conftest import DATA, read_text

GGUF = DATA / "vocab" / "gguf"
VOCABS = ["llama-bpe", "qwen2"]
FILES = ["en", "code"]
LINES = 20_000  # llama.cpp runs at 1-4 MB/s: a slice keeps the run short


def _text(file: str) -> str:
    return "\n".join(read_text(DATA / "corpus" / f"{file}.txt").split("\n")[:LINES])


@pytest.mark.parametrize("impl", ["fasttok", "llama.cpp"])
@pytest.mark.parametrize("file", FILES)
@pytest.mark.parametrize("vocab", VOCABS)
def test_gguf_encode(benchmark, vocab, file, impl):
    llama_cpp = pytest.importorskip("llama_cpp")
    path = GGUF / f"ggml-vocab-{vocab}.gguf"
    text = _text(file)
    enc = fasttok.load(path)
    llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    raw = text.encode("utf-8")
    theirs = llm.tokenize(raw, add_bos=False, special=False)
    assert enc.encode(text, disallowed_special=()) == theirs, f"{vocab}/{file}: ids differ"
    if impl == "fasttok":
        fn, arg = (lambda t: enc.encode(t, disallowed_special=())), text
    else:
        fn, arg = (lambda b: llm.tokenize(b, add_bos=False, special=False)), raw
    benchmark.group = f"gguf-{vocab}-{file}"
    benchmark.extra_info.update(kind="gguf", vocab=vocab, file=file, impl=impl, bytes=len(raw))
    benchmark.pedantic(fn, args=(arg,), rounds=3, iterations=1, warmup_rounds=1)


@pytest.mark.parametrize("path", sorted(GGUF.glob("*.gguf")), ids=lambda p: p.name)
def test_gguf_load(benchmark, path):
    benchmark.group = "gguf-load"
    benchmark.pedantic(fasttok.load, args=(path,), rounds=3, iterations=1)
