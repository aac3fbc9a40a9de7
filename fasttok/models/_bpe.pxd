# The one BPE merge loop, shared by every model that merges pairs.
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t

from fasttok.shared._growth cimport grow_array
from fasttok.shared._tables cimport (BUCKET_SLOTS, SELF_YES, TokenTablesView, _bucket, find_hashed,
                                     ft_load_byte, prefetch)

cdef struct IdBuffer:
    # A growable array of token ids, owned by whoever declared it.
    uint32_t* data
    size_t len
    size_t cap


# The one heap of merge candidates: a 4-ary min-heap, smallest first (a
# 4-ary tree has half the levels of a binary one and compares one cache line
# of keys per level), grown on demand; the owner frees items. Bare keys for
# the byte-level merge queue, whose entries are 8 bytes (see _merge_heap);
# keys with a value for sentencepiece's BPE agenda, whose entries carry the
# pair they were made for, ordered by key alone; and for the BPE trainer,
# whose order needs more than 64 bits (the highest count, then the lowest
# pair), keys with a value that breaks ties between equal keys. The
# functions are defined here so that each module inlines its own kind.
cdef struct KeyHeap:
    uint64_t* items
    size_t size
    size_t cap

cdef struct HeapItem:
    uint64_t key
    uint64_t value  # the owner's; the heap only moves it (RankedHeap: orders by it too)

cdef struct ItemHeap:
    HeapItem* items
    size_t size
    size_t cap

cdef struct RankedHeap:
    HeapItem* items
    size_t size
    size_t cap

ctypedef fused heap_t:
    KeyHeap
    ItemHeap
    RankedHeap


cdef inline uint64_t heap_key(const heap_t* h, size_t i) noexcept nogil:
    if heap_t is KeyHeap:
        return h.items[i]
    else:
        return h.items[i].key


cdef inline bint heap_before(const heap_t* h, size_t i, uint64_t key, uint64_t value) noexcept nogil:
    # Whether item i comes strictly before (key, value).
    if heap_t is RankedHeap:
        return h.items[i].key < key or (h.items[i].key == key and h.items[i].value < value)
    else:
        return heap_key(h, i) < key


cdef inline bint heap_after(const heap_t* h, size_t i, uint64_t key, uint64_t value) noexcept nogil:
    # Whether item i comes strictly after (key, value).
    if heap_t is RankedHeap:
        return h.items[i].key > key or (h.items[i].key == key and h.items[i].value > value)
    else:
        return heap_key(h, i) > key


cdef inline uint64_t heap_value(const heap_t* h, size_t i) noexcept nogil:
    if heap_t is KeyHeap:
        return 0
    else:
        return h.items[i].value


cdef inline int heap_push(heap_t* h, uint64_t key, uint64_t value) except -1 nogil:
    # Adds key (with value, for an ItemHeap or a RankedHeap).
    cdef size_t i = h.size, parent
    if h.size == h.cap:
        grow_array(<void**>&h.items, &h.cap, h.size + 1, sizeof(h.items[0]), 1024)
    h.size += 1
    while i > 0:
        parent = (i - 1) >> 2
        if not heap_after(h, parent, key, value):
            break
        h.items[i] = h.items[parent]
        i = parent
    if heap_t is KeyHeap:
        h.items[i] = key
    else:
        h.items[i].key = key
        h.items[i].value = value
    return 0


cdef inline void heap_pop(heap_t* h) noexcept nogil:
    # Removes the top; the caller has read h.items[0]. The last item sinks
    # from the top (it stays at h.items[size] until it lands).
    cdef size_t i = 0, child, best, c, n
    cdef uint64_t key, value
    h.size -= 1
    n = h.size
    if n == 0:
        return
    key = heap_key(h, n)
    value = heap_value(h, n)
    while True:
        child = 4 * i + 1
        if child >= n:
            break
        best = child
        for c in range(child + 1, child + 4 if child + 4 <= n else n):
            if heap_before(h, c, heap_key(h, best), heap_value(h, best)):
                best = c
        if not heap_before(h, best, key, value):
            break
        h.items[i] = h.items[best]
        i = best
    h.items[i] = h.items[n]


cdef struct MemoEntry:
    uint64_t key1   # (left << 32 | right) + 1; 0 is an empty slot
    uint64_t value

cdef struct StretchEntry:
    # The ids of a stretch of 2 to 16 bytes between two cuts (Chinese
    # characters that a token may join), keyed by its bytes (zero padded)
    # and length: one cache line.
    uint64_t key[2]
    uint32_t shape  # length | count << 8; 0 is an empty slot
    uint32_t ids[11]

cdef struct PairMemo:
    # A direct-mapped memo of pair values: the same pairs recur across a
    # text, most of all in CJK text and long runs, and the token index they
    # would otherwise be looked up in is several megabytes. 2**16 entries of
    # 16 bytes, about the L2 cache: on zh.txt with o200k_base this 1 MB memo
    # takes a fifth off encoding, a 256 KB one 13%. One per thread, kept
    # between calls (a batch's chunks and repeated calls start warm) and
    # emptied when the thread encodes with other token tables, recognised
    # by their generation number, so threads never share one.
    MemoEntry* entries
    uint32_t shift  # 64 - bits
    # After the entries, in the same memory: 2**14 StretchEntry (1 MB),
    # which _bpe asks before merging a stretch of more than one character.
    StretchEntry* stretches
    int owned  # 1 where threads keep no memory (the memo is then this call's)

