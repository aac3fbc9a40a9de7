"""fasttok == tiktoken on the hand-picked strings of ``testcases/lines.jsonl``
(355 in the shared data; a folder made by ``tools/fetch_test_data.py`` has its own set).

The strings cover whitespace runs, contractions, digits of many scripts, code,
CJK, emoji sequences, combining marks, compatibility characters, special-token
look-alikes, control characters and long runs (PROVENANCE.md §5). Each test runs
every string through one API call for one encoding, compares with the reference
tiktoken and reports the first string that differs.

The golden files ``goldens/tiktoken/<enc>.jsonl`` (tiktoken 0.14.0 in the shared
data; ``tools/fetch_test_data.py --only goldens`` makes them with the installed
tiktoken, and the golden tests are skipped where they are absent) pin the
expected ids independently of the installed tiktoken. They exist for r50k_base,
p50k_base, cl100k_base and o200k_base; gpt2 is checked against r50k's goldens
(same ranks, pattern and special token), and p50k_edit / o200k_harmony against
their base encoding's ``ids`` (``encode_ordinary`` ignores special tokens, and
they differ from their base only in special tokens).
"""

from __future__ import annotations

import pytest

from conftest import (ALL_ENCODINGS, Mismatches, Raised, golden_file, outcome, outcome_mismatch,
                      read_jsonl)

# encoding -> golden file whose `ids` field applies to it.
GOLDEN_IDS_SOURCE = {
    "gpt2": "r50k_base",
    "r50k_base": "r50k_base",
    "p50k_base": "p50k_base",
    "p50k_edit": "p50k_base",
    "cl100k_base": "cl100k_base",
    "o200k_base": "o200k_base",
    "o200k_harmony": "o200k_base",
}
# `ids_allowed_special_all` depends on the special tokens, so only where they are identical.
GOLDEN_SPECIAL_SOURCE = {
    "gpt2": "r50k_base",
    "r50k_base": "r50k_base",
    "p50k_base": "p50k_base",
    "cl100k_base": "cl100k_base",
    "o200k_base": "o200k_base",
}

# Literal ids for a few classic strings (STYLE.md habit 6), checked by hand
# against tiktoken 0.14.0 and PROVENANCE.md §1.
CLASSIC = {
    ("cl100k_base", "hello world"): [15339, 1917],
    ("o200k_base", "hello world"): [24912, 2375],
    ("o200k_harmony", "hello world"): [24912, 2375],
    ("r50k_base", "hello world"): [31373, 995],
    ("gpt2", "hello world"): [31373, 995],
    ("p50k_base", "hello world"): [31373, 995],
    ("p50k_edit", "hello world"): [31373, 995],
    ("gpt2", "<|endoftext|>"): [50256],
    ("cl100k_base", "<|endoftext|>"): [100257],
    ("cl100k_base", "<|endofprompt|>"): [100276],
    ("o200k_base", "<|endoftext|>"): [199999],
    ("o200k_harmony", "<|start|>"): [200006],
    ("o200k_harmony", "<|endofprompt|>"): [200018],
}


def _compare_all(pair, strings, what, call):
    """Run ``call(encoding, text)`` on both libraries for every string."""
    ours_enc, theirs_enc = pair
    found = Mismatches(f"{pair.name} {what}")
    for case in strings:
        text = case["text"]
        problem = outcome_mismatch(
            outcome(call, ours_enc, text), outcome(call, theirs_enc, text), text,
            enc=theirs_enc, what=what)
        found.check(problem, f"id {case['id']} ({case['category']})")
    found.assert_none()


def test_test_strings_file_is_complete(test_strings):
    # guards the other tests against a truncated or mis-read lines.jsonl
    # (355 strings in the shared data; any number is fine as long as the ids run 0..n-1)
    assert len(test_strings) >= 100
    assert [c["id"] for c in test_strings] == list(range(len(test_strings)))
    assert any("\u2028" in c["text"] for c in test_strings)


def test_encode_ordinary_matches_tiktoken(enc_pair, test_strings):
    _compare_all(enc_pair, test_strings, "encode_ordinary", lambda e, t: e.encode_ordinary(t))


def test_encode_allowed_special_all_matches_tiktoken(enc_pair, test_strings):
    _compare_all(enc_pair, test_strings, 'encode(allowed_special="all")',
                 lambda e, t: e.encode(t, allowed_special="all"))


def test_encode_with_nothing_disallowed_matches_tiktoken(enc_pair, test_strings):
    _compare_all(enc_pair, test_strings, "encode(disallowed_special=())",
                 lambda e, t: e.encode(t, disallowed_special=()))


def test_encode_default_matches_or_both_raise(enc_pair, test_strings):
    _compare_all(enc_pair, test_strings, "encode() with defaults", lambda e, t: e.encode(t))


def test_encode_default_raises_on_strings_holding_special_tokens(enc_pair, test_strings):
    # keeps the comparison above honest: some strings must actually raise
    ours, theirs = enc_pair
    holding = [c for c in test_strings if any(s in c["text"] for s in theirs.special_tokens_set)]
    assert holding, "lines.jsonl should contain special-token text"
    quiet = []
    for case in holding:
        got = outcome(ours.encode, case["text"])
        if not (isinstance(got, Raised) and isinstance(got.exc, ValueError)):
            quiet.append((case["id"], got))
    assert quiet == [], f"{enc_pair.name}: encode() did not raise ValueError on (id, result) {quiet}"


@pytest.mark.parametrize("name", ALL_ENCODINGS)
def test_encode_ordinary_matches_goldens(name, encoding_pair, data_dir, test_strings):
    source = GOLDEN_IDS_SOURCE[name]
    goldens = read_jsonl(golden_file(data_dir, "tiktoken", source))
    assert [g["text"] for g in goldens] == [c["text"] for c in test_strings]
    pair = encoding_pair(name)
    found = Mismatches(f"{name} encode_ordinary vs goldens/tiktoken/{source}.jsonl 'ids'")
    for g in goldens:
        problem = outcome_mismatch(outcome(pair.ours.encode_ordinary, g["text"]), g["ids"],
                                   g["text"], enc=pair.theirs, what="encode_ordinary")
        found.check(problem, f"id {g['id']}")
    found.assert_none()


@pytest.mark.parametrize("name", sorted(GOLDEN_SPECIAL_SOURCE))
def test_encode_allowed_special_all_matches_goldens(name, encoding_pair, data_dir):
    source = GOLDEN_SPECIAL_SOURCE[name]
    goldens = read_jsonl(golden_file(data_dir, "tiktoken", source))
    pair = encoding_pair(name)
    found = Mismatches(f"{name} encode(allowed_special='all') vs goldens/tiktoken/{source}.jsonl")
    for g in goldens:
        got = outcome(pair.ours.encode, g["text"], allowed_special="all")
        problem = outcome_mismatch(got, g["ids_allowed_special_all"], g["text"], enc=pair.theirs,
                                   what='encode(allowed_special="all")')
        found.check(problem, f"id {g['id']}")
    found.assert_none()


@pytest.mark.parametrize(("name", "text"), sorted(CLASSIC), ids=lambda v: repr(v)[:30])
def test_classic_strings_have_literal_ids(name, text, encoding_pair):
    ours = encoding_pair(name).ours
    assert ours.encode(text, allowed_special="all") == CLASSIC[(name, text)]
