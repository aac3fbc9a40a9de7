# C-level token tables shared by the compiled models.
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport malloc
from libc.string cimport memcmp, memcpy

from fasttok.shared._utf8 cimport utf8_put

cdef enum:
    NO_TOKEN = 0xFFFFFFFF

cdef extern from *:
    """
    #define FT_NO_PAIR 0xFFFFFFFFFFFFFFFFULL
    #if defined(__GNUC__) || defined(__clang__)
    #define FT_PREFETCH(p) __builtin_prefetch(p)
    #define ft_load_byte(p) __atomic_load_n((p), __ATOMIC_RELAXED)
    #define ft_store_byte(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
    #define ft_load_word(p) __atomic_load_n((p), __ATOMIC_RELAXED)
    #define ft_store_word(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
    #else
    #define FT_PREFETCH(p) ((void)(p))
    #define ft_load_byte(p) (*(volatile unsigned char*)(p))
    #define ft_store_byte(p, v) (*(volatile unsigned char*)(p) = (v))
    #define ft_load_word(p) (*(volatile unsigned long long*)(p))
    #define ft_store_word(p, v) (*(volatile unsigned long long*)(p) = (v))
    #endif
    """
    const uint64_t NO_PAIR "FT_NO_PAIR"
    # a hint that *p is read soon: independent cache misses then overlap
    void prefetch "FT_PREFETCH"(const void* p) noexcept nogil
    # A byte that threads encoding at once may all write: each writes the
    # same value, so relaxed order is enough (and a plain access a data race).
    uint8_t ft_load_byte(const uint8_t* p) noexcept nogil
    void ft_store_byte(uint8_t* p, uint8_t v) noexcept nogil
    # The same for a 64-bit word (char_ids' entries).
    uint64_t ft_load_word(const uint64_t* p) noexcept nogil
    void ft_store_word(uint64_t* p, uint64_t v) noexcept nogil

cdef enum:
    CHAR_ID_BITS = 20
    CHAR_COUNT_SHIFT = 60
    # char_ids' entries: 65536 3-byte sequences (lead E0-EF), then 2048 2-byte (lead C0-DF)
    CHAR_SLOTS = 0x10800

cdef enum:
    # merges_to_self[t]: whether BPE of token t's bytes gives t back
    SELF_UNKNOWN = 0
    SELF_YES = 1
    SELF_NO = 2

cdef struct ByteStrings:
    # Token bytes by id in one buffer: token i is data[offsets[i]:offsets[i + 1]].
    # An id without ordinary bytes (a special token, a hole) has an empty span
    # and present[i] == 0.
    uint8_t* data
    uint64_t* offsets
    uint8_t* present
    uint32_t n

cdef struct IndexSlot:
    # One open-addressing slot: the key's first 8 bytes (zero padded), id + 1
    # (0 = empty) and a tag of the key length and 24 hash bits. Keys of up to
    # 8 bytes, nearly every BPE lookup, are compared without leaving the slot.
    uint64_t word
    uint32_t id1
    uint32_t tag

cdef enum:
    MERGE_BATCH = 32  # merges whose cache misses TokenTables._add_merge_batch overlaps

cdef enum:
    BUCKET_SLOTS = 4  # 4 slots of 16 bytes: one cache line

cdef struct BytesIndex:
    # Buckets of BUCKET_SLOTS slots, filled in order; a bucket with an empty
    # slot ends the probe. A lookup, hit or miss, usually reads one cache
    # line. (A separate array of 16-bit control words in front of the slots,
    # like hashbrown's, cost two misses per hit; this layout also allows a
    # load of 3/4, so the table is half the size.)
    IndexSlot* slots
    uint64_t n_buckets
    # The last 8 bytes of each slot's key when it is longer than 8 bytes
    # (else 0), slot for slot: a key of up to 16 bytes is then compared
    # whole without reading the token's bytes, which cost two cache misses
    # after the slot's (its offsets, its bytes) for a tenth of the pieces
    # of English. They are not fetched ahead with the bucket: few pieces
    # read them (see _byte_bpe's performance notes).
    uint64_t* tails

