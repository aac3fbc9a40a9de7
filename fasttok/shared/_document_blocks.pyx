"""Documents of text and JSON Lines files as blocks of UTF-8, and the threads that encode them.

:class:`BlockReader` reads a binary file a block at a time and cuts it only
after a separator, so a :class:`Block` holds whole documents: their bytes
and each one's bounds, found with ``memchr`` without the GIL. A separator is
found left to right without overlap, as ``bytes.split`` finds it, wherever
the blocks fall. :meth:`Block.read_json` turns a block of JSON Lines into
the documents of one field: each line is read by an exact scanner of JSON
that decodes the field's string (escapes, surrogate pairs) into UTF-8; a
line it cannot vouch for (not an object, no such field, a field that is
not a string, a lone surrogate, a key with an escape, a number past 640
digits, nesting past 64) is handed back for ``json.loads`` to read or
refuse, so the documents and the errors are those of ``json.loads``.

:class:`FileJob` encodes blocks through a compiled model's
:class:`~fasttok.shared._document_encoder.DocumentEncoder` (no Python str
per document): each block is cut into chunks of about ``CHUNK_BYTES`` that
the calling thread and ``threads - 1`` helpers claim for the whole call (one
thread keeps its pre-token cache warm from the first block to the last);
the calling thread publishes a block's chunks, encodes chunks of the
blocks before it (never that block's, when there are helpers), and reads
the next block while the helpers encode it. Finished chunks are appended in order to one ``array('I')`` of ids and
one ``array('Q')`` of offsets, and their block is let go, so memory holds
the result, the blocks being read or encoded (two or three) and the ring's
buffers, whatever the file's size.

Invariants: a block's data is valid UTF-8 before any of it is encoded (the
caller checks :meth:`Block.invalid_utf8`); a chunk's block outlives it; ids
reach the result in document order whatever thread encoded them.

>>> import io
>>> reader = BlockReader(io.BytesIO(b"one\\ntwo\\n\\nfour\\n"), "d.txt", b"\\n", 6)
>>> [block.docs for block in iter(reader.next, None)]
[['one'], ['two', ''], ['four']]
"""

from array import array
from collections import deque

from cpython cimport array as carray
from cpython.pycapsule cimport PyCapsule_GetContext, PyCapsule_GetPointer
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memchr, memcmp, memcpy, memset

from fasttok.shared._document_encoder cimport DOCUMENT_ENCODER, DocumentEncoder
from fasttok.shared._growth cimport grow_array
from fasttok.shared._piece_cache cimport ft_pc_table, ft_pc_table_free, ft_pc_table_init
from fasttok.shared._utf8 cimport Utf8Text, utf8_put, utf8_text
from fasttok.shared._utf8_strict cimport ft_utf8_strict_length

cdef extern from *:
    """
    #define ft_db_allocated(a) (((arrayobject*)(a))->allocated)
    """
    Py_ssize_t array_allocated "ft_db_allocated"(object a)  # items an array has room for

cdef extern from "ft_utf8_simd.h" nogil:
    size_t ft_utf8_valid_prefix(const uint8_t* s, size_t n)

cdef extern from *:
    """
    #if defined(_MSC_VER)
    #include <intrin.h>
    #include <windows.h>
    #define FT_DB_FETCH_ADD(p, v) _InterlockedExchangeAdd((volatile long*)(p), (long)(v))
    #define FT_DB_CAS(p, e, v) \\
        (_InterlockedCompareExchange((volatile long*)(p), (long)(v), (long)(e)) == (long)(e))
    #define FT_DB_LOAD(p) _InterlockedOr((volatile long*)(p), 0)
    #define FT_DB_STORE(p, v) ((void)_InterlockedExchange((volatile long*)(p), (long)(v)))
    #define FT_DB_PAUSE() Sleep(0)
    #else
    #include <time.h>
    static void ft_db_pause(void) { struct timespec t = {0, 20000}; nanosleep(&t, NULL); }
    #define FT_DB_PAUSE() ft_db_pause()
    #define FT_DB_FETCH_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_ACQ_REL)
    static inline int ft_db_cas(long* p, long expected, long value) {
        return __atomic_compare_exchange_n(p, &expected, value, 0, __ATOMIC_ACQ_REL,
                                           __ATOMIC_ACQUIRE);
    }
    #define FT_DB_CAS(p, e, v) ft_db_cas((p), (e), (v))
    #define FT_DB_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
    #define FT_DB_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
    #endif
    #include <string.h>
    #if defined(__linux__)
    #include <sys/mman.h>
    #ifndef MADV_POPULATE_WRITE
    #define MADV_POPULATE_WRITE 23
    #endif
    #endif
    /* Maps the pages of [from, to) writable at once (Linux 5.14 on: one
     * call instead of a page fault a page, 84 against 102 ms for 133 MB
     * here); nothing elsewhere, or where the kernel refuses. */
    static void ft_db_populate(char* from, char* to) {
    #if defined(__linux__)
        uintptr_t start = (uintptr_t)from & ~(uintptr_t)4095;
        if ((uintptr_t)to > start)
            (void)madvise((void*)start, (uintptr_t)to - start, MADV_POPULATE_WRITE);
    #else
        (void)from; (void)to;
    #endif
    }
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__SSE2__)
    #include <emmintrin.h>
    #endif
    /* The pieces of s[start:end] before each byte c, appended to the growable
     * (*data, *len, *cap) as start, end pairs; returns where the piece after
     * the last c starts, or (size_t)-1 when memory ran out. 64 bytes a step
     * by four SSE2 compares, each c of the step's mask a piece: a document is
     * a line of a few dozen bytes, where a call of memchr a line cost more
     * than the search. */
    static size_t ft_db_cut_byte(const uint8_t* s, size_t start, size_t end, uint8_t c,
                                 uint64_t** data, size_t* len, size_t* cap) {
        size_t i = start, piece = start, used = *len, room;
        const uint8_t* hit;
        uint64_t* grown;
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__SSE2__)
        const __m128i wanted = _mm_set1_epi8((char)c);
        uint64_t mask;
        for (; i + 64 <= end; i += 64) {
            mask = (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
                       _mm_loadu_si128((const __m128i*)(s + i)), wanted))
                | (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
                       _mm_loadu_si128((const __m128i*)(s + i + 16)), wanted)) << 16
                | (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
                       _mm_loadu_si128((const __m128i*)(s + i + 32)), wanted)) << 32
                | (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
                       _mm_loadu_si128((const __m128i*)(s + i + 48)), wanted)) << 48;
            if (!mask)
                continue;
            if (used + 128 > *cap) {  /* room for the step's 64 pieces at most */
                room = *cap * 2 > used + 128 ? *cap * 2 : used + 128;
                grown = (uint64_t*)realloc(*data, room * sizeof(uint64_t));
                if (grown == NULL)
                    return (size_t)-1;
                *data = grown;
                *cap = room;
            }
            do {
                (*data)[used] = piece;
                piece = i + (size_t)__builtin_ctzll(mask);
                (*data)[used + 1] = piece;
                piece++;
                used += 2;
                mask &= mask - 1;
            } while (mask);
            *len = used;
        }
    #endif
        while (i < end && (hit = (const uint8_t*)memchr(s + i, c, end - i)) != NULL) {
            if (used + 2 > *cap) {
                room = *cap * 2 > used + 2 ? *cap * 2 : used + 2;
                grown = (uint64_t*)realloc(*data, room * sizeof(uint64_t));
                if (grown == NULL)
                    return (size_t)-1;
                *data = grown;
                *cap = room;
            }
            i = (size_t)(hit - s);
            (*data)[used] = piece;
            (*data)[used + 1] = i;
            used += 2;
            *len = used;
            piece = ++i;
        }
        return piece;
    }
    """
    void populate "ft_db_populate"(char* start, char* end) nogil
    long atomic_fetch_add "FT_DB_FETCH_ADD"(long* p, long v) nogil
    bint atomic_cas "FT_DB_CAS"(long* p, long expected, long value) nogil
    long atomic_load "FT_DB_LOAD"(long* p) nogil
    void atomic_store "FT_DB_STORE"(long* p, long v) nogil
    void short_pause "FT_DB_PAUSE"() nogil  # a few microseconds' sleep
    size_t cut_byte "ft_db_cut_byte"(const uint8_t* s, size_t start, size_t end, uint8_t c,
                                     uint64_t** data, size_t* len, size_t* cap) nogil

