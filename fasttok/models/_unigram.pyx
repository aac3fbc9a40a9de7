"""Unigram segmentation: the best-scoring split of normalized text into pieces.

One implementation serves SentencePiece ``.model`` files, GGUF ``t5``
vocabularies and Hugging Face ``tokenizer.json`` Unigram models;
``llama_cpp`` and ``tokenizers`` switch the few arithmetic rules in which
llama.cpp's UGM tokenizer and Hugging Face tokenizers differ from
sentencepiece.

Algorithm (sentencepiece's ``EncodeOptimized``): one left-to-right pass over
the UTF-8 byte positions that start a character. From each position the piece
trie is walked byte by byte; every piece found updates ``best[end]`` (best
score of a segmentation of the first ``end`` bytes, and the last piece's start
and id) if it is strictly better, so on ties the piece that starts earliest
wins. When no piece covers exactly the character at the position, an unknown
node of score ``min_score - 10`` covers it. Backtracking from ``best[n]``
gives the pieces. O(n * k) time for k pieces per position, O(n) memory; no
lattice is kept.

Exactness: sentencepiece 0.2.3 (``src/unigram_model.cc`` of its sdist), bit
for bit on every line and on every whole corpus file in one call, for the
five Unigram models of the test data:

* Path scores are float32: ``best_path_score`` is a float and so are the piece
  scores (``GetScoreInlined``), so a candidate is a float sum, compared with
  ``>`` against the float stored. The unknown score ``min_score - 10`` is a
  float too (``min_score`` over NORMAL pieces).
* Rebasing: before the pieces from a position are tried, if its path score is
  outside [-1e5, 1e5] (``kScoreResetThreshold``), every score already written
  ahead of it is reduced by it, in float, and it becomes 0. The rounding of
  every later sum depends on where that happens. Without it a 100,000-digit
  line and whole corpus files (every model, every file of 1 MB or more) split
  differently a little after the first rebase.
* A user-defined piece scores ``0.1 * (length - 1)``, computed in double and
  returned as float (``GetUserDefinedScore``; length in bytes here, in
  characters in the lattice). The rule of older sentencepiece releases,
  ``length * max_score - 0.1``, splits a quarter of the lines
  differently when 5% of the pieces of botchan_unigram_5000 are
  user-defined.
* UNUSED pieces are skipped. Nothing splits the input before the model: the
  Python wrapper hands the whole string to ``Encode``, which normalizes it
  and passes it to the model in one piece.
* llama.cpp sums in double, never rebases, gives user-defined pieces score 0
  and does not skip UNUSED pieces (its UGM tokenizer).
* tokenizers (``models/unigram/model.rs``, ``encode_optimized``) sums in
  double too, and its piece scores are f64, not float: the leaves and the
  character table hold doubles (16-byte ``TrieLeafD`` / ``CharEntryD``, a
  layout of their own so the float flavours keep their 8- and 12-byte
  ones), and the unknown score is ``min_score - 10`` in double, the minimum
  over every piece. Its caller passes every piece as NORMAL (tokenizers
  matches them all, the unknown piece's own text included).

The trie is a double array: node p's child by byte c is unit
``base[p] + c`` when that unit's ``check`` is p, and a parallel array holds
the piece id that ends at each unit with its score as the Viterbi adds it.
Rejected: an open-addressing hash keyed by (parent, byte) with the piece id
beside the child. It is one probe per step too, but its table is 2x the
total piece bytes at 16 bytes a slot (1 MB for a 5k-piece model, 134 MB for
nomic-bert-moe's 250k pieces), so steps miss the cache; the double array is
~12 bytes per node and encodes en.txt lines with botchan_unigram_5000 30%
faster. It is built breadth first, each node's children placed at the first
base, among 64 free units, where all their slots are free, else at the end
(250k pieces: 0.4 s; an unbounded first-fit search takes 229 s).

Performance notes (2-core VM shared with other jobs, so only same-run
comparisons count; CPU time, best of 9 in alternating blocks against
sentencepiece; botchan_unigram_5000; "lines": ``encode_many`` over the lines
of a corpus file, "whole": one call on it):

* The walk's chain of loads (unit -> base -> child unit) reads 8-byte
  ``TrieStep`` units; the piece id and its score (a user-defined piece's
  length bonus precomputed, UNUSED pieces left out of the trie for
  sentencepiece) sit in the parallel ``TrieLeaf`` array, read off that chain
  (reading ``kinds[id]`` and ``scores[id]`` per match costs lines 6%).
* The float32 pass runs on 12-byte ``BestPathF`` entries, so the chain from
  one position's score to the next has no float/double conversions.
* The best-path array is the thread's (``ft_thread_cache.h``, up to 32 MiB:
  a 2.7 MB text), not a fresh one: a fresh array's pages would be faulted in on
  every call, a tenth of the time of a whole-file call even on huge pages
  (still asked for beyond 32 MiB). Span buffers of 1 MiB or more, 16 bytes a
  piece and the caller's, go from one call to the next through a per-thread
  spare for the same reason, which takes a fifth off whole multi.txt and
  en.txt.
* Entries are made "not reached" (start -1) a block of 2048 at a time ahead
  of the walk, not by one ``memset`` of the whole array first, so the walk
  finds them in cache; one comparison per position (``refill``) says when.
* A character of 2 or 3 bytes that no piece goes on past (most CJK for a
  model trained on English: 73% of zh.txt) takes its node from a table
  instead of a walk. Where no node crosses it either, the path before it is
  final and is emitted at once, while in cache (the backtrack from the end of
  a whole file is a fifth of the Viterbi's time on zh.txt, a chain of cache
  misses), and the next score stays in a register. The table holds blocks of
  64 characters by lead (and second) byte, blocks without pieces sharing one,
  so the scripts a vocabulary lacks cost no cache. The frontier (no node ends
  beyond it) is kept once per position from where the walk stopped, not at
  every piece found: a register more in the walk costs en.txt lines 4%.
  Together these make zh.txt 15% faster whole and 10% faster by lines, and
  multi.txt 15% faster whole; en.txt lines pay 4% for them.
* The output is a fused type: ``viterbi`` appends 16-byte spans (id and
  byte range, for offsets, pieces and byte fallback), ``viterbi_ids`` only
  the 4-byte ids into an array the caller sized at one per byte (no growth
  check), for ``encode_ordinary`` without byte fallback, where the caller
  then needs no ``_resolve_ids`` pass (3% of whole zh.txt). The best-path
  array and the spare span buffer have their own slots in
  ``ft_thread_cache.h`` (``FT_SLOT_UNIGRAM_BEST`` / ``FT_SLOT_UNIGRAM_SPANS``).
* Tried and dropped: a ring buffer of best paths emitted at every position no
  node crosses (no big array at all: whole zh.txt 11.8 ms, but en.txt lines
  +20%, from the extra work at every position of ASCII text); 8-byte entries
  with the piece found again by an exact trie lookup when backtracking
  (slower on every file); the character table for ASCII too (two dependent
  loads before the walk could start instead of one trie step).
* ``TokenizersUnigram.ids`` runs ``viterbi_ids`` and only redoes the text
  with spans (for tokenizers' fusing of unknown runs and byte fallback)
  when the unknown id is among the ids. Per word from Python (corpus words
  behind ``▁``, botchan_unigram_5000, ``bench/hf_models_speed.py``) it takes
  0.43 us a word of en.txt, 10x less than tokenizers' model run on the same
  words in one pre-tokenized call; the double leaves cost nothing
  measurable there, the call is most of it.
* Not done: caching the segmentation of repeated words in the float32
  flavour. A word's best split depends on the float32 score of the path
  before it (the rounding of ``here + score``, and the rebasing). The
  tokenizer.json walk caches segments in double, where no rebasing happens
  and the rounding is bounded (see the notes above UnigramWalk).

>>> m = UnigramModel([b"<unk>", b"a", b"b", b"ab"], [0.0, -1.0, -1.0, -1.5], [2, 1, 1, 1], 0)
>>> m.segment(b"abc")
[(b'ab', 3), (b'c', 0)]
"""

from cpython.bytes cimport PyBytes_AS_STRING
from libc.float cimport FLT_MAX
from libc.math cimport INFINITY, fabs, isfinite, nextafterf
from libc.stdint cimport SIZE_MAX, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memchr, memcmp, memcpy, memmove, memset, strlen

from fasttok.errors import FasttokError
from fasttok.shared._growth cimport grow_array
from fasttok.shared._json_reader cimport PackedPieces, PackedTexts
from fasttok.shared._id_lists cimport ids_list
from fasttok.shared._merge_sort cimport merge_sort
from array import array

from fasttok.shared._piece_cache cimport (FT_PC_PAYLOAD, ft_pc_count, ft_pc_entry, ft_pc_find,
                                          ft_pc_fits, ft_pc_hash, ft_pc_ids, ft_pc_open,
                                          ft_pc_prefetch, ft_pc_put, ft_pc_table,
                                          piece_cache_owner, piece_cache_table)


cdef extern from "ft_thread_cache.h" nogil:
    # The thread's best-path array (FT_SLOT_UNIGRAM_BEST) and one spare large
    # span buffer (FT_SLOT_UNIGRAM_SPANS), handed from a freed buffer to the
    # next one that grows past the same size: a fresh block's pages are
    # faulted in one by one, which cost a fifth of the time of one call on a
    # whole file.
    int FT_SLOT_UNIGRAM_BEST
    int FT_SLOT_UNIGRAM_SPANS
    void* ft_slot_take(int which, size_t size, size_t keep, int* owned)
    void* ft_slot_claim(int which, size_t need, size_t* size)
    int ft_slot_give(int which, void* p, size_t size, size_t keep)


cdef enum:
    # span buffers of this many bytes go to / come from the thread's spare
    SPARE_MIN = 1 << 20
    SPARE_KEEP = 32 << 20


cdef int spans_reserve(SpanBuf* buf, size_t extra) except -1 nogil:
    cdef size_t need = buf.len + extra, size
    cdef void* spare
    if need > buf.cap and need <= SPARE_KEEP // sizeof(Span) and need * sizeof(Span) >= SPARE_MIN:
        spare = ft_slot_claim(FT_SLOT_UNIGRAM_SPANS, need * sizeof(Span), &size)
        if spare != NULL:
            memcpy(spare, buf.data, buf.len * sizeof(Span))
            free(buf.data)
            buf.data = <Span*>spare
            buf.cap = size // sizeof(Span)
            return 0
    return grow_array(<void**>&buf.data, &buf.cap, need, sizeof(Span), 64)


cdef void spans_free(SpanBuf* buf) noexcept nogil:
    if buf.cap * sizeof(Span) < SPARE_MIN or not ft_slot_give(FT_SLOT_UNIGRAM_SPANS, buf.data,
                                                            buf.cap * sizeof(Span), SPARE_KEEP):
        free(buf.data)
    buf.data = NULL
    buf.len = buf.cap = 0


cdef void viterbi_scratch_free(ViterbiScratch* scratch) noexcept nogil:
    if scratch.owned:
        free(scratch.best)
    scratch.best = NULL
    scratch.size = 0
    scratch.owned = 0


cdef struct FreeList:
    # The free units of a trie under construction, as a doubly linked list
    # (by index), so a search for room visits free units only.
    int32_t* next
    int32_t* prev
    int32_t head
    int32_t tail
    int32_t high    # the first free unit from 256 on (-1: none)
    uint8_t low_free[256]       # which units below 256 are free
    uint16_t low_next[256]      # the first free unit above c and below 256, else 256


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
        if fl.high < 0 and i >= 256:
            fl.high = <int32_t>i
        if i < 256:
            fl.low_free[i] = 1
    if t.size < 256:
        _low_next(fl)
    t.size = cap
    return 0


cdef void _low_next(FreeList* fl) noexcept:
    # low_next from low_free (units below 256 are only ever taken: this
    # runs at most 256 times a build)
    cdef int c
    cdef uint16_t after = 256
    for c in range(255, -1, -1):
        fl.low_next[c] = after
        if fl.low_free[c]:
            after = <uint16_t>c


cdef inline void _take(FreeList* fl, int32_t i) noexcept:
    if i == fl.high:
        fl.high = fl.next[i]    # the list is in index order
    if i < 256:
        fl.low_free[i] = 0
        _low_next(fl)
    if fl.prev[i] >= 0:
        fl.next[fl.prev[i]] = fl.next[i]
    else:
        fl.head = fl.next[i]
    if fl.next[i] >= 0:
        fl.prev[fl.next[i]] = fl.prev[i]
    else:
        fl.tail = fl.prev[i]


cdef struct TextsCtx:
    const uint8_t* data
    const uint64_t* offs
    const uint64_t* head   # by id: the text's first 8 bytes, big-endian, zero padded


cdef int _text_less(const void* ctx, uint32_t a, uint32_t b) noexcept nogil:
    # whether text a sorts before text b: by bytes, a prefix first, equal
    # texts by id (a piece spelled twice keeps its last id in the trie).
    # Heads that differ order the texts so (a zero past a text's end is
    # below any byte, or ties, and then the texts are compared): most pairs
    # are told apart without memcmp
    cdef const TextsCtx* t = <const TextsCtx*>ctx
    if t.head[a] != t.head[b]:
        return t.head[a] < t.head[b]
    cdef uint64_t la = t.offs[a + 1] - t.offs[a], lb = t.offs[b + 1] - t.offs[b]
    cdef int c = memcmp(t.data + t.offs[a], t.data + t.offs[b], la if la < lb else lb)
    if c != 0:
        return c < 0
    if la != lb:
        return la < lb
    return a < b


cdef inline bint _fits(const PieceTrie* t, int32_t base, const uint8_t* labels,
                      int n_labels) noexcept:
    # whether children with these labels (the first one's unit free) all
    # have free units from base
    cdef int k
    if <size_t>base + 256 > t.size:
        return False
    for k in range(1, n_labels):
        if t.units[base + labels[k]].check != -1:
            return False
    return True


cdef enum:
    # Free units tried as the first child's slot before the node goes to
    # fresh space at the end; bounds construction at O(nodes * this).
    PLACE_TRIES = 64


cdef int _trie_build(PieceTrie* t, const uint8_t* data, const uint64_t* text_offs,
                     int32_t* keys, size_t n, const double* scores) except -1:
    # keys: the ids of the pieces to place (n, not empty texts), their texts
    # data[text_offs[id]:text_offs[id + 1]]; sorted here. Breadth first over
    # the sorted keys: a node is a range of keys sharing a prefix; its
    # children (the distinct next bytes) go to the first base, among a few
    # free units, where all their slots are free, else to fresh units at the
    # end.
    cdef Py_ssize_t i, k
    cdef int32_t* spare = <int32_t*>malloc((n + 1) * sizeof(int32_t))
    cdef uint64_t* head = NULL
    cdef uint64_t h, length
    cdef int32_t top = 0
    cdef TextsCtx texts
    cdef int32_t* queue          # (node, lo, hi, depth) quadruples
    cdef size_t q_head = 0, q_len = 0, q_cap
    cdef int32_t node, lo, hi, depth, base, f, tries, frontier = 1
    cdef uint8_t labels[256]
    cdef int32_t starts[257]
    cdef int n_labels, c
    cdef bint fits
    cdef FreeList fl
    fl.next = NULL
    fl.prev = NULL
    fl.head = fl.tail = fl.high = -1
    q_cap = 4 * 1024
    queue = <int32_t*>malloc(q_cap * sizeof(int32_t))
    try:
        if spare == NULL or queue == NULL:
            raise MemoryError()
        for i in range(<Py_ssize_t>n):
            top = keys[i] if keys[i] > top else top
        head = <uint64_t*>calloc(<size_t>top + 1, sizeof(uint64_t))
        if head == NULL:
            raise MemoryError()
        for i in range(<Py_ssize_t>n):
            length = text_offs[keys[i] + 1] - text_offs[keys[i]]
            h = 0
            for k in range(8):
                h = (h << 8) | (data[text_offs[keys[i]] + k] if <uint64_t>k < length else 0)
            head[keys[i]] = h
        texts.data = data
        texts.offs = text_offs
        texts.head = head
        # the texts are never copied, nor made Python objects
        merge_sort(<uint32_t*>keys, <uint32_t*>spare, n, _text_less, &texts)
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
            # The keys that end here sort first. A piece spelled twice (GGUF
            # files may hold one) keeps its last id, as llama.cpp's trie
            # overwrites on insert; equal texts sort by id.
            while i < hi and <int32_t>(text_offs[keys[i] + 1] - text_offs[keys[i]]) == depth:
                t.units[node].value = keys[i]
                t.units[node].score = scores[keys[i]]
                i += 1
            n_labels = 0
            while i < hi:
                c = data[text_offs[keys[i]] + depth]
                labels[n_labels] = <uint8_t>c
                starts[n_labels] = <int32_t>i
                n_labels += 1
                while i < hi and data[text_offs[keys[i]] + depth] == c:
                    i += 1
            if n_labels == 0:
                continue
            starts[n_labels] = hi
            # The first free unit where the node's children all fit, among
            # PLACE_TRIES above the first label (the free list is in index
            # order). Units at or below the first label cannot take it and
            # are not counted as tries: otherwise the few such units (all
            # below 256) used up the tries of every node with a high first
            # label, and a long piece's chain of nodes went to fresh space one
            # by one, ~label units apart (a 15 kB piece took 130 MB). Those
            # below 256 are found by low_next, not by the list: walking past
            # the ones at or below the label was a third of the build.
            base = -1
            tries = 0
            f = fl.low_next[labels[0]]
            while f < 256 and tries < PLACE_TRIES:
                if _fits(t, f - labels[0], labels, n_labels):
                    base = f - labels[0]
                    break
                f = fl.low_next[f]
                tries += 1
            f = fl.high if base < 0 else -1
            while f >= 0 and tries < PLACE_TRIES:
                if _fits(t, f - labels[0], labels, n_labels):
                    base = f - labels[0]
                    break
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
        free(spare)
        free(head)
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


cdef enum:
    # sentencepiece's kScoreResetThreshold: once the path score at a position
    # leaves [-1e5, 1e5], the scores ahead are rebased on it
    SCORE_RESET = 100000
    # bytes of best-path array a thread keeps between calls (a 2.7 MB text),
    # and entries made "not reached" at a time ahead of the walk
    BEST_KEEP = 32 << 20
    READY_BLOCK = 2048
    # Characters of 2 and 3 bytes by blocks of 64 (the last byte's low six
    # bits pick the entry): 2-byte ones by lead byte from BLOCK2, 3-byte
    # ones by lead and second byte from BLOCK3
    BLOCK2 = 0
    BLOCK3 = 32
    N_BLOCKS = 32 + 1024


cdef struct BestPath:
    # The best segmentation of the first `end` bytes ends with token id,
    # which starts at byte `start` (-1: no segmentation reaches here yet).
    double score
    int32_t start
    uint32_t id


cdef struct BestPathF:
    # BestPath with sentencepiece's float32 path score: 12 bytes, and no
    # float <-> double conversions on the chain from one position's score to
    # the next (the loop is bound by that chain's latency on CJK text).
    float score
    int32_t start
    uint32_t id


ctypedef fused score_t:
    float       # sentencepiece
    double      # llama.cpp

ctypedef fused path_t:
    BestPathF
    BestPath


cdef inline bint _trail(uint8_t c) noexcept nogil:
    return (c & 0xC0) == 0x80


ctypedef fused leaf_t:
    TrieLeaf    # float scores (sentencepiece, llama.cpp)
    TrieLeafD   # double scores (tokenizers)

ctypedef fused char_t:
    CharEntry
    CharEntryD