cdef struct PairIndex:
    # (left id, right id) -> (priority << 32 | merged id); lower priority merges first.
    uint64_t* keys
    uint64_t* values
    uint64_t mask
    # About 10 bits per pair, set by a hash of each key: a pair whose bit is
    # clear is no merge, found without reading the keys (Llama 3's 280k
    # merges take 8 MB of keys, so nearly every probe there is a cache miss,
    # and most pairs of Chinese text are no merge). NULL: probe the keys.
    uint64_t* filter
    uint64_t filter_mask

cdef struct TokenTablesView:
    const ByteStrings* strings
    const BytesIndex* index
    const PairIndex* pairs
    const uint32_t* priority
    uint64_t generation  # unique among all TokenTables of the process, never reused
    uint64_t max_len  # longest ordinary token: longer spans are never tokens
    # pair_value of every two single bytes, so the first pass over a piece
    # (one lookup per byte) reads a 512 KB table instead of hashing
    const uint64_t* byte_pairs
    # For each BMP code point of 2 or 3 UTF-8 bytes: its token when, in some
    # contexts, BPE is certain to merge its bytes into that token before any
    # merge crosses its edges (see TokenTables._find_atomic_chars), else
    # NO_TOKEN; atomic_contexts has bit (3 * left + right) set for the
    # contexts (left: 0 piece start, 1 ASCII, 2 end of a character; right:
    # 0 piece end, 1 ASCII, 2 start of a character). NULL for a merge list
    # whose merged tokens are not their parts spelled together. Merging then
    # starts from such characters instead of their bytes: a third of the
    # parts for CJK text.
    const uint32_t* atomic_chars
    const uint16_t* atomic_contexts
    # Bit (a << 8 | b) set when bytes a, b stand next to each other inside
    # some token. Where two bytes of a piece form a pair that is not set, no
    # token spans them, so no merge ever crosses that point and BPE of the
    # piece is BPE of each side on its own: long pieces are cut there.
    const uint8_t* token_bigrams
    # Finer than token_bigrams, for the same cuts: token_edges has bit
    # (a << 8 | b) set when some token starts or ends with the bytes a, b,
    # and token_windows one bit (window_bit) per 4 bytes that stand next to
    # each other inside some token. A token spanning piece[p - 1] and
    # piece[p] either starts or ends there or holds piece[p - 2:p + 2]: where
    # none of the three is set, no merge ever crosses p (_bpe's cuts; on
    # cl100k_base 93% of the character boundaries of Chinese text, where
    # token_bigrams finds 48%).
    const uint8_t* token_edges
    const uint64_t* token_windows
    uint64_t windows_mask
    # One bit per (low bits of the) hash of every token's bytes: bytes whose
    # bit is clear are no token, found without probing the index.
    const uint64_t* token_filter
    uint64_t filter_mask
    # SELF_* of each token, found the first time a piece is that token: a
    # piece that merges back into itself is then one lookup, where BPE
    # without the whole-piece shortcut (merge lists without ignore_merges)
    # would merge it again each time. Written while encoding (ft_store_byte).
    uint8_t* merges_to_self
    # The BPE of each 2- or 3-byte character's bytes on their own (char_slot
    # is its entry), found the first time a piece needs it: up to three ids
    # of CHAR_ID_BITS bits and their count (CHAR_COUNT_SHIFT), 0 while
    # unknown. Where no token crosses either edge of a character in a piece
    # its ids are these (a Chinese piece is mostly such characters). Written
    # while encoding (ft_store_word); NULL where atomic_chars is, or ids need
    # more bits.
    uint64_t* char_ids
    bint use_pairs
    uint32_t byte_ids[256]

cdef int fill_strings(ByteStrings* strings, tokens) except -1
cdef void free_strings(ByteStrings* strings) noexcept

# The lookups below run in every merge step of every model, so they are
# defined here, inline, and compiled into each module that cimports them:
# a call across extension modules goes through a pointer and cannot be inlined.

cdef inline uint64_t _mix(uint64_t h) noexcept nogil:
    h ^= h >> 32
    h *= 0xD6E8FEB86659FD93ULL
    h ^= h >> 32
    return h


