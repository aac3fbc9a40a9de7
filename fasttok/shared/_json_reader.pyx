"""A compiled reader of ``tokenizer.json`` documents that keeps the model's
vocabulary and merges packed.

``json.loads`` of Llama 3's file makes 128k strings and ints for the
vocabulary and 280k strings for the merges, and the loaders then turned
every one of them back into bytes: most of the file's load. This reader
goes over the bytes once and builds every Python object ``json.loads``
would, except ``$.model.vocab`` when it is an object ``{text: id}`` or a
Unigram list ``[[piece, score], ...]``, and ``$.model.merges`` when it is a
list of ``"a b"`` strings or ``["a", "b"]`` pairs: those stay packed
(:class:`PackedVocab`, :class:`PackedPieces`, :class:`PackedMerges`,
unescaped UTF-8 in one buffer with offsets, filled without the GIL) and
``PackedModel.object()`` gives them as ``json.loads`` would, when asked.
A Unigram list's scores stay the numbers' text: ``float`` of 5,000 of them
was most of a Unigram file's reading, and tokenizers' f64 of a number is
read from its text, not from Python's double.

Exactness contract: the document is ``json.loads(data)``'s, key order and
duplicate keys (the last wins, where the first stood) included. Whatever
this reader does not do as ``json.loads`` does it hands to it: text that is
not UTF-8 (or UTF-16/32), a syntax error, nesting deeper than
``MAX_DEPTH``, and a string holding a lone surrogate (a ``\\ud800`` escape
without its other half, or the three bytes ``json.loads`` reads as one):
``json.loads`` takes those and tokenizers' reader refuses them, so the
loader refuses such a document, naming the string's JSON path
(:func:`fasttok.loaders.json_document.parse_tokenizer_json`); results and
errors there are ``json.loads``' own. A vocabulary or merge list the
packing cannot hold exactly (a float or negative id, a duplicate text, an
id above 2**32 - 2, another shape) is read as Python objects and stays in
the document.
"""

from cpython cimport array as carray
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_SetItem
from cpython.long cimport PyLong_FromLongLong
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, realloc
from libc.string cimport memchr, memcmp, memcpy
from posix.fcntl cimport O_CLOEXEC, O_RDONLY
from posix.fcntl cimport open as c_open
from libc.errno cimport EINTR, errno
from posix.mman cimport MAP_FAILED, MAP_PRIVATE, PROT_READ, PROT_WRITE, mmap, munmap
from posix.stat cimport S_ISREG, fstat, struct_stat
from posix.unistd cimport close as c_close
from posix.unistd cimport read as c_read

cdef extern from "<sys/mman.h>":
    """
    #ifndef MAP_ANONYMOUS
    #define MAP_ANONYMOUS MAP_ANON
    #endif
    #ifndef MAP_POPULATE
    #define MAP_POPULATE 0
    #endif
    """
    int MAP_ANONYMOUS
    int MAP_POPULATE

cdef extern from "Python.h":
    object PyErr_SetFromErrnoWithFilenameObject(object kind, object filename)
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    void* PyUnicode_DATA(object text)
    int PyBuffer_FillInfo(Py_buffer* view, object owner, void* buf, Py_ssize_t n, int readonly,
                          int flags) except -1

cdef extern from "<string.h>":
    void* memmem(const void* haystack, size_t n, const void* needle, size_t m) nogil

from fasttok.shared._bits cimport FT_SWAR, ft_ctz64
from fasttok.shared._growth cimport grow_array
from fasttok.shared._tables cimport hash_bytes
from fasttok.shared._utf8_strict cimport ft_utf8_strict_length

import os
from array import array

__all__ = ["read_tokenizer_document", "read_file", "FileBytes", "PackedModel", "PackedTexts",
           "PackedVocab", "PackedPieces", "PackedMerges", "MAX_DEPTH"]

#: deeper nesting is left to json.loads (whose recursion limit then decides)
MAX_DEPTH = 500
cdef int64_t MAX_ID = 0xFFFFFFFE  # fasttok.vocab.MAX_ID

class _Fallback(Exception):
    # the document is read by json.loads instead
    pass


cdef object _HELD = object()  # a model key whose value is packed


# a plain run this long may be a long string (a Unigram file's charsmap):
# _long_ascii_string takes it in whole-run passes
cdef size_t _LONG_RUN = 64


cdef inline bint _ascii_plain(const uint8_t* s, size_t n) noexcept nogil:
    # whether s[:n] holds neither a control character nor a byte from 0x80
    # on: eight bytes a step, or-ed with no branch (a byte under 0x20 among
    # ASCII ones borrows, so its high bit is set; none is set otherwise)
    cdef uint64_t w, seen = 0
    cdef size_t i = 0
    while i + 8 <= n:
        memcpy(&w, s + i, 8)
        seen |= ((w - 0x2020202020202020ULL) & ~w) | w
        i += 8
    while i < n:
        seen |= ((<uint64_t>s[i] - 0x20) & ~(<uint64_t>s[i])) | s[i]
        i += 1
    return not (seen & 0x8080808080808080ULL)


cdef object _long_ascii_string(const uint8_t* s, size_t n, size_t start):
    # The str of the JSON string whose text starts at s[start] when it is
    # plain ASCII to its closing quote (no escape, no control character):
    # the quote and any backslash found by memchr, the run checked and
    # copied once; else None (the caller's loop reads it). The 8-byte loop,
    # its UTF-8 decode and its copy took ~1.5M instructions of a 320 kB
    # base64 charsmap.
    cdef const uint8_t* quote = <const uint8_t*>memchr(s + start, 0x22, n - start)
    if quote == NULL:
        return None
    cdef size_t length = quote - (s + start)
    if memchr(s + start, 0x5C, length) != NULL or not _ascii_plain(s + start, length):
        return None
    text = PyUnicode_New(length, 127)
    memcpy(PyUnicode_DATA(text), s + start, length)
    return text


cdef inline bint _is_space(uint8_t c) noexcept nogil:
    return c == 0x20 or c == 0x0A or c == 0x0D or c == 0x09


