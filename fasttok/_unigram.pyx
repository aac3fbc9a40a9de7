"""Unigram segmentation: the best-scoring split of normalized text into pieces.

One implementation serves SentencePiece ``.model`` files and GGUF ``t5``
vocabularies; ``llama_cpp`` switches the few arithmetic rules in which
llama.cpp's UGM tokenizer differs from sentencepiece.

Algorithm (sentencepiece's ``EncodeOptimized``): one left-to-right pass over
the UTF-8 byte positions that start a character. From each position the piece
trie is walked byte by byte; every piece found updates ``best[end]`` (best
score of a segmentation of the first ``end`` bytes, and the last piece's start
and id) if it is strictly better, so on ties the piece that starts earliest
wins. When no piece covers exactly the character at the position, an unknown
node of score ``min_score - 10`` covers it. Backtracking from ``best[n]``
gives the pieces. O(n * k) time for k pieces per position, O(n) memory; no
lattice is kept.

Exactness details that decide ties and must match bit for bit:

* sentencepiece stores path scores as ``float`` but, because one conditional
  expression mixes a double (the user-defined score ``len * max_score - 0.1``)
  with the float piece score, adds every piece's score and compares in
  double; only the unknown node's candidate is a float sum. On a 1.5 MB text,
  where path scores reach -1e5, computing it all in float picked a different
  split ("um|er" for "ume|r") after 41k tokens. ``max_score`` starts at
  ``FLT_MIN`` (the smallest positive float), so with the usual negative log
  probabilities the bonus is ~-0.1. UNUSED pieces are skipped.
* llama.cpp keeps path scores in ``double``, gives user-defined pieces score
  0, does not skip UNUSED pieces, and starts ``max_score`` at ``-FLT_MAX``.

The trie: a direct 256-entry table for the first byte and one open-addressing
hash keyed by ``(parent node, byte)`` for the rest, so each step of the walk
is one probe into a table that stays small (≈ total piece bytes). A
double-array trie (sentencepiece's darts) is also one load per byte but needs
a builder that fits every node's children into free slots; the hash was
chosen for the simpler, linear-time construction (250k pieces in ~60 ms).

>>> m = UnigramModel([b"<unk>", b"a", b"b", b"ab"], [0.0, -1.0, -1.0, -1.5], [2, 1, 1, 1], 0)
>>> m.segment(b"abc")
[(b'ab', 3), (b'c', 0)]
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.float cimport FLT_MAX, FLT_MIN
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc

from ._tables cimport _mix

# SentencePiece piece types (the numbering of fasttok.vocab.TokenType)
cdef enum:
    T_NORMAL = 1
    T_UNKNOWN = 2
    T_CONTROL = 3
    T_USER_DEFINED = 4
    T_UNUSED = 5
    T_BYTE = 6


cdef int spans_reserve(SpanBuf* buf, size_t extra) except -1 nogil:
    cdef size_t need = buf.len + extra
    cdef size_t cap
    cdef Span* grown
    if need <= buf.cap:
        return 0
    cap = buf.cap * 2 if buf.cap else 64
    while cap < need:
        cap *= 2
    if cap > (<size_t>-1) // sizeof(Span):
        with gil:
            raise MemoryError()
    grown = <Span*>realloc(buf.data, cap * sizeof(Span))
    if grown == NULL:
        with gil:
            raise MemoryError()
    buf.data = grown
    buf.cap = cap
    return 0


cdef int spans_push(SpanBuf* buf, uint32_t id, uint32_t start, uint32_t end,
                    uint32_t flags) except -1 nogil:
    cdef Span* sp
    if buf.len == buf.cap:
        spans_reserve(buf, 1)
    sp = &buf.data[buf.len]
    sp.id = id
    sp.start = start
    sp.end = end
    sp.flags = flags
    buf.len += 1
    return 0


cdef void spans_free(SpanBuf* buf) noexcept nogil:
    free(buf.data)
    buf.data = NULL
    buf.len = buf.cap = 0


cdef inline size_t one_char_len(uint8_t c) noexcept nogil:
    # sentencepiece's OneCharLen: from the lead byte alone
    if c < 0xC0:
        return 1
    if c < 0xE0:
        return 2
    if c < 0xF0:
        return 3
    return 4


cdef inline int64_t trie_child(const PieceTrie* t, uint32_t node, uint8_t c) noexcept nogil:
    cdef uint64_t key, k, i
    if node == 0:
        return t.root[c]
    key = (<uint64_t>node << 8) | c
    i = _mix(key) & t.mask
    while True:
        k = t.keys[i]
        if k == key:
            return t.children[i]
        if k == 0:
            return -1
        i = (i + 1) & t.mask


cdef int _trie_build(PieceTrie* t, list pieces) except -1:
    # pieces: (id, bytes) for every piece the trie holds
    cdef uint64_t total = 0, cap = 16, key, i
    cdef uint32_t node, k
    cdef int64_t ch
    cdef const uint8_t* p
    cdef Py_ssize_t n, j
    cdef bytes raw
    cdef int32_t pid
    for pid_obj, raw in pieces:
        total += PyBytes_GET_SIZE(raw)
    while cap < 2 * total + 2:
        cap <<= 1
    t.values = <int32_t*>malloc((total + 1) * sizeof(int32_t))
    t.keys = <uint64_t*>calloc(cap, sizeof(uint64_t))
    t.children = <uint32_t*>malloc(cap * sizeof(uint32_t))
    if t.values == NULL or t.keys == NULL or t.children == NULL:
        raise MemoryError()
    t.mask = cap - 1
    for j in range(256):
        t.root[j] = -1
    t.values[0] = -1
    t.n_nodes = 1
    for pid_obj, raw in pieces:
        pid = pid_obj
        p = <const uint8_t*>PyBytes_AS_STRING(raw)
        n = PyBytes_GET_SIZE(raw)
        node = 0
        for j in range(n):
            ch = trie_child(t, node, p[j])
            if ch < 0:
                ch = t.n_nodes
                t.values[ch] = -1
                t.n_nodes += 1
                if node == 0:
                    t.root[p[j]] = <int32_t>ch
                else:
                    key = (<uint64_t>node << 8) | p[j]
                    i = _mix(key) & t.mask
                    while t.keys[i] != 0:
                        i = (i + 1) & t.mask
                    t.keys[i] = key
                    t.children[i] = <uint32_t>ch
            node = <uint32_t>ch
        if n and t.values[node] < 0:
            t.values[node] = pid
    return 0


cdef class UnigramModel:
    """The Unigram model of one vocabulary.

    ``tokens`` holds each id's piece bytes; ``scores`` and ``types`` (the
    SentencePiece piece types, 1 normal … 6 byte) are parallel to it. NORMAL,
    USER_DEFINED and UNUSED pieces can match text; the others are reserved.
    ``unk_id`` is emitted for a character no piece covers. ``llama_cpp``
    selects llama.cpp's arithmetic (see the module notes).

    >>> m = UnigramModel([b"<unk>", b"\\xe2\\x96\\x81a", b"b"], [0.0, -2.0, -1.0], [2, 1, 1], 0)
    >>> m.segment("▁ab".encode())
    [(b'\\xe2\\x96\\x81a', 1), (b'b', 2)]
    """

    def __cinit__(self):
        self.trie.values = NULL
        self.trie.keys = NULL
        self.trie.children = NULL
        self.scores = NULL
        self.kinds = NULL

    def __init__(self, tokens, scores, types, Py_ssize_t unk_id, *, bint llama_cpp=False):
        cdef Py_ssize_t n = len(tokens), i
        cdef float score
        cdef int kind
        if not (len(scores) == len(types) == n):
            raise ValueError(f"{n} tokens but {len(scores)} scores and {len(types)} types")
        if not 0 <= unk_id < n:
            raise ValueError(f"unk id {unk_id} is not one of the {n} tokens")
        self.n_pieces = <uint32_t>n
        self.unk_id = <uint32_t>unk_id
        self.llama_cpp = llama_cpp
        self.scores = <float*>malloc((n + 1) * sizeof(float))
        self.kinds = <uint8_t*>malloc(n + 1)
        if self.scores == NULL or self.kinds == NULL:
            raise MemoryError()
        self.min_score = FLT_MAX
        self.max_score = -FLT_MAX if llama_cpp else FLT_MIN
        pieces = []
        for i in range(n):
            score = scores[i]
            kind = types[i]
            self.scores[i] = score
            self.kinds[i] = KIND_NORMAL
            if kind == T_NORMAL:
                if score < self.min_score:
                    self.min_score = score
                if score > self.max_score:
                    self.max_score = score
            elif kind == T_USER_DEFINED:
                self.kinds[i] = KIND_USER
            elif kind == T_UNUSED:
                self.kinds[i] = KIND_UNUSED
            if (kind == T_NORMAL or kind == T_USER_DEFINED or kind == T_UNUSED) \
                    and tokens[i] is not None:
                pieces.append((i, bytes(tokens[i])))
        self.unk_score = self.min_score - <float>10.0
        _trie_build(&self.trie, pieces)

    def __dealloc__(self):
        free(self.trie.values)
        free(self.trie.keys)
        free(self.trie.children)
        free(self.scores)
        free(self.kinds)

    cdef int viterbi(self, const uint8_t* s, size_t n, SpanBuf* out) except -1 nogil:
        """Append the best segmentation of s[0:n] to out (ids, byte spans)."""
        cdef BestPath* best
        cdef size_t pos, key, mblen, length, i, first, last
        cdef int64_t node
        cdef int32_t pid
        cdef uint8_t kind
        cdef double here, cand
        cdef float fhere
        cdef bint single
        cdef bint llama = self.llama_cpp
        cdef const PieceTrie* t = &self.trie
        cdef Span tmp
        cdef int32_t start
        if n == 0:
            return 0
        best = <BestPath*>malloc((n + 1) * sizeof(BestPath))
        if best == NULL:
            with gil:
                raise MemoryError()
        for i in range(n + 1):
            best[i].start = -1
            best[i].score = 0.0
            best[i].id = self.unk_id
        best[0].start = 0
        pos = 0
        while pos < n:
            here = best[pos].score
            fhere = <float>here
            mblen = one_char_len(s[pos])
            if mblen > n - pos:
                mblen = n - pos
            single = False
            node = 0
            key = pos
            while key < n:
                node = trie_child(t, <uint32_t>node, s[key])
                key += 1
                if node < 0:
                    break
                pid = t.values[node]
                if pid < 0:
                    continue
                kind = self.kinds[pid]
                length = key - pos
                if llama:
                    cand = here + (0.0 if kind == KIND_USER else <double>self.scores[pid])
                elif kind == KIND_UNUSED:
                    continue
                elif kind == KIND_USER:
                    cand = here + (<double>(<float>length * self.max_score) - 0.1)
                else:
                    # the ternary in sentencepiece makes every piece score a
                    # double, so the sum and the comparison are in double
                    cand = here + <double>self.scores[pid]
                if best[key].start < 0 or cand > best[key].score:
                    best[key].score = cand if llama else <double><float>cand
                    best[key].start = <int32_t>pos
                    best[key].id = <uint32_t>pid
                if length == mblen:
                    single = True
            if not single:
                if llama:
                    cand = here + <double>self.unk_score
                else:
                    cand = <float>(fhere + self.unk_score)
                key = pos + mblen
                if best[key].start < 0 or cand > best[key].score:
                    best[key].score = cand
                    best[key].start = <int32_t>pos
                    best[key].id = self.unk_id
            pos += mblen
        first = out.len
        key = n
        try:
            while key > 0:
                start = best[key].start
                if start < 0 or <size_t>start >= key:  # unreachable for valid UTF-8
                    spans_push(out, self.unk_id, 0, <uint32_t>key, 0)
                    break
                spans_push(out, best[key].id, <uint32_t>start, <uint32_t>key, 0)
                key = <size_t>start
        finally:
            free(best)
        last = out.len
        while first + 1 < last:
            last -= 1
            tmp = out.data[first]
            out.data[first] = out.data[last]
            out.data[last] = tmp
            first += 1
        return 0

    def segment(self, data):
        """The best segmentation of already-normalized text (``str`` or UTF-8
        ``bytes``) as ``[(piece bytes, id)]``; unknown characters get ``unk_id``."""
        cdef bytes raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        cdef SpanBuf out = SpanBuf(NULL, 0, 0)
        cdef size_t i
        try:
            self.viterbi(<const uint8_t*>PyBytes_AS_STRING(raw), len(raw), &out)
            return [(raw[out.data[i].start:out.data[i].end], out.data[i].id) for i in range(out.len)]
        finally:
            spans_free(&out)

    def lattice(self, data):
        """Every node of the full lattice of normalized text, for n-best and
        sampling: ``[(start, end, id, score)]`` in byte offsets, sorted by
        start, the unknown nodes included (``PopulateNodes``)."""
        cdef bytes raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        cdef const uint8_t* s = <const uint8_t*>PyBytes_AS_STRING(raw)
        cdef size_t n = len(raw), pos = 0, key, mblen, length
        cdef int64_t node
        cdef int32_t pid
        cdef uint8_t kind
        cdef bint single
        cdef double score
        nodes = []
        while pos < n:
            mblen = one_char_len(s[pos])
            if mblen > n - pos:
                mblen = n - pos
            single = False
            node = 0
            key = pos
            while key < n:
                node = trie_child(&self.trie, <uint32_t>node, s[key])
                key += 1
                if node < 0:
                    break
                pid = self.trie.values[node]
                if pid < 0:
                    continue
                kind = self.kinds[pid]
                if kind == KIND_UNUSED and not self.llama_cpp:
                    continue
                length = key - pos
                if kind == KIND_USER:
                    score = 0.0 if self.llama_cpp else (
                        <double>(<float>(_count_chars(s + pos, length)) * self.max_score) - 0.1)
                else:
                    score = self.scores[pid]
                nodes.append((pos, key, pid, score))
                if length == mblen:
                    single = True
            if not single:
                nodes.append((pos, pos + mblen, self.unk_id, <double>self.unk_score))
            pos += mblen
        return nodes


cdef inline size_t _count_chars(const uint8_t* s, size_t n) noexcept nogil:
    # characters in s[0:n] by lead bytes, as the lattice counts a node's length
    cdef size_t i = 0, count = 0
    while i < n:
        i += one_char_len(s[i])
        count += 1
    return count
