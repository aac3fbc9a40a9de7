"""Byte-pair merging of one pre-tokenized piece.

Semantics (tiktoken's, and llama.cpp's for merge lists): start from one part
per byte, repeatedly merge the adjacent pair with the lowest priority, the
leftmost one on ties, until no adjacent pair merges. Priorities come from
:mod:`fasttok.shared._tables` (token rank, merge-list order or piece score).

Two implementations of the same rule, picked by piece length:

* short pieces (the vast majority: words, numbers) use a linear scan over a
  small on-stack array of parts, as tiktoken does: O(n^2) in theory but
  cache-friendly and branch-light for n below ``LINEAR_MAX``;
* long pieces use a priority queue keyed by ``priority << 32 | position``
  over a doubly linked list of parts, with lazy invalidation: a popped entry
  is used only if its left part is alive and the pair now there still has
  the entry's priority. The queue is a few sorted runs (one per priority,
  which is how a run of one character pushes its pairs) in front of a radix
  heap and a 4-ary heap, so the worst case stays O(n log n).

A long piece (a megabyte of random letters, of "=", of CJK) first gets cheaper:

* it is cut where no token can span two neighbouring bytes (``_crossable``:
  no token holds the two, none starts or ends with them and none holds the
  four bytes around them): no merge can cross such a point, so each side is
  an independent piece. (Short pieces are cut the same way, a character at
  a time: a Chinese piece falls apart into single characters, and a
  character between two cuts is a read of ``char_ids``, the encoding of
  its bytes on their own.) Random letters, CJK and byte soup fall apart into spans
  of a few bytes (1 MB of random letters: 8x the time of 1 MB of English
  through the queue, 2.5x cut);
* a span that is still long is encoded a 4 KB chunk at a time, and two
  chunks' encodings are joined only where the tokens on either side of the
  seam encode to themselves when put together (``_joins``), which proves no
  merge would have crossed the seam; where they do not, the seam moves. A
  chunk equal to the one before reuses its ids, so a run of one character
  costs a memcmp per chunk (1 MB of "=": 5x English through the queue, 0.5x
  chunked). The merge queue then only sees chunks that fit in cache.

Measured, not built: the backtracking encoder of github/rust-gems ``bpe``
(linear, exact; an automaton over all token strings, built at load). Two
peers ship it (bpe-openai is that crate, rs-bpe a port) and bench/ times
them beside fasttok: on whole corpus files rs-bpe took 1.6-3.1x fasttok's
time, and bpe-openai refuses inputs that long; on lines both are slower too.
The cuts and chunks above bring every adversarial input under 3x English
without an automaton (``_joins`` is the same pair-compatibility idea, used
only at chunk seams).

Lookups, not merges, are the cost on CJK text: o200k_base's token index is
4 MB, and 95% of the pair lookups that miss the memo ask for bytes that are
no token. A bit per token hash in front of the index (``token_filter`` in
_tables) answers those from 256 KB, which takes a fifth off zh.txt. Tried and left: a
memo of 8-byte entries (twice the pairs in the same memory, no gain); memos
of 256 KB to 8 MB (1 MB is best by a little).

Merge lists (tokenizer.json, GGUF) were 0.40x quicktok-v1 on zh.txt through
Llama 3 where cl100k_base by rank was 1.5x: the whole-character start was
rank-only, and every pair lookup probed Llama 3's 16 MB pair table. With
the characters found from each token's first merge and a bit per merge in
front of the pair table (``PairIndex.filter``), the same text runs at
1.4x quicktok (7.6 -> 20.7 MB/s).

``whole_piece_lookup`` reproduces tiktoken's shortcut: a piece that is itself
a token is emitted as that token without merging (llama.cpp's
``ignore_merges`` is the same idea). Without it, a piece that is a token is
merged once, and whether that gave the token back is kept per token
(``merges_to_self``): Qwen's ``the`` is then one lookup too (a 45-character
line through qwen2: 2.0 -> 0.44 us).
"""

from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memcpy, memmove, memset

from fasttok.shared._growth cimport grow_array
from fasttok.shared._tables cimport CHAR_COUNT_SHIFT, CHAR_ID_BITS, NO_PAIR, NO_TOKEN, SELF_NO, SELF_UNKNOWN, \
    SELF_YES, ByteStrings, TokenTablesView, _head, find_token, ft_load_byte, ft_load_word, ft_store_byte, \
    ft_store_word, pair_value, prefetch, window_bit


cdef enum:
    # Pieces of more bytes than this go to the heap. On cl100k runs of one
    # letter the two cost the same at ~200 bytes and the heap is 3x faster at 2k.
    LINEAR_MAX = 48


cdef extern from "ft_thread_cache.h" nogil:
    int FT_SLOT_MERGE
    void* ft_slot_take(int which, size_t size, size_t keep, int* owned)
    void* ft_memo_for(unsigned long long tag, size_t size, int* owned)
    void* ft_memo_if_ready(unsigned long long tag, size_t size)


cdef enum:
    MEMO_BITS = 16
    STRETCH_BITS = 14
    MERGE_KEEP = 32 << 20  # bytes of long-piece scratch a thread may keep


cdef int ids_reserve(IdBuffer* buf, size_t extra) except -1 nogil:
    return grow_array(<void**>&buf.data, &buf.cap, buf.len + extra, sizeof(uint32_t), 64)


cdef inline int ids_extend(IdBuffer* buf, const uint32_t* ids, size_t m) except -1 nogil:
    # buf += ids[:m], grown only when full (the call, with nothing to grow,
    # was 50 instructions a piece)
    if buf.len + m > buf.cap:
        ids_reserve(buf, m)
    memcpy(buf.data + buf.len, ids, m * sizeof(uint32_t))
    buf.len += m
    return 0


cdef int ids_push(IdBuffer* buf, uint32_t token) except -1 nogil:
    if buf.len == buf.cap:
        ids_reserve(buf, 1)
    buf.data[buf.len] = token
    buf.len += 1
    return 0


cdef void ids_free(IdBuffer* buf) noexcept nogil:
    free(buf.data)
    buf.data = NULL
    buf.len = 0
    buf.cap = 0


cdef inline size_t _memo_size() noexcept nogil:
    return (<size_t>1 << MEMO_BITS) * sizeof(MemoEntry) + (<size_t>1 << STRETCH_BITS) * sizeof(StretchEntry)


cdef int pair_memo_init(PairMemo* memo, const TokenTablesView* tables) except -1 nogil:
    cdef int owned
    memo.shift = 64 - MEMO_BITS
    memo.entries = <MemoEntry*>ft_memo_for(tables.generation, _memo_size(), &owned)
    memo.owned = owned
    if memo.entries == NULL:
        with gil:
            raise MemoryError()
    memo.stretches = <StretchEntry*>(memo.entries + (<size_t>1 << MEMO_BITS))
    return 0


cdef bint pair_memo_if_ready(PairMemo* memo, const TokenTablesView* tables) noexcept nogil:
    # pair_memo_init when the thread's memo needs no clearing for these
    # tables (then True), else memo.entries is NULL
    memo.shift = 64 - MEMO_BITS
    memo.owned = 0
    memo.entries = <MemoEntry*>ft_memo_if_ready(tables.generation, _memo_size())
    if memo.entries == NULL:
        return False
    memo.stretches = <StretchEntry*>(memo.entries + (<size_t>1 << MEMO_BITS))
    return True