cdef inline const char_t* _char_entry(const char_t* tab, const uint16_t* block,
                                      const uint8_t* s, size_t n, size_t* mblen) noexcept nogil:
    # The entry of the multi-byte character at s (n > 0 bytes left) and its
    # length, or NULL where the byte walk must decide: a 4-byte, cut or
    # malformed one.
    cdef uint8_t c = s[0]
    if c >= 0xE0:
        if c < 0xF0 and n >= 3 and _trail(s[1]) and _trail(s[2]):
            mblen[0] = 3
            return &tab[(<size_t>block[BLOCK3 + ((c & 0x0F) << 6) + (s[1] & 0x3F)] << 6)
                        | (s[2] & 0x3F)]
        return NULL
    if c >= 0xC0 and n >= 2 and _trail(s[1]):
        mblen[0] = 2
        return &tab[(<size_t>block[BLOCK2 + (c & 0x1F)] << 6) | (s[1] & 0x3F)]
    return NULL


cdef inline int32_t _path_from(bint wide, const ViterbiScratch* scratch, size_t key) noexcept nogil:
    # where the best path to key starts its last node (-1: not reached), in
    # double (wide) or float entries
    if wide:
        return (<const BestPath*>scratch.best)[key].start
    return (<const BestPathF*>scratch.best)[key].start


cdef int _backtrack(const path_t* best, size_t first, size_t end, out_t* out) except -1 nogil:
    # Append the best path over [first, end) to out in text order; no node
    # crosses first, so the path from end back lands on it.
    cdef size_t key = end, lo = out.len, hi
    cdef int32_t start
    cdef Span tmp
    cdef uint32_t tmp_id
    while key > first:
        start = best[key].start
        emit(out, best[key].id, <uint32_t>start, <uint32_t>key, 0)
        key = <size_t>start
    hi = out.len
    while lo + 1 < hi:
        hi -= 1
        if out_t is SpanBuf:
            tmp = out.data[lo]
            out.data[lo] = out.data[hi]
            out.data[hi] = tmp
        else:
            tmp_id = out.data[lo]
            out.data[lo] = out.data[hi]
            out.data[hi] = tmp_id
        lo += 1
    return 0


cdef inline void _unreach(path_t* best, size_t pos, size_t reach, size_t n, size_t* ready,
                          size_t* refill) noexcept nogil:
    # Makes entries "not reached" a block at a time ahead of the walk, so
    # they are still in cache when it gets there; those behind pos that the
    # shortcut for lone characters skipped are never read.
    cdef size_t last = pos + reach + READY_BLOCK
    if ready[0] <= pos:
        ready[0] = pos + 1
    if last > n + 1:
        last = n + 1
    memset(&best[ready[0]], 0xFF, (last - ready[0]) * sizeof(path_t))
    ready[0] = last
    refill[0] = last - reach if last <= n else n


cdef inline void _near(double* margin, double a, double b) noexcept nogil:
    # margin[0] becomes the least |a - b| of the comparisons it has seen
    cdef double d = fabs(a - b)
    if d < margin[0]:
        margin[0] = d


cdef int _best_path(const TrieStep* units, const leaf_t* leaves, const char_t* tab,
                    const uint16_t* block, const uint8_t* s, size_t n, path_t* best,
                    double unk_score, uint32_t unk_id, size_t reach, out_t* out,
                    score_t zero, double* margin, double* end, size_t* settled) except -1 nogil:
    # The Viterbi over s[0:n] (n > 0), its pieces appended to out. best[key]
    # becomes the best path over s[0:key] (its score, and its last node's
    # start and id; start -1: not reached). Float (sentencepiece) with its
    # score rebasing, or double (llama.cpp, tokenizers) without; leaves and
    # tab hold float scores, or double ones (tokenizers). reach: no node spans
    # more bytes. here: the score at pos; frontier: no node so far ends
    # beyond it; first: where the pieces not yet emitted start; entries up
    # to ready are made "not reached", and more once pos reaches refill.
    # zero: the score the path starts from; margin (or NULL): lowered to the
    # least |candidate - incumbent| of every comparison made (see
    # UnigramWalk._segments, which keeps a segment's split by it). end (or
    # NULL): the score at n before its rebasing, where a Viterbi over the
    # text after n starts when no node crosses n (an appender's window).
    # settled: where the path last went out early (see ViterbiScratch).
    cdef size_t pos = 0, key, mblen, i, last, ready = 0, refill = 0, frontier = 0, first = 0
    cdef int32_t node, child, pid
    cdef score_t here = zero, cand
    cdef bint single
    cdef const leaf_t* leaf
    cdef const char_t* e
    while pos < n:
        if score_t is float:
            if here < -SCORE_RESET or here > SCORE_RESET:
                # sentencepiece rebases the scores ahead on this one (in
                # float); the rounding of every later sum depends on it
                last = frontier if frontier < n else n
                for i in range(pos + 1, last + 1):
                    if best[i].start >= 0:
                        best[i].score = best[i].score - here
                here = 0
        if s[pos] >= 0x80:
            e = _char_entry(tab, block, s + pos, n - pos, &mblen)
            if e != NULL and e.alone:
                # No piece goes on past this character (for an English
                # model, most of CJK): its own node, read off the table, is
                # the only one from here.
                key = pos + mblen
                cand = here + <score_t>e.score
                if frontier <= pos:
                    # Nor does any node cross pos: the path up to pos is
                    # final (emitted now, while in cache), this node next.
                    if pos > first:
                        _backtrack(best, first, pos, out)
                    emit(out, e.id, <uint32_t>pos, <uint32_t>key, 0)
                    pos = first = frontier = key
                    here = cand
                    continue
                if pos >= refill:
                    _unreach(best, pos, reach, n, &ready, &refill)
                if margin != NULL and best[key].start >= 0:
                    _near(margin, cand, best[key].score)
                if best[key].start < 0 or cand > best[key].score:
                    best[key].score = cand
                    best[key].start = <int32_t>pos
                    best[key].id = e.id
                if key > frontier:
                    frontier = key
                pos = key
                here = best[pos].score
                continue
        if pos >= refill:
            _unreach(best, pos, reach, n, &ready, &refill)
        mblen = one_char_len(s[pos])
        if mblen > n - pos:
            mblen = n - pos
        single = False
        node = 0
        key = pos
        while key < n:
            # trie_step, spelled out: through it GCC made this loop 4-5% more
            # instructions (botchan_unigram_5000, en.txt lines, callgrind)
            child = units[node].base + s[key]
            key += 1
            if units[child].check != node:
                break
            node = child
            leaf = &leaves[child]
            pid = leaf.value
            if pid >= 0:
                cand = here + <score_t>leaf.score
                if margin != NULL and best[key].start >= 0:
                    _near(margin, cand, best[key].score)
                if best[key].start < 0 or cand > best[key].score:
                    best[key].score = cand
                    best[key].start = <int32_t>pos
                    best[key].id = <uint32_t>pid
                if key - pos == mblen:
                    single = True
        # (the walk's end bounds its pieces' ends: a frontier too far at
        # times only makes the branch above wait)
        if key > frontier:
            frontier = key
        if not single:
            cand = here + <score_t>unk_score
            key = pos + mblen
            if margin != NULL and best[key].start >= 0:
                _near(margin, cand, best[key].score)
            if best[key].start < 0 or cand > best[key].score:
                best[key].score = cand
                best[key].start = <int32_t>pos
                best[key].id = unk_id
            if key > frontier:
                frontier = key
        pos += mblen
        here = best[pos].score
    settled[0] = first
    if n > first:
        _backtrack(best, first, n, out)
    if end != NULL:
        end[0] = here
    return 0


cdef int _fill_chars(UnigramModel self, const leaf_t* leaves, char_t** table) except -1:
    # Every character of 2 or 3 bytes (whatever bits its UTF-8 form
    # carries, overlong ones too): the node that covers exactly it (its
    # piece, else the unknown node), and whether it is alone (no piece
    # goes on past it or ends inside it). Blocks equal to block 0 (no
    # piece starts with any of the characters) share it, so for the
    # scripts a vocabulary lacks the table costs no cache. A block's
    # characters share all bytes but the last: the trie is walked along
    # those once, and a block the trie has no path into is block 0 without
    # a look at its 64 characters (most of the 1,056 for a vocabulary of a
    # few scripts: walking each character was a third of a model's build).
    cdef char_t* chars
    cdef uint8_t b[3]
    cdef size_t index, length, key, n_blocks = 1, capacity = 2, slot
    cdef int32_t node, prefix
    cdef bint inside
    cdef char_t* e
    cdef char_t* grown
    chars = <char_t*>malloc(2 * 64 * sizeof(char_t))
    table[0] = chars
    if chars == NULL:
        raise MemoryError()
    for slot in range(64):
        chars[slot].id = self.unk_id
        chars[slot].score = self.unk_score
        chars[slot].alone = True
    for index in range(N_BLOCKS):
        if index < BLOCK3:
            length = 2
            b[0] = <uint8_t>(0xC0 | (index - BLOCK2))
        else:
            length = 3
            b[0] = <uint8_t>(0xE0 | ((index - BLOCK3) >> 6))
            b[1] = <uint8_t>(0x80 | ((index - BLOCK3) & 0x3F))
        # the bytes before the last: a piece ending there is inside each character
        prefix = 0
        inside = False
        for key in range(length - 1):
            if not trie_step(self.trie.steps, &prefix, b[key]):
                prefix = -1
                break
            if leaves[prefix].value >= 0:
                inside = True
        if prefix < 0 and not inside:
            self.char_block[index] = 0
            continue
        if n_blocks == capacity:
            capacity *= 2
            grown = <char_t*>realloc(chars, capacity * 64 * sizeof(char_t))
            if grown == NULL:
                raise MemoryError()
            chars = table[0] = grown
        for slot in range(64):
            e = &chars[n_blocks * 64 + slot]
            e.id = self.unk_id
            e.score = self.unk_score
            node = prefix
            if node >= 0 and not trie_step(self.trie.steps, &node, <uint8_t>(0x80 | slot)):
                node = -1
            if node >= 0 and leaves[node].value >= 0:
                e.id = <uint32_t>leaves[node].value
                e.score = leaves[node].score
            e.alone = not inside and (node < 0 or self.trie.steps[node].base == 0)
        if memcmp(&chars[n_blocks * 64], chars, 64 * sizeof(char_t)) == 0:
            self.char_block[index] = 0
        else:
            self.char_block[index] = <uint16_t>n_blocks
            n_blocks += 1
    return 0


cdef class UnigramModel:
    """The Unigram model of one vocabulary.

    ``tokens`` holds each id's piece bytes; ``scores`` and ``types`` (the
    SentencePiece piece types, 1 normal … 6 byte) are parallel to it. NORMAL,
    USER_DEFINED and UNUSED pieces can match text; the others are reserved.
    ``unk_id`` is emitted for a character no piece covers. ``llama_cpp``
    selects llama.cpp's arithmetic, ``tokenizers`` Hugging Face tokenizers'
    (see the module notes). ``never``: ids that match no text whatever their
    type (fasttok's Encoding keeps control tokens out: a tokenizer.json's
    special added tokens, a GGUF file's CONTROL tokens as llama.cpp amends
    them); they keep their part in the unknown score, so text without their
    strings splits as before.

    >>> m = UnigramModel([b"<unk>", b"\\xe2\\x96\\x81a", b"b"], [0.0, -2.0, -1.0], [2, 1, 1], 0)
    >>> m.segment("▁ab".encode())
    [(b'\\xe2\\x96\\x81a', 1), (b'b', 2)]
    """

    def __cinit__(self):
        self.trie.units = NULL
        self.trie.steps = NULL
        self.trie.leaves = NULL
        self.trie.dleaves = NULL
        self.trie.size = 0
        self.scores = NULL
        self.kinds = NULL
        self.chars = NULL
        self.dchars = NULL

    def __init__(self, tokens, scores, types, Py_ssize_t unk_id, *, bint llama_cpp=False,
                 bint tokenizers=False, never=()):
        # tokens: bytes (or None: no piece) by id, or the reader's packed
        # texts (a tokenizer.json's PackedPieces), placed from its buffer;
        # types None: every piece NORMAL
        cdef Py_ssize_t n = len(tokens), i, kept = 0
        cdef carray.array given = scores if isinstance(scores, array) and \
            scores.typecode == "d" else array("d", scores)
        cdef carray.array kind_of = None if types is None else array("B", types)
        cdef bint typed = types is not None
        cdef const double* score_of = given.data.as_doubles
        cdef const uint8_t* kind_at = kind_of.data.as_uchars if typed else NULL
        cdef const uint8_t* data
        cdef const uint64_t* text_offs
        cdef uint64_t* owned_offs = NULL
        cdef uint64_t length
        cdef uint8_t* left_out = NULL
        cdef int32_t* keys = NULL
        cdef double* effective = NULL
        cdef double score
        cdef int kind
        cdef bytes joined
        if not (len(given) == n and (not typed or len(kind_of) == n)):
            raise ValueError(f"{n} tokens but {len(given)} scores and "
                             f"{n if types is None else len(kind_of)} types")
        # tokenizers may have no unknown piece: unk_id n stands for none then
        if not 0 <= unk_id < n + tokenizers:
            raise ValueError(f"unk id {unk_id} is not one of the {n} tokens")
        if llama_cpp and tokenizers:
            raise ValueError("llama_cpp and tokenizers are two flavours; pick one")
        self.n_pieces = <uint32_t>n
        self.unk_id = <uint32_t>unk_id
        self.llama_cpp = llama_cpp
        self.tokenizers = tokenizers
        self.scores = <double*>malloc((n + 1) * sizeof(double))
        self.kinds = <uint8_t*>malloc(n + 1)
        left_out = <uint8_t*>calloc(n + 1, 1)
        keys = <int32_t*>malloc((n + 1) * sizeof(int32_t))
        effective = <double*>malloc((n + 1) * sizeof(double))
        try:
            if self.scores == NULL or self.kinds == NULL or left_out == NULL or keys == NULL \
                    or effective == NULL:
                raise MemoryError()
            if isinstance(tokens, PackedTexts):
                data = (<PackedTexts>tokens).data
                text_offs = (<PackedTexts>tokens).offsets
            else:
                # one buffer of the texts (None: no text, as an empty piece)
                tokens = [b"" if t is None else t for t in tokens]
                joined = b"".join(tokens)
                data = <const uint8_t*>PyBytes_AS_STRING(joined)
                owned_offs = <uint64_t*>malloc((n + 1) * sizeof(uint64_t))
                if owned_offs == NULL:
                    raise MemoryError()
                owned_offs[0] = 0
                for i in range(n):
                    owned_offs[i + 1] = owned_offs[i] + len(tokens[i])
                text_offs = owned_offs
            for i in never:
                if 0 <= i < n:
                    left_out[i] = 1
            self.min_score = FLT_MAX
            self.reach = 4  # an unknown node: one character, at most 4 bytes
            with nogil:
                for i in range(n):
                    # sentencepiece and llama.cpp keep float scores, tokenizers f64
                    score = score_of[i] if tokenizers else <float>score_of[i]
                    kind = kind_at[i] if typed else T_NORMAL
                    self.scores[i] = score
                    self.kinds[i] = KIND_NORMAL
                    if kind == T_NORMAL:
                        if score < self.min_score:
                            self.min_score = score
                    elif kind == T_USER_DEFINED:
                        self.kinds[i] = KIND_USER
                    elif kind == T_UNUSED:
                        self.kinds[i] = KIND_UNUSED
                    # The trie carries each piece's score as the Viterbi adds
                    # it (a user-defined piece's depends on its byte length,
                    # fixed per piece), so a match costs no lookups beyond
                    # the unit itself.
                    length = text_offs[i + 1] - text_offs[i]
                    effective[i] = score
                    if self.kinds[i] == KIND_USER:
                        effective[i] = 0.0 if llama_cpp else _user_score(length)
                    # sentencepiece never matches UNUSED pieces; llama.cpp does
                    if (kind == T_NORMAL or kind == T_USER_DEFINED
                            or (kind == T_UNUSED and llama_cpp)) and length and not left_out[i]:
                        keys[kept] = <int32_t>i
                        kept += 1
                        # the most bytes one node of the lattice spans
                        if length > self.reach:
                            self.reach = length
            if tokenizers:
                self.unk_score = self.min_score - 10.0
            else:
                self.unk_score = <float>self.min_score - <float>10.0
            _trie_build(&self.trie, data, text_offs, keys, kept, effective)
        finally:
            free(owned_offs)
            free(left_out)
            free(keys)
            free(effective)
        # The walk's loads form a chain (unit -> base -> child unit); with
        # the piece and score moved to a parallel array, loaded off that
        # chain, the chain's array is 8 bytes a unit instead of 16.
        self.trie.steps = <TrieStep*>malloc(self.trie.size * sizeof(TrieStep))
        if tokenizers:
            self.trie.dleaves = <TrieLeafD*>malloc(self.trie.size * sizeof(TrieLeafD))
        else:
            self.trie.leaves = <TrieLeaf*>malloc(self.trie.size * sizeof(TrieLeaf))
        if self.trie.steps == NULL or (self.trie.leaves == NULL and self.trie.dleaves == NULL):
            raise MemoryError()
        for i in range(<Py_ssize_t>self.trie.size):
            self.trie.steps[i].base = self.trie.units[i].base
            self.trie.steps[i].check = self.trie.units[i].check
            if tokenizers:
                self.trie.dleaves[i].value = self.trie.units[i].value
                self.trie.dleaves[i].score = self.trie.units[i].score
            else:
                self.trie.leaves[i].value = self.trie.units[i].value
                self.trie.leaves[i].score = <float>self.trie.units[i].score
        free(self.trie.units)
        self.trie.units = NULL
        if tokenizers:
            _fill_chars(self, self.trie.dleaves, &self.dchars)
        else:
            _fill_chars(self, self.trie.leaves, &self.chars)

    def __dealloc__(self):
        free(self.trie.units)
        free(self.trie.steps)
        free(self.trie.leaves)
        free(self.trie.dleaves)
        free(self.scores)
        free(self.kinds)
        free(self.chars)
        free(self.dchars)

    cdef int viterbi(self, const uint8_t* s, size_t n, SpanBuf* out,
                     ViterbiScratch* scratch) except -1 nogil:
        """Append the best segmentation of s[0:n] to out (ids, byte spans);
        scratch (or NULL) holds the best-path array between calls."""
        return _viterbi(self, s, n, out, scratch)

    cdef int viterbi_ids(self, const uint8_t* s, size_t n, IdBuf* out,
                         ViterbiScratch* scratch) except -1 nogil:
        """viterbi's ids alone, appended to out, which has room for n more."""
        return _viterbi(self, s, n, out, scratch)

    cdef int viterbi_from(self, const uint8_t* s, size_t n, SpanBuf* out,
                          ViterbiScratch* scratch, double start, double* margin) except -1 nogil:
        """viterbi with the path's score starting at start, not 0 (what
        follows a point no node crosses, in the tokenizers flavour), and
        margin (or NULL) lowered to the least gap between two scores it
        compared."""
        return _viterbi(self, s, n, out, scratch, start, margin)

    cdef int viterbi_scored(self, const uint8_t* s, size_t n, SpanBuf* out,
                            ViterbiScratch* scratch, double start, double* end) except -1 nogil:
        """viterbi with the path's score starting at start, and end set to
        the score at n: a window of a sentencepiece text after a point no
        node crosses, whose float32 sums decide near ties by the size of
        the sum before it, goes on from there."""
        return _viterbi(self, s, n, out, scratch, start, NULL, end)

    cdef double score_at(self, const ViterbiScratch* scratch, size_t key) noexcept nogil:
        """The path score at key that the last viterbi_scored with scratch
        wrote (float32 in sentencepiece's flavour, double in the others):
        the score there where the byte before key is ASCII (the walk for a
        lone character of more bytes goes on without writing it)."""
        if self.llama_cpp or self.tokenizers:
            return (<const BestPath*>scratch.best)[key].score
        return (<const BestPathF*>scratch.best)[key].score

    cdef int own_scratch(self, ViterbiScratch* scratch, size_t n) except -1 nogil:
        """Give scratch (empty) a best-path array of its own for a text of
        n bytes: a second Viterbi whose paths are read beside another's
        (the thread's array, which a scratch borrows, is one)."""
        cdef size_t size = (n + 1) * (sizeof(BestPath) if self.llama_cpp or self.tokenizers
                                      else sizeof(BestPathF))
        scratch.best = malloc(size)
        if scratch.best == NULL:
            with gil:
                raise MemoryError()
        scratch.size = size
        scratch.owned = 1
        return 0

    cdef bint crossed(self, const uint8_t* s, size_t n, size_t q) except -1 nogil:
        """Whether a lattice node of s[:n] crosses q (0 < q < n, at a
        character's start): one starting at most the longest piece before
        it."""
        cdef NodeBuf nodes = NodeBuf(NULL, 0, 0)
        cdef size_t lo = q - self.reach if q > self.reach else 0, i
        cdef size_t hi = q + self.reach if q + self.reach < n else n
        while lo < q and (s[lo] & 0xC0) == 0x80:
            lo += 1
        try:
            self.populate(s + lo, hi - lo, &nodes)
            for i in range(nodes.len):
                if lo + nodes.data[i].start < q < lo + nodes.data[i].end:
                    return True
            return False
        finally:
            free(nodes.data)

    cdef size_t converged(self, const ViterbiScratch* scratch, size_t q) except? 0 nogil:
        """After a Viterbi over s[:n] with scratch (q <= n): the last place
        p <= q that the best path to every place in (q - reach, q] passes
        through. A path to any place past q has its last node start there,
        so whatever follows s[:q] the whole text's best path goes through p
        and is the best path to p up to it. 0: none but the start."""
        cdef size_t settled = scratch.settled, lo, b, pos, p = 0, first = SIZE_MAX
        cdef uint8_t* mark
        cdef bint wide = self.llama_cpp or self.tokenizers
        if q <= settled:
            return q
        lo = q - self.reach + 1 if q >= self.reach + settled else settled
        mark = <uint8_t*>calloc(q - settled + 1, 1)
        if mark == NULL:
            with gil:
                raise MemoryError()
        # every chain lands on settled (no node crosses it): the first
        # chain's places are marked, the others walked back to one
        mark[0] = 1
        b = q + 1
        while b > lo:
            b -= 1
            if b > settled and _path_from(wide, scratch, b) < 0:
                continue
            pos = b
            if first == SIZE_MAX:
                first = p = b
                while pos > settled:
                    mark[pos - settled] = 1
                    pos = <size_t>_path_from(wide, scratch, pos)
                continue
            while not mark[pos - settled]:
                pos = <size_t>_path_from(wide, scratch, pos)
            if pos < p:
                p = pos
        free(mark)
        return p if first != SIZE_MAX else settled

    cdef bint same_window(self, const uint8_t* s, size_t n, const ViterbiScratch* whole,
                          size_t p, size_t q, double score) except -1 nogil:
        """Whether a Viterbi over s[p:n] from score (the whole's at p), with
        an array of its own, has the whole's (whole, over s[:n]) best paths
        at every place in (q - reach, q]: the same reach, score and nodes
        back to p, and no early emission of its own. The best path to a
        place past q goes on from those, so the two then agree on every
        place after, whatever follows s[:q]."""
        cdef size_t lo = q - self.reach + 1 if q >= self.reach + p else p + 1, b, x, y
        cdef int32_t fx, fy
        cdef bint wide = self.llama_cpp or self.tokenizers
        cdef SpanBuf tail = SpanBuf(NULL, 0, 0)
        cdef ViterbiScratch part
        memset(&part, 0, sizeof(ViterbiScratch))
        try:
            self.own_scratch(&part, n - p)
            _viterbi(self, s + p, n - p, &tail, &part, score)
            if part.settled:
                return False
            for b in range(lo, q + 1):
                fx = _path_from(wide, whole, b)
                fy = _path_from(wide, &part, b - p)
                if (fx < 0) != (fy < 0):
                    return False
                if fx < 0:
                    continue
                if self.score_at(whole, b) != self.score_at(&part, b - p):
                    return False
                x = b
                y = b - p
                while x > p:
                    fx = _path_from(wide, whole, x)
                    fy = _path_from(wide, &part, y)
                    if fy < 0 or <size_t>fx != <size_t>fy + p:
                        return False
                    x = <size_t>fx
                    y = <size_t>fy
            return True
        finally:
            spans_free(&tail)
            viterbi_scratch_free(&part)

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

    cdef int populate(self, const uint8_t* s, size_t n, NodeBuf* out) except -1 nogil:
        # Every node of s's lattice into out (emptied first), sorted by start:
        # the pieces the trie finds at each character (UNUSED ones too: they
        # are in the trie for llama.cpp alone, and the Viterbi skips them),
        # then the unknown character where no piece is exactly it
        # (sentencepiece's PopulateNodes). The lattice of sampling and n-best
        # and the trainer's expectations and second-best paths all read it.
        cdef size_t pos = 0, key, mblen, length
        cdef int32_t pid, node
        cdef bint single
        cdef LatticeNode* nd
        out.len = 0
        while pos < n:
            mblen = one_char_len(s[pos])
            if mblen > n - pos:
                mblen = n - pos
            single = False
            node = 0
            key = pos
            while key < n:
                key += 1
                if not trie_step(self.trie.steps, &node, s[key - 1]):
                    break
                pid = self.trie.dleaves[node].value if self.tokenizers else self.trie.leaves[node].value
                if pid < 0:
                    continue
                length = key - pos
                grow_array(<void**>&out.data, &out.cap, out.len + 1, sizeof(LatticeNode), 256)
                nd = &out.data[out.len]
                out.len += 1
                nd.start = <uint32_t>pos
                nd.end = <uint32_t>key
                nd.id = <uint32_t>pid
                if self.kinds[pid] == KIND_USER:
                    nd.score = 0.0 if self.llama_cpp else _user_score(_count_chars(s + pos, length))
                else:
                    nd.score = self.scores[pid]
                if length == mblen:
                    single = True
            if not single:
                grow_array(<void**>&out.data, &out.cap, out.len + 1, sizeof(LatticeNode), 256)
                nd = &out.data[out.len]
                out.len += 1
                nd.start = <uint32_t>pos
                nd.end = <uint32_t>(pos + mblen)
                nd.id = self.unk_id
                nd.score = self.unk_score
            pos += mblen
        return 0

    def lattice(self, data):
        """Every node of the full lattice of normalized text, for n-best and
        sampling: ``[(start, end, id, score)]`` in byte offsets, sorted by
        start, the unknown nodes included (``PopulateNodes``)."""
        cdef bytes raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        cdef NodeBuf out = NodeBuf(NULL, 0, 0)
        cdef size_t i
        try:
            self.populate(<const uint8_t*>PyBytes_AS_STRING(raw), len(raw), &out)
            return [(out.data[i].start, out.data[i].end, out.data[i].id, out.data[i].score)
                    for i in range(out.len)]
        finally:
            free(out.data)


