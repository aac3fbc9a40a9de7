"""Token spans from one unit of a text into another: UTF-8 bytes, code points, UTF-16.

A model's walk notes each token's span in the unit it works in: UTF-8 bytes
(SentencePiece's alignment, the running sum of byte-level tokens) or code
points (``tokenizers``' walks, the byte-level core). :func:`spans_in_unit`
gives them in the unit the caller's host counts in: ``"bytes"`` (Rust, C,
llama.cpp), ``"chars"`` (Python indices) or ``"utf16"`` (JavaScript, Java,
the Language Server Protocol).

Contract. Every span covers whole characters. A byte offset inside a
character (a byte-level token holding half of an emoji) moves to the
character's edge: a start back to where the character starts, an end on to
where it ends -- ``tokenizers``' ``ByteLevel`` rule, so each such token
spans the whole character in every unit, and converting spans between the
three units loses nothing. A code point counts as its UTF-8 length in
bytes (3 for a lone surrogate, the length of the U+FFFD it is encoded as)
and as one UTF-16 unit, two past U+FFFF.

How. One cursor walks the text's code points with its position in all three
units, forward to each offset asked for and back when an offset is before it
(the spans of a walk are in text order but for a token inside the last
one's character), so converting costs the text's length plus the tokens',
without a table per character. An ASCII text, code points to code points, or code
points to UTF-16 for a text within the BMP, copies.

>>> from array import array
>>> spans_in_unit("h\\U0001f600!", array("i", [0, 1, 1, 2, 2, 3]), "chars", "utf16")
[(0, 1), (1, 3), (3, 4)]
>>> spans_in_unit("h\\U0001f600!", array("q", [0, 1, 1, 3, 3, 5, 5, 6]), "bytes", "chars")
[(0, 1), (1, 2), (1, 2), (2, 3)]
"""

from array import array

from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.stdint cimport int32_t, int64_t, uint32_t
from libc.stdlib cimport free, malloc

from fasttok.shared.gc_pause import gc_paused

__all__ = ["spans_in_unit", "UNITS"]

#: the units a span may be counted in
UNITS = ("bytes", "chars", "utf16")

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object text)
    int PyUnicode_KIND(object text)
    const void* PyUnicode_DATA(object text)
    Py_ssize_t PyUnicode_GET_LENGTH(object text)
    object PyLong_FromLongLong(long long v)


ctypedef fused offset_t:
    int32_t
    int64_t


cdef int _unit_code(str unit, str name) except -1:
    if unit == "bytes":
        return UNIT_BYTES
    if unit == "chars":
        return UNIT_CHARS
    if unit == "utf16":
        return UNIT_UTF16
    raise ValueError(f"{name} must be one of 'bytes', 'chars', 'utf16', not {unit!r}")


cdef inline uint32_t _code_point(const void* data, int kind, Py_ssize_t i) noexcept nogil:
    if kind == 1:
        return (<const unsigned char*>data)[i]
    if kind == 2:
        return (<const unsigned short*>data)[i]
    return (<const uint32_t*>data)[i]


cdef inline int64_t _utf8_width(uint32_t cp) noexcept nogil:
    return 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4


cdef inline int64_t _utf16_width(uint32_t cp) noexcept nogil:
    return 2 if cp >= 0x10000 else 1


cdef inline void _step_forward(Cursor* c) noexcept nogil:
    cdef uint32_t cp = _code_point(c.data, c.kind, c.chars)
    c.chars += 1
    c.bytes += _utf8_width(cp)
    c.utf16 += _utf16_width(cp)


cdef inline void _step_back(Cursor* c) noexcept nogil:
    c.chars -= 1
    cdef uint32_t cp = _code_point(c.data, c.kind, c.chars)
    c.bytes -= _utf8_width(cp)
    c.utf16 -= _utf16_width(cp)


cdef inline int64_t _position(const Cursor* c, int unit) noexcept nogil:
    return c.bytes if unit == UNIT_BYTES else c.chars if unit == UNIT_CHARS else c.utf16


cdef int64_t move_to(Cursor* c, int64_t offset, int source, int target,
                     bint is_end) noexcept nogil:
    """The cursor moved to ``offset`` (counted in ``source``; inside a
    character: to its start, or with ``is_end`` to its end), and that
    position in ``target``. An offset past the text stops at its end."""
    if offset < 0:
        offset = 0
    while _position(c, source) > offset:
        _step_back(c)
    while c.chars < c.length and _position(c, source) < offset:
        _step_forward(c)
    if not is_end and _position(c, source) > offset:
        _step_back(c)
    return _position(c, target)


cdef int convert_offsets(Cursor* c, int64_t* offsets, Py_ssize_t n, int source,
                         int target) noexcept nogil:
    """Each of ``offsets[0:n]`` (start and end in turn) from ``source`` to
    ``target``, in place."""
    cdef Py_ssize_t i
    for i in range(n):
        offsets[i] = move_to(c, offsets[i], source, target, i & 1)
    return 0


