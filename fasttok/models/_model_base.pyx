"""The base class of every model: the required methods named, the rest written once.

A model (:mod:`fasttok.models.interface` lists what :class:`fasttok.Encoding`
calls) must say how it encodes a text (``encode``), what one id stands for
(``token_bytes``), which special token a text holds (``find_special``), which
id a token's bytes are (``find_token``), how raw bytes merge as one piece
(``encode_bytes_piece``) and which bytes its ordinary tokens are
(``token_byte_values``), and carry ``special_order`` and ``post_processor``.
Everything else has a default here, derived from those: ordinary encoding
is ``encode(text, None)``, the entry :class:`fasttok.Encoding` binds for its
common calls ``encode`` itself, counts are lengths, batches and arrays are
``encode`` text by text, decoding is the concatenation of ``token_bytes``
(its offsets the running sum, its stream each id's bytes as they come), and
what a model cannot do (pieces, sampling) is refused with a
:class:`~fasttok.errors.FasttokError` saying what to use instead. A model
overrides a default where it has a faster way (a compiled batch) or a
different rule (a decode that cleans up spaces overrides ``decode_bytes``,
``decode_with_offsets`` and ``stream_decoder`` together).

It is a ``cdef class`` so that the compiled models (``CoreBPE``,
``SentencePieceCore``), which can derive from one extension type only,
share it with the Python ones. It holds no state: a default reads only
the model's own methods and attributes.

>>> class Letters(ModelBase):
...     special_order = ()
...     post_processor = list
...     def encode(self, text, allowed):
...         return [ord(c) - 96 for c in text]
...     def token_bytes(self, token):
...         return bytes([token + 96])
>>> m = Letters()
>>> m.count("abc", None), m.encode_many(["ab", "c"], None), m.decode_with_offsets([1, 2])
(3, [[1, 2], [3]], (b'ab', [0, 1]))
>>> m.find_token(b"a")
Traceback (most recent call last):
NotImplementedError: Letters does not define find_token, which every model must (see fasttok.models.interface)
"""

from array import array

from cpython.bytes cimport PyBytes_AS_STRING
from libc.stdint cimport uint8_t, uint16_t, uint32_t

from fasttok.errors import FasttokError
from fasttok.shared.batching import ChunkedBatchJob

__all__ = ["ModelBase", "TokenBytesStream", "REQUIRED_METHODS", "REQUIRED_ATTRIBUTES",
           "in_normal_form", "normal_first", "spelled_spans"]


cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object text)
    int PyUnicode_KIND(object text)
    const void* PyUnicode_DATA(object text)
    Py_ssize_t PyUnicode_GET_LENGTH(object text)

#: the methods every model defines itself (the base's stand-ins only raise)
REQUIRED_METHODS = ("encode", "token_bytes", "find_special", "find_token", "encode_bytes_piece",
                    "token_byte_values")
#: the attributes every model sets (the base has none)
REQUIRED_ATTRIBUTES = ("special_order", "post_processor")


def spelled_spans(tokens, token_bytes, str text):
    """Each token's span of ``text``'s UTF-8, start and end in turn (an
    ``array('q')``), where the tokens' bytes (``token_bytes(token)``),
    joined, are that UTF-8: the running sum of their lengths; ``None``
    where they spell another text.

    >>> spelled_spans([1, 0], [b"a", b"bc"].__getitem__, "bca")
    array('q', [0, 2, 2, 3])
    >>> spelled_spans([1], [b"a", b"bc"].__getitem__, "a") is None
    True
    """
    cdef Py_ssize_t pos = 0
    spans = array("q")
    pieces = []
    for token in tokens:
        piece = token_bytes(token)
        spans.append(pos)
        pos += len(piece)
        spans.append(pos)
        pieces.append(piece)
    return spans if b"".join(pieces) == text.encode("utf-8", "surrogatepass") else None


def _required(model, str name):
    return NotImplementedError(f"{type(model).__name__} does not define {name}, which every "
                               "model must (see fasttok.models.interface)")


