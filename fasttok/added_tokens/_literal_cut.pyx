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
from libc.stdint cimport SIZE_MAX, int32_t, uint8_t
from libc.stdlib cimport free, malloc
from libc.string cimport memchr


cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size) except NULL
    bint PyUnicode_IS_ASCII(object text)
    object PyUnicode_Substring(object text, Py_ssize_t start, Py_ssize_t end)


cdef inline Py_ssize_t _chars(const uint8_t* s, size_t n) noexcept:
    # the characters of n bytes of UTF-8: the bytes that are no continuation byte
    cdef size_t i
    cdef Py_ssize_t c = 0
    for i in range(n):
        c += (s[i] & 0xC0) != 0x80
    return c


cdef enum:
    # strings starting with at most this many bytes are searched by the C
    # library's memchr, each byte's next place kept (a table test each
    # byte of the text was ~5 instructions a byte: ALBERT's "<" and "[")
    FEW_FIRSTS = 4


cdef class LiteralCut:
    """The leftmost-longest matches of ``strings`` (empty ones are never
    matched) in a text, compiled.

    >>> LiteralCut(["ab", "a"]).split("aab")
    ['', 'a', '', 'ab', '']
    """

    cdef int32_t root[256]      # the root's child by byte, or -1
    cdef int32_t* edge_start    # node i's edges are edge_start[i] .. edge_start[i + 1]
    cdef uint8_t* edge_byte
    cdef int32_t* edge_child
    cdef int32_t* ends          # the index of the string ending at the node (its last
                                # if repeated), or -1
    cdef uint8_t firsts[FEW_FIRSTS]  # the bytes the strings start with, when they are
    cdef int n_firsts           # at most FEW_FIRSTS of them (else 0)
    cdef Py_ssize_t n_strings   # how many strings were given (empty ones too)
    cdef tuple strings          # the strings until the trie is built from them

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
        cdef list children = [{}]
        cdef list ends = [-1]
        cdef Py_ssize_t node, n_nodes, n_edges, e, i, k = 0
        for text in self.strings:
            node = 0
            for b in text.encode("utf-8", "surrogatepass"):
                found = children[node].get(b)
                if found is None:
                    found = len(children)
                    children[node][b] = found
                    children.append({})
                    ends.append(-1)
                node = found
            if node != 0:
                ends[node] = k
            k += 1
        n_nodes = len(children)
        n_edges = sum(map(len, children))
        self.edge_start = <int32_t*>malloc((n_nodes + 1) * sizeof(int32_t))
        self.edge_byte = <uint8_t*>malloc(n_edges + 1)
        self.edge_child = <int32_t*>malloc((n_edges + 1) * sizeof(int32_t))
        self.ends = <int32_t*>malloc(n_nodes * sizeof(int32_t))
        if (self.edge_start == NULL or self.edge_byte == NULL or self.edge_child == NULL
                or self.ends == NULL):
            raise MemoryError()
        for i in range(256):
            self.root[i] = children[0].get(i, -1)
        self.n_firsts = len(children[0]) if len(children[0]) <= FEW_FIRSTS else 0
        for i, b in enumerate(sorted(children[0]) if self.n_firsts else ()):
            self.firsts[i] = b
        e = 0
        for node in range(n_nodes):
            self.edge_start[node] = <int32_t>e
            self.ends[node] = <int32_t>ends[node]
            for b, child in sorted(children[node].items()):
                self.edge_byte[e] = b
                self.edge_child[e] = child
                e += 1
        self.edge_start[n_nodes] = <int32_t>e
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
