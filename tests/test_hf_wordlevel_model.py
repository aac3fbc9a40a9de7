"""fasttok's Hugging Face ``WordLevel`` model against ``tokenizers`` 0.23.3's.

The reference is ``tokenizers.Tokenizer.from_str`` of a document holding only
the model, so the model sees the whole input as one sequence: it is one
token, the unknown token, or tokenizers' "Missing [UNK] token" error. Ids,
tokens and character offsets are compared on hypothesis text and every line
of ``testcases/lines.jsonl`` (some of them in the vocabulary), with the
unknown token in the vocabulary and not.
"""

from __future__ import annotations

import functools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import DATA, DATA_MISSING, Mismatches, missing_data_reason, read_jsonl
from fasttok.errors import FasttokError
from fasttok.models.hf_fields import model_from_json
from fasttok.models.hf_wordlevel import MissingUnkTokenError, WordLevel, wordlevel_from_json

tokenizers = pytest.importorskip("tokenizers")

LINES = DATA / "testcases" / "lines.jsonl"
WORDS = ["hello", "world", "é", "日本", "", " ", "<unk>", "a b"]


def fail(where: str, problem: str) -> Exception:
    return ValueError(f"{where}: {problem}")


def _vocab(with_unk: bool) -> dict:
    words = list(WORDS)
    if LINES.is_file():
        words += [case["text"] for case in read_jsonl(LINES)][::3]
    if not with_unk:
        words = [w for w in words if w != "<unk>"]
    return {word: i for i, word in enumerate(dict.fromkeys(words))}


@functools.lru_cache(maxsize=None)
def pair(with_unk: bool):
    spec = {"type": "WordLevel", "vocab": _vocab(with_unk), "unk_token": "<unk>"}
    ref = tokenizers.Tokenizer.from_str(json.dumps({"version": "1.0", "model": spec}))
    return ref, wordlevel_from_json(spec, "$.model", fail)


def outcomes(ref, ours, text: str):
    try:
        e = ref.encode(text)
        expected = list(zip(e.ids, e.tokens, [tuple(o) for o in e.offsets]))
    except Exception as error:  # tokenizers raises a plain Exception
        expected = ("error", str(error))
    try:
        got = ours.tokenize(text)
    except MissingUnkTokenError as error:
        got = ("error", str(error))
    return expected, got


@pytest.mark.parametrize("with_unk", [True, False])
@settings(max_examples=200, deadline=None)
@given(text=st.one_of(st.sampled_from(WORDS), st.text(st.characters(codec="utf-8"), max_size=12)))
def test_hypothesis_text_tokenizes_as_tokenizers(with_unk, text):
    expected, got = outcomes(*pair(with_unk), text)
    assert got == expected
    if expected and expected[0] != "error":
        assert pair(with_unk)[1].tokenize_ids(text) == [token_id for token_id, _, _ in expected]


@pytest.mark.skipif(DATA_MISSING or not LINES.is_file(), reason=missing_data_reason(LINES))
@pytest.mark.parametrize("with_unk", [True, False])
def test_every_test_line_tokenizes_as_tokenizers(with_unk):
    ref, ours = pair(with_unk)
    found = Mismatches("WordLevel")
    for case in read_jsonl(LINES):
        expected, got = outcomes(ref, ours, case["text"])
        found.check(None if got == expected else f"{case['text']!r}: {expected} != {got}", str(case["id"]))
    found.assert_none()


def test_missing_unknown_token_is_a_fasttok_error_with_tokenizers_message():
    with pytest.raises(FasttokError, match=r"^WordLevel error: Missing \[UNK\] token from the vocabulary$"):
        WordLevel({"a": 0}, unk_token="<unk>").tokenize_ids("b")


def test_unknown_sequence_becomes_the_unknown_token_over_all_of_it():
    assert WordLevel({"<unk>": 3}).tokenize("日本語") == [(3, "<unk>", (0, 3))]


def test_lookups_match_tokenizers():
    ref, ours = pair(True)
    assert ours.get_vocab() == ref.get_vocab(with_added_tokens=False)
    assert ours.get_vocab_size() == ref.get_vocab_size(with_added_tokens=False)
    for token_id in (0, 1, 5, 10**6):
        assert ours.id_to_token(token_id) == ref.id_to_token(token_id)
    for token in ("hello", "nothing"):
        assert ours.token_to_id(token) == ref.token_to_id(token)


@pytest.mark.parametrize("spec, where", [
    ({"type": "WordLevel", "vocab": {"a": 0}}, "$.model.unk_token"),
    ({"type": "WordLevel", "vocab": {"a": 0}, "unk_token": None}, "$.model.unk_token"),
    ({"type": "WordLevel", "unk_token": "<unk>"}, "$.model.vocab"),
    ({"type": "WordLevel", "vocab": {"a": -1}, "unk_token": "<unk>"}, "$.model.vocab"),
])
def test_fields_tokenizers_refuses_fail_at_their_json_path(spec, where):
    with pytest.raises(Exception):
        tokenizers.Tokenizer.from_str(json.dumps({"version": "1.0", "model": spec}))
    with pytest.raises(ValueError, match=f"^{where.replace('$', '[$]')}: "):
        model_from_json(spec, "$.model", fail)


def test_model_without_type_and_merges_reads_as_wordlevel_as_in_tokenizers():
    spec = {"vocab": {"a": 0, "<unk>": 1}, "unk_token": "<unk>"}
    assert type(model_from_json(spec, "$.model", fail)) is WordLevel
