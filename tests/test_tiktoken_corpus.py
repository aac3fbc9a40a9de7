"""fasttok == tiktoken on the benchmark corpora (``<data>/corpus/*.txt``, ~10.8 MB).

Every base encoding (gpt2, r50k_base, p50k_base, cl100k_base, o200k_base) runs
on every file. p50k_edit and o200k_harmony share p50k's / o200k's ranks and
pattern and differ only in special tokens, so they run on ``adversarial.txt``
alone, the file with special-token text in it.

Cost (measured, 2 cores): tiktoken encodes these files at 7-16 MB/s, so the whole
module is ~30 s including fasttok; nothing here needs a ``slow`` mark.
"""

from __future__ import annotations

import pytest

from conftest import (
    DATA,
    DATA_MISSING,
    MISSING_DATA_REASON,
    Mismatches,
    assert_same_ids,
    offsets_mismatch,
    outcome,
    outcome_mismatch,
    read_text,
)

BASE_ENCODINGS = ("gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base")
SPECIALS_ONLY_ENCODINGS = ("p50k_edit", "o200k_harmony")
SPECIALS_FILE = "adversarial.txt"
# decode_with_offsets: about this many lines per file
OFFSET_SAMPLE = 400

CORPUS_FILES = sorted(p.name for p in (DATA / "corpus").glob("*.txt")) if not DATA_MISSING else []


def _cases():
    if DATA_MISSING:
        return [pytest.param("cl100k_base", "en.txt", marks=pytest.mark.skip(reason=MISSING_DATA_REASON))]
    cases = [pytest.param(enc, f, id=f"{enc}-{f}") for enc in BASE_ENCODINGS for f in CORPUS_FILES]
    cases += [pytest.param(enc, SPECIALS_FILE, id=f"{enc}-{SPECIALS_FILE}")
              for enc in SPECIALS_ONLY_ENCODINGS]
    return cases


corpus_case = pytest.mark.parametrize(("name", "filename"), _cases())

_TEXTS: dict[str, str] = {}


def corpus_text(filename: str) -> str:
    text = _TEXTS.get(filename)
    if text is None:
        text = _TEXTS[filename] = read_text(DATA / "corpus" / filename)
    return text


def corpus_lines(filename: str) -> list[str]:
    return [line for line in corpus_text(filename).split("\n") if line]


def test_corpus_is_present(data_dir):
    assert CORPUS_FILES, f"no *.txt files in {data_dir / 'corpus'}"
    assert SPECIALS_FILE in CORPUS_FILES


@corpus_case
def test_encode_ordinary_whole_file_matches_tiktoken(name, filename, encoding_pair):
    ours, theirs = encoding_pair(name)
    text = corpus_text(filename)
    assert_same_ids(ours.encode_ordinary(text), theirs.encode_ordinary(text), text, enc=theirs,
                    what=f"{name} encode_ordinary({filename})")


@corpus_case
def test_encode_default_per_line_matches_or_both_raise(name, filename, encoding_pair):
    ours, theirs = encoding_pair(name)
    found = Mismatches(f"{name} encode() on the lines of {filename}")
    for number, line in enumerate(corpus_text(filename).split("\n"), 1):
        if not line:
            continue
        found.check(outcome_mismatch(outcome(ours.encode, line), outcome(theirs.encode, line), line,
                                     enc=theirs, what="encode()"),
                    f"line {number}")
    found.assert_none()


@corpus_case
def test_decode_of_encode_round_trips_whole_file(name, filename, encoding_pair):
    ours, _ = encoding_pair(name)
    text = corpus_text(filename)
    decoded = ours.decode(ours.encode(text, allowed_special="all"))
    if decoded != text:
        i = next((k for k in range(min(len(decoded), len(text))) if decoded[k] != text[k]),
                 min(len(decoded), len(text)))
        pytest.fail(
            f"{name}: decode(encode({filename})) differs from the file at char {i} "
            f"(line {text.count(chr(10), 0, i) + 1}): expected {text[max(0, i - 30):i + 30]!r}, "
            f"got {decoded[max(0, i - 30):i + 30]!r}", pytrace=False)


@corpus_case
def test_decode_with_offsets_matches_tiktoken_on_sample_lines(name, filename, encoding_pair):
    ours, theirs = encoding_pair(name)
    lines = corpus_lines(filename)
    step = max(1, len(lines) // OFFSET_SAMPLE)
    found = Mismatches(f"{name} decode_with_offsets on every {step}th line of {filename}")
    for k in range(0, len(lines), step):
        line = lines[k]
        ids = theirs.encode(line, allowed_special="all")
        problem = offsets_mismatch(outcome(ours.decode_with_offsets, ids),
                                   outcome(theirs.decode_with_offsets, ids), ids)
        found.check(problem, f"non-empty line {k}")
    found.assert_none()