cdef int pair_memo_init(PairMemo* memo, const TokenTablesView* tables) except -1 nogil
cdef void pair_memo_release(PairMemo* memo) noexcept nogil
# pair_memo_init only when the thread's memo is free or already these tables'
cdef bint pair_memo_if_ready(PairMemo* memo, const TokenTablesView* tables) noexcept nogil

cdef int ids_reserve(IdBuffer* buf, size_t extra) except -1 nogil
cdef int ids_push(IdBuffer* buf, uint32_t token) except -1 nogil
cdef void ids_free(IdBuffer* buf) noexcept nogil

# Merge parts given by the caller: starts[0..m] (starts[m] == n) and their
# ids[0..m-1] (NO_TOKEN where a part is not a token yet). Merges in place and
# returns the new number of parts. For models whose first parts are
# characters, not bytes (SentencePiece BPE). memo may be NULL.
cdef size_t bpe_merge_parts(const TokenTablesView* tables, const uint8_t* piece, size_t n,
                            uint32_t* starts, uint32_t* ids, size_t m, PairMemo* memo) except? 0 nogil

cdef int bpe_encode_piece(const TokenTablesView* tables, const uint8_t* piece, size_t n,
                          bint whole_piece_lookup, IdBuffer* out, PairMemo* memo) except -1 nogil
# bpe_encode_piece of a piece of 2 or more bytes that bpe_piece_whole did not
# take, given the token it found (its token of the piece's bytes, else -1),
# so that the index is not probed twice for the piece
cdef int bpe_merge_piece(const TokenTablesView* tables, const uint8_t* piece, size_t n,
                         int64_t token, IdBuffer* out, PairMemo* memo) except -1 nogil


# The first step of bpe_encode_piece for a caller that hashed the piece
# itself (h: hash_bytes of its n >= 2 bytes), a piece ahead, and fetched
# what the lookup reads (bpe_prefetch_whole): a piece that is a token and
# needs no merging (a token whole under the whole-piece lookup; without it,
# a token known to merge back into itself) gets its id pushed: 1. Else 0,
# with token[0] the piece's token that still needs BPE once (without the
# whole-piece lookup), else -1, for bpe_merge_piece. Inline: it is most
# pieces of English.
cdef inline int bpe_piece_whole(const TokenTablesView* t, const uint8_t* piece, size_t n,
                                uint64_t h, bint whole_piece_lookup,
                                IdBuffer* out, int64_t* token) except -1 nogil:
    cdef uint64_t bit = h & t.filter_mask
    cdef int64_t found
    token[0] = -1
    if n > t.max_len or not (t.token_filter[bit >> 6] >> (bit & 63)) & 1:
        return 0
    found = find_hashed(t.index, t.strings, piece, n, h)
    if found < 0:
        return 0
    if not whole_piece_lookup and ft_load_byte(&t.merges_to_self[found]) != SELF_YES:
        token[0] = found
        return 0
    if out.len == out.cap:
        ids_reserve(out, 1)
    out.data[out.len] = <uint32_t>found
    out.len += 1
    return 1


# Asks the memory for what bpe_piece_whole reads for hash h: its filter
# word and its index bucket (each a likely cache miss, which then overlaps
# the work on the piece before).
cdef inline void bpe_prefetch_whole(const TokenTablesView* t, uint64_t h) noexcept nogil:
    cdef uint64_t bit = h & t.filter_mask
    prefetch(&t.token_filter[bit >> 6])
    prefetch(&t.index.slots[_bucket(h, t.index.n_buckets) * BUCKET_SLOTS])


cdef struct Dropout:
    # BPE-dropout's draw: the chance that a merge is skipped when its turn
    # comes, and the generator's state.
    double rate
    uint64_t state


cdef inline double uniform01(uint64_t* state) noexcept nogil:
    # splitmix64, top 53 bits as a double in [0, 1): every sampler's coin
    cdef uint64_t z
    state[0] += 0x9E3779B97F4A7C15ULL
    z = state[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    z ^= z >> 31
    return <double>(z >> 11) * (1.0 / 9007199254740992.0)


# BPE-dropout over parts given by the caller, as bpe_merge_parts takes them
# (merges in place, returns the new number of parts); the rule below.
cdef size_t bpe_sample_parts(const TokenTablesView* tables, const uint8_t* piece, size_t n,
                             uint32_t* starts, uint32_t* ids, size_t m, Dropout* drop) except? 0 nogil

# BPE of one piece with BPE-dropout as Hugging Face tokenizers runs it: the
# lowest (priority, position) pair is popped; with probability drop.rate it
# is set aside, otherwise the set-aside pairs go back to the queue and the
# popped one merges if it is still there. whole_piece_lookup as above (it
# comes first, as tokenizers' ignore_merges does).
cdef int bpe_sample_piece(const TokenTablesView* tables, const uint8_t* piece, size_t n,
                          bint whole_piece_lookup, Dropout* drop, IdBuffer* out) except -1 nogil