cdef inline int _hex4(const uint8_t* p) noexcept nogil:
    # the value of four hex digits, or -1
    cdef int v = 0, k, d
    cdef uint8_t c
    for k in range(4):
        c = p[k]
        if 0x30 <= c <= 0x39:
            d = c - 0x30
        elif 0x61 <= c <= 0x66:
            d = c - 0x57
        elif 0x41 <= c <= 0x46:
            d = c - 0x37
        else:
            return -1
        v = v * 16 + d
    return v


cdef inline size_t _put_utf8(uint8_t* out, uint32_t cp) noexcept nogil:
    # cp: a scalar value (no surrogate)
    if cp < 0x80:
        out[0] = <uint8_t>cp
        return 1
    if cp < 0x800:
        out[0] = <uint8_t>(0xC0 | (cp >> 6))
        out[1] = <uint8_t>(0x80 | (cp & 0x3F))
        return 2
    if cp < 0x10000:
        out[0] = <uint8_t>(0xE0 | (cp >> 12))
        out[1] = <uint8_t>(0x80 | ((cp >> 6) & 0x3F))
        out[2] = <uint8_t>(0x80 | (cp & 0x3F))
        return 3
    out[0] = <uint8_t>(0xF0 | (cp >> 18))
    out[1] = <uint8_t>(0x80 | ((cp >> 12) & 0x3F))
    out[2] = <uint8_t>(0x80 | ((cp >> 6) & 0x3F))
    out[3] = <uint8_t>(0x80 | (cp & 0x3F))
    return 4


cdef inline uint64_t _run_ends(uint64_t w) noexcept nogil:
    # the high bit of each of the eight bytes of w that is a quote, a
    # backslash or a control character, and perhaps of bytes after the first
    # such (a borrow carries up): nonzero exactly when one is there, and the
    # lowest bit set is the first one's (a byte from 0x80 on is never marked)
    cdef uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL
    cdef uint64_t quote = w ^ (0x22 * ones), backslash = w ^ (0x5C * ones)
    return (((quote - ones) & ~quote) | ((backslash - ones) & ~backslash)
            | ((w - 0x20 * ones) & ~w)) & highs


cdef int _unescape(const uint8_t* s, size_t n, size_t* at, uint8_t** buf, size_t* cap,
                   size_t* used) except -2 nogil:
    # The JSON string starting at s[*at] (its opening quote) appended to
    # *buf as UTF-8; *at moves past the closing quote. Returns 0, or 1 when
    # the string is not JSON, not UTF-8 or holds a lone surrogate: the
    # document is then json.loads' to read (see the module notes).
    cdef size_t i = at[0] + 1, start, length
    cdef uint8_t c
    cdef int cp, low
    cdef uint64_t w, ends
    while True:
        start = i
        while i < n:
            # ASCII eight bytes a step, to the byte the run stops at (a key of
            # a vocabulary, ~7 bytes, is one step instead of a byte loop); a
            # word holding a byte from 0x80 on takes one character the byte way
            if FT_SWAR and i + 8 <= n:
                memcpy(&w, s + i, 8)
                if not w & 0x8080808080808080ULL:
                    ends = _run_ends(w)
                    if ends:
                        i += ft_ctz64(ends) >> 3
                        break
                    i += 8
                    continue
            c = s[i]
            if c == 0x22 or c == 0x5C or c < 0x20:
                break
            if c >= 0x80:
                # a valid character stays in the run copied at once: the
                # byte-level alphabet's two bytes, SentencePiece's three of
                # U+2581 (Llama 2's strings left the run at each one: 16.6M
                # of the document's 41M instructions went to _unescape)
                length = ft_utf8_strict_length(s + i, n - i)
                if length == 0:
                    break
                i += length
                continue
            i += 1
        length = i - start
        if length:
            # 16 bytes of room more than the run: a run of up to 16 (a
            # vocabulary's key) is one fixed-size copy, two moves instead
            # of a call of memcpy (what follows it is written over)
            grow_array(<void**>buf, cap, used[0] + length + 16, 1, 4096)
            if length <= 16 and start + 16 <= n:
                memcpy(buf[0] + used[0], s + start, 16)
            else:
                memcpy(buf[0] + used[0], s + start, length)
            used[0] += length
        if i >= n:
            return 1
        c = s[i]
        if c == 0x22:
            at[0] = i + 1
            return 0
        if c < 0x20:
            return 1
        if c >= 0x80:
            return 1  # not UTF-8 (or a raw surrogate): json.loads decides
        grow_array(<void**>buf, cap, used[0] + 4, 1, 4096)
        # a backslash
        if i + 1 >= n:
            return 1
        c = s[i + 1]
        i += 2
        if c == 0x75:  # u
            if i + 4 > n:
                return 1
            cp = _hex4(s + i)
            if cp < 0:
                return 1
            i += 4
            if 0xD800 <= cp <= 0xDBFF and i + 6 <= n and s[i] == 0x5C and s[i + 1] == 0x75:
                low = _hex4(s + i + 2)
                if 0xDC00 <= low <= 0xDFFF:
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
            if 0xD800 <= cp <= 0xDFFF:
                return 1
            used[0] += _put_utf8(buf[0] + used[0], <uint32_t>cp)
            continue
        if c == 0x22 or c == 0x5C or c == 0x2F:
            buf[0][used[0]] = c
        elif c == 0x62:
            buf[0][used[0]] = 0x08
        elif c == 0x66:
            buf[0][used[0]] = 0x0C
        elif c == 0x6E:
            buf[0][used[0]] = 0x0A
        elif c == 0x72:
            buf[0][used[0]] = 0x0D
        elif c == 0x74:
            buf[0][used[0]] = 0x09
        else:
            return 1
        used[0] += 1


cdef inline uint64_t _not_spaces(uint64_t w) noexcept nogil:
    # the high bit of each of the eight bytes of w that is not a space, and
    # of no other (seven bits plus 0x7F never carry into the next byte)
    cdef uint64_t lows = 0x7F7F7F7F7F7F7F7FULL, x = w ^ 0x2020202020202020ULL
    return (((x & lows) + lows) | x) & ~lows


cdef inline size_t _skip_space(const uint8_t* s, size_t n, size_t i) noexcept nogil:
    while i < n and _is_space(s[i]):
        if s[i] == 0x0A:
            return _skip_indent(s, n, i + 1)
        i += 1
    return i