cdef void pair_memo_release(PairMemo* memo) noexcept nogil:
    if memo.owned:
        free(memo.entries)
    memo.entries = NULL


cdef inline MemoEntry* _memo_slot(const PairMemo* memo, uint64_t key1) noexcept nogil:
    return &memo.entries[(key1 * 0x9E3779B97F4A7C15ULL) >> memo.shift]


cdef inline void _memo_prefetch(const PairMemo* memo, uint32_t left, uint32_t right) noexcept nogil:
    # Asks the memory for the memo slot _value will read for the pair: the
    # memo is about the L2 cache's size, so a slot is mostly a miss, and the
    # misses of a merge's two new pairs (or of a piece's first pairs) then
    # overlap instead of coming one after the other.
    if memo != NULL and memo.entries != NULL:
        prefetch(_memo_slot(memo, ((<uint64_t>left << 32) | right) + 1))


cdef inline uint64_t _value(const TokenTablesView* t, const uint8_t* piece, size_t start,
                            size_t end, uint32_t left, uint32_t right, PairMemo* memo) noexcept nogil:
    # pair_value through the call's memo, when there is one.
    cdef uint64_t key1
    cdef MemoEntry* e
    if memo == NULL or memo.entries == NULL or left == NO_TOKEN or right == NO_TOKEN:
        # a part that is no token yet is known by its bytes, not its id
        return pair_value(t, piece, start, end, left, right)
    key1 = ((<uint64_t>left << 32) | right) + 1
    e = _memo_slot(memo, key1)
    if e.key1 != key1:
        e.key1 = key1
        e.value = pair_value(t, piece, start, end, left, right)
    return e.value


cdef size_t _merge_linear(const TokenTablesView* t, const uint8_t* piece, uint32_t* start,
                          uint32_t* ids, uint64_t* vals, size_t m, PairMemo* memo) noexcept nogil:
    # start[0..m], ids[0..m-1] and vals[0..m-2] (the value of each adjacent
    # pair) describe m <= LINEAR_MAX parts; merges in place and returns the
    # new count. A part merged into its left neighbour stays where it is,
    # unlinked, with the value NO_PAIR, so the scan never picks it and a
    # merge moves nothing (three memmove calls a merge cost more than the
    # scan passing over the dead parts); the parts are packed once at the end.
    cdef uint8_t nxt[LINEAR_MAX]
    cdef uint8_t prv[LINEAR_MAX]
    cdef size_t i, j, k, p, count
    cdef uint64_t best, v
    if m < 2:
        return m
    for i in range(m):
        nxt[i] = <uint8_t>(i + 1)
        prv[i] = <uint8_t>(i - 1)  # part 0's (0xFF) is never read
    count = m
    while count > 1:
        # The lowest priority, the leftmost pair on ties: the lowest of the
        # keys priority << 32 | place, kept with no branch (a conditional
        # move), where a branch on each new lowest mispredicted about twice
        # a scan (callgrind's branch simulation: 16 a merged piece of en).
        # A pair of NO_PAIR's priority never merges.
        best = NO_PAIR
        for i in range(m - 1):
            v = (vals[i] & 0xFFFFFFFF00000000ULL) | i
            best = v if v < best else best
        if best >= 0xFFFFFFFF00000000ULL:
            break
        i = best & 0xFFFFFFFFULL
        j = nxt[i]
        k = nxt[j]
        ids[i] = <uint32_t>(vals[i] & 0xFFFFFFFFULL)
        vals[j] = NO_PAIR
        count -= 1
        if k < m:
            _memo_prefetch(memo, ids[i], ids[k])
        if i > 0:
            _memo_prefetch(memo, ids[prv[i]], ids[i])
        nxt[i] = <uint8_t>k
        if k < m:
            prv[k] = <uint8_t>i
            vals[i] = _value(t, piece, start[i], start[nxt[k]], ids[i], ids[k], memo)
        else:
            vals[i] = NO_PAIR
        if i > 0:
            p = prv[i]
            vals[p] = _value(t, piece, start[p], start[k], ids[p], ids[i], memo)
    if count < m:
        j = 0
        i = 0
        while i < m:
            start[j] = start[i]
            ids[j] = ids[i]
            j += 1
            i = nxt[i]
        start[j] = start[m]
    return count


cdef enum:
    RUNS = 8


