"""tokenizers' ``BPE`` model alone: fasttok's ``hf_bpe`` against ``tokenizers``.

Both build the ``model`` of the shared llama2 and gemma3 ``tokenizer.json``
files and tokenize the same pieces: each corpus line (spaces as ``▁``, as
their normalizers leave them; the model then sees the whole line) or each
word (``▁`` + word). fasttok's ``tokenize_ids`` against ``tokenizers``'
``Model.tokenize``, one Python call per piece for both. The ids are compared
before anything is timed.

    python -m pytest bench/test_hf_bpe_model_bench.py --benchmark-enable -q
"""

from __future__ import annotations

import functools
import json

import pytest

from conftest import DATA, read_text
from fasttok.models.hf_bpe import bpe_from_json

HF = DATA / "vocab" / "hf"
VOCABS = ["llama2", "gemma3"]
FILES = ["en", "code", "multi", "zh"]
LINES = 20_000


@functools.lru_cache(maxsize=None)
def _models(vocab: str):
    tokenizers = pytest.importorskip("tokenizers")
    path = HF / vocab / "tokenizer.json"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    spec = json.loads(path.read_text(encoding="utf-8"))["model"]
    ours = bpe_from_json(spec, "$.model", lambda where, problem: ValueError(f"{where}: {problem}"))
    ref = tokenizers.Tokenizer.from_str(json.dumps({"version": "1.0", "model": spec})).model
    return ours, ref


@functools.lru_cache(maxsize=None)
def _pieces(file: str, unit: str) -> list:
    lines = [line for line in read_text(DATA / "corpus" / f"{file}.txt").split("\n")[:LINES] if line]
    if unit == "lines":
        return [line.replace(" ", "\u2581") for line in lines]
    return ["\u2581" + word for line in lines for word in line.split(" ") if word]


@pytest.mark.parametrize("unit", ["lines", "words"])
@pytest.mark.parametrize("file", FILES)
@pytest.mark.parametrize("vocab", VOCABS)
@pytest.mark.parametrize("impl", ["fasttok", "tokenizers"])
def test_model_tokenize(benchmark, impl, vocab, file, unit):
    ours, ref = _models(vocab)
    pieces = _pieces(file, unit)
    assert [ours.tokenize_ids(p) for p in pieces[:2000]] == \
        [[t.id for t in ref.tokenize(p)] for p in pieces[:2000]]
    if impl == "fasttok":
        run = ours.tokenize_ids
    else:
        run = ref.tokenize
    benchmark.pedantic(lambda: [run(p) for p in pieces], rounds=3, iterations=1)