cdef size_t _skip_indent(const uint8_t* s, size_t n, size_t i) noexcept nogil:
    # the rest of a run of whitespace after a newline: a pretty-printed
    # file's indentation (a Unigram piece list's 6 to 8 spaces) eight spaces
    # a step, to the first other byte (out of line: a compact file has none)
    cdef uint64_t w, other
    while True:
        while FT_SWAR and i + 8 <= n:
            memcpy(&w, s + i, 8)
            other = _not_spaces(w)
            if other:
                i += ft_ctz64(other) >> 3
                break
            i += 8
        if i < n and _is_space(s[i]):
            i += 1
        else:
            return i


cdef inline int _after_item(const uint8_t* s, size_t n, size_t* i, uint8_t close) noexcept nogil:
    # the step after an item of a packed object or list: 0 with *i at the
    # next item (past the comma), 2 with *i past ``close``, 1 when neither
    cdef size_t k = _skip_space(s, n, i[0])
    if k < n and s[k] == 0x2C:
        i[0] = _skip_space(s, n, k + 1)
        return 0
    if k < n and s[k] == close:
        i[0] = k + 1
        return 2
    return 1


cdef class PackedTexts:
    """The texts of a packed vocabulary, piece list or merge list: the
    buffers they share, set up empty and freed here (a subclass adds its own
    arrays), and the hash index of the texts for those that look them up.

    >>> doc, model = read_tokenizer_document(b'{"model": {"vocab": {"a": 0}}}')
    >>> isinstance(model.vocab, PackedTexts), len(model.vocab)
    (True, 1)
    """

    def __cinit__(self):
        self.data = NULL
        self.offsets = NULL
        self.slots = NULL
        self.n = 0
        self.data_cap = self.entry_cap = 0

    def __dealloc__(self):
        free(self.data)
        free(self.offsets)
        free(self.slots)

    def __len__(self):
        return self.n

    cdef int _index(self, bint repeats) except -1:
        # the hash index of the texts: the number of entries whose text an
        # earlier one has (each then indexed in its place: the last wins),
        # or without repeats 1 at the first such entry
        cdef uint64_t cap = 16, k, start, n_bytes
        cdef Py_ssize_t i
        cdef int again = 0
        while cap < 2 * <uint64_t>self.n + 2:
            cap <<= 1
        self.slots = <uint64_t*>calloc(cap, sizeof(uint64_t))
        if self.slots == NULL:
            raise MemoryError()
        self.mask = cap - 1
        with nogil:
            for i in range(self.n):
                start = self.offsets[i]
                n_bytes = self.offsets[i + 1] - start
                k = self._slot(self.data + start, n_bytes, hash_bytes(self.data + start, n_bytes))
                if self.slots[k]:
                    if not repeats:
                        return 1
                    again += 1
                self.slots[k] = <uint64_t>i + 1
        return again

    cdef uint64_t _slot(self, const uint8_t* p, size_t n, uint64_t h) noexcept nogil:
        # the slot of the text p[:n] (h: its hash_bytes): where it is
        # indexed, else the free one it would take
        cdef uint64_t k = h & self.mask
        cdef uint64_t e, start
        while True:
            e = self.slots[k]
            if e == 0:
                return k
            start = self.offsets[e - 1]
            if self.offsets[e] - start == n and (n == 0 or memcmp(self.data + start, p, n) == 0):
                return k
            k = (k + 1) & self.mask

    cdef int64_t find(self, const uint8_t* p, size_t n) noexcept nogil:
        """The entry index of the text spelled by UTF-8 ``p[:n]``, or -1."""
        return <int64_t>self.slots[self._slot(p, n, hash_bytes(p, n))] - 1

    cdef int64_t find_hashed(self, const uint8_t* p, size_t n, uint64_t h) noexcept nogil:
        """:meth:`find` of a text whose ``hash_bytes`` is ``h``, for a caller
        that hashed it once to prefetch its slot."""
        return <int64_t>self.slots[self._slot(p, n, h)] - 1

    def _entry(self, text):
        if type(text) is not str:
            return -1
        encoded = (<str>text).encode("utf-8", "surrogatepass")
        return self.find(<const uint8_t*>PyBytes_AS_STRING(encoded), PyBytes_GET_SIZE(encoded))

    def __contains__(self, text):
        return self._entry(text) >= 0

    def utf8_texts(self):
        """The texts in file order as UTF-8 ``bytes`` (no ``str`` made)."""
        cdef list out = [None] * self.n
        cdef Py_ssize_t i
        for i in range(self.n):
            out[i] = PyBytes_FromStringAndSize(<const char*>self.data + self.offsets[i],
                                               self.offsets[i + 1] - self.offsets[i])
        return out

    def texts(self):
        """The texts in file order, a ``tuple`` of ``str`` (a model's token
        names: no dict of the vocabulary made for them)."""
        cdef tuple out = PyTuple_New(self.n)
        cdef Py_ssize_t i
        for i in range(self.n):
            text = self._text(i)
            Py_INCREF(text)
            PyTuple_SET_ITEM(out, i, text)
        return out

    cdef object _text(self, Py_ssize_t i):
        return PyUnicode_DecodeUTF8(<const char*>self.data + self.offsets[i],
                                    self.offsets[i + 1] - self.offsets[i], NULL)


cdef class PackedVocab(PackedTexts):
    """A model's ``vocab`` object ``{text: id}`` kept packed (see the module
    notes); ``to_dict()`` gives it as ``json.loads`` would.

    >>> doc, model = read_tokenizer_document(b'{"model": {"vocab": {"a": 0, "\\\\u00e9": 1}}}')
    >>> v = model.vocab
    >>> len(v), v.get("\\u00e9"), "b" in v, v.to_dict(), v.in_order, v.utf8_texts()
    (2, 1, False, {'a': 0, 'é': 1}, True, [b'a', b'\\xc3\\xa9'])
    """

    def __cinit__(self):
        self.entry_ids = NULL

    def __dealloc__(self):
        free(self.entry_ids)

    def get(self, text, default=None):
        """The id of ``text``, or ``default``."""
        cdef int64_t e = self._entry(text)
        return self.entry_ids[e] if e >= 0 else default

    @property
    def ids(self):
        """The ids in file order, an ``array('q')``."""
        cdef carray.array out = array("q", bytes(8 * self.n))
        if self.n:
            memcpy(out.data.as_voidptr, self.entry_ids, 8 * self.n)
        return out

    @property
    def in_order(self):
        """Whether the ids are 0 to n - 1 in the order listed (as tokenizers writes them)."""
        cdef Py_ssize_t i
        for i in range(self.n):
            if self.entry_ids[i] != i:
                return False
        return True

    def to_dict(self):
        """``{text: id}`` as ``json.loads`` gives it."""
        cdef dict out = {}
        cdef Py_ssize_t i
        for i in range(self.n):
            PyDict_SetItem(out, self._text(i), PyLong_FromLongLong(self.entry_ids[i]))
        return out


