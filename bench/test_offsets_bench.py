"""``encode_with_offsets`` against ``encode``, and against ``tokenizers``' offsets.

One vocabulary of each kind encodes the first 20,000 lines of a corpus file
whole, four ways: ``encode`` (ids), ``encode_with_offsets`` in code points
(tuples and ``flat``) and in UTF-8 bytes. For the ``tokenizer.json`` files ``tokenizers``'
``encode(text).offsets`` is timed too, its ids and offsets first compared
with fasttok's (a difference fails the benchmark). Each group's table shows
what the spans cost over the ids: the (start, end) tuples are most of it
where the walk notes spans as it goes.

    python -m pytest bench/test_offsets_bench.py --benchmark-enable -q
"""

from __future__ import annotations

import functools

import pytest

import fasttok
from conftest import DATA, read_text

VOCAB = DATA / "vocab"
KINDS = {
    "cl100k_base": VOCAB / "tiktoken" / "cl100k_base.tiktoken",
    "gguf-llama-bpe": VOCAB / "gguf" / "ggml-vocab-llama-bpe.gguf",
    "gguf-llama-spm": VOCAB / "gguf" / "ggml-vocab-llama-spm.gguf",
    "gguf-bert-bge": VOCAB / "gguf" / "ggml-vocab-bert-bge.gguf",
    "spm-unigram": VOCAB / "sentencepiece" / "botchan_unigram_4000_bytefallback.model",
    "hf-llama3": VOCAB / "hf" / "llama3" / "tokenizer.json",
    "hf-gemma3": VOCAB / "hf" / "gemma3" / "tokenizer.json",
    "hf-minilm": VOCAB / "hf" / "all-MiniLM-L6-v2" / "tokenizer.json",
}
FILES = ["en", "zh"]
LINES = 20_000


@functools.lru_cache(maxsize=None)
def _text(file: str) -> str:
    return "\n".join(read_text(DATA / "corpus" / f"{file}.txt").split("\n")[:LINES])


@functools.lru_cache(maxsize=None)
def _load(kind: str) -> fasttok.Encoding:
    path = KINDS[kind]
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return fasttok.load(str(path))


CALLS = {
    "encode": lambda enc, text: enc.encode(text, disallowed_special=()),
    "offsets-chars": lambda enc, text: enc.encode_with_offsets(text, disallowed_special=()),
    "offsets-bytes": lambda enc, text: enc.encode_with_offsets(text, unit="bytes",
                                                               disallowed_special=()),
    "offsets-flat": lambda enc, text: enc.encode_with_offsets(text, disallowed_special=(),
                                                              flat=True),
}


@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("file", FILES)
@pytest.mark.parametrize("kind", list(KINDS))
def test_offsets(benchmark, kind, file, call):
    enc, text = _load(kind), _text(file)
    assert CALLS["offsets-chars"](enc, text)[0] == enc.encode(text, disallowed_special=())
    benchmark.group = f"offsets-{kind}-{file}"
    benchmark.extra_info.update(kind="offsets", encoding=kind, file=file, impl=call,
                                bytes=len(text.encode("utf-8")))
    benchmark.pedantic(CALLS[call], args=(enc, text), rounds=5, iterations=1, warmup_rounds=1)


@pytest.mark.parametrize("file", FILES)
@pytest.mark.parametrize("kind", [k for k in KINDS if k.startswith("hf-")])
def test_tokenizers_offsets(benchmark, kind, file):
    tokenizers = pytest.importorskip("tokenizers")
    enc, text = _load(kind), _text(file)
    tok = tokenizers.Tokenizer.from_file(str(KINDS[kind]))
    tok.no_truncation()
    tok.no_padding()

    def offsets(text: str) -> tuple:
        found = tok.encode(text, add_special_tokens=False)
        return found.ids, found.offsets

    assert offsets(text) == enc.encode_with_offsets(text, allowed_special="all")
    benchmark.group = f"offsets-{kind}-{file}"
    benchmark.extra_info.update(kind="offsets", encoding=kind, file=file, impl="tokenizers",
                                bytes=len(text.encode("utf-8")))
    benchmark.pedantic(offsets, args=(text,), rounds=3, iterations=1, warmup_rounds=1)
