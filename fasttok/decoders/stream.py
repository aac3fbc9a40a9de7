"""Streaming decoders: the bytes of ids that arrive one at a time.

Each model's ``stream_decoder()`` returns one of these (or, for SentencePiece
``.model`` files, the compiled ``SentencePieceStream``, which holds back
byte-piece runs and text a longer denormalizer rule could still match). The
pushes of a sequence, then ``flush``, add up to the model's
``decode_bytes`` of it; :class:`fasttok.StreamDecoder` turns them into text.

>>> s = TokenBytesStream({1: b"a", 2: b"b"}.__getitem__)
>>> s.push(1) + s.push(2) + s.flush()
b'ab'
"""

from __future__ import annotations

from collections.abc import Callable

from fasttok.decoders.cleanup import CLEAN_UP_BYTES, clean_up_spaces

__all__ = ["TokenBytesStream", "CleanUpStream"]


class TokenBytesStream:
    """Each id's bytes as they come: for vocabularies whose decode is the
    concatenation of the tokens' bytes (tiktoken's)."""

    __slots__ = ("push",)

    def __init__(self, token_bytes: Callable[[int], bytes]) -> None:
        self.push = token_bytes

    def flush(self) -> bytes:
        """Nothing is ever held back."""
        return b""


class CleanUpStream:
    """llama.cpp's decode, one id at a time.

    ``piece(token, first)`` gives a token's bytes at its place (the first
    one loses its leading space where the vocabulary adds one). With
    ``clean`` the clean-up of tokenization spaces runs on the joined bytes, so
    bytes it might still change (spaces, quotes, ``?!.,`` and the three bytes
    before a cut) are held back until bytes outside its rules follow.

    >>> s = CleanUpStream(lambda t, first: {1: b"Hi", 2: b" ,", 3: b" you"}[t], clean=True)
    >>> [s.push(t) for t in (1, 2, 3)], s.flush()
    ([b'', b'', b''], b'Hi, you')
    """

    __slots__ = ("_piece", "_clean", "_first", "_pending")

    def __init__(self, piece: Callable[[int, bool], bytes], clean: bool) -> None:
        self._piece = piece
        self._clean = clean
        self._first = True
        self._pending = b""

    def push(self, token: int) -> bytes:
        """The bytes that ``token`` completes (possibly none)."""
        piece = self._piece(token, self._first)
        self._first = False
        if not self._clean:
            return piece
        pending = self._pending + piece
        # cut where no clean-up rule can reach across: the byte at the cut
        # and the three before it (a quote's rule looks at up to "'re") are
        # outside the rules' bytes
        cut = len(pending) - 1
        while cut >= 3 and not CLEAN_UP_BYTES.isdisjoint(pending[cut - 3:cut + 1]):
            cut -= 1
        if cut < 3:
            self._pending = pending
            return b""
        self._pending = pending[cut:]
        return clean_up_spaces(pending[:cut])

    def flush(self) -> bytes:
        """Whatever is held back, cleaned."""
        tail, self._pending = self._pending, b""
        return clean_up_spaces(tail) if self._clean else tail