ctypedef fused unit_t:
    uint8_t
    uint16_t
    uint32_t


cdef enum:
    WITHIN_BLOCK = 32  # units passed together (_units_within)
    N_PAGES = 0x1100  # pages of 256 code points in Unicode's 0x110000
    PAGE_BYTES = 32  # a page's bitmap


def _paged(bytes ranges):
    """``ranges`` (first and last code point of each, 32-bit words) as the
    table ``_units_within`` reads: a 32-bit count of the code points from 0
    that lie in them, ``N_PAGES`` 16-bit words (the number of each page's
    bitmap), then the bitmaps of ``PAGE_BYTES`` bytes: bitmap 0 is clear
    (a page none of whose code points lies in them), 1 is set (one all of
    whose do), and each from 2 is a page's where some do. Two ranges
    meeting in a page share its bitmap.

    >>> table = _paged(array("I", [0, 0x2FF, 0x4E00, 0x9FFF, 0x2010, 0x2027]).tobytes())
    >>> array("I", table[:4])[0], array("H", table[4:4 + 2 * 0x31])[::0x10].tolist()
    (768, [1, 0, 2, 0])
    """
    words = array("I", ranges).tolist()
    full, partial = set(), {}
    for first, last in zip(words[::2], words[1::2]):
        for page in range(first >> 8, (min(last, 0x10FFFF) >> 8) + 1):
            lo, hi = max(first, page << 8), min(last, (page << 8) | 255)
            if hi - lo == 255:
                full.add(page)
                continue
            bitmap = partial.setdefault(page, bytearray(PAGE_BYTES))
            for c in range(lo, hi + 1):
                bitmap[(c & 255) >> 3] |= 1 << (c & 7)
    pages = array("H", bytes(2 * N_PAGES))
    bitmaps = [bytes(PAGE_BYTES), b"\xff" * PAGE_BYTES]
    for page, bitmap in sorted(partial.items()):
        if page not in full:
            pages[page] = len(bitmaps)
            bitmaps.append(bytes(bitmap))
    for page in full:
        pages[page] = 1
    low = 0
    while low < 0x110000 and bitmaps[pages[low >> 8]][(low & 255) >> 3] >> (low & 7) & 1:
        low += 1
    return array("I", [low]).tobytes() + pages.tobytes() + b"".join(bitmaps)


# the table of the ranges asked last, and of the few asked before
cdef object _last_ranges = None
cdef bytes _last_table = None
cdef dict _tables = {}


cdef inline uint32_t _in_pages(const uint16_t* pages, uint32_t c) noexcept:
    # 1 if c lies in the ranges, else 0: two loads and no branch (a page
    # all in or all out has a bitmap too), since the units of a line move
    # between pages that are whole and pages that are not
    return ((<const uint8_t*>(pages + N_PAGES))[pages[c >> 8] * PAGE_BYTES + ((c & 255) >> 3)]
            >> (c & 7)) & 1


cdef inline bint _units_within(const unit_t* units, Py_ssize_t n, const uint16_t* pages,
                               uint32_t low) noexcept:
    # whether every unit lies in the ranges of the table (_paged) whose
    # pages are given, low: how many code points from 0 lie in them (the
    # forms' ASCII and Latin). A block whose units or-ed together (at
    # least the greatest of them; an or is one SSE2 instruction for 8 or 16
    # units, the greatest of unsigned 16-bit units is not) lie below low
    # passes whole; another's units from low on are each read from their
    # page's bitmap, and the block fails if one is not set. A search of the
    # ranges for each unit outside the last one's range instead took ~20
    # instructions a character of multi.txt, whose lines move between
    # scripts, digits and punctuation. (Every unit read from its page, or a
    # branch on whole pages first: estimated cycles within 0.6% of this.)
    cdef Py_ssize_t i, b = 0, stop
    cdef unit_t bits
    cdef uint32_t every
    while b < n:
        stop = b + WITHIN_BLOCK if n - b > WITHIN_BLOCK else n
        bits = 0
        for i in range(b, stop):
            bits |= units[i]
        if bits >= low:
            every = 1
            for i in range(b, stop):
                if units[i] >= low:
                    every &= _in_pages(pages, units[i])
            if not every:
                return False
        b = stop
    return True