cdef inline float _user_score(size_t length) noexcept nogil:
    # sentencepiece's GetUserDefinedScore: 0.1 per unit of length beyond the
    # first, in double, returned as float. The Viterbi counts bytes, the
    # lattice characters (each passes its own "length").
    return <float>(0.1 * (<double>length - 1.0))


cdef inline size_t _count_chars(const uint8_t* s, size_t n) noexcept nogil:
    # characters in s[0:n] by lead bytes, as the lattice counts a node's length
    cdef size_t i = 0, count = 0
    while i < n:
        i += one_char_len(s[i])
        count += 1
    return count


cdef int _viterbi(UnigramModel self, const uint8_t* s, size_t n, out_t* out,
                  ViterbiScratch* scratch, double start=0.0, double* margin=NULL,
                  double* end=NULL) except -1 nogil:
    # UnigramModel.viterbi / viterbi_ids / viterbi_from / viterbi_scored
    cdef size_t size = (n + 1) * (sizeof(BestPathF) if not (self.llama_cpp or self.tokenizers)
                                  else sizeof(BestPath))
    cdef ViterbiScratch own
    cdef ViterbiScratch* sc = scratch
    if n == 0:
        if end != NULL:
            end[0] = start
        return 0
    if n >= 0x7FFFFFFF:
        with gil:
            raise ValueError("text longer than 2 GiB for the Unigram model")
    if sc == NULL:
        memset(&own, 0, sizeof(ViterbiScratch))
        sc = &own
    try:
        if sc.size < size:
            viterbi_scratch_free(sc)
            if size <= BEST_KEEP:
                # the thread's array: a fresh one's pages are faulted in
                # one by one, a tenth of the time of a whole-file call
                sc.best = ft_slot_take(FT_SLOT_UNIGRAM_BEST, size, BEST_KEEP, &sc.owned)
            else:
                sc.best = ft_big_alloc(size)
                sc.owned = 1
            if sc.best == NULL:
                with gil:
                    raise MemoryError()
            sc.size = size
        if self.tokenizers:
            _best_path(self.trie.steps, self.trie.dleaves, self.dchars, self.char_block, s, n,
                       <BestPath*>sc.best, self.unk_score, self.unk_id, self.reach, out,
                       start, margin, end, &sc.settled)
        elif self.llama_cpp:
            _best_path(self.trie.steps, self.trie.leaves, self.chars, self.char_block, s, n,
                       <BestPath*>sc.best, self.unk_score, self.unk_id, self.reach, out,
                       start, margin, end, &sc.settled)
        else:
            _best_path(self.trie.steps, self.trie.leaves, self.chars, self.char_block, s, n,
                       <BestPathF*>sc.best, self.unk_score, self.unk_id, self.reach, out,
                       <float>start, margin, end, &sc.settled)
    finally:
        if sc == &own:
            viterbi_scratch_free(sc)
    return 0


cdef enum:
    # A token of TokenizersUnigram's output whose text is the input's bytes
    # (a run of unknown characters), not its piece's
    FLAG_TEXT = 1


cdef class TokenizersUnigram:
    """Hugging Face tokenizers' Unigram model (``models/unigram/model.rs``).

    ``pieces`` (``str``) and ``scores`` by id, ``unk_id`` (or ``None``),
    ``byte_fallback``. The Viterbi is :class:`UnigramModel`'s, in its
    ``tokenizers`` flavour; then, as tokenizers does: consecutive nodes of
    id ``unk_id`` (unknown characters, and the unknown piece's own text) are
    fused into one token, whose text is looked up in the vocabulary; if it is
    no piece, it becomes the ``<0xXX>`` pieces of its bytes when
    ``byte_fallback`` is set and all of them exist, else ``unk_id``. Without
    ``unk_id``, a character that is no piece is an error.

    ``never``: ids whose pieces text never matches (fasttok's Encoding keeps
    a file's special added tokens out, so ``"<s>"`` in user text is not the
    ``<s>`` id; tokenizers matches them, and fasttok.hf passes none; see
    :class:`UnigramModel`).

    >>> m = TokenizersUnigram(["<unk>", "a", "b", "ab"], [0.0, -1.0, -1.0, -1.5], 0, False)
    >>> m.tokenize("abcç")
    [(3, 'ab', (0, 2)), (0, 'cç', (2, 4))]
    >>> m.ids("bab")
    [2, 3]
    >>> TokenizersUnigram(["<unk>", "a", "<s>"], [0.0, -1.0, 0.0], 0, False, never={2}).ids("a<s>")
    [1, 0]
    """

    cdef UnigramModel core       # None for an empty vocabulary
    cdef object texts            # the pieces as given: a list of str, or PackedPieces
    cdef list pieces             # the pieces as str, made from PackedPieces when first asked for
    cdef tuple ints
    cdef int32_t unk             # -1: none
    cdef readonly bint byte_fallback
    cdef int32_t byte_ids[256]   # the id of piece "<0xXX>" for byte XX, or -1

    def __init__(self, pieces, scores, unk_id, bint byte_fallback, *, never=()):
        # pieces: a list of str, or a tokenizer.json's PackedPieces (the
        # trie is built from its UTF-8, and no str is made for a piece
        # until one is asked for)
        cdef Py_ssize_t n = len(pieces), i
        self.ints = tuple(range(n))
        self.unk = -1 if unk_id is None else <int32_t>unk_id
        self.byte_fallback = byte_fallback
        if type(pieces) is PackedPieces:
            self.texts = pieces
            find = (<PackedPieces>pieces).get
        else:
            self.texts = self.pieces = list(pieces)
            ids = {}
            for i in range(n):
                ids[self.pieces[i]] = i      # a piece spelled twice: its last id, as tokenizers
            find = ids.get
            pieces = [p.encode("utf-8") for p in self.pieces]
        # read by byte fallback alone (256 made strings looked up)
        for i in range(256):
            self.byte_ids[i] = find(f"<0x{i:02X}>", -1) if byte_fallback else -1
        if n:
            # without unk_id, id n marks the unknown nodes (a text whose
            # Viterbi would take one is refused first)
            self.core = UnigramModel(pieces, scores, None, n if unk_id is None else unk_id,
                                     tokenizers=True, never=never)

    cdef list piece_list(self):
        # the pieces as str by id
        if self.pieces is None:
            self.pieces = list((<PackedPieces>self.texts).texts())
        return self.pieces

    def __len__(self):
        return len(self.ints)

    def piece_texts(self):
        """The pieces by id, a list of ``str`` (the model's own: not to be changed).

        >>> TokenizersUnigram(["<unk>", "a"], [0.0, -1.0], 0, False).piece_texts()
        ['<unk>', 'a']
        """
        return self.piece_list()

    def piece(self, Py_ssize_t i):
        """Piece ``i``'s text.

        >>> TokenizersUnigram(["<unk>", "a"], [0.0, -1.0], 0, False).piece(1)
        'a'
        """
        if self.pieces is None:
            if not 0 <= i < len(self.ints):
                raise IndexError(i)
            return (<PackedPieces>self.texts)._text(i)
        return self.pieces[i]

    def scores(self):
        """The pieces' scores (f64, as given) by id, a list.

        >>> TokenizersUnigram(["<unk>", "a"], [0.0, -1.5], 0, False).scores()
        [0.0, -1.5]
        """
        if self.core is None:
            return []
        return [self.core.scores[i] for i in range(self.core.n_pieces)]

    cdef int32_t _find(self, const uint8_t* s, size_t n) noexcept nogil:
        # the id of the piece spelled s[0:n] (n > 0), or -1
        cdef int32_t node = 0
        cdef size_t i
        for i in range(n):
            if not trie_step(self.core.trie.steps, &node, s[i]):
                return -1
        return self.core.trie.dleaves[node].value

    cdef int _check_known(self, bytes raw) except -1:
        # Without unk_id, tokenizers fails where its Viterbi would write an
        # unknown node into the best paths (the end still unreached, or the
        # node better than what reaches it), even if no final path takes it.
        # Rare (a character that is no piece), so replayed from the lattice.
        cdef const uint8_t* s = <const uint8_t*>PyBytes_AS_STRING(raw)
        cdef size_t n = len(raw), pos = 0, mblen
        cdef dict best
        if self.core is None:
            raise FasttokError("Encountered an unknown token but `unk_id` is missing")
        while pos < n:
            mblen = one_char_len(s[pos])
            if self._find(s + pos, mblen) < 0:
                break
            pos += mblen
        else:
            return 0
        best = {0: 0.0}
        for start, end, pid, score in self.core.lattice(raw):
            score += best[start]
            if end not in best or score > best[end]:
                if pid == self.core.n_pieces:
                    raise FasttokError("Encountered an unknown token but `unk_id` is missing")
                best[end] = score
        return 0

    cdef int _spans(self, bytes raw, SpanBuf* out) except -1:
        # The tokens of raw (not empty): ids and byte spans, FLAG_TEXT on
        # the unknown ones
        cdef SpanBuf nodes = SpanBuf(NULL, 0, 0)
        try:
            return self._spans_of(<const uint8_t*>PyBytes_AS_STRING(raw), len(raw), out,
                                  &nodes, NULL)
        finally:
            spans_free(&nodes)

    cdef int _spans_of(self, const uint8_t* s, size_t n, SpanBuf* out, SpanBuf* nodes,
                       ViterbiScratch* scratch) except -1 nogil:
        # _spans of s[0:n] (n > 0), appended to out with spans relative to
        # s; nodes (emptied first) and scratch (or NULL) are the caller's
        # work space, kept from one call to the next
        nodes.len = 0
        self.core.viterbi(s, n, nodes, scratch)
        return self._fuse(s, nodes, out)

    cdef int _fuse(self, const uint8_t* s, const SpanBuf* nodes, SpanBuf* out) except -1 nogil:
        # tokenizers' rule for a path's unknown nodes (the class docstring):
        # the tokens of the path nodes (byte spans into s) appended to out
        cdef size_t i = 0, j
        while i < nodes.len:
            if <int32_t>nodes.data[i].id != self.unk:
                spans_push(out, nodes.data[i].id, nodes.data[i].start, nodes.data[i].end, 0)
                i += 1
                continue
            j = i
            while j < nodes.len and <int32_t>nodes.data[j].id == self.unk:
                j += 1
            self._fuse_run(s, nodes.data[i].start, nodes.data[j - 1].end, out)
            i = j
        return 0

    cdef int _fuse_run(self, const uint8_t* s, uint32_t start, uint32_t end,
                       SpanBuf* out) except -1 nogil:
        # the tokens of a run of unknown nodes over s[start:end] (_fuse's rule)
        cdef int32_t found = self._find(s + start, end - start)
        cdef bint all_bytes
        cdef uint32_t k
        if found >= 0:
            spans_push(out, <uint32_t>found, start, end, 0)
            return 0
        all_bytes = self.byte_fallback
        k = start
        while all_bytes and k < end:
            all_bytes = self.byte_ids[s[k]] >= 0
            k += 1
        if all_bytes:
            for k in range(start, end):
                spans_push(out, <uint32_t>self.byte_ids[s[k]], start, end, 0)
        else:
            spans_push(out, <uint32_t>self.unk, start, end, FLAG_TEXT)
        return 0

    def ids(self, str text not None):
        """The token ids of ``text``."""
        return self._ids(text)

    def lattice(self, str text not None):
        """Every node of the lattice of ``text`` (sampling and n-best read
        it): ``[(start, end, id, score)]`` in UTF-8 byte offsets, sorted by
        start, an unknown character's node with ``unk_id`` (or the number of
        pieces without one) and the unknown score.

        >>> TokenizersUnigram(["<unk>", "a", "ab"], [0.0, -1.0, -2.0], 0, False).lattice("abc")
        [(0, 1, 1, -1.0), (0, 2, 2, -2.0), (1, 2, 0, -12.0), (2, 3, 0, -12.0)]
        """
        return [] if self.core is None else self.core.lattice(text)

    def resolve(self, bytes normalized not None, pieces):
        """The ids of a path through :meth:`lattice` of ``normalized``
        (``[(start, end, id)]`` byte ranges in order), its unknown nodes
        fused and looked up as :meth:`ids` does them.

        >>> m = TokenizersUnigram(["<unk>", "a", "xy"], [0.0, -1.0, -2.0], 0, False)
        >>> m.resolve(b"xya", [(0, 1, 0), (1, 2, 0), (2, 3, 1)])
        [2, 1]
        """
        cdef SpanBuf nodes = SpanBuf(NULL, 0, 0)
        cdef SpanBuf out = SpanBuf(NULL, 0, 0)
        cdef Py_ssize_t n = len(normalized), at = 0, i
        cdef Py_ssize_t n_pieces = len(self.ints)
        try:
            for start, end, token in pieces:
                if not at <= start <= end <= n:
                    raise ValueError(f"piece ({start}, {end}) is not a range of the "
                                     f"{n} bytes after the one before")
                if token == n_pieces and self.unk < 0:
                    raise FasttokError("Encountered an unknown token but `unk_id` is missing")
                if not 0 <= token < n_pieces:
                    raise KeyError(token)
                spans_push(&nodes, <uint32_t>token, <uint32_t>start, <uint32_t>end, 0)
                at = end
            self._fuse(<const uint8_t*>PyBytes_AS_STRING(normalized), &nodes, &out)
            return [self.ints[out.data[i].id] for i in range(out.len)]
        finally:
            spans_free(&nodes)
            spans_free(&out)

    def ids_many(self, list texts not None):
        """The token ids of every text of ``texts``, one list: what calling
        :meth:`ids` text by text gives, without a Python call for each (a
        tokenizer.json's pre-tokenizer leaves one piece a word).

        >>> TokenizersUnigram(["<unk>", "a"], [0.0, -1.0], 0, False).ids_many(["a", "", "ba"])
        [1, 0, 1]
        """
        cdef list out = []
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"texts must hold str, not {type(text).__name__}")
            out += self._ids(text)
        return out

    cdef list _ids(self, str text):
        cdef bytes raw = text.encode("utf-8")
        cdef const uint8_t* s = <const uint8_t*>PyBytes_AS_STRING(raw)
        cdef size_t n = len(raw), i
        cdef IdBuf fast = IdBuf(NULL, 0)
        cdef SpanBuf out = SpanBuf(NULL, 0, 0)
        cdef bint plain = True
        if n == 0:
            return []
        try:
            if self.unk < 0:
                self._check_known(raw)
            # the ids alone unless a token is unknown, which needs its bytes
            fast.data = <uint32_t*>malloc(n * sizeof(uint32_t))
            if fast.data == NULL:
                raise MemoryError()
            self.core.viterbi_ids(s, n, &fast, NULL)
            for i in range(fast.len):
                if fast.data[i] == <uint32_t>self.unk:
                    plain = False
                    break
            if plain:
                return ids_list(fast.data, fast.len, self.ints)
            self._spans(raw, &out)
            free(fast.data)
            fast.data = <uint32_t*>malloc((out.len + 1) * sizeof(uint32_t))
            if fast.data == NULL:
                raise MemoryError()
            for i in range(out.len):
                fast.data[i] = out.data[i].id
            return ids_list(fast.data, out.len, self.ints)
        finally:
            free(fast.data)
            spans_free(&out)

    def tokenize(self, str text not None):
        """``[(id, token text, (start, end))]`` with offsets in characters of ``text``."""
        cdef bytes raw = text.encode("utf-8")
        cdef const uint8_t* s = <const uint8_t*>PyBytes_AS_STRING(raw)
        cdef size_t n = len(raw), i, at = 0, chars = 0, start_char = 0, last_start = <size_t>-1
        cdef SpanBuf out = SpanBuf(NULL, 0, 0)
        cdef Span* sp
        cdef list result = []
        if n == 0:
            return result
        try:
            if self.unk < 0:
                self._check_known(raw)
            self._spans(raw, &out)
            for i in range(out.len):
                sp = &out.data[i]
                # offsets only move forward; byte tokens share their span
                if sp.start != last_start:
                    while at < sp.start:
                        chars += (s[at] & 0xC0) != 0x80
                        at += 1
                    start_char = chars
                    last_start = sp.start
                while at < sp.end:
                    chars += (s[at] & 0xC0) != 0x80
                    at += 1
                token = raw[sp.start:sp.end].decode("utf-8") if sp.flags & FLAG_TEXT \
                    else self.piece_list()[sp.id]
                result.append((self.ints[sp.id], token, (start_char, chars)))
            return result
        finally:
            spans_free(&out)