cdef class PackedPieces(PackedTexts):
    """A Unigram model's ``vocab`` list ``[[piece, score], ...]`` kept packed
    (see the module notes): each score is kept as its JSON number's text,
    which the model reads into f64 as tokenizers reads it, and ``to_list()``
    gives the list as ``json.loads`` would. As a mapping from a piece to
    its id (``get``, ``in``) a piece listed twice has its last id, as in
    tokenizers' ``token_to_ids``; ``in_order`` says no piece is.

    >>> doc, model = read_tokenizer_document(b'{"model": {"vocab": [["a", 0], ["b", -1.5e0], ["a", 2]]}}')
    >>> p = model.vocab
    >>> len(p), p.to_list(), p.get("a"), "c" in p, p.in_order, p.number_texts()
    (3, [['a', 0], ['b', -1.5], ['a', 2]], 2, False, False, [b'0', b'-1.5e0', b'2'])
    """

    def __cinit__(self):
        self.numbers = NULL
        self.number_offsets = NULL
        self.numbers_cap = 0

    def __dealloc__(self):
        free(self.numbers)
        free(self.number_offsets)

    cdef int _indexed(self) except -1:
        # the index, made on first use: a load looks up a few added tokens
        if self.slots == NULL:
            self.repeats = self._index(True) != 0
        return 0

    def get(self, text, default=None):
        """The id of piece ``text`` (its last, if listed twice), or ``default``."""
        self._indexed()
        cdef int64_t e = self._entry(text)
        return e if e >= 0 else default

    def __contains__(self, text):
        self._indexed()
        return self._entry(text) >= 0

    @property
    def in_order(self):
        """Whether no piece is listed twice: then piece i has id i."""
        self._indexed()
        return not self.repeats

    def numbers_in_range(self):
        """Whether every score's number is one tokenizers reads into a finite
        double whatever its digits: no exponent, at most 300 characters (its
        digits past a u64's only move the point: at most 10**281 times one).
        Then the scores need not be read to check the file, only to run it.

        >>> _, m = read_tokenizer_document(b'{"model": {"vocab": [["a", -1.5], ["b", 2]]}}')
        >>> _, big = read_tokenizer_document(b'{"model": {"vocab": [["a", 1e999]]}}')
        >>> m.vocab.numbers_in_range(), big.vocab.numbers_in_range()
        (True, False)
        """
        cdef Py_ssize_t i
        cdef size_t total = self.number_offsets[self.n] if self.n else 0
        if memchr(self.numbers, c'e', total) != NULL or memchr(self.numbers, c'E', total) != NULL:
            return False
        for i in range(self.n):
            if self.number_offsets[i + 1] - self.number_offsets[i] > 300:
                return False
        return True

    def number_texts(self):
        """Each score's JSON number as written, ``bytes``."""
        return [PyBytes_FromStringAndSize(<const char*>self.numbers + self.number_offsets[i],
                                          self.number_offsets[i + 1] - self.number_offsets[i])
                for i in range(self.n)]

    def to_list(self):
        """``[[piece, score], ...]`` as ``json.loads`` gives it (an ``int``
        for a number written without a fraction or exponent)."""
        cdef list out = [None] * self.n
        cdef Py_ssize_t i
        cdef bytes number
        for i in range(self.n):
            number = PyBytes_FromStringAndSize(<const char*>self.numbers + self.number_offsets[i],
                                               self.number_offsets[i + 1] - self.number_offsets[i])
            out[i] = [self._text(i), float(number)
                      if b"." in number or b"e" in number or b"E" in number else int(number)]
        return out


cdef class PackedMerges(PackedTexts):
    """A model's ``merges`` list kept packed (see the module notes);
    ``to_list()`` gives it as ``json.loads`` would.

    >>> doc, model = read_tokenizer_document(b'{"model": {"merges": ["a b", ["c", "d"], "e"]}}')
    >>> m = model.merges
    >>> len(m), m.to_list(), m.text_parts(0), m.text_parts(2)
    (3, ['a b', ['c', 'd'], 'e'], ('a', 'b'), None)
    """

    def __cinit__(self):
        self.mids = NULL
        self.kinds = NULL

    def __dealloc__(self):
        free(self.mids)
        free(self.kinds)

    cdef int parts(self, Py_ssize_t i, const uint8_t** left, size_t* left_len,
                   const uint8_t** right, size_t* right_len) noexcept nogil:
        # merge i's two parts as UTF-8; 1 for a string without one space
        cdef uint64_t start = self.offsets[i], mid = self.mids[i], end = self.offsets[i + 1]
        if self.kinds[i] == KIND_OTHER:
            return 1
        left[0] = self.data + start
        left_len[0] = mid - start
        if self.kinds[i] == KIND_STRING:
            mid += 1
        right[0] = self.data + mid
        right_len[0] = end - mid
        return 0

    cdef object _str(self, uint64_t start, uint64_t end):
        return PyUnicode_DecodeUTF8(<const char*>self.data + start, end - start, NULL)

    def text_parts(self, Py_ssize_t i):
        """Merge ``i``'s two parts, or ``None`` for a string without exactly one space."""
        cdef const uint8_t* a
        cdef const uint8_t* b
        cdef size_t la, lb
        if not 0 <= i < self.n:
            raise IndexError(i)
        if self.parts(i, &a, &la, &b, &lb):
            return None
        return (PyUnicode_DecodeUTF8(<const char*>a, la, NULL),
                PyUnicode_DecodeUTF8(<const char*>b, lb, NULL))

    def to_list(self):
        """The merges as ``json.loads`` gives them."""
        cdef list out = [None] * self.n
        cdef Py_ssize_t i
        for i in range(self.n):
            if self.kinds[i] == KIND_PAIR:
                out[i] = [self._str(self.offsets[i], self.mids[i]),
                          self._str(self.mids[i], self.offsets[i + 1])]
            else:
                out[i] = self._str(self.offsets[i], self.offsets[i + 1])
        return out


