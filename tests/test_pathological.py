"""Pathological inputs: long single pieces, long whitespace runs, long digit runs.

Bounds (cl100k_base and o200k_base):
* each ~1 MB pathological input encodes in under 4x the time fasttok needs for
  1 MB of English prose (the first ~1 MB of ``corpus/en.txt``);
* doubling the length of one long piece (250k -> 500k) must cost less than 3x,
  which a quadratic merge loop or a backtracking pre-tokenizer cannot meet;
* each section of ``corpus/adversarial.txt``, repeated to about 1 MB, encodes in
  under 4x the time of 1 MB of English (the performance issue asks for 3x, which
  bench/test_pathological_bench.py reports; the margin is for a busy machine);
* the ids equal tiktoken's at 100k characters. Larger sizes are not compared:
  tiktoken 0.14 itself panics (fancy-regex StackOverflow) on a ~1 MB run of
  spaces followed by a letter, and on 1 MB of spaces with o200k_base.

Timings take the minimum of a few runs (and stop as soon as a run is under the
bound), so a busy CI machine does not make them flaky.
"""

from __future__ import annotations

import importlib.util
import random
import string
import time
from pathlib import Path

import pytest

from conftest import DATA, assert_same_ids, read_text

ENCODINGS = ("cl100k_base", "o200k_base")
SLOWDOWN_BOUND = 4.0  # the issue asks for 3x; the margin absorbs a busy CI machine (bench/ reports the ratio)
DOUBLING_BOUND = 3.0
MB = 1_000_000

def _random_text(alphabet, n: int) -> str:
    rng = random.Random(n)
    return "".join(rng.choice(alphabet) for _ in range(n))


def _random_runs(alphabet, n: int, longest: int) -> str:
    """Runs of one character, of random lengths up to ``longest``, ``n`` characters in all."""
    rng = random.Random(n + longest)
    runs, size = [], 0
    while size < n:
        runs.append(rng.choice(alphabet) * rng.randint(1, longest))
        size += len(runs[-1])
    return "".join(runs)[:n]