# ------------------------------------------------------------------ tokenizer.json walk
#
# UnigramWalk runs a Unigram tokenizer.json's stages over a text in one
# compiled pass: the Replace stages and the precompiled charsmap (grapheme
# clusters cut as fasttok.normalizers.precompiled cuts them, a cluster of
# under 6 bytes looked up whole), WhitespaceSplit and Metaspace, then
# TokenizersUnigram's Viterbi on each piece. Every normalized character
# carries the span of the text it came from, as tokenizers' NormalizedString
# aligns it (the charsmap's reports through transform's rules, a Replace's
# new characters on the match's last one, a prepended replacement on the
# first character), so offsets and word indices come from the same walk as
# the ids, with a flag. fasttok/formats/hf_unigram_path.py asks the stages
# for the tables and ops it is built from; the stages are the test oracle.
#
# Performance notes (T5 conversion botchan_unigram_5000, en.txt; the VM is
# shared, so times are same-run comparisons, instruction counts callgrind's):
#
# * The pre-token cache (ft_piece_cache.h, the one every compiled core uses:
#   per thread, bounded, keyed by (walk, bytes)) keeps segments: a piece is
#   cut where the Metaspace replacement starts, when no piece holds it but
#   at its start (true of every shared file), so no node crosses a cut and
#   the Viterbi of the piece is that of each segment in turn, each starting
#   from the score the last one left (viterbi_from). An entry holds a
#   segment's nodes from score 0 (ids, ends, which are unknown characters)
#   and the least gap between two scores its Viterbi compared. From any
#   other score a path's sum is off by rounding alone, bounded by the
#   segment's length and that score's size (_holds); where the gap exceeds
#   twice the bound every comparison goes the same way, so the nodes are
#   the Viterbi's own and the score after them is added node by node as
#   the Viterbi adds it. A gap of 0 (a tie, the first path found kept) is
#   never taken past score 0: tests/test_hf_walk_unigram_cache.py has a
#   tie that rounding turns. This is what makes the SentencePiece
#   conversions (Metaspace without split: a whole text is one piece) gain
#   from the cache at all; split files' pieces are one segment each.
# * The sets of a stretch's one-segment pieces are fetched when the pieces
#   are laid out (64 at a time, so a long text's UTF-8 stays small), those
#   of a long piece's segments 32 at a time: the lookup's misses were half
#   of the cached path's time.
# * The charsmap reads the text itself when no Replace stage comes first, and
#   a run of Latin-1 characters without rules goes out in one loop: the
#   report of each character alone was ~100 instructions a character (whole
#   en.txt 5,000 lines: 80.7M -> 59.6M instructions a call; tokie 0.1.4
#   69.4M). Metaspace is folded into the piece's UTF-8 (no copy of a word).
# * ids and encode are the compiled object's methods, and the added-token
#   test is a C scan for the tokens' first characters (a Python call or two
#   a text was a fifth of a line's walk).
# * The one-for-one Replace (' ' -> the replacement) and the squeeze of a
#   run store every character under a mask: a branch on each character
#   mispredicted at every space (the Replace stages were 15% of a whole
#   text's walk, then 8%).
# * Measured (load ~4 on 2 cores; CPU time, best of 5, fasttok with the
#   cache on, off and tokie taking turns in one process on the inputs of
#   bench/test_hf_ids_peers_bench.py: 5,000 lines of each corpus, a line a
#   call of fasttok.load(...).encode, or the lines joined):
#   botchan_unigram_5000 from_spm_proto whole en.txt 5.80 ms (cache off
#   7.91, tokie 5.29), code.txt 2.76 (3.10, tokie 2.91); per en line 1.83 us
#   (off 2.27, tokie 1.65), of which walk.ids is 1.56 and the two Python
#   frames above it (Encoding.encode, HFModel.encode) ~0.4. The cache's
#   1 MiB default leaves ~14% of en.txt's 10k distinct segments missing
#   every pass (2-way sets thrash); at 65536 entries whole en is ~11% faster.
# * Session 5 (callgrind, steady calls of walk.ids on the 5,000 lines joined):
#   u5000-spm en 54.1M -> 42.8M instructions, albert code 51.2M -> 29.1M,
#   albert en 52.3M -> 47.2M (the last after the first two items below). What went: the charsmap's run scanned and
#   then copied (one loop now, also from the early stages' buffer); the
#   squeeze and literal Replaces storing every character (blocks moved
#   between matches); the " " -> replacement mask (folded into Metaspace);
#   _cut_after's scan of every segment (the cuts noted as _piece writes
#   them); the split's own loop (_piece stops at the cut); a cached one-
#   segment piece's nodes made, scanned and copied (ids straight out); the
#   early quote-pair literals walked as characters with spans (str.replace,
#   ids alone). Left: ~8M of whole en is Viterbi on cache misses (the 1 MiB
#   default, above), the rest spread over charsmap, _piece, _segment and the
#   cache probe (~15-20 instructions a character each). A squeeze folded
#   into _piece was not tried (its alignment with the split is delicate).
# * Session 6 (same callgrind driver; times tokie/fasttok, alternating
#   processes, CPU best of 7 at load ~5): most of the "14% of segments
#   miss" was the set index, not the cache's size: ft_pc_hash's low bits
#   of a short key hang on its first five or six bytes ("▁" and a word's
#   first letters); murmur3's finalizer over it (in ft_pc_hash since, see
#   session 8) took whole en.txt from 7.5k to 8.7k entries in use and spm
#   en 44.1M -> 39.0M instructions. Code: long tokens are cut where no piece joins two ASCII
#   bytes (_pair_cut), the quote-pair Replaces are memchr passes, the
#   added-token check is LiteralCut's memchr search: albert code whole
#   29.9M -> 24.2M, 0.92 -> 1.16-1.20 of tokie. Tried and narrowed: cuts
#   inside every long segment (also Chinese): 3-6% fewer instructions on
#   zh.txt but its parts seldom repeat, each a miss evicting another, and
#   xlnet zh whole was 7% slower; cutting every segment, not just long
#   ones (en.txt's distinct segments 10.1k -> 6.9k): 7% more instructions
#   on spm en, 65% more on ja8000 en (its pieces join few Latin pairs).
#   Left: spm/albert en whole are at tokie's instruction count (39.0M vs
#   38.0M) but not yet 1.2x its time; the cache probes (~90 instructions
#   a segment in _segments/_segment plus the header's) and _piece
#   (~180 a word for split files) are the next costs.
# Session 7 (callgrind, 5,000 lines joined, one encode): _early_idle ran
#   twice a stretch on ALBERT/XLNet ids, and a long piece was hashed whole
#   then cut (the gate asked with the whole's hash): albert en 45.1M ->
#   44.1M. The squeeze's run search reads every second character: spm en
#   38.7M -> 38.1M (tokie 38.2M), albert en 44.1M -> 43.5M. The added-token
#   test is LiteralCut.occurs_in, shared with the WordPiece and BPE walks
#   (xlnet zh lines 46.5M -> 45.7M). Left: _segment and the cache probes
#   (~28% of spm en), _piece (14%), the charsmap (13%).
# Session 8 (callgrind, 5,000 lines joined, the second and third encode):
#   the segments' own murmur3 finalizer over ft_pc_hash (session 6's fix of
#   the set index) went: ft_pc_hash mixes every byte and ends in such a
#   finalizer itself (5a5c9e7). Viterbi runs (the cache's misses) 18,350
#   with it, 18,387 without; albert en 42.18M -> 41.83M, spm en 36.99M ->
#   36.63M, albert code 22.94M -> 22.55M, ja8000 en 53.66M -> 53.25M.
# Session 13 (callgrind, a fresh process, the T5 conversion's load and first
#   encode after their modules' import): UnigramWalk's build puts the rules'
#   and ops' code points into cps itself (a list of ints, map(ord, ...)
#   and a builtin lookup a rule before) and finds a replacement inside a
#   piece in the packed UTF-8 (a str a piece before): 63.4M -> 46.4M; the
#   rule of each character alone asked of CharsmapRules.put_char_rule (char_rules'
#   dict of strs before; and code_points' str made whole): 46.4M -> 33.4M.

cdef extern from "Python.h":
    int PyUnicode_KIND(object text)
    void* PyUnicode_DATA(object text)
    Py_ssize_t PyUnicode_GET_LENGTH(object text)
    Py_UCS4 PyUnicode_READ(int kind, const void* data, Py_ssize_t index) nogil

from cpython cimport array as carray

from fasttok.shared._literal_cut cimport LiteralCut
from fasttok.shared._charsmap cimport CharsmapRules
from fasttok.shared._growth cimport (ByteBuf, OffsetBuf, bytebuf_free, bytebuf_reserve,
                                     offsets_free, offsets_reserve)
from fasttok.shared._utf8 cimport utf8_get, utf8_put


cdef struct NChar:
    # one normalized character and the span of the text it comes from
    uint32_t cp
    int32_t start
    int32_t end

cdef struct NCharBuf:
    NChar* data
    size_t len
    size_t cap


cdef inline int _nc_push(NCharBuf* b, uint32_t cp, int32_t start, int32_t end) except -1 nogil:
    cdef NChar* c
    if b.len == b.cap:
        grow_array(<void**>&b.data, &b.cap, b.len + 1, sizeof(NChar), 256)
    c = &b.data[b.len]
    c.cp = cp
    c.start = start
    c.end = end
    b.len += 1
    return 0


cdef enum:
    # The Replace stages (UnigramWalk's ops), on char a:
    OP_SQUEEZE = 1   # a run of two or more a's becomes its last one
    OP_TRIM = 2      # the runs of a's at both ends go
    OP_LEAD = 3      # an a at the start becomes the op's string
    OP_LITERAL = 4   # every (leftmost, non-overlapping) match of the op's pattern
                     # becomes its string
    OP_FOLDED = 5    # a literal " " -> the Metaspace replacement that Metaspace
                     # itself makes (it treats both alike), and so not run
    # Metaspace's prepend schemes
    PREPEND_NEVER = 0
    PREPEND_ALWAYS = 1
    PREPEND_FIRST = 2
    # A character's entry in the charsmap table: its cluster classes (those
    # of fasttok.normalizers.precompiled.graphemes), whether the walk
    # declines a text holding it (a surrogate), and above those bits its
    # rule alone + 1 (0: none)
    C_EXTEND = 1
    C_PREPEND = 2
    C_CONTROL = 4
    C_DECLINE = 8
    RULE_SHIFT = 4
    # the longest replacement of a cluster the walk takes (longer: declined)
    MAX_REPLACEMENT = 64


cdef struct Source:
    # The characters the charsmap reads: a buffer's (with their spans), or
    # where there is none (c NULL) text[a:a + n]'s, each its own span
    const NChar* c
    int kind
    const void* data
    Py_ssize_t a
    Py_ssize_t n


cdef inline uint32_t _cp_at(const Source* s, Py_ssize_t i) noexcept nogil:
    return s.c[i].cp if s.c != NULL else PyUnicode_READ(s.kind, s.data, s.a + i)


cdef struct Reports:
    # The charsmap's reports (a character and its count, tokenizers'
    # transform) not yet aligned: the last one waits, as an empty
    # replacement after it takes one more original character into it.
    const Source* src    # the characters the charsmap reads
    Py_ssize_t offset    # the one in src the next aligned report starts at
    uint32_t cp
    int32_t change
    bint have


cdef inline int _report(Reports* r, NCharBuf* out, uint32_t cp, int32_t change) except -1 nogil:
    # Aligns the waiting report and makes (cp, change) the one that waits:
    # an inserted character (change 1) takes the span of the original before
    # it, the others their own, moving on by one plus what they took in.
    cdef Py_ssize_t k
    if r.have:
        k = r.offset - 1 if r.change > 0 else r.offset
        if r.change <= 0:
            r.offset += 1 - r.change
        if r.src.c == NULL:
            _nc_push(out, r.cp, <int32_t>(r.src.a + k), <int32_t>(r.src.a + k + 1))
        else:
            _nc_push(out, r.cp, r.src.c[k].start, r.src.c[k].end)
    r.cp = cp
    r.change = change
    r.have = True
    return 0


cdef inline int _replace_with(Reports* r, NCharBuf* out, const uint32_t* new, Py_ssize_t k,
                              Py_ssize_t m) except -1 nogil:
    # A cluster of m characters becomes new[:k] (precompiled._replace): the
    # first characters replace, the last k - m are inserted, or the last
    # report takes in m - k more
    cdef Py_ssize_t t, diff = k - m
    for t in range(k):
        _report(r, out, new[t], 1 if diff > 0 and t >= k - diff else 0)
    if diff < 0 and r.have:
        r.change += <int32_t>diff
    return 0


cdef enum:
    # pieces laid out before the model runs on them (a long text's UTF-8
    # stays small, in cache), and segments of a piece cut at a time, their
    # cache entries fetched ahead
    PIECES_AT_ONCE = 64
    SEGMENTS_AT_ONCE = 32
    # a longer segment is cut where no piece joins its bytes (_pair_cut),
    # into parts the cache keeps (one of 17 to 48 bytes may not fit)
    LONG_SEGMENT = 16
    # A cached segment's value (uint32 words): the margin (a float's bits),
    # then each node's end (bytes into the segment, at most FT_PC_PAYLOAD)
    # a byte each, this bit set where the node is an unknown character,
    # then the ids: two to a word (16 bits each) when every id is under
    # 2 ** 16, else one (a segment of many nodes fits then: code, or text
    # the vocabulary knows little of)
    END_UNKNOWN = 0x80


cdef struct PieceRef:
    # one piece of a stretch: bytes [start, end) of its UTF-8, the hash of
    # its one segment (0: several, or too long for the cache), and where its
    # segments' starts after its first end in WalkOut.cut_at
    uint32_t start
    uint32_t end
    uint64_t hash
    uint32_t cuts_end


cdef struct SegmentRef:
    # one segment of a piece: bytes [start, end), its hash (0: too long)
    size_t start
    size_t end
    uint64_t hash


cdef double TWO_TO_MINUS_50 = 2.0 ** -50


cdef inline size_t _cached_nodes(const uint8_t* ends, size_t m) noexcept nogil:
    # The nodes of a cached segment of m bytes: its ends rise to m, the
    # last node's
    cdef size_t k = 0
    while (ends[k] & ~END_UNKNOWN) != m:
        k += 1
    return k + 1


cdef inline uint32_t _margin_bits(double margin) noexcept nogil:
    # margin (>= 0) as a float no greater than it, in a cache value's word
    cdef float f = <float>margin
    cdef uint32_t bits
    if <double>f > margin:
        f = nextafterf(f, 0.0)
    memcpy(&bits, &f, sizeof(float))
    return bits


cdef inline double _bits_margin(uint32_t bits) noexcept nogil:
    cdef float f
    memcpy(&f, &bits, sizeof(float))
    return f


cdef inline size_t _next_run(const NChar* d, size_t i, size_t n, uint32_t a) noexcept nogil:
    # Where the next run of two or more a's in d[i:n] starts, or n. Every
    # second character j is read (a run holds one, and its a before or
    # after), the tests made before one branch (a branch on each
    # mispredicted at every space; every character read was ~10
    # instructions a character)
    cdef size_t j = i + 1
    while j + 1 < n:
        if <uint32_t>(d[j].cp == a) & (<uint32_t>(d[j - 1].cp == a) | <uint32_t>(d[j + 1].cp == a)):
            return j - 1 if d[j - 1].cp == a else j
        j += 2
    if j < n and d[j].cp == a and d[j - 1].cp == a:
        return j - 1
    return n