cdef bint _within(str text, bytes ranges) except -1:
    # whether every character of text lies in one of ranges (first and last
    # code point of each, 32-bit words); a loop compiled for each unit width
    # (four bytes: a line with an emoji), since reading a unit of any width
    # was a switch a character and cost as much as the quick check it saves
    global _last_ranges, _last_table
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef const uint8_t* table
    cdef const uint16_t* pages
    cdef uint32_t low
    if ranges is not _last_ranges:
        found = _tables.get(ranges)
        if found is None:
            if len(_tables) >= 16:
                _tables.clear()
            found = _tables[ranges] = _paged(ranges)
        _last_table = found
        _last_ranges = ranges
    table = <const uint8_t*>PyBytes_AS_STRING(_last_table)
    low = (<const uint32_t*>table)[0]
    pages = <const uint16_t*>(table + 4)
    if kind == 2:
        return _units_within(<const uint16_t*>data, n, pages, low)
    if kind == 1:
        return _units_within(<const uint8_t*>data, n, pages, low)
    if kind == 4:
        return _units_within(<const uint32_t*>data, n, pages, low)
    return False


cdef bint in_form(str text, object is_normalized, bytes ranges) except -1:
    return PyUnicode_IS_ASCII(text) or _within(text, ranges) or is_normalized(text)


cpdef bint in_normal_form(str text, object stage) except -1:
    """Whether ``text`` is in the normal form of ``stage``, a Unicode form's
    normalizer (``None``: no form, so every text is): ASCII, made of the
    stage's ``stable_ranges`` alone, or passing its quick check
    ``is_normalized(text)``, in that order (the cheap tests first). What a
    walk asks before it hands a text to the compiled core as it is.

    >>> from fasttok.normalizers.unicode_forms import NFC
    >>> in_normal_form("caf\\u00e9", NFC()), in_normal_form("cafe\\u0301", NFC())
    (True, False)
    >>> in_normal_form("cafe\\u0301", None)
    True
    """
    # ASCII before the stage's two attributes are read (a bound method made
    # each call): most texts a walk is given stop here
    return stage is None or PyUnicode_IS_ASCII(text) or in_form(
        text, stage.is_normalized, stage.stable_ranges)


def normal_first(text, tuple entry):
    """``entry`` is ``(plain_call, argument, call, is_normalized, ranges)``:
    ``plain_call(text, argument)`` for a ``str`` in normal form (ASCII, all
    its characters within ``ranges``, or ``is_normalized(text)``),
    ``call(text, argument)`` for any other text. ``ranges``: code point
    ranges whose characters each leave a text in normal form (the stage's
    ``stable_ranges``: first and last of each, 32-bit words). The
    :meth:`ModelBase.encoder` of a model whose normalizer is a Unicode
    normal form, which leaves such text as it is, pairs it with that
    ``entry``: a line in normal form reaches the compiled core with no
    Python frame.

    >>> from array import array
    >>> entry = (lambda text, a: "core", None, lambda text, a: "normalized first",
    ...          lambda text: "\\u0301" not in text, array("I", [0, 0xFF]).tobytes())
    >>> normal_first("caf\\u00e9", entry), normal_first("\\u0107", entry), normal_first("cafe\\u0301", entry)
    ('core', 'core', 'normalized first')
    """
    if type(text) is str and in_form(text, entry[3], entry[4]):
        return entry[0](text, entry[1])
    return entry[2](text, entry[1])


