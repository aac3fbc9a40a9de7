"""Reader for Mistral's ``tekken.json`` files (``mistral-common``'s Tekkenizer).

The file is one JSON object: ``config`` (``pattern``, tiktoken's regex;
``default_vocab_size``; ``default_num_special_tokens``; ``version``),
``vocab`` (a list of ``{"rank", "token_bytes" (base64), "token_str"}``),
optionally ``special_tokens`` (a list of ``{"rank", "token_str",
"is_control"}``) and multimodal settings (``image``, ``audio``, ...), which
a text tokenizer does not use. The rules are those of ``mistral_common``
1.13.1's ``Tekkenizer.from_file`` and ``Tekkenizer.__init__``
(``tokens/tokenizers/tekken.py``):

* ``config.version`` is one of mistral-common's tokenizer versions
  (:data:`VERSIONS`); ``config.num_vocab_tokens`` is not read.
* Special tokens come first: with ``n = default_num_special_tokens``, they
  take ids ``0 .. n-1`` and an ordinary token of rank ``r`` gets id
  ``r + n``. A file without ``special_tokens`` (or with ``null``) gets the
  Tekkenizer's twenty default ones (:data:`DEFAULT_SPECIAL_TOKENS`) -- for
  versions up to ``v7`` only; a later version must list them. The list may
  be shorter than ``n``: the rest are fillers named ``<SPECIAL_{id}>``.
  Names are distinct, fillers included, and there are at most ``n``.
* The Tekkenizer finds a special's id by its ``rank`` but decodes an id by
  its position in the list; fasttok requires the two to agree (``rank`` =
  position), so a file where they do not is an error rather than a
  tokenizer that encodes one token and decodes another.
* The ordinary vocabulary is cut to its first ``default_vocab_size - n``
  entries (``tekken_240911.json`` lists 150000 and uses 130072); the
  entries past the cut are never read. There must be that many entries.
  Each kept entry has exactly the keys ``rank``, ``token_bytes`` and
  ``token_str``, its ``rank`` is its position, the first 256 are the single
  bytes in byte order, and no two have the same bytes. ``token_str`` is not
  used (it is ``null`` for tokens that are not UTF-8).
* The vocabulary size (``n_vocab``, the Tekkenizer's ``n_words``) is
  ``default_vocab_size``.
* ``<s>``, ``</s>``, ``<unk>`` and ``<pad>``, when among the specials, are
  the record's BOS, EOS, UNK and PAD ids; ``add_bos`` is set (the
  Tekkenizer's ``bos=True``; EOS is the caller's choice).

Where fasttok is stricter than the Tekkenizer: ``token_bytes`` must be
canonical base64 (Python's ``base64.b64decode``, which the Tekkenizer uses,
skips characters outside the alphabet), a kept token may not be empty, the
cut vocabulary must hold the 256 single bytes, and every malformed part
raises :class:`~fasttok.errors.VocabularyFileError` naming the file and the
JSON path (``$.vocab[12].token_bytes``) instead of an ``AssertionError``.
Memory follows the entries the file holds: a declared size larger than the
list is an error before anything is built.

>>> import base64
>>> doc = {"config": {"pattern": ".", "default_vocab_size": 258, "default_num_special_tokens": 1,
...                   "version": "v3"},
...        "special_tokens": [{"rank": 0, "token_str": "<s>", "is_control": True}],
...        "vocab": [{"rank": i, "token_bytes": base64.b64encode(bytes([i])).decode(),
...                   "token_str": None} for i in range(256)]
...                 + [{"rank": 256, "token_bytes": "aGk=", "token_str": "hi"}]}
>>> v = parse_tekken_json(doc, "t.json")
>>> v.tokens[257], v.special_tokens["<s>"], v.n_vocab
(b'hi', 0, 258)
"""

from __future__ import annotations

import binascii
import os
from typing import Any, Optional

from fasttok.errors import VocabularyError, VocabularyFileError
from fasttok.loaders.json_document import parse_json_document
from fasttok.loaders.sniff import looks_like_tekken_json
from fasttok.vocab import Vocabulary