cdef struct Run:
    # Keys of one priority pushed in increasing order: a FIFO.
    uint64_t priority  # the keys' high half
    uint64_t* keys
    size_t head
    size_t tail
    size_t cap


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define FT_CLZ64(x) __builtin_clzll(x)
    #else
    static int FT_CLZ64(unsigned long long x) { int n = 0; while (!(x >> 63)) { x <<= 1; n++; } return n; }
    #endif
    """
    int FT_CLZ64(uint64_t x) nogil


cdef struct Radix:
    # A radix heap (a monotone priority queue): a key goes to the bucket of
    # the highest bit in which it differs from the last key taken, so a push
    # is an append and a key moves down a few buckets over its life. It
    # needs every key pushed to be at least the last one taken, which BPE
    # gives when a merge only forms pairs of larger priority than its own
    # (true of vocabularies trained by BPE); a key that breaks this goes to
    # the heap instead, so the queue stays exact for any vocabulary.
    uint64_t last
    uint64_t* keys[65]
    size_t len[65]
    size_t cap[65]
    size_t size
    uint64_t nonempty  # bit b set when bucket b may hold keys


cdef inline int _radix_bucket(uint64_t key, uint64_t last) noexcept nogil:
    return 0 if key == last else 64 - FT_CLZ64(key ^ last)


cdef int _radix_push(Radix* r, uint64_t key) except -1 nogil:
    cdef int b = _radix_bucket(key, r.last)
    if r.len[b] == r.cap[b]:
        _radix_grow(r, b)
    r.keys[b][r.len[b]] = key
    r.len[b] += 1
    r.size += 1
    if b:
        r.nonempty |= 1ULL << (b - 1)
    return 0


cdef bint _radix_peek(Radix* r, uint64_t* key) except -1 nogil:
    # The smallest key, made the bucket-0 key; False when empty.
    cdef int b = 0, nb
    cdef size_t i, n
    cdef uint64_t low, k
    if r.len[0]:
        key[0] = r.last
        return True
    if r.size == 0:
        return False
    b = 0
    while True:
        # the lowest bucket marked non-empty (marks can be stale: clear them)
        b = 64 - FT_CLZ64(r.nonempty & (~r.nonempty + 1))
        if r.len[b]:
            break
        r.nonempty &= ~(1ULL << (b - 1))
    r.nonempty &= ~(1ULL << (b - 1))
    n = r.len[b]
    low = r.keys[b][0]
    for i in range(1, n):
        if r.keys[b][i] < low:
            low = r.keys[b][i]
    r.last = low
    r.len[b] = 0
    for i in range(n):
        k = r.keys[b][i]
        nb = _radix_bucket(k, low)
        if r.len[nb] == r.cap[nb]:
            _radix_grow(r, nb)
        r.keys[nb][r.len[nb]] = k
        r.len[nb] += 1
        if nb:
            r.nonempty |= 1ULL << (nb - 1)
    key[0] = low
    return True


cdef int _radix_grow(Radix* r, int b) except -1 nogil:
    return grow_array(<void**>&r.keys[b], &r.cap[b], r.len[b] + 1, sizeof(uint64_t), 64)


cdef struct MergeQueue:
    # The merge queue of a long piece: up to RUNS sorted runs, one per
    # priority, in front of a radix heap, with a 4-ary heap for the keys the
    # radix heap cannot take. A long run of one character (a megabyte of
    # "a", of spaces, of newlines) pushes each priority's pairs left to
    # right, so nearly every key goes to a run and comes back from its front
    # in order, touching memory sequentially. Other long pieces go to the
    # radix heap. (Byte-level pieces reach this queue in chunks of at most
    # 6 KB; SentencePiece BPE pieces, whose parts are characters, whole.)
    Run runs[RUNS]
    int n_runs
    Radix radix
    KeyHeap heap


cdef inline int _other_push(MergeQueue* q, uint64_t key) except -1 nogil:
    if key >= q.radix.last:
        return _radix_push(&q.radix, key)
    return heap_push(&q.heap, key, 0)


cdef int _queue_push(MergeQueue* q, uint64_t key) except -1 nogil:
    cdef uint64_t priority = key & 0xFFFFFFFF00000000ULL
    cdef Run* r
    cdef Run* free_run = NULL
    cdef int k
    for k in range(q.n_runs):
        r = &q.runs[k]
        if r.priority == priority and r.head < r.tail:
            if r.keys[r.tail - 1] < key:
                break
            return _other_push(q, key)
        if r.head == r.tail and free_run == NULL:
            free_run = r
    else:
        if free_run != NULL:
            r = free_run
        elif q.n_runs < RUNS:
            r = &q.runs[q.n_runs]
            q.n_runs += 1
        else:
            return _other_push(q, key)
        r.priority = priority
        r.head = 0
        r.tail = 0
    if r.tail == r.cap and r.head >= r.cap // 2:
        # reuse the consumed front rather than grow: memory stays near the
        # number of live keys
        memmove(r.keys, r.keys + r.head, (r.tail - r.head) * sizeof(uint64_t))
        r.tail -= r.head
        r.head = 0
    if r.tail == r.cap:
        grow_array(<void**>&r.keys, &r.cap, r.tail + 1, sizeof(uint64_t), 256)
    r.keys[r.tail] = key
    r.tail += 1
    return 0


cdef inline bint _queue_pop(MergeQueue* q, uint64_t* key) except -1 nogil:
    cdef uint64_t best = 0xFFFFFFFFFFFFFFFFULL, radix_min
    cdef int k, src = -1  # -1 none, -2 heap, -3 radix, else a run
    cdef Run* r
    if q.heap.size:
        best = q.heap.items[0]
        src = -2
    if _radix_peek(&q.radix, &radix_min) and radix_min < best:
        best = radix_min
        src = -3
    for k in range(q.n_runs):
        r = &q.runs[k]
        if r.head < r.tail and r.keys[r.head] < best:
            best = r.keys[r.head]
            src = k
    if src == -1:
        return False
    key[0] = best
    if src >= 0:
        q.runs[src].head += 1
    elif src == -2:
        heap_pop(&q.heap)
    else:
        q.radix.len[0] -= 1
        q.radix.size -= 1
    return True


cdef void _queue_free(MergeQueue* q) noexcept nogil:
    cdef int k
    for k in range(RUNS):
        free(q.runs[k].keys)
    for k in range(65):
        free(q.radix.keys[k])
    free(q.heap.items)


cdef struct Node:
    # One part of a long piece, named by its first byte: the next and the
    # previous live part (a merged-away part has nxt pointing at itself) and
    # the token it now is. Kept together because a merge visits them
    # together: three separate arrays cost three cache misses per visit,
    # and on a megabyte of random letters, whose merges jump all over the
    # piece, that was half the time.
    uint32_t nxt
    uint32_t prv
    uint32_t id


cdef inline int _push_pair(const TokenTablesView* t, const uint8_t* piece, MergeQueue* queue,
                           const Node* nodes, uint32_t left, size_t n,
                           PairMemo* memo) except -1 nogil:
    cdef uint32_t right = nodes[left].nxt
    cdef uint64_t v
    if right >= n:
        return 0
    v = _value(t, piece, left, nodes[right].nxt, nodes[left].id, nodes[right].id, memo)
    if v == NO_PAIR:
        return 0
    return _queue_push(queue, (v & 0xFFFFFFFF00000000ULL) | left)


cdef size_t _merge_heap(const TokenTablesView* t, const uint8_t* piece, size_t n,
                        uint32_t* starts, uint32_t* parts, size_t m, PairMemo* memo) except? 0 nogil:
    # Same contract as _merge_linear; the parts are Nodes.
    #
    # Queue entries are bare keys. A popped key is acted on only if its part
    # is alive and the pair now starting there has the key's priority: then
    # that pair is a current candidate with the smallest key, which is
    # exactly the merge to make next; anything else is stale. (Storing the
    # ids an entry was made for, as tiktoken does, needed 20 bytes an entry
    # instead of 8, and the extra memory traffic showed on long inputs.)
    cdef int owned
    cdef Node* nodes = <Node*>ft_slot_take(FT_SLOT_MERGE, (n + 1) * sizeof(Node), MERGE_KEEP, &owned)
    cdef MergeQueue queue
    cdef size_t i
    cdef uint32_t left, right, after
    cdef uint64_t key, v
    memset(&queue, 0, sizeof(MergeQueue))
    try:
        if nodes == NULL:
            with gil:
                raise MemoryError()
        for i in range(m):
            nodes[starts[i]].nxt = starts[i + 1]
            nodes[starts[i]].prv = starts[i - 1] if i else NO_TOKEN
            nodes[starts[i]].id = parts[i]
        for i in range(m - 1):
            _push_pair(t, piece, &queue, nodes, starts[i], n, memo)
        while _queue_pop(&queue, &key):
            left = <uint32_t>(key & 0xFFFFFFFFULL)
            right = nodes[left].nxt
            if right <= left or right >= n:
                continue  # merged away, or now the last part
            after = nodes[right].nxt
            v = _value(t, piece, left, after, nodes[left].id, nodes[right].id, memo)
            if (v ^ key) >> 32:
                continue  # stale: the pair here has changed since
            nodes[left].id = <uint32_t>(v & 0xFFFFFFFFULL)
            nodes[left].nxt = after
            nodes[right].nxt = right
            if after < n:
                nodes[after].prv = left
            if nodes[left].prv != NO_TOKEN:
                _push_pair(t, piece, &queue, nodes, nodes[left].prv, n, memo)
            _push_pair(t, piece, &queue, nodes, left, n, memo)
        m = 0
        left = 0
        while left < n:
            starts[m] = left
            parts[m] = nodes[left].id
            m += 1
            left = nodes[left].nxt
        starts[m] = <uint32_t>n
    finally:
        if owned:
            free(nodes)
        _queue_free(&queue)
    return m


cdef size_t bpe_merge_parts(const TokenTablesView* tables, const uint8_t* piece, size_t n,
                            uint32_t* starts, uint32_t* ids, size_t m, PairMemo* memo) except? 0 nogil:
    cdef uint64_t vals[LINEAR_MAX]
    if m < 2:
        return m
    if m > LINEAR_MAX:
        return _merge_heap(tables, piece, n, starts, ids, m, memo)
    _first_values(tables, piece, starts, ids, vals, m, memo)
    return _merge_linear(tables, piece, starts, ids, vals, m, memo)


cdef inline void _first_values(const TokenTablesView* t, const uint8_t* piece, const uint32_t* starts,
                               const uint32_t* ids, uint64_t* vals, size_t m, PairMemo* memo) noexcept nogil:
    # vals[0..m-2]: the value of each two adjacent parts of m >= 2. The memo
    # slots are asked for first, so that their misses overlap.
    cdef size_t i
    for i in range(m - 1):
        _memo_prefetch(memo, ids[i], ids[i + 1])
    for i in range(m - 1):
        vals[i] = _value(t, piece, starts[i], starts[i + 2], ids[i], ids[i + 1], memo)


cdef inline bint _crossable(const TokenTablesView* t, const uint8_t* piece, size_t n,
                            size_t p) noexcept nogil:
    # Whether some token may span piece[p - 1] and piece[p] (0 < p < n).
    # When none does, no merge ever crosses p, and BPE of the piece is BPE
    # of each side on its own (see token_edges). Only for tables whose
    # tokens are their merges spelled out (byte-level BPE).
    cdef uint32_t pair = (<uint32_t>piece[p - 1] << 8) | piece[p]
    cdef uint64_t bit
    if not (t.token_bigrams[pair >> 3] >> (pair & 7)) & 1:
        return False
    if (t.token_edges[pair >> 3] >> (pair & 7)) & 1 or p < 2 or p + 2 > n:
        return True
    bit = window_bit(piece + p - 2, t.windows_mask)
    return (t.token_windows[bit >> 6] >> (bit & 63)) & 1


cdef inline uint32_t _atomic_char(const TokenTablesView* t, const uint8_t* piece, size_t i,
                                  size_t n, size_t* width) noexcept nogil:
    # The token of the character at piece[i] if it is atomic where it
    # stands (a canonical 2- or 3-byte sequence between bytes of the right
    # classes), else NO_TOKEN. The character's token is read before its
    # contexts: a character that is no token needs no more.
    cdef const uint8_t* p = piece + i
    cdef uint8_t b = p[0], before, after
    cdef uint32_t cp, tid
    cdef size_t w
    cdef int lc, rc
    if b >= 0xE0:
        if b >= 0xF0 or n - i < 3 or (p[1] & 0xC0) != 0x80 or (p[2] & 0xC0) != 0x80 \
                or (b == 0xE0 and p[1] < 0xA0):
            return NO_TOKEN
        w = 3
        cp = ((b & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F)
    else:
        if n - i < 2 or (p[1] & 0xC0) != 0x80:  # (b >= 0xC2: the caller's test)
            return NO_TOKEN
        w = 2
        cp = ((b & 0x1F) << 6) | (p[1] & 0x3F)
    tid = t.atomic_chars[cp]
    if tid == NO_TOKEN:
        return NO_TOKEN
    if i == 0:
        lc = 0
    else:
        before = piece[i - 1]
        lc = 1 if before < 0x80 else (2 if before < 0xC0 else 9)
    if i + w == n:
        rc = 0
    else:
        after = piece[i + w]
        rc = 1 if after < 0x80 else (2 if after >= 0xC0 else 9)
    if lc == 9 or rc == 9 or not (t.atomic_contexts[cp] >> (3 * lc + rc)) & 1:
        return NO_TOKEN
    width[0] = w
    return tid


cdef size_t _char_parts(const TokenTablesView* t, const uint8_t* piece, size_t n,
                        uint32_t* starts, uint32_t* ids) noexcept nogil:
    # First parts: atomic characters whole, every other byte alone.
    cdef size_t i = 0, m = 0, width
    cdef uint32_t tid
    while i < n:
        if piece[i] >= 0xC2:
            tid = _atomic_char(t, piece, i, n, &width)
            if tid != NO_TOKEN:
                starts[m] = <uint32_t>i
                ids[m] = tid
                m += 1
                i += width
                continue
        starts[m] = <uint32_t>i
        ids[m] = t.byte_ids[piece[i]]
        m += 1
        i += 1
    starts[m] = <uint32_t>n
    return m


cdef inline size_t _unit(const uint8_t* p, size_t left, size_t* slot) noexcept nogil:
    # The width of the character at p when it is a lead byte and its 1 or 2
    # continuation bytes (then slot is its char_ids entry), else 1. Any such
    # bytes will do, canonical or not: slots are the bytes, not code points.
    cdef uint8_t b = p[0]
    cdef size_t c
    if <uint8_t>(b - 0xE0) < 0x10:
        if left >= 3:
            c = (<size_t>p[1] << 8) | p[2]
            if (c & 0xC0C0) == 0x8080:
                slot[0] = ((<size_t>b & 0x0F) << 12) | ((c >> 2) & 0xFC0) | (c & 0x3F)
                return 3
    elif b >= 0xC0 and b < 0xE0:
        if left >= 2 and (p[1] & 0xC0) == 0x80:
            slot[0] = 0x10000 | ((<size_t>b & 0x1F) << 6) | (p[1] & 0x3F)
            return 2
    return 1


cdef inline int _emit_char(const TokenTablesView* t, const uint8_t* p, size_t w, size_t slot,
                           IdBuffer* out, PairMemo* memo) except -1 nogil:
    # BPE of one character's w bytes on their own: its char_ids entry (the
    # first time _learn_char's). out has room for 3 more ids.
    cdef uint64_t e = ft_load_word(&t.char_ids[slot])
    cdef uint64_t mask = (1ULL << CHAR_ID_BITS) - 1
    if e == 0:
        return _learn_char(t, p, w, slot, out, memo)
    out.data[out.len] = <uint32_t>(e & mask)
    out.data[out.len + 1] = <uint32_t>((e >> CHAR_ID_BITS) & mask)
    out.data[out.len + 2] = <uint32_t>((e >> (2 * CHAR_ID_BITS)) & mask)
    out.len += e >> CHAR_COUNT_SHIFT
    return 0


cdef int _learn_char(const TokenTablesView* t, const uint8_t* p, size_t w, size_t slot,
                     IdBuffer* out, PairMemo* memo) except -1 nogil:
    # _emit_char of a character whose entry is unknown: merged, and kept.
    cdef size_t before = out.len, k
    cdef uint64_t e
    _encode_parts(t, p, w, out, memo)
    e = <uint64_t>(out.len - before) << CHAR_COUNT_SHIFT
    for k in range(out.len - before):
        if out.data[before + k] >> CHAR_ID_BITS:
            return 0  # (NO_TOKEN: a byte that is no token) not kept
        e |= <uint64_t>out.data[before + k] << (CHAR_ID_BITS * k)
    ft_store_word(&t.char_ids[slot], e)
    return 0


cdef inline int _emit_stretch(const TokenTablesView* t, const uint8_t* piece, size_t start, size_t end,
                              size_t units, size_t slot, IdBuffer* out, PairMemo* memo) except -1 nogil:
    # BPE of piece[start:end], units characters or bytes between two cuts
    # (slot: the last one's, when a character). out has room for 11 more
    # ids than bytes are left.
    if units > 1:
        if end - start <= 16 and memo != NULL and memo.entries != NULL:
            return _emit_memo_stretch(t, piece + start, end - start, out, memo)
        return _encode_parts(t, piece + start, end - start, out, memo)
    if end - start == 1:
        out.data[out.len] = t.byte_ids[piece[start]]
        out.len += 1
        return 0
    return _emit_char(t, piece + start, end - start, slot, out, memo)


cdef int _emit_memo_stretch(const TokenTablesView* t, const uint8_t* p, size_t n, IdBuffer* out,
                            PairMemo* memo) except -1 nogil:
    # BPE of a stretch of 2 to 16 bytes through the memo's stretches. out has
    # room for 11 more ids.
    cdef uint64_t k0 = _head(p, n if n < 8 else 8)
    cdef uint64_t k1 = _head(p + 8, n - 8) if n > 8 else 0
    cdef StretchEntry* e = &memo.stretches[
        (((k0 ^ (n << 59)) * 0x9E3779B97F4A7C15ULL) ^ (k1 * 0xC4CEB9FE1A85EC53ULL)) >> (64 - STRETCH_BITS)]
    cdef size_t before, k
    if e.key[0] == k0 and e.key[1] == k1 and (e.shape & 0xFF) == n:
        memcpy(out.data + out.len, e.ids, 11 * sizeof(uint32_t))
        out.len += e.shape >> 8
        return 0
    before = out.len
    _encode_parts(t, p, n, out, memo)
    if out.len - before <= 11:
        e.key[0] = k0
        e.key[1] = k1
        e.shape = <uint32_t>(n | ((out.len - before) << 8))
        for k in range(out.len - before):
            e.ids[k] = out.data[before + k]
    return 0


cdef int _encode_short(const TokenTablesView* t, const uint8_t* piece, size_t n,
                       IdBuffer* out, PairMemo* memo) except -1 nogil:
    # BPE of 2..LINEAR_MAX bytes. A piece of no 2- or 3-byte character
    # starts from its bytes (_encode_bytes). Else, with char_ids, it is
    # walked a character (or a byte) at a time and cut where no token
    # crosses (_crossable); a stretch between cuts that is one character is
    # that character's char_ids entry, one byte that byte's id, and only
    # longer stretches are merged (_encode_parts). A Chinese piece is then
    # a table read a character, where merging from its parts asked whether
    # each character is atomic where it stands and then merged the bytes
    # of those that are not.
    cdef size_t i = 0, w, run = 0, units = 0, slot = 0, run_slot = 0
    while i < n and piece[i] < 0xC0:
        i += 1
    if i == n:
        return _encode_bytes(t, piece, n, out, memo)
    if t.char_ids == NULL:
        return _encode_parts(t, piece, n, out, memo)
    if out.len + n + 11 > out.cap:
        ids_reserve(out, n + 11)
    i = 0
    while i < n:
        w = _unit(piece + i, n - i, &slot)
        if i > run and not _crossable(t, piece, n, i):
            _emit_stretch(t, piece, run, i, units, run_slot, out, memo)
            run = i
            units = 0
        units += 1
        run_slot = slot
        i += w
    return _emit_stretch(t, piece, run, n, units, run_slot, out, memo)


cdef int _encode_bytes(const TokenTablesView* tables, const uint8_t* piece, size_t n,
                       IdBuffer* out, PairMemo* memo) except -1 nogil:
    # BPE of 2..LINEAR_MAX bytes from one part a byte.
    cdef uint32_t start[LINEAR_MAX + 1]
    cdef uint32_t ids[LINEAR_MAX]
    cdef uint64_t vals[LINEAR_MAX]
    cdef size_t i, m
    for i in range(n):
        start[i] = <uint32_t>i
        ids[i] = tables.byte_ids[piece[i]]
    start[n] = <uint32_t>n
    for i in range(n - 1):
        vals[i] = tables.byte_pairs[(<uint32_t>piece[i] << 8) | piece[i + 1]]
    m = _merge_linear(tables, piece, start, ids, vals, n, memo)
    ids_extend(out, ids, m)
    return 0


cdef int _encode_parts(const TokenTablesView* tables, const uint8_t* piece, size_t n,
                       IdBuffer* out, PairMemo* memo) except -1 nogil:
    # BPE of 2..LINEAR_MAX bytes on the stack, from atomic characters whole
    # (_char_parts) where the tables have them.
    cdef uint32_t start[LINEAR_MAX + 1]
    cdef uint32_t ids[LINEAR_MAX]
    cdef uint64_t vals[LINEAR_MAX]
    cdef size_t i, m = n, seg, k, m_run
    cdef uint32_t left, right
    cdef uint64_t v
    if tables.atomic_chars != NULL:
        m = _char_parts(tables, piece, n, start, ids)
    if m == n:
        return _encode_bytes(tables, piece, n, out, memo)
    # Merged one run of parts at a time between the points no token
    # crosses (_crossable): a Chinese piece falls apart into characters
    # that are tokens already, and merging sees only the few runs left.
    k = 0
    seg = 0
    for i in range(1, m + 1):
        if i < m and _crossable(tables, piece, n, start[i]):
            continue
        if i - seg == 1:
            ids[k] = ids[seg]
            k += 1
        elif i - seg == 2:
            # two parts (two characters, or a character's two parts): one lookup
            left = ids[seg]
            right = ids[seg + 1]
            v = _value(tables, piece, start[seg], start[i], left, right, memo)
            if v == NO_PAIR:
                ids[k] = left
                ids[k + 1] = right
                k += 2
            else:
                ids[k] = <uint32_t>v
                k += 1
        else:
            _first_values(tables, piece, start + seg, ids + seg, vals, i - seg, memo)
            m_run = _merge_linear(tables, piece, start + seg, ids + seg, vals, i - seg, memo)
            if k < seg:
                memmove(ids + k, ids + seg, m_run * sizeof(uint32_t))
            k += m_run
        seg = i
    m = k
    ids_extend(out, ids, m)
    return 0


cdef int _encode_long(const TokenTablesView* tables, const uint8_t* piece, size_t n,
                      IdBuffer* out, PairMemo* memo) except -1 nogil:
    # BPE of more than LINEAR_MAX bytes that no cut splits, through the merge queue.
    cdef uint32_t* starts = <uint32_t*>malloc((n + 1) * sizeof(uint32_t))
    cdef uint32_t* parts = <uint32_t*>malloc((n + 1) * sizeof(uint32_t))
    cdef size_t i, m
    try:
        if starts == NULL or parts == NULL:
            with gil:
                raise MemoryError()
        if tables.atomic_chars != NULL:
            m = _char_parts(tables, piece, n, starts, parts)
        else:
            for i in range(n):
                starts[i] = <uint32_t>i
                parts[i] = tables.byte_ids[piece[i]]
            starts[n] = <uint32_t>n
            m = n
        m = bpe_merge_parts(tables, piece, n, starts, parts, m, memo)
        ids_extend(out, parts, m)
    finally:
        free(starts)
        free(parts)
    return 0


cdef enum:
    # Spans longer than this are encoded a chunk at a time (see _encode_chunked):
    # a chunk's merge queue stays in the L1/L2 cache. A power of two, so that
    # chunks of a run of one character end where the run's longest tokens do.
    CHUNK = 4096
    # Failed joins tolerated at one chunk boundary before the span goes to the
    # merge queue whole.
    MAX_FAILED_JOINS = 8


cdef int _encode_span(const TokenTablesView* tables, const uint8_t* piece, size_t n,
                      IdBuffer* out, PairMemo* memo) except -1 nogil:
    # BPE of n >= 1 bytes, with no whole-piece shortcut.
    if n == 1:
        return ids_push(out, tables.byte_ids[piece[0]])
    if n <= LINEAR_MAX:
        return _encode_short(tables, piece, n, out, memo)
    if n <= CHUNK + CHUNK // 2:
        return _encode_long(tables, piece, n, out, memo)
    return _encode_chunked(tables, piece, n, out, memo)


cdef int _joins(const TokenTablesView* tables, uint32_t left, uint32_t right,
                PairMemo* memo) except -1 nogil:
    # 1 when BPE of the two tokens' bytes side by side gives back exactly
    # [left, right]: then, for any texts A and B whose encodings end with
    # left and start with right, the encoding of A + B is the two encodings
    # one after the other (no merge can cross the seam: whatever would cross
    # it in A + B would cross it in left + right first), else 0.
    cdef const ByteStrings* strings = tables.strings
    cdef size_t la = strings.offsets[left + 1] - strings.offsets[left]
    cdef size_t lb = strings.offsets[right + 1] - strings.offsets[right]
    cdef uint8_t stack_bytes[256]
    cdef uint8_t* both = stack_bytes
    cdef IdBuffer ids
    cdef int result
    memset(&ids, 0, sizeof(IdBuffer))
    if la + lb > sizeof(stack_bytes):
        both = <uint8_t*>malloc(la + lb)
        if both == NULL:
            with gil:
                raise MemoryError()
    try:
        memcpy(both, strings.data + strings.offsets[left], la)
        memcpy(both + la, strings.data + strings.offsets[right], lb)
        # never chunked: a chunked encoding would ask this same question
        if la + lb <= LINEAR_MAX:
            _encode_short(tables, both, la + lb, &ids, memo)
        else:
            _encode_long(tables, both, la + lb, &ids, memo)
        result = ids.len == 2 and ids.data[0] == left and ids.data[1] == right
    finally:
        ids_free(&ids)
        if both != stack_bytes:
            free(both)
    return result


cdef int _encode_chunked(const TokenTablesView* tables, const uint8_t* piece, size_t n,
                         IdBuffer* out, PairMemo* memo) except -1 nogil:
    # BPE of a long span as the encodings of its chunks, joined where _joins
    # allows. Where it does not, the last token before the seam is given back
    # (a prefix of an encoding is the encoding of its bytes) and the chunk
    # starts that much earlier. A chunk equal to the one before (a run of one
    # character) reuses its ids. Merging a megabyte of "=" whole takes 5x the
    # time of a megabyte of English; chunked it is a memcmp per chunk.
    cdef size_t base = out.len, pos = 0, end, length, failed = 0, last_len = 0, frontier = 0
    cdef const uint8_t* last_chunk = NULL
    cdef uint32_t left, joined_left = NO_TOKEN, joined_right = NO_TOKEN
    cdef IdBuffer chunk
    memset(&chunk, 0, sizeof(IdBuffer))
    try:
        while pos < n:
            end = pos + CHUNK if n - pos > CHUNK + CHUNK // 2 else n
            length = end - pos
            if not (length == last_len and memcmp(last_chunk, piece + pos, length) == 0):
                chunk.len = 0
                _encode_span(tables, piece + pos, length, &chunk, memo)
                last_chunk = piece + pos
                last_len = length
            if out.len > base:
                left = out.data[out.len - 1]
                if not (left == joined_left and chunk.data[0] == joined_right):
                    if not _joins(tables, left, chunk.data[0], memo):
                        # counted until the chunks get past the furthest seam
                        # reached, so giving tokens back cannot go round in circles
                        failed += 1
                        if failed > MAX_FAILED_JOINS:
                            out.len = base
                            return _encode_long(tables, piece, n, out, memo)
                        pos -= tables.strings.offsets[left + 1] - tables.strings.offsets[left]
                        out.len -= 1
                        continue
                    joined_left = left
                    joined_right = chunk.data[0]
            if end > frontier:
                frontier = end
                failed = 0
            ids_extend(out, chunk.data, chunk.len)
            pos = end
    finally:
        ids_free(&chunk)
    return 0


cdef inline int _emit_whole(const TokenTablesView* tables, const uint8_t* piece, size_t n,
                            bint whole_piece_lookup, IdBuffer* out) except -1 nogil:
    # 1 when the piece is done without merging: empty, or a token itself
    # under the whole-piece lookup (then pushed); 0 when it must be merged
    cdef int64_t whole
    if n == 0:
        return 1
    if whole_piece_lookup and n > 1:
        whole = find_token(tables, piece, n)
        if whole >= 0:
            ids_push(out, <uint32_t>whole)
            return 1
    return 0


cdef int bpe_encode_piece(const TokenTablesView* tables, const uint8_t* piece, size_t n,
                          bint whole_piece_lookup, IdBuffer* out, PairMemo* memo) except -1 nogil:
    cdef int64_t token = -1
    if n == 0:
        return 0
    if n > 1:
        token = find_token(tables, piece, n)
        if token >= 0 and (whole_piece_lookup
                           or ft_load_byte(&tables.merges_to_self[token]) == SELF_YES):
            return ids_push(out, <uint32_t>token)
    return bpe_merge_piece(tables, piece, n, token, out, memo)


cdef int bpe_merge_piece(const TokenTablesView* tables, const uint8_t* piece, size_t n,
                         int64_t token, IdBuffer* out, PairMemo* memo) except -1 nogil:
    cdef uint8_t known
    cdef size_t start
    if token >= 0:
        # without the whole-piece shortcut, a piece that is a token still
        # needs BPE once to learn whether it merges back into that token
        known = ft_load_byte(&tables.merges_to_self[token])
        if known == SELF_YES:
            return ids_push(out, <uint32_t>token)
        if known == SELF_UNKNOWN:
            start = out.len
            _encode_merged(tables, piece, n, out, memo)
            ft_store_byte(&tables.merges_to_self[token],
                          SELF_YES if out.len == start + 1 and out.data[start] == token
                          else SELF_NO)
            return 0
    return _encode_merged(tables, piece, n, out, memo)


cdef inline int _encode_merged(const TokenTablesView* tables, const uint8_t* piece, size_t n,
                               IdBuffer* out, PairMemo* memo) except -1 nogil:
    # _encode_span of a piece, inline for the short ones (most)
    if n <= LINEAR_MAX and n > 1:
        return _encode_short(tables, piece, n, out, memo)
    return _encode_cut(tables, piece, n, out, memo)


cdef int _encode_cut(const TokenTablesView* tables, const uint8_t* piece, size_t n,
                     IdBuffer* out, PairMemo* memo) except -1 nogil:
    cdef size_t i, cut = 0
    if n <= LINEAR_MAX:
        return _encode_span(tables, piece, n, out, memo)
    # A long piece: encode it in spans between the points no token crosses
    # (see token_bigrams). A megabyte of random letters, CJK or bytes then
    # costs what its words would; only runs that tokens keep spanning, such
    # as one character repeated, reach the merge queue whole.
    for i in range(1, n):
        if not _crossable(tables, piece, n, i):
            _encode_span(tables, piece + cut, i - cut, out, memo)
            cut = i
    return _encode_span(tables, piece + cut, n - cut, out, memo)


cdef struct DropEntry:
    uint64_t key       # priority << 32 | position of the left part
    uint32_t merged    # the token the pair made when it was queued


cdef inline void _drop_push(DropEntry* heap, size_t* size, uint64_t key, uint32_t merged) noexcept nogil:
    cdef size_t hole = size[0], parent
    size[0] += 1
    while hole > 0:
        parent = (hole - 1) >> 1
        if heap[parent].key <= key:
            break
        heap[hole] = heap[parent]
        hole = parent
    heap[hole].key = key
    heap[hole].merged = merged


cdef inline DropEntry _drop_pop(DropEntry* heap, size_t* size) noexcept nogil:
    cdef DropEntry top = heap[0], last
    cdef size_t hole = 0, child, n
    size[0] -= 1
    n = size[0]
    if n == 0:
        return top
    last = heap[n]
    while True:
        child = 2 * hole + 1
        if child >= n:
            break
        if child + 1 < n and heap[child + 1].key < heap[child].key:
            child += 1
        if heap[child].key >= last.key:
            break
        heap[hole] = heap[child]
        hole = child
    heap[hole] = last
    return top


cdef inline void _drop_queue(const TokenTablesView* tables, const uint8_t* piece, const uint32_t* starts,
                             const uint32_t* ids, const uint32_t* nxt, size_t m, size_t left,
                             DropEntry* heap, size_t* size) noexcept nogil:
    # queue the pair of the part at left and the part after it, if it merges
    cdef size_t right = nxt[left]
    cdef uint64_t v
    if right >= m:
        return
    v = pair_value(tables, piece, starts[left], starts[nxt[right]], ids[left], ids[right])
    if v != NO_PAIR:
        _drop_push(heap, size, (v & 0xFFFFFFFF00000000ULL) | left, <uint32_t>v)


cdef size_t bpe_sample_parts(const TokenTablesView* tables, const uint8_t* piece, size_t n,
                             uint32_t* starts, uint32_t* ids, size_t m, Dropout* drop) except? 0 nogil:
    # Parts are known by their index: nxt[p] / prv[p] are its neighbours (m
    # for none; prv[p] is m + 1 once the part has merged into its left
    # neighbour). The queue holds at most m - 1 pairs at first and gains two
    # a merge; the set-aside pairs are at most the queue's.
    cdef uint32_t* nxt
    cdef uint32_t* prv
    cdef DropEntry* heap
    cdef DropEntry* aside
    cdef DropEntry top
    cdef size_t size = 0, n_aside = 0, i, k, left, right
    cdef uint64_t v
    if m < 2:
        return m
    if m >= <size_t>0xFFFFFFFFU:
        with gil:
            raise OverflowError("a piece of 4 GiB or more cannot be sampled")
    nxt = <uint32_t*>malloc(2 * m * sizeof(uint32_t))
    heap = <DropEntry*>malloc(2 * 3 * m * sizeof(DropEntry))
    try:
        if nxt == NULL or heap == NULL:
            with gil:
                raise MemoryError()
        prv = nxt + m
        aside = heap + 3 * m
        for i in range(m):
            nxt[i] = <uint32_t>(i + 1)
            prv[i] = <uint32_t>(i - 1) if i else <uint32_t>m
        for i in range(m - 1):
            _drop_queue(tables, piece, starts, ids, nxt, m, i, heap, &size)
        while size:
            top = _drop_pop(heap, &size)
            if drop.rate > 0.0 and uniform01(&drop.state) < drop.rate:
                aside[n_aside] = top
                n_aside += 1
                continue
            while n_aside:
                n_aside -= 1
                _drop_push(heap, &size, aside[n_aside].key, aside[n_aside].merged)
            left = <size_t>(top.key & 0xFFFFFFFFULL)
            right = nxt[left]
            if prv[left] == m + 1 or right >= m:
                continue  # merged into its left neighbour, or the last part
            v = pair_value(tables, piece, starts[left], starts[nxt[right]], ids[left], ids[right])
            if v == NO_PAIR or <uint32_t>v != top.merged:
                continue  # the queue entry is stale: a neighbour merged since
            ids[left] = top.merged
            prv[right] = <uint32_t>(m + 1)  # gone
            nxt[left] = nxt[right]
            if nxt[right] < m:
                prv[nxt[right]] = <uint32_t>left
            if prv[left] < m:
                _drop_queue(tables, piece, starts, ids, nxt, m, prv[left], heap, &size)
            _drop_queue(tables, piece, starts, ids, nxt, m, left, heap, &size)
        i = 0
        k = 0
        while i < m:
            starts[k] = starts[i]
            ids[k] = ids[i]
            k += 1
            i = nxt[i]
        starts[k] = <uint32_t>n
    finally:
        free(nxt)
        free(heap)
    return k


cdef int bpe_sample_piece(const TokenTablesView* tables, const uint8_t* piece, size_t n,
                          bint whole_piece_lookup, Dropout* drop, IdBuffer* out) except -1 nogil:
    cdef uint32_t* starts
    cdef uint32_t* ids
    cdef size_t i, m
    if _emit_whole(tables, piece, n, whole_piece_lookup, out):
        return 0
    if n == 1:
        return ids_push(out, tables.byte_ids[piece[0]])
    if n >= <size_t>0xFFFFFFFFU:
        with gil:
            raise OverflowError("a piece of 4 GiB or more cannot be sampled")
    starts = <uint32_t*>malloc((n + 1) * sizeof(uint32_t))
    ids = <uint32_t*>malloc(n * sizeof(uint32_t))
    try:
        if starts == NULL or ids == NULL:
            with gil:
                raise MemoryError()
        for i in range(n):
            starts[i] = <uint32_t>i
            ids[i] = tables.byte_ids[piece[i]]
        starts[n] = <uint32_t>n
        m = bpe_sample_parts(tables, piece, n, starts, ids, n, drop)
        ids_extend(out, ids, m)
    finally:
        free(starts)
        free(ids)
    return 0


# Performance notes
#
# Chinese text (cl100k_base, zh.txt, 4,000 unseen lines after the first
# half, 550 kB; callgrind, encode_ordinary_batch alone): 87.6M instructions
# before these notes, of which merging 57M (30k pieces of 17.6 bytes, ~11
# first parts and ~2 merges each: _merge_linear 21.5M, _char_parts 13.6M,
# the first pair values 12.2M, memmove 6.3M).
# * _merge_linear with merged-away parts left in place, unlinked (no
#   memmove): 87.6M -> 88.2M, no faster timed (the scan passes over the dead
#   parts and mispredicts more: 814k -> 869k simulated branch misses).
#   Kept because it is no slower and the cuts below make its runs short.
# * The first values of a piece skipped (NO_PAIR) where token_bigrams cuts,
#   48% of the character boundaries: instructions equal, timed 15% SLOWER
#   (43.6 -> 36 MB/s; a data-dependent branch a pair, while the lookups it
#   saved were memo hits). Not kept.
# * Cut into runs by token_edges + token_windows (93% of zh's character
#   boundaries on cl100k_base, 83% on o200k_base where token_bigrams cuts
#   1%), a run of one part emitted as it is, of two parts one lookup:
#   87.6M -> 72.7M; the atomic character's token read before its contexts:
#   _char_parts 13.6M -> 12.8M. Same process, gigatoken time / fasttok time
#   (CPU, best of 5, load 5-9): cl100k zh 2.09-2.23 -> 1.72, o200k zh 3.00
#   -> 1.83, llama3 zh 2.38 -> 1.92, cl100k multi 2.05 -> 1.75.
# * What is left of the 72.7M: _encode_short (cut tests, runs) 16.6M,
#   _char_parts 12.8M, the scanner 9.9M + 2.7M, the str's UTF-8 8.1M,
#   _merge_linear 6.1M. Not tried: a table of the encoding of each
#   character that is no token (2-3 ids) when cuts stand on both sides of
#   it, which would make most runs left in zh.txt one table read.
#   token_windows costs 2 bits a window of every token: +1.3 ms on
#   cl100k_base's TokenTables build (10.0 -> 11.3 ms), o200k_base within
#   noise (22.6 -> 22.8 ms); at 8 bits a window it was +7 ms on o200k_base.

#
# New pieces of English and code (session 6; the steady protocol: warm on
# the first half of a corpus file, time the unseen second half; builds
# compared in alternating fresh processes, CPU time, load 4-7 on 2 cores,
# so only paired medians over many pairs mean anything). Where the time is,
# cl100k_base en: _merge_linear is about a third of the encode's perf
# samples, half of them on the two memo compares of a merge step;
# cachegrind (1 MB last level, the first half + 6,000 unseen lines):
# _merge_linear 33.2M instructions (its scan: 8 a pair a step), 288k D1
# and 116k last-level misses; _encode_segment 43.3M, 403k, 73k. The
# unseen half asks the memo 223,605 times, about 11 lookups per new piece
# (15.8% misses; simulated direct-mapped misses by entries: 4k 42.6%, 16k
# 27.1%, 32k 20.4%, 64k 15.8%, 128k 13.0%; llama3 en alike; cl100k zh 4.8%
# at 64k). Tried, none faster, none kept:
# * a near memo of 1,024 entries (16 KB) in front of the 1 MB one: 43% of
#   the lookups hit it (simulated), yet the cache-off loop (en, best of 15,
#   3 processes each) went 27.4 -> 29.0 ms;
# * the runner-up's slots fetched a step early: the scan also keeps the
#   second-lowest pair and fetches the memo slots of the two pairs its
#   merge will make. It is the next merge in 63% of the steps (74% after a
#   piece's first; a Python model of cl100k on en's new pieces) and covers
#   62% of the lookups (the slots of every first pair's would-be merges
#   41%, both 79%). Timed, en: 40 pairs, median ratio 0.999 (18 faster);
#   llama3 en 20 pairs 1.000; zh 1.04, multi 0.99, code 1.00 (12 pairs).
#   Fetching a slot early does not shorten the step, so the compares'
#   samples are not the slot's miss alone (this VM has no PMU counters to
#   tell a wait from a branch miss);
# * fetching ahead in _encode_short / _char_parts, a pass each before the
#   work: the atomic_chars and atomic_contexts entries of every character,
#   the token_windows word of every boundary, the memo slots of every
#   run's pairs: cl100k zh 0.92 (5 of 15 faster), multi 0.96; the
#   cache-off loop on zh 19.1 -> 22.1 ms (the extra passes cost more than
#   the overlapped misses save);
# * a table of the ids of each run of three single bytes between cuts (a
#   character that is no token; 4,096 entries of 16 bytes after the memo,
#   keyed by the bytes): the unseen half of zh.txt has 34k such runs on
#   cl100k_base, 74k on o200k_base, 51k on Llama 3, 43k on Qwen 3; o200k zh,
#   40 pairs: 1.002 (21 faster). The memo misses 4.8% of zh's lookups, so
#   the three it saves a run were mostly hits already;
# * the memo at 2**15 entries (512 KB): en 1.05 (11 of 16), zh 1.04 (6 of
#   10), noise; huge pages for every large malloc (GLIBC_TUNABLES=
#   glibc.malloc.hugetlb=1, 12 MB of them): en 1.01 (6 of 12).
# * the scan without a branch (the priority with the position in its low
#   bits, one compare and a conditional move a pair, which GCC emits): en
#   1.04 (12 of 20) in one run, 0.89 (9 of 30) in the next; llama3 en 0.86
#   (5 of 20); a memo slot's miss path asking for the index bucket before
#   the filter bit: 1.003 (15 of 30); the memo on a 2 MB huge page: 0.99.
# Runs of zh.txt's unseen half by parts (cl100k_base): 289,007 of one,
# 109,268 of two, 42,936 of three, 7,507 longer.
# What merging is worth, by ablation (wrong ids, time only; cl100k en
# unseen half, paired as above): merging no byte piece at all 1.49x faster
# (20 of 20; llama3 1.60x, 10 of 10), so _merge_linear is a third of the
# steady en time; merging only the first pairs (no lookup after a merge)
# 1.27x (13 of 15). That third is spread: 23,713 calls (22,099 byte pieces
# of 8.4 bytes on average), 128,903 merge steps, 188k memo hits and
# 35k misses, of which the token filter answers 62%, 6% pass it and are no
# token, 32% are tokens (13% of the misses span more than 8 bytes: a
# compare of the strings too). By these counts the scans, the hits and the
# misses are parts of similar size (an estimate: this VM has no cycle
# counters), so an idea aimed at one moves the whole by a few percent, under
# this noise; what would show is fewer steps and fewer lookups together
# (starting from parts bigger than bytes where that is exact).
# A long piece's parts by the linear scan up to 128 parts instead of the
# queue (bpe_merge_parts; en.txt's steady half holds 199 pieces of box
# drawing, 73 characters of 3 bytes, 7.3M of cl100k_base's 114M
# instructions): bpe_merge_parts 5.17M -> 5.20M, so not kept: the two new
# pairs' lookups a merge, not the queue, are those pieces' cost.
# _atomic_char's two contexts from two 256-byte tables (the shift each
# side adds to atomic_contexts' bit) instead of the comparisons: steady
# protocol, callgrind, cl100k zh 93.26M -> 93.06M, llama3 zh 98.10M ->
# 97.68M, en unchanged; not kept for 0.2-0.4%.
# Short pieces walked a character at a time (_encode_short), a character
# between cuts read from char_ids, longer stretches merged from their parts
# as before; pieces of no 2- or 3-byte character start from their bytes
# without _char_parts. Steady protocol, callgrind (HEAD and the change each
# built in /tmp), zh: cl100k 131.7M -> 106.6M instructions, o200k 149.7M ->
# 121.2M, llama3 140.8M -> 124.5M, qwen3 151.4M -> 139.5M; cl100k en 107.2M
# -> 107.4M, multi 171.5M -> 173.2M. Per character of zh before:
# _atomic_char ~44 instructions, the part loop ~29, the cut test ~28, the
# run loop ~47, merging a character that is no token ~50 (cl100k_base: half
# of zh's characters are none). Then stretches of 2 to 16 bytes kept in the
# memo (StretchEntry, 1 MB after the pair memo's 1 MB): zh cl100k -> 100.6M,
# o200k -> 110.8M, llama3 -> 114.5M, qwen3 -> 132.6M, multi (Cyrillic and
# Greek words, whose letters tokens join) -> 146.2M, en unchanged. With
# stretches of at most 8 bytes in 32-byte entries (512 KB) llama3 zh took
# 1.7M more: a third of its stretches are longer.
# The character's two continuation bytes tested in one compare (_unit) and
# a short piece's merge reached without two calls (_encode_merged inline):
# zh cl100k 100.6M -> 98.2M, llama3 114.5M -> 111.1M, o200k 110.8M ->
# 107.3M, qwen3 132.6M -> 128.1M; cl100k en 107.4M -> 106.9M, multi 146.2M
# -> 144.5M.
