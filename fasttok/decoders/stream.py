"""Streaming decoders: the bytes of ids that arrive one at a time.

A model's ``stream_decoder()`` returns one of these for llama.cpp's decode
(:class:`CleanUpStream`); a model whose decode joins its tokens' bytes
takes the model base's ``TokenBytesStream``, SentencePiece ``.model`` files
the compiled ``SentencePieceStream`` (which holds back byte-piece runs and
text a longer denormalizer rule could still match). The pushes of a
sequence, then ``flush``, add up to the model's ``decode_bytes`` of it;
:class:`fasttok.StreamDecoder` turns them into text. Every push checks its
id as ``decode`` does (:func:`token_int`, then a ``KeyError`` for an id no
token has).

Each push gives every character no later id can change; what a rule may
hold back at worst (``bench/stream_holdback.py`` measures it on the shared
vocabularies; ``tests/test_decode_stream_holdback.py`` checks it):

* bytes joined (tiktoken, byte-level GGUF and ``tokenizer.json``, tekken)
  and sentencepiece's byte pieces: an incomplete UTF-8 character, at most
  three bytes (``StreamDecoder``'s UTF-8 decoder holds them);
* ``▁`` (``.model``, GGUF llama/t5): nothing; the first piece's leading
  space is dropped, not held, and a ``.model`` denormalizer holds text a
  longer rule could still match (and trailing spaces when it removes extra
  whitespace);
* WordPiece ``##`` (GGUF bert): nothing; the joining space is part of the
  next word's piece, given with it;
* llama.cpp's clean-up of spaces (:class:`CleanUpStream` with ``clean``):
  at most the last four bytes (``"  ' "``, whose spaces a following ``s``
  deletes), three bytes of text beyond what is given;
* ``tokenizer.json``: tokenizers' ``DecodeStream`` rule (text ending in
  U+FFFD), and with a ByteFallback stage the trailing run of byte tokens,
  which a later byte token could turn into U+FFFDs (any length: the run is
  one piece of text).

>>> s = CleanUpStream(lambda t, first: {1: b"a", 2: b" b"}[t], clean=False)
>>> s.push(1) + s.push(2) + s.flush()
b'a b'
"""

from __future__ import annotations

import operator
from collections.abc import Callable

from fasttok.decoders.cleanup import SpaceCleaner

__all__ = ["CleanUpStream", "token_int"]


def token_int(token: object) -> int:
    """``token`` as a Python int: any integer (``bool``, numpy's) is one; any
    other type is a ``TypeError``, as the compiled cores treat ids.

    >>> token_int(7), token_int(True)
    (7, 1)
    >>> token_int(7.0)
    Traceback (most recent call last):
    TypeError: a token id is an int, not float
    """
    try:
        return operator.index(token)
    except TypeError:
        raise TypeError(f"a token id is an int, not {type(token).__name__}") from None


class CleanUpStream:
    """llama.cpp's decode, one id at a time.

    ``piece(token, first)`` gives a token's bytes at its place (the first
    one loses its leading space where the vocabulary adds one). With
    ``clean`` the clean-up of tokenization spaces runs on the joined bytes
    through a :class:`~fasttok.decoders.cleanup.SpaceCleaner`, which holds
    back only the few bytes a later id could still delete (a trailing space
    that ``,`` could follow, ``" '"`` that ``s`` could follow).

    >>> s = CleanUpStream(lambda t, first: {1: b"Hi", 2: b" ,", 3: b" you"}[t], clean=True)
    >>> [s.push(t) for t in (1, 2, 3)], s.flush()
    ([b'Hi', b',', b' you'], b'')
    """

    __slots__ = ("_piece", "_cleaner", "_first")

    def __init__(self, piece: Callable[[int, bool], bytes], clean: bool) -> None:
        self._piece = piece
        self._cleaner = SpaceCleaner() if clean else None
        self._first = True

    def push(self, token: int) -> bytes:
        """The bytes that ``token`` settles (possibly none)."""
        piece = self._piece(token, self._first)
        self._first = False
        return piece if self._cleaner is None else self._cleaner.feed(piece)

    def flush(self) -> bytes:
        """Whatever is held back, cleaned."""
        return b"" if self._cleaner is None else self._cleaner.feed(b"", final=True)
