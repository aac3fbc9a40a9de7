"""A text cut at a set of literal strings, leftmost first, then longest: where
``tokenizers``' added tokens cut the input (Aho-Corasick ``LeftmostLongest``).

The strings' UTF-8 make a trie: the root's children in a table of 256, each
other node's a run of edges sorted by byte. At each byte of the text that
some string starts with, the trie is walked as far as the text follows it,
and the longest string ended on the way is the match there. The work is the
text's length times the depth walked, at most the longest string's length,
as for the regex of the same trie (:func:`fasttok.shared.literal_match.longest_first`),
which this replaces on the hot path: on Gemma 3's 6,415 added tokens that
regex's ``split`` took 0.48 us of a 60-character line, most of it testing
each character against the set of first characters.

Matching UTF-8 bytes matches characters: a string starts with a lead byte,
which no continuation byte equals, and ends with its last character whole.
A string holding a lone surrogate is kept as ``surrogatepass`` writes it,
which no text's UTF-8 holds; a text holding one has no UTF-8, and
:meth:`LiteralCut.split` gives ``None`` for it.

>>> LiteralCut(["<a>", "<ab>", "\\n"]).split("x<ab>\\n<a>")
['x', '<ab>', '', '\\n', '', '<a>', '']

:meth:`LiteralCut.find` is the search for the first match alone, among the
strings a mask selects: what a disallowed-special check asks of every text
``Encoding.encode`` is given.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_GET_LENGTH
from libc.stdint cimport SIZE_MAX, int32_t, uint8_t, uint16_t, uint32_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memchr, memcpy

from fasttok.shared._utf8 cimport utf8_put


cdef extern from *:
    """
    #if defined(__SSE2__) && defined(__GNUC__)
    #include <emmintrin.h>
    #endif
    /* The first i' >= i below n where the 16-bit unit s[i'] is one of f[0..7],
     * or a surrogate when surrogates; n if none. Eight units at a time with
     * SSE2 (a unit at a time was ~10 instructions: a Chinese line's test). */
    static inline Py_ssize_t lc_find16(const uint16_t* s, Py_ssize_t i, Py_ssize_t n,
                                       const uint16_t* f, int surrogates) {
    #if defined(__SSE2__) && defined(__GNUC__)
        const __m128i f0 = _mm_set1_epi16((short)f[0]), f1 = _mm_set1_epi16((short)f[1]),
                      f2 = _mm_set1_epi16((short)f[2]), f3 = _mm_set1_epi16((short)f[3]),
                      f4 = _mm_set1_epi16((short)f[4]), f5 = _mm_set1_epi16((short)f[5]),
                      f6 = _mm_set1_epi16((short)f[6]), f7 = _mm_set1_epi16((short)f[7]),
                      high = _mm_set1_epi16((short)0xF800), sur = _mm_set1_epi16((short)0xD800),
                      sur_on = _mm_set1_epi16(surrogates ? (short)-1 : 0);
        if (!surrogates && f[1] == f[0] && f[2] == f[0] && f[3] == f[0] && f[4] == f[0]
                && f[5] == f[0] && f[6] == f[0] && f[7] == f[0]) {
            /* one first character (BERT's '['): 32 units a step to the step
             * holding it, which the loop below takes again */
            for (; i + 32 <= n; i += 32) {
                __m128i a = _mm_or_si128(_mm_cmpeq_epi16(_mm_loadu_si128((const __m128i*)(s + i)), f0),
                                         _mm_cmpeq_epi16(_mm_loadu_si128((const __m128i*)(s + i + 8)), f0));
                __m128i b = _mm_or_si128(_mm_cmpeq_epi16(_mm_loadu_si128((const __m128i*)(s + i + 16)), f0),
                                         _mm_cmpeq_epi16(_mm_loadu_si128((const __m128i*)(s + i + 24)), f0));
                if (_mm_movemask_epi8(_mm_or_si128(a, b)))
                    break;
            }
        }
        for (; i + 8 <= n; i += 8) {
            __m128i v = _mm_loadu_si128((const __m128i*)(s + i));
            __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi16(v, f0), _mm_cmpeq_epi16(v, f1)),
                                     _mm_or_si128(_mm_cmpeq_epi16(v, f2), _mm_cmpeq_epi16(v, f3)));
            m = _mm_or_si128(m, _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi16(v, f4), _mm_cmpeq_epi16(v, f5)),
                _mm_or_si128(_mm_cmpeq_epi16(v, f6), _mm_cmpeq_epi16(v, f7))));
            m = _mm_or_si128(m, _mm_and_si128(sur_on,
                                              _mm_cmpeq_epi16(_mm_and_si128(v, high), sur)));
            int bits = _mm_movemask_epi8(m);
            if (bits)
                return i + (__builtin_ctz((unsigned)bits) >> 1);
        }
    #endif
        for (; i < n; i++) {
            uint16_t u = s[i];
            if (u == f[0] || u == f[1] || u == f[2] || u == f[3] || u == f[4] || u == f[5]
                    || u == f[6] || u == f[7] || (surrogates && (u & 0xF800) == 0xD800))
                return i;
        }
        return n;
    }

    /* The first i' >= i below n where the 32-bit unit s[i'] is f; n if
     * none. Sixteen units a step with SSE2 (a str of kind 4 was tested a
     * unit at a time, ~13 instructions: multi.txt's whole text). */
    static inline Py_ssize_t lc_find32(const uint32_t* s, Py_ssize_t i, Py_ssize_t n, uint32_t f) {
    #if defined(__SSE2__) && defined(__GNUC__)
        const __m128i v = _mm_set1_epi32((int)f);
        for (; i + 16 <= n; i += 16) {
            __m128i a = _mm_or_si128(_mm_cmpeq_epi32(_mm_loadu_si128((const __m128i*)(s + i)), v),
                                     _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i*)(s + i + 4)), v));
            __m128i b = _mm_or_si128(_mm_cmpeq_epi32(_mm_loadu_si128((const __m128i*)(s + i + 8)), v),
                                     _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i*)(s + i + 12)), v));
            if (_mm_movemask_epi8(_mm_or_si128(a, b)))
                break;
        }
    #endif
        for (; i < n; i++)
            if (s[i] == f)
                return i;
        return n;
    }
    """
    Py_ssize_t lc_find16(const uint16_t* s, Py_ssize_t i, Py_ssize_t n, const uint16_t* f,
                         int surrogates) noexcept
    Py_ssize_t lc_find32(const uint32_t* s, Py_ssize_t i, Py_ssize_t n, uint32_t f) noexcept


cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size) except NULL
    bint PyUnicode_IS_ASCII(object text)
    int PyUnicode_KIND(object text)
    void* PyUnicode_DATA(object text)
    Py_UCS4 PyUnicode_READ(int kind, const void* data, Py_ssize_t index) nogil
    object PyUnicode_Substring(object text, Py_ssize_t start, Py_ssize_t end)


cdef inline Py_ssize_t _chars(const uint8_t* s, size_t n) noexcept:
    # the characters of n bytes of UTF-8: the bytes that are no continuation byte
    cdef size_t i
    cdef Py_ssize_t c = 0
    for i in range(n):
        c += (s[i] & 0xC0) != 0x80
    return c


cdef class LiteralCut:
    """The leftmost-longest matches of ``strings`` (empty ones are never
    matched) in a text, compiled.

    >>> LiteralCut(["ab", "a"]).split("aab")
    ['', 'a', '', 'ab', '']
    """

    def __cinit__(self):
        self.edge_start = NULL
        self.edge_byte = NULL
        self.edge_child = NULL
        self.ends = NULL

    def __init__(self, strings):
        # the trie is built on the first search: Gemma 3's 6,415 added
        # tokens take milliseconds, which a load need not pay
        self.strings = tuple(strings)
        self.n_strings = len(self.strings)

    cdef int _build(self) except -1:
        # Searches on other threads may ask at once (a batch's first texts
        # on a new tokenizer), and the Python calls below may let them run:
        # everything is made aside and set in one step with no Python call
        # in it, ends last (what a search tests), and a trie another thread
        # set meanwhile is kept.
        #
        # The nodes are made from the strings in byte order (a repeated
        # string's places in order: sorted is stable, so its last ends its
        # node): a string shares the nodes of its common prefix with the one
        # before it and adds one node a byte after that, so the nodes come
        # depth first and each node's children in byte order; the edges are
        # then laid out grouped by parent in one counting pass. (A trie of
        # dicts, a dict a node, was ~21k instructions a string: 2.2M of a
        # T5 conversion's first encode for its 104 added tokens.)
        cdef tuple strings = self.strings
        cdef list encoded = [t.encode("utf-8", "surrogatepass") for t in strings]
        cdef list order = sorted(range(len(encoded)), key=encoded.__getitem__)
        cdef Py_ssize_t total = sum(map(len, encoded))
        cdef Py_ssize_t longest = max(map(len, encoded), default=0)
        cdef Py_ssize_t k, node, n_nodes = 1, n_edges, e, i, d, m, prev_len = 0
        cdef const uint8_t* text
        cdef const uint8_t* prev = NULL
        cdef int32_t root[256]
        cdef uint8_t firsts[FEW_FIRSTS]
        cdef uint8_t ascii[FEW_ASCII_FIRSTS]
        cdef uint16_t first_chars[FEW_FIRST_CHARS]
        cdef uint8_t block_stop[0x400]
        cdef int n_firsts, n_roots = 0, n_first_chars, n_ascii_firsts = 0
        cdef int32_t* edge_start = NULL
        cdef uint8_t* edge_byte = NULL
        cdef int32_t* edge_child = NULL
        cdef int32_t* node_ends = NULL
        cdef int32_t* parent = NULL   # each node's parent and the byte to it
        cdef uint8_t* node_byte = NULL
        cdef int32_t* path = NULL     # the nodes of the last string, by depth
        cdef int32_t* cursor = NULL   # where each node's next edge goes
        if self.ends != NULL:
            return 0
        try:
            parent = <int32_t*>malloc((total + 1) * sizeof(int32_t))
            node_byte = <uint8_t*>malloc(total + 1)
            node_ends = <int32_t*>malloc((total + 1) * sizeof(int32_t))
            path = <int32_t*>malloc((longest + 1) * sizeof(int32_t))
            if parent == NULL or node_byte == NULL or node_ends == NULL or path == NULL:
                raise MemoryError()
            node_ends[0] = -1
            path[0] = 0
            for k in order:
                text = <const uint8_t*>PyBytes_AS_STRING(encoded[k])
                m = PyBytes_GET_SIZE(encoded[k])
                d = 0
                while d < m and d < prev_len and text[d] == prev[d]:
                    d += 1
                while d < m:
                    parent[n_nodes] = path[d]
                    node_byte[n_nodes] = text[d]
                    node_ends[n_nodes] = -1
                    d += 1
                    path[d] = <int32_t>n_nodes
                    n_nodes += 1
                if m:
                    node_ends[path[m]] = <int32_t>k
                prev, prev_len = text, m
            n_edges = n_nodes - 1
            edge_start = <int32_t*>calloc(n_nodes + 1, sizeof(int32_t))
            cursor = <int32_t*>malloc((n_nodes + 1) * sizeof(int32_t))
            edge_byte = <uint8_t*>malloc(n_edges + 1)
            edge_child = <int32_t*>malloc((n_edges + 1) * sizeof(int32_t))
            if edge_start == NULL or cursor == NULL or edge_byte == NULL or edge_child == NULL:
                raise MemoryError()
            for node in range(1, n_nodes):
                edge_start[parent[node] + 1] += 1
            for node in range(n_nodes):
                edge_start[node + 1] += edge_start[node]
            memcpy(cursor, edge_start, (n_nodes + 1) * sizeof(int32_t))
            for node in range(1, n_nodes):
                e = cursor[parent[node]]
                cursor[parent[node]] += 1
                edge_byte[e] = node_byte[node]
                edge_child[e] = <int32_t>node
            for i in range(256):
                root[i] = -1
            for e in range(edge_start[0], edge_start[1]):
                root[edge_byte[e]] = edge_child[e]
                if n_roots < FEW_FIRSTS:
                    firsts[n_roots] = edge_byte[e]
                n_roots += 1
                if edge_byte[e] < 0x80:
                    if n_ascii_firsts < FEW_ASCII_FIRSTS:
                        ascii[n_ascii_firsts] = edge_byte[e]
                    n_ascii_firsts += 1
            n_firsts = n_roots if n_roots <= FEW_FIRSTS else 0
            if n_ascii_firsts > FEW_ASCII_FIRSTS:
                n_ascii_firsts = -1
            chars = sorted({ord(t[0]) for t in strings if t})
            n_first_chars = len(chars) if len(chars) <= FEW_FIRST_CHARS and all(
                c < 0xD800 or 0xE000 <= c < 0x10000 for c in chars) else -1
            for i in range(FEW_FIRST_CHARS if n_first_chars >= 0 else 0):
                # (the first repeated: the search compares with all eight; with
                # none, a surrogate, which is found as one)
                first_chars[i] = chars[i] if i < len(chars) else (chars[0] if chars else 0xD800)
            block_stop[0] = block_stop[1] = 0
            for i in range(2, 0x400):
                # the block's first byte: 0xC0 | cp >> 6 below U+0800, 0xE0 | cp >> 12 from it
                block_stop[i] = root[0xC0 | i if i < 0x20 else 0xE0 | (i >> 6)] >= 0
            for i in range(0xD800 >> 6, 0xE000 >> 6):
                block_stop[i] = 2
            if self.ends != NULL:
                return 0  # built on another thread meanwhile: the finally frees this one
            memcpy(self.root, root, sizeof(root))
            memcpy(self.firsts, firsts, sizeof(firsts))
            memcpy(self.ascii_firsts, ascii, sizeof(ascii))
            memcpy(self.first_chars, first_chars, sizeof(first_chars))
            memcpy(self.block_stop, block_stop, sizeof(block_stop))
            self.n_firsts = n_firsts
            self.n_roots = n_roots
            self.n_first_chars = n_first_chars
            self.n_ascii_firsts = n_ascii_firsts
            self.edge_start = edge_start
            self.edge_byte = edge_byte
            self.edge_child = edge_child
            self.ends = node_ends
            # now the trie's: not freed below
            edge_start = NULL
            edge_byte = NULL
            edge_child = NULL
            node_ends = NULL
        finally:
            free(edge_start)
            free(edge_byte)
            free(edge_child)
            free(node_ends)
            free(parent)
            free(node_byte)
            free(path)
            free(cursor)
        self.strings = None
        return 0

    def __dealloc__(self):
        free(self.edge_start)
        free(self.edge_byte)
        free(self.edge_child)
        free(self.ends)

    cdef int32_t _find(self, const uint8_t* s, size_t n, size_t at, const uint8_t* mask,
                       size_t* start, size_t* end) noexcept:
        # The first match in s[at:n] of a string mask selects (NULL: of any),
        # longest at its start, into start/end; its index, or -1 for none.
        # Strings mask leaves out are walked through, not matched: the
        # longest selected one ended on the way is the match.
        cdef size_t i = at, j, best
        cdef size_t next_at[FEW_FIRSTS]   # where each first byte is next, from i on
        cdef int32_t node, e, last, found
        cdef int k
        cdef uint8_t b
        cdef const uint8_t* hit
        for k in range(self.n_firsts):
            next_at[k] = SIZE_MAX   # not searched yet
        while i < n:
            if self.n_firsts:
                # few first bytes (Llama 2's "<"): the C library's search for
                # each, the nearest taken
                j = n
                for k in range(self.n_firsts):
                    if next_at[k] == SIZE_MAX or next_at[k] < i:
                        hit = <const uint8_t*>memchr(s + i, self.firsts[k], n - i)
                        next_at[k] = n if hit == NULL else <size_t>(hit - s)
                    if next_at[k] < j:
                        j = next_at[k]
                if j == n:
                    return -1
                i = j
            node = self.root[s[i]]
            if node >= 0:
                best = 0
                found = self.ends[node]
                if found >= 0 and (mask == NULL or mask[found]):
                    best = i + 1
                j = i + 1
                while j < n:
                    b = s[j]
                    e = self.edge_start[node]
                    last = self.edge_start[node + 1]
                    while e < last and self.edge_byte[e] < b:
                        e += 1
                    if e == last or self.edge_byte[e] != b:
                        break
                    node = self.edge_child[e]
                    j += 1
                    if self.ends[node] >= 0 and (mask == NULL or mask[self.ends[node]]):
                        best = j
                        found = self.ends[node]
                if best:
                    start[0] = i
                    end[0] = best
                    return found
            i += 1
        return -1

    cdef bint _occurs_at(self, int kind, const void* data, Py_ssize_t n,
                         Py_ssize_t i) noexcept:
        # whether one of the strings starts at character i of a str (its
        # kind, data and length), the trie walked along its characters'
        # UTF-8, written as they are reached
        cdef uint8_t b[4]
        cdef size_t m, k
        cdef int32_t node = -1, e, last
        while i < n:
            m = utf8_put(b, PyUnicode_READ(kind, data, i))
            for k in range(m):
                if node < 0:
                    node = self.root[b[k]]
                    if node < 0:
                        return False
                else:
                    e = self.edge_start[node]
                    last = self.edge_start[node + 1]
                    while e < last and self.edge_byte[e] < b[k]:
                        e += 1
                    if e == last or self.edge_byte[e] != b[k]:
                        return False
                    node = self.edge_child[e]
                if self.ends[node] >= 0:
                    return True
            i += 1
        return False

    cdef int occurs_in(self, str text, bint surrogates) except -1:
        # :meth:`occurs` (surrogates: a lone surrogate counts as found), for
        # the walks that ask it of every text before they walk it whole
        # (WordPiece, BPE, Unigram): the text's own code units searched for
        # those whose UTF-8 starts with a string's first byte (no UTF-8
        # copy of the text made), each found one's place then walked down
        # the trie. A Latin-1 text is searched with memchr for each ASCII
        # first byte when there are few and no string starts with a
        # character of U+0080-U+00FF; a UCS-2 text eight units at a time
        # (lc_find16) when the strings start with at most eight characters,
        # none past U+FFFF (a first-byte test stops at every character of a
        # first character's block: Gemma 3's "▁" at every "’").
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i
        cdef int kind = PyUnicode_KIND(text), k
        cdef const void* data = PyUnicode_DATA(text)
        cdef const uint8_t* s = <const uint8_t*>data
        cdef const uint8_t* hit
        cdef uint32_t u
        cdef uint8_t stop
        cdef size_t start, end
        if self.ends == NULL:
            self._build()
        if kind == 1:
            if self.n_ascii_firsts >= 0 and (
                    PyUnicode_IS_ASCII(text) or (self.root[0xC2] < 0 and self.root[0xC3] < 0)):
                for k in range(self.n_ascii_firsts):
                    i = 0
                    while i < n:
                        hit = <const uint8_t*>memchr(s + i, self.ascii_firsts[k], <size_t>(n - i))
                        if hit == NULL:
                            break
                        i = hit - s
                        # (a one-byte string there: no walk down the trie,
                        # Gemma 3's "\n" ending every line)
                        if self.ends[self.root[self.ascii_firsts[k]]] >= 0 or \
                                self._occurs_at(1, data, n, i):
                            return 1
                        i += 1
                return 0
            if PyUnicode_IS_ASCII(text):
                return self._find(s, <size_t>n, 0, NULL, &start, &end) >= 0
            for i in range(n):
                u = s[i]
                if (self.root[u] >= 0 if u < 0x80 else self.block_stop[u >> 6]) and \
                        self._occurs_at(1, data, n, i):
                    return 1
            return 0
        if self.n_roots == 0 and not surrogates:
            return 0
        if kind == 2 and self.n_first_chars >= 0:
            i = 0
            while True:
                i = lc_find16(<const uint16_t*>data, i, n, self.first_chars, surrogates)
                if i == n:
                    return 0
                if 0xD800 <= (<const uint16_t*>data)[i] < 0xE000 or \
                        self._occurs_at(2, data, n, i):
                    return 1
                i += 1
        if kind == 4 and self.n_first_chars == 1 and not surrogates:
            # one first character (BERT's '['), none past U+FFFF
            i = 0
            while True:
                i = lc_find32(<const uint32_t*>data, i, n, self.first_chars[0])
                if i == n:
                    return 0
                if self._occurs_at(4, data, n, i):
                    return 1
                i += 1
        for i in range(n):
            u = (<const uint16_t*>data)[i] if kind == 2 else (<const uint32_t*>data)[i]
            if u < 0x80:
                stop = self.root[u] >= 0
            elif u < 0x10000:
                stop = self.block_stop[u >> 6]
                if stop == 2:
                    if surrogates:
                        return 1
                    stop = self.root[0xED] >= 0
            else:
                stop = self.root[0xF0 | (u >> 18)] >= 0
            if stop and self._occurs_at(kind, data, n, i):
                return 1
        return 0

    def occurs(self, str text not None, bint surrogates=False):
        """Whether one of the strings is in ``text`` (a lone surrogate as
        ``surrogatepass`` writes it), or with ``surrogates``, ``text``
        holds a lone surrogate (it has no UTF-8: :meth:`split` gives
        ``None`` for it), which a walk then leaves to the cut.

        >>> cut = LiteralCut(["<s>", "é!", "▁x"])
        >>> [cut.occurs(t) for t in ["a<s", "a<s>", "ée!", "aé!", "a▁x", "a▁", "\\ud800"]]
        [False, True, False, True, True, False, False]
        >>> cut.occurs("\\ud800", True)
        True
        """
        return self.occurs_in(text, surrogates) == 1

    def split(self, str text not None):
        """``text`` cut as ``re.split`` with one group cuts it: the text
        between matches at even places, the matches at odd ones (``[text]``
        itself when nothing matches); ``None`` for a text holding a lone
        surrogate.

        >>> cut = LiteralCut(["<s>"])
        >>> cut.split("é<s>"), cut.split("a\\ud800") is None
        (['é', '<s>', ''], True)
        """
        cdef Py_ssize_t size, chars = 0, a, b
        cdef const uint8_t* s
        cdef size_t at = 0, start, end
        cdef bint ascii = PyUnicode_IS_ASCII(text)
        cdef list out = None
        if self.ends == NULL:
            self._build()
        try:
            s = <const uint8_t*>PyUnicode_AsUTF8AndSize(text, &size)
        except UnicodeEncodeError:
            return None
        while self._find(s, <size_t>size, at, NULL, &start, &end) >= 0:
            if out is None:
                out = []
            a = <Py_ssize_t>start if ascii else chars + _chars(s + at, start - at)
            b = <Py_ssize_t>end if ascii else a + _chars(s + start, end - start)
            out.append(PyUnicode_Substring(text, chars, a))
            out.append(PyUnicode_Substring(text, a, b))
            at = end
            chars = b
        if out is None:
            return [text]
        out.append(PyUnicode_Substring(text, chars, PyUnicode_GET_LENGTH(text)))
        return out

    def find(self, str text not None, bytes mask not None):
        """The index of the first string found in ``text`` (leftmost, then
        longest) among those ``mask`` selects (one byte per string, in the
        order given; nonzero: selected), or -1. A repeated string is found
        as its last index, and selected by that index's byte. A text holding
        a lone surrogate is searched as ``surrogatepass`` writes it.

        >>> cut = LiteralCut(["<a>", "<ab>", "b"])
        >>> cut.find("x<ab>", b"\\1\\1\\1"), cut.find("x<ab>", b"\\1\\0\\1"), cut.find("x", b"\\1\\1\\1")
        (1, 2, -1)
        """
        cdef Py_ssize_t size
        cdef const uint8_t* s
        cdef size_t start, end
        cdef bytes raw
        if PyBytes_GET_SIZE(mask) < self.n_strings:
            raise ValueError(f"the mask has {len(mask)} bytes for {self.n_strings} strings")
        if self.ends == NULL:
            self._build()
        try:
            s = <const uint8_t*>PyUnicode_AsUTF8AndSize(text, &size)
        except UnicodeEncodeError:
            raw = text.encode("utf-8", "surrogatepass")
            s = <const uint8_t*>PyBytes_AS_STRING(raw)
            size = PyBytes_GET_SIZE(raw)
        return self._find(s, <size_t>size, 0, <const uint8_t*>PyBytes_AS_STRING(mask),
                          &start, &end)