# name -> (text of about 1 MB, the same kind of text at 100k characters)
CASES = {
    "a_x1M": ("a" * MB, "a" * 100_000),
    "space_x1M": (" " * MB, " " * 100_000),
    "digit1_x1M": ("1" * MB, "1" * 100_000),
    "cjk_de_1MB": ("的" * (MB // 3), "的" * 100_000),
    "newline_x500k": ("\n" * 500_000, "\n" * 100_000),
    "space_x1001000_then_x": (" " * 1_001_000 + "x", " " * 100_000 + "x"),
}

# One long piece whose pairs have many different priorities: checked against
# tiktoken. Lowercase letters and punctuation mostly stay in the long-piece
# queue (its radix-heap and heap halves); mixed-case letters and Latin-1 bytes
# are mostly cut into short spans at byte pairs no token holds.
RANDOM_PIECES = {
    "letters_random": _random_text(string.ascii_lowercase, 100_000),
    "letters_mixed_case_random": _random_text(string.ascii_letters, 100_000),
    "latin1_random": _random_text([chr(c) for c in range(0x80, 0x100)], 50_000),
    "punct_random": _random_text("!#$%&()*+,-./:;<=>?@[]^_{|}~", 100_000),
    "cjk_random": _random_text([chr(c) for c in range(0x4E00, 0x9FA6)], 30_000),
    # Long pieces that no byte pair cuts, encoded a chunk at a time: runs whose
    # ends fall anywhere relative to the chunk seams, and repeats of a unit whose
    # length does not divide the chunk length.
    "punct_runs_of_random_length": _random_runs("=-*", 100_000, 3_000),
    "newline_space_runs_of_random_length": _random_runs("\n ", 100_000, 700),
    "repeated_seven_char_unit": ("=-==-=-" * 15_000)[:100_000],
    "repeated_word_without_spaces": "banana" * 20_000,
}




def _best_time(fn, *, runs: int = 3, good_enough: float = 0.0) -> float:
    """Minimum wall time of up to ``runs`` calls; stops early once under ``good_enough``."""
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
        if best < good_enough:
            break
    return best


_ENGLISH_TIME: dict[str, float] = {}


def english_time(ours, name: str) -> float:
    """Best time for fasttok to encode the first ~1 MB of corpus/en.txt."""
    if name not in _ENGLISH_TIME:
        text = read_text(DATA / "corpus" / "en.txt")
        text = text[: text.rfind("\n", 0, MB) + 1]
        ours.encode_ordinary(text)  # warm up
        _ENGLISH_TIME[name] = _best_time(lambda: ours.encode_ordinary(text), runs=5)
    return _ENGLISH_TIME[name]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", ENCODINGS)
def test_pathological_input_is_under_4x_english(name, case, encoding_pair):
    ours, _ = encoding_pair(name)
    text = CASES[case][0]
    baseline = english_time(ours, name)
    bound = SLOWDOWN_BOUND * baseline
    took = _best_time(lambda: ours.encode_ordinary(text), runs=3, good_enough=bound)
    assert took < bound, (f"{name}: {case} ({len(text)} chars) took {took:.3f}s, "
                          f"{took / baseline:.1f}x the {baseline:.3f}s of 1 MB of English")


def _adversarial_sections() -> dict[str, str]:
    spec = importlib.util.spec_from_file_location(
        "fetch_test_data", Path(__file__).resolve().parents[1] / "tools" / "fetch_test_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.adversarial_sections_of(DATA))


SECTIONS = _adversarial_sections() if (DATA / "corpus" / "adversarial.txt").is_file() else {}


def _about_1mb(text: str) -> str:
    return text * max(1, MB // len(text.encode("utf-8")))


@pytest.mark.parametrize("section", SECTIONS)
@pytest.mark.parametrize("name", ENCODINGS)
def test_adversarial_section_at_1mb_is_under_4x_english(name, section, encoding_pair):
    ours, _ = encoding_pair(name)
    text = _about_1mb(SECTIONS[section])
    baseline = english_time(ours, name)
    bound = SLOWDOWN_BOUND * baseline
    took = _best_time(lambda: ours.encode_ordinary(text), runs=5, good_enough=bound)
    assert took < bound, (f"{name}: {section} repeated to {len(text)} chars took {took:.3f}s, "
                          f"{took / baseline:.1f}x the {baseline:.3f}s of 1 MB of English")


@pytest.mark.parametrize("section", SECTIONS)
@pytest.mark.parametrize("name", ENCODINGS)
def test_adversarial_section_matches_tiktoken(name, section, encoding_pair):
    ours, theirs = encoding_pair(name)
    text = SECTIONS[section]
    assert_same_ids(ours.encode_ordinary(text), theirs.encode_ordinary(text), text, enc=theirs,
                    what=f"{name} encode_ordinary({section})")


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", ENCODINGS)
def test_pathological_input_round_trips(name, case, encoding_pair):
    ours, _ = encoding_pair(name)
    text = CASES[case][0]
    ids = ours.encode_ordinary(text)
    decoded = ours.decode(ids)
    assert decoded == text, (f"{name}: decode(encode({case})) gave {len(decoded)} chars, "
                             f"expected {len(text)}; starts {decoded[:20]!r}, ends {decoded[-20:]!r}")


@pytest.mark.parametrize("case", RANDOM_PIECES)
@pytest.mark.parametrize("name", ENCODINGS)
def test_long_random_piece_matches_tiktoken(name, case, encoding_pair):
    ours, theirs = encoding_pair(name)
    text = RANDOM_PIECES[case]
    assert_same_ids(ours.encode_ordinary(text), theirs.encode_ordinary(text), text)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", ENCODINGS)
def test_pathological_input_matches_tiktoken_at_100k(name, case, encoding_pair):
    ours, theirs = encoding_pair(name)
    text = CASES[case][1]
    assert_same_ids(ours.encode_ordinary(text), theirs.encode_ordinary(text), text, enc=theirs,
                    what=f"{name} encode_ordinary({case} at 100k)")


@pytest.mark.parametrize("char", ["a", " ", "1", "的"], ids=["a", "space", "digit", "cjk"])
@pytest.mark.parametrize("name", ENCODINGS)
def test_doubling_the_input_does_not_quadruple_the_time(name, char, encoding_pair):
    ours, _ = encoding_pair(name)
    n = 250_000
    short, long = char * n, char * (2 * n)
    ours.encode_ordinary(short)  # warm up
    attempts = []
    for _ in range(3):  # a quadratic loop fails every attempt; a noisy neighbour rarely does
        t_short = _best_time(lambda: ours.encode_ordinary(short), runs=5)
        t_long = _best_time(lambda: ours.encode_ordinary(long), runs=5,
                            good_enough=DOUBLING_BOUND * t_short)
        attempts.append((t_long / t_short, t_short, t_long))
        if attempts[-1][0] < DOUBLING_BOUND:
            return
    ratio, t_short, t_long = min(attempts)
    pytest.fail(f"{name}: {2 * n} x {char!r} took {t_long:.4f}s, {n} took {t_short:.4f}s: "
                f"ratio {ratio:.2f} (best of {len(attempts)} attempts; linear is 2, quadratic 4)",
                pytrace=False)
