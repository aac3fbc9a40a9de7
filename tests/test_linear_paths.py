"""Paths whose cost must grow linearly with the input, counted in operations
(calls, tokens decoded), never in seconds; and the results they give stay
the reference's.

* ``encode_with_unstable`` tries only the splits of the unstable bytes that a
  token can start at (at most the longest token's length of them), so one
  long word costs one pass, and gives tiktoken's result on short texts.
* ``decode_with_offsets`` of a ``tokenizer.json`` decoded by the Python
  pipeline decodes each id a bounded number of times, not every prefix.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA_MISSING, MISSING_DATA_REASON, reference_encoding

pytestmark = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)


@pytest.fixture(scope="module")
def cl100k():
    return fasttok.get_encoding("cl100k_base")


@pytest.fixture(scope="module")
def tiktoken_cl100k():
    return reference_encoding("cl100k_base")[0]


def _unstable(enc, text: str) -> tuple:
    stable, completions = enc.encode_with_unstable(text)
    return stable, sorted(map(tuple, completions))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(st.sampled_from("ab ж.\n'x0é你🎉"), max_size=10))
def test_encode_with_unstable_is_tiktokens_on_short_texts(cl100k, tiktoken_cl100k, text):
    assert _unstable(cl100k, text) == _unstable(tiktoken_cl100k, text)


def _counted_tries(enc, monkeypatch) -> list:
    tries: list = []
    lookup = enc._tokens_starting_with

    def counted(prefix: bytes) -> list:
        tries.append(len(prefix))
        return lookup(prefix)

    monkeypatch.setattr(enc, "_tokens_starting_with", counted)
    return tries


@pytest.mark.parametrize("letters", [100_000, pytest.param(1_000_000, marks=pytest.mark.slow)])
def test_encode_with_unstable_of_one_long_word_tries_a_bounded_number_of_splits(
        cl100k, monkeypatch, letters):
    word = "ж" * letters
    tries = _counted_tries(cl100k, monkeypatch)
    stable, completions = cl100k.encode_with_unstable(word)
    assert len(tries) <= cl100k._longest_token + 1
    assert stable == [] and completions
    for ids in completions:
        assert cl100k.decode_bytes(ids).startswith(word.encode())
