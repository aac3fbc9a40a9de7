"""Mistral ``tekken.json``: fasttok against ``mistral_common``'s Tekkenizer.

Both load the newest ``tekken_*.json`` that ``mistral_common`` ships and
encode the same text without BOS/EOS (``Tekkenizer.encode(s, bos=False,
eos=False)``, fasttok's ``encode_ordinary``): each corpus file whole, and
its lines one call each from a Python loop. The ids are compared before
anything is timed; a difference fails the benchmark. Load time is
benchmarked for both. The session's ratio table (``bench/conftest.py``)
lists the Tekkenizer's time over fasttok's.

    python -m pytest bench/test_tekken_bench.py --benchmark-enable -q
"""

from __future__ import annotations

import functools
import importlib.resources

import pytest

import fasttok
from conftest import DATA, read_text

FILES = ["en", "code", "zh", "multi"]
MODES = ["whole", "loop"]
LINES = 20_000  # the Tekkenizer's rounds stay short


def _path() -> str:
    pytest.importorskip("mistral_common")
    data = importlib.resources.files("mistral_common") / "data"
    names = sorted(p.name for p in data.iterdir() if p.name.startswith("tekken_"))
    return str(data / names[-1])


@functools.lru_cache(maxsize=None)
def _lines(file: str) -> list:
    return read_text(DATA / "corpus" / f"{file}.txt").split("\n")[:LINES]


@functools.lru_cache(maxsize=None)
def _encoder(impl: str):
    if impl == "fasttok":
        return fasttok.load(_path()).encode_ordinary
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer
    tok = Tekkenizer.from_file(_path())
    return lambda text: tok.encode(text, bos=False, eos=False)


@pytest.mark.parametrize("impl", ["fasttok", "mistral_common"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("file", FILES)
def test_tekken_encode(benchmark, file, mode, impl):
    lines = _lines(file)
    encode = _encoder(impl)
    if mode == "whole":
        arg = "\n".join(lines)
        fn = encode
    else:
        arg = lines

        def fn(texts):
            return [encode(t) for t in texts]
    reference = _encoder("mistral_common")
    want = reference(arg) if mode == "whole" else [reference(t) for t in arg]
    assert fn(arg) == want, f"tekken/{file}/{mode}: {impl}'s ids differ from the Tekkenizer's"
    benchmark.group = f"tekken-{file}-{mode}"
    benchmark.extra_info.update(kind="encode", encoding="tekken", file=file, mode=mode, impl=impl,
                                bytes=len("\n".join(lines).encode("utf-8")))
    benchmark.pedantic(fn, args=(arg,), rounds=3, iterations=1, warmup_rounds=1)


@pytest.mark.parametrize("impl", ["fasttok", "mistral_common"])
def test_tekken_load(benchmark, impl):
    path = _path()
    if impl == "fasttok":
        load = fasttok.load
    else:
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer
        load = Tekkenizer.from_file
    benchmark.group = "tekken-load"
    benchmark.pedantic(load, args=(path,), rounds=2, iterations=1)
