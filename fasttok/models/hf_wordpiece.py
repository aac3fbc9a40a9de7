"""Hugging Face tokenizers' ``WordPiece`` model (a ``tokenizer.json`` ``model`` of that type).

tokenizers cuts one word (already normalized and pre-tokenized) greedily,
longest match first: from the word's start any token may match, after it
only tokens that start with ``continuing_subword_prefix`` (matched without
it). If some position has no match, or the word has more than
``max_input_chars_per_word`` characters, the whole word is ``unk_token``.

The match is :class:`fasttok.models._wordpiece.WordPieceModel`'s linear-time
longest match. Its automaton holds each token twice: ``"\\xc0" + token`` for
the start of a word, and the part after the prefix of each prefixed token
for the rest; the word is matched as ``"\\xc0" + word``. No UTF-8 text
holds the byte 0xC0, so a word-start text can only match at the start and a
continuation never there. (Of the bytes UTF-8 never uses, 0xC0 gave the
fastest matching: 200k words of en.txt with all-MiniLM-L6-v2 took 0.125 s
against 0.151 s behind 0xFF, whose automaton lays out in 1.2M units instead
of 0.9M, and 0.181 s behind the two bytes C0 80.) One ``tokenize_ids`` call a
word from Python takes 0.7 us a word of en.txt, 2.9x less than tokenizers'
model run on the same words in one pre-tokenized call
(``bench/hf_models_speed.py``).

>>> m = wordpiece_from_json({"type": "WordPiece", "unk_token": "[UNK]",
...     "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
...     "vocab": {"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3}}, "$.model", ValueError)
>>> m.tokenize("unaffable")
[(1, 'un', (0, 2)), (2, '##aff', (2, 5)), (3, '##able', (5, 9))]
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Optional

from fasttok.errors import FasttokError
from fasttok.models.hf_fields import is_int, model_object
from fasttok.shared._json_reader import PackedVocab
from fasttok.shared.built_once import built_once
from fasttok.shared.json_fields import all_ints

if TYPE_CHECKING:
    from fasttok.models._wordpiece import CodePointRules, WordPieceModel

_START = b"\xc0"      # never in UTF-8: marks the texts that match at a word's start


class WordPiece:
    """A WordPiece model over ``vocab`` (``{token: id}``).

    ``never``: ids no word or subword matches (the special added tokens,
    for fasttok's Encoding: ``[CLS]`` in text is not the ``[CLS]`` id); the
    unknown token still stands for a word that cannot be cut.

    >>> m = WordPiece({"[UNK]": 0, "ba": 1, "##na": 2}, max_input_chars_per_word=6)
    >>> m.tokenize_ids("banana"), m.tokenize_ids("nanana"), m.tokenize_ids("bananana")
    ([1, 2, 2], [0], [0])
    >>> WordPiece({"[UNK]": 0, "[CLS]": 1}, never=frozenset({1})).tokenize_ids("[CLS]")
    [0]
    """

    def __init__(self, vocab: Mapping, unk_token: str = "[UNK]",
                 continuing_subword_prefix: str = "##", max_input_chars_per_word: int = 100,
                 never: frozenset = frozenset()):
        # a PackedVocab (of fasttok's tokenizer.json reader) answers lookups
        # as it is: its dict is made only if asked for (vocab)
        if type(vocab) is PackedVocab:
            self._entries = vocab
        else:
            self.vocab = self._entries = dict(vocab)
        self.unk_token = unk_token
        self.continuing_subword_prefix = continuing_subword_prefix
        self.max_input_chars_per_word = max_input_chars_per_word
        self._never = frozenset(never)
        self._unk_id = self._entries.get(unk_token)

    @functools.cached_property
    def vocab(self) -> dict:
        """``{token: id}`` (made on first use from a packed vocabulary).

        >>> WordPiece({"[UNK]": 0, "a": 1}).vocab
        {'[UNK]': 0, 'a': 1}
        """
        return self._entries.to_dict()

    @built_once
    def _core(self) -> WordPieceModel:
        # Built on first use (all-MiniLM-L6-v2: ~11 ms of a load that the
        # first encode pays anyway). The automaton's texts: every token at a
        # word's start (the empty one never matches there), and the part
        # after the prefix of each prefixed token; per text, its token's id
        # and its token (the characters of the word it covers are made for
        # tokenize), kept before the core is published. The compiled module
        # is imported here: a load that never encodes needs none of it
        from fasttok.models._wordpiece import WordPieceModel, wordpiece_texts

        texts, ids, self._text_entries, self._rests = wordpiece_texts(
            self._entries, self.continuing_subword_prefix, self._never, _START)
        self._unk_text = None
        if self._unk_id is not None:
            self._unk_text = len(texts)
            texts.append(None)
            ids.append(self._unk_id)
        self._ids = ids
        return WordPieceModel(texts, self._unk_text, ids=ids, word_start=_START,
                              max_word_chars=self.max_input_chars_per_word)

    @property
    def texts_by_id(self) -> Optional[tuple]:
        """The token strings by id when a packed vocabulary's ids are its
        entries' places (an Encoding spells its tokens from them), else ``None``.

        >>> WordPiece({"a": 0}).texts_by_id is None
        True
        """
        entries = self._entries
        return entries.texts() if type(entries) is PackedVocab and entries.in_order else None

    # made on first use: a file whose walk encodes (BERT's) never asks for them
    @functools.cached_property
    def _values(self) -> list:
        # per text: its token, from the texts' places in the vocabulary
        # (made with the core, built first)
        self._core
        entries = self._entries
        names = entries.texts() if type(entries) is PackedVocab else list(entries)
        return [names[e] for e in self._text_entries]

    @functools.cached_property
    def _tokens(self) -> dict:
        return {i: token for token, i in self.vocab.items()}

    @functools.cached_property
    def _widths(self) -> list:
        # per text: the characters of the word it covers
        widths = list(map(len, self._values))
        cut = len(self.continuing_subword_prefix)
        for text in self._rests:
            widths[text] -= cut
        return widths

    def _unk(self) -> int:
        if self._unk_id is None:
            raise FasttokError("WordPiece error: Missing [UNK] token from the vocabulary")
        return self._unk_id

    def tokenize(self, sequence: str) -> list:
        """``[(id, token, (start, end))]``, offsets in characters of the word ``sequence``.

        >>> WordPiece({"[UNK]": 0, "a": 1, "##b": 2}).tokenize("abb")
        [(1, 'a', (0, 1)), (2, '##b', (1, 2)), (2, '##b', (2, 3))]
        """
        if not sequence:
            return []
        if len(sequence) <= self.max_input_chars_per_word:
            core = self._core  # built before its texts are read
            found = core.match_word_texts(_START + sequence.encode("utf-8"))
            if found and found[0] != self._unk_text:
                out, at = [], 0
                widths = self._widths
                for text in found:
                    width = widths[text]
                    out.append((self._ids[text], self._values[text], (at, at + width)))
                    at += width
                return out
        return [(self._unk(), self.unk_token, (0, len(sequence)))]

    def tokenize_ids(self, sequence: str) -> list:
        """The ids of :meth:`tokenize` alone.

        >>> WordPiece({"[UNK]": 0, "a": 1, "##b": 2}).tokenize_ids("abc")
        [0]
        """
        if not sequence:
            return []
        if len(sequence) > self.max_input_chars_per_word:
            return [self._unk()]
        return self._core.match_word(_START + sequence.encode("utf-8")) or [self._unk()]

    def text_ids(self, text: str, rules: CodePointRules, cuts: list | None = None,
                 offsets: bool = False, words: bool = False) -> list | tuple | None:
        """The ids of the words ``rules`` makes of ``text`` (normalizer and
        pre-tokenizer in one pass over it; see
        :class:`~fasttok.models._wordpiece.CodePointRules`), or ``None`` when
        ``text`` holds a code point ``rules`` leaves to the stages themselves.
        ``cuts``: the added tokens' matches, ``[(id or None, start, end)]``
        covering ``text``; ``offsets``: ``(ids, offsets, words)`` arrays
        instead; ``words``: that and the words' UTF-8, a pair (see
        :meth:`~fasttok.models._wordpiece.WordPieceModel.encode_with`).

        >>> from fasttok.models._wordpiece import APPEND, SPACE, CodePointRules
        >>> rules = CodePointRules(lambda cps: [(SPACE if cp == 32 else APPEND, cp) for cp in cps])
        >>> m = WordPiece({"[UNK]": 0, "a": 1, "##b": 2})
        >>> m.text_ids("ab a c", rules)
        [1, 2, 1, 0]
        >>> m.text_ids("ab c", rules, offsets=True)
        (array('I', [1, 2, 0]), array('i', [0, 1, 1, 2, 3, 4]), array('i', [0, 0, 1]))
        """
        if self._unk_id is None:
            return None  # a word it cannot cut must raise, as tokenize_ids does
        return self._core.encode_with(text, rules, cuts, offsets, words)

    def text_walk(self) -> Callable | None:
        """:meth:`text_ids` as the compiled function itself, one Python call
        less a text (a tenth of a short line's time), or ``None`` when the
        vocabulary lacks the unknown token.

        >>> from fasttok.models._wordpiece import APPEND, CodePointRules
        >>> walk = WordPiece({"[UNK]": 0, "a": 1}).text_walk()
        >>> walk("a", CodePointRules(lambda cps: [(APPEND, cp) for cp in cps]))
        [1]
        >>> WordPiece({"a": 1}).text_walk() is None
        True
        """
        return None if self._unk_id is None else self._core.encode_with

    def walk_model(self) -> WordPieceModel | None:
        """The compiled model :meth:`text_walk` is a method of, or ``None``
        when the vocabulary lacks the unknown token.

        >>> m = WordPiece({"[UNK]": 0, "a": 1})
        >>> m.walk_model().encode_with == m.text_walk(), WordPiece({"a": 1}).walk_model()
        (True, None)
        """
        return None if self._unk_id is None else self._core

    def texts_walk(self) -> Callable | None:
        """:meth:`text_walk` with offsets (and no cuts) of each of a list of
        texts, with the GIL released once for them all, as the compiled
        function itself; ``None`` when the vocabulary lacks the unknown token.

        >>> from fasttok.models._wordpiece import APPEND, CodePointRules
        >>> walk = WordPiece({"[UNK]": 0, "a": 1}).texts_walk()
        >>> [list(found[0]) for found in walk(["a", "b"], CodePointRules(
        ...     lambda cps: [(APPEND, cp) for cp in cps]))]
        [[1], [0]]
        """
        return None if self._unk_id is None else self._core.encode_offsets_many_with

    def texts_ids(self, texts: list, rules: CodePointRules) -> list:
        """:meth:`text_ids` of each text, in one compiled call.

        >>> from fasttok.models._wordpiece import APPEND, CodePointRules
        >>> WordPiece({"[UNK]": 0, "a": 1}).texts_ids(["a", "b"], CodePointRules(
        ...     lambda cps: [(APPEND, cp) for cp in cps]))
        [[1], [0]]
        """
        if self._unk_id is None:
            return [None] * len(texts)
        return self._core.encode_many_with(texts, rules)

    def token_to_id(self, token: str) -> int | None:
        """The id of ``token``, or ``None``.

        >>> WordPiece({"a": 5}).token_to_id("a")
        5
        """
        return self._entries.get(token)

    def id_to_token(self, id: int) -> str | None:
        """The token of ``id``, or ``None``.

        >>> WordPiece({"a": 5}).id_to_token(5), WordPiece({"a": 5}).id_to_token(0)
        ('a', None)
        """
        return self._tokens.get(id)

    def get_vocab(self) -> dict:
        """``{token: id}``.

        >>> WordPiece({"a": 5}).get_vocab()
        {'a': 5}
        """
        return dict(self.vocab)

    def get_vocab_size(self) -> int:
        """The number of tokens, as tokenizers counts them (not the largest id + 1).

        >>> WordPiece({"a": 5, "b": 5}).get_vocab_size()
        2
        """
        return len(self._entries)


def wordpiece_from_json(spec: dict | None, where: str, fail,
                        never: frozenset = frozenset()) -> WordPiece | None:
    """The :class:`WordPiece` of a ``tokenizer.json`` model object ``spec`` at JSON path ``where``.

    ``fail(where, problem)`` makes the exception raised for a bad field; every
    field is required, as tokenizers requires them.

    >>> wordpiece_from_json({"vocab": {}, "unk_token": "[UNK]"}, "$.model",
    ...                     lambda w, p: ValueError(f"{w}: {p}"))
    Traceback (most recent call last):
    ...
    ValueError: $.model.continuing_subword_prefix: missing (a string, such as "##")
    """
    if model_object(spec, where, fail, "WordPiece") is None:
        return None
    for field, what in (("unk_token", "a string, such as \"[UNK]\""),
                        ("continuing_subword_prefix", "a string, such as \"##\""),
                        ("max_input_chars_per_word", "an integer >= 0, such as 100"),
                        ("vocab", "an object {token: id}")):
        if field not in spec:
            raise fail(f"{where}.{field}", f"missing ({what})")
    for field in ("unk_token", "continuing_subword_prefix"):
        if not isinstance(spec[field], str):
            raise fail(f"{where}.{field}", "expected a string")
    limit = spec["max_input_chars_per_word"]
    if not is_int(limit) or limit < 0:
        raise fail(f"{where}.max_input_chars_per_word", "expected an integer >= 0")
    vocab = spec["vocab"]
    if type(vocab) is PackedVocab:
        # fasttok's reader packs a vocabulary only when its ids are 0..2**32-2
        return WordPiece(vocab, spec["unk_token"], spec["continuing_subword_prefix"], limit, never)
    if not isinstance(vocab, dict):
        raise fail(f"{where}.vocab", "expected an object {token: id}")
    if not all_ints(vocab.values(), 1 << 32):
        for token, i in vocab.items():
            if not is_int(i) or not 0 <= i < 1 << 32:
                raise fail(f"{where}.vocab[{token!r}]", "expected a token id (an integer from 0 "
                                                       "to 2**32 - 1)")
    return WordPiece(vocab, spec["unk_token"], spec["continuing_subword_prefix"], limit, never)