cdef int _vocab_room(PackedVocab v, Py_ssize_t e) except -1 nogil:
    # room for entry e and the offset after it (the arrays grow together);
    # the packing loop calls it only when they are full
    cdef void* grown
    if <size_t>e + 2 <= v.entry_cap:
        return 0
    grow_array(<void**>&v.offsets, &v.entry_cap, e + 2, sizeof(uint64_t), 1024)
    grown = realloc(v.entry_ids, v.entry_cap * sizeof(int64_t))
    if grown == NULL:
        with gil:
            raise MemoryError()
    v.entry_ids = <int64_t*>grown
    return 0


cdef int _pack_vocab(PackedVocab v, const uint8_t* s, size_t n, size_t* at) except -2 nogil:
    # The object at s[*at] into v: 0, with *at past it, or 1 when it is not
    # {string: id, ...} with ids 0 .. MAX_ID written as plain integers
    cdef size_t i = _skip_space(s, n, at[0] + 1), used = 0, digits
    cdef int64_t value
    cdef int step
    cdef Py_ssize_t e = 0
    _vocab_room(v, 0)
    v.offsets[0] = 0
    if i < n and s[i] == 0x7D:
        at[0] = i + 1
        return 0
    while True:
        if i >= n or s[i] != 0x22:
            return 1
        if _unescape(s, n, &i, &v.data, &v.data_cap, &used):
            return 1
        if i + 1 < n and s[i] == 0x3A and 0x30 <= s[i + 1] <= 0x39:
            i += 1  # a compact file's "key":id (no call to skip nothing)
        else:
            i = _skip_space(s, n, i)
            if i >= n or s[i] != 0x3A:
                return 1
            i = _skip_space(s, n, i + 1)
        value = 0
        digits = 0
        while i < n and 0x30 <= s[i] <= 0x39:
            value = value * 10 + (s[i] - 0x30)
            digits += 1
            i += 1
            if value > MAX_ID:
                return 1
        if digits == 0 or (digits > 1 and s[i - digits] == 0x30):
            return 1
        if i < n and (s[i] == 0x2E or s[i] == 0x65 or s[i] == 0x45):
            return 1  # a float
        if <size_t>e + 2 > v.entry_cap:
            _vocab_room(v, e)
        v.entry_ids[e] = value
        e += 1
        v.offsets[e] = used
        v.n = e
        step = _after_item(s, n, &i, 0x7D)
        if step == 0:
            continue
        if step == 2:
            at[0] = i
            return 0
        return 1


cdef size_t _number_end(const uint8_t* s, size_t n, size_t i) noexcept nogil:
    # the end of the JSON number at s[i] (``-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?``),
    # or i when there is none
    cdef size_t start = i, digits
    if i < n and s[i] == 0x2D:
        i += 1
    if i < n and s[i] == 0x30:
        i += 1
    elif i < n and 0x31 <= s[i] <= 0x39:
        while i < n and 0x30 <= s[i] <= 0x39:
            i += 1
    else:
        return start
    if i < n and s[i] == 0x2E:
        i += 1
        digits = i
        while i < n and 0x30 <= s[i] <= 0x39:
            i += 1
        if i == digits:
            return start
    if i < n and (s[i] == 0x65 or s[i] == 0x45):
        i += 1
        if i < n and (s[i] == 0x2B or s[i] == 0x2D):
            i += 1
        digits = i
        while i < n and 0x30 <= s[i] <= 0x39:
            i += 1
        if i == digits:
            return start
    return i


cdef int _piece_room(PackedPieces p, Py_ssize_t e) except -1 nogil:
    # room for entry e and the offsets after it (the arrays grow together)
    cdef void* grown
    if <size_t>e + 2 <= p.entry_cap:
        return 0
    grow_array(<void**>&p.offsets, &p.entry_cap, e + 2, sizeof(uint64_t), 1024)
    grown = realloc(p.number_offsets, p.entry_cap * sizeof(uint64_t))
    if grown == NULL:
        with gil:
            raise MemoryError()
    p.number_offsets = <uint64_t*>grown
    return 0


cdef int _pack_pieces(PackedPieces p, const uint8_t* s, size_t n, size_t* at) except -2 nogil:
    # The list at s[*at] into p: 0, with *at past it, or 1 when it is not
    # [[string, number], ...] (NaN and Infinity are no JSON numbers here)
    cdef size_t i = _skip_space(s, n, at[0] + 1), used = 0, numbers = 0, end
    cdef Py_ssize_t e = 0
    cdef int step
    _piece_room(p, 0)
    p.offsets[0] = p.number_offsets[0] = 0
    if i < n and s[i] == 0x5D:
        at[0] = i + 1
        return 0
    while True:
        if i >= n or s[i] != 0x5B:
            return 1
        i = _skip_space(s, n, i + 1)
        if i >= n or s[i] != 0x22 or _unescape(s, n, &i, &p.data, &p.data_cap, &used):
            return 1
        i = _skip_space(s, n, i)
        if i >= n or s[i] != 0x2C:
            return 1
        i = _skip_space(s, n, i + 1)
        end = _number_end(s, n, i)
        if end == i:
            return 1
        grow_array(<void**>&p.numbers, &p.numbers_cap, numbers + (end - i), 1, 4096)
        memcpy(p.numbers + numbers, s + i, end - i)
        numbers += end - i
        i = _skip_space(s, n, end)
        if i >= n or s[i] != 0x5D:
            return 1
        i += 1
        _piece_room(p, e)
        e += 1
        p.offsets[e] = used
        p.number_offsets[e] = numbers
        p.n = e
        step = _after_item(s, n, &i, 0x5D)
        if step == 0:
            continue
        if step == 2:
            at[0] = i
            return 0
        return 1