__all__ = ["load_tekken_json", "parse_tekken_json", "looks_like_tekken_json",
           "DEFAULT_SPECIAL_TOKENS", "VERSIONS", "FILLER"]

#: the Tekkenizer's special tokens for a file that lists none (its
#: ``DEPRECATED_SPECIAL_TOKENS``), at ids 0, 1, 2, ...
DEFAULT_SPECIAL_TOKENS = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
    "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]")

#: mistral-common's ``TokenizerVersion`` values, oldest first
VERSIONS = ("v1", "v2", "v3", "v7", "v11", "v13", "v15")

#: the name of a special token the file does not list
FILLER = "<SPECIAL_{id}>"

_ENTRY_KEYS = {"rank", "token_bytes", "token_str"}
_ROLES = (("bos_id", "<s>"), ("eos_id", "</s>"), ("unk_id", "<unk>"), ("pad_id", "<pad>"))


def _fail(source: str, where: str, problem: str) -> VocabularyFileError:
    return VocabularyFileError(source, problem, field=where)


def _get(source: str, obj: Any, key: str, where: str, kind: type, default: Any = ...) -> Any:
    if key not in obj:
        if default is ...:
            raise _fail(source, f"{where}.{key}", "missing")
        return default
    value = obj[key]
    if value is None and default is None:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _fail(source, f"{where}.{key}", f"expected {kind.__name__}, found "
                                              f"{type(value).__name__}")
    return value


def _special_tokens(source: str, doc: dict, version: str, count: int) -> dict:
    """``{name: id}`` of the ``count`` special tokens, fillers included."""
    listed = _get(source, doc, "special_tokens", "$", list, None)
    if listed is None:
        if VERSIONS.index(version) > VERSIONS.index("v7"):
            raise _fail(source, "$.special_tokens", f"missing; a version {version} file must "
                                                    "list its special tokens")
        names = list(DEFAULT_SPECIAL_TOKENS)
    else:
        names = []
        for i, entry in enumerate(listed):
            at = f"$.special_tokens[{i}]"
            if not isinstance(entry, dict):
                raise _fail(source, at, f"expected an object, found {type(entry).__name__}")
            rank = _get(source, entry, "rank", at, int)
            if rank != i:
                raise _fail(source, f"{at}.rank", f"rank {rank} at position {i}: the Tekkenizer "
                                                  "encodes a special by its rank and decodes it "
                                                  "by its position, so they must be equal")
            _get(source, entry, "is_control", at, bool, None)
            names.append(_get(source, entry, "token_str", at, str))
    if len(names) > count:
        raise _fail(source, "$.special_tokens", f"{len(names)} special tokens, more than "
                                                f"config.default_num_special_tokens ({count})")
    names += [FILLER.format(id=i) for i in range(len(names), count)]
    ids: dict = {}
    for i, text in enumerate(names):
        if text in ids:
            listed_here = listed is not None and i < len(listed)
            where = f"$.special_tokens[{i}]" if listed_here else "$.special_tokens"
            raise _fail(source, where, f"special token {text!r} is also id {ids[text]}")
        ids[text] = i
    return ids


