"""What :class:`fasttok.Encoding` calls on a model: the declared interface.

Every format's model offers all of :class:`Model` (the conformance test
holds each one to it); a method a model cannot serve raises
:class:`~fasttok.errors.FasttokError` saying why, never ``AttributeError``.
``allowed`` is a mask over :attr:`Model.special_order` (one byte per special
token, 1 = matched as the special) or ``None`` for ordinary text. Batches and
flat buffers are the model's own calls so each model keeps its compiled
path; :func:`run_batch` runs them on threads.

A model derives from :class:`ModelBase` and writes only what it must:

* required (:data:`REQUIRED_METHODS`, :data:`REQUIRED_ATTRIBUTES`):
  ``encode``, ``token_bytes``, ``find_special``, ``find_token``,
  ``encode_bytes_piece``, ``token_byte_values``; ``special_order``,
  ``post_processor``;
* defaults, written once in the base: ``tiktoken_pieces`` (False),
  ``windows_exact`` (True), ``scored_windows`` (None), ``cuts_inside_words`` (True),
  ``encode_ordinary`` (``encode(text, None)``), ``encoder`` (``encode``
  itself, with its mask), ``count`` (a length), ``encode_with_offsets``
  (each token's bytes where they spell the text),
  ``encode_many``, ``encode_many_flat``, ``count_many``, ``encode_to_array``
  (text by text), ``batch_job`` (chunks for threads), ``decode_bytes``
  (the tokens' bytes joined), ``decode_with_offsets`` (their running sum),
  ``stream_decoder`` (each id's bytes), and ``sample`` and
  ``encode_as_pieces`` refused (named by the model's ``label`` and
  ``kind``).

A model overrides a default where it is faster (a compiled batch) or its
rule differs (a decode that cleans up spaces overrides the three decoding
defaults). An object that does not derive from :class:`ModelBase` (a
plugin's) offers every member itself; :func:`missing_members` says what
either kind lacks.

>>> from fasttok.formats.tiktoken import build_byte_bpe
>>> from fasttok.vocab import Vocabulary
>>> model = build_byte_bpe(Vocabulary(name="b", model="byte_bpe", pattern=".",
...                                   tokens=tuple(bytes([i]) for i in range(256))))
>>> isinstance(model, ModelBase), missing_members(model)
(True, [])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Optional, Protocol, runtime_checkable

from fasttok.errors import FasttokError
from fasttok.models._model_base import REQUIRED_ATTRIBUTES, REQUIRED_METHODS, ModelBase
from fasttok.shared.batching import default_threads, on_threads

__all__ = ["Model", "ModelBase", "BatchJob", "StreamPieces", "REQUIRED_METHODS",
           "REQUIRED_ATTRIBUTES", "MEMBERS", "missing_members", "run_batch", "spans_in"]


@runtime_checkable
class StreamPieces(Protocol):
    """Bytes of ids that arrive one at a time; ``push`` returns the bytes no
    later id can change, ``flush`` the rest at the end."""

    def push(self, token: int) -> bytes: ...

    def flush(self) -> bytes: ...


@runtime_checkable
class BatchJob(Protocol):
    """One batch split over threads: ``run`` in the calling thread, ``work``
    in each helper, then ``finish`` for the result."""

    def run(self) -> None: ...

    def work(self) -> None: ...

    def finish(self) -> Any: ...


def run_batch(model: Any, texts: list, allowed: Any, how: str, num_threads: Optional[int],
              min_texts: int = 0) -> Any:
    """``model.<how>(texts, allowed)``, the batch call ``how`` names, run as
    ``model.batch_job(texts, allowed, how, num_threads)`` on ``num_threads``
    threads (``None``: :func:`~fasttok.shared.batching.default_threads`; the
    calling thread one of them: plain threads, as a thread pool cost a
    millisecond or more to start); in the calling thread alone for
    one thread or fewer than ``min_texts`` texts (or two a thread), where
    starting threads costs more than they save.

    >>> class Lengths(ModelBase):
    ...     def count_many(self, texts, allowed):
    ...         return [len(t) for t in texts]
    >>> run_batch(Lengths(), ["a", "bb"] * 40, None, "count_many", 2)[:3]
    [1, 2, 1]
    """
    if num_threads is None:
        num_threads = default_threads()
    if num_threads <= 1 or len(texts) < max(2 * num_threads, min_texts):
        return getattr(model, how)(texts, allowed)
    job = model.batch_job(texts, allowed, how, num_threads)
    on_threads(job.run, job.work, num_threads)
    return job.finish()


def spans_in(model: Any, text: str, allowed: Optional[bytes], unit: str,
             add_special_tokens: bool = False, flat: bool = False) -> tuple:
    """``(ids, spans)``: ``model.encode_with_offsets(text, allowed)``'s ids
    (a list) and each one's ``(start, end)`` in ``text`` counted in ``unit``
    (``"bytes"``, ``"chars"`` or ``"utf16"``), converted from the model's
    unit by :func:`fasttok.shared._offset_units.spans_in_unit`. With
    ``add_special_tokens``, the ids the model's post-processor puts around
    them span ``(0, 0)``, as ``tokenizers`` gives a template's tokens. With
    ``flat``, an ``array('I')`` of ids and an ``array('q')`` of start and
    end in turn.

    >>> class Letters(ModelBase):
    ...     post_processor = staticmethod(lambda ids: [1] + ids + [2])
    ...     def encode(self, text, allowed):
    ...         return [ord(c) for c in text]
    ...     def token_bytes(self, token):
    ...         return chr(token).encode()
    >>> spans_in(Letters(), "h\u00e9", None, "bytes")
    ([104, 233], [(0, 1), (1, 3)])
    >>> spans_in(Letters(), "h\u00e9", None, "chars", add_special_tokens=True)
    ([1, 104, 233, 2], [(0, 0), (0, 1), (1, 2), (0, 0)])
    >>> spans_in(Letters(), "h\u00e9", None, "bytes", flat=True)
    (array('I', [104, 233]), array('q', [0, 1, 1, 3]))
    """
    from array import array

    from fasttok.shared._offset_units import spans_in_unit  # here: offsets' own, not a load's

    ids, spans, source = model.encode_with_offsets(text, allowed)
    spans = spans_in_unit(text, spans, source, unit, flat)
    if add_special_tokens:
        ids, spans = _around(model.post_processor, list(ids), spans, flat)
    if flat:
        return ids if isinstance(ids, array) and ids.typecode == "I" else array("I", ids), spans
    return list(ids), spans


def _around(post_processor: Callable, ids: list, spans: Any, flat: bool) -> tuple:
    # the post-processed ids, the ones it puts around the text's spanning (0, 0)
    wrapped = post_processor(ids)
    added = len(wrapped) - len(ids)
    for before in range(max(added, 0) + 1):
        if wrapped[before:before + len(ids)] == ids:
            after = added - before
            if flat:
                spans[:0] = type(spans)("q", [0] * (2 * before))
                spans.extend([0] * (2 * after))
                return wrapped, spans
            return wrapped, [(0, 0)] * before + spans + [(0, 0)] * after
    raise FasttokError("offsets with add_special_tokens=True need a post-processor that "
                       "puts tokens around the text's, not one that changes them")


@runtime_checkable
class Model(Protocol):
    """A compiled model with its added tokens, post-processor and decoder
    (every member; :class:`ModelBase` gives all but the required ones)."""

    #: the special token strings (UTF-8) that ``allowed`` masks index: the
    #: ones ``allowed_special``/``disallowed_special`` govern, which are the
    #: Encoding's ``special_tokens_set``
    special_order: tuple
    #: whether tiktoken's own internals (``_encode_bytes``,
    #: ``encode_with_unstable``) apply: tiktoken's regex pieces and BPE. Such a
    #: model also offers ``last_piece(text, allowed) -> bytes``, the UTF-8 of
    #: the last pre-tokenizer piece, which those methods re-merge.
    tiktoken_pieces: bool
    #: whether the ids of a text from a place on, encoded alone, are (after
    #: their first ids) the whole text's there, as an appender's windows
    #: need (:mod:`fasttok.inference.appender`); False where ids depend on
    #: the whole text before them (sentencepiece's float32 Unigram scores,
    #: GGUF t5's double ones, summed from a fragment's start)
    windows_exact: bool
    #: ``encode_scored(text, state, cut, allowed)`` that carries the whole
    #: text's Viterbi state into each window (a Unigram model), or None
    scored_windows: Optional[Callable[..., Any]]
    #: without scored windows, whether a window may start inside a pre-token
    #: (an edge of text without whitespace): not on a Unigram model whose
    #: Viterbi runs over a whole pre-token summing scores from its start,
    #: where a tie between the same pieces in another order ("f" + "ff",
    #: "ff" + "f") goes by how the sum before it rounds
    cuts_inside_words: bool
    #: ids -> ids with what ``add_special_tokens=True`` adds (BOS/EOS, CLS/SEP)
    post_processor: Callable[[list], list]

    def encode(self, text: str, allowed: Optional[bytes]) -> list: ...

    def encode_ordinary(self, text: str) -> list: ...

    def encode_with_offsets(self, text: str, allowed: Optional[bytes]) -> tuple:
        """``(ids, spans, unit)``: ``encode(text, allowed)`` with each id's
        span of ``text`` (start and end in turn, one flat sequence) counted
        in ``unit``, ``"bytes"`` (of its UTF-8) or ``"chars"``, from the same
        walk; spans follow :mod:`fasttok.shared._offset_units`' contract."""
        ...

    def encoder(self, allowed: bytes) -> tuple:
        """``(call, argument)``: ``call(text, argument)`` is ``encode(text,
        allowed)`` for a ``str``, or ``None`` for a text left to :meth:`encode`."""
        ...

    def count(self, text: str, allowed: Optional[bytes]) -> int: ...

    def encode_many(self, texts: list, allowed: Optional[bytes]) -> list: ...

    def encode_many_flat(self, texts: list, allowed: Optional[bytes]) -> tuple: ...

    def count_many(self, texts: list, allowed: Optional[bytes]) -> list: ...

    def batch_job(self, texts: list, allowed: Optional[bytes], how: str,
                  num_threads: int) -> BatchJob: ...

    def encode_to_array(self, text: str, allowed: Optional[bytes]) -> Any: ...

    def sample(self, text: str, allowed: Optional[bytes], alpha: float, nbest_size: int,
               rng: Any) -> list: ...

    def find_special(self, text: str, mask: bytes) -> int: ...

    def find_token(self, data: bytes) -> int:
        """The id of the ordinary token spelled ``data`` -- its vocabulary
        text, or the bytes :meth:`token_bytes` gives for it -- or -1."""
        ...

    def encode_bytes_piece(self, piece: bytes) -> list: ...

    def encode_as_pieces(self, text: str) -> list: ...

    def token_bytes(self, token: int) -> bytes: ...

    def decode_bytes(self, tokens: Sequence[int]) -> bytes: ...

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple:
        """``(decode_bytes(tokens), starts)``: ``starts[i]`` is the byte index
        in the decoded bytes where the text that id ``i`` leaves there
        begins; an id that leaves nothing (a control token, a space the
        clean-up removed) gets the index of the next byte that survives."""
        ...

    def token_byte_values(self) -> list:
        """:meth:`token_bytes` of every ordinary (not special) id, one entry
        per id, sorted."""
        ...

    def stream_decoder(self) -> StreamPieces: ...