class TokenBytesStream:
    """Each id's bytes as they come: the stream of a model whose decode is
    the concatenation of its tokens' bytes (tiktoken's).

    >>> s = TokenBytesStream({1: b"a", 2: b"b"}.__getitem__)
    >>> s.push(1) + s.push(2) + s.flush()
    b'ab'
    """

    __slots__ = ("push",)

    def __init__(self, token_bytes):
        self.push = token_bytes

    def flush(self):
        """Nothing is ever held back."""
        return b""


cdef class ModelBase:
    """What every model offers beyond its required methods (see the module notes)."""

    #: whether tiktoken's own internals apply (see ``fasttok.models.interface.Model``)
    tiktoken_pieces = False
    #: whether a window of text encoded alone gives the whole text's ids after
    #: its first ones, and what encodes windows where it does not (see
    #: ``fasttok.models.interface.Model``)
    windows_exact = True
    scored_windows = None
    #: whether an appender may cut inside a pre-token (at an edge of text
    #: without whitespace), see ``fasttok.models.interface.Model``
    cuts_inside_words = True
    #: what refusals call the model's kind ("byte-level BPE"); None: its class name
    kind = None
    #: the vocabulary name refusals start with, or None
    label = None

    # ------------------------------------------------------------ required

    def encode(self, text, allowed):
        """The ids of ``text``; ``allowed`` masks ``special_order``, or is None. Required."""
        raise _required(self, "encode")

    def token_bytes(self, token):
        """The bytes one id stands for; ``KeyError`` for an unknown id. Required."""
        raise _required(self, "token_bytes")

    def find_special(self, text, mask):
        """The index in ``special_order`` of a special ``mask`` selects that
        ``text`` holds, or -1. Required."""
        raise _required(self, "find_special")

    def find_token(self, data):
        """The id of the ordinary token spelled ``data``, or -1. Required."""
        raise _required(self, "find_token")

    def encode_bytes_piece(self, piece):
        """The ids of raw bytes merged as one piece, no pre-tokenizer. Required."""
        raise _required(self, "encode_bytes_piece")

    def token_byte_values(self):
        """:meth:`token_bytes` of every ordinary id, sorted. Required."""
        raise _required(self, "token_byte_values")

    # ------------------------------------------------------------ encoding

    def encode_ordinary(self, text):
        """``encode(text, None)``: special token strings as plain text."""
        return self.encode(text, None)

    def encoder(self, allowed):
        """``(call, argument)`` such that ``call(text, argument)`` is
        ``encode(text, allowed)`` for a ``str``, or ``None`` for a text the
        model leaves to :meth:`encode`: what :meth:`fasttok.Encoding.encode`
        binds once for its common calls, so that they reach a compiled call
        with no Python method between. This default is ``encode`` itself; a
        model whose ``encode`` is a Python layer over a compiled one gives
        that one.

        >>> class Chars(ModelBase):
        ...     def encode(self, text, allowed):
        ...         return [ord(c) for c in text]
        >>> call, argument = Chars().encoder(b"")
        >>> call("hi", argument)
        [104, 105]
        """
        return self.encode, allowed

    def count(self, text, allowed=None):
        """How many ids :meth:`encode` gives."""
        return len(self.encode(text, allowed))

    def encode_many(self, texts, allowed=None):
        """:meth:`encode` of each text."""
        return [self.encode(t, allowed) for t in texts]

    def encode_many_flat(self, texts, allowed=None):
        """:meth:`encode_many`'s ids in one ``array('I')`` and where each
        text's start, ``array('Q')``.

        >>> class Chars(ModelBase):
        ...     def encode(self, text, allowed):
        ...         return [ord(c) for c in text]
        >>> Chars().encode_many_flat(["ab", "c"], None)
        (array('I', [97, 98, 99]), array('Q', [0, 2, 3]))
        """
        ids = array("I")
        offsets = array("Q", [0])
        for one in self.encode_many(texts, allowed):
            # fromlist sizes the array once; extend grows it an id at a time
            # through the iterator (~200 instructions an id)
            if type(one) is list:
                ids.fromlist(one)
            else:
                ids.extend(one)
            offsets.append(len(ids))
        return ids, offsets

    def count_many(self, texts, allowed=None):
        """:meth:`count` of each text."""
        return [self.count(t, allowed) for t in texts]

    def batch_job(self, texts, allowed, how, num_threads):
        """Chunks of ``texts`` through the batch call ``how`` names, for
        ``num_threads`` threads (:class:`~fasttok.shared.batching.ChunkedBatchJob`)."""
        return ChunkedBatchJob(self, texts, allowed, how, num_threads)

    def encode_to_array(self, text, allowed=None):
        """:meth:`encode` as an ``array('I')``."""
        return array("I", self.encode(text, allowed))

    def encode_with_offsets(self, text, allowed):
        """``(ids, spans, unit)``: :meth:`encode`'s ids with each one's span of
        ``text``, start and end in turn in one flat sequence, counted in
        ``unit`` (``"bytes"`` of its UTF-8 or ``"chars"``), from the walk
        that gives the ids. This default serves a model whose tokens' bytes,
        joined, are ``text``'s UTF-8 (byte-level BPE): each id spans its own
        bytes, the running sum of their lengths. Any other model refuses.

        >>> class Two(ModelBase):
        ...     def encode(self, text, allowed):
        ...         return [1, 0] if text == "bca" else [0]
        ...     def token_bytes(self, token):
        ...         return [b"a", b"bc"][token]
        >>> Two().encode_with_offsets("bca", None)
        ([1, 0], array('q', [0, 2, 2, 3]), 'bytes')
        >>> Two().encode_with_offsets("x", None)
        Traceback (most recent call last):
        fasttok.errors.FasttokError: offsets need the walk's spans: Two's tokens do not spell the text
        """
        ids = self.encode(text, allowed)
        spans = spelled_spans(ids, self.token_bytes, text)
        if spans is None:
            raise self._refusal("offsets need the walk's spans: {}'s tokens do not spell the text")
        return ids, spans, "bytes"

    # ------------------------------------------------------------ what a model may lack

    def _refusal(self, str reason):
        subject = self.kind if self.kind is not None else type(self).__name__
        label = f"{self.label}: " if self.label is not None else ""
        return FasttokError(label + reason.format(subject))

    def sample(self, text, allowed, alpha, nbest_size, rng):
        """Refused: a model with one segmentation per word has nothing to draw."""
        raise self._refusal("a {} vocabulary has one segmentation per word, so it cannot "
                            "sample; sample=True is for BPE (dropout) and Unigram models")

    def encode_as_pieces(self, text):
        """Refused: pieces as strings are SentencePiece's."""
        raise self._refusal("pieces are given for SentencePiece models only; for {} use "
                            "decode_tokens_bytes(encode(text))")

    # ------------------------------------------------------------ decoding

    def decode_bytes(self, tokens):
        """The concatenation of each id's :meth:`token_bytes`."""
        return b"".join([self.token_bytes(t) for t in tokens])

    def decode_with_offsets(self, tokens):
        """``decode_bytes(tokens)`` and the byte index in it where each id
        starts: for a decode that concatenates, the running sum of the ids'
        lengths.

        >>> class Two(ModelBase):
        ...     def token_bytes(self, token):
        ...         return [b"a", b"bc", b"<e>"][token]
        >>> Two().decode_with_offsets([1, 2, 0])
        (b'bc<e>a', [0, 2, 5])
        """
        cdef Py_ssize_t pos = 0
        sequence = tokens if type(tokens) is list or type(tokens) is tuple else list(tokens)
        starts = []
        for token in sequence:
            starts.append(pos)
            pos += len(self.token_bytes(token))
        return self.decode_bytes(sequence), starts

    def stream_decoder(self):
        """A :class:`TokenBytesStream` of :meth:`token_bytes`."""
        return TokenBytesStream(self.token_bytes)