cdef int _merge_room(PackedMerges m, Py_ssize_t e) except -1 nogil:
    # room for merge e and the offset after it (the arrays grow together)
    cdef void* mids
    cdef void* kinds
    if <size_t>e + 2 <= m.entry_cap:
        return 0
    grow_array(<void**>&m.offsets, &m.entry_cap, e + 2, sizeof(uint64_t), 1024)
    mids = realloc(m.mids, m.entry_cap * sizeof(uint64_t))
    if mids != NULL:
        m.mids = <uint64_t*>mids
    kinds = realloc(m.kinds, m.entry_cap)
    if kinds != NULL:
        m.kinds = <uint8_t*>kinds
    if mids == NULL or kinds == NULL:
        with gil:
            raise MemoryError()
    return 0


cdef int _pack_merges(PackedMerges m, const uint8_t* s, size_t n, size_t* at) except -2 nogil:
    # The list at s[*at] into m: 0, with *at past it, or 1 when it is not a
    # list of strings and two-string lists
    cdef size_t i = _skip_space(s, n, at[0] + 1), used = 0, k, spaces
    cdef Py_ssize_t e = 0
    cdef int step
    _merge_room(m, 0)
    m.offsets[0] = 0
    if i < n and s[i] == 0x5D:
        at[0] = i + 1
        return 0
    while True:
        if i >= n:
            return 1
        _merge_room(m, e)
        if s[i] == 0x22:
            if _unescape(s, n, &i, &m.data, &m.data_cap, &used):
                return 1
            spaces = 0
            for k in range(m.offsets[e], used):
                if m.data[k] == 0x20:
                    if spaces == 0:
                        m.mids[e] = k
                    spaces += 1
            m.kinds[e] = KIND_STRING if spaces == 1 else KIND_OTHER
            if spaces != 1:
                m.mids[e] = used
        elif s[i] == 0x5B:
            i = _skip_space(s, n, i + 1)
            if i >= n or s[i] != 0x22 or _unescape(s, n, &i, &m.data, &m.data_cap, &used):
                return 1
            m.mids[e] = used
            i = _skip_space(s, n, i)
            if i >= n or s[i] != 0x2C:
                return 1
            i = _skip_space(s, n, i + 1)
            if i >= n or s[i] != 0x22 or _unescape(s, n, &i, &m.data, &m.data_cap, &used):
                return 1
            i = _skip_space(s, n, i)
            if i >= n or s[i] != 0x5D:
                return 1
            i += 1
            m.kinds[e] = KIND_PAIR
        else:
            return 1
        e += 1
        m.offsets[e] = used
        m.n = e
        step = _after_item(s, n, &i, 0x5D)
        if step == 0:
            continue
        if step == 2:
            at[0] = i
            return 0
        return 1


class PackedModel:
    """The parts of a document's ``model`` object the reader kept packed:
    ``vocab`` (a :class:`PackedVocab`, a :class:`PackedPieces` or ``None``),
    ``merges`` (a :class:`PackedMerges` or ``None``); ``object()`` is the
    model object as ``json.loads`` gives it (built once).

    >>> doc, model = read_tokenizer_document(b'{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}')
    >>> doc, model.object()
    ({'model': {'type': 'BPE'}}, {'type': 'BPE', 'vocab': {'a': 0}, 'merges': []})
    """

    def __init__(self, rest, keys, vocab, merges):
        self.rest = rest  # the document's model object, without what is packed
        self._keys = keys
        self.vocab = vocab
        self.merges = merges
        self._object = None

    def object(self, made=True):
        """The whole model object (``vocab`` and ``merges`` where the file has
        them); with ``made`` false, a new one whose packed parts are the
        :class:`PackedVocab` and :class:`PackedMerges` themselves: their
        Python objects are made for nothing when a model's build reads them
        packed."""
        if not made:
            return self._made(False)
        if self._object is None:
            self._object = self._made(True)
        return self._object

    def _made(self, made):
        held = {"vocab": self.vocab, "merges": self.merges}
        out = {}
        for key in self._keys:
            if key in held and held[key] is not None:
                packed = held[key]
                if not made:
                    out[key] = packed
                else:
                    out[key] = packed.to_dict() if type(packed) is PackedVocab else packed.to_list()
            else:
                out[key] = self.rest[key]
        return out


