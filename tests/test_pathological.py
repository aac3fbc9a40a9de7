"""Pathological inputs: long single pieces, long whitespace runs, long digit runs.

What is specified here (cl100k_base and o200k_base), none of it timed:
* each ~1 MB pathological input, and each section of ``corpus/adversarial.txt``
  repeated to about 1 MB, decodes back to itself;
* a run of one character encodes as its longest run token repeated, then the
  encoding of what is left over, at every length: the chunked long-piece
  encoder joins its chunks without a seam showing;
* the ids equal tiktoken's at 100k characters. Larger sizes are not compared:
  tiktoken 0.14 itself panics (fancy-regex StackOverflow) on a ~1 MB run of
  spaces followed by a letter, and on 1 MB of spaces with o200k_base.

The cost bounds (each of these inputs under 3x the time of 1 MB of English,
and a doubled run costing about twice the time, not four times) are wall-clock
measurements, so they live in ``bench/test_pathological_bench.py``.
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

# The ~1 MB text of each case as (character, length of its run, what follows
# the run as a piece of its own): the last space of a run goes with the word
# after it (``\\s+(?!\\S)``).
RUN_SHAPES = {
    "a_x1M": ("a", MB, ""),
    "space_x1M": (" ", MB, ""),
    "digit1_x1M": ("1", MB, ""),
    "cjk_de_1MB": ("的", MB // 3, ""),
    "newline_x500k": ("\n", 500_000, ""),
    "space_x1001000_then_x": (" ", 1_000_999, " x"),
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



@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", ENCODINGS)
def test_a_1mb_run_is_its_longest_run_token_repeated_then_the_rest(name, case, encoding_pair):
    ours, _ = encoding_pair(name)
    char, length, tail = RUN_SHAPES[case]
    text = CASES[case][0]
    assert text == char * length + tail
    ids = ours.encode_ordinary(text)
    block = ours.decode_single_token_bytes(ids[0])
    width = len(block) // len(char.encode("utf-8"))
    assert block == (char * width).encode("utf-8"), f"{name}: {case} starts with {block!r}"
    expected = ([ids[0]] * (length // width) + ours.encode_ordinary(char * (length % width))
                + ours.encode_ordinary(tail))
    assert ids == expected, f"{name}: {case}: first difference at {_first_difference(ids, expected)}"


def _first_difference(a: list, b: list) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


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
def test_adversarial_section_repeated_to_1mb_round_trips(name, section, encoding_pair):
    ours, _ = encoding_pair(name)
    text = _about_1mb(SECTIONS[section])
    decoded = ours.decode(ours.encode_ordinary(text))
    assert decoded == text, (f"{name}: decode(encode({section} repeated to {len(text)} chars)) "
                             f"differs first at {_first_difference(decoded, text)}")


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
def test_a_run_twice_as_long_encodes_to_its_ids_twice(name, char, encoding_pair):
    # 3 * 2**16 characters: a whole number of every run token's length (1, 3,
    # 8, 16, 32, 128 characters), and of the chunks the long-piece encoder cuts
    ours, _ = encoding_pair(name)
    n = 3 * 2**16
    short, long = ours.encode_ordinary(char * n), ours.encode_ordinary(char * (2 * n))
    assert long == short * 2, (f"{name}: {2 * n} x {char!r} gave {len(long)} ids, "
                               f"{n} gave {len(short)}; first difference at "
                               f"{_first_difference(long, short * 2)}")