cdef enum:
    # bytes of documents a chunk takes (it ends after the document that
    # reaches it): under a millisecond of encoding, so a 1 MiB block is 16
    # chunks that threads share evenly and the per-chunk costs vanish
    CHUNK_BYTES = 64 << 10
    # a file's first block: reading, checking and cutting 4 MiB took 7 ms
    # while the helpers waited, 256 KiB 0.4 ms (then each block's read is
    # shorter than encoding the one before)
    FIRST_BLOCK = 256 << 10
    # chunks published and not yet collected, at most: 16 MiB of documents
    RING = 256
    # JSON: objects and arrays nested deeper, and numbers longer (the least
    # sys.set_int_max_str_digits allows), go to json.loads
    MAX_DEPTH = 64
    MAX_NUMBER = 640
    # what a line of JSON Lines is to the scanner
    LINE_BLANK = 0
    LINE_DOCUMENT = 1
    LINE_FALLBACK = 2
    # a chunk's state
    CHUNK_READY = 0
    CHUNK_ENCODED = 1


cdef Py_ssize_t invalid_utf8(const uint8_t* s, size_t n) noexcept nogil:
    # Where the first byte that is not part of valid UTF-8 is, or -1: the
    # valid prefix 32 bytes a step where the CPU has AVX2 (ft_utf8_simd.h),
    # then from where it stopped (a bad byte's step, or the last bytes) an
    # ASCII run 16 bytes a step and a run of multi-byte characters a
    # character a step by the lead byte's table (ft_utf8_strict.h), without
    # the word test (checking a word before each character took 12
    # instructions a byte of Chinese text).
    cdef size_t i = ft_utf8_valid_prefix(s, n), k
    cdef uint64_t w0, w1
    cdef uint8_t c
    while i < n:
        c = s[i]
        if c < 0x80:
            while i + 16 <= n:
                memcpy(&w0, s + i, 8)
                memcpy(&w1, s + i + 8, 8)
                if (w0 | w1) & 0x8080808080808080ULL:
                    break
                i += 16
            while i < n and s[i] < 0x80:
                i += 1
            continue
        k = ft_utf8_strict_length(s + i, n - i)
        if k == 0:
            return <Py_ssize_t>i
        i += k
    return -1


def first_invalid_utf8(const uint8_t[::1] data not None):
    """Where the first byte of ``data`` that is not valid UTF-8 stands, or
    -1 (``bytes.decode("utf-8")`` accepts ``data`` exactly when it is -1).

    >>> first_invalid_utf8(b"ok \\xe2\\x82\\xac"), first_invalid_utf8(b"ab\\xed\\xa0\\x80")
    (-1, 2)
    """
    if data.shape[0] == 0:
        return -1
    return invalid_utf8(&data[0], <size_t>data.shape[0])


# ------------------------------------------------------------------ cutting

cdef struct Bounds:
    uint64_t* data  # start, end of each document
    size_t len  # numbers used (two a document)
    size_t cap


cdef inline int _bound(Bounds* b, uint64_t start, uint64_t end) except -1 nogil:
    grow_array(<void**>&b.data, &b.cap, b.len + 2, sizeof(uint64_t), 256)
    b.data[b.len] = start
    b.data[b.len + 1] = end
    b.len += 2
    return 0


cdef struct Spare:
    # a block's buffers, with the room each has
    uint8_t* data
    size_t data_cap
    uint64_t* bounds
    size_t bounds_cap
    uint64_t* ends
    size_t ends_cap


cdef size_t _cut(const uint8_t* s, size_t start, size_t end, const uint8_t* sep, size_t sep_len,
                 Bounds* out) except? 0 nogil:
    # The pieces of s[start:end] before each separator, found left to right
    # without overlap, into out; returns where the piece after the last
    # separator starts (start when there is none).
    cdef size_t i = start, piece = start
    cdef const uint8_t* hit
    if sep_len == 1:
        piece = cut_byte(s, start, end, sep[0], &out.data, &out.len, &out.cap)
        if piece == <size_t>-1:
            with gil:
                raise MemoryError()
        return piece
    while i + sep_len <= end:
        hit = <const uint8_t*>memchr(s + i, sep[0], end - sep_len + 1 - i)
        if hit == NULL:
            break
        i = <size_t>(hit - s)
        if memcmp(hit + 1, sep + 1, sep_len - 1) != 0:
            i += 1
            continue
        _bound(out, piece, i)
        i += sep_len
        piece = i
    return piece


cdef size_t _count_newlines(const uint8_t* s, size_t n) noexcept nogil:
    cdef size_t count = 0, i = 0
    cdef const uint8_t* hit
    while i < n:
        hit = <const uint8_t*>memchr(s + i, 10, n - i)
        if hit == NULL:
            break
        count += 1
        i = <size_t>(hit - s) + 1
    return count