cdef struct WalkOp:
    int kind
    uint32_t a
    uint32_t b           # OP_LEAD: a character it reads as a too (a, or " " after OP_FOLDED)
    uint32_t at          # the op's string: cps[at:at + length]
    uint32_t length
    uint32_t pattern     # OP_LITERAL's pattern: cps[pattern:pattern + pattern_length]
    uint32_t pattern_length


cdef struct ScoredPlace:
    # a node's start as encode_scored records it: its byte in WalkOut.normal,
    # its piece's bytes there, the index in the text of its first character,
    # the path's score before it, how many ids come before it (SIZE_MAX:
    # inside a token, a run of unknown characters fused), and whether it
    # is an unknown character
    size_t at
    size_t piece_start
    size_t piece_end
    Py_ssize_t char
    double score
    size_t ids
    bint unknown         # the node is an unknown character


cdef enum:
    # WalkOut.continuing: the text is the whole text's from its start; from
    # a pre-token's start (no "first" prepend); from inside a pre-token (no
    # prepend at its first character, its first piece scored from zero)
    AT_START = 0
    AT_WORD = 1
    IN_WORD = 2


cdef struct WalkOut:
    # one call's work buffers and results
    NCharBuf x
    NCharBuf y
    uint8_t* utf8        # a stretch's pieces, one after another
    uint32_t* char_of    # utf8 byte -> index of the character it belongs to
    size_t utf8_cap
    size_t utf8_len
    PieceRef* pieces
    size_t n_pieces
    size_t pieces_cap
    uint32_t* cut_at     # the pieces' segment starts after their first (bytes into
    size_t n_cuts        # the piece), one piece's after another's
    size_t cuts_cap
    SpanBuf spans
    SpanBuf nodes        # the Viterbi's, before unknown runs are fused
    ViterbiScratch scratch
    ft_pc_table* cache   # the thread's pre-token cache, or NULL (off)
    ByteBuf unknown      # with offsets: the text of each unknown-run token, one after
    OffsetBuf unknown_at # another, and (token index, end in unknown) for each
    uint32_t* ids
    int32_t* offs        # two a token
    int32_t* words
    size_t n
    size_t cap
    int32_t word
    bint offsets
    ByteBuf early        # the early literals' passes over a Latin-1 text, one
    ByteBuf early_other  # into each in turn (see UnigramWalk._early_latin1)
    # encode_scored's: where the text starts in the whole text it continues
    # (AT_START, AT_WORD, IN_WORD), the score its first piece starts from
    # (IN_WORD), the first piece still to come; with scored, the last
    # stretch's pieces' bytes one after another, where each piece ends in
    # them, and each node's start (ScoredPlace)
    int continuing
    double zero
    bint zero_left
    bint scored
    ByteBuf normal
    OffsetBuf piece_ends
    ScoredPlace* places
    size_t n_places
    size_t places_cap


cdef int _out_push(WalkOut* w, uint32_t id, int32_t start, int32_t end) except -1 nogil:
    cdef size_t cap
    if w.n == w.cap:
        cap = w.cap
        grow_array(<void**>&w.ids, &cap, w.n + 1, sizeof(uint32_t), 64)
        if w.offsets:
            cap = w.cap
            grow_array(<void**>&w.offs, &cap, w.n + 1, 2 * sizeof(int32_t), 64)
            cap = w.cap
            grow_array(<void**>&w.words, &cap, w.n + 1, sizeof(int32_t), 64)
        w.cap = cap
    w.ids[w.n] = id
    if w.offsets:
        w.offs[2 * w.n] = start
        w.offs[2 * w.n + 1] = end
        w.words[w.n] = w.word
    w.n += 1
    return 0


cdef int _note_unknown(WalkOut* w, const uint8_t* s, size_t n) except -1 nogil:
    # the text s[:n] of the token just pushed, an unknown run (tokenizers'
    # token string for it, which its id does not give)
    bytebuf_reserve(&w.unknown, n)
    memcpy(w.unknown.data + w.unknown.len, s, n)
    w.unknown.len += n
    offsets_reserve(&w.unknown_at, 2)
    w.unknown_at.data[w.unknown_at.len] = <uint32_t>(w.n - 1)
    w.unknown_at.data[w.unknown_at.len + 1] = <uint32_t>w.unknown.len
    w.unknown_at.len += 2
    return 0


cdef void _out_clear(WalkOut* w) noexcept nogil:
    # w's buffers kept for the next call, emptied (the scratch is the
    # thread's: given back, never kept). offs and words grow with ids only
    # in a call with offsets: after one without, they go (w.cap is then
    # ids' alone, and a call with offsets starts the three afresh).
    if not w.offsets:
        free(w.offs)
        free(w.words)
        w.offs = w.words = NULL
    w.x.len = w.y.len = w.utf8_len = w.n_pieces = w.n_cuts = w.spans.len = w.nodes.len = 0
    w.unknown.len = w.unknown_at.len = w.n = 0
    w.normal.len = w.piece_ends.len = w.n_places = 0
    w.word = 0
    w.cache = NULL
    viterbi_scratch_free(&w.scratch)


cdef void _out_free(WalkOut* w) noexcept nogil:
    free(w.x.data)
    free(w.y.data)
    free(w.utf8)
    free(w.char_of)
    free(w.pieces)
    free(w.cut_at)
    spans_free(&w.spans)
    spans_free(&w.nodes)
    viterbi_scratch_free(&w.scratch)
    bytebuf_free(&w.unknown)
    offsets_free(&w.unknown_at)
    bytebuf_free(&w.early)
    bytebuf_free(&w.early_other)
    bytebuf_free(&w.normal)
    offsets_free(&w.piece_ends)
    free(w.places)
    free(w.ids)
    free(w.offs)
    free(w.words)


cdef void _join_bits(const PieceTrie* t, uint64_t* joined) noexcept:
    # joined[(a << 7) | b] (bits) for each pair of ASCII bytes a, b that
    # some piece holds one after the other: every trie edge below the
    # root's children (a unit's byte is its index less its parent's base;
    # every path of the trie spells a piece's start)
    cdef size_t u
    cdef int32_t parent, grand
    cdef uint32_t a, b
    memset(joined, 0, 256 * sizeof(uint64_t))
    for u in range(1, t.size):
        parent = t.steps[u].check
        if parent <= 0:
            continue  # free (-1), the root (-2) or a child of the root (0)
        grand = t.steps[parent].check
        if grand < 0:
            continue
        a = <uint32_t>(parent - t.steps[grand].base)
        b = <uint32_t>(<int32_t>u - t.steps[parent].base)
        if a < 0x80 and b < 0x80:
            joined[((a << 7) | b) >> 6] |= (<uint64_t>1) << (b & 63)


cdef inline bint _pair_cut(const uint64_t* joined, uint8_t a, uint8_t b) noexcept nogil:
    # Whether a segment may be cut between bytes a and b: both ASCII (code's
    # long tokens; Chinese or Japanese cut so went to the cache in parts
    # that seldom repeat, each a miss that evicted another: whole zh.txt
    # with an 8,000-piece Japanese model 10% slower for 3% fewer
    # instructions) and no piece holds a then b, so no node of the
    # lattice crosses there (an unknown node is one character)
    cdef uint32_t k = (<uint32_t>a << 7) | b
    return (a | b) < 0x80 and not ((joined[k >> 6] >> (k & 63)) & 1)


cdef inline size_t _next_cut(const uint64_t* joined, const uint8_t* p, size_t a,
                            size_t e) noexcept nogil:
    # Where p[a:e] may first be cut (_pair_cut) past its first character,
    # or e; e too at a non-ASCII byte before any cut (Chinese or Japanese
    # is not cut: scanning whole lines of it for ASCII pairs was 4% of a
    # whole zh.txt's walk, perf, XLNet)
    cdef size_t b = a + one_char_len(p[a])
    while b < e:
        if p[b] >= 0x80:
            return e
        if _pair_cut(joined, p[b - 1], p[b]):
            return b
        b += 1
    return e