cdef inline uint64_t _head(const uint8_t* p, size_t n) noexcept nogil:
    # The first min(n, 8) bytes as a little-endian word, zero padded. Built
    # from two overlapping fixed-size loads: copying n bytes into a stack
    # word and reading it back stalled on store forwarding, and that stall
    # was the single hottest instruction of BPE on CJK text.
    cdef uint64_t w8
    cdef uint32_t lo4, hi4
    cdef uint16_t lo2, hi2
    if n >= 8:
        memcpy(&w8, p, 8)
        return w8
    if n >= 4:
        memcpy(&lo4, p, 4)
        memcpy(&hi4, p + n - 4, 4)
        return <uint64_t>lo4 | (<uint64_t>hi4 << (8 * (n - 4)))
    if n >= 2:
        memcpy(&lo2, p, 2)
        memcpy(&hi2, p + n - 2, 2)
        return <uint64_t>lo2 | (<uint64_t>hi2 << (8 * (n - 2)))
    if n == 1:
        return p[0]
    return 0


cdef inline uint64_t hash_bytes(const uint8_t* p, size_t n) noexcept nogil:
    cdef uint64_t h = _head(p, n) ^ (n * 0xFF51AFD7ED558CCDULL)
    cdef uint64_t w
    cdef size_t rest
    if n > 8:
        p += 8
        rest = n - 8
        while rest >= 8:
            memcpy(&w, p, 8)
            h = (h ^ w) * 0xC4CEB9FE1A85EC53ULL
            h ^= h >> 29
            p += 8
            rest -= 8
        if rest:
            h = (h ^ _head(p, rest)) * 0xC4CEB9FE1A85EC53ULL
    return _mix(h * 0x9E3779B97F4A7C15ULL)


cdef inline uint32_t _tag(uint64_t h, size_t n) noexcept nogil:
    return ((<uint32_t>(n if n < 255 else 255)) << 24) | <uint32_t>(h >> 40)


cdef inline uint64_t _bucket(uint64_t h, uint64_t n_buckets) noexcept nogil:
    # the high hash bits scaled to [0, n_buckets): any bucket count works
    return ((h >> 32) * n_buckets) >> 32


cdef inline int64_t find_bytes(const BytesIndex* index, const ByteStrings* strings,
                        const uint8_t* p, size_t n) noexcept nogil:
    return find_hashed(index, strings, p, n, hash_bytes(p, n))


cdef inline int64_t find_hashed(const BytesIndex* index, const ByteStrings* strings,
                        const uint8_t* p, size_t n, uint64_t h) noexcept nogil:
    cdef uint64_t word = _head(p, n)
    cdef uint32_t tag = _tag(h, n)
    cdef uint64_t b = _bucket(h, index.n_buckets)
    cdef const IndexSlot* slot
    cdef const IndexSlot* last
    cdef uint64_t start, tail
    while True:
        slot = &index.slots[b * BUCKET_SLOTS]
        last = slot + BUCKET_SLOTS
        while slot < last:
            if slot.id1 == 0:
                return -1
            if slot.tag == tag and slot.word == word:
                if n <= 8:
                    return slot.id1 - 1
                if n <= 16:
                    # the tag holds the length: equal heads and tails are equal keys
                    memcpy(&tail, p + n - 8, 8)
                    if index.tails[slot - index.slots] == tail:
                        return slot.id1 - 1
                else:
                    start = strings.offsets[slot.id1 - 1]
                    if (strings.offsets[slot.id1] - start == n
                            and memcmp(strings.data + start, p, n) == 0):
                        return slot.id1 - 1
            slot += 1
        b += 1
        if b == index.n_buckets:
            b = 0


cdef inline uint64_t window_bit(const uint8_t* p, uint64_t mask) noexcept nogil:
    # token_windows' bit for the 4 bytes at p
    cdef uint32_t w
    memcpy(&w, p, 4)
    return ((<uint64_t>w * 0x9E3779B97F4A7C15ULL) >> 32) & mask


cdef inline uint64_t _pair_key(uint32_t left, uint32_t right) noexcept nogil:
    return (<uint64_t>left << 32) | right


cdef inline uint64_t _pair_filter_bit(uint64_t key, uint64_t filter_mask) noexcept nogil:
    # other bits of the hash than the probe's first slot takes
    return (_mix(key) >> 24) & filter_mask


cdef inline uint64_t find_pair(const PairIndex* pairs, uint32_t left, uint32_t right) noexcept nogil:
    cdef uint64_t key = _pair_key(left, right)
    cdef uint64_t i = _mix(key) & pairs.mask
    cdef uint64_t k, bit
    if pairs.filter != NULL:
        bit = _pair_filter_bit(key, pairs.filter_mask)
        if not (pairs.filter[bit >> 6] >> (bit & 63)) & 1:
            return NO_PAIR
    while True:
        k = pairs.keys[i]
        if k == key:
            return pairs.values[i]
        if k == NO_PAIR:
            return NO_PAIR
        i = (i + 1) & pairs.mask




