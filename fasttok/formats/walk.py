"""What a compiled walk of a ``tokenizer.json`` configuration offers (see
:mod:`fasttok.formats.hf_walks`, which lists them).

>>> Walk().ids("text", None)
Traceback (most recent call last):
NotImplementedError
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any, Optional

from fasttok.shared.batching import ChunkedBatchJob

__all__ = ["Walk", "MIN_THREADED_TEXTS"]

#: the fewest texts a walk's batch spreads over threads: starting and
#: joining a thread costs ~90 us, the walk of a short line 1-1.5 us, so a
#: second thread pays for itself only past ~200 lines, with cores to spare
MIN_THREADED_TEXTS = 256


class Walk:
    """One configuration's stages as one compiled pass.

    ``allowed`` is the set of added-token ids matched as added tokens
    (``None``: all of them, as ``tokenizers`` matches them). Either method
    may return ``None`` for a text it does not take (the pipeline's stages
    then encode it); what it returns is exactly what the stages give.
    """

    def ids(self, text: str, allowed: Optional[frozenset]) -> Optional[list]:
        """The ids of ``text`` (no post-processor), or ``None``."""
        raise NotImplementedError

    def ids_many(self, texts: list, allowed: Optional[frozenset]) -> list:
        """:meth:`ids` of each ``str`` of ``texts``, in order, ``None`` for a
        text it declines or that is no ``str`` (the caller's to encode); a
        walk with a compiled batch call runs it. This default calls :meth:`ids`.

        >>> class Chars(Walk):
        ...     def ids(self, text, allowed):
        ...         return None if text == "?" else [ord(c) for c in text]
        >>> Chars().ids_many(["ab", "?", 1], None)
        [[97, 98], None, None]
        """
        ids = self.ids
        return [ids(text, allowed) if type(text) is str else None for text in texts]

    def ids_array(self, text: str, allowed: Optional[frozenset]) -> Optional[array]:
        """:meth:`ids` as an ``array('I')``, or ``None``; a walk whose
        compiled core fills the array itself makes no list between. This
        default copies :meth:`ids`' list.

        >>> class Chars(Walk):
        ...     def ids(self, text, allowed):
        ...         return None if text == "?" else [ord(c) for c in text]
        >>> Chars().ids_array("hi", None), Chars().ids_array("?", None)
        (array('I', [104, 105]), None)
        """
        ids = self.ids(text, allowed)
        return None if ids is None else array("I", ids)

    def encode(self, text: str, allowed: Optional[frozenset]) -> Optional[tuple]:
        """``(ids, offsets, words)`` of ``text``, or ``None``: ``ids`` an
        ``array('I')``; ``offsets`` an ``array('i')`` of ``2 * len(ids)``
        character offsets into ``text``, start and end of each token in
        turn, as ``tokenizers``' ``Encoding.offsets`` before
        post-processing; ``words`` an ``array('i')``, each token's word index
        (the index of its pre-tokenizer split, added tokens counting as
        splits), as ``Encoding.word_ids``. A token's string is the
        vocabulary's for its id; a walk whose model gives some token another
        string (Unigram's unknown pieces keep their text) adds a fourth
        item, ``{index: string}`` for those tokens."""
        raise NotImplementedError

    #: ``encode_scored(text, allowed, state, cut)`` where the walk carries
    #: the Viterbi's score into an appender's windows (see
    #: :meth:`fasttok.models._unigram.UnigramWalk.encode_scored`), or None
    encode_scored: Optional[Callable[..., Any]] = None

    def encoder(self, allowed: Optional[frozenset]) -> tuple:
        """``(call, argument)`` with ``call(text, argument)`` equal to
        ``encode(text, allowed)`` for a ``str``: what a caller encoding one
        text at a time binds once (a compiled call where the walk has one,
        with no Python frame). This default is :meth:`encode` itself.

        >>> class Chars(Walk):
        ...     def encode(self, text, allowed):
        ...         return [ord(c) for c in text]
        >>> call, argument = Chars().encoder(None)
        >>> call("hi", argument)
        [104, 105]
        """
        return self.encode, allowed

    def encode_many(self, texts: list, allowed: Optional[frozenset],
                    num_threads: Optional[int] = None) -> list:
        """:meth:`encode` of each text, in order (``None`` for a text it
        declines). A walk whose compiled core encodes many texts without the
        GIL spreads them over ``num_threads`` threads (``None``: as many as
        ``tokenizers`` would run, :func:`~fasttok.shared.batching.default_threads`);
        this default encodes them one by one in the calling thread.

        >>> class Chars(Walk):
        ...     def encode(self, text, allowed):
        ...         return None if text == "?" else [ord(c) for c in text]
        >>> Chars().encode_many(["ab", "?"], None)
        [[97, 98], None]
        """
        encode = self.encode
        return [encode(text, allowed) for text in texts]

    def batch_job(self, texts: list, allowed: Optional[frozenset], how: str,
                  num_threads: int) -> ChunkedBatchJob:
        """Chunks of ``texts`` through the walk's batch call ``how`` (one of
        :data:`~fasttok.shared.batching.BATCH_CALLS`), for ``num_threads``
        threads: what :func:`~fasttok.models.interface.run_batch` runs for a
        walk whose ``encode_offsets_many`` walks a chunk without the GIL.

        >>> class Lengths(Walk):
        ...     def encode_offsets_many(self, texts, allowed):
        ...         return [len(t) for t in texts]
        >>> job = Lengths().batch_job(["a", "bb"], None, "encode_offsets_many", 1)
        >>> job.run(); job.finish()
        [1, 2]
        """
        return ChunkedBatchJob(self, texts, allowed, how, num_threads)