cdef class UnigramWalk:
    """A Unigram ``tokenizer.json``'s stages as one compiled walk.

    ``model``: the pipeline's :class:`TokenizersUnigram` (with its ``never``
    ids). The normalizer: the Replace stages ``early`` (before the
    charsmap) and ``ops`` (after it), each ``(kind, pattern, string)``:
    ``"literal"`` (every match of ``pattern`` becomes ``string``), ``"squeeze"`` (a run of two or
    more of the character becomes one), ``"trim"`` (the runs at both ends
    go), ``"lead"`` (the character at the start becomes ``string``); and
    ``charsmap``: ``None``, or the precompiled charsmap as ``(rules,
    classes)``: its :class:`~fasttok.shared._charsmap.CharsmapRules`
    (looked up for clusters of several characters, and for the rule of
    each character alone, its ``char_rules``), and the ``(prepend, control,
    extend)`` characters that clusters are cut by. ``whitespace``: the
    characters WhitespaceSplit cuts at, or ``None`` without it;
    ``metaspace``: ``(replacement, prepend scheme, split)`` or ``None``;
    ``n_ids``: more than the largest id given.

    >>> m = TokenizersUnigram(["<unk>", "▁a", "b", "▁"], [0.0, -1.0, -1.0, -2.0], 0, False)
    >>> w = UnigramWalk(m, [], None, [], None, ("▁", "always", True), 4)
    >>> w.run("a  ab", None, False)
    [1, 3, 1, 2]
    >>> ids, offsets, words = w.run("a  ab", None, True)
    >>> list(offsets), list(words)
    ([0, 1, 1, 2, 2, 4, 4, 5], [0, 1, 2, 2])
    """

    cdef TokenizersUnigram model
    cdef tuple ints
    cdef CharsmapRules charsmap  # None without a charsmap
    cdef int32_t* rule_block     # code point >> 8 -> block (0: no entry in it), NULL: no charsmap
    cdef int32_t* rule_entry     # block * 256 + low byte -> entry (C_* bits, rule)
    cdef int32_t low[256]        # the entries of U+0000..U+00FF
    cdef uint32_t* rule_at       # rule k's code points are cps[rule_at[k]:rule_at[k + 1]]
    cdef uint32_t* cps
    cdef WalkOp* ops
    cdef size_t n_ops
    cdef size_t n_early          # ops[:n_early] run before the charsmap
    cdef uint8_t* space          # WhitespaceSplit's characters by code point, NULL: none
    cdef uint32_t n_space
    cdef bint metaspace
    cdef uint32_t meta
    cdef int prepend
    cdef bint split
    cdef uint64_t owner          # of the pre-token cache's entries
    cdef bint cuts               # no piece holds the replacement but at its start
    cdef uint8_t cut[4]          # the replacement's UTF-8
    cdef size_t cut_len
    cdef double bound            # no node's score is further from 0
    cdef uint64_t joined[256]    # bit (a << 7) | b: some piece holds ASCII byte a then b
    cdef bint short_ids          # every id under 2 ** 16 (cached two to a word)
    cdef object added            # the pipeline's AddedTokens (raw-text pass)
    cdef dict literals           # allowed -> its added tokens' search (LiteralCut)
    cdef tuple early_pairs       # the early stages as (pattern, string) pairs when all
                                 # are literals before a charsmap (see _run), else None
    cdef bint early_latin1       # early_pairs holds no character past U+00FF
    cdef size_t margin           # encode_scored's: SCORED_MARGIN, or the bytes of the
                                 # longest literal pattern a text may end partway through
    # A call's buffers, kept for the next (malloc, free and the kernel's
    # fresh pages cost a short line a tenth of its walk, a long text a
    # sixth); a call finding them taken (another thread's, which released
    # the GIL) makes its own.
    cdef WalkOut spare
    cdef bint spare_taken

    def __cinit__(self):
        self.rule_block = NULL
        self.rule_entry = NULL
        self.rule_at = NULL
        self.cps = NULL
        self.ops = NULL
        self.space = NULL

    def __init__(self, TokenizersUnigram model not None, early, charsmap, ops, whitespace,
                 metaspace, Py_ssize_t n_ids, added=None):
        # The rules' and ops' code points go straight into self.cps (a list
        # of ints and map(ord, ...) a rule was half of the walk's build)
        cdef size_t n_cps = 0, cps_cap = 0, n_rules = 0, k
        cdef Py_ssize_t i
        cdef size_t n_blocks = 1, entry_cap = 0
        cdef uint32_t cp
        cdef Py_UCS4 c
        cdef str rule_chars = ""
        if model.core is None or model.unk < 0:
            raise ValueError("the walk needs a model with pieces and an unknown id")
        self.added = added
        self.literals = {}
        self.owner = piece_cache_owner()
        self.model = model
        # the model's own ints, and the added tokens' past them
        self.ints = model.ints if n_ids <= len(model.ints) else \
            model.ints + tuple(range(len(model.ints), n_ids))
        if charsmap is not None:
            self.charsmap, classes = charsmap
            rule_chars = self.charsmap.rule_chars()
            n_rules = len(rule_chars)
        # rule k's end is rule k + 1's start: the last rule's is the end of
        # the rules, before the ops' code points
        self.rule_at = <uint32_t*>malloc((n_rules + 1) * sizeof(uint32_t))
        if self.rule_at == NULL:
            raise MemoryError()
        self.rule_at[0] = 0
        if charsmap is not None:
            # the entries go straight into their blocks, each block made
            # when a code point of it first gets one (a dict of the ~10k
            # entries, then sorted into blocks, was half of the walk's build)
            self.rule_block = <int32_t*>calloc(0x1100, sizeof(int32_t))
            self.rule_entry = <int32_t*>calloc(256, sizeof(int32_t))  # block 0: no entries
            if self.rule_block == NULL or self.rule_entry == NULL:
                raise MemoryError()
            entry_cap = 256
            for k in range(n_rules):
                c = rule_chars[k]
                self._mark(c, <int32_t>((k + 1) << RULE_SHIFT), &n_blocks, &entry_cap)
                self.charsmap.put_char_rule(c, &self.cps, &n_cps, &cps_cap)
                self.rule_at[k + 1] = <uint32_t>n_cps
            for chars, bit in zip(classes, (C_PREPEND, C_CONTROL, C_EXTEND)):
                for i in range(PyUnicode_GET_LENGTH(chars)):
                    self._mark(PyUnicode_READ(PyUnicode_KIND(chars), PyUnicode_DATA(chars), i),
                               bit, &n_blocks, &entry_cap)
            for cp in range(0xD800, 0xE000):
                self._mark(cp, C_DECLINE, &n_blocks, &entry_cap)
            for cp in range(256):
                self.low[cp] = self.rule_entry[self.rule_block[0] * 256 + cp]
        steps = list(early) + list(ops)
        self.ops = <WalkOp*>malloc((len(steps) + 1) * sizeof(WalkOp))
        if self.ops == NULL:
            raise MemoryError()
        self.n_ops = len(steps)
        for i in range(len(steps)):
            name, pattern, rep = steps[i]
            self.ops[i].kind = _OP_KINDS[name]
            self.ops[i].pattern = <uint32_t>n_cps
            self.ops[i].pattern_length = len(pattern)
            _put_code_points(&self.cps, &n_cps, &cps_cap, pattern)
            self.ops[i].at = <uint32_t>n_cps
            self.ops[i].length = len(rep)
            _put_code_points(&self.cps, &n_cps, &cps_cap, rep)
        # one more: an op's a and b read its pattern's first code point
        grow_array(<void**>&self.cps, &cps_cap, n_cps + 1, sizeof(uint32_t), 64)
        self.margin = SCORED_MARGIN
        for i in range(len(steps)):
            self.ops[i].a = self.ops[i].b = self.cps[self.ops[i].pattern]
            if self.ops[i].kind == OP_LITERAL:
                self.margin = max(self.margin, 4 * <size_t>self.ops[i].pattern_length)
        self.n_early = len(early)
        if charsmap is not None and early and all(
                name == "literal" and pattern for name, pattern, _ in early):
            self.early_pairs = tuple((pattern, rep) for _, pattern, rep in early)
            self.early_latin1 = max(map(ord, "".join(map("".join, self.early_pairs)))) < 0x100
        if whitespace is not None:
            self.n_space = max(map(ord, whitespace), default=0) + 1
            self.space = <uint8_t*>calloc(self.n_space, 1)
            if self.space == NULL:
                raise MemoryError()
            for ch in whitespace:
                self.space[ord(ch)] = 1
        self.metaspace = metaspace is not None
        if self.metaspace:
            replacement, scheme, split = metaspace
            self.meta = ord(replacement)
            self.prepend = {"never": PREPEND_NEVER, "always": PREPEND_ALWAYS,
                            "first": PREPEND_FIRST}[scheme]
            self.split = split
            raw = replacement.encode("utf-8")
            self.cut_len = len(raw)
            memcpy(self.cut, <const char*>raw, self.cut_len)
            self.cuts = not _inside(model, self.cut, self.cut_len)
            self._fold()
        self.short_ids = model.core.n_pieces < 0x10000 and model.core.unk_id < 0x10000
        _join_bits(&model.core.trie, self.joined)
        self.bound = fabs(model.core.unk_score)
        for i in range(model.core.n_pieces):
            self.bound = max(self.bound, fabs(model.core.scores[i]))

    def __dealloc__(self):
        _out_free(&self.spare)
        free(self.rule_block)
        free(self.rule_entry)
        free(self.rule_at)
        free(self.cps)
        free(self.ops)
        free(self.space)

    cdef int _mark(self, uint32_t cp, int32_t bits, size_t* n_blocks,
                   size_t* entry_cap) except -1:
        # bits ORed into code point cp's entry, its block made on first use
        cdef int32_t block = self.rule_block[cp >> 8]
        if block == 0:
            grow_array(<void**>&self.rule_entry, entry_cap, (n_blocks[0] + 1) * 256,
                       sizeof(int32_t), 256)
            memset(self.rule_entry + n_blocks[0] * 256, 0, 256 * sizeof(int32_t))
            block = self.rule_block[cp >> 8] = <int32_t>n_blocks[0]
            n_blocks[0] += 1
        self.rule_entry[block * 256 + (cp & 0xFF)] |= bits
        return 0

    cdef void _fold(self) noexcept:
        # The literal " " -> the replacement, when only leads of the
        # replacement come after it (no charsmap) and there is no
        # WhitespaceSplit (which cuts at " " alone), becomes OP_FOLDED:
        # Metaspace writes, splits and prepends at both alike (transformers'
        # conversions of SentencePiece models; its mask over every
        # character was a twentieth of a whole text's walk). The leads after
        # it (their "\A▁" -> "▁▁") then read a " " as the replacement.
        cdef size_t i = self.n_ops, j
        while i > 0 and self.ops[i - 1].kind == OP_LEAD and self.ops[i - 1].a == self.meta:
            i -= 1
        if i == 0 or self.space != NULL or (self.rule_block != NULL and i <= self.n_early):
            return
        i -= 1
        if self.ops[i].kind == OP_LITERAL and self.ops[i].pattern_length == 1 and \
                self.ops[i].a == 0x20 and self.ops[i].length == 1 and \
                self.cps[self.ops[i].at] == self.meta:
            self.ops[i].kind = OP_FOLDED
            for j in range(i + 1, self.n_ops):
                self.ops[j].b = 0x20

    cdef inline int32_t _entry(self, uint32_t cp) noexcept nogil:
        if cp < 0x100:
            return self.low[cp]     # one load, not two, for Latin-1
        return self.rule_entry[self.rule_block[cp >> 8] * 256 + (cp & 0xFF)]

    cdef Py_ssize_t _cluster_end(self, const Source* c, Py_ssize_t i) noexcept nogil:
        # Where the cluster at character i ends, as graphemes' pattern cuts
        # it: CR LF; else prepended marks, a character that is no control
        # (PREPEND* gives back marks till one follows) and its extenders;
        # else one character.
        cdef Py_ssize_t r = i, base, j, n = c.n
        if _cp_at(c, i) == 13 and i + 1 < n and _cp_at(c, i + 1) == 10:
            return i + 2
        while r < n and self._entry(_cp_at(c, r)) & C_PREPEND:
            r += 1
        base = r
        while base >= i and (base >= n or self._entry(_cp_at(c, base)) & C_CONTROL):
            base -= 1
        if base < i:
            return i + 1
        j = base + 1
        while j < n and self._entry(_cp_at(c, j)) & C_EXTEND:
            j += 1
        return j

    cdef int _alone(self, Reports* r, NCharBuf* out, uint32_t cp) except -2 nogil:
        # one character by its rule alone; 1: declined
        cdef int32_t e = self._entry(cp), rule = e >> RULE_SHIFT
        if e & C_DECLINE:
            return 1
        if rule == 0:
            _report(r, out, cp, 0)
        else:
            _replace_with(r, out, self.cps + self.rule_at[rule - 1],
                          self.rule_at[rule] - self.rule_at[rule - 1], 1)
        return 0

    cdef int _charsmap(self, const Source* c, NCharBuf* out) except -2 nogil:
        # The charsmap over c into out, as Precompiled's _reports and
        # tokenizers' transform: a cluster of under 6 bytes by its rule (the
        # shortest that is a prefix of it), else each character by its own;
        # 1: declined (a lone surrogate, a replacement past MAX_REPLACEMENT).
        cdef Reports r
        cdef Py_ssize_t i = 0, j, t, k, at, n = c.n
        cdef uint32_t cp, next_cp
        cdef int32_t entry, next_entry
        cdef const uint8_t* latin1
        cdef NChar* nc
        cdef uint8_t key[8]
        cdef size_t n_key, length
        cdef int64_t value
        cdef const uint8_t* rep
        cdef uint32_t new[MAX_REPLACEMENT]
        out.len = 0
        r.src = c
        r.offset = 0
        r.have = False
        r.change = 0
        r.cp = 0
        if n:
            next_cp = _cp_at(c, 0)
            next_entry = self._entry(next_cp)
        while i < n:
            cp = next_cp
            entry = next_entry
            if i + 1 < n:
                next_cp = _cp_at(c, i + 1)
                next_entry = self._entry(next_cp)
            if entry == 0 and i + 1 < n and next_entry == 0:
                # A run of characters without rules, none joining a cluster
                # (but the last may the next's): each its own report,
                # aligned as it is found but the last, which waits as every
                # report does (one loop, not a scan and a copy: the copy was
                # a third of the charsmap's time)
                _report(&r, out, cp, 0)
                _report(&r, out, 0, 0)   # aligns the run's first
                if out.len + (n - i) > out.cap:
                    grow_array(<void**>&out.data, &out.cap, out.len + (n - i), sizeof(NChar), 256)
                at = <Py_ssize_t>out.len - (i + 1)   # character t goes to out.data[at + t]
                k = r.offset - (i + 1)               # and is the source's k + t
                nc = out.data + at
                j = i + 1
                if c.c != NULL:
                    while j < n and self._entry(c.c[j].cp) == 0:
                        nc[j].cp = c.c[j].cp
                        nc[j].start = c.c[k + j].start
                        nc[j].end = c.c[k + j].end
                        j += 1
                elif c.kind == 1:
                    latin1 = <const uint8_t*>c.data + c.a
                    while j < n and self.low[latin1[j]] == 0:
                        nc[j].cp = latin1[j]
                        nc[j].start = <int32_t>(c.a + k + j)
                        nc[j].end = <int32_t>(c.a + k + j + 1)
                        j += 1
                else:
                    while j < n and self._entry(_cp_at(c, j)) == 0:
                        nc[j].cp = _cp_at(c, j)
                        nc[j].start = <int32_t>(c.a + k + j)
                        nc[j].end = <int32_t>(c.a + k + j + 1)
                        j += 1
                if j < n and self._entry(_cp_at(c, j)) & C_EXTEND:
                    j -= 1   # the run's last starts the next one's cluster
                j -= 1       # the run's last: it waits
                out.len = <size_t>(at + j)
                r.offset = k + j
                r.cp = nc[j].cp
                r.change = 0
                r.have = True
                i = j + 1
                if i < n:
                    next_cp = _cp_at(c, i)
                    next_entry = self._entry(next_cp)
                continue
            if entry == 0 and (i + 1 == n or not (next_entry & C_EXTEND)):
                # no rule, and a cluster alone (most characters)
                _report(&r, out, cp, 0)
                i += 1
                continue
            j = self._cluster_end(c, i)
            if j == i + 1:
                if self._alone(&r, out, cp):
                    return 1
                i = j
                continue
            n_key = 0
            for t in range(i, j):
                cp = _cp_at(c, t)
                if self._entry(cp) & C_DECLINE:
                    return 1
                length = 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4
                if n_key + length < 6:
                    utf8_put(key + n_key, cp)
                n_key += length
            value = self.charsmap._first_leaf(key, n_key) if n_key < 6 else -1
            if value >= 0:
                # the replacement: NUL-terminated UTF-8, checked to end
                # inside the strings when the charsmap was read
                rep = self.charsmap.m.strings + value
                k = 0
                while rep[0] != 0:
                    if k == MAX_REPLACEMENT:
                        return 1
                    rep += utf8_get(rep, MAX_REPLACEMENT, &new[k])
                    k += 1
                _replace_with(&r, out, new, k, j - i)
            else:
                for t in range(i, j):
                    if self._alone(&r, out, _cp_at(c, t)):
                        return 1
            i = j
            if i < n:
                next_cp = _cp_at(c, i)
                next_entry = self._entry(next_cp)
        # aligns the last report (the 0 after it is never aligned)
        _report(&r, out, 0, 0)
        return 0

    cdef int _op(self, const WalkOp* op, NCharBuf* src, NCharBuf* dst) except -1 nogil:
        # One Replace stage: every new character takes the span of the
        # match's last character. In place in src (0) where the result is
        # no longer than the match, as most stages' are (a copy a stage
        # was a fifth of a long text's walk); else into dst (1).
        cdef size_t i = 0, j, k = 0, lo, hi, n = src.len
        cdef uint32_t mask
        cdef NChar* d = src.data
        cdef NChar c
        if op.kind == OP_LITERAL and op.length > op.pattern_length:
            dst.len = 0
            while i < n:
                j = 0
                while j < op.pattern_length and i + j < n and d[i + j].cp == self.cps[op.pattern + j]:
                    j += 1
                if j < op.pattern_length:
                    _nc_push(dst, d[i].cp, d[i].start, d[i].end)
                    i += 1
                    continue
                c = d[i + j - 1]
                for j in range(op.length):
                    _nc_push(dst, self.cps[op.at + j], c.start, c.end)
                i += op.pattern_length
            return 1
        if op.kind == OP_LITERAL and op.pattern_length == 1 == op.length:
            # one character for another (" " for "\u2581"): no character moves
            # (every character stored, the branch on each a select: a space a
            # word mispredicted was two fifths of the stage)
            # (a mask, not a select: GCC makes a select a branch again)
            c.cp = self.cps[op.at]   # (read once: the stores might change it)
            for i in range(n):
                mask = <uint32_t>0 - <uint32_t>(d[i].cp == op.a)
                d[i].cp = d[i].cp ^ ((d[i].cp ^ c.cp) & mask)
            return 0
        if op.kind == OP_FOLDED:
            return 0
        if op.kind == OP_LITERAL:
            # the characters between two matches move as a block, when one
            # is found (most texts hold none: '' and `` in ALBERT's, a
            # character at a time was most of its walk of code)
            lo = 0   # the block not yet moved: d[lo:i], to d[k:]
            while True:
                while i < n and d[i].cp != op.a:
                    i += 1
                if i == n:
                    break
                j = 0
                while j < op.pattern_length and i + j < n and d[i + j].cp == self.cps[op.pattern + j]:
                    j += 1
                if j < op.pattern_length:
                    i += 1
                    continue
                if k != lo:
                    memmove(d + k, d + lo, (i - lo) * sizeof(NChar))
                k += i - lo
                c = d[i + j - 1]
                for j in range(op.length):
                    d[k].cp = self.cps[op.at + j]
                    d[k].start = c.start
                    d[k].end = c.end
                    k += 1
                i += op.pattern_length
                lo = i
            if k != lo:
                memmove(d + k, d + lo, (n - lo) * sizeof(NChar))
            src.len = k + n - lo
            return 0
        if op.kind == OP_TRIM:
            lo = 0
            hi = n
            while lo < hi and d[lo].cp == op.a:
                lo += 1
            while hi > lo and d[hi - 1].cp == op.a:
                hi -= 1
            if lo:
                memmove(d, d + lo, (hi - lo) * sizeof(NChar))
            src.len = hi - lo
            return 0
        if op.kind == OP_SQUEEZE:
            # nothing moves before the first run; after it, each run's last
            # a and the characters up to the next run move as a block (a
            # store a character was a sixth of a whole text's walk)
            i = _next_run(d, 0, n, op.a)
            k = i
            while i < n:
                while i + 1 < n and d[i + 1].cp == op.a:
                    i += 1
                lo = i
                i = _next_run(d, i + 1, n, op.a)
                memmove(d + k, d + lo, (i - lo) * sizeof(NChar))
                k += i - lo
            src.len = k
            return 0
        # OP_LEAD: the first character, if it is the op's, becomes its string
        if n == 0 or (d[0].cp != op.a and d[0].cp != op.b):
            return 0
        if n + op.length - 1 > src.cap:
            grow_array(<void**>&src.data, &src.cap, n + op.length - 1, sizeof(NChar), 256)
            d = src.data
        c = d[0]
        memmove(d + op.length, d + 1, (n - 1) * sizeof(NChar))
        for j in range(op.length):
            d[j].cp = self.cps[op.at + j]
            d[j].start = c.start
            d[j].end = c.end
        src.len = n + op.length - 1
        return 0

    cdef Py_ssize_t _piece(self, NCharBuf* chars, size_t lo, size_t hi, bint prepend,
                           WalkOut* w) except -1 nogil:
        # Adds chars[lo:hi] as a piece of the stretch, in UTF-8: after the
        # replacement when prepend (which takes the first character's
        # span), with the spaces as the replacement under Metaspace; a
        # Metaspace that splits ends the piece before its next space or
        # replacement (the split found as the piece is written: a loop of
        # its own was a twelfth of the walk). Returns where it ends. The
        # cache set of a piece of one short segment is fetched now, so the misses
        # of a stretch's pieces overlap (the model runs on them all after).
        # Where the replacement starts past the piece's first byte a segment
        # starts (see _segments), noted as it is written (a scan for it was
        # a twelfth of a whole text's walk).
        cdef size_t i, k, length, n, first, cap, cuts = w.n_cuts
        cdef uint32_t cp
        cdef uint8_t* p
        cdef const NChar* c
        cdef uint32_t* char_of
        cdef bint offsets, metaspace
        cdef PieceRef* ref
        if w.n_pieces == PIECES_AT_ONCE:
            # the model takes the pieces so far (so a long text's UTF-8
            # stays small, in cache and off fresh pages)
            self._model(chars, w)
        first = n = w.utf8_len
        cap = w.utf8_cap
        # 4 bytes a character, and the prepended replacement
        grow_array(<void**>&w.utf8, &cap, n + 4 * (hi - lo + 1), 1, 1024)
        cap = w.utf8_cap
        grow_array(<void**>&w.char_of, &cap, n + 4 * (hi - lo + 1), sizeof(uint32_t), 1024)
        w.utf8_cap = cap
        if self.cuts and not self.split:
            grow_array(<void**>&w.cut_at, &w.cuts_cap, cuts + (hi - lo), sizeof(uint32_t), 256)
        p = w.utf8
        # (char_of is read for offsets alone)
        if prepend:
            n += utf8_put(p + n, self.meta)
            for k in range(first, n):
                w.char_of[k] = <uint32_t>lo
        # (locals: a store through p may alias any field, which the loop
        # then read again each character)
        c = chars.data
        char_of = w.char_of
        offsets = w.offsets
        metaspace = self.metaspace
        for i in range(lo, hi):
            cp = c[i].cp
            if cp < 0x80 and not (cp == 0x20 and metaspace):
                p[n] = <uint8_t>cp
                if offsets:
                    char_of[n] = <uint32_t>i
                n += 1
                continue
            if metaspace and (cp == 0x20 or cp == self.meta):
                if self.split and i > lo:
                    hi = i
                    break
                # the replacement's bytes as they are (a word's every start)
                length = self.cut_len
                memcpy(p + n, self.cut, 4)
                if self.cuts and not self.split and n > first:
                    w.cut_at[w.n_cuts] = <uint32_t>(n - first)
                    w.n_cuts += 1
            else:
                length = utf8_put(p + n, cp)
            if offsets:
                for k in range(length):
                    char_of[n + k] = <uint32_t>i
            n += length
        w.utf8_len = n
        if w.n_pieces == w.pieces_cap:
            grow_array(<void**>&w.pieces, &w.pieces_cap, w.n_pieces + 1, sizeof(PieceRef), 64)
        ref = &w.pieces[w.n_pieces]
        w.n_pieces += 1
        ref.start = <uint32_t>first
        ref.end = <uint32_t>n
        ref.hash = 0
        ref.cuts_end = <uint32_t>w.n_cuts
        if w.cache != NULL and n - first <= LONG_SEGMENT and w.n_cuts == cuts:
            # one short segment (_segments cuts a longer one, and hashes its parts)
            ref.hash = ft_pc_hash(p + first, n - first)
            ft_pc_prefetch(w.cache, ref.hash)
        return hi

    cdef int _model(self, NCharBuf* chars, WalkOut* w) except -1 nogil:
        # The model over each piece of the stretch (chars: its characters),
        # one word each: its nodes (_segments), their unknown runs fused.
        cdef size_t i, j, n, cuts = 0, place = 0
        cdef int direct
        cdef double zero
        cdef const uint8_t* p
        cdef PieceRef* ref
        cdef SpanBuf* tokens
        cdef Span* sp
        for i in range(w.n_pieces):
            ref = &w.pieces[i]
            p = w.utf8 + ref.start
            n = ref.end - ref.start
            zero = 0.0
            if w.zero_left:
                zero = w.zero
                w.zero_left = False
            direct = self._segments(p, n, ref.hash, w.cut_at + cuts, ref.cuts_end - cuts,
                                    zero, w)
            cuts = ref.cuts_end
            if w.scored:
                place = w.n_places
                self._note_places(chars, ref, zero, w)
            if direct:
                w.word += 1   # (its ids are in w.ids already: see _segment)
                continue
            if not w.offsets:
                self._node_ids(p, w)
                w.word += 1
                continue
            tokens = &w.nodes
            for j in range(w.nodes.len):
                if <int32_t>w.nodes.data[j].id == self.model.unk:
                    w.spans.len = 0
                    self.model._fuse(p, &w.nodes, &w.spans)
                    tokens = &w.spans
                    break
            for j in range(tokens.len):
                sp = &tokens.data[j]
                if w.scored:
                    # the ids before a node that starts a token (not one
                    # inside a run of unknown characters fused)
                    while place < w.n_places and \
                            w.places[place].at - w.places[place].piece_start < sp.start:
                        place += 1
                    if place < w.n_places and \
                            w.places[place].at - w.places[place].piece_start == sp.start:
                        w.places[place].ids = w.n
                        place += 1
                _out_push(w, sp.id, chars.data[w.char_of[ref.start + sp.start]].start,
                          chars.data[w.char_of[ref.start + sp.end - 1]].end)
                if sp.flags & FLAG_TEXT:
                    _note_unknown(w, p + sp.start, sp.end - sp.start)
            w.word += 1
        w.n_pieces = 0
        w.n_cuts = 0
        w.utf8_len = 0
        return 0

    cdef int _note_places(self, const NCharBuf* chars, const PieceRef* ref, double zero,
                          WalkOut* w) except -1 nogil:
        # encode_scored's record of the piece ref (its nodes in w.nodes, its
        # path scored from zero): its bytes after the stretch's others, and
        # a place at each node's start, the path's score there summed in the
        # Viterbi's order (as _placed sums it)
        cdef const uint8_t* p = w.utf8 + ref.start
        cdef size_t n = ref.end - ref.start, base = w.normal.len, first = w.n_places, j
        cdef const Span* sp
        cdef ScoredPlace* at
        bytebuf_reserve(&w.normal, n)
        memcpy(w.normal.data + base, p, n)
        w.normal.len += n
        offsets_reserve(&w.piece_ends, 1)
        w.piece_ends.data[w.piece_ends.len] = <uint32_t>(base + n)
        w.piece_ends.len += 1
        grow_array(<void**>&w.places, &w.places_cap, first + w.nodes.len, sizeof(ScoredPlace), 64)
        for j in range(w.nodes.len):
            sp = &w.nodes.data[j]
            at = &w.places[first + j]
            at.at = base + sp.start
            at.piece_start = base
            at.piece_end = base + n
            at.char = chars.data[w.char_of[ref.start + sp.start]].start
            at.score = zero
            at.ids = SIZE_MAX
            at.unknown = self._unknown(p, sp)
            zero = zero + (self.model.core.unk_score if at.unknown
                           else self.model.core.scores[sp.id])
        w.n_places += w.nodes.len
        return 0

    cdef int _node_ids(self, const uint8_t* p, WalkOut* w) except -1 nogil:
        # The ids of the piece p's nodes (w.nodes) into w.ids, each run of
        # unknown nodes fused where it is (one pass; a SentencePiece
        # conversion's whole text is one piece, where one unknown character
        # made _fuse copy every node of it: 4% of whole en.txt)
        cdef size_t j = 0, k, count = w.nodes.len
        cdef const Span* nodes = w.nodes.data
        cdef int32_t unk = self.model.unk
        cdef uint32_t id
        if w.n + count > w.cap:
            grow_array(<void**>&w.ids, &w.cap, w.n + count, sizeof(uint32_t), 64)
        while j < count:
            id = nodes[j].id
            if <int32_t>id != unk:
                w.ids[w.n] = id
                w.n += 1
                j += 1
                continue
            k = j
            while k < count and <int32_t>nodes[k].id == unk:
                k += 1
            w.spans.len = 0
            self.model._fuse_run(p, nodes[j].start, nodes[k - 1].end, &w.spans)
            # (a run may give a byte's id for each of its bytes)
            if w.n + w.spans.len + count - k > w.cap:
                grow_array(<void**>&w.ids, &w.cap, w.n + w.spans.len + count - k,
                           sizeof(uint32_t), 64)
            for j in range(w.spans.len):
                w.ids[w.n + j] = w.spans.data[j].id
            w.n += w.spans.len
            j = k
        return 0

    cdef inline bint _unknown(self, const uint8_t* p, const Span* sp) noexcept nogil:
        # whether node sp is an unknown character (unk_score), not a piece
        return <int32_t>sp.id == self.model.unk and \
            self.model._find(p + sp.start, sp.end - sp.start) != self.model.unk

    cdef inline bint _holds(self, double margin, double here, size_t m) noexcept nogil:
        # Whether a segment of m bytes splits from here as from 0, its
        # comparisons from 0 being margin or more apart: ``here + x`` rounds,
        # so a path's score from here is off from here plus its score from
        # 0 by under m * 2**-53 * (|here| + m * bound) (m additions, each
        # rounded by half an ulp at most), a comparison by four times that;
        # twice that again is asked. From 0 it is the same arithmetic.
        return here == 0.0 or margin > (m + 2) * TWO_TO_MINUS_50 * (
            fabs(here) + (m + 1) * self.bound + 1.0)

    cdef double _placed(self, const uint8_t* p, size_t first, size_t a, double here,
                        bint last, WalkOut* w) noexcept nogil:
        # nodes[first:] (spans into p + a) moved to spans into p; unless
        # last (the piece's last segment), the path's score after them from
        # here (added in its order, as the Viterbi did)
        cdef size_t j
        cdef Span* sp
        for j in range(first, w.nodes.len):
            sp = &w.nodes.data[j]
            sp.start += <uint32_t>a
            sp.end += <uint32_t>a
            if not last:
                here = here + (self.model.core.unk_score if self._unknown(p, sp)
                               else self.model.core.scores[sp.id])
        return here

    cdef int _segments(self, const uint8_t* p, size_t n, uint64_t hash, const uint32_t* cuts,
                       size_t n_cuts, double zero, WalkOut* w) except -1 nogil:
        # The Viterbi nodes of the piece p[:n] (n > 0) into w.nodes, with the
        # thread's cache (see the notes above UnigramWalk); hash: the
        # piece's when it is one segment of at most LONG_SEGMENT bytes (else
        # 0); cuts[:n_cuts]: where
        # its segments after the first start (_piece notes them); 1 where
        # _segment put the ids in w.ids itself. Without a cache,
        # one Viterbi; with it, segment by segment: the piece is cut where
        # the replacement starts (no node crosses one: no piece holds it but
        # at its start, an unknown node is one character), so the Viterbi
        # over the whole piece is the Viterbi of each segment in turn, each
        # starting from the score the last left (here). A segment's nodes
        # from 0 are cached with the least gap between two scores its
        # Viterbi compared: where that gap is wide enough for here's
        # rounding (_holds), the segment splits from here as from 0, and
        # its score is added node by node. zero: the score the piece's path
        # starts from (0, but where encode_scored's text goes on inside one).
        cdef size_t a = 0, b, e, i, count, c = 0
        cdef bint cached
        cdef uint64_t h
        cdef double here = zero
        cdef SegmentRef segs[SEGMENTS_AT_ONCE]
        w.nodes.len = 0
        if w.cache == NULL or (hash and not ft_pc_open(w.cache, hash)):
            # no cache, or its gate keeps this piece out (too few hits of late)
            return self.model.core.viterbi_from(p, n, &w.nodes, &w.scratch, zero, NULL)
        if hash:
            segs[0].start = 0
            segs[0].end = n
            segs[0].hash = hash
            return self._segment(p, &segs[0], &here, True, w)
        while a < n:
            count = 0
            while a < n and count < SEGMENTS_AT_ONCE:
                e = cuts[c] if c < n_cuts else n
                b = e
                if e - a > LONG_SEGMENT:
                    # a long segment goes to the cache in parts (else it
                    # does not fit: code's long tokens were Viterbi each time)
                    b = _next_cut(self.joined, p, a, e)
                if b == e:
                    c += 1
                # (the gate is asked segment by segment: it samples pieces by hash)
                h = ft_pc_hash(p + a, b - a) if b - a <= FT_PC_PAYLOAD else 0
                cached = h != 0 and ft_pc_open(w.cache, h)
                if not cached and count and segs[count - 1].hash == 0:
                    # segments the cache does not keep, one after another:
                    # one Viterbi for them (text with few spaces: Chinese,
                    # Japanese; or the gate closed)
                    segs[count - 1].end = a = b
                    continue
                segs[count].start = a
                segs[count].end = b
                segs[count].hash = 0
                if cached:
                    segs[count].hash = h
                    ft_pc_prefetch(w.cache, h)
                a = b
                count += 1
            for i in range(count):
                self._segment(p, &segs[i], &here, segs[i].end == n, w)
        return 0

    cdef int _segment(self, const uint8_t* p, const SegmentRef* seg, double* here, bint last,
                      WalkOut* w) except -1 nogil:
        # _segments' work on one segment, here[0] the score before it and
        # after it (not needed after the piece's last). 1: the segment is
        # its piece's one and w wants ids alone, and none of its cached
        # nodes is unknown (nothing to fuse): its ids went to w.ids straight
        # from the entry, no node made (a piece's nodes made, scanned and
        # copied were a tenth of a split file's walk).
        cdef size_t a = seg.start, m = seg.end - seg.start, first = w.nodes.len, j, k, at, end
        cdef uint32_t id, unknown = 0
        cdef uint32_t* out
        cdef double margin
        cdef const ft_pc_entry* e
        cdef const uint32_t* values
        cdef const uint32_t* ids
        cdef const uint8_t* ends
        cdef uint32_t words[FT_PC_PAYLOAD]   # (a quarter of it is a value's room)
        cdef uint8_t* packed
        cdef const double* scores
        cdef double unk_score, score
        cdef Span* sp
        if seg.hash:
            e = ft_pc_find(w.cache, self.owner, p + a, m, seg.hash)
            ft_pc_count(w.cache, seg.hash, e != NULL)
            if e != NULL:
                values = ft_pc_ids(e)
                if self._holds(_bits_margin(values[0]), here[0], m):
                    ends = <const uint8_t*>(values + 1)
                    k = _cached_nodes(ends, m)
                    ids = values + 1 + (k + 3) // 4
                    if last and first == 0 and not w.offsets:
                        if w.n + k > w.cap:
                            grow_array(<void**>&w.ids, &w.cap, w.n + k, sizeof(uint32_t), 64)
                        out = w.ids + w.n
                        for j in range(k):
                            id = (<const uint16_t*>ids)[j] if self.short_ids else ids[j]
                            out[j] = id
                            unknown |= (ends[j] & END_UNKNOWN) | \
                                <uint32_t>(<int32_t>id == self.model.unk)
                        if not unknown:
                            w.n += k
                            return 1
                    if w.nodes.len + k > w.nodes.cap:
                        spans_reserve(&w.nodes, k)
                    # (locals: the stores below might alias the model's fields)
                    scores = self.model.core.scores
                    unk_score = self.model.core.unk_score
                    score = here[0]
                    sp = &w.nodes.data[w.nodes.len]
                    at = a
                    for j in range(k):
                        end = a + (ends[j] & ~END_UNKNOWN)
                        sp[j].id = (<const uint16_t*>ids)[j] if self.short_ids else ids[j]
                        sp[j].start = <uint32_t>at
                        sp[j].end = <uint32_t>end
                        sp[j].flags = 0
                        at = end
                        score = score + (unk_score if ends[j] & END_UNKNOWN else scores[sp[j].id])
                    w.nodes.len += k
                    here[0] = score
                    return 0
            else:
                margin = INFINITY
                self.model.core.viterbi_from(p + a, m, &w.nodes, &w.scratch, 0.0, &margin)
                k = w.nodes.len - first
                j = 1 + (k + 3) // 4 + ((k + 1) // 2 if self.short_ids else k)
                if ft_pc_fits(m, j):
                    memset(words, 0, FT_PC_PAYLOAD)
                    words[0] = _margin_bits(margin)
                    packed = <uint8_t*>(words + 1)
                    ids = words + 1 + (k + 3) // 4
                    for j in range(k):
                        sp = &w.nodes.data[first + j]
                        packed[j] = <uint8_t>(sp.end | (END_UNKNOWN if self._unknown(p + a, sp)
                                                        else 0))
                        if self.short_ids:
                            (<uint16_t*>ids)[j] = <uint16_t>sp.id
                        else:
                            (<uint32_t*>ids)[j] = sp.id
                    ft_pc_put(w.cache, self.owner, p + a, m, seg.hash, words,
                              1 + (k + 3) // 4 + ((k + 1) // 2 if self.short_ids else k))
                if self._holds(margin, here[0], m):
                    here[0] = self._placed(p, first, a, here[0], last, w)
                    return 0
                w.nodes.len = first
        self.model.core.viterbi_from(p + a, m, &w.nodes, &w.scratch, here[0], NULL)
        here[0] = self._placed(p, first, a, here[0], last, w)
        return 0

    cdef int _word(self, NCharBuf* src, size_t lo, size_t hi, WalkOut* w) except -1 nogil:
        # Metaspace over one split src[lo:hi] (not empty), then its pieces:
        # spaces are the replacement, which (prepended unless the split
        # starts with one, as the scheme says) starts each piece
        cdef size_t start
        cdef NChar* c = &src.data[lo]
        cdef bint prepend
        if not self.metaspace:
            self._piece(src, lo, hi, False, w)
            return 0
        prepend = c.cp != self.meta and c.cp != 0x20 and (
            self.prepend == PREPEND_ALWAYS or (self.prepend == PREPEND_FIRST and c.start == 0
                                               and w.continuing == AT_START))
        if w.continuing == IN_WORD and c.start == 0:
            prepend = False   # the whole text's pre-token goes on here
        if not self.split:
            self._piece(src, lo, hi, prepend, w)
            return 0
        start = self._piece(src, lo, hi, prepend, w)
        while start < hi:
            start = self._piece(src, start, hi, False, w)
        return 0

    cdef bint _early_idle(self, const Source* text) noexcept nogil:
        # Whether the stages before the charsmap leave text as it is: all
        # literals, none of whose patterns occurs in it (a stage changing
        # nothing gives the next the text it was given)
        cdef size_t i, j
        cdef Py_ssize_t k, last
        cdef const WalkOp* op
        cdef const uint8_t* latin1 = NULL
        cdef const uint8_t* found
        if text.c == NULL and text.kind == 1:
            latin1 = <const uint8_t*>text.data + text.a
        for i in range(self.n_early):
            op = &self.ops[i]
            if op.kind != OP_LITERAL or op.pattern_length == 0:
                return False
            last = text.n - <Py_ssize_t>op.pattern_length
            k = 0
            while k <= last:
                if latin1 != NULL:
                    # memchr finds the pattern's first character (no
                    # Latin-1 text holds one past U+00FF)
                    if op.a > 0xFF:
                        break
                    found = <const uint8_t*>memchr(latin1 + k, op.a, last - k + 1)
                    if found == NULL:
                        break
                    k = found - latin1
                elif _cp_at(text, k) != op.a:
                    k += 1
                    continue
                j = 1
                while j < op.pattern_length and _cp_at(text, k + j) == self.cps[op.pattern + j]:
                    j += 1
                if j == op.pattern_length:
                    return False
                k += 1
        return True

    cdef int _stretch(self, int kind, const void* data, Py_ssize_t a, Py_ssize_t b,
                      WalkOut* w, bint early_done) except -2 nogil:
        # text[a:b] between added tokens; 1: declined (a lone surrogate).
        # early_done: the early stages ran already, or were found to leave
        # the text as it is (see _stretch_of)
        cdef NCharBuf* src = &w.x
        cdef NCharBuf* dst = &w.y
        cdef NChar* c
        cdef size_t i, lo
        cdef Py_ssize_t k
        cdef uint32_t cp
        cdef Source text
        text.c = NULL
        text.kind = kind
        text.data = data
        text.a = a
        text.n = b - a
        if w.scored:
            # (encode_scored cuts in the last stretch alone)
            w.normal.len = w.piece_ends.len = w.n_places = 0
        if self.rule_block != NULL and (self.n_early == 0 or early_done or
                                        self._early_idle(&text)):
            # the charsmap reads the text itself (a copy for early stages
            # that change nothing was a quarter of an ALBERT line's walk)
            if self._charsmap(&text, src):
                return 1
        else:
            # (room made once, not a check a character)
            grow_array(<void**>&src.data, &src.cap, <size_t>(b - a), sizeof(NChar), 256)
            c = src.data - a
            if kind == 1:
                for k in range(a, b):
                    c[k].cp = (<const uint8_t*>data)[k]
                    c[k].start = <int32_t>k
                    c[k].end = <int32_t>k + 1
            else:
                for k in range(a, b):
                    cp = PyUnicode_READ(kind, data, k)
                    if 0xD800 <= cp < 0xE000:
                        return 1
                    c[k].cp = cp
                    c[k].start = <int32_t>k
                    c[k].end = <int32_t>k + 1
            src.len = <size_t>(b - a)
            for i in range(self.n_early):
                if self._op(&self.ops[i], src, dst):
                    src, dst = dst, src
            if self.rule_block != NULL:
                text.c = src.data
                text.n = <Py_ssize_t>src.len
                if self._charsmap(&text, dst):
                    return 1
                src, dst = dst, src
        for i in range(self.n_early, self.n_ops):
            if self._op(&self.ops[i], src, dst):
                src, dst = dst, src
        if src.len == 0:
            return 0
        w.utf8_len = 0
        w.n_pieces = 0
        w.n_cuts = 0
        if self.space == NULL:
            self._word(src, 0, src.len, w)
            return self._model(src, w)
        i = 0
        while i < src.len:
            while i < src.len and src.data[i].cp < self.n_space and self.space[src.data[i].cp]:
                i += 1
            lo = i
            while i < src.len and not (src.data[i].cp < self.n_space and
                                       self.space[src.data[i].cp]):
                i += 1
            if i > lo:
                self._word(src, lo, i, w)
        return self._model(src, w)

    def ids(self, str text not None, allowed):
        """The ids of ``text`` (a list), the added tokens ``allowed`` (a
        frozenset of ids, ``None``: all) cut first; ``None`` if declined."""
        return self._run(text, self._matches(text, allowed), False)

    def encode(self, str text not None, allowed):
        """``(ids, offsets, words)`` arrays of ``text`` as :meth:`ids` cuts it,
        with a fourth item ``{token index: text}`` when some tokens are
        unknown runs (their token strings, which their id does not give), or
        ``None`` if declined."""
        return self._run(text, self._matches(text, allowed), True)

    def encode_scored(self, str text not None, allowed, state=None, bint cut=True):
        """``(ids, k, c, state_at_c)``: the ids of ``text`` as the whole
        text has them where ``text`` begins, ``state`` there (``None``: the
        text's start; else as this returned it) and, with ``cut``, the place
        an appender keeps the ids before (``c`` > 0, else none): ``ids[:k]``
        are the ids of ``text[:c]`` whatever follows, and ``text[c:]``
        encodes on from ``state_at_c`` to ``ids[k:]`` and whatever follows's.
        ``None`` for a text the walk declines.

        Each pre-token's Viterbi sums double scores from its start, and a
        tie between the same pieces in another order goes by how the sum
        before them rounds: a window from inside a pre-token is encoded from
        the whole pre-token's score there. The cut is at a node's start:
        where the best paths to the places a margin before the end converge
        (:meth:`UnigramModel.converged`, the Viterbi from there checked to
        give their paths), else one no lattice node crosses, the longest
        piece and the margin before the end; not inside a run of unknown
        characters fused nor after an unknown character; where the text
        after it, walked alone from that state, has the whole text's
        normalized pieces from there and their ids (checked). A state is
        that score and whether the cut is inside a pre-token (its first
        character then gets no prepended replacement) or at its start (no
        "first" prepend either: the text's start is behind).

        >>> m = TokenizersUnigram(["<unk>", "▁a", "b", "a"], [0.0, -1.0, -1.0, -1.5], 0, False)
        >>> w = UnigramWalk(m, [], None, [], None, ("▁", "always", False), 4)
        >>> ids, k, c, state = w.encode_scored("ab" * 60, None)
        >>> ids == w.ids("ab" * 60, None), (k, c, state)
        (True, (52, 52, (-64.5, True)))
        >>> w.encode_scored(("ab" * 60)[c:], None, state, False)[0] == ids[k:]
        True
        """
        cdef int continuing = AT_START
        cdef double zero = 0.0
        cdef WalkOut w
        cdef WalkOut v
        cdef Py_ssize_t i, first
        cdef size_t tries = 0, reach = self.model.core.reach
        cdef const ScoredPlace* at
        if state is not None:
            zero, inside = state
            continuing = IN_WORD if inside else AT_WORD
        if not cut:
            return self._run(text, self._matches(text, allowed), False, continuing, zero), \
                0, 0, state
        memset(&w, 0, sizeof(WalkOut))
        memset(&v, 0, sizeof(WalkOut))
        w.offsets = w.scored = True
        w.continuing = continuing
        w.zero = zero
        w.zero_left = continuing == IN_WORD
        w.cache = piece_cache_table()
        try:
            if self._walk(text, self._matches(text, allowed), &w):
                return None
            ids = ids_list(w.ids, w.n, self.ints)
            # the place the pre-token's best paths converge on before the
            # margin, then the last places no node crosses
            i = <Py_ssize_t>w.n_places - 1
            first = self._converged_place(&w)
            while tries < SCORED_TRIES:
                if first >= 0:
                    at = &w.places[first]
                    first = -1
                elif i < 0:
                    break
                else:
                    at = &w.places[i]
                    i -= 1
                    if not _final_before(&w, i + 1) or \
                            at.at + reach + self.margin > w.normal.len or \
                            (at.at > at.piece_start and self.model.core.crossed(
                                w.normal.data + at.piece_start, at.piece_end - at.piece_start,
                                at.at - at.piece_start)):
                        continue
                tries += 1
                rest = text[at.char:]
                _out_free(&v)
                memset(&v, 0, sizeof(WalkOut))
                v.offsets = v.scored = True
                v.continuing = IN_WORD if at.at > at.piece_start else AT_WORD
                v.zero = at.score
                v.zero_left = v.continuing == IN_WORD
                v.cache = w.cache
                if not self._walk(rest, self._matches(rest, allowed), &v) and \
                        _same_from(&w, at, &v):
                    return ids, at.ids, at.char, (at.score, at.at > at.piece_start)
            return ids, 0, 0, state
        finally:
            _out_free(&w)
            _out_free(&v)

    cdef Py_ssize_t _converged_place(self, const WalkOut* w) except -2:
        # The place of encode_scored's record that the best paths of the
        # piece holding the margin's start converge on (UnigramModel.
        # converged), where the Viterbi from it has the whole piece's paths
        # at that start (UnigramModel.same_window), ids before it are final
        # (a token starts there, after no unknown character, which a run
        # of unknown ones after it would fuse with) and the text goes on
        # past it; -1: none
        cdef UnigramModel core = self.model.core
        cdef size_t q, ps = 0, pe = 0, x
        cdef Py_ssize_t i = -1
        cdef ViterbiScratch whole
        cdef SpanBuf spans = SpanBuf(NULL, 0, 0)
        if w.normal.len <= self.margin:
            return -1
        q = w.normal.len - self.margin
        for i in range(<Py_ssize_t>w.n_places - 1, -1, -1):
            if w.places[i].piece_start < q:
                ps = w.places[i].piece_start
                pe = w.places[i].piece_end
                break
        if pe <= q:
            return -1
        memset(&whole, 0, sizeof(ViterbiScratch))
        try:
            # (the piece's first place holds the score its path starts from)
            while i > 0 and w.places[i - 1].piece_start == ps:
                i -= 1
            core.viterbi_from(w.normal.data + ps, pe - ps, &spans, &whole, w.places[i].score,
                              NULL)
            x = ps + core.converged(&whole, q - ps)
            while i + 1 < <Py_ssize_t>w.n_places and w.places[i + 1].at <= x:
                i += 1
            x = w.places[i].at
            if not _final_before(w, i):
                return -1
            if not core.same_window(w.normal.data + ps, pe - ps, &whole, x - ps, q - ps,
                                    w.places[i].score):
                return -1
            return i
        finally:
            spans_free(&spans)
            viterbi_scratch_free(&whole)

    cdef object _matches(self, str text, object allowed):
        # The added-token pass's matches, or None where no token is in the
        # text: its matcher's compiled search (LiteralCut.occurs_in: code
        # holds "<" often, ALBERT's "<s>" and "</s>" seldom), then, for the
        # few texts that hold one, find_matches. The search is asked of the pass's
        # matcher once per allowed set, not a Python call a text.
        cdef LiteralCut cut = self.literals.get(allowed)
        if self.added is None:
            return None
        if cut is None:
            cut = self.literals[allowed] = self.added.matcher(False, allowed).literal
        if cut.occurs_in(text, False):
            return self.added.find_matches(text, normalized=False, allowed=allowed)
        return None

    def run(self, str text not None, list matches, bint offsets):
        """The ids of ``text`` (a list), or with ``offsets`` ``(ids, offsets,
        words)`` arrays and, when some tokens are unknown runs, a fourth item
        ``{token index: text}`` of them (tokenizers' token string for one is
        the run's normalized text, not its id's piece); ``None`` for a text
        the walk declines. ``matches``: the added-token pass's ``[(id
        or None, start, end)]``, or ``None`` when no added token occurs."""
        return self._run(text, matches, offsets)

    cdef int _stretch_of(self, str text, Py_ssize_t a, Py_ssize_t b, WalkOut* w) except -2:
        # _stretch of text[a:b], the GIL released for a long one. Ids alone:
        # the early literals (ALBERT's and XLNet's quote pairs), where they
        # occur, are str.replace's, and the charsmap reads the result (each
        # character's span, which they would change, is read for offsets
        # and the first scheme and encode_scored's text going on from a
        # state alone; walked as characters with spans they were a quarter
        # of a whole code text's walk).
        cdef int kind = PyUnicode_KIND(text), declined
        cdef const void* data = PyUnicode_DATA(text)
        cdef bint early_done = False
        cdef Source source
        cdef ByteBuf* done
        if not w.offsets and self.early_pairs is not None and w.continuing == AT_START and not (
                self.metaspace and self.prepend == PREPEND_FIRST):
            source.c = NULL
            source.kind = kind
            source.data = data
            source.a = a
            source.n = b - a
            # (idle or not, _stretch need not ask again: early_done)
            early_done = True
            if not self._early_idle(&source):
                if kind == 1 and self.early_latin1:
                    done = self._early_latin1(<const uint8_t*>data + a, <size_t>(b - a), w)
                    data = done.data
                    a = 0
                    b = <Py_ssize_t>done.len
                else:
                    text = text[a:b]
                    for pattern, rep in self.early_pairs:
                        text = text.replace(pattern, rep)
                    kind = PyUnicode_KIND(text)
                    data = PyUnicode_DATA(text)
                    a = 0
                    b = PyUnicode_GET_LENGTH(text)
        if b - a < NOGIL_CHARS:
            return self._stretch(kind, data, a, b, w, early_done)
        with nogil:
            declined = self._stretch(kind, data, a, b, w, early_done)
        return declined

    cdef ByteBuf* _early_latin1(self, const uint8_t* s, size_t n, WalkOut* w) except NULL nogil:
        # The early literals over Latin-1 text s[:n] (all Latin-1 too), one
        # stage after another as str.replace runs them (the leftmost
        # matches, not overlapping): the buffer of w holding the result.
        # A pass finds its pattern's first character with memchr (the
        # str.replace of ALBERT's two quote pairs was a tenth of a whole
        # code text's walk: code holds many single quotes).
        cdef ByteBuf* out = &w.early
        cdef ByteBuf* other = &w.early_other
        cdef ByteBuf* swap
        cdef size_t i, j, k, m, at, done
        cdef const WalkOp* op
        cdef const uint8_t* hit
        for i in range(self.n_early):
            op = &self.ops[i]
            m = op.pattern_length
            out.len = 0
            # each character of s gives at most op.length
            bytebuf_reserve(out, n * (op.length if op.length > 1 else 1) + 1)
            at = done = 0
            while at + m <= n:
                hit = <const uint8_t*>memchr(s + at, <int>op.a, n - m + 1 - at)
                if hit == NULL:
                    break
                k = <size_t>(hit - s)
                j = 1
                while j < m and s[k + j] == self.cps[op.pattern + j]:
                    j += 1
                if j < m:
                    at = k + 1
                    continue
                memcpy(out.data + out.len, s + done, k - done)
                out.len += k - done
                for j in range(op.length):
                    out.data[out.len + j] = <uint8_t>self.cps[op.at + j]
                out.len += op.length
                at = done = k + m
            memcpy(out.data + out.len, s + done, n - done)
            out.len += n - done
            s = out.data
            n = out.len
            swap = out
            out = other
            other = swap
        return other

    cdef int _walk(self, str text, list matches, WalkOut* w) except -2:
        # text's tokens into w (added tokens matched at matches, as run
        # takes them); 1: declined
        cdef Py_ssize_t start, end
        cdef int declined = 0
        if matches is None:
            return self._stretch_of(text, 0, PyUnicode_GET_LENGTH(text), w)
        for token, start, end in matches:
            if token is not None:
                _out_push(w, <uint32_t>token, <int32_t>start, <int32_t>end)
                w.word += 1
                w.zero_left = False   # the stretch after it starts a pre-token
            elif end > start:
                declined = self._stretch_of(text, start, end, w)
                if declined:
                    break
        return declined

    cdef object _run(self, str text, list matches, bint offsets, int continuing=AT_START,
                     double zero=0.0):
        # run's work, called by ids and encode without a Python call;
        # continuing and zero: encode_scored's text going on from a state
        cdef WalkOut w
        cdef bint spare = not self.spare_taken
        if spare:
            # taken and given back with the GIL held
            self.spare_taken = True
            w = self.spare
            if offsets and w.offs == NULL:
                w.cap = 0
        else:
            memset(&w, 0, sizeof(WalkOut))
        w.offsets = offsets
        w.continuing = continuing
        w.zero = zero
        w.zero_left = continuing == IN_WORD
        w.scored = False
        w.cache = piece_cache_table()
        try:
            if self._walk(text, matches, &w):
                return None
            if not offsets:
                return ids_list(w.ids, w.n, self.ints)
            return _found(&w, 0, w.n, 0, w.unknown_at.len)
        finally:
            if spare and w.x.cap <= SPARE_CHARS and w.y.cap <= SPARE_CHARS:
                _out_clear(&w)
                self.spare = w
            else:
                _out_free(&w)
                if spare:
                    memset(&self.spare, 0, sizeof(WalkOut))
            if spare:
                self.spare_taken = False


    def encode_offsets_many(self, list texts not None, allowed):
        """:meth:`encode` of each text: the texts no added token occurs in
        walked one after another with the GIL released once for all, the
        others as :meth:`encode` walks them.

        >>> m = TokenizersUnigram(["<unk>", "▁a", "b", "▁"], [0.0, -1.0, -1.0, -2.0], 0, False)
        >>> w = UnigramWalk(m, [], None, [], None, ("▁", "always", True), 4)
        >>> [list(found[1]) for found in w.encode_offsets_many(["a", "ab"], None)]
        [[0, 1], [0, 1, 1, 2]]
        """
        cdef Py_ssize_t count = len(texts), i
        cdef list matches = [None] * count
        cdef list out = [None] * count
        # each text's str (kind, data, length) and, once walked, where its
        # tokens and its unknown runs' notes end in w (SIZE_MAX: declined)
        cdef Source* sources = <Source*>malloc((count + 1) * sizeof(Source))
        cdef size_t* ends = <size_t*>malloc((2 * count + 1) * sizeof(size_t))
        cdef size_t a = 0, u = 0, n, unknowns, unknown_bytes
        cdef WalkOut w
        memset(&w, 0, sizeof(WalkOut))
        w.offsets = True
        try:
            if sources == NULL or ends == NULL:
                raise MemoryError()
            for i in range(count):
                text = texts[i]
                matches[i] = self._matches(<str?>text, allowed)
                sources[i].kind = PyUnicode_KIND(text)
                sources[i].data = PyUnicode_DATA(text)
                sources[i].n = PyUnicode_GET_LENGTH(text) if matches[i] is None else -1
            w.cache = piece_cache_table()
            with nogil:
                for i in range(count):
                    if sources[i].n < 0:
                        continue
                    n, unknowns, unknown_bytes = w.n, w.unknown_at.len, w.unknown.len
                    w.word = 0
                    if self._stretch(sources[i].kind, sources[i].data, 0, sources[i].n, &w,
                                     False):
                        w.n, w.unknown_at.len, w.unknown.len = n, unknowns, unknown_bytes
                        ends[2 * i] = SIZE_MAX
                    else:
                        ends[2 * i] = w.n
                        ends[2 * i + 1] = w.unknown_at.len
            for i in range(count):
                if sources[i].n < 0:
                    out[i] = self._run(texts[i], matches[i], True)
                elif ends[2 * i] != SIZE_MAX:
                    out[i] = _found(&w, a, ends[2 * i], u, ends[2 * i + 1])
                    a, u = ends[2 * i], ends[2 * i + 1]
            return out
        finally:
            free(sources)
            free(ends)
            _out_free(&w)


cdef inline bint _final_before(const WalkOut* w, Py_ssize_t i) noexcept nogil:
    # Whether the ids before place i of w's record are final where the path
    # goes through it: a token starts there (not inside a run of unknown
    # characters fused), past the text's start, and not after an unknown
    # character (the path from it may yet start with one, which fuses)
    cdef const ScoredPlace* at = &w.places[i]
    return at.ids != SIZE_MAX and at.char > 0 and not (
        at.at > at.piece_start and w.places[i - 1].unknown)


cdef bint _same_from(const WalkOut* w, const ScoredPlace* at, const WalkOut* v) noexcept nogil:
    # Whether v (the text from at, walked alone from its state) has w's
    # last stretch from at: its normalized bytes, its pieces' ends and its
    # ids from at's on
    cdef size_t j = 0, i
    cdef size_t n = w.normal.len - at.at
    if v.normal.len != n or memcmp(v.normal.data, w.normal.data + at.at, n) or \
            v.n != w.n - at.ids or memcmp(v.ids, w.ids + at.ids, v.n * sizeof(uint32_t)):
        return False
    while j < w.piece_ends.len and w.piece_ends.data[j] <= at.at:
        j += 1
    if v.piece_ends.len != w.piece_ends.len - j:
        return False
    for i in range(v.piece_ends.len):
        if v.piece_ends.data[i] != w.piece_ends.data[j + i] - at.at:
            return False
    return True


cdef object _found(const WalkOut* w, size_t a, size_t b, size_t u, size_t v):
    # encode's arrays of w's tokens a..b-1, and {token index: text} of the
    # unknown runs noted in w.unknown_at[u:v] when there are some
    cdef size_t n = b - a, k, at
    cdef carray.array ids = carray.clone(_IDS, <Py_ssize_t>n, False)
    cdef carray.array offs = carray.clone(_INTS, <Py_ssize_t>(2 * n), False)
    cdef carray.array words = carray.clone(_INTS, <Py_ssize_t>n, False)
    cdef dict texts
    if n:
        memcpy(ids.data.as_voidptr, w.ids + a, n * sizeof(uint32_t))
        memcpy(offs.data.as_voidptr, w.offs + 2 * a, 2 * n * sizeof(int32_t))
        memcpy(words.data.as_voidptr, w.words + a, n * sizeof(int32_t))
    if u == v:
        return ids, offs, words
    texts = {}
    at = w.unknown_at.data[u - 1] if u else 0
    for k in range(u, v, 2):
        texts[w.unknown_at.data[k] - a] = \
            (<bytes>w.unknown.data[at:w.unknown_at.data[k + 1]]).decode("utf-8")
        at = w.unknown_at.data[k + 1]
    return ids, offs, words, texts


cdef enum:
    # the longest text (in normalized characters) whose buffers a walk keeps
    SPARE_CHARS = 1 << 20
    # a shorter text is walked with the GIL held: giving it up and taking it
    # back costs more than its walk gives other threads
    NOGIL_CHARS = 256



cdef int _put_code_points(uint32_t** data, size_t* n, size_t* cap, text) except -1:
    # text's code points appended to data[0][:n[0]] (capacity cap[0])
    cdef Py_ssize_t i, length
    cdef int kind
    cdef const void* chars
    if type(text) is not str:
        raise TypeError(f"expected str, not {type(text).__name__}")
    length = PyUnicode_GET_LENGTH(text)
    grow_array(<void**>data, cap, n[0] + length, sizeof(uint32_t), 64)
    kind = PyUnicode_KIND(text)
    chars = PyUnicode_DATA(text)
    for i in range(length):
        data[0][n[0] + i] = PyUnicode_READ(kind, chars, i)
    n[0] += length
    return 0


cdef bint _inside(TokenizersUnigram model, const uint8_t* rep, size_t n_rep):
    # whether a piece holds the replacement (its UTF-8 rep) past its start
    # (then a node can cross one, and the walk cuts no segments at them).
    # Both are valid UTF-8, so a match of the bytes past a piece's first byte
    # is one past its first character: the packed pieces are searched as
    # they are, with no str made for each
    cdef PackedTexts packed
    cdef const uint8_t* p
    cdef const uint8_t* end
    cdef Py_ssize_t i
    if type(model.texts) is not PackedPieces:
        replacement = rep[:n_rep].decode("utf-8")
        return any(replacement in piece[1:] for piece in model.piece_list())
    packed = <PackedTexts>model.texts
    for i in range(packed.n):
        p = packed.data + packed.offsets[i] + 1
        end = packed.data + packed.offsets[i + 1]
        while p + n_rep <= end:
            p = <const uint8_t*>memchr(p, rep[0], end - p)
            if p == NULL or p + n_rep > end:
                break
            if memcmp(p, rep, n_rep) == 0:
                return True
            p += 1
    return False


_OP_KINDS = {"squeeze": OP_SQUEEZE, "trim": OP_TRIM, "lead": OP_LEAD,
             "literal": OP_LITERAL}
cdef carray.array _IDS = carray.array("I")
cdef carray.array _INTS = carray.array("i")


# ---------------------------------------------------------------- tokenizer.json scores

cdef extern from "Python.h":
    char* PyOS_double_to_string(double val, char format_code, int precision, int flags,
                                int* type) except NULL
    void PyMem_Free(void* p)
    int Py_DTSF_ADD_DOT_0

# float(10 ** k) for k in 0..308: the powers serde_json scales a significand by
cdef extern from "ft_pow10.h" nogil:
    const double ft_pow10[309]


cdef inline bint _u64_full(uint64_t significand, uint64_t digit) noexcept nogil:
    # whether significand * 10 + digit overflows a u64 (serde_json's overflow!)
    cdef uint64_t top = <uint64_t>-1
    return significand >= top // 10 and (significand > top // 10 or digit > top % 10)


cdef int _serde_text(const uint8_t* p, size_t n, double* out) noexcept nogil:
    # tokenizers' f64 of the JSON number p[:n] (valid JSON), as serde_json
    # without float_roundtrip reads it (its parse_integer, parse_long_integer,
    # parse_decimal(_overflow), parse_exponent(_overflow), f64_from_parts):
    # the digits that fit a u64 (an integer part's later digits only move
    # the point, a fraction's are dropped), made a double and scaled by one
    # power of ten from the table, a step off the nearest double for a fifth
    # of the shared files' scores (fasttok.models.hf_fields.serde_f64 in
    # Python); 1 when serde finds it out of range
    cdef size_t i = 0
    cdef bint negative = False, full = False, exp_negative = False
    cdef uint64_t significand = 0, digit
    cdef int64_t exponent = 0, e = 0
    cdef double f
    if i < n and p[i] == c'-':
        negative = True
        i += 1
    while i < n and c'0' <= p[i] <= c'9':
        digit = p[i] - c'0'
        if full or _u64_full(significand, digit):
            full = True
            exponent += 1
        else:
            significand = significand * 10 + digit
        i += 1
    if i < n and p[i] == c'.':
        i += 1
        while i < n and c'0' <= p[i] <= c'9':
            digit = p[i] - c'0'
            if _u64_full(significand, digit):
                break  # parse_decimal_overflow: the rest is dropped
            significand = significand * 10 + digit
            exponent -= 1
            i += 1
        while i < n and c'0' <= p[i] <= c'9':
            i += 1
    if i < n and (p[i] == c'e' or p[i] == c'E'):
        i += 1
        if i < n and (p[i] == c'+' or p[i] == c'-'):
            exp_negative = p[i] == c'-'
            i += 1
        while i < n and c'0' <= p[i] <= c'9':
            e = e * 10 + (p[i] - c'0')
            if e > 0x7FFFFFFF:
                # parse_exponent_overflow: zero, or out of range
                if significand != 0 and not exp_negative:
                    return 1
                out[0] = -0.0 if negative else 0.0
                return 0
            i += 1
        exponent = exponent - e if exp_negative else exponent + e
        # i32's saturating add
        exponent = max(-0x80000000, min(exponent, 0x7FFFFFFF))
    f = <double>significand
    while True:
        if -308 <= exponent <= 308:
            if exponent >= 0:
                f *= ft_pow10[exponent]
                if f == INFINITY:
                    return 1
            else:
                f /= ft_pow10[-exponent]
            break
        if f == 0.0:
            break
        if exponent >= 0:
            return 1
        f /= 1e308
        exponent += 308
    out[0] = -f if negative else f
    return 0


cdef int _serde_number(object value, double* out) except -1:
    # _serde_text of the number json made of a file's JSON number (an int,
    # or a finite float, which is read as its shortest spelling: tokenizers
    # writes that one; repr's ".0" included, as serde counts that digit)
    cdef char* text
    cdef bytes spelled
    if type(value) is int:
        spelled = str(value).encode()
        return _serde_text(<const uint8_t*>PyBytes_AS_STRING(spelled), len(spelled), out)
    text = PyOS_double_to_string(<double>value, c'r', 0, Py_DTSF_ADD_DOT_0, NULL)
    try:
        return _serde_text(<const uint8_t*>text, strlen(text), out)
    finally:
        PyMem_Free(text)


def tokenizers_scores(vocab not None):
    """The scores of a ``tokenizer.json`` Unigram ``vocab`` (the list
    ``[[piece, score], ...]``, or the reader's packed
    :class:`~fasttok.shared._json_reader.PackedPieces`) read into f64 as
    tokenizers reads them (:func:`fasttok.models.hf_fields.serde_f64`, in
    C), an ``array('d')``; or the index of the first entry that is not a
    ``[string, number]`` pair or whose number is past a double, which the
    caller explains.

    >>> tokenizers_scores([["a", -3.2940776348114014], ["b", 2]])
    array('d', [-3.294077634811402, 2.0])
    >>> tokenizers_scores([["a", 1.0], ["b", "x"]])
    1
    """
    cdef Py_ssize_t i, n = len(vocab)
    cdef carray.array scores = carray.clone(carray.array("d"), n, False)
    cdef double* out = scores.data.as_doubles
    cdef PackedPieces packed
    cdef int failed = 0
    if type(vocab) is PackedPieces:
        packed = vocab
        with nogil:
            for i in range(n):
                if _serde_text(packed.numbers + packed.number_offsets[i],
                               packed.number_offsets[i + 1] - packed.number_offsets[i], &out[i]):
                    failed = 1
                    break
        return i if failed else scores
    for i in range(n):
        entry = vocab[i]
        if type(entry) is not list or len(<list>entry) != 2 or type((<list>entry)[0]) is not str:
            return i
        value = (<list>entry)[1]
        # a float past a double is json's reading of a number serde refuses
        if not (type(value) is int or (type(value) is float and isfinite(<double>value))) \
                or _serde_number(value, &out[i]):
            return i
    return scores
