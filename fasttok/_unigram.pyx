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

* sentencepiece keeps path scores in float32 (``float_scores``): each
  candidate is a float sum, compared with the float already stored. A
  user-defined piece scores ``len * max_score - 0.1`` (``len`` in bytes;
  ``max_score`` starts at ``FLT_MIN``, the smallest positive float, so with
  the usual negative log probabilities the bonus is ~-0.1); UNUSED pieces are
  skipped. Measured against sentencepiece 0.2.3 rather than read off its
  source: the source's mixed arithmetic (double candidates compared with
  float-stored scores) broke ties differently on runs like 29 dashes, and
  all-double broke exact ties ("-" + 14 "--") the other way; float matched
  every line of the five corpus files for all five Unigram models. Known
  limit: one 100,000-digit line, where path scores reach ~-1e5 and near-ties
  (score differences of ~0.003) fall below float resolution, splits
  differently; so does a single call on a whole 1.5 MB file. Neither float
  nor double arithmetic reproduced sentencepiece there.
* llama.cpp sums in double, gives user-defined pieces score 0 and does not
  skip UNUSED pieces (its UGM tokenizer).

The trie is a double array: node p's child by byte c is unit
``base[p] + c`` when that unit's ``check`` is p, and a parallel array holds
the piece id that ends at each unit with its score as the Viterbi adds it. It
replaced an open-addressing hash keyed by (parent, byte) with the piece id
beside the child: one probe per step too, but its table was 2x the total
piece bytes at 16 bytes a slot (1 MB for a 5k-piece model, 134 MB for
nomic-bert-moe's 250k pieces), so steps missed the cache; the double array
is ~12 bytes per node and took botchan_unigram_5000 on en.txt lines from
19.6 to 25.4 MB/s. It is built breadth first, each node's children placed at
the first base, among 64 free units, where all their slots are free, else at
the end (250k pieces: 0.4 s; an unbounded first-fit search took 229 s).

Performance notes (2-core VM shared with other jobs, so only same-run
comparisons count; best of 7; botchan_unigram_5000, ``encode_many`` over the
lines of en.txt / one call on the whole file):

* The walk's chain of loads (unit -> base -> child unit) reads 8-byte
  ``TrieStep`` units; the piece id and its score (a user-defined piece's
  length bonus precomputed, UNUSED pieces left out of the trie for
  sentencepiece) sit in the parallel ``TrieLeaf`` array, read off that chain.
  Before, a match read ``kinds[id]`` and ``scores[id]``; lines 81 -> 76 ms.
* The float32 pass runs on 12-byte ``BestPathF`` entries, so the chain from
  one position's score to the next has no float/double conversions; the
  array is reset with ``memset`` (a 4-byte store per entry was 12% of the
  time on zh.txt lines). Whole en.txt 120 -> 112 ms.
* Best-path arrays of 8 MiB or more ask for transparent huge pages: one call
  on a whole file spent a quarter of its time in page faults on the fresh
  array. Whole en.txt 110 -> 87 ms, zh.txt 27 -> 14 ms.
* Not done: caching the segmentation of repeated words. A word's best split
  depends on the float32 score of the path before it (the rounding of
  ``here + score``), the drift that makes a whole file differ from its
  lines, so a cached split would not be exact.

>>> m = UnigramModel([b"<unk>", b"a", b"b", b"ab"], [0.0, -1.0, -1.0, -1.5], [2, 1, 1, 1], 0)
>>> m.segment(b"abc")
[(b'ab', 3), (b'c', 0)]
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.float cimport FLT_MAX, FLT_MIN
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcpy, memset

from ._growth cimport grow_array


# SentencePiece piece types (the numbering of fasttok.vocab.TokenType)
cdef enum:
    T_NORMAL = 1
    T_UNKNOWN = 2
    T_CONTROL = 3
    T_USER_DEFINED = 4
    T_UNUSED = 5
    T_BYTE = 6


cdef int spans_reserve(SpanBuf* buf, size_t extra) except -1 nogil:
    return grow_array(<void**>&buf.data, &buf.cap, buf.len + extra, sizeof(Span), 64)
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


cdef void spans_free(SpanBuf* buf) noexcept nogil:
    free(buf.data)
    buf.data = NULL
    buf.len = buf.cap = 0


cdef void viterbi_scratch_free(ViterbiScratch* scratch) noexcept nogil:
    free(scratch.best)
    scratch.best = NULL
    scratch.cap = 0


cdef inline size_t one_char_len(uint8_t c) noexcept nogil:
    # sentencepiece's OneCharLen: from the lead byte alone
    if c < 0xC0:
        return 1
    if c < 0xE0:
        return 2
    if c < 0xF0:
        return 3
    return 4


cdef struct FreeList:
    # The free units of a trie under construction, as a doubly linked list
    # (by index), so a search for room visits free units only.
    int32_t* next
    int32_t* prev
    int32_t head
    int32_t tail


cdef int _grow(PieceTrie* t, FreeList* fl, size_t need) except -1:
    cdef size_t cap = t.size, i
    cdef void* grown
    if need <= cap:
        return 0
    while cap < need:
        cap = cap * 2 if cap else 1024
    if cap >= 0x7FFFFFFF:
        raise MemoryError()
    grown = realloc(t.units, cap * sizeof(TrieUnit))
    if grown == NULL:
        raise MemoryError()
    t.units = <TrieUnit*>grown
    grown = realloc(fl.next, cap * sizeof(int32_t))
    if grown == NULL:
        raise MemoryError()
    fl.next = <int32_t*>grown
    grown = realloc(fl.prev, cap * sizeof(int32_t))
    if grown == NULL:
        raise MemoryError()
    fl.prev = <int32_t*>grown
    for i in range(t.size, cap):
        t.units[i].base = 0
        t.units[i].check = -1
        t.units[i].value = -1
        t.units[i].score = 0.0
        fl.prev[i] = fl.tail
        fl.next[i] = -1
        if fl.tail >= 0:
            fl.next[fl.tail] = <int32_t>i
        else:
            fl.head = <int32_t>i
        fl.tail = <int32_t>i
    t.size = cap
    return 0


cdef inline void _take(FreeList* fl, int32_t i) noexcept:
    if fl.prev[i] >= 0:
        fl.next[fl.prev[i]] = fl.next[i]
    else:
        fl.head = fl.next[i]
    if fl.next[i] >= 0:
        fl.prev[fl.next[i]] = fl.prev[i]
    else:
        fl.tail = fl.prev[i]


cdef enum:
    # Free units tried as the first child's slot before the node goes to
    # fresh space at the end; bounds construction at O(nodes * this).
    PLACE_TRIES = 64


cdef int _trie_build(PieceTrie* t, list pieces, const float* scores) except -1:
    # pieces: (id, bytes). Breadth first over the sorted keys: a node is a
    # range of keys sharing a prefix; its children (the distinct next bytes)
    # go to the first base, among a few free units, where all their slots are
    # free, else to fresh units at the end.
    cdef list order = sorted(((raw, pid) for pid, raw in pieces if raw), key=lambda e: e[0])
    cdef Py_ssize_t n = len(order), i, k
    cdef uint64_t total = 0
    cdef uint8_t* buf
    cdef uint64_t* offs
    cdef int32_t* ids
    cdef int32_t* queue          # (node, lo, hi, depth) quadruples
    cdef size_t q_head = 0, q_len = 0, q_cap
    cdef int32_t node, lo, hi, depth, base, f, tries, frontier = 1
    cdef uint8_t labels[256]
    cdef int32_t starts[257]
    cdef int n_labels, c
    cdef bint fits
    cdef bytes raw
    cdef FreeList fl
    fl.next = NULL
    fl.prev = NULL
    fl.head = fl.tail = -1
    for raw, _ in order:
        total += len(raw)
    buf = <uint8_t*>malloc(total + 1)
    offs = <uint64_t*>malloc((n + 1) * sizeof(uint64_t))
    ids = <int32_t*>malloc((n + 1) * sizeof(int32_t))
    q_cap = 4 * 1024
    queue = <int32_t*>malloc(q_cap * sizeof(int32_t))
    try:
        if buf == NULL or offs == NULL or ids == NULL or queue == NULL:
            raise MemoryError()
        total = 0
        for i in range(n):
            raw = order[i][0]
            offs[i] = total
            memcpy(buf + total, PyBytes_AS_STRING(raw), len(raw))
            total += len(raw)
            ids[i] = order[i][1]
        offs[n] = total
        t.size = 0
        t.units = NULL
        _grow(t, &fl, 1024)
        t.units[0].check = -2
        _take(&fl, 0)
        t.n_nodes = 1
        queue[0] = 0
        queue[1] = 0
        queue[2] = <int32_t>n
        queue[3] = 0
        q_len = 1
        while q_head < q_len:
            node = queue[4 * q_head]
            lo = queue[4 * q_head + 1]
            hi = queue[4 * q_head + 2]
            depth = queue[4 * q_head + 3]
            q_head += 1
            i = lo
            if i < hi and <int32_t>(offs[i + 1] - offs[i]) == depth:
                t.units[node].value = ids[i]     # the key that ends here sorts first
                t.units[node].score = scores[ids[i]]
                i += 1
            n_labels = 0
            while i < hi:
                c = buf[offs[i] + depth]
                labels[n_labels] = <uint8_t>c
                starts[n_labels] = <int32_t>i
                n_labels += 1
                while i < hi and buf[offs[i] + depth] == c:
                    i += 1
            if n_labels == 0:
                continue
            starts[n_labels] = hi
            base = -1
            f = fl.head
            tries = 0
            while f >= 0 and tries < PLACE_TRIES:
                if f > labels[0] and <size_t>(f - labels[0]) + 256 <= t.size:
                    base = f - labels[0]
                    fits = True
                    for k in range(1, n_labels):
                        if t.units[base + labels[k]].check != -1:
                            fits = False
                            break
                    if fits:
                        break
                    base = -1
                f = fl.next[f]
                tries += 1
            if base < 0:
                base = frontier     # nothing at or beyond the frontier is taken
            _grow(t, &fl, <size_t>base + 256)
            t.units[node].base = base
            if q_len + n_labels > q_cap // 4:
                while q_len + n_labels > q_cap // 4:
                    q_cap *= 2
                queue = <int32_t*>realloc(queue, q_cap * sizeof(int32_t))
                if queue == NULL:
                    raise MemoryError()
            for k in range(n_labels):
                t.units[base + labels[k]].check = node
                _take(&fl, base + labels[k])
                if base + labels[k] >= frontier:
                    frontier = base + labels[k] + 1
                t.n_nodes += 1
                queue[4 * q_len] = base + labels[k]
                queue[4 * q_len + 1] = starts[k]
                queue[4 * q_len + 2] = starts[k + 1]
                queue[4 * q_len + 3] = depth + 1
                q_len += 1
    finally:
        free(buf)
        free(offs)
        free(ids)
        free(queue)
        free(fl.next)
        free(fl.prev)
    return 0


cdef extern from *:
    """
    #include <stdlib.h>
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    /* A large block on transparent huge pages where the kernel offers them
       (madvise mode): one fault per 2 MiB instead of per 4 KiB. Freed with free(). */
    static void* ft_big_alloc(size_t size) {
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (size >= ((size_t)8 << 20)) {
            void* p = NULL;
            if (posix_memalign(&p, (size_t)1 << 21, size) != 0) return NULL;
            madvise(p, size, MADV_HUGEPAGE);
            return p;
        }
    #endif
        return malloc(size);
    }
    """
    void* ft_big_alloc(size_t size) nogil


cdef struct BestPathF:
    # BestPath with sentencepiece's float32 path score: 12 bytes, and no
    # float <-> double conversions on the chain from one position's score to
    # the next (the loop is bound by that chain's latency on CJK text).
    float score
    int32_t start
    uint32_t id


cdef inline void _forward_float(const TrieStep* units, const TrieLeaf* leaves, const uint8_t* s, size_t n,
                                BestPathF* best, float unk_score, uint32_t unk_id) noexcept nogil:
    # The Viterbi's forward pass in float32 (sentencepiece); best[i].start is
    # -1 for i > 0 on entry (see UnigramModel.viterbi).
    cdef size_t pos = 0, key, mblen
    cdef int32_t node, child, pid
    cdef float here, cand
    cdef bint single
    cdef const TrieStep* u
    cdef const TrieLeaf* leaf
    best[0].start = 0
    best[0].score = 0.0
    while pos < n:
        here = best[pos].score
        mblen = one_char_len(s[pos])
        if mblen > n - pos:
            mblen = n - pos
        single = False
        node = 0
        key = pos
        while key < n:
            child = units[node].base + s[key]
            key += 1
            u = &units[child]
            if u.check != node:
                break
            node = child
            leaf = &leaves[child]
            pid = leaf.value
            if pid >= 0:
                cand = here + leaf.score
                if best[key].start < 0 or cand > best[key].score:
                    best[key].score = cand
                    best[key].start = <int32_t>pos
                    best[key].id = <uint32_t>pid
                if key - pos == mblen:
                    single = True
        if not single:
            cand = here + unk_score
            key = pos + mblen
            if best[key].start < 0 or cand > best[key].score:
                best[key].score = cand
                best[key].start = <int32_t>pos
                best[key].id = unk_id
        pos += mblen


cdef inline void _forward_double(const TrieStep* units, const TrieLeaf* leaves, const uint8_t* s, size_t n,
                                 BestPath* best, float unk_score, uint32_t unk_id) noexcept nogil:
    # The same in double (llama.cpp)
    cdef size_t pos = 0, key, mblen
    cdef int32_t node, child, pid
    cdef double here, cand
    cdef bint single
    cdef const TrieStep* u
    cdef const TrieLeaf* leaf
    best[0].start = 0
    best[0].score = 0.0
    while pos < n:
        here = best[pos].score
        mblen = one_char_len(s[pos])
        if mblen > n - pos:
            mblen = n - pos
        single = False
        node = 0
        key = pos
        while key < n:
            child = units[node].base + s[key]
            key += 1
            u = &units[child]
            if u.check != node:
                break
            node = child
            leaf = &leaves[child]
            pid = leaf.value
            if pid >= 0:
                cand = here + <double>leaf.score
                if best[key].start < 0 or cand > best[key].score:
                    best[key].score = cand
                    best[key].start = <int32_t>pos
                    best[key].id = <uint32_t>pid
                if key - pos == mblen:
                    single = True
        if not single:
            cand = here + <double>unk_score
            key = pos + mblen
            if best[key].start < 0 or cand > best[key].score:
                best[key].score = cand
                best[key].start = <int32_t>pos
                best[key].id = unk_id
        pos += mblen


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
        self.trie.units = NULL
        self.trie.steps = NULL
        self.trie.leaves = NULL
        self.trie.size = 0
        self.scores = NULL
        self.kinds = NULL

    def __init__(self, tokens, scores, types, Py_ssize_t unk_id, *, bint llama_cpp=False,
                 float_scores=None):
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
        self.float_scores = (not llama_cpp) if float_scores is None else float_scores
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
            # sentencepiece never matches UNUSED pieces; llama.cpp does
            if (kind == T_NORMAL or kind == T_USER_DEFINED or (kind == T_UNUSED and llama_cpp)) \
                    and tokens[i] is not None:
                pieces.append((i, bytes(tokens[i])))
        self.unk_score = self.min_score - <float>10.0
        # The trie carries each piece's score as the Viterbi adds it (a
        # user-defined piece's depends on its byte length, fixed per piece),
        # so a match costs no lookups beyond the unit itself.
        effective = <float*>malloc((n + 1) * sizeof(float))
        if effective == NULL:
            raise MemoryError()
        try:
            for i in range(n):
                effective[i] = self.scores[i]
                if self.kinds[i] == KIND_USER:
                    effective[i] = 0.0 if llama_cpp else <float>(
                        <double>(<float>len(bytes(tokens[i] or b"")) * self.max_score) - 0.1)
            _trie_build(&self.trie, pieces, effective)
        finally:
            free(effective)
        # The walk's loads form a chain (unit -> base -> child unit); with
        # the piece and score moved to a parallel array, loaded off that
        # chain, the chain's array is 8 bytes a unit instead of 16.
        self.trie.steps = <TrieStep*>malloc(self.trie.size * sizeof(TrieStep))
        self.trie.leaves = <TrieLeaf*>malloc(self.trie.size * sizeof(TrieLeaf))
        if self.trie.steps == NULL or self.trie.leaves == NULL:
            raise MemoryError()
        for i in range(<Py_ssize_t>self.trie.size):
            self.trie.steps[i].base = self.trie.units[i].base
            self.trie.steps[i].check = self.trie.units[i].check
            self.trie.leaves[i].value = self.trie.units[i].value
            self.trie.leaves[i].score = self.trie.units[i].score
        free(self.trie.units)
        self.trie.units = NULL

    def __dealloc__(self):
        free(self.trie.units)
        free(self.trie.steps)
        free(self.trie.leaves)
        free(self.scores)
        free(self.kinds)

    cdef int viterbi(self, const uint8_t* s, size_t n, SpanBuf* out,
                     ViterbiScratch* scratch) except -1 nogil:
        """Append the best segmentation of s[0:n] to out (ids, byte spans);
        scratch (or NULL) holds the best-path array between calls."""
        cdef BestPath* best
        cdef size_t key, first, last
        cdef int32_t pid
        cdef bint float_scores = self.float_scores
        cdef float unk_score = self.unk_score
        cdef const TrieStep* units = self.trie.steps
        cdef const TrieLeaf* leaves = self.trie.leaves
        cdef Span tmp
        cdef int32_t start
        if n == 0:
            return 0
        if scratch != NULL:
            if scratch.cap < n + 1:
                free(scratch.best)
                scratch.cap = 0
                scratch.best = <BestPath*>ft_big_alloc((n + 1) * sizeof(BestPath))
                if scratch.best != NULL:
                    scratch.cap = n + 1
            best = scratch.best
        else:
            best = <BestPath*>ft_big_alloc((n + 1) * sizeof(BestPath))
        if best == NULL:
            with gil:
                raise MemoryError()
        # start -1 ("not reached") in every entry, by a vectorized fill: one
        # 4-byte store per 16-byte entry was 12% of the time on zh.txt lines
        memset(best, 0xFF, (n + 1) * (sizeof(BestPathF) if float_scores else sizeof(BestPath)))
        if float_scores:
            _forward_float(units, leaves, s, n, <BestPathF*>best, unk_score, self.unk_id)
        else:
            _forward_double(units, leaves, s, n, best, unk_score, self.unk_id)
        first = out.len
        key = n
        try:
            while key > 0:
                if float_scores:
                    start = (<BestPathF*>best)[key].start
                    pid = <int32_t>(<BestPathF*>best)[key].id
                else:
                    start = best[key].start
                    pid = <int32_t>best[key].id
                if start < 0 or <size_t>start >= key:  # unreachable for valid UTF-8
                    spans_push(out, self.unk_id, 0, <uint32_t>key, 0)
                    break
                spans_push(out, <uint32_t>pid, <uint32_t>start, <uint32_t>key, 0)
                key = <size_t>start
        finally:
            if scratch == NULL:
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
            self.viterbi(<const uint8_t*>PyBytes_AS_STRING(raw), len(raw), &out, NULL)
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
        cdef int32_t pid
        cdef uint8_t kind
        cdef bint single
        cdef double score
        cdef int32_t node, child
        nodes = []
        while pos < n:
            mblen = one_char_len(s[pos])
            if mblen > n - pos:
                mblen = n - pos
            single = False
            node = 0
            key = pos
            while key < n:
                child = self.trie.steps[node].base + s[key]
                key += 1
                if self.trie.steps[child].check != node:
                    break
                node = child
                pid = self.trie.leaves[node].value
                if pid >= 0:
                    kind = self.kinds[pid]
                    if kind != KIND_UNUSED or self.llama_cpp:
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
