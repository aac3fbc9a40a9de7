"""fasttok's Hugging Face models against tokenizers' own, the model alone.

The reference is a ``tokenizers.Tokenizer`` built from a document holding
only the model (null normalizer, pre-tokenizer, post-processor, no added
tokens), so it hands each input whole to the model; ids, tokens and
character offsets are compared, and the ids of ``tokenize_ids`` too. Calls
that fail compare as failing (:func:`outcome`).
"""

from __future__ import annotations

import json


def fail(where: str, problem: str) -> ValueError:
    """The ``fail`` the factories get here: the JSON path first, then the problem."""
    return ValueError(f"{where}: {problem}")


def reference(model_spec: dict):
    """tokenizers with this model and nothing else around it."""
    import tokenizers

    doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
           "normalizer": None, "pre_tokenizer": None, "post_processor": None, "decoder": None,
           "model": model_spec}
    return tokenizers.Tokenizer.from_str(json.dumps(doc))


def expected(ref, text: str) -> list:
    """tokenizers' ``[(id, token, (start, end))]`` for ``text``."""
    enc = ref.encode(text, add_special_tokens=False)
    return list(zip(enc.ids, enc.tokens, enc.offsets))


def problem(ours, ref, text: str) -> str | None:
    """How ``ours`` differs from ``ref`` on ``text`` (the first tokens that
    differ), or ``None``."""
    want = expected(ref, text)
    got = ours.tokenize(text)
    if got != want:
        k = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        return (f"{text[:80]!r}: first difference at token {k}: fasttok "
                f"{got[k:k + 3]} tokenizers {want[k:k + 3]}")
    if ours.tokenize_ids(text) != [t[0] for t in want]:
        return f"{text[:80]!r}: tokenize_ids differs from tokenize"
    return None


def assert_same(pair: tuple, text: str) -> None:
    """``(ours, ref)`` agree on ``text``."""
    found = problem(*pair, text)
    assert found is None, found


def outcome(call, text: str):
    """``call(text)``, or whether it failed for a missing unknown token."""
    try:
        return call(text)
    except Exception as error:
        return f"error: {'unk_id' in str(error) or 'Missing' in str(error)}"


def assert_same_outcome(pair: tuple, text: str) -> None:
    """``(ours, ref)`` agree on ``text``, or both fail for want of an unknown token."""
    ours, ref = pair
    assert outcome(ours.tokenize, text) == outcome(lambda t: expected(ref, t), text), text
    assert outcome(ours.tokenize_ids, text) == outcome(
        lambda t: ref.encode(t, add_special_tokens=False).ids, text), text


def assert_all_agree(pair: tuple, texts: list, what: str) -> None:
    """``(ours, ref)`` agree on every text; else one failure with the number
    that differ and the first difference."""
    from conftest import Mismatches

    mismatches = Mismatches(what)
    for text in texts:
        mismatches.check(problem(*pair, text))
    mismatches.assert_none()


def corpus_words(data, limit: int) -> dict:
    """The first ``limit`` whitespace-separated words of each ``corpus/*.txt``, by file name."""
    return {path.name: path.read_text(encoding="utf-8").split()[:limit]
            for path in sorted((data / "corpus").glob("*.txt"))}


def words_problem(pair: tuple, words: list) -> str | None:
    """How ``ours.tokenize_ids`` of each word differs from tokenizers' model
    run on the same words (one pre-tokenized call), or ``None``."""
    ours, ref = pair
    encoding = ref.encode(words, is_pretokenized=True, add_special_tokens=False)
    want, word_ids = encoding.ids, encoding.word_ids     # each a new list per access
    ids = ours.tokenize_ids
    at = 0
    for k, word in enumerate(words):
        got = ids(word)
        if got != want[at:at + len(got)] or word_ids[at:at + len(got)] != [k] * len(got):
            return f"word {k} {word[:60]!r}: fasttok {got}"
        at += len(got)
    return None if at == len(want) else "tokenizers has more ids at the end"
