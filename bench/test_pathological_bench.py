"""Worst-case inputs for fasttok alone, each timed against 1 MB of English.

A linear tokenizer takes about as long on each of these as on ordinary English of
the same size; a ratio far above 1 in the closing table points at a quadratic path
(long BPE pieces, regex backtracking over whitespace runs, ...).

``" " * 1_001_000 + "x"`` is in the list because tiktoken panics on it; tiktoken is
not run here at all. Each section of ``corpus/adversarial.txt`` is also timed,
repeated to about 1 MB (``section:<name>``); the performance issue asks for each
to stay under 3x the time of 1 MB of English. ``run:<char>_x250k`` and ``run:<char>_x500k``
time one run at two lengths: the second should take about twice the time of the first
(linear), not four times (a quadratic merge loop or a backtracking pre-tokenizer).
Every result is checked to decode back to its input before it is timed.
"""

from __future__ import annotations

import importlib.util
import random

import pytest

from conftest import DATA, REPO_ROOT

ENCODINGS = ("cl100k_base", "o200k_base")
MB = 1_000_000


def _digits(n: int) -> str:
    rng = random.Random(1_000_000)
    return "".join(rng.choice("0123456789") for _ in range(n))


CASES = {
    "english_1mb": None,  # the first MB of corpus/en.txt, filled in by the test
    "a_x1m": lambda: "a" * MB,
    "space_x1m": lambda: " " * MB,
    "space_x1001k_then_x": lambda: " " * 1_001_000 + "x",
    "digits_1m": lambda: _digits(MB),
    "cjk_one_char_1mb": lambda: "\u4e2d" * (MB // 3),  # 3 UTF-8 bytes each
    "digit1_x1m": lambda: "1" * MB,
    "newline_x500k": lambda: "\n" * 500_000,
}
for _label, _char in (("a", "a"), ("space", " "), ("digit", "1"), ("cjk", "\u7684")):
    for _n in (250_000, 500_000):
        CASES[f"run:{_label}_x{_n // 1000}k"] = (lambda char, n: lambda: char * n)(_char, _n)



def _adversarial_sections() -> dict[str, str]:
    if not (DATA / "corpus" / "adversarial.txt").is_file():
        return {}
    spec = importlib.util.spec_from_file_location("fetch_test_data",
                                                  REPO_ROOT / "tools" / "fetch_test_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.adversarial_sections_of(DATA))


for _name, _section in _adversarial_sections().items():
    CASES[f"section:{_name}"] = (lambda text: lambda: text * max(1, MB // len(text.encode("utf-8"))))(_section)

_TEXTS: dict[str, str] = {}


def _text(case: str, corpus) -> str:
    if case not in _TEXTS:
        if case == "english_1mb":
            en = corpus("en")
            if len(en) < MB:
                en = en * (MB // len(en) + 1)
            _TEXTS[case] = en[:MB]
        else:
            _TEXTS[case] = CASES[case]()
    return _TEXTS[case]


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("enc_name", ENCODINGS)
def test_pathological(benchmark, implementation, corpus, enc_name, case):
    lib = implementation("fasttok", enc_name)
    text = _text(case, corpus)

    import fasttok

    ids = lib.whole(text)
    assert fasttok.get_encoding(enc_name).decode(ids) == text, f"{case}: decode(encode(text)) != text"

    benchmark.group = f"pathological-{enc_name}"
    benchmark.extra_info.update(kind="pathological", encoding=enc_name, case=case, impl="fasttok",
                                bytes=len(text.encode("utf-8")))
    benchmark.pedantic(lib.whole, args=(text,), rounds=3, iterations=1, warmup_rounds=1)