cdef inline int64_t find_token(const TokenTablesView* t, const uint8_t* p, size_t n) noexcept nogil:
    # find_bytes for the merge loop, which mostly asks for bytes that are no token.
    cdef uint64_t h, bit
    if n > t.max_len:
        return -1
    h = hash_bytes(p, n)
    bit = h & t.filter_mask
    if not (t.token_filter[bit >> 6] >> (bit & 63)) & 1:
        return -1
    return find_hashed(t.index, t.strings, p, n, h)


cdef inline uint32_t* bmp_token_ids(const TokenTablesView* t, uint32_t missing) except NULL:
    # A new array (the caller frees it) of the id of every BMP character as
    # a token on its own, missing where its UTF-8 is no token: for models
    # that look characters up bare, where a table read is cheaper than a hash.
    cdef uint32_t cp
    cdef uint8_t utf8[4]
    cdef int64_t found
    cdef uint32_t* ids = <uint32_t*>malloc(0x10000 * sizeof(uint32_t))
    if ids == NULL:
        raise MemoryError()
    for cp in range(0x10000):
        found = find_token(t, utf8, utf8_put(utf8, cp))
        ids[cp] = <uint32_t>found if found >= 0 else missing
    return ids


cdef inline uint64_t pair_value(const TokenTablesView* t, const uint8_t* piece,
                                 size_t start, size_t end, uint32_t left, uint32_t right) noexcept nogil:
    # (priority << 32 | merged id) of two adjacent parts spanning piece[start:end], or NO_PAIR.
    cdef int64_t merged
    if t.use_pairs:
        if left == NO_TOKEN or right == NO_TOKEN:
            return NO_PAIR  # (NO_TOKEN, NO_TOKEN) would read as the empty-slot key
        return find_pair(t.pairs, left, right)
    merged = find_token(t, piece + start, end - start)
    if merged < 0:
        return NO_PAIR
    return (<uint64_t>t.priority[merged] << 32) | <uint64_t>merged


cdef class TokenTables:
    cdef ByteStrings strings
    cdef BytesIndex index
    cdef PairIndex pairs
    cdef uint32_t* priority
    cdef uint64_t* byte_pairs
    cdef uint32_t* atomic_chars
    cdef uint16_t* atomic_contexts
    cdef uint8_t* token_bigrams
    cdef uint8_t* token_edges
    cdef uint64_t* token_windows
    cdef uint64_t* token_filter
    cdef uint8_t* merges_to_self
    cdef uint64_t* char_ids
    cdef int _fill_token_filter(self) except -1
    cdef int _fill_token_windows(self) except -1
    cdef int _fill_pair_filter(self) except -1
    cdef int _find_atomic_chars(self, const uint32_t* made_at) except -1
    cdef uint32_t* _first_merges(self, bint check_spelling) except? NULL
    cdef int _add_merge_ids(self, merges, bint later_wins) except -1
    cdef int _add_merge_tokens(self, merge_tokens, bint later_wins) except -1
    cdef Py_ssize_t _add_merge_batch(self, const uint8_t** pa, const size_t* la,
                                     const uint8_t** pb, const size_t* lb, Py_ssize_t count,
                                     uint32_t first, bint later_wins, uint8_t** joined,
                                     size_t* cap) except -1
    cdef int64_t _find_joined(self, const uint8_t* a, size_t la, const uint8_t* b, size_t lb,
                              uint8_t** buf, size_t* cap) except -2
    cdef TokenTablesView view
    cdef readonly uint32_t n_pairs
    cdef bint merges_spelled  # every merge makes its two parts spelled together
    cdef int _build_index(self) except -1
    cdef int _alloc_pairs(self, uint64_t expected) except -1
    cdef int _add_pair(self, uint32_t left, uint32_t right, uint32_t merged, uint32_t priority,
                       bint later_wins=*) except -1
    cdef int _derive(self, bint use_pairs) except -1
    cdef int _check_loaded(self, uint64_t data_len) except -1
    # Set by from_bytes: the bytes that the strings, index, priorities and
    # pairs point into, which then own them (__dealloc__ frees only the
    # tables _derive built).
    cdef bytes backing