cdef class _Reader:
    cdef const uint8_t* s
    cdef size_t n, i
    cdef int depth
    cdef uint8_t* buf
    cdef size_t cap
    cdef dict memo
    cdef object model  # the PackedModel of the last "model" object read at the top

    def __cinit__(self):
        self.buf = NULL
        self.cap = 0

    def __dealloc__(self):
        free(self.buf)

    cdef inline void space(self) noexcept:
        self.i = _skip_space(self.s, self.n, self.i)

    cdef object value(self, int where):
        # where: 0 anywhere, 1 the document, 2 the top-level "model" object
        cdef uint8_t c
        if self.i >= self.n:
            raise _Fallback()
        c = self.s[self.i]
        if c == 0x22:
            return self.string()
        if c == 0x7B:
            return self.obj(where)
        if c == 0x5B:
            return self.arr()
        if c == 0x2D or 0x30 <= c <= 0x39:
            return self.number()
        if self.word(b"null"):
            return None
        if self.word(b"true"):
            return True
        if self.word(b"false"):
            return False
        if self.word(b"NaN"):
            return float("nan")
        if self.word(b"Infinity"):
            return float("inf")
        raise _Fallback()

    cdef bint word(self, bytes w):
        cdef size_t k, m = len(w)
        cdef const uint8_t* p = <const uint8_t*>PyBytes_AS_STRING(w)
        if self.i + m > self.n:
            return False
        for k in range(m):
            if self.s[self.i + k] != p[k]:
                return False
        self.i += m
        return True

    cdef object string(self):
        cdef size_t used = 0
        cdef size_t start = self.i + 1
        cdef size_t j = start
        cdef const uint8_t* s = self.s
        cdef uint8_t c
        cdef uint64_t w
        cdef object text
        # eight bytes a step until one may end the plain run (a Unigram
        # file's base64 charsmap is 320 kB of one string: byte by byte it
        # was 3.6M instructions, a sixth of the file's load)
        while j + 8 <= self.n:
            memcpy(&w, s + j, 8)
            if _run_ends(w):
                break
            j += 8
            if j - start == _LONG_RUN:
                text = _long_ascii_string(s, self.n, start)
                if text is not None:
                    self.i = start + len(text) + 1
                    return text
        while j < self.n:
            c = s[j]
            if c == 0x22 or c == 0x5C or c < 0x20:
                break
            j += 1
        if j < self.n and s[j] == 0x22:
            self.i = j + 1
            # strict: the three bytes of a surrogate are not UTF-8 (json.loads
            # reads them with surrogatepass), so the document goes to it
            text = PyUnicode_DecodeUTF8(<const char*>s + start, j - start, NULL)
        else:
            if _unescape(s, self.n, &self.i, &self.buf, &self.cap, &used):
                raise _Fallback()
            text = PyUnicode_DecodeUTF8(<const char*>self.buf, used, NULL)
        return self.memo.setdefault(text, text) if len(text) < 32 else text

    cdef object number(self):
        cdef size_t start = self.i, j = self.i
        cdef const uint8_t* s = self.s
        cdef bint is_float = False
        cdef size_t k
        if s[j] == 0x2D:
            j += 1
            self.i = j
            if self.word(b"Infinity"):
                return float("-inf")
        if j >= self.n or not 0x30 <= s[j] <= 0x39:
            raise _Fallback()
        if s[j] == 0x30:
            j += 1
        else:
            while j < self.n and 0x30 <= s[j] <= 0x39:
                j += 1
        if j + 1 < self.n and s[j] == 0x2E and 0x30 <= s[j + 1] <= 0x39:
            is_float = True
            j += 1
            while j < self.n and 0x30 <= s[j] <= 0x39:
                j += 1
        if j < self.n and (s[j] == 0x65 or s[j] == 0x45):
            k = j + 1
            if k < self.n and (s[k] == 0x2B or s[k] == 0x2D):
                k += 1
            if k < self.n and 0x30 <= s[k] <= 0x39:
                is_float = True
                j = k
                while j < self.n and 0x30 <= s[j] <= 0x39:
                    j += 1
        self.i = j
        text = (<const char*>s)[start:j]
        return float(text) if is_float else int(text)

    cdef object arr(self):
        cdef list out = []
        self.enter()
        self.i += 1
        self.space()
        if self.i < self.n and self.s[self.i] == 0x5D:
            self.i += 1
            self.depth -= 1
            return out
        while True:
            out.append(self.value(0))
            self.space()
            if self.i >= self.n:
                raise _Fallback()
            if self.s[self.i] == 0x2C:
                self.i += 1
                self.space()
                continue
            if self.s[self.i] == 0x5D:
                self.i += 1
                self.depth -= 1
                return out
            raise _Fallback()

    cdef void enter(self) except *:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Fallback()

    cdef object obj(self, int where):
        cdef dict out = {}
        cdef PackedTexts vocab = None  # a PackedVocab or PackedPieces
        cdef PackedMerges merges = None
        cdef size_t start
        cdef int failed
        self.enter()
        self.i += 1
        self.space()
        if self.i < self.n and self.s[self.i] == 0x7D:
            self.i += 1
            self.depth -= 1
            if where == 2:
                self.model = PackedModel(out, [], None, None)
            return out
        while True:
            if self.i >= self.n or self.s[self.i] != 0x22:
                raise _Fallback()
            key = self.string()
            self.space()
            if self.i >= self.n or self.s[self.i] != 0x3A:
                raise _Fallback()
            self.i += 1
            self.space()
            if self.i >= self.n:
                raise _Fallback()
            start = self.i
            if where == 1 and key == "model" and self.s[self.i] == 0x7B:
                value = self.obj(2)
            elif where == 2 and key == "vocab" and self.s[self.i] == 0x7B:
                vocab = PackedVocab()
                with nogil:
                    failed = _pack_vocab(<PackedVocab>vocab, self.s, self.n, &self.i)
                if not failed:
                    failed = vocab._index(False)
                if failed:
                    vocab = None
                    self.i = start
                    value = self.value(0)
                else:
                    value = _HELD
            elif where == 2 and key == "vocab" and self.s[self.i] == 0x5B:
                vocab = PackedPieces()
                with nogil:
                    failed = _pack_pieces(<PackedPieces>vocab, self.s, self.n, &self.i)
                if failed:
                    vocab = None
                    self.i = start
                    value = self.value(0)
                else:
                    value = _HELD
            elif where == 2 and key == "merges" and self.s[self.i] == 0x5B:
                merges = PackedMerges()
                with nogil:
                    failed = _pack_merges(merges, self.s, self.n, &self.i)
                if failed:
                    merges = None
                    self.i = start
                    value = self.value(0)
                else:
                    value = _HELD
            else:
                value = self.value(0)
            out[key] = value
            self.space()
            if self.i >= self.n:
                raise _Fallback()
            if self.s[self.i] == 0x2C:
                self.i += 1
                self.space()
                continue
            if self.s[self.i] == 0x7D:
                self.i += 1
                break
            raise _Fallback()
        self.depth -= 1
        if where == 2:
            keys = list(out)
            if out.get("vocab") is _HELD:
                del out["vocab"]
            else:
                vocab = None
            if out.get("merges") is _HELD:
                del out["merges"]
            else:
                merges = None
            self.model = PackedModel(out, keys, vocab, merges)
        return out


