"""Hostile calls into every public method of every vocabulary kind return or raise a documented error.

The cases are made by ``tests/attack.py`` (its notes give the contract: the
exceptions allowed, the invariants checked) and run in the fuzz runner's
worker processes under its CPU, stall and memory limits, so a crash or a
hang is pinned to its case. The default run is cases ``0 .. 4 *
len(targets())``, which puts every attack on some vocabulary and some attack
on every vocabulary; ``pytest -m slow`` runs ``$FASTTOK_ATTACK_SLOW_CASES``
(10000) more. Rerun one case with ``python tests/attack.py case N``.

A finding not fixed yet is listed in :data:`KNOWN` with the engineer whose
code it is in: those cases leave the default run and each runs on its own,
``xfail(strict=True)``, so that the fix turns it into a failure that says
to delete the row.
"""

from __future__ import annotations

import dataclasses
import os
import random

import pytest

import attack
from attack import Context, Target, case, case_ids, documented, special_variants, targets
from fuzzing import run_cases

DEFAULT_ROUNDS = 4
SLOW_CASES = int(os.environ.get("FASTTOK_ATTACK_SLOW_CASES", "10000"))

# case id -> (whose code, the finding); a minimal repro is `python tests/attack.py case N`.
KNOWN: dict = {
}
# A known hang is still a hang; give it less CPU than the suite's bound.
KNOWN_LIMITS = dataclasses.replace(attack.LIMITS, hang_seconds=10.0)


def default_ids() -> list:
    return case_ids(0, DEFAULT_ROUNDS * len(targets()))


def test_default_attack_cases_return_or_raise_documented_errors():
    report = run_cases(attack.SUITE, [i for i in default_ids() if i not in KNOWN])
    if report.failures():
        pytest.fail(report.describe(limit=20), pytrace=False)


@pytest.mark.slow
def test_ten_thousand_more_attack_cases_do_too():
    start = DEFAULT_ROUNDS * len(targets())
    report = run_cases(attack.SUITE, case_ids(start, start + SLOW_CASES))
    print(report.describe(limit=40))
    if report.failures():
        pytest.fail(report.describe(limit=40), pytrace=False)


@pytest.fixture(scope="module")
def known_results() -> dict:
    report = run_cases(attack.SUITE, sorted(KNOWN, key=lambda i: (i % len(targets()), i)),
                       limits=KNOWN_LIMITS)
    return {r.case: r for r in report.results}


@pytest.mark.parametrize("case_id", [
    pytest.param(case_id, marks=pytest.mark.xfail(strict=True, reason=f"{owner}: {finding}"))
    for case_id, (owner, finding) in KNOWN.items()])
def test_known_finding_still_fails(case_id, known_results):
    result = known_results[case_id]
    assert not result.problems, f"{'+'.join(result.problems)}: {result.detail[-500:]}"


def test_the_default_run_meets_every_attack_and_every_vocabulary():
    met = [case(i) for i in default_ids()]
    assert {t for t, _, _ in met} == set(targets())
    for api, attacks in attack.ATTACKS.items():
        assert {a for t, a, _ in met if t.api == api} == set(attacks)


def test_a_case_is_the_same_every_time():
    for case_id in (0, 57, 1234):
        (t1, a1, r1), (t2, a2, r2) = case(case_id), case(case_id)
        assert (t1, a1, r1.random()) == (t2, a2, r2.random())


@pytest.mark.parametrize("exc, api, allowed", [
    (attack.Finding("x"), "encoding", False),
    (ValueError("plain"), "encoding", True),
    (KeyError(2**64), "encoding", True),
    (TypeError("not an int"), "encoding", True),
    (UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed"), "encoding", False),
    (IndexError("list index out of range"), "encoding", False),
    (OverflowError("int too big"), "encoding", False),
    (OverflowError("can't convert negative int to unsigned"), "hf", True),
    (SystemError("error return without exception set"), "hf", False),
])
def test_documented_errors_are_the_readme_contract(exc, api, allowed):
    assert documented(exc, api) is allowed


def test_fasttok_errors_are_documented():
    from fasttok.errors import FasttokError, VocabularyFileError

    assert documented(FasttokError("x"), "encoding")
    assert documented(VocabularyFileError("a.gguf", "truncated", offset=8), "encoding")


class _Stub:
    def get_vocab_size(self, with_added_tokens):
        return 10

    def get_added_tokens_decoder(self):
        return {}

    def fails(self, text):
        raise IndexError(text)

    def refuses(self, text):
        raise TypeError(text)


def test_a_stray_exception_escapes_the_call_and_a_documented_one_is_none():
    ctx = Context(Target("hf.Tokenizer", "stub"), _Stub(), random.Random(0))
    assert ctx.call(ctx.obj.refuses, "x") is None
    with pytest.raises(IndexError):
        ctx.call(ctx.obj.fails, "x")
    assert ctx.calls[-1].endswith("fails('x')")


def test_special_variants_cover_full_width_compatibility_case_and_split_forms():
    rng = random.Random(1)
    seen = {special_variants(rng, "<|endoftext|>") for _ in range(200)}
    assert "\uff1c\uff5c\uff45\uff4e\uff44\uff4f\uff46\uff54\uff45\uff58\uff54\uff5c\uff1e" in seen
    assert "<|ENDOFTEXT|>" in seen
    assert any("\u200b" in s for s in seen)
    assert any("\ufe64" in s or "\u2039" in s or "\u3008" in s for s in seen)


class _LeakyEncoding:
    """Gives its special id 3 for any text, as an injection bug would."""

    max_token_value = 3
    special_tokens_set = frozenset({"<s>"})
    _special_ids = frozenset({3})
    vocabulary = dataclasses.make_dataclass(
        "V", ["tokens", "ids", "token_types", "unk_id", "metadata"])(
            (b"a", b"b", b"c", b"<s>"), None, None, 0, {})

    def encode_ordinary(self, text):
        return [0, 3]


def test_a_special_id_from_plain_text_with_default_arguments_is_a_finding():
    ctx = Context(Target("tiktoken", "leaky"), _LeakyEncoding(), random.Random(0))
    with pytest.raises(attack.Finding, match="special/control ids"):
        attack.a_encode_text(ctx)


class _Answers:
    def get_vocab_size(self, with_added_tokens):
        return 10

    def get_added_tokens_decoder(self):
        return {}

    def completions(self, text):
        return [], [[50256] * 126] * 1000


def test_the_rss_bound_scales_with_an_answer_held():
    # encode_with_unstable's answer can be 4M ids (case 8064): the content, not a leak
    ctx = Context(Target("hf.Tokenizer", "stub"), _Answers(), random.Random(0))
    ctx.call(ctx.obj.completions, "x")
    ids = 126 * 1000
    assert ctx.size * attack.LIMITS.rss_factor >= 40 * ids  # a pointer and an int object an id


def test_a_batch_counts_its_ids_whatever_its_first_item():
    # a batch led by a dict counted 8 bytes an item and hid a list of 10^6 ids (case 5811)
    assert attack._size([{1: 2}, (1, 2), [7] * 10**6]) >= 8 * 10**6