cdef list _pairs(const int64_t* offsets, Py_ssize_t n):
    # the (start, end) tuples; a token's start is most often the last one's
    # end, whose int it then shares (half the ints to make)
    cdef list out = PyList_New(n // 2)
    cdef Py_ssize_t i
    cdef int64_t last = -1
    cdef tuple pair
    cdef object a, b = None
    with gc_paused():   # tuples by the million: no collection in between
        for i in range(n // 2):
            a = b if offsets[2 * i] == last else PyLong_FromLongLong(offsets[2 * i])
            last = offsets[2 * i + 1]
            b = a if last == offsets[2 * i] else PyLong_FromLongLong(last)
            pair = PyTuple_New(2)
            Py_INCREF(a)
            PyTuple_SET_ITEM(pair, 0, a)
            Py_INCREF(b)
            PyTuple_SET_ITEM(pair, 1, b)
            Py_INCREF(pair)
            PyList_SET_ITEM(out, i, pair)
    return out


def spans_in_unit(str text not None, const offset_t[::1] spans, str source not None,
                  str unit not None, bint flat=False):
    """``spans`` (start and end of each token in turn, counted in
    ``source``: ``"bytes"`` of ``text``'s UTF-8 or ``"chars"``) as a list
    of ``(start, end)`` counted in ``unit`` (``"bytes"``, ``"chars"`` or
    ``"utf16"``), each span widened to whole characters (see the module
    docstring); with ``flat``, as one ``array('q')`` of start and end in
    turn (no Python object a token).

    >>> from array import array
    >>> spans_in_unit("é1", array("i", [0, 1, 1, 2]), "chars", "bytes")
    [(0, 2), (2, 3)]
    >>> spans_in_unit("é", array("i", [0, 1, 1, 2]), "bytes", "bytes", flat=True)
    array('q', [0, 2, 0, 2])
    """
    cdef int src = _unit_code(source, "source"), dst = _unit_code(unit, "unit")
    cdef Py_ssize_t n = spans.shape[0], i
    cdef Cursor c
    if src == UNIT_UTF16:
        raise ValueError("source must be 'bytes' or 'chars'")
    if n % 2:
        raise ValueError(f"spans must hold a start and an end for each token, got {n} offsets")
    cdef int64_t* offsets = <int64_t*>malloc((n + 1) * sizeof(int64_t))
    if offsets == NULL:
        raise MemoryError()
    try:
        c.data = PyUnicode_DATA(text)
        c.kind = PyUnicode_KIND(text)
        c.length = PyUnicode_GET_LENGTH(text)
        c.chars = c.bytes = c.utf16 = 0
        for i in range(n):
            offsets[i] = spans[i]
        # the same numbers in both units: nothing to move (a byte offset
        # inside a character, which moves to its edge, needs a non-ASCII
        # text), only an offset past either end to that end
        if PyUnicode_IS_ASCII(text) or src == dst == UNIT_CHARS or (
                c.kind != 4 and src == UNIT_CHARS and dst == UNIT_UTF16):
            for i in range(n):
                offsets[i] = min(max(offsets[i], 0), c.length)
        else:
            with nogil:
                convert_offsets(&c, offsets, n, src, dst)
        if flat:
            out = array("q")
            out.frombytes((<char*>offsets)[:n * sizeof(int64_t)])
            return out
        return _pairs(offsets, n)
    finally:
        free(offsets)


# Performance notes (CPU time under load ~8, medians; /tmp/i2/conv.py,
# /tmp/i2/speed2.py of session 11).
#
# * The (start, end) tuples are most of encode_with_offsets where the walk
#   notes spans as it goes: cl100k's 257k tokens of 1 MB of ASCII en.txt,
#   ~36 ms of tuples (list(zip(...)) of the same numbers took as long)
#   against ~14 ms for the walk's ids and spans. Sharing a start's int with
#   the last end's and pausing the collector while they are made: ~36 ->
#   ~34 ms (the collector off around the whole call: ~25 ms, the rest is
#   allocation). flat=True skips them: 20,000 lines of en.txt, cl100k
#   encode 7.8 ms, offsets 40.9, flat 19.8.
# * The cursor instead of a table from each source offset to each unit
#   (8 bytes an offset, 80 MB for a 10 MB text): spans are in text order
#   but for the pieces of one character, so the walk is linear. It is not
#   free: the 1.25M byte-fallback spans of zh.txt's first 20,000 lines
#   (botchan_unigram_4000_bytefallback.model), bytes to chars ~52 ms flat
#   (~48 bytes to bytes, mostly the walk too: the text is not ASCII), ~126
#   as tuples, against ~70 for the model's walk (/tmp/i2/zhconv.py). The
#   walk's per-offset cost (~40 ns: a unit switch and a kind switch a
#   step) is the next thing to take out.
