"""The public ``Encoding``: tiktoken's API over fasttok's compiled models.

>>> import fasttok
>>> enc = fasttok.get_encoding("cl100k_base")          # doctest: +SKIP
>>> enc.encode("hello world")                           # doctest: +SKIP
[15339, 1917]
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import operator
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import AbstractSet, Any, Literal, Optional, Union

from fasttok import _encode_entry, registry
from fasttok.errors import FasttokError, not_an_instance
from fasttok.models.interface import Model, missing_members, run_batch, spans_in
from fasttok.shared.ragged import PaddedIds, RaggedIds, pad, require_numpy
from fasttok.vocab import Vocabulary

__all__ = ["Encoding", "StreamDecoder"]

AllowedSpecial = Union[Literal["all"], AbstractSet[str]]
DisallowedSpecial = Union[Literal["all"], Collection[str]]

# allowed/disallowed sets remembered per encoding (callers pass a handful)
_MASK_CACHE_SIZE = 128


# Unicode's White_Space property (Rust's char::is_whitespace, which tiktoken
# asks of the last character of the unstable bytes); str.isspace differs on
# U+001C..U+001F
_WHITE_SPACE = frozenset("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
                         "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def _all_space(token: bytes) -> bool:
    # tiktoken's token_is_all_space: every byte a space, newline or tab
    return bool(token) and not token.strip(b" \n\t")


class _LoneSurrogate(FasttokError):
    pass


def _token_text(value: Any, method: str) -> bytes:
    # Text or bytes of a token, as bytes. An int must not reach bytes(),
    # which takes it as a length: bytes(5) is five zero bytes, and a huge
    # int allocates gigabytes; tiktoken raises TypeError, so does this.
    if isinstance(value, str):
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError as exc:
            # a token or piece is taken as given, not repaired as encode
            # repairs text: U+FFFD in its place would be another token
            raise _LoneSurrogate(f"{method}: the text has a lone surrogate at {exc.start}, "
                                 "which has no UTF-8") from None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{method} takes a str or bytes, not {type(value).__name__}")


def _sampling_options(alpha: Any, nbest_size: Any) -> tuple:
    # The compiled samplers take a C double and a C int: a value that does not
    # fit must be refused here, not overflow there, and NaN or infinity would
    # make every weight NaN (a silent draw of nothing in particular).
    import numbers  # here: only sampling needs it, and `import fasttok` need not

    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        raise TypeError(f"alpha must be a real number, not {type(alpha).__name__}")
    try:
        alpha = float(alpha)
    except OverflowError:
        alpha = math.inf
    if not math.isfinite(alpha):
        raise FasttokError(f"alpha must be a finite number, got {alpha!r}")
    if isinstance(nbest_size, bool):
        raise TypeError("nbest_size must be an int, not bool")
    nbest_size = operator.index(nbest_size)
    if not -2**31 <= nbest_size < 2**31:
        raise FasttokError(f"nbest_size must fit in 32 bits, got {nbest_size}")
    return alpha, nbest_size


def _disallowed_message(token: str) -> str:
    return (f"Encountered text corresponding to disallowed special token {token!r}.\n"
            f"To encode it as the special token, pass allowed_special={{{token!r}}} "
            f"(or allowed_special='all').\n"
            f"To encode it as ordinary text, pass disallowed_special=() "
            f"(or leave {token!r} out of disallowed_special).")


def _raise_disallowed(token: str) -> None:
    raise FasttokError(_disallowed_message(token))


def _listed(texts: Iterable[str]) -> list:
    # a batch's texts as a list (itself when it is one): a generator is read once
    return texts if isinstance(texts, list) else list(texts)


# UTF-8 continuation bytes (0b10xxxxxx)
_CONTINUATION = bytes(range(0x80, 0xC0))


def _char_offsets(data: bytes, starts: list) -> list:
    """Byte indices into the UTF-8 ``data`` (ascending) as the index of the
    character each falls in; ``len(data)`` is the number of characters."""
    if data.isascii():  # a byte is a character: each index as it is, kept ascending
        n, done = len(data), 0
        return [done := min(max(start, done), n) for start in starts]
    offsets, chars, done = [], 0, 0
    for start in starts:
        start = min(max(start, done), len(data))
        chars += len(data[done:start].translate(None, _CONTINUATION))
        done = start
        inside = start < len(data) and 0x80 <= data[start] < 0xC0
        offsets.append(chars - 1 if inside and chars else chars)
    return offsets


class StreamDecoder:
    """Decode ids one at a time, as a model produces them.

    :meth:`push` returns the text that became complete; the bytes of a UTF-8
    character split across tokens are held back until the rest arrives, and
    :meth:`flush` ends the stream. The pushes of a sequence add up to
    ``decode`` of it. The bytes come from the model's own stream
    (:mod:`fasttok.decoders.stream`, which lists each rule's worst case), and
    only what a later id could still change is held back: an incomplete
    character, up to four bytes of llama.cpp's space clean-up, text a
    ``.model`` denormalizer rule could still match, a ``tokenizer.json``
    ByteFallback run of byte tokens.

    >>> enc = Encoding.from_vocabulary(Vocabulary(
    ...     name="b", model="byte_bpe", pattern=".", tokens=tuple(bytes([i]) for i in range(256))))
    >>> stream = enc.decode_stream()
    >>> [stream.push(t) for t in "é!".encode()], stream.flush()
    (['', 'é', '!'], '')
    """

    def __init__(self, encoding: "Encoding", errors: str = "replace") -> None:
        import codecs

        self._pieces = encoding._core.stream_decoder()
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors)

    def push(self, token: int) -> str:
        """Add one id; return the text it completes (possibly empty)."""
        return self._utf8.decode(self._pieces.push(token))

    def flush(self) -> str:
        """End the stream: whatever is held back, decoded with ``errors``."""
        return self._utf8.decode(self._pieces.flush(), final=True)


class Encoding:
    """A tokenizer with tiktoken's interface and ids.

    Build one from tiktoken's constructor arguments, or get a named one with
    :func:`fasttok.get_encoding`, or load a vocabulary file with
    :func:`fasttok.load`.

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
    >>> enc = Encoding("tiny", pat_str=r"\\w+|\\s+|[^\\w\\s]+", mergeable_ranks=ranks,
    ...                special_tokens={"<|end|>": 257})
    >>> enc.encode("abc ab<|end|>", allowed_special="all")
    [256, 99, 32, 256, 257]
    """

    def __init__(self, name: str, *, pat_str: str, mergeable_ranks: dict,
                 special_tokens: dict, explicit_n_vocab: Optional[int] = None) -> None:
        vocab = Vocabulary.from_ranks(name, mergeable_ranks, pat_str=pat_str,
                                      special_tokens=special_tokens,
                                      explicit_n_vocab=explicit_n_vocab).validate()
        self._setup(vocab, None, False)

    @classmethod
    def from_vocabulary(cls, vocab: Vocabulary, *, model: Optional[Model] = None,
                        by_name: bool = False) -> "Encoding":
        """An encoding running ``vocab`` with ``model``, else the model the
        registry names for it; ``by_name``: pickled as its name, to be
        rebuilt by :func:`fasttok.get_encoding` (the named encodings).

        >>> from fasttok.vocab import Vocabulary
        >>> v = Vocabulary(name="b", model="byte_bpe", pattern=".",
        ...                tokens=tuple(bytes([i]) for i in range(256)))
        >>> Encoding.from_vocabulary(v).encode("hi")
        [104, 105]
        """
        self = cls.__new__(cls)
        self._setup(vocab, model, by_name)
        return self

    @classmethod
    def from_model(cls, model: Model, make_vocabulary: Callable[[], Vocabulary], *, name: str,
                   pattern: Optional[str], special_tokens: Mapping, max_token_value: int,
                   by_name: bool = False) -> "Encoding":
        """An encoding of a model built already (the table cache reads its
        tables from disk), whose vocabulary record ``make_vocabulary()``
        gives on first use (``by_name`` as in :meth:`from_vocabulary`).

        >>> from fasttok.formats.tiktoken import build_byte_bpe
        >>> v = Vocabulary(name="b", model="byte_bpe", pattern=".",
        ...                tokens=tuple(bytes([i]) for i in range(256)))
        >>> Encoding.from_model(build_byte_bpe(v), lambda: v, name="b", pattern=".",
        ...                     special_tokens={}, max_token_value=255).encode("hi")
        [104, 105]
        """
        self = cls.__new__(cls)
        self._make_vocabulary = make_vocabulary
        self._setup_model(name, pattern, special_tokens, max_token_value, model, by_name)
        return self

    def _setup(self, vocab: Vocabulary, model: Optional[Model], by_name: bool) -> None:
        self.vocabulary = vocab
        self._setup_model(vocab.name, vocab.pattern, vocab.special_tokens, vocab.max_token_value,
                          registry.build_model(vocab) if model is None else model, by_name)

    def _setup_model(self, name: str, pattern: Optional[str], special_tokens: Mapping,
                     max_token_value: int, model: Model, by_name: bool) -> None:
        missing = missing_members(model)
        if missing:
            raise FasttokError(f"{name}: its model ({type(model).__name__}) does not offer the "
                               f"model interface (fasttok.models.interface.Model); it lacks "
                               f"{', '.join(missing)}")
        self.name = name
        self._pickle_by_name = by_name
        self._pat_str = pattern
        self._core = model
        self._order = [raw.decode("utf-8") for raw in model.special_order]
        self._index = {text: i for i, text in enumerate(self._order)}
        # the specials are the tokens allowed_special/disallowed_special
        # govern: the model's special_order (a GGUF file's user-defined
        # tokens, always matched, are ordinary added tokens)
        self._special_tokens = {text: i for text, i in special_tokens.items()
                                if text in self._index}
        self._all_mask = bytes([1]) * len(self._order)
        self._masks: dict = {}
        self._max_token_value = max_token_value
        self._bind_ordinary()

    def _bind_ordinary(self) -> None:
        # encode_ordinary is the model's own, which it only called: its
        # Python frame was 9% of a short line's instructions (cl100k_base);
        # a BoundEntry, so that it pickles as the bound method did
        if type(self).encode_ordinary is Encoding.encode_ordinary:
            self.encode_ordinary = _encode_entry.BoundEntry(self._core.encode_ordinary, self,
                                                            "encode_ordinary")

    @functools.cached_property
    def vocabulary(self) -> Vocabulary:
        """The :class:`~fasttok.vocab.Vocabulary` record this encoding runs.

        An encoding read from the table cache makes it the first time it is
        asked for: its tuple of one bytes object per token is 8 ms and 9 MB
        of that load for o200k_base, and encoding and decoding never need it.

        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=".", tokens=tuple(bytes([i]) for i in range(256))))
        >>> enc.vocabulary.tokens[104]
        b'h'
        """
        return self._make_vocabulary()

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    # ------------------------------------------------------------ encoding

    def _mask(self, specials: frozenset) -> bytes:
        # Cached on the instance: an lru_cache on the method would hold every
        # encoding that ever encoded alive through its keys.
        mask = self._masks.get(specials)
        if mask is None:
            flags = bytearray(len(self._order))
            for text in specials:
                i = self._index.get(text)
                if i is not None:
                    flags[i] = 1
            mask = bytes(flags)
            if len(self._masks) < _MASK_CACHE_SIZE:
                self._masks[specials] = mask
        return mask

    def _allowed_mask(self, allowed_special: AllowedSpecial,
                      disallowed_special: DisallowedSpecial, text: str) -> bytes:
        # a text that is not a str is refused as tiktoken refuses it (PyO3's
        # message: its core is a PyO3 extension), not searched for specials
        # item by item as a batch's texts are
        if not isinstance(text, str):
            raise not_an_instance(text, "str")
        return self._batch_mask(allowed_special, disallowed_special, (text,))

    def _batch_mask(self, allowed_special: AllowedSpecial,
                    disallowed_special: DisallowedSpecial, texts: Iterable[str]) -> bytes:
        allowed, mask = self._special_masks(allowed_special, disallowed_special)
        if mask is not None:
            for one in texts:
                self._refuse_disallowed(one, mask)
        return allowed

    def _refuse_disallowed(self, text: str, mask: bytes) -> None:
        # the error encode raises when text holds a special token mask marks
        found = self._core.find_special(text, mask)
        if found >= 0:
            _raise_disallowed(self._order[found])

    def _encoder_with(self, allowed_special: AllowedSpecial,
                      disallowed_special: DisallowedSpecial) -> Callable[[str], list]:
        # encode with these special-token arguments, the masks made once:
        # healing and the appender encode many short texts with one set of
        # arguments, where encode's general path spends ~17 us on them a call
        allowed, disallowed = self._special_masks(allowed_special, disallowed_special)
        core = self._core

        def encode(text: str) -> list:
            if disallowed is not None:
                self._refuse_disallowed(text, disallowed)
            return core.encode(text, allowed)

        return encode

    def _special_masks(self, allowed_special: AllowedSpecial,
                       disallowed_special: DisallowedSpecial) -> tuple:
        # (the specials encoded as specials, the specials whose text is an
        # error or None when none is)
        if allowed_special == "all":
            allowed = self._all_mask
            allowed_set = self.special_tokens_set
        else:
            allowed_set = frozenset(allowed_special)
            allowed = self._mask(allowed_set)
        # the two usual calls (all allowed; none allowed, all disallowed)
        # take no set operation: with Gemma 3's 6,415 added tokens one cost
        # more than encoding a line
        if disallowed_special != "all":
            disallowed = frozenset(disallowed_special)
            mask = self._mask(disallowed) if disallowed else None
        elif allowed_set is self.special_tokens_set:
            mask = None
        elif not allowed_set:
            mask = self._mask(self.special_tokens_set) if self.special_tokens_set else None
        else:
            disallowed = self.special_tokens_set - allowed_set
            mask = self._mask(disallowed) if disallowed else None
        return allowed, mask

    # compiled (see fasttok._encode_entry): enc.encode is an EncodeEntry
    # whose two common calls go straight to the entries _bind_entries binds,
    # the rest to _encode_general
    encode = _encode_entry.EncodeMethod()

    def _encode_general(self, text: str, allowed_special: AllowedSpecial,
                        disallowed_special: DisallowedSpecial, add_special_tokens: bool,
                        sample: bool, alpha: float, nbest_size: int,
                        seed: Optional[int]) -> list:
        # every call of encode its entries do not serve, with its arguments
        allowed = self._allowed_mask(allowed_special, disallowed_special, text)
        if sample:
            import random  # here, as numbers: sampling's own

            alpha, nbest_size = _sampling_options(alpha, nbest_size)
            ids = self._core.sample(text, allowed, alpha, nbest_size, random.Random(seed))
        else:
            ids = self._core.encode(text, allowed)
        return self._core.post_processor(ids) if add_special_tokens else ids

    #: encode's entries (_bind_entries), bound on first use: a
    #: tokenizer.json's walk is built when its first text is encoded
    _entries = None

    def _bind_entries(self) -> tuple:
        # the model's entries for encode's two common calls (see
        # Model.encoder) with the masks the general path takes, and the
        # default call's search for a disallowed special (None: an encoding
        # without specials has none to search for), as EncodeEntry holds them
        core = self._core
        call_all, argument_all = core.encoder(self._special_masks("all", "all")[0])
        allowed, disallowed = self._special_masks(_encode_entry.NONE_ALLOWED, "all")
        call_none, argument_none = core.encoder(allowed)
        self._entries = (call_all, argument_all, call_none, argument_none,
                         None if disallowed is None else core.find_special, disallowed)
        return self._entries

    def encode_ordinary(self, text: str) -> list:
        """Encode ``text`` with special token strings treated as plain text.

        Same as ``encode(text, disallowed_special=())``, only faster.
        """
        return self._core.encode_ordinary(text)

    def count(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
              disallowed_special: DisallowedSpecial = "all") -> int:
        """``len(self.encode(text, ...))`` without building the list."""
        allowed = self._allowed_mask(allowed_special, disallowed_special, text)
        return self._core.count(text, allowed)

    def _batch(self, texts: Sequence[str], num_threads: int, allowed: Optional[bytes],
               how: str = "encode_many") -> Any:
        # how names the model's batch call: encode_many (lists of ids),
        # encode_many_flat (one array of ids and one of offsets) or count_many.
        return run_batch(self._core, _listed(texts), allowed, how, num_threads)

    def encode_batch(self, text: Sequence[str], *, num_threads: int = 8,
                     allowed_special: AllowedSpecial = frozenset(),
                     disallowed_special: DisallowedSpecial = "all", flat: bool = False,
                     ragged: bool = False) -> Any:
        """Encode many texts; the texts are split between ``num_threads`` threads
        that run without the GIL.

        With ``flat=True`` the result is ``(ids, offsets)``: one ``array('I')``
        of all ids and an ``array('Q')`` where text i's ids are
        ``ids[offsets[i]:offsets[i + 1]]`` (no Python int per token).
        ``ragged=True`` gives the same two arrays as a
        :class:`~fasttok.shared.ragged.RaggedIds` (``len``, ``batch[i]``,
        ``to_numpy()``).

        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=".", tokens=tuple(bytes([i]) for i in range(256))))
        >>> enc.encode_batch(["hi", "a"], flat=True)
        (array('I', [104, 105, 97]), array('Q', [0, 2, 3]))
        >>> enc.encode_batch(["hi", "a"], ragged=True)[0]
        array('I', [104, 105])
        """
        text = _listed(text)  # read twice: searched for specials, then encoded
        allowed = self._batch_mask(allowed_special, disallowed_special, text)
        if ragged:
            return RaggedIds(*self._batch(text, num_threads, allowed, "encode_many_flat"))
        return self._batch(text, num_threads, allowed, "encode_many_flat" if flat else "encode_many")

    def encode_batch_padded(self, text: Sequence[str], *, pad_id: int,
                            max_length: Optional[int] = None, side: str = "right",
                            num_threads: int = 8, allowed_special: AllowedSpecial = frozenset(),
                            disallowed_special: DisallowedSpecial = "all") -> PaddedIds:
        """Encode many texts (as :meth:`encode_batch`) into one rectangle for a
        model: row i is text i's ids padded with ``pad_id`` on ``side``
        (``"right"`` or ``"left"``) to the longest row, a text longer than
        ``max_length`` keeping its first ``max_length`` ids. The result's
        ``ids`` and ``attention_mask`` are ``(rows, width)`` numpy arrays
        (the ids sharing the encoded buffer) when numpy is installed, else
        flat arrays read with its ``shape``; ``lengths`` says how many ids of
        each row are the text's (see :class:`~fasttok.shared.ragged.PaddedIds`).

        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=".", tokens=tuple(bytes([i]) for i in range(256))))
        >>> enc.encode_batch_padded(["hi", "a"], pad_id=0).ids.tolist()
        [[104, 105], [97, 0]]
        """
        batch = self.encode_batch(text, num_threads=num_threads, allowed_special=allowed_special,
                                  disallowed_special=disallowed_special, ragged=True)
        return pad(batch, pad_id=pad_id, max_length=max_length, side=side)

    def encode_files(self, paths: Any, *, format: str = "text", field: str = "text",
                     separator: Optional[str] = "\n", num_threads: int = 8,
                     allowed_special: AllowedSpecial = frozenset(),
                     disallowed_special: DisallowedSpecial = "all", errors: str = "strict",
                     block_size: Optional[int] = None) -> RaggedIds:
        """Encode every document of the files ``paths`` (one path or several)
        into one :class:`~fasttok.shared.ragged.RaggedIds`, documents in file
        order.

        ``format="text"``: the documents are the pieces between
        ``separator`` (``None``: each file is one document); ``"jsonl"``: one
        per non-blank line, the string in ``field``. Each file is read
        ``block_size`` bytes at a time (default
        :data:`~fasttok.shared.document_files.DEFAULT_BLOCK_SIZE`, 1 MiB),
        cut only between documents, and the
        blocks encoded on ``num_threads`` threads (at most one a CPU)
        without the GIL while the next block is read, so memory holds two or
        three blocks besides the result, whatever the file's size, and the
        threads' pre-token caches for the call (16 MiB at most together at
        the default setting; see
        :func:`~fasttok.shared.document_files.job_cache_entries`).
        A malformed line, bytes that are not UTF-8 (``errors="replace"``
        reads them as U+FFFD) and a disallowed special token raise
        :class:`~fasttok.errors.DocumentFileError` naming the file and line
        (see :mod:`fasttok.shared.document_files` for the exact rules).

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "d.txt")
        >>> with open(path, "w") as f:
        ...     _ = f.write("hi\\na\\n")
        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=".", tokens=tuple(bytes([i]) for i in range(256))))
        >>> enc.encode_files(path).to_lists()
        [[104, 105], [97]]
        """
        # imported here: its compiled block reader is encode_files' alone
        # (0.5 ms of `import fasttok`)
        from fasttok.shared import document_files

        allowed, disallowed = self._special_masks(allowed_special, disallowed_special)
        if allowed is not None and allowed.count(0) == len(allowed):
            # no special allowed: no mask, so no document is searched for one
            # (a search a line cost 3% of encoding short lines)
            allowed = None
        if block_size is None:
            block_size = document_files.DEFAULT_BLOCK_SIZE
        return document_files.encode_files(
            self._core, paths, allowed=allowed, disallowed=disallowed,
            special_error=lambda index: _disallowed_message(self._order[index]),
            num_threads=num_threads,
            batch=lambda docs, mask: self._batch(docs, num_threads, mask, "encode_many_flat"),
            format=format, field=field, separator=separator, errors=errors,
            block_size=block_size)

    def encode_ordinary_batch(self, text: Sequence[str], *, num_threads: int = 8,
                              flat: bool = False) -> Any:
        """:meth:`encode_ordinary` over many texts, on ``num_threads`` threads
        (``flat`` as in :meth:`encode_batch`)."""
        return self._batch(text, num_threads, None, "encode_many_flat" if flat else "encode_many")

    def count_batch(self, text: Sequence[str], *, num_threads: int = 8,
                    allowed_special: AllowedSpecial = frozenset(),
                    disallowed_special: DisallowedSpecial = "all") -> list:
        """The number of tokens of each text, without building any ids as ints.

        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=".", tokens=tuple(bytes([i]) for i in range(256))))
        >>> enc.count_batch(["hi", "abc"])
        [2, 3]
        """
        text = _listed(text)  # read twice: searched for specials, then counted
        allowed = self._batch_mask(allowed_special, disallowed_special, text)
        return self._batch(text, num_threads, allowed, "count_many")

    def encode_to_array(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
                        disallowed_special: DisallowedSpecial = "all") -> Any:
        """:meth:`encode` returning an ``array('I')`` (a buffer numpy can wrap
        without copying) instead of a list.

        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=".", tokens=tuple(bytes([i]) for i in range(256))))
        >>> enc.encode_to_array("hi")
        array('I', [104, 105])
        """
        allowed = self._allowed_mask(allowed_special, disallowed_special, text)
        return self._core.encode_to_array(text, allowed)

    def encode_to_numpy(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
                        disallowed_special: DisallowedSpecial = "all") -> Any:
        """:meth:`encode` returning a ``numpy`` array of ``uint32``, as tiktoken does.

        numpy is imported only here and is never a dependency: without it
        this raises :class:`~fasttok.errors.FasttokError` (``pip install numpy``,
        or use :meth:`encode_to_array`, whose ``array('I')`` needs nothing).

        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=".", tokens=tuple(bytes([i]) for i in range(256))))
        >>> enc.encode_to_numpy("hi")                           # doctest: +SKIP
        array([104, 105], dtype=uint32)
        """
        np = require_numpy("encode_to_numpy", "encode_to_array (an array('I') numpy can wrap)")
        ids = self.encode_to_array(text, allowed_special=allowed_special,
                                   disallowed_special=disallowed_special)
        return np.frombuffer(ids, dtype=np.uint32)

    def encode_single_token(self, text_or_bytes: Union[str, bytes]) -> int:
        """The id of one token given as text or bytes; ``KeyError`` if it is not a token.

        An ordinary token is found by its bytes as
        :meth:`decode_single_token_bytes` gives them (where two ids give the
        same bytes, the one the model prefers: the piece spelled so, else the
        lowest id) or, for SentencePiece-style models, by its vocabulary text
        (``"▁t"`` as well as ``b" t"``); a special token by its string.

        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=".",
        ...     tokens=tuple(bytes([i]) for i in range(256)), special_tokens={"<e>": 256}))
        >>> enc.encode_single_token("a"), enc.encode_single_token("<e>")
        (97, 256)
        """
        try:
            raw = _token_text(text_or_bytes, "encode_single_token")
        except _LoneSurrogate:
            raise KeyError(text_or_bytes) from None  # text no token spells
        found = self._core.find_token(raw)
        if found >= 0:
            return found
        try:
            return self._special_tokens[raw.decode("utf-8")]
        except (KeyError, UnicodeDecodeError):
            raise KeyError(text_or_bytes) from None

    def encode_single_piece(self, text_or_bytes: Union[str, bytes]) -> list:
        """Merge text or bytes as one piece, skipping the pre-tokenizer."""
        return self._core.encode_bytes_piece(_token_text(text_or_bytes, "encode_single_piece"))

    def _encode_single_piece(self, text_or_bytes: Union[str, bytes]) -> list:
        """tiktoken's private name for :meth:`encode_single_piece`."""
        return self.encode_single_piece(text_or_bytes)

    def _encode_only_native_bpe(self, text: str) -> list:
        """:meth:`encode_ordinary` with the pre-tokenizer run in Python: the
        pattern (translated to the standard library's ``re``) splits the text
        and each piece is merged alone, as tiktoken's method of this name
        does with the ``regex`` module.

        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=r"\\w+|\\s+", tokens=tuple(bytes([i]) for i in range(256))))
        >>> enc._encode_only_native_bpe("hi there")
        [104, 105, 32, 116, 104, 101, 114, 101]
        """
        if self._pat_str is None:
            raise FasttokError(f"{self.name}: this vocabulary has no regex pattern to split with; "
                               "use encode_ordinary")
        # the pieces are merged raw, which skips a normalizer's stage
        self._tiktoken_core("_encode_only_native_bpe")
        split = registry.resolve("fasttok.pre_tokenizers.patterns:pattern_splitter")(self._pat_str)
        ids: list = []
        for piece in split(text):
            ids += self.encode_single_piece(piece)
        return ids

    def _tiktoken_core(self, method: str) -> Any:
        # the compiled byte-level BPE model, for the methods that reproduce
        # tiktoken's internals on top of its primitives
        if not self._core.tiktoken_pieces:
            raise FasttokError(f"{self.name}: {method} is tiktoken's and works on byte-level BPE "
                               f"vocabularies (.tiktoken files); this one is "
                               f"{self.vocabulary.model!r}")
        return self._core

    def _last_piece_len(self, ids: list, text: str, allowed: Optional[bytes]) -> int:
        # How many of ids came from the last pre-tokenizer piece, widened
        # back over the all-whitespace tokens before it, as tiktoken's
        # encode and _increase_last_piece_token_len count them: a split
        # that adding text can remove (cl100k's \s*[\r\n]+) must not be
        # taken as stable.
        core = self._core
        piece = core.last_piece(text, allowed)
        n = len(core.encode_bytes_piece(piece)) if piece else 0
        if n and _all_space(self._ordinary_bytes(ids[-n])):
            while n < len(ids) and _all_space(self._ordinary_bytes(ids[-n - 1])):
                n += 1
        return n

    def _ordinary_bytes(self, token: int) -> bytes:
        # the bytes of an ordinary token; b"" for a special one (tiktoken's
        # decoder map holds the ordinary tokens only)
        return b"" if token in self._special_ids else self._core.token_bytes(token)

    def _encode_bytes(self, text: bytes) -> list:
        """Encode bytes that may not be UTF-8, as tiktoken's ``_encode_bytes``.

        The valid UTF-8 prefix goes through the pre-tokenizer (special token
        strings as plain text); the tokens of its last piece (widened as in
        :meth:`encode_with_unstable`) and the bytes from the first invalid
        one on are merged together as one piece.

        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=".", tokens=tuple(bytes([i]) for i in range(256))))
        >>> enc._encode_bytes(b"h\\xff")
        [104, 255]
        """
        data = _token_text(text, "_encode_bytes")
        core = self._tiktoken_core("_encode_bytes")
        try:
            return core.encode_ordinary(data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            valid = exc.start
        prefix = data[:valid].decode("utf-8")
        ids = core.encode_ordinary(prefix)
        n = self._last_piece_len(ids, prefix, None)
        if ids and n:
            rest = core.decode_bytes(ids[-n:]) + data[valid:]
            del ids[-n:]
        else:
            rest = data[valid:]
        if rest:
            ids += core.encode_bytes_piece(rest)
        return ids

    @functools.cached_property
    def _prefix_table(self) -> Any:
        # every ordinary token's bytes with its id, sorted once: healing's
        # masks and encode_with_unstable's completions ask it
        from fasttok.inference.prefix_table import PrefixTable

        token_bytes = self._core.token_bytes
        special = self._special_ids

        def pairs() -> Iterable:
            for token in range(self._max_token_value + 1):
                if token not in special:
                    try:
                        yield token_bytes(token), token
                    except KeyError:  # an id no token has (a gap in the ranks)
                        continue

        return PrefixTable(pairs())

    @functools.cached_property
    def _sorted_specials(self) -> list:
        # every special token's text, sorted: heal probes the rest of one
        # that a prompt ends partway through
        return sorted(self.special_tokens_set)

    @functools.cached_property
    def _longest_special(self) -> int:
        # how far back a special token completed by more text reaches, in
        # characters (the appender's and heal's edge cuts stay before it)
        return max(map(len, self.special_tokens_set), default=0)

    @property
    def _longest_token(self) -> int:
        return self._prefix_table.longest

    def _tokens_starting_with(self, prefix: bytes) -> list:
        # the ordinary tokens whose bytes start with prefix, in byte order
        return self._prefix_table.bytes_extending(prefix)

    def tokens_extending(self, prefix: Union[str, bytes], *, prefixes_too: bool = False) -> list:
        """The ordinary ids whose bytes start with ``prefix``, in byte order:
        after :meth:`heal`, the ids a first generated token may take. With
        ``prefixes_too``, first the ids whose bytes are a proper prefix of
        ``prefix`` (shortest first), which cover a first step shorter than it.
        The table is built once per encoding, on first use.

        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=".",
        ...     tokens=tuple(bytes([i]) for i in range(256)) + (b" q", b" qu", b" que")))
        >>> enc.tokens_extending(b" qu"), enc.tokens_extending(" qu", prefixes_too=True)
        ([257, 258], [32, 256, 257, 258])
        """
        return self._prefix_table.extending(_token_text(prefix, "tokens_extending"),
                                            prefixes_too=prefixes_too)

    def heal(self, text: Union[str, bytes], recent_ids: Sequence[int] = (), *,
             allowed_special: AllowedSpecial = frozenset(),
             disallowed_special: DisallowedSpecial = "all") -> tuple:
        """Token healing: ``(ids, suffix)``, the ids of the prompt ``text``
        to generate after and the bytes generation must reproduce first
        (:meth:`tokens_extending` of them is the first step's mask).

        The rule is llguidance 1.9.1's ``tokenize_partial(text, recent_ids)``
        (see :mod:`fasttok.inference.healing`), and no id is kept that a
        continuation can change: ``encode(text + more)`` begins with ``ids``
        for any ``more``, and ``decode_bytes(ids) + suffix`` is ``text``'s
        bytes where the vocabulary spells its text unchanged. ``recent_ids``
        are ids before ``text`` (the last one is re-encoded with it, and
        kept when the encoding begins with it; it is not returned).

        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=r" ?\\w+| ",
        ...     tokens=tuple(bytes([i]) for i in range(256)) + (b"The", b" q", b" qu", b" que")))
        >>> enc.heal("The qu")
        ([256], b' qu')
        """
        from fasttok.inference import healing

        return healing.heal(self._encoder_with(allowed_special, disallowed_special),
                            self._core.token_bytes, self.decode_bytes, self.is_special_token,
                            self._prefix_table, _token_text(text, "heal"),
                            [operator.index(i) for i in recent_ids],
                            reach=self._longest_special,
                            specials=self._sorted_specials if allowed_special == "all"
                            else sorted(allowed_special))

    def appender(self, *, allowed_special: AllowedSpecial = frozenset(),
                 disallowed_special: DisallowedSpecial = "all") -> Any:
        """An :class:`~fasttok.inference.appender.Appender`: text pushed a
        piece at a time, each push encoding the new text and the unstable
        tail only. ``push(text)`` returns the ids that became final,
        ``pending`` is the text whose ids may still change (at least the
        last word and the one before it), ``ids`` the final
        ids, ``count()`` the number of ids of everything pushed and
        ``flush()`` all of them: ``encode`` of the pushed text joined, with
        these special-token arguments, however it was split. Text with no
        whitespace is cut where scripts, digits and punctuation meet or
        inside a long run; a Unigram model, whose ids depend on the path
        score summed before them, where no piece crosses, each window
        encoded from that score (see :mod:`fasttok.inference.appender` for
        the cost).

        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=r" ?\\w+| ",
        ...     tokens=tuple(bytes([i]) for i in range(256)) + (b" t", b" th")))
        >>> a = enc.appender()
        >>> a.push("hi th"), a.push("ere you"), a.pending
        ([], [104, 105], ' there you')
        >>> a.flush() == enc.encode("hi there you")
        True
        """
        from fasttok.inference.appender import Appender

        allowed, disallowed = self._special_masks(allowed_special, disallowed_special)
        refuse = (lambda text: None) if disallowed is None else functools.partial(
            self._refuse_disallowed, mask=disallowed)
        scored = self._core.scored_windows
        if scored is not None:
            scored = functools.partial(scored, allowed=allowed)
        return Appender(self._encoder_with(allowed_special, disallowed_special),
                        refuse=refuse, reach=self._longest_special,
                        windows=self._core.windows_exact, scored=scored,
                        inside_words=self._core.cuts_inside_words)

    def encode_with_unstable(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
                             disallowed_special: DisallowedSpecial = "all") -> tuple:
        """``(stable_tokens, completions)``, exactly as tiktoken's method of this name.

        The tokens of the last piece of ``text`` may change when more text
        follows: they are left out of ``stable_tokens``, and ``completions``
        lists every token sequence that could continue ``stable_tokens`` so
        that the decoded bytes start with the text's (tiktoken's set, as a
        list of lists in no set order, as tiktoken's). Like tiktoken, a ``text`` with lone
        surrogates is a ``UnicodeEncodeError``. Any other vocabulary kind
        (its own pre-tokenizer and normalizer) leaves out the ids the
        appender's rule does not find final, and lists their ids and every
        token whose bytes start with theirs (see
        :mod:`fasttok.inference.unstable`).

        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=r"\\w+|\\s+",
        ...     tokens=tuple(bytes([i]) for i in range(256)) + (b"ab",)))
        >>> stable, completions = enc.encode_with_unstable("x a")
        >>> stable, sorted(completions)
        ([120, 32], [[97], [256]])
        """
        core = self._core
        if not isinstance(text, str):
            raise TypeError(f"encode_with_unstable takes a str, not {type(text).__name__}")
        text.encode("utf-8")  # tiktoken's core refuses lone surrogates rather than repairing them
        allowed = self._allowed_mask(allowed_special, disallowed_special, text)
        ids = core.encode(text, allowed)
        if not core.tiktoken_pieces:
            from fasttok.inference.unstable import with_unstable

            return with_unstable(lambda part: core.encode(part, allowed), core.token_bytes,
                                 self.decode_bytes, self._prefix_table, text, ids)
        n = self._last_piece_len(ids, text, allowed)
        if n == 0:
            return ids, []
        unstable = core.decode_bytes(ids[-n:])
        del ids[-n:]
        completions = {(core.find_token(tok),) for tok in self._tokens_starting_with(unstable)}
        # tiktoken tries every split of the unstable bytes; a token can only
        # start with the last _longest_token of them, so the splits before
        # have nothing to try (what made a long word quadratic)
        merged: dict = {}
        for i in range(max(1, len(unstable) - self._longest_token), len(unstable)):
            for tok in self._tokens_starting_with(unstable[i:]):
                completions.add(self._covering_ids(unstable[:i] + tok, len(unstable), merged))
        last = unstable.decode("utf-8")[-1]
        if len(unstable) > 1 and len(last.encode("utf-8")) < len(unstable) and last in _WHITE_SPACE:
            cut = len(unstable) - len(last.encode("utf-8"))
            completions.add(tuple(core.encode_bytes_piece(unstable[:cut], False)
                                  + core.encode_bytes_piece(unstable[cut:], False)))
        return ids, [list(c) for c in completions]

    def _covering_ids(self, possibility: bytes, cover: int, merged: dict) -> tuple:
        # The first ids of tiktoken's encoding of possibility that spell at
        # least cover bytes. Only the pieces up to byte cover are merged, and
        # each once per call (merged: piece -> its ids and their byte ends):
        # the possibilities of a long unstable run share their long pieces.
        core = self._core
        try:
            pieces = core.leading_pieces(possibility.decode("utf-8"), cover)
        except UnicodeDecodeError:
            pieces = None
        if pieces is None:  # tiktoken's bare byte_pair_encode of all of it
            ids = core.encode_bytes_piece(possibility, False)
            return tuple(ids[:bisect.bisect_left(self._byte_ends(ids), cover) + 1])
        seq: list = []
        size = 0
        for piece in pieces:
            known = merged.get(piece)
            if known is None:
                ids = core.encode_bytes_piece(piece)
                known = merged[piece] = (ids, self._byte_ends(ids))
            ids, ends = known
            if size + len(piece) < cover:
                seq += ids
                size += len(piece)
                continue
            seq += ids[:bisect.bisect_left(ends, cover - size) + 1]
            break
        return tuple(seq)

    def _byte_ends(self, ids: list) -> list:
        # where each of ids ends in their decoded bytes
        return list(itertools.accumulate(len(self._core.token_bytes(t)) for t in ids))

    def encode_as_pieces(self, text: str) -> list:
        """The pieces of ``text`` as strings, for SentencePiece-style models.

        A ``.model`` file gives what ``sentencepiece``'s
        ``encode(text, out_type=str)`` gives (the text an ``unk`` covers,
        ``<0xXX>`` for byte fallback); a GGUF ``llama``/``t5`` file gives each
        id's vocabulary text.

        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="u", model="unigram", byte_level=False, unk_id=0, add_dummy_prefix=True,
        ...     escape_whitespaces=True, tokens=(b"<unk>", "▁a".encode(), b"b"),
        ...     scores=(0.0, -1.0, -2.0), token_types=(2, 1, 1)))
        >>> enc.encode_as_pieces("ab")
        ['▁a', 'b']
        """
        return self._core.encode_as_pieces(text)

    # ------------------------------------------------------------ decoding

    def decode_bytes(self, tokens: Iterable[int]) -> bytes:
        """The bytes the ids stand for; ``KeyError`` on an id that is not a token."""
        return self._core.decode_bytes(tokens if isinstance(tokens, (list, tuple)) else list(tokens))

    def decode(self, tokens: Iterable[int], errors: str = "replace") -> str:
        """The text the ids stand for (invalid UTF-8 handled by ``errors``, as in tiktoken).

        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=".", tokens=tuple(bytes([i]) for i in range(256))))
        >>> enc.decode([104, 105]), enc.decode([0xE2])
        ('hi', '�')
        """
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> list:
        """:meth:`decode_bytes` of each sequence of ids (``num_threads`` is
        accepted for tiktoken's signature; decoding is a copy per token and
        runs in the calling thread).

        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=".", tokens=tuple(bytes([i]) for i in range(256))))
        >>> enc.decode_bytes_batch([[104, 105], [0xE2]])
        [b'hi', b'\\xe2']
        """
        return [self.decode_bytes(tokens) for tokens in batch]

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace",
                     num_threads: int = 8) -> list:
        """:meth:`decode` of each sequence of ids (``errors`` as there).

        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=".", tokens=tuple(bytes([i]) for i in range(256))))
        >>> enc.decode_batch([[104, 105], [0xE2]])
        ['hi', '�']
        """
        return [self.decode(tokens, errors=errors) for tokens in batch]

    def decode_stream(self, errors: str = "replace") -> StreamDecoder:
        """A :class:`StreamDecoder` for ids that arrive one at a time."""
        return StreamDecoder(self, errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one id (ordinary or special); ``KeyError`` otherwise.
        Any integer is an id (``numpy.int64``, a 0-d array), as in tiktoken;
        anything else is a ``TypeError``."""
        return self._core.token_bytes(operator.index(token))

    def decode_tokens_bytes(self, tokens: Iterable[int]) -> list:
        """The bytes of each id, as a list (ids as in :meth:`decode_single_token_bytes`)."""
        token_bytes = self._core.token_bytes
        return [token_bytes(operator.index(t)) for t in tokens]

    def encode_with_offsets(self, text: str, *, unit: str = "chars",
                            allowed_special: AllowedSpecial = frozenset(),
                            disallowed_special: DisallowedSpecial = "all",
                            add_special_tokens: bool = False, flat: bool = False) -> tuple:
        """``(ids, spans)``: :meth:`encode`'s ids (same special-token
        arguments) and, for each, the ``(start, end)`` of the original
        ``text`` it came from, through normalization, counted in ``unit``:
        ``"chars"`` (code points, Python's indices), ``"bytes"`` (of the
        UTF-8) or ``"utf16"`` (code units, as JavaScript and Java count).
        The ids and spans come from one walk of the text.

        Spans cover whole characters: a token holding part of a character
        (a byte-level token of half an emoji) spans the whole character, as
        ``tokenizers`` does; SentencePiece's byte pieces of one character
        give the last of them the character and the others an empty span at
        its start, as ``sentencepiece`` does. A token that covers no text (a
        dummy-prefix ``▁`` of its own) gets an empty span where it stands;
        one that ``add_special_tokens=True`` adds (BOS, ``[CLS]``) gets
        ``(0, 0)``, as ``tokenizers`` gives it. Spans equal ``tokenizers``'
        offsets for a ``tokenizer.json`` (with ``allowed_special="all"``)
        and ``sentencepiece``'s byte ``begin``/``end`` for a ``.model``.
        With ``flat=True`` the result is an ``array('I')`` of ids and an
        ``array('q')`` of start and end in turn (no Python object a token).

        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=r"\\S+|\\s+",
        ...     tokens=tuple(bytes([i]) for i in range(256)) + (b"hi",)))
        >>> enc.encode_with_offsets("hi \U0001f600")
        ([256, 32, 240, 159, 152, 128], [(0, 2), (2, 3), (3, 4), (3, 4), (3, 4), (3, 4)])
        >>> enc.encode_with_offsets("hi \U0001f600", unit="utf16")[1][2:]
        [(3, 5), (3, 5), (3, 5), (3, 5)]
        >>> enc.encode_with_offsets("hi", flat=True)
        (array('I', [256]), array('q', [0, 2]))
        """
        allowed = self._allowed_mask(allowed_special, disallowed_special, text)
        return spans_in(self._core, text, allowed, unit, add_special_tokens, flat)

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple:
        """``(text, offsets)``: ``text`` is :meth:`decode` of the ids (strict
        UTF-8: ``UnicodeDecodeError`` where that is not valid, as tiktoken),
        and ``offsets[i]`` the index of the character of ``text`` where
        token ``i`` starts.

        A token starts where the text it leaves in ``text`` starts. A token
        that starts inside a multi-byte character is given that character's
        index (as tiktoken does); one that leaves nothing -- a control token,
        a byte piece whose character the next one completes, a space that
        decoding drops (SentencePiece's dummy prefix, llama.cpp's clean-up of
        `` ,``) -- gets the index of the next character. For tiktoken
        encodings, where decoding is the concatenation, this is tiktoken's
        result.

        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=".", tokens=tuple(bytes([i]) for i in range(256))))
        >>> enc.decode_with_offsets([104, 0xC3, 0xA9, 33])
        ('hé!', [0, 1, 1, 2])
        >>> spm = Encoding.from_vocabulary(Vocabulary(
        ...     name="u", model="unigram", byte_level=False, unk_id=0, add_dummy_prefix=True,
        ...     escape_whitespaces=True, tokens=(b"<unk>", b"<s>", "▁a".encode(), b"b"),
        ...     scores=(0.0, 0.0, -1.0, -2.0), token_types=(2, 3, 1, 1)))
        >>> spm.decode_with_offsets([1, 2, 3, 2])
        ('ab a', [0, 0, 1, 2])
        """
        data, starts = self._core.decode_with_offsets(
            tokens if isinstance(tokens, (list, tuple)) else list(tokens))
        text = data.decode("utf-8", errors="strict")
        return text, _char_offsets(data, starts)

    # ------------------------------------------------------------ vocabulary facts

    def token_byte_values(self) -> list:
        """The bytes of every ordinary (not special) token, sorted, as
        :meth:`decode_single_token_bytes` gives them: one entry per id
        (SentencePiece's ``▁t`` as ``b" t"``, a byte piece as its byte).

        >>> Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=".", tokens=(b"b", b"a"),
        ...     special_tokens={"<e>": 2})).token_byte_values()
        [b'a', b'b']
        """
        return self._core.token_byte_values()

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>``; in a vocabulary without it (GGUF,
        SentencePiece), the end-of-sequence id the file names.

        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=".",
        ...     tokens=tuple(bytes([i]) for i in range(256)), special_tokens={"<|endoftext|>": 256}))
        >>> enc.eot_token
        256
        """
        found = self._special_tokens.get("<|endoftext|>")
        if found is None:
            found = self.vocabulary.eos_id
        if found is None:
            raise FasttokError(f"{self.name}: the vocabulary has no <|endoftext|> token and "
                               "names no end-of-sequence token")
        return found

    @functools.cached_property
    def special_tokens_set(self) -> frozenset:
        """The special token strings: the ones ``allowed_special`` and
        ``disallowed_special`` govern. A GGUF file's user-defined tokens are
        not among them: llama.cpp matches them in any text, so they are
        ordinary added tokens (see :mod:`fasttok.formats.gguf`)."""
        return frozenset(self._special_tokens)

    def is_special_token(self, token: int) -> bool:
        """Whether an id is one of the special tokens (of :attr:`special_tokens_set`)."""
        return operator.index(token) in self._special_ids

    @functools.cached_property
    def _special_ids(self) -> frozenset:
        return frozenset(self._special_tokens.values())

    @property
    def pattern(self) -> Optional[str]:
        """The pre-tokenizer's regex (tiktoken's ``pat_str``); ``None`` for a
        vocabulary split another way (GGUF, SentencePiece).

        >>> Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=".", tokens=tuple(bytes([i]) for i in range(256)))).pattern
        '.'
        """
        return self._pat_str

    @property
    def n_vocab(self) -> int:
        """The largest id plus one (ordinary and special tokens)."""
        return self._max_token_value + 1

    @property
    def max_token_value(self) -> int:
        """The largest id in use."""
        return self._max_token_value

    @functools.cached_property
    def _mergeable_ranks(self) -> dict:
        return self.vocabulary.mergeable_ranks

    # ------------------------------------------------------------ pickling

    def __getstate__(self) -> object:
        if self._pickle_by_name:
            return self.name
        return {"vocabulary": self.vocabulary}

    def __setstate__(self, state: object) -> None:
        if isinstance(state, str):
            other = registry.resolve("fasttok:get_encoding")(state)
            self.__dict__.update(other.__dict__)
            self._bind_ordinary()  # other's holds other
            return
        assert isinstance(state, dict)
        self._setup(state["vocabulary"], None, False)
