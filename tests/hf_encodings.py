"""Encodings made the same way by ``tokenizers`` and by fasttok's post-processing stage.

The reference is a ``tokenizers.Tokenizer`` over a WordLevel model whose
vocabulary is the words of the example, split by ``WhitespaceSplit`` (or by a
``|`` when the words hold spaces, for the offset trimming of ByteLevel): what
the model gives (``encode(..., add_special_tokens=False)`` with nothing else
configured) becomes fasttok ``Encoding``s, the first input of type 0 and the
pair of type 1 as ``tokenizers`` makes them, and fasttok runs the
post-processing. :func:`fields` lists everything an encoding says
(overflowing pieces recursively), :func:`compare` the first difference.
"""

from __future__ import annotations

import json

import tokenizers
from tokenizers import models, pre_tokenizers

from fasttok.post_processors.encoding import Encoding

UNK = "[UNK]"
FIELDS = ("ids", "type_ids", "tokens", "offsets", "attention_mask", "special_tokens_mask",
          "word_ids", "sequence_ids", "n_sequences")


def reference(words, split_on_bar: bool = False) -> tokenizers.Tokenizer:
    """A WordLevel ``tokenizers.Tokenizer`` knowing ``words`` (and ``[UNK]``)."""
    vocab = {UNK: 0}
    for w in words:
        vocab.setdefault(w, len(vocab))
    tok = tokenizers.Tokenizer(models.WordLevel(vocab, unk_token=UNK))
    tok.pre_tokenizer = (pre_tokenizers.Split("|", "removed") if split_on_bar
                         else pre_tokenizers.WhitespaceSplit())
    return tok


def text_of(words, split_on_bar: bool = False) -> str:
    return ("|" if split_on_bar else " ").join(words)


def model_output(tok: tokenizers.Tokenizer, text: str, type_id: int) -> Encoding:
    """The model's encoding of ``text`` as a fasttok ``Encoding`` (no post-processing)."""
    saved = tok.post_processor, tok.truncation, tok.padding
    tok.post_processor = None
    tok.no_truncation()
    tok.no_padding()
    try:
        e = tok.encode(text, add_special_tokens=False)
    finally:
        tok.post_processor = saved[0]
        if saved[1]:
            tok.enable_truncation(**saved[1])
        if saved[2]:
            tok.enable_padding(**saved[2])
    n = len(e.ids)
    return Encoding(list(e.ids), list(e.tokens), [tuple(o) for o in e.offsets],
                    list(e.word_ids), [type_id] * n)


def inputs(tok, a: str, b: str | None) -> tuple:
    """``(encoding, pair or None)`` as the model stage hands them to post-processing."""
    return model_output(tok, a, 0), (None if b is None else model_output(tok, b, 1))


def fields(e) -> dict:
    """Everything an encoding says, for either library."""
    out = {k: [tuple(x) for x in getattr(e, k)] if k == "offsets" else getattr(e, k)
           for k in FIELDS}
    out["len"] = len(e)
    out["overflowing"] = [fields(o) for o in e.overflowing]
    return out


def compare(ours, theirs, path: str = "encoding") -> str | None:
    """``None`` when both encodings say the same, else where they first differ."""
    if isinstance(ours, BaseException) or isinstance(theirs, BaseException):
        if isinstance(ours, ValueError) and isinstance(theirs, BaseException):
            return None
        return f"{path}: fasttok {ours!r:.300}, tokenizers {theirs!r:.300}"
    a, b = fields(ours), fields(theirs)
    return _diff(a, b, path)


def _diff(a: dict, b: dict, path: str) -> str | None:
    for k in FIELDS + ("len",):
        if a[k] != b[k]:
            return f"{path}.{k}: fasttok {a[k]}, tokenizers {b[k]}"
    if len(a["overflowing"]) != len(b["overflowing"]):
        return (f"{path}.overflowing: fasttok {len(a['overflowing'])} pieces, tokenizers "
                f"{len(b['overflowing'])}: {[o['ids'] for o in a['overflowing']]} vs "
                f"{[o['ids'] for o in b['overflowing']]}")
    for i, (x, y) in enumerate(zip(a["overflowing"], b["overflowing"])):
        found = _diff(x, y, f"{path}.overflowing[{i}]")
        if found:
            return found
    return None


def attempt(fn, *args, **kwargs):
    """``fn(...)``, or the exception it raised (``tokenizers`` panics are ``BaseException``s)."""
    try:
        return fn(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001 - compared by the caller
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return exc


def from_json(kind: str, spec):
    """A ``tokenizers`` component read from JSON the way a ``tokenizer.json`` holds it."""
    doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
           "normalizer": None, "pre_tokenizer": None, "post_processor": None, "decoder": None,
           "model": {"type": "WordLevel", "vocab": {UNK: 0}, "unk_token": UNK}}
    doc[kind] = spec
    return tokenizers.Tokenizer.from_str(json.dumps(doc))