cdef class FileBytes:
    """A file's bytes, read into memory the system filled in one go (an
    anonymous mapping made with ``MAP_POPULATE``) rather than page by page
    on first touch: what :func:`read_file` gives for a regular file. A
    buffer (``memoryview``, ``hashlib``, this module's reader take it),
    with ``len`` and ``in`` for a ``bytes`` needle; freed when dropped.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile(suffix=".json") as f:
    ...     _ = f.write(b'{"a": 1}'); f.flush()
    ...     data = read_file(f.name)
    ...     len(data), b'"a"' in data, bytes(data), read_tokenizer_document(data)
    (8, True, b'{"a": 1}', ({'a': 1}, None))
    """

    cdef uint8_t* p
    cdef size_t n  # bytes read
    cdef size_t size  # bytes mapped

    def __cinit__(self):
        self.p = NULL
        self.n = self.size = 0

    def __dealloc__(self):
        if self.p != NULL:
            munmap(<void*>self.p, self.size)

    def __len__(self):
        return self.n

    def __contains__(self, bytes needle not None):
        cdef size_t m = len(needle)
        return m == 0 or memmem(self.p, self.n, PyBytes_AS_STRING(needle), m) != NULL

    def __getbuffer__(self, Py_buffer* view, int flags):
        # the view holds a reference to self, so the pages outlive it
        PyBuffer_FillInfo(view, self, <void*>self.p, self.n, 1, flags)

    def __releasebuffer__(self, Py_buffer* view):
        pass


def read_file(path):
    """The bytes of the file ``path``: a :class:`FileBytes` for a regular
    file that is not empty, else ``bytes`` read. Reading into new memory
    costs a page fault a 4 KiB page on first touch (~2 us on the
    development VM: 0.4 ms of a fresh process's load of a T5 conversion,
    10 ms of Llama 3's); memory mapped with ``MAP_POPULATE`` is filled by
    the system in one call. The file itself is not mapped: a file cut short
    by another process while mapped would fault (SIGBUS) where a read just
    ends early.

    >>> read_file("/nonexistent/tokenizer.json")
    Traceback (most recent call last):
    FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/tokenizer.json'
    """
    path = os.fspath(path)
    cdef bytes name = os.fsencode(path)
    cdef struct_stat st
    cdef void* p
    cdef FileBytes buffer
    cdef size_t size
    cdef ssize_t got
    cdef int fd
    if b"\0" in name:
        # (the system would open the path up to it: another file)
        raise ValueError("embedded null byte")
    fd = c_open(name, O_RDONLY | O_CLOEXEC)
    if fd < 0:
        PyErr_SetFromErrnoWithFilenameObject(OSError, path)
    try:
        if fstat(fd, &st) < 0:
            PyErr_SetFromErrnoWithFilenameObject(OSError, path)
        if S_ISREG(st.st_mode) and st.st_size > 0:
            size = <size_t>st.st_size
            p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
                     -1, 0)
            if p != MAP_FAILED:
                buffer = FileBytes.__new__(FileBytes)
                buffer.p = <uint8_t*>p
                buffer.size = size
                while buffer.n < size:
                    got = c_read(fd, buffer.p + buffer.n, size - buffer.n)
                    if got < 0:
                        if errno == EINTR:
                            continue
                        PyErr_SetFromErrnoWithFilenameObject(OSError, path)
                    if got == 0:
                        break  # the file was cut short since fstat: what is there
                    buffer.n += <size_t>got
                return buffer
    finally:
        c_close(fd)
    # a pipe, an empty file, memory the system will not map: read it
    with open(path, "rb") as f:
        return f.read()


def read_tokenizer_document(data):
    """``(document, packed)`` of the ``tokenizer.json`` bytes ``data``: the
    document as ``json.loads`` gives it, less the model's ``vocab`` and
    ``merges`` where ``packed`` (a :class:`PackedModel`, else ``None``)
    holds them; ``None`` when the bytes are for ``json.loads`` to read (and
    to say what is wrong with them: see the module notes).

    >>> read_tokenizer_document(rb'{"a": [1, 2.5, "\\ud83d\\ude00", null]}')
    ({'a': [1, 2.5, '😀', None]}, None)
    >>> read_tokenizer_document(b'{"a": [1, 2}') is None
    True
    """
    # any buffer (bytes, bytearray, a FileBytes), read in place: the buffer
    # held keeps it alive, and a bytearray from being resized, while it is read
    cdef Py_buffer view
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    cdef _Reader r = _Reader()
    r.n = view.len
    r.s = <const uint8_t*>view.buf if r.n else <const uint8_t*>b""
    r.i = 0
    r.memo = {}
    r.model = None
    r.depth = 0
    try:
        r.space()
        doc = r.value(1)
        r.space()
        if r.i != r.n:
            raise _Fallback()
    except (_Fallback, UnicodeDecodeError, ValueError):
        return None
    finally:
        PyBuffer_Release(&view)
    model = r.model
    if model is None or not isinstance(doc, dict) or doc.get("model") is not model.rest:
        return doc, None
    if model.vocab is None and model.merges is None:
        return doc, None  # nothing was held out of the model object
    return doc, model


# Performance notes (Llama 3's tokenizer.json, 9 MB: 128k entries, 280k
# merges; CPU ms, best of 5, on a shared 2-core machine at load 5-10, so
# only the proportions are firm).
#
# - json.loads of the whole document: 74 ms on a quiet machine (120-250
#   loaded); this reader with vocab and merges packed: 20-30 ms loaded. The
#   rest of the document (added tokens, stages) is a few hundred objects.
# - The packed model spares the loader its Python loop over 128k entries
#   (decode, list and tuple building: 97 ms) and the second build of the
#   token tables (55 ms): _bytemap.byte_level_tables decodes and places the
#   entries and resolves the merges in C, once (35-60 ms loaded, most of it
#   the merges' index lookups, cache misses that TokenTables._add_merge_batch
#   overlaps, and _derive's tables).
# - Kept: a second hash index over the entries' texts (PackedVocab._index,
#   ~3 ms): the JSON semantics of a text listed twice (the last id wins)
#   and the loader's lookups of added tokens by text need it; the token
#   tables' index is over decoded bytes and keeps a duplicate's first id.
# - A Unigram list (botchan_unigram_5000, 5,000 pieces): read as Python
#   lists 3.0 ms, a third of it float() of the scores (strtod's big-number
#   steps for 17 digits); packed 0.5 ms, and the model reads the scores
#   from the kept text in C in 0.1 ms instead of 2 ms from the floats.
# - _pack_pieces' _piece_room (the room check for every piece, out of
#   line) declared inline: gcc kept the call, and the T5 conversion's list
#   went 3.07M -> 3.06M instructions; not kept.
# - A string's run of ASCII and two-byte characters is copied at once: one
#   character at a time through the escape path made _unescape the reader's
#   hottest function on byte-level vocabularies (every "Ġ" is two bytes).
