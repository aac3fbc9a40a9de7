"""Hugging Face ``tokenizers``' ``WordLevel`` model (0.23.3): the whole
sequence is one token, or the unknown token, or an error when the unknown
token is not in the vocabulary either. One dictionary lookup per sequence,
which compiled code would not make faster.

>>> WordLevel({"hello": 0, "<unk>": 1}, unk_token="<unk>").tokenize("héllo")
[(1, '<unk>', (0, 5))]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Optional

from fasttok.errors import FasttokError
from fasttok.models.hf_bpe import vocab_from_json
from fasttok.shared.json_fields import Fields

__all__ = ["WordLevel", "MissingUnkTokenError", "wordlevel_from_json"]


class MissingUnkTokenError(FasttokError):
    """A WordLevel model met a sequence that is not in its vocabulary, and
    its ``unk_token`` is not in the vocabulary either (tokenizers'
    ``MissingUnkToken``): add the unknown token to the vocabulary."""


class WordLevel:
    """A ``tokenizers`` WordLevel model: ``vocab`` maps token strings to ids;
    ``unk_token`` (tokenizers' default ``"<unk>"``) stands for any other sequence.

    ``never``: ids no word matches, so such a word is unknown (the special
    added tokens, for fasttok's Encoding).

    >>> WordLevel({"a": 0}).tokenize("b")
    Traceback (most recent call last):
    fasttok.models.hf_wordlevel.MissingUnkTokenError: WordLevel error: Missing [UNK] token from the vocabulary
    >>> WordLevel({"<unk>": 0, "<s>": 1}, never=frozenset({1})).tokenize("<s>")
    [(0, '<unk>', (0, 3))]
    """

    def __init__(self, vocab: Mapping, unk_token: str = "<unk>", never: frozenset = frozenset()):
        self._vocab = dict(vocab)
        # what words match: the vocabulary less the never ids
        self._words = {t: i for t, i in self._vocab.items() if i not in never} if never \
            else self._vocab
        self.unk_token = unk_token
        self._id_to_token: dict = {}
        for token, token_id in sorted(self._vocab.items(), key=lambda item: item[1]):
            self._id_to_token.setdefault(token_id, token)

    def _lookup(self, sequence: str) -> tuple:
        token_id = self._words.get(sequence)
        if token_id is not None:
            return token_id, sequence
        token_id = self._vocab.get(self.unk_token)
        if token_id is None:
            raise MissingUnkTokenError("WordLevel error: Missing [UNK] token from the vocabulary")
        return token_id, self.unk_token

    def tokenize(self, sequence: str) -> list:
        """``[(id, token, (0, len(sequence)))]``, or ``[]`` for an empty sequence
        (tokenizers' pipeline never hands the model one).

        >>> WordLevel({"a": 0}).tokenize("a")
        [(0, 'a', (0, 1))]
        """
        if not sequence:
            return []
        token_id, token = self._lookup(sequence)
        return [(token_id, token, (0, len(sequence)))]

    def tokenize_ids(self, sequence: str) -> list:
        """The id of :meth:`tokenize`, in a list.

        >>> WordLevel({"a": 0, "<unk>": 1}).tokenize_ids("zz")
        [1]
        """
        if not sequence:
            return []
        return [self._lookup(sequence)[0]]

    def token_to_id(self, token: str) -> Optional[int]:
        """The id of ``token``, or ``None``.

        >>> WordLevel({"a": 0}).token_to_id("a")
        0
        """
        return self._vocab.get(token)

    def id_to_token(self, id: int) -> Optional[str]:
        """The token of ``id``, or ``None``.

        >>> WordLevel({"a": 0}).id_to_token(1) is None
        True
        """
        return self._id_to_token.get(id)

    def get_vocab(self) -> dict:
        """The vocabulary, token string to id.

        >>> WordLevel({"a": 0}).get_vocab()
        {'a': 0}
        """
        return dict(self._vocab)

    def get_vocab_size(self) -> int:
        """How many entries the vocabulary has.

        >>> WordLevel({"a": 0, "b": 3}).get_vocab_size()
        2
        """
        return len(self._vocab)


def wordlevel_from_json(spec: dict, where: str, fail, never: frozenset = frozenset()) -> WordLevel:
    """The WordLevel model of a ``tokenizer.json`` ``model`` object: ``vocab``
    and ``unk_token`` (a string) are both required, as tokenizers reads them.

    >>> def fail(where, problem):
    ...     return ValueError(f"{where}: {problem}")
    >>> wordlevel_from_json({"type": "WordLevel", "vocab": {"a": 0}}, "$.model", fail)
    Traceback (most recent call last):
    ValueError: $.model.unk_token: missing field
    """
    vocab = vocab_from_json(spec, where, fail)
    return WordLevel(vocab, unk_token=Fields(spec, where, fail).str("unk_token"), never=never)
