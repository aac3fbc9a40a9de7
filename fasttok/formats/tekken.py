"""Mistral's ``tekken.json``, run as ``mistral_common``'s Tekkenizer runs it.

A Tekkenizer is a tiktoken encoding with its special tokens put in front:
the file's ranks shifted up by the number of specials, tiktoken's regex
(Tekken's pattern has a compiled scanner, ``"tekken"``), BPE by rank. So a
``tekken.json`` is a ``byte_bpe`` vocabulary (:mod:`fasttok.formats.tiktoken`)
whose reader (:mod:`fasttok.loaders.tekken_json`) applies the Tekkenizer's
offset and truncation rules, and ``fasttok.load("tekken.json")`` returns
the usual :class:`fasttok.Encoding`.

The Tekkenizer's calls, in fasttok's terms (``tok`` a Tekkenizer, ``enc``
the Encoding of the same file):

* ``tok.encode(s, bos=False, eos=False)`` is ``enc.encode_ordinary(s)``:
  the Tekkenizer never reads special tokens in text, so ``[INST]`` or
  ``<s>`` typed by a user are plain text. ``bos=True`` is
  ``enc.encode(s, disallowed_special=(), add_special_tokens=True)`` (the
  record sets ``add_bos``); ``eos=True`` appends ``enc.vocabulary.eos_id``.
  fasttok's own default, ``enc.encode(s)``, raises on a special token's
  text as tiktoken does, and ``allowed_special="all"`` reads them as tokens
  (what the Tekkenizer's chat templates do by building ids).
* ``bos_id``, ``eos_id``, ``unk_id``, ``pad_id`` are the record's
  (``enc.vocabulary.bos_id`` ...), or ``enc.encode_single_token("<s>")``;
  ``n_words`` is ``enc.n_vocab``; ``num_special_tokens`` is
  ``len(enc.special_tokens_set)``; ``is_special(i)`` is
  ``enc.is_special_token(i)``.
* ``tok.decode(ids, special_token_policy)`` is :func:`decode`:
  ``"keep"`` writes a special as its name, which is ``enc.decode(ids)``
  (a special's name is ASCII-led, so a split character before it is
  replaced the same way whether the ordinary runs are decoded apart or
  together); ``"ignore"`` (the Tekkenizer's default) drops specials and
  decodes each run of ordinary ids between them on its own, so a character
  split by a special gives two replacement characters, as in the
  Tekkenizer, and not the character ``enc.decode`` of the filtered ids
  would give; ``"raise"`` refuses ids with a special among them.

>>> import base64, json
>>> doc = {"config": {"pattern": ".", "default_vocab_size": 258,
...                   "default_num_special_tokens": 2, "version": "v7"},
...        "special_tokens": [{"rank": 0, "token_str": "<s>", "is_control": True},
...                           {"rank": 1, "token_str": "</s>", "is_control": True}],
...        "vocab": [{"rank": i, "token_bytes": base64.b64encode(bytes([i])).decode(),
...                   "token_str": None} for i in range(256)]}
>>> from fasttok import Encoding
>>> from fasttok.loaders.tekken_json import parse_tekken_json
>>> enc = Encoding.from_vocabulary(parse_tekken_json(doc, "t.json"))
>>> enc.encode_ordinary("<s>")
[62, 117, 64]
>>> decode(enc, [0, 106, 107, 1]), decode(enc, [0, 106, 107, 1], "keep")
('hi', '<s>hi</s>')
"""

from __future__ import annotations

from itertools import groupby
from typing import Any

from fasttok.errors import FasttokError, VocabularyFileError
from fasttok.loaders.tekken_json import load_tekken_json
from fasttok.pre_tokenizers.patterns import compile_generic, scanner_for

__all__ = ["load_tekken_file", "decode", "POLICIES"]

#: the Tekkenizer's ``SpecialTokenPolicy`` values (its enum compares equal to them)
POLICIES = ("ignore", "keep", "raise")


def load_tekken_file(path: str, **options: Any) -> Any:
    """:func:`fasttok.load`'s reader for ``tekken.json`` files (no options).

    >>> load_tekken_file("tekken.json", pat_str=".")
    Traceback (most recent call last):
    TypeError: tekken.json takes no options, got pat_str
    """
    if options:
        raise TypeError(f"tekken.json takes no options, got {', '.join(options)}")
    vocab = load_tekken_json(path)
    if scanner_for(vocab.pattern) is None:  # a pattern no scanner runs must compile
        try:
            compile_generic(vocab.pattern)
        except FasttokError as exc:
            raise VocabularyFileError(path, str(exc), field="$.config.pattern") from None
    return vocab


def decode(encoding: Any, tokens: Any, special_token_policy: str = "ignore") -> str:
    """The Tekkenizer's ``decode(tokens, special_token_policy)`` on a
    ``tekken.json`` :class:`fasttok.Encoding`: specials dropped
    (``"ignore"``), written as their names (``"keep"``) or refused
    (``"raise"``, a :class:`~fasttok.errors.FasttokError`); each run of
    ordinary ids decoded on its own, invalid UTF-8 replaced.

    >>> import fasttok
    >>> enc = fasttok.load("tekken.json")                    # doctest: +SKIP
    >>> decode(enc, [1, 22177, 2], "keep")                   # doctest: +SKIP
    '<s>Hello</s>'
    """
    if special_token_policy not in POLICIES:
        raise FasttokError(f"special_token_policy {special_token_policy!r} is not one of "
                           f"{', '.join(POLICIES)}")
    out = []
    for special, run in groupby(tokens, encoding.is_special_token):
        if not special or special_token_policy == "keep":
            out.append(encoding.decode(list(run)))
        elif special_token_policy == "raise":
            raise FasttokError(f"special tokens {list(run)} among the ids; decode with "
                               "special_token_policy='ignore' or 'keep' to allow them")
    return "".join(out)