cdef class Block:
    """The documents cut from one block of a file: UTF-8 bytes and where each
    document lies in them, with the file, line and byte they came from for
    error messages. ``docs`` is the documents as str (for a model that
    takes str).

    >>> import io
    >>> block = BlockReader(io.BytesIO(b"a\\nb\\n"), "f.txt", b"\\n", 64).next()
    >>> len(block), block.docs, block.line_of(1), block.text()
    (2, ['a', 'b'], 2, 'a\\nb')
    """

    cdef uint8_t* data
    cdef size_t size
    cdef size_t data_cap  # bytes data holds room for
    cdef Bounds bounds
    cdef uint32_t* lines  # JSON Lines: each document's line from first_line; else NULL
    cdef uint64_t* ends  # FileJob: where each document's ids end in its chunk
    cdef size_t ends_cap
    cdef object reader  # the BlockReader its buffers go back to, or None
    cdef readonly str path
    cdef readonly Py_ssize_t first_line
    cdef readonly Py_ssize_t offset  # the file's byte where the block starts
    # documents json.loads read (their UTF-8, repaired, is in data too): by index
    cdef dict strings

    def __cinit__(self):
        self.data = NULL
        self.data_cap = 0
        self.bounds.data = NULL
        self.bounds.len = self.bounds.cap = 0
        self.lines = NULL
        self.ends = NULL
        self.ends_cap = 0
        self.reader = None
        self.strings = {}

    def __dealloc__(self):
        if self.reader is not None:
            (<BlockReader>self.reader)._keep(self)
        free(self.data)
        free(self.bounds.data)
        free(self.lines)
        free(self.ends)

    def __len__(self):
        return self.bounds.len // 2

    def invalid_utf8(self):
        """Where the block's first byte that is not UTF-8 is (from its
        start), or -1."""
        cdef Py_ssize_t at
        with nogil:
            at = invalid_utf8(self.data, self.size)
        return at

    def raw(self):
        """The block's bytes (for an error message, or decoding them with a
        rule for bad bytes)."""
        return (<char*>self.data)[:self.size] if self.size else b""

    def resplit(self, bytes data not None, bytes separator):
        """Take ``data`` as the block's bytes and cut it into documents at
        ``separator`` again (``None``: one document): the block's bytes
        decoded with ``errors="replace"`` and encoded back."""
        cdef size_t n = len(data), tail
        cdef uint8_t* grown = <uint8_t*>realloc(self.data, n + 1)
        if grown == NULL:
            raise MemoryError()
        self.data = grown
        self.data_cap = n + 1
        memcpy(self.data, <const char*>data, n)
        self.size = n
        self.bounds.len = 0
        tail = 0
        if separator is not None:
            tail = _cut(self.data, 0, n, <const uint8_t*><const char*>separator, len(separator),
                        &self.bounds)
        _bound(&self.bounds, tail, n)

    @property
    def docs(self):
        """Each document as a str."""
        cdef size_t i, start, end
        cdef list out = []
        for i in range(0, self.bounds.len, 2):
            found = self.strings.get(i // 2) if self.strings else None
            if found is None:
                start, end = self.bounds.data[i], self.bounds.data[i + 1]
                found = PyUnicode_DecodeUTF8(<const char*>self.data + start,
                                             <Py_ssize_t>(end - start), NULL)
            out.append(found)
        return out

    def text(self):
        """One str holding every document, so one search covers the block
        (a text block's own bytes; JSON Lines documents one after another):
        a special token in a document is in it."""
        return PyUnicode_DecodeUTF8(<const char*>self.data, <Py_ssize_t>self.size, "replace") \
            if self.size else ""

    def line_of(self, Py_ssize_t index):
        """The file's line (from 1) where document ``index`` starts."""
        if not 0 <= index < len(self):
            raise IndexError(index)
        if self.lines != NULL:
            return self.first_line + self.lines[index]
        return self.first_line + <Py_ssize_t>_count_newlines(self.data, self.bounds.data[2 * index])

    def read_json(self, bytes field not None):
        """Read the block's lines as JSON Lines: each line that is not blank
        becomes the document of its object's ``field`` (UTF-8, ``field``
        given as UTF-8). Returns ``[(index, number, line), ...]``: the
        documents whose line the scanner leaves to ``json.loads`` (``number``
        the line's, counted from ``first_line``; ``line`` its bytes), for
        :meth:`set_document`.

        >>> import io
        >>> data = b'{"text": "a\\\\u00e9"}\\n\\n[1]\\n'
        >>> block = BlockReader(io.BytesIO(data), "f", b"\\n", 99).next()
        >>> block.read_json(b"text"), len(block), block.line_of(1)
        ([(1, 2, b'[1]')], 2, 3)
        """
        cdef Bounds found, fallback
        cdef uint8_t* out = <uint8_t*>malloc(self.size + 1)
        cdef uint32_t* lines = NULL
        cdef size_t i, w = 0, start, doc_start, n_lines = self.bounds.len // 2, n_docs = 0
        cdef int kind
        cdef const uint8_t* name = <const uint8_t*><const char*>field
        cdef size_t name_len = len(field)
        found.data = fallback.data = NULL
        found.len = found.cap = fallback.len = fallback.cap = 0
        if out == NULL:
            raise MemoryError()
        try:
            lines = <uint32_t*>malloc((n_lines + 1) * sizeof(uint32_t))
            if lines == NULL:
                raise MemoryError()
            with nogil:
                for i in range(n_lines):
                    start = self.bounds.data[2 * i]
                    doc_start = w
                    kind = _json_line(self.data + start, self.bounds.data[2 * i + 1] - start,
                                      name, name_len, out, &w)
                    if kind == LINE_BLANK:
                        continue
                    if kind == LINE_FALLBACK:
                        w = doc_start
                        _bound(&fallback, n_docs, i)
                    _bound(&found, doc_start, w)
                    lines[n_docs] = <uint32_t>i
                    n_docs += 1
            handed = [(fallback.data[k], fallback.data[k + 1],
                       (<char*>self.data)[self.bounds.data[2 * fallback.data[k + 1]]:
                                          self.bounds.data[2 * fallback.data[k + 1] + 1]])
                      for k in range(0, fallback.len, 2)]
        except BaseException:
            free(out)
            free(lines)
            free(found.data)
            raise
        finally:
            free(fallback.data)
        free(self.data)
        free(self.bounds.data)
        free(self.lines)
        self.data_cap = self.size + 1
        self.data, self.size, self.bounds, self.lines = out, w, found, lines
        return handed

    def set_document(self, Py_ssize_t index, str text not None):
        """Make document ``index`` ``text`` (what ``json.loads`` read): its
        UTF-8 (a lone surrogate as U+FFFD, as the models read a str) goes
        after the block's bytes, and ``docs`` gives ``text`` itself."""
        cdef Utf8Text u
        cdef uint8_t* grown
        if not 0 <= index < len(self):
            raise IndexError(index)
        utf8_text(text, &u)
        try:
            grown = <uint8_t*>realloc(self.data, self.size + u.size + 1)
            if grown == NULL:
                raise MemoryError()
            self.data = grown
            self.data_cap = self.size + u.size + 1
            memcpy(self.data + self.size, u.data, u.size)
        finally:
            free(u.owned)
        self.bounds.data[2 * index] = self.size
        self.size += u.size
        self.bounds.data[2 * index + 1] = self.size
        self.strings[index] = text


cdef class BlockReader:
    """A binary file (anything with ``readinto``) read ``block_size`` bytes
    at a time (its first blocks 256 KiB, doubling up to that: the threads
    that encode wait for the first one), each :meth:`next` block cut after
    the last ``separator`` in what has been read (``None``: the whole file
    is one document); a document longer than a block makes the block grow
    to hold it. The
    pieces between separators are the documents; the empty piece after a
    final separator is none, and an empty file is one document only when
    ``separator`` is ``None``.

    >>> import io
    >>> reader = BlockReader(io.BytesIO(b"a<>b<>"), "f", b"<>", 3)
    >>> [block.docs for block in iter(reader.next, None)]
    [['a'], ['b']]
    """

    cdef object file
    cdef str path
    cdef bytes separator
    cdef size_t block_size
    cdef size_t read_size  # the next block's
    cdef bytes carry
    cdef Py_ssize_t line
    cdef Py_ssize_t offset
    cdef bint done
    cdef size_t last_bounds  # the block before's bounds: room made for as many at once
    # a let-go block's buffers, the next block's: their pages stay mapped
    # (a new 4 MiB block's were often faulted in afresh, ~2.8 us a page
    # here; on two threads 8k of the 72k faults of the bench's 107 MB)
    cdef Spare spare

    def __cinit__(self):
        memset(&self.spare, 0, sizeof(Spare))

    def __dealloc__(self):
        free(self.spare.data)
        free(self.spare.bounds)
        free(self.spare.ends)

    def __init__(self, file, str path not None, bytes separator, Py_ssize_t block_size):
        if separator is not None and not separator:
            raise ValueError("the separator is empty")
        if block_size < 1:
            raise ValueError("block_size must be 1 or more")
        self.file = file
        self.path = path
        self.separator = separator
        self.block_size = <size_t>block_size
        self.read_size = min(self.block_size, FIRST_BLOCK)
        self.carry = b""
        self.line = 1
        self.offset = 0
        self.done = False
        self.last_bounds = 0

    cdef void _keep(self, Block block) noexcept:
        # Takes the buffers of block (being let go) that it has none of
        if self.spare.data == NULL:
            self.spare.data, self.spare.data_cap = block.data, block.data_cap
            block.data = NULL
        if self.spare.bounds == NULL:
            self.spare.bounds, self.spare.bounds_cap = block.bounds.data, block.bounds.cap
            block.bounds.data = NULL
        if self.spare.ends == NULL:
            self.spare.ends, self.spare.ends_cap = block.ends, block.ends_cap
            block.ends = NULL

    def next(self):
        """The next :class:`Block`, or ``None`` after the last."""
        cdef Block block
        cdef size_t filled, cap, piece, got, sep_len
        cdef const uint8_t* sep
        cdef uint8_t* grown
        cdef bint end = False
        if self.done:
            return None
        block = Block.__new__(Block)
        block.path = self.path
        block.first_line = self.line
        block.offset = self.offset
        sep = <const uint8_t*><const char*>self.separator if self.separator is not None else NULL
        sep_len = len(self.separator) if self.separator is not None else 0
        filled = len(self.carry)
        cap = filled + self.read_size
        self.read_size = min(2 * self.read_size, self.block_size)
        block.reader = self
        block.data, block.data_cap = self.spare.data, self.spare.data_cap
        block.bounds.data, block.bounds.cap = self.spare.bounds, self.spare.bounds_cap
        block.ends, block.ends_cap = self.spare.ends, self.spare.ends_cap
        memset(&self.spare, 0, sizeof(Spare))
        if block.data_cap < cap + 1:
            grown = <uint8_t*>realloc(block.data, cap + 1)
            if grown == NULL:
                raise MemoryError()
            block.data, block.data_cap = grown, cap + 1
        memcpy(block.data, <const char*>self.carry, filled)
        # (grown from nothing, a block's bounds took a dozen reallocs)
        grow_array(<void**>&block.bounds.data, &block.bounds.cap, self.last_bounds + 2,
                   sizeof(uint64_t), self.last_bounds + 2)
        while True:
            got = self.file.readinto(<uint8_t[:cap - filled]>(block.data + filled)) or 0
            filled += got
            end = got == 0
            block.bounds.len = 0
            piece = 0
            if sep != NULL:
                with nogil:
                    piece = _cut(block.data, 0, filled, sep, sep_len, &block.bounds)
            if end or block.bounds.len:
                break
            if filled == cap:  # no separator in a full buffer: the document goes on
                cap *= 2
                grown = <uint8_t*>realloc(block.data, cap + 1)
                if grown == NULL:
                    raise MemoryError()
                block.data, block.data_cap = grown, cap + 1
        self.carry = (<char*>block.data)[piece:filled]
        # lines consumed (the next block's first): with "\n" as separator,
        # one a document ended by it
        self.line += <Py_ssize_t>(block.bounds.len // 2) if sep_len == 1 and sep[0] == 10 \
            else <Py_ssize_t>_count_newlines(block.data, piece)
        if end:
            self.done = True
            self.carry = b""
            # the piece after the last separator is a document unless empty;
            # a whole file (no separator) always is one
            if piece < filled or sep == NULL:
                _bound(&block.bounds, piece, filled)
                piece = filled
            if not block.bounds.len:
                return None
        block.size = piece if end else piece - sep_len
        self.offset += <Py_ssize_t>piece
        self.last_bounds = block.bounds.len
        return block


# ------------------------------------------------------------------ JSON Lines

cdef inline size_t _space(const uint8_t* s, size_t i, size_t n) noexcept nogil:
    while i < n and (s[i] == 32 or s[i] == 9 or s[i] == 13 or s[i] == 10):
        i += 1
    return i


cdef uint8_t _HEX[256]  # a byte's value as a hex digit, 16 when it is none


cdef void _fill_hex() noexcept:
    cdef int c
    for c in range(256):
        _HEX[c] = c - 48 if 48 <= c <= 57 else c - 87 if 97 <= c <= 102 else \
            c - 55 if 65 <= c <= 70 else 16


_fill_hex()


cdef inline int _hex4(const uint8_t* s, uint32_t* value) noexcept nogil:
    # by table, without a branch a digit: the digits of CJK escapes
    # (\u4e2d) mix numbers and letters
    cdef uint32_t a = _HEX[s[0]], b = _HEX[s[1]], c = _HEX[s[2]], d = _HEX[s[3]]
    if (a | b | c | d) & 16:
        return -1
    value[0] = (a << 12) | (b << 8) | (c << 4) | d
    return 0


cdef inline bint _plain8(uint64_t w) noexcept nogil:
    # no '"', no backslash and no byte below 0x20 among w's 8 bytes
    cdef uint64_t ones = 0x0101010101010101ULL
    cdef uint64_t quote = w ^ (ones * 0x22), slash = w ^ (ones * 0x5C)
    return not ((((quote - ones) & ~quote) | ((slash - ones) & ~slash) | ((w - ones * 0x20) & ~w))
                & 0x8080808080808080ULL)


cdef Py_ssize_t _string(const uint8_t* s, size_t i, size_t n, uint8_t* out, size_t* w,
                        bint* escaped) noexcept nogil:
    # The JSON string at s[i] (a '"'), its characters written at out + w[0]
    # when out is not NULL; returns where it ends, or -1 where json.loads
    # must decide (a control character, a bad or lone-surrogate escape, no
    # end on the line). escaped: whether it held an escape.
    cdef size_t run
    cdef uint64_t word
    cdef uint8_t c, e
    cdef uint32_t cp, low
    i += 1
    while True:
        # plain characters up to the next quote, backslash or control
        # character (none between two escapes, as in escaped CJK text,
        # where searching for them and a copy call of nothing cost more
        # than the escape)
        if i < n and s[i] != 92:
            run = i
            while i + 8 <= n:
                memcpy(&word, s + i, 8)
                if not _plain8(word):
                    break
                i += 8
            while i < n and s[i] != 34 and s[i] != 92 and s[i] >= 0x20:
                i += 1
            if out != NULL:
                memcpy(out + w[0], s + run, i - run)
                w[0] += i - run
        if i >= n:
            return -1
        c = s[i]
        if c == 34:
            return <Py_ssize_t>(i + 1)
        if c != 92 or i + 1 >= n:
            return -1  # a control character, or a backslash ending the line
        escaped[0] = True
        e = s[i + 1]
        if e == 117:  # \uXXXX
            if i + 6 > n or _hex4(s + i + 2, &cp) < 0:
                return -1
            i += 6
            if 0xDC00 <= cp <= 0xDFFF:
                return -1
            if 0xD800 <= cp <= 0xDBFF:
                if i + 6 > n or s[i] != 92 or s[i + 1] != 117 or _hex4(s + i + 2, &low) < 0 \
                        or not 0xDC00 <= low <= 0xDFFF:
                    return -1
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
                i += 6
            if out != NULL:
                w[0] += utf8_put(out + w[0], cp)
            continue
        if e == 34 or e == 92 or e == 47:
            c = e
        elif e == 98:
            c = 8
        elif e == 102:
            c = 12
        elif e == 110:
            c = 10
        elif e == 114:
            c = 13
        elif e == 116:
            c = 9
        else:
            return -1
        if out != NULL:
            out[w[0]] = c
            w[0] += 1
        i += 2


cdef inline size_t _digits(const uint8_t* s, size_t i, size_t n) noexcept nogil:
    while i < n and 48 <= s[i] <= 57:
        i += 1
    return i


cdef Py_ssize_t _value(const uint8_t* s, size_t i, size_t n, int depth) noexcept nogil:
    # Where the JSON value at s[i] ends, or -1 where json.loads must decide
    cdef size_t start = i, j
    cdef Py_ssize_t k
    cdef bint escaped = False
    cdef uint8_t c
    if i >= n:
        return -1
    c = s[i]
    if c == 34:
        return _string(s, i, n, NULL, NULL, &escaped)
    if c == 123 or c == 91:  # { or [
        if depth >= MAX_DEPTH:
            return -1
        i = _space(s, i + 1, n)
        if i < n and s[i] == c + 2:  # } or ]
            return <Py_ssize_t>(i + 1)
        while True:
            if c == 123:
                if i >= n or s[i] != 34:
                    return -1
                k = _string(s, i, n, NULL, NULL, &escaped)
                if k < 0:
                    return -1
                i = _space(s, <size_t>k, n)
                if i >= n or s[i] != 58:  # :
                    return -1
                i = _space(s, i + 1, n)
            k = _value(s, i, n, depth + 1)
            if k < 0:
                return -1
            i = _space(s, <size_t>k, n)
            if i < n and s[i] == 44:  # ,
                i = _space(s, i + 1, n)
                continue
            if i < n and s[i] == c + 2:
                return <Py_ssize_t>(i + 1)
            return -1
    if c == 116:
        return <Py_ssize_t>(i + 4) if i + 4 <= n and memcmp(s + i, b"true", 4) == 0 else -1
    if c == 102:
        return <Py_ssize_t>(i + 5) if i + 5 <= n and memcmp(s + i, b"false", 5) == 0 else -1
    if c == 110:
        return <Py_ssize_t>(i + 4) if i + 4 <= n and memcmp(s + i, b"null", 4) == 0 else -1
    # a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?
    if c == 45:
        i += 1
    if i >= n or not 48 <= s[i] <= 57:
        return -1
    i = i + 1 if s[i] == 48 else _digits(s, i, n)
    if i < n and s[i] == 46:
        j = _digits(s, i + 1, n)
        if j == i + 1:
            return -1
        i = j
    if i < n and (s[i] == 101 or s[i] == 69):
        i += 1
        if i < n and (s[i] == 43 or s[i] == 45):
            i += 1
        j = _digits(s, i, n)
        if j == i:
            return -1
        i = j
    return <Py_ssize_t>i if i - start <= MAX_NUMBER else -1


cdef int _json_line(const uint8_t* s, size_t n, const uint8_t* field, size_t field_len,
                    uint8_t* out, size_t* w) noexcept nogil:
    # One line of JSON Lines: LINE_BLANK (only JSON whitespace),
    # LINE_DOCUMENT (its object's field, a string, written at out + w[0];
    # the last of duplicate keys, as a dict keeps it), or LINE_FALLBACK.
    cdef size_t i = _space(s, 0, n), start = w[0], key
    cdef Py_ssize_t k
    cdef bint escaped
    cdef int found = 0  # 1: the field is a string, 2: something else
    if i == n:
        return LINE_BLANK
    if s[i] != 123:
        return LINE_FALLBACK
    i = _space(s, i + 1, n)
    if i < n and s[i] == 125:
        return LINE_FALLBACK  # {}: no field
    while True:
        if i >= n or s[i] != 34:
            return LINE_FALLBACK
        escaped = False
        key = i + 1
        k = _string(s, i, n, NULL, NULL, &escaped)
        if k < 0 or escaped:
            return LINE_FALLBACK
        i = _space(s, <size_t>k, n)
        if i >= n or s[i] != 58:
            return LINE_FALLBACK
        i = _space(s, i + 1, n)
        if <size_t>k - 1 - key == field_len and memcmp(s + key, field, field_len) == 0:
            if i < n and s[i] == 34:
                w[0] = start
                k = _string(s, i, n, out, w, &escaped)
                found = 1
            else:
                k = _value(s, i, n, 1)
                found = 2
        else:
            k = _value(s, i, n, 1)
        if k < 0:
            return LINE_FALLBACK
        i = _space(s, <size_t>k, n)
        if i < n and s[i] == 44:
            i = _space(s, i + 1, n)
            continue
        if i < n and s[i] == 125:
            break
        return LINE_FALLBACK
    if _space(s, i + 1, n) != n or found != 1:
        return LINE_FALLBACK
    return LINE_DOCUMENT


# ------------------------------------------------------------------ encoding

cdef struct Chunk:
    const uint8_t* data  # its block's bytes
    const uint64_t* bounds  # its documents' bounds (two numbers each)
    uint64_t* ends  # where each document's ids end in ids
    size_t n_docs
    size_t size  # bytes of its documents, a separator each
    uint32_t* ids  # made by the thread that encodes it, freed when collected
    size_t n_ids
    size_t cap
    long state


cdef class FileJob:
    """Blocks of documents encoded on ``threads`` threads through a compiled
    model's document encoder (``model.document_encoder()``), ``allowed`` the
    special tokens matched as specials (``None``: none), in chunks of about
    ``chunk_bytes`` bytes of documents; each thread's pre-token cache is a
    table of ``cache_entries`` (a power of two) made for the job and freed
    with it (0: the thread's own). The calling thread
    calls :meth:`add` for each block, then :meth:`finish` for ``(ids,
    offsets)``; each helper thread calls :meth:`work` meanwhile, and
    :meth:`stop` ends them should the caller stop early.

    >>> import io
    >>> from fasttok.formats._byte_bpe import CoreBPE
    >>> from fasttok.shared._tables import TokenTables
    >>> core = CoreBPE(TokenTables([b"a", b"b", b"ab"]), {}, scanner="gpt2")
    >>> job = FileJob(core, None, 1)
    >>> job.add(BlockReader(io.BytesIO(b"ab\\nba\\n"), "f", b"\\n", 99).next())
    >>> job.finish()
    (array('I', [2, 1, 0]), array('Q', [0, 1, 3]))
    """

    cdef object capsule  # the model's document encoder; it keeps the model alive
    cdef void* model_ptr
    cdef const DocumentEncoder* encoder
    cdef object allowed_ref
    cdef const uint8_t* allowed
    cdef int threads
    cdef size_t chunk_bytes
    cdef Chunk* ring
    cdef ft_pc_table* tables  # the job's pre-token caches: the caller's, then a helper's each
    cdef long helpers  # helpers that took a table; atomic
    cdef long published  # chunks published; written by the calling thread
    cdef long next_claim  # the next chunk to claim; atomic
    cdef long collected  # chunks appended to the result (the calling thread's)
    cdef long closed  # no more chunks will be published; atomic
    cdef long failed  # a thread's encoding raised (or stop()); atomic
    cdef long ids_per_kb  # in the chunk collected last: the next buffers' size; atomic
    cdef object error  # what a helper's encoding raised, raised again by the caller's thread
    cdef object blocks  # (block, number of its last chunk + 1), oldest first
    cdef carray.array ids
    cdef carray.array offsets
    cdef char* ids_room  # where ids' buffer was when pages were last mapped ahead in it
    cdef char* mapped  # ... and up to where

    def __cinit__(self):
        self.ring = NULL
        self.tables = NULL
        self.ids_room = self.mapped = NULL

    def __init__(self, model, const uint8_t[::1] allowed, int threads,
                 Py_ssize_t chunk_bytes=CHUNK_BYTES, Py_ssize_t cache_entries=0):
        self.capsule = model.document_encoder()
        self.encoder = <const DocumentEncoder*>PyCapsule_GetPointer(self.capsule, DOCUMENT_ENCODER)
        self.model_ptr = PyCapsule_GetContext(self.capsule)
        self.allowed_ref = allowed
        self.allowed = &allowed[0] if allowed is not None and allowed.shape[0] else NULL
        self.threads = max(1, threads)
        self.chunk_bytes = <size_t>max(1, chunk_bytes)
        self.ring = <Chunk*>calloc(RING, sizeof(Chunk))
        if self.ring == NULL:
            raise MemoryError()
        if cache_entries > 0:
            if cache_entries & (cache_entries - 1):
                raise ValueError(f"cache_entries must be a power of two, not {cache_entries}")
            self.tables = <ft_pc_table*>calloc(self.threads, sizeof(ft_pc_table))
            if self.tables == NULL:
                raise MemoryError()
            for k in range(self.threads):
                ft_pc_table_init(&self.tables[k], <size_t>cache_entries)
        self.helpers = 0
        self.published = self.next_claim = self.collected = self.closed = self.failed = 0
        self.ids_per_kb = 256
        self.blocks = deque()
        self.error = None
        self.ids = array("I")
        self.offsets = array("Q", [0])

    def __dealloc__(self):
        cdef long k
        if self.ring != NULL:
            for k in range(RING):
                free(self.ring[k].ids)
        free(self.ring)
        if self.tables != NULL:
            for k in range(self.threads):
                ft_pc_table_free(&self.tables[k])
        free(self.tables)

    def find_special(self, Block block not None, const uint8_t[::1] mask not None,
                     Py_ssize_t index=-1):
        """The first special token ``mask`` selects in document ``index`` of
        ``block`` (-1: in the whole block), as its index, or -1."""
        cdef size_t start = 0, end = block.size
        if mask.shape[0] == 0:
            return -1
        if index >= 0:
            start, end = block.bounds.data[2 * index], block.bounds.data[2 * index + 1]
        cdef Py_ssize_t found
        with nogil:
            found = self.encoder.find_special(self.model_ptr, block.data + start, end - start,
                                              &mask[0])
        return found

    def add(self, Block block not None):
        """Publish ``block``'s documents as chunks, then encode the chunks
        of the blocks before it that no thread has claimed (on one thread,
        every chunk): the helpers have the new block to encode while the
        caller reads the next one."""
        cdef size_t n_docs = block.bounds.len // 2, first = 0, stop, size, four
        cdef size_t limit = self.chunk_bytes
        cdef const uint64_t* b = block.bounds.data
        cdef long block_start = self.published
        cdef Chunk* chunk
        if n_docs == 0:
            return
        grow_array(<void**>&block.ends, &block.ends_cap, n_docs, sizeof(uint64_t), n_docs)
        while first < n_docs:
            stop, size = first, 0
            # four documents at a time while all four fit under the limit (a
            # document counts 1 at least, so none of them reaches it): one
            # at a time took ~12 instructions a document, four ~4
            while stop + 4 <= n_docs:
                four = (b[2 * stop + 1] - b[2 * stop]) + (b[2 * stop + 3] - b[2 * stop + 2]) \
                    + (b[2 * stop + 5] - b[2 * stop + 4]) + (b[2 * stop + 7] - b[2 * stop + 6]) + 4
                if size + four >= limit:
                    break
                size += four
                stop += 4
            while stop < n_docs and size < limit:
                size += b[2 * stop + 1] - b[2 * stop] + 1
                stop += 1
            if self.published - self.collected >= RING:
                self._help(self.published, self.published - RING + 1)
            chunk = &self.ring[self.published % RING]
            chunk.data = block.data
            chunk.bounds = block.bounds.data + 2 * first
            chunk.ends = block.ends + first
            chunk.n_docs = stop - first
            chunk.size = size
            chunk.n_ids = 0
            chunk.state = CHUNK_READY
            atomic_store(&self.published, self.published + 1)
            first = stop
        self.blocks.append((block, self.published))
        self._help(block_start if self.threads > 1 else self.published, 0)

    def finish(self):
        """``(ids, offsets)`` once every chunk is encoded: the ids of every
        document in order (``array('I')``), and where each one's end
        (``array('Q')``, from 0)."""
        atomic_store(&self.closed, 1)
        self._help(self.published, self.published)
        return self.ids, self.offsets

    def stop(self):
        """Let the helper threads go (the caller stops before :meth:`finish`)."""
        atomic_store(&self.failed, 1)
        atomic_store(&self.closed, 1)

    def work(self):
        """Encode chunks as they are published, until :meth:`finish` or
        :meth:`stop` (for the helper threads). An error is raised in the
        caller's thread, by :meth:`add` or :meth:`finish`."""
        cdef long k
        cdef ft_pc_table* table = self._table(atomic_fetch_add(&self.helpers, 1) + 1)
        try:
            with nogil:
                while True:
                    k = atomic_fetch_add(&self.next_claim, 1)
                    while atomic_load(&self.published) <= k and not atomic_load(&self.closed):
                        short_pause()
                    if atomic_load(&self.published) <= k or atomic_load(&self.failed):
                        break
                    self._encode(&self.ring[k % RING], table)
        except BaseException as exc:
            self.error = exc
            atomic_store(&self.failed, 1)

    cdef ft_pc_table* _table(self, long index) noexcept nogil:
        # The job's table for the caller (0) or a helper, or NULL: the
        # thread's own (no job tables, or one that could not be had)
        if self.tables == NULL or index >= self.threads or self.tables[index].n_entries == 0:
            return NULL
        return &self.tables[index]

    cdef int _encode(self, Chunk* chunk, ft_pc_table* table) except -1 nogil:
        # room at the start for as many ids a KiB as the chunk collected
        # last had, and 32 more (cl100k_base: en.txt 4.1 bytes an id, zh.txt
        # 2.2; text changes slowly along a file): room for an id every four
        # bytes had two chunks of three reallocated (and copied) on the
        # bench's corpus, 0.7% of the walk's instructions, and grown from 64
        # ids ten times; room for an id every two bytes held more in every
        # chunk waiting to be collected (peak RSS on two threads 201 -> 218
        # MB, the bench's 107 MB)
        cdef size_t need = chunk.size * (<size_t>atomic_load(&self.ids_per_kb) + 32) // 1024 + 16
        grow_array(<void**>&chunk.ids, &chunk.cap, need, sizeof(uint32_t), need)
        self.encoder.encode(self.model_ptr, chunk.data, chunk.bounds, chunk.n_docs, self.allowed,
                            &chunk.ids, &chunk.n_ids, &chunk.cap, chunk.ends, table)
        atomic_store(&chunk.state, CHUNK_ENCODED)
        return 0

    cdef int _help(self, long claim_below, long collect_to) except -1:
        # Claim and encode the unclaimed chunks numbered below claim_below,
        # collecting those encoded; then wait until collect_to chunks are
        # collected (encoded by whichever thread claimed them).
        cdef long k
        while True:
            self._collect()
            if atomic_load(&self.failed):
                if self.error is not None:
                    raise self.error
                raise RuntimeError("the file job was stopped")
            k = atomic_load(&self.next_claim)
            if k < claim_below and k < self.published:
                if atomic_cas(&self.next_claim, k, k + 1):
                    try:
                        with nogil:
                            self._encode(&self.ring[k % RING], self._table(0))
                    except BaseException:
                        atomic_store(&self.failed, 1)
                        raise
                continue  # (or a helper claimed k first)
            if self.collected >= collect_to:
                return 0
            with nogil:
                short_pause()

    cdef int _collect(self) except -1:
        # Appends the chunks encoded, in order, to the result
        cdef Chunk* chunk
        cdef size_t at, i, n_offsets
        cdef uint64_t base
        cdef uint64_t* out
        cdef const uint64_t* ends
        cdef char* end
        while self.collected < self.published:
            chunk = &self.ring[self.collected % RING]
            if atomic_load(&chunk.state) != CHUNK_ENCODED:
                return 0
            base = len(self.ids)
            at = <size_t>base
            carray.resize_smart(self.ids, at + chunk.n_ids)
            # the result's pages are mapped 2 MiB at a time ahead of the
            # copy (its first touch, ~33k faults on the bench's 107 MB)
            if self.ids.data.as_chars != self.ids_room:
                self.ids_room = self.ids.data.as_chars
                self.mapped = self.ids_room + at * sizeof(uint32_t)
            end = self.ids_room + (at + chunk.n_ids) * sizeof(uint32_t)
            if end > self.mapped:
                end = min(end + (2 << 20),
                          self.ids_room + <size_t>array_allocated(self.ids) * sizeof(uint32_t))
                populate(self.mapped, end)
                self.mapped = end
            memcpy(self.ids.data.as_uints + at, chunk.ids, chunk.n_ids * sizeof(uint32_t))
            # (kept in the slot, RING buffers of a chunk's ids each stayed
            # in the peak RSS)
            free(chunk.ids)
            chunk.ids, chunk.cap = NULL, 0
            n_offsets = len(self.offsets)
            carray.resize_smart(self.offsets, n_offsets + chunk.n_docs)
            # (through locals: the array's pointer read again for each
            # document took ~13 instructions a document, these ~3)
            out = <uint64_t*>self.offsets.data.as_voidptr + n_offsets
            ends = chunk.ends
            for i in range(chunk.n_docs):
                out[i] = base + ends[i]
            chunk.state = CHUNK_READY
            if chunk.size:
                atomic_store(&self.ids_per_kb, <long>(chunk.n_ids * 1024 // chunk.size))
            self.collected += 1
            while self.blocks and self.blocks[0][1] <= self.collected:
                self.blocks.popleft()
        return 0


# Performance notes
#
# Measured on /tmp's 29 MB corpus (en, code, zh and multi repeated, as the
# bulk bench builds its 107 MB one), cl100k_base, one thread, CPU time,
# 2 cores shared with other work (load 3-7):
# * Before this module, reading was Python: bytes.rfind for the cut, one
#   decode of the block, str.split, and the batch transcoded each non-ASCII
#   str back to UTF-8: 0.137 s of 0.72 s (19%). Now f.read is 5.5 ms, the
#   cut (memchr a line) 7.6 ms, the UTF-8 check 14 ms: ~4% of 0.67 s, and on
#   two threads it runs while the helpers encode the chunks left to them.
# * Where a 3 MB run goes (callgrind): FileJob.add 267.9M instructions, of
#   which the walk (_encode_documents) 261.7M and chunks and collecting
#   6.2M: the file path is the walk's speed.
# * JSON Lines (the same corpus, {"id", "text", "meta"} per line with
#   ensure_ascii, 87 MB): the scanner reads it in 0.233 s against 1.29 s for
#   JSONDecoder.scan_once a line (the old path); encode_files takes 0.90 s
#   CPU for it against 0.72 s for the text.
# * Two threads: the calling thread and the helper each spent 0.33-0.38 s
#   of thread CPU for the 29 MB, and the helper waited for a chunk 20-43
#   times (20 us pauses): the work splits evenly and nearly nothing is
#   serial, so an idle 2-core machine should see ~2x; the loaded VM could
#   not show it (wall time 3x CPU time even on one thread).
# * What the helpers encode while the caller reads: first a reserve of 4
#   chunks a helper (~6 ms of encoding), then 8, against ~5 ms to read, cut
#   and check a 4 MiB block of text and ~15 ms for one of JSON Lines with
#   escaped CJK (a third of the text's bytes, so its encoding is short); now
#   the whole newest block, the caller encoding only older chunks, so no
#   read outlasts what is left. Each slot of the ring kept its chunk's id
#   buffer at first: 256 of them were 16 MB of the peak RSS.
# * The pre-token cache at 64k or 256k entries instead of 16k for a file's
#   whole run: 42.4 and 45.5 against 44.6 MB/s on the 29 MB corpus (noise).
#   On the bench's 107 MB (the four files repeated, so every piece comes
#   back after 9.75 MB), user + system CPU, three alternating processes each
#   (FASTTOK_PRETOKEN_CACHE, load 10): one thread 1.64-1.73 s at 16k,
#   1.51-1.55 at 64k, 1.32-1.44 at 256k (gigatoken 1.46-1.73, median 1.47);
#   two threads 1.69-1.71 against 1.48-1.54 at 256k (16 MB a thread). The
#   setting is the process's (every thread's table; a change empties them
#   all), so encode_files leaves it alone and gives each of its threads a
#   table of its own for the call instead (document_files.job_cache_entries:
#   16 times the setting for a file of 16 MB or more). Same 107 MB, CPU
#   medians of four alternating processes (load 11): one thread 1.417 ->
#   1.269 s (gigatoken 1.390), two threads 1.649 -> 1.368 s (gigatoken
#   1.651); 1M entries instead of 256k, no better (1.24-1.29 s) and 25k
#   more page faults.
# * Two threads against one (the bench's 9.75 MB corpus, one copy of each
#   file; callgrind --separate-threads): the walk took 985.6M instructions
#   on one thread, 443.2M + 572.9M = 1016.2M on two (+3%: the helper starts
#   with an empty pre-token cache, and each thread's cache sees half the
#   pieces); the helper paused 19 times for a chunk (88 chunks its, 61 the
#   caller's), the caller never. On the 107 MB file: 14-60 voluntary
#   context switches a run, 0.09-0.18 s of system time and ~45k minor
#   faults on one thread and on two alike. Nothing here grows with the
#   second thread, and on the quiet machine the two kept 1.98 CPUs busy
#   (86.1 MB/s wall, 43.4 a CPU-second); what fell, 62.5 -> 43.4 MB a
#   CPU-second (gigatoken 74.0 -> 57.3), is the cost of an instruction
#   while both CPUs run, which this VM has no counters to show: the bench
#   prints machine_scaling beside its figures.
# * What the document path adds to the walk on one thread (same corpus):
#   the UTF-8 check 36.1M (51.8M checking a word before every multi-byte
#   character; 38.3M by branches on the lead byte's range, not its table),
#   reading and cutting 13.6M, chunks and collecting 18.9M (the
#   copy into the result 12.1M), against a walk of ~963M: 7%. A chunk's id
#   buffer grown from 64 ids cost 14.0M more (ten reallocs a chunk).
# * JSON Lines (the same corpus as the bench writes it, 16.3 MB, 1.16M
#   \u escapes): read_json 277M -> 200M instructions with the hex digits
#   read by table and no search for plain characters between two escapes,
#   against a walk of 932M.
# * What the files layer costs against the walk (callgrind, cl100k_base, one
#   thread, 30.9 MB: the first 4,000 lines of en, code, zh and multi
#   repeated 45 times, 3.87M multi-byte characters): the walk 2,069M of
#   2,270M instructions; the UTF-8 check 126M (5.6%: ~24 instructions a
#   multi-byte character, the ASCII runs ~1 a byte), the cut (memchr a line
#   and the bounds) 49M (2.1%), copying chunks' ids into the result 33M and
#   the result arrays' growth (array's 1/16 steps, each a realloc that may
#   copy) 24M. On 687 kB of the same text, encode_files took 51.4M
#   instructions and encode_ordinary_batch of its lines on one thread 51.7M:
#   reading the file costs no more than holding the text as Python strs.
# * The UTF-8 check 32 bytes a step (AVX2, Keiser and Lemire's three nibble
#   tables) before the character-a-step check (callgrind, cl100k_base, one
#   thread, 9.75 MB: one copy of each corpus file): 38.8M -> 6.8M
#   instructions, encode_files 908.5M -> 876.6M.
# * Then (same corpus and count, one build of the walk): the cut 64 bytes a
#   step (13.8M -> 7.8M), chunk buffers sized by the last chunk's ids a KiB
#   (the walk's reallocs of them 5.9M -> 1.0M), no allowed-special mask when
#   none is allowed (each line searched for one: 17.5M). All three with the
#   UTF-8 check: 923.0M -> 860.6M, of which the walk 826.5M; CPU median of 7
#   alternating processes on 29.3 MB (load 6-8): 0.536 -> 0.484 s. What is
#   left beside the walk: copying chunks' ids into the result (12.1M) and
#   its growth, the cut, the UTF-8 check (6.8M).
# * Two threads on the same 9.75 MB (callgrind --separate-threads): the walk
#   371.5M on the calling thread and 472.0M on the helper (843.5M against
#   820.6M on one: the helper's pre-token cache starts empty), the reading,
#   cut, check and collecting (31M) on the calling thread while the helper
#   encodes; the helper paused 13 times for a chunk. User CPU on 29.3 MB,
#   one thread against two, alternating processes: 0.37-0.41 s against
#   0.42-0.46 s (+12%), so two threads reach ~1.8x one where the work
#   splits evenly: the +3% of instructions and a dearer instruction while
#   both cores run.
# * With the job's own caches (256k entries a thread, callgrind, the bench's
#   107 MB, whole process): 8.372G instructions on one thread, 8.457G on two
#   (4.250G on the calling thread, 4.208G on the helper): the cold caches
#   of two threads cost 1% more; the rest of two threads' CPU over one's
#   (+6-16% under load 6-11) is what an instruction costs while both run.
# * Page faults (getrusage, the bench's 107 MB, load 6): ~2.8 us each on this
#   VM (no transparent huge pages), 45-55k a call on one thread, most of
#   them the result's ids touched for the first time (the memcpy in
#   _collect: 133 MB, ~33k faults, ~90 ms; gigatoken has 46k). A block's
#   buffers taken over by the next block (BlockReader.spare): two threads
#   71.7k -> 63.4k faults, system time 85 -> 70 ms (medians of six
#   alternating processes); one thread 53.7k -> 52.4k. madvise(MADV_HUGEPAGE)
#   on the result doubled its faults here (106k) and was dropped;
#   MADV_POPULATE_WRITE 2 MiB ahead of the copy into it (a call instead of
#   a fault a page; 84 against 102 ms for 133 MB alone): one thread, six
#   alternating processes (load 9), system time 144 -> 103 ms, CPU 1.404 ->
#   1.378 s.
# * Two threads on a quiet machine (load 1, the bench's 107 MB, job caches
#   of 128k entries each): wall 0.647 s against 1.06-1.10 s on one thread
#   (1.66-1.70x); thread CPU 0.64-0.65 s on the caller and 0.62-0.63 s on
#   the helper, so neither waits, and the instructions are 1% more than one
#   thread's (above); user time 1.12 against 0.95 s: an instruction costs
#   ~18% more while both cores run (the bench's sha256 loop, in L1: 4%;
#   the two share the 32 MiB L3, and each thread's caches and memo are ~10
#   MiB). gigatoken scales 1.66x on the same run.
# * Two threads against one in callgrind's cache simulation (32 KiB D1, a
#   32 MiB LL that the threads share as valgrind runs them in turns; the
#   bench's 107 MB): the encoding's LL read misses were 1.72M on one thread
#   and 3.94M on two with 4 MiB blocks. The pre-token cache's probes 1.30M
#   -> 1.57M (each thread's table holds the pieces both meet); the block's
#   text read again from memory by the scanner (0.83M) and its bounds and
#   ends by the walk (0.36M): between a block's read and the encoding of
#   its last chunks, the next block is read and both threads' tables and
#   ids pass through the cache. With 1 MiB blocks: 1.74M on two threads
#   (0.85M + 0.89M; the probes 1.25M, the text's ~0) and 0.67M on one (the
#   probes 0.56M): what is left between them is the two tables of the same
#   pieces (below). Alternating processes (load 7, medians of six):
#   minor faults 59.5k -> 52.8k on two threads and 50.9k -> 48.2k on one,
#   peak RSS 227-231 -> 207-208 MB and 212 -> 201 MB, CPU the same within
#   the noise (1.230 / 1.233 s and 1.073 / 1.066 s).
# * What two busy cores cost a read of a table of each thread's own at
#   random places here (a dependent walk in C; the bench's
#   machine_scaling(table_mib=...), numpy gathers; load 8): 1.02-1.04x at 1
#   MiB, 1.10-1.24x at 2-4 MiB, 1.6x (gathers) to 2.9x (the walk) at 8 MiB:
#   one 8 MiB table stays in the caches the cores share, two do not. Two
#   threads' job tables are 8 MiB each and hold the same common pieces;
#   smaller ones lose more in hits than they save (CPU medians of five
#   alternating processes, load 6, 32k / 64k / 128k / 256k entries a
#   thread: two threads 1.373 / 1.330 / 1.249 / 1.221 s, one 1.272 / 1.221
#   / 1.149 / 1.121 s; two over one 1.08-1.10x at every size). What would
#   cut it is in ft_piece_cache.h: one table the threads share (read
#   without a lock, an entry's sequence number checked around the read) or
#   entries of fewer bytes.
# * Ids copied into the result with non-temporal stores (SSE2
#   _mm_stream_si128, 64 bytes a step): CPU unchanged within the noise in
#   three sets of alternating processes (two threads -5%, -2%, +2%; one
#   thread 0, 0, -1%; load 5-7). The kernel zeroes the result's pages
#   through the caches as it maps them (MADV_POPULATE_WRITE or a first
#   touch), so the copy finds the lines there anyway. Not kept.