def _ordinary_tokens(source: str, vocab: list, count: int) -> list:
    """The bytes of the first ``count`` entries of ``$.vocab``, by rank."""
    a2b = binascii.a2b_base64
    tokens = []
    first: dict = {}
    for i in range(count):
        entry = vocab[i]
        # the JSON path is spelled out only for an error: building it for
        # each of 130k entries would be a good part of the load
        if not isinstance(entry, dict) or entry.keys() != _ENTRY_KEYS:
            at = f"$.vocab[{i}]"
            if not isinstance(entry, dict):
                raise _fail(source, at, f"expected an object, found {type(entry).__name__}")
            raise _fail(source, at, f"keys are {sorted(entry)}; a vocabulary entry has exactly "
                                    f"{sorted(_ENTRY_KEYS)}")
        rank = entry["rank"]
        if rank != i or type(rank) is not int:
            problem = (f"rank {rank!r} at position {i}: ranks are the entries' positions, "
                       "0, 1, 2, ...")
            if type(rank) is int and 0 <= rank < i:
                problem += f" (rank {rank} is $.vocab[{rank}] already)"
            raise _fail(source, f"$.vocab[{i}].rank", problem)
        encoded = entry["token_bytes"]
        try:
            token = a2b(encoded, strict_mode=True)
        except (binascii.Error, ValueError, TypeError) as exc:
            raise _fail(source, f"$.vocab[{i}].token_bytes",
                        f"not base64: {str(encoded)[:40]!r} ({exc})") from None
        if i < 256 and token != bytes([i]):
            raise _fail(source, f"$.vocab[{i}].token_bytes",
                        f"{token!r}; the first 256 tokens are the single bytes in order")
        if not token:
            raise _fail(source, f"$.vocab[{i}].token_bytes", "empty token")
        if token in first:
            raise _fail(source, f"$.vocab[{i}].token_bytes",
                        f"{token!r} is $.vocab[{first[token]}] already")
        first[token] = i
        tokens.append(token)
    return tokens


def parse_tekken_json(doc: Any, source: str, *, name: Optional[str] = None) -> Vocabulary:
    """The vocabulary record of a parsed ``tekken.json`` document (``source``,
    the file, starts error messages; ``name`` names the record, default
    ``source``).

    >>> parse_tekken_json({"config": {"version": "v99"}}, "x.json")
    Traceback (most recent call last):
    fasttok.errors.VocabularyFileError: x.json: field '$.config.version': unknown version 'v99'; mistral-common's are v1, v2, v3, v7, v11, v13, v15
    """
    if not isinstance(doc, dict):
        raise _fail(source, "$", f"expected an object, found {type(doc).__name__}")
    config = _get(source, doc, "config", "$", dict)
    version = _get(source, config, "version", "$.config", str)
    if version not in VERSIONS:
        raise _fail(source, "$.config.version", f"unknown version {version!r}; mistral-common's "
                                                f"are {', '.join(VERSIONS)}")
    pattern = _get(source, config, "pattern", "$.config", str)
    vocab_size = _get(source, config, "default_vocab_size", "$.config", int)
    n_special = _get(source, config, "default_num_special_tokens", "$.config", int)
    vocab = _get(source, doc, "vocab", "$", list)
    if n_special < 0:
        raise _fail(source, "$.config.default_num_special_tokens", f"{n_special} is negative")
    inner = vocab_size - n_special
    if not 256 <= inner <= len(vocab):
        raise _fail(source, "$.config.default_vocab_size",
                    f"{vocab_size} minus {n_special} special tokens leaves {inner} ordinary "
                    f"tokens; the file lists {len(vocab)} and the 256 single bytes are needed")
    specials = _special_tokens(source, doc, version, n_special)
    tokens = _ordinary_tokens(source, vocab, inner)
    roles = {field: specials[text] for field, text in _ROLES if text in specials}
    try:
        return Vocabulary(
            name=name or source, model="byte_bpe", tokens=(None,) * n_special + tuple(tokens),
            special_tokens=specials, pattern=pattern, add_bos="bos_id" in roles,
            explicit_n_vocab=vocab_size, source=source, **roles).validate()
    except VocabularyError as exc:
        raise VocabularyFileError(source, str(exc)) from None


def load_tekken_json(path: str) -> Vocabulary:
    """Read a ``tekken.json`` file; the record is named as the Tekkenizer
    names it (the file name without ``.json``).

    >>> load_tekken_json("/nonexistent/tekken.json")
    Traceback (most recent call last):
    FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/tekken.json'
    """
    path = os.fspath(path)
    with open(path, "rb") as f:
        data = f.read()
    return parse_tekken_json(parse_json_document(data, path), path, name=os.path.basename(path).replace(".json", ""))