#: every member of the interface, by name
MEMBERS = tuple(sorted({m for m in dir(Model) if not m.startswith("_")} | set(Model.__annotations__)))


def missing_members(model: Any) -> list:
    """The members of the interface ``model`` lacks, sorted: for a
    :class:`ModelBase`, the required methods it leaves to the base (whose
    stand-ins only raise) and the required attributes it does not set; for
    any other object, every member it does not have.

    >>> class Half(ModelBase):
    ...     special_order = ()
    ...     def encode(self, text, allowed):
    ...         return []
    >>> missing_members(Half())
    ['encode_bytes_piece', 'find_special', 'find_token', 'post_processor', 'token_byte_values', 'token_bytes']
    >>> missing_members(object())[:3]
    ['batch_job', 'count', 'count_many']
    """
    if not isinstance(model, ModelBase):
        return [m for m in MEMBERS if not hasattr(model, m)]
    own = getattr(model, "__dict__", {})
    kind = type(model)
    return sorted([m for m in REQUIRED_METHODS
                   if m not in own and getattr(kind, m) is getattr(ModelBase, m)]
                  # an attribute its class makes on first use (a cached
                  # property: HFModel's post-processor) counts unmade
                  + [a for a in REQUIRED_ATTRIBUTES if a not in own and not hasattr(kind, a)])
