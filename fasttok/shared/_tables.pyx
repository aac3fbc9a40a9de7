"""Token tables in C: id -> bytes, bytes -> id, and (left, right) -> merge.

Design notes. Every BPE flavour fasttok runs is "merge the adjacent pair with
the lowest priority, leftmost on ties"; they differ only in where the
priority comes from (the merged token's rank for tiktoken, the merge list's
order for GGUF ``gpt2`` files, the piece score for SentencePiece BPE). When the
priority belongs to the merged token, a pair is looked up by hashing the
bytes the two parts span (they are adjacent in the piece) and reading the
found token's priority; when it belongs to the merge list, a pair index
keyed by the two ids holds it. A pair index for rank vocabularies (every
split of every token into two tokens) was tried: lookups were a
little cheaper, but building it cost ~100 ms for cl100k_base (1.4 M probes,
mostly cache misses), which alone is over half of tiktoken's load time.

Both hash tables use open addressing with linear probing at a load factor of
at most 1/2. A ``bytes -> id`` slot carries the key's first eight bytes and
a tag (length and hash bits), so the lookups BPE makes, nearly all of keys
of eight bytes or less, cost one cache line each; tiktoken's layout (a
separate id array, hash array and key buffer) cost about four misses per
lookup and made CJK text slower than tiktoken.

``to_bytes``/``from_bytes`` (fasttok.table_cache's file format) keep only
the arrays that cost lookups or Python objects to build: token bytes,
offsets, the index and its tails, priorities, pairs. ``from_bytes`` points
into the bytes it is given instead of copying (a fresh page costs more to
fault in than to fill), checks every id and offset and derives the rest again
(``_derive``; with the checks 2.4 ms for cl100k_base, 5 ms for o200k_base,
best of 30), so a table added there is never missing from old files.
Mapping the file instead of reading it saved another 5-9 ms for o200k_base
(no fresh pages) but was rejected: a mapped file that someone truncates
kills the process with SIGBUS, and one changed in place changes tables
that were checked once.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcmp, memcpy, memset

from fasttok.shared._growth cimport grow_array
from fasttok.shared._token_ids cimport token_id

from array import array


cdef unsigned long long _generations = 0


cdef inline int _byte_class_before(uint8_t x) noexcept nogil:
    # what may end the text before a character: 0 ASCII, 1 a continuation byte
    if x < 0x80:
        return 0
    if x < 0xC0:
        return 1
    return -1  # a lead byte before a lead byte: not UTF-8, never a context


cdef inline int _byte_class_after(uint8_t y) noexcept nogil:
    # what may start the text after a character: 0 ASCII, 1 a lead byte
    if y < 0x80:
        return 0
    if y >= 0xC0:
        return 1
    return -1


cdef bint _has_lead_byte(const uint8_t* p, uint64_t n) noexcept nogil:
    cdef uint64_t i
    for i in range(n):
        if 0xC2 <= p[i] < 0xF0:
            return True
    return False


cdef int fill_strings(ByteStrings* strings, tokens) except -1:
    cdef Py_ssize_t n = len(tokens), i, length
    cdef uint64_t total = 0, pos = 0
    cdef bytes tok
    for t in tokens:
        if t is not None:
            tok = t
            total += PyBytes_GET_SIZE(tok)
    strings.n = <uint32_t>n
    strings.data = <uint8_t*>malloc(total + 1)
    strings.offsets = <uint64_t*>malloc((n + 1) * sizeof(uint64_t))
    strings.present = <uint8_t*>calloc(n + 1, 1)
    if not strings.data or not strings.offsets or not strings.present:
        raise MemoryError()
    for i in range(n):
        strings.offsets[i] = pos
        t = tokens[i]
        if t is None:
            continue
        tok = t
        length = PyBytes_GET_SIZE(tok)
        memcpy(strings.data + pos, PyBytes_AS_STRING(tok), length)
        pos += length
        strings.present[i] = 1
    strings.offsets[n] = pos
    return 0


cdef void free_strings(ByteStrings* strings) noexcept:
    free(strings.data)
    free(strings.offsets)
    free(strings.present)
    strings.data = NULL
    strings.offsets = NULL
    strings.present = NULL


cdef enum:
    # to_bytes starts with these words: tokens, token bytes, index buckets,
    # pair slots, whether pairs (not token priorities) give the merges
    PAYLOAD_WORDS = 5


def _payload_layout(header):
    # Where each serialized array starts (8-byte aligned) and where they
    # end: offsets, present, data, index slots, priorities, pair keys, pair
    # values, index tails. Python ints, so a hostile header cannot overflow
    # the sum.
    n, data_len, n_buckets, pair_cap, _ = header
    sizes = [(n + 1) * 8, n + 1, data_len, n_buckets * BUCKET_SLOTS * sizeof(IndexSlot), n * 4,
             pair_cap * 8, pair_cap * 8, n_buckets * BUCKET_SLOTS * 8]
    starts = []
    end = PAYLOAD_WORDS * 8
    for size in sizes:
        starts.append(end)
        end += (size + 7) // 8 * 8
    return starts, end


cdef uint64_t _capacity_for(uint64_t count):
    cdef uint64_t cap = 16
    while cap < 2 * count + 2:
        cap <<= 1
    return cap


cdef int _add_merge_triples(TokenTables t, const uint32_t[::1] flat, bint later_wins) except -1:
    # TokenTables._add_merge_ids of (left, right, merged) triples laid end
    # to end; returns 1 when none named two tokens (as there: then no merge
    # says its result is other than its parts spelled together)
    cdef bint spelled = True
    cdef uint32_t n = <uint32_t>t.strings.n, l, r, merged, rank = 0
    cdef Py_ssize_t k
    if flat.shape[0] % 3:
        raise ValueError(f"merge triples come in threes, not {flat.shape[0]} ids")
    for k in range(0, flat.shape[0], 3):
        l, r, merged = flat[k], flat[k + 1], flat[k + 2]
        if l < n and r < n and t.strings.present[l] and t.strings.present[r]:
            spelled = False
            if merged < n and t.strings.present[merged]:
                t._add_pair(l, r, merged, rank, later_wins)
        rank += 1
    return spelled


cdef int _derive_lookup(TokenTables t, bint use_pairs) except -1:
    # The part of the view find_token and pair_value read (with the token
    # filter): its tables, a new generation, the id of each single byte and
    # the longest token.
    cdef uint32_t i
    cdef int64_t found
    cdef uint8_t single
    global _generations
    _generations += 1
    t.view.generation = _generations
    t.view.strings = &t.strings
    t.view.index = &t.index
    t.view.pairs = &t.pairs
    t.view.priority = t.priority
    t.view.use_pairs = use_pairs
    for i in range(256):
        t.view.byte_ids[i] = NO_TOKEN
    for i in range(256):
        single = <uint8_t>i
        found = find_bytes(&t.index, &t.strings, &single, 1)
        if found >= 0:
            t.view.byte_ids[i] = <uint32_t>found
    t.view.max_len = 0
    for i in range(t.strings.n):
        if t.strings.offsets[i + 1] - t.strings.offsets[i] > t.view.max_len:
            t.view.max_len = t.strings.offsets[i + 1] - t.strings.offsets[i]
    return 0


cdef class TokenTables:
    """The C tables of one vocabulary.

    ``tokens`` holds the raw bytes of each ordinary token by id (``None``
    for ids that are not ordinary tokens). Merge priorities come from exactly
    one of ``priorities`` (the priority of each token as a merge result,
    lower first; every split of a token into two tokens becomes a pair) or
    ``merges`` (a list of ``(left_id, right_id)`` in priority order; the
    merged token must exist). A merge may name its result,
    ``(left_id, right_id, merged_id)``, for vocabularies whose merged token
    is not the two spelled together (``tokenizer.json`` BPE with a
    continuing-subword prefix); such merges may also come as one
    ``array('I')`` of the triples end to end (what a compiled merge reader
    writes: no Python object per merge). ``merge_tokens`` is a merge list spelled as
    ``(left bytes, right bytes)`` pairs, each looked up in the tables (a
    merge naming a token that is not there, or whose parts spelled together
    are not one, is skipped, as an out-of-range id is). With none of them, a
    token's id is its priority, as in ``.tiktoken`` files. A pair that two
    merges name keeps the first, or the last with ``later_merge_wins``.
    ``lookup_only`` tables hold only what a lookup of bytes reads
    (:meth:`find`, ``find_token``: a WordPiece model's index of its texts),
    none of the merge loop's (byte pairs, windows, atomic characters: ~13M
    instructions of all-MiniLM-L6-v2's 31k texts).

    >>> TokenTables([b"a", b"ab"], lookup_only=True).find(b"ab")
    1
    >>> t = TokenTables([b"a", b"b", b"ab"])
    >>> t.find(b"ab"), t.pair(0, 1)
    (2, (2, 2))
    >>> TokenTables([b"a", b"##b", b"ab"], merges=[(0, 1, 2)]).pair(0, 1)
    (2, 0)
    >>> TokenTables([b"a", b"b", b"ab"], merge_tokens=[(b"a", b"b")]).pair(0, 1)
    (2, 0)
    >>> from array import array
    >>> TokenTables([b"a", b"##b", b"ab"], merges=array("I", [0, 1, 2])).pair(0, 1)
    (2, 0)
    """

    def __cinit__(self):
        self.strings.data = NULL
        self.strings.offsets = NULL
        self.strings.present = NULL
        self.index.slots = NULL
        self.index.tails = NULL
        self.pairs.keys = NULL
        self.pairs.values = NULL
        self.pairs.filter = NULL
        self.priority = NULL
        self.byte_pairs = NULL
        self.atomic_chars = NULL
        self.atomic_contexts = NULL
        self.token_bigrams = NULL
        self.token_edges = NULL
        self.token_windows = NULL
        self.token_filter = NULL
        self.merges_to_self = NULL
        self.char_ids = NULL

    def __init__(self, tokens, priorities=None, merges=None, merge_tokens=None, *,
                 bint later_merge_wins=False, bint lookup_only=False):
        cdef Py_ssize_t n = len(tokens)
        cdef Py_ssize_t i
        if n >= NO_TOKEN:
            raise ValueError(f"{n} tokens is more than fasttok's 32-bit ids allow")
        if (priorities is not None) + (merges is not None) + (merge_tokens is not None) > 1:
            raise ValueError("give merge priorities one way: per token, as a merge list "
                             "of ids or as one of token bytes")
        if priorities is not None and len(priorities) != n:
            raise ValueError(f"{len(priorities)} priorities for {n} tokens")
        fill_strings(&self.strings, tokens)
        self._build_index()
        self.priority = <uint32_t*>malloc((n + 1) * sizeof(uint32_t))
        if not self.priority:
            raise MemoryError()
        for i in range(n):
            self.priority[i] = <uint32_t>(i if priorities is None else priorities[i])
        if lookup_only:
            if merges is not None or merge_tokens is not None:
                raise ValueError("lookup_only tables have no merges")
            self._alloc_pairs(0)
            _derive_lookup(self, False)
            self._fill_token_filter()
            return
        if merge_tokens is not None:
            self._alloc_pairs(len(merge_tokens))
            self._add_merge_tokens(merge_tokens, later_merge_wins)
            self.merges_spelled = True
            self._derive(True)
            return
        if isinstance(merges, array):
            self._alloc_pairs(len(merges) // 3)
            self.merges_spelled = _add_merge_triples(self, merges, later_merge_wins)
            self._derive(True)
            return
        self._alloc_pairs(len(merges) if merges is not None else 0)
        if merges is not None:
            self.merges_spelled = self._add_merge_ids(merges, later_merge_wins)
        self._derive(merges is not None)

    cdef int _add_merge_ids(self, merges, bint later_wins) except -1:
        # typed: with Python ints compared and the parts' bytes joined in
        # Python, this loop was a fifth of Gemma 3's load (514k merges).
        # Returns 1 when every merge named no merged token of its own, so
        # that each makes its parts spelled together, else 0.
        cdef bint spelled = True
        cdef int64_t n = self.strings.n, l, r, merged
        cdef uint32_t rank = 0
        cdef uint8_t* joined = NULL
        cdef size_t cap = 0
        try:
            for merge in merges:
                l, r = merge[0], merge[1]
                merged = -1
                if 0 <= l < n and 0 <= r < n and self.strings.present[l] and self.strings.present[r]:
                    if len(merge) == 3:
                        spelled = False
                        merged = merge[2]
                        if not (0 <= merged < n and self.strings.present[merged]):
                            merged = -1
                    else:
                        merged = self._find_joined(
                            self.strings.data + self.strings.offsets[l],
                            self.strings.offsets[l + 1] - self.strings.offsets[l],
                            self.strings.data + self.strings.offsets[r],
                            self.strings.offsets[r + 1] - self.strings.offsets[r], &joined, &cap)
                if merged >= 0:
                    self._add_pair(<uint32_t>l, <uint32_t>r, <uint32_t>merged, rank, later_wins)
                rank += 1
        finally:
            free(joined)
        return spelled

    cdef int64_t _find_joined(self, const uint8_t* a, size_t la, const uint8_t* b, size_t lb,
                              uint8_t** buf, size_t* cap) except -2:
        # the id of the token spelled a then b, or -1; *buf (the caller's
        # to free) grows to hold the two
        grow_array(<void**>buf, cap, la + lb, 1, 256)
        memcpy(buf[0], a, la)
        memcpy(buf[0] + la, b, lb)
        return find_bytes(&self.index, &self.strings, buf[0], la + lb)

    cdef int _add_merge_tokens(self, merge_tokens, bint later_wins) except -1:
        # the ids of each merge's two parts and of the two spelled together,
        # found in the index: a Python dict from bytes to id and two lookups
        # a merge were most of a tokenizer.json file's load. The lookups are
        # cache misses (Llama 3's index is 6 MB, its pair table 16 MB), so a
        # batch of merges is hashed and its slots prefetched first, and
        # then looked up, and its pairs' slots too: the misses overlap.
        cdef object items = merge_tokens if isinstance(merge_tokens, (list, tuple)) \
            else list(merge_tokens)
        cdef Py_ssize_t n = len(items), first, j, count
        cdef const uint8_t* pa[MERGE_BATCH]
        cdef const uint8_t* pb[MERGE_BATCH]
        cdef size_t la[MERGE_BATCH]
        cdef size_t lb[MERGE_BATCH]
        cdef bytes a, b
        cdef uint8_t* joined = NULL
        cdef size_t cap = 0
        try:
            for first in range(0, n, MERGE_BATCH):
                count = min(<Py_ssize_t>MERGE_BATCH, n - first)
                for j in range(count):
                    # the items keep every part alive
                    a, b = items[first + j]
                    pa[j] = <const uint8_t*>PyBytes_AS_STRING(a)
                    pb[j] = <const uint8_t*>PyBytes_AS_STRING(b)
                    la[j] = PyBytes_GET_SIZE(a)
                    lb[j] = PyBytes_GET_SIZE(b)
                self._add_merge_batch(pa, la, pb, lb, count, <uint32_t>first, later_wins,
                                      &joined, &cap)
        finally:
            free(joined)
        return 0

    cdef Py_ssize_t _add_merge_batch(self, const uint8_t** pa, const size_t* la,
                                     const uint8_t** pb, const size_t* lb, Py_ssize_t count,
                                     uint32_t first, bint later_wins, uint8_t** joined,
                                     size_t* cap) except -1:
        # The pairs of up to MERGE_BATCH merges spelled as bytes (merge j's
        # parts pa[j][:la[j]] and pb[j][:lb[j]], priority first + j); a merge
        # naming bytes that are no token, or whose parts spelled together are
        # none, is skipped. Returns how many were skipped. *joined (the
        # caller's to free) holds the joined spellings.
        cdef size_t at[MERGE_BATCH]
        cdef uint64_t ha[MERGE_BATCH]
        cdef uint64_t hb[MERGE_BATCH]
        cdef uint64_t hj[MERGE_BATCH]
        cdef int64_t found[3 * MERGE_BATCH]
        cdef size_t used = 0
        cdef Py_ssize_t j, skipped = 0
        cdef int64_t l, r, merged
        for j in range(count):
            at[j] = used
            used += la[j] + lb[j]
        grow_array(<void**>joined, cap, used, 1, 4096)
        for j in range(count):
            memcpy(joined[0] + at[j], pa[j], la[j])
            memcpy(joined[0] + at[j] + la[j], pb[j], lb[j])
            ha[j] = hash_bytes(pa[j], la[j])
            hb[j] = hash_bytes(pb[j], lb[j])
            hj[j] = hash_bytes(joined[0] + at[j], la[j] + lb[j])
            prefetch(&self.index.slots[_bucket(ha[j], self.index.n_buckets) * BUCKET_SLOTS])
            prefetch(&self.index.slots[_bucket(hb[j], self.index.n_buckets) * BUCKET_SLOTS])
            prefetch(&self.index.slots[_bucket(hj[j], self.index.n_buckets) * BUCKET_SLOTS])
        for j in range(count):
            l = find_hashed(&self.index, &self.strings, pa[j], la[j], ha[j])
            r = find_hashed(&self.index, &self.strings, pb[j], lb[j], hb[j])
            merged = -1
            if l >= 0 and r >= 0:
                merged = find_hashed(&self.index, &self.strings, joined[0] + at[j],
                                     la[j] + lb[j], hj[j])
            found[3 * j] = l
            found[3 * j + 1] = r
            found[3 * j + 2] = merged
            if merged >= 0:
                prefetch(&self.pairs.keys[_mix(_pair_key(<uint32_t>l, <uint32_t>r))
                                          & self.pairs.mask])
        for j in range(count):
            if found[3 * j + 2] >= 0:
                self._add_pair(<uint32_t>found[3 * j], <uint32_t>found[3 * j + 1],
                               <uint32_t>found[3 * j + 2], first + <uint32_t>j, later_wins)
            else:
                skipped += 1
        return skipped

    cdef int _derive(self, bint use_pairs) except -1:
        # Everything that follows from the strings, the index, the priorities
        # and the pairs: the view, the id of each single byte, the longest
        # token, the byte pairs found inside tokens, the value of every two
        # bytes and the atomic characters. from_bytes runs this too, so a
        # table added here is never missing from tables read back.
        cdef uint32_t i
        cdef uint8_t two[2]
        cdef uint64_t k
        cdef uint32_t bigram
        _derive_lookup(self, use_pairs)
        if use_pairs:
            self._fill_pair_filter()
        self.token_bigrams = <uint8_t*>calloc(65536 // 8, 1)
        if not self.token_bigrams:
            raise MemoryError()
        for i in range(self.strings.n):
            k = self.strings.offsets[i] + 1
            while k < self.strings.offsets[i + 1]:
                bigram = (<uint32_t>self.strings.data[k - 1] << 8) | self.strings.data[k]
                self.token_bigrams[bigram >> 3] |= <uint8_t>(1 << (bigram & 7))
                k += 1
        self.view.token_bigrams = self.token_bigrams
        self._fill_token_windows()
        self.merges_to_self = <uint8_t*>calloc(self.strings.n + 1, 1)
        if not self.merges_to_self:
            raise MemoryError()
        self.view.merges_to_self = self.merges_to_self
        self._fill_token_filter()
        self.byte_pairs = <uint64_t*>malloc(65536 * sizeof(uint64_t))
        if not self.byte_pairs:
            raise MemoryError()
        for i in range(65536):
            if not (self.token_bigrams[i >> 3] >> (i & 7)) & 1:
                # no token holds the two bytes: no lookup (a miss in the
                # index is a cache miss, and most of the 65536 pairs miss)
                self.byte_pairs[i] = NO_PAIR
                continue
            two[0] = <uint8_t>(i >> 8)
            two[1] = <uint8_t>(i & 0xFF)
            self.byte_pairs[i] = pair_value(&self.view, two, 0, 2, self.view.byte_ids[two[0]],
                                            self.view.byte_ids[two[1]])
        self.view.byte_pairs = self.byte_pairs
        self.view.atomic_chars = NULL
        self.view.atomic_contexts = NULL
        self.view.char_ids = NULL
        # without a byte that starts a 2- or 3-byte character (the special
        # tokens' tables) there is nothing atomic, and the search's 1.4 MB of
        # scratch would cost more than everything else here
        if not _has_lead_byte(self.strings.data, self.strings.offsets[self.strings.n]):
            return 0
        if not use_pairs:
            self._find_atomic_chars(self.priority)
        else:
            first_merge = self._first_merges(not self.merges_spelled)
            if first_merge == NULL:
                return 0
            try:
                self._find_atomic_chars(first_merge)
            finally:
                free(first_merge)
        self.view.atomic_chars = self.atomic_chars
        self.view.atomic_contexts = self.atomic_contexts
        if self.strings.n <= (1 << CHAR_ID_BITS):
            # calloc'd: pages are touched as characters reach them
            self.char_ids = <uint64_t*>calloc(CHAR_SLOTS, sizeof(uint64_t))
            if not self.char_ids:
                raise MemoryError()
            self.view.char_ids = self.char_ids
        return 0

    cdef uint32_t* _first_merges(self, bint check_spelling) except? NULL:
        # For a merge list: the priority of the first merge that makes each
        # token (0xFFFFFFFF for none), the bound _find_atomic_chars needs, or
        # NULL when (check_spelling) some merge makes a token that is not its
        # two parts spelled together (a continuing-subword prefix): the
        # search reasons about bytes, so it has nothing to say about those.
        cdef uint32_t* first = <uint32_t*>malloc((self.strings.n + 1) * sizeof(uint32_t))
        cdef uint64_t i, key, value
        cdef uint32_t left, right, merged, prio
        cdef const uint64_t* offsets = self.strings.offsets
        if not first:
            raise MemoryError()
        memset(first, 0xFF, (self.strings.n + 1) * sizeof(uint32_t))
        if self.pairs.keys == NULL:
            return first
        for i in range(self.pairs.mask + 1):
            key = self.pairs.keys[i]
            if key == NO_PAIR:
                continue
            left = <uint32_t>(key >> 32)
            right = <uint32_t>(key & 0xFFFFFFFFULL)
            value = self.pairs.values[i]
            merged = <uint32_t>(value & 0xFFFFFFFFULL)
            prio = <uint32_t>(value >> 32)
            if check_spelling and (left >= self.strings.n or right >= self.strings.n
                    or offsets[merged + 1] - offsets[merged]
                    != offsets[left + 1] - offsets[left] + offsets[right + 1] - offsets[right]
                    or memcmp(self.strings.data + offsets[merged], self.strings.data + offsets[left],
                              offsets[left + 1] - offsets[left]) != 0
                    or memcmp(self.strings.data + offsets[merged] + offsets[left + 1] - offsets[left],
                              self.strings.data + offsets[right],
                              offsets[right + 1] - offsets[right]) != 0):
                free(first)
                return NULL
            if prio < first[merged]:
                first[merged] = prio
        return first

    cdef int _fill_token_filter(self) except -1:
        # About 10 bits per token: a lookup of bytes that are no token (95%
        # of the pair lookups on Chinese text) then stops at the filter 9
        # times in 10. o200k_base's filter is 256 KB, which stays in the L2
        # cache; its index is 4 MB, where a probe costs a cache miss. The
        # filter takes a fifth off the time of encoding zh.txt.
        cdef uint64_t bits = 1024, bit
        cdef uint32_t i
        while bits < 10 * <uint64_t>self.strings.n:
            bits <<= 1
        self.token_filter = <uint64_t*>calloc(bits // 64, sizeof(uint64_t))
        if not self.token_filter:
            raise MemoryError()
        for i in range(self.strings.n):
            bit = hash_bytes(self.strings.data + self.strings.offsets[i],
                             self.strings.offsets[i + 1] - self.strings.offsets[i]) & (bits - 1)
            self.token_filter[bit >> 6] |= 1ULL << (bit & 63)
        self.view.token_filter = self.token_filter
        self.view.filter_mask = bits - 1
        return 0

    cdef int _fill_token_windows(self) except -1:
        # token_edges and token_windows, 2 bits for each window of each
        # token: windows repeat (a token's prefixes are tokens), so that is
        # ~16 bits a distinct window (cl100k_base 128 KB, o200k_base 256 KB:
        # a check stays in the L2 cache, 5% of them false positives)
        cdef uint64_t bits = 1024, windows = 0, bit, k, first, end
        cdef uint32_t i, pair
        cdef const uint8_t* data = self.strings.data
        for i in range(self.strings.n):
            if self.strings.offsets[i + 1] - self.strings.offsets[i] > 3:
                windows += self.strings.offsets[i + 1] - self.strings.offsets[i] - 3
        while bits < 2 * windows:
            bits <<= 1
        self.token_edges = <uint8_t*>calloc(65536 // 8, 1)
        self.token_windows = <uint64_t*>calloc(bits // 64, sizeof(uint64_t))
        if not self.token_edges or not self.token_windows:
            raise MemoryError()
        for i in range(self.strings.n):
            first = self.strings.offsets[i]
            end = self.strings.offsets[i + 1]
            if end - first < 2:
                continue
            pair = (<uint32_t>data[first] << 8) | data[first + 1]
            self.token_edges[pair >> 3] |= <uint8_t>(1 << (pair & 7))
            pair = (<uint32_t>data[end - 2] << 8) | data[end - 1]
            self.token_edges[pair >> 3] |= <uint8_t>(1 << (pair & 7))
            k = first
            while k + 4 <= end:
                bit = window_bit(data + k, bits - 1)
                self.token_windows[bit >> 6] |= 1ULL << (bit & 63)
                k += 1
        self.view.token_edges = self.token_edges
        self.view.token_windows = self.token_windows
        self.view.windows_mask = bits - 1
        return 0

    cdef int _fill_pair_filter(self) except -1:
        cdef uint64_t bits = 1024, bit, i, key
        while bits < 10 * <uint64_t>self.n_pairs:
            bits <<= 1
        self.pairs.filter = <uint64_t*>calloc(bits // 64, sizeof(uint64_t))
        if not self.pairs.filter:
            raise MemoryError()
        self.pairs.filter_mask = bits - 1
        for i in range(self.pairs.mask + 1):
            key = self.pairs.keys[i]
            if key != NO_PAIR:
                bit = _pair_filter_bit(key, self.pairs.filter_mask)
                self.pairs.filter[bit >> 6] |= 1ULL << (bit & 63)
        return 0

    cdef int _find_atomic_chars(self, const uint32_t* made_at) except -1:
        # A character c of bytes b1 b2 [b3] is atomic in a context when every
        # merge that would cut across its edges there has a larger priority
        # than the merges that build c's token from its bytes: BPE always
        # takes the smallest candidate and c's own next merge stays one until
        # c is whole, so c is whole before anything crosses its edges. A part
        # crossing c's left edge is a token ending with a byte x of what
        # precedes c and then a proper prefix of c (b1, or b1 b2); one
        # crossing the right edge starts with a proper suffix (b3, or b2 b3)
        # then a byte y of what follows. The context is the class of x (none:
        # c starts the piece; ASCII; a continuation byte, ending a
        # character) and of y (none; ASCII; a lead byte): a class stands for
        # all its bytes, so the test is conservative. 4-byte characters are
        # left as bytes. made_at[t] bounds from below the priority of any
        # merge that makes token t: its rank, or with a merge list the first
        # merge that makes it. c's own merges are asked of pair_value, so a
        # merge list that never builds c leaves it bytes.
        cdef uint32_t* end1 = <uint32_t*>malloc(2 * 256 * sizeof(uint32_t))
        cdef uint32_t* end2 = <uint32_t*>malloc(2 * 65536 * sizeof(uint32_t))
        cdef uint32_t* start1 = <uint32_t*>malloc(2 * 256 * sizeof(uint32_t))
        cdef uint32_t* start2 = <uint32_t*>malloc(2 * 65536 * sizeof(uint32_t))
        cdef uint32_t i, prio, q, first, cp
        cdef uint32_t left[3]
        cdef uint32_t right[3]
        cdef uint64_t length, k, v12, v23, second
        cdef const uint8_t* p
        cdef int lc, rc, cls
        cdef uint16_t mask
        self.atomic_chars = <uint32_t*>malloc(65536 * sizeof(uint32_t))
        self.atomic_contexts = <uint16_t*>calloc(65536, sizeof(uint16_t))
        try:
            if (not end1 or not end2 or not start1 or not start2 or not self.atomic_chars
                    or not self.atomic_contexts):
                raise MemoryError()
            memset(end1, 0xFF, 2 * 256 * sizeof(uint32_t))
            memset(end2, 0xFF, 2 * 65536 * sizeof(uint32_t))
            memset(start1, 0xFF, 2 * 256 * sizeof(uint32_t))
            memset(start2, 0xFF, 2 * 65536 * sizeof(uint32_t))
            memset(self.atomic_chars, 0xFF, 65536 * sizeof(uint32_t))
            for i in range(self.strings.n):
                if not self.strings.present[i]:
                    continue
                p = self.strings.data + self.strings.offsets[i]
                length = self.strings.offsets[i + 1] - self.strings.offsets[i]
                if length < 2:
                    continue
                prio = made_at[i]
                # ends with x, then a lead byte (or a 3-byte lead and one continuation)
                if p[length - 1] >= 0xC0:
                    cls = _byte_class_before(p[length - 2])
                    if cls >= 0:
                        k = cls * 256 + p[length - 1]
                        end1[k] = min(end1[k], prio)
                elif (length >= 3 and 0xE0 <= p[length - 2] < 0xF0
                      and 0x80 <= p[length - 1] < 0xC0):
                    cls = _byte_class_before(p[length - 3])
                    if cls >= 0:
                        k = cls * 65536 + ((<uint64_t>p[length - 2] << 8) | p[length - 1])
                        end2[k] = min(end2[k], prio)
                # starts with one or two continuation bytes, then y
                if 0x80 <= p[0] < 0xC0:
                    if 0x80 <= p[1] < 0xC0:
                        if length >= 3:
                            cls = _byte_class_after(p[2])
                            if cls >= 0:
                                k = cls * 65536 + ((<uint64_t>p[0] << 8) | p[1])
                                start2[k] = min(start2[k], prio)
                    else:
                        cls = _byte_class_after(p[1])
                        if cls >= 0:
                            k = cls * 256 + p[0]
                            start1[k] = min(start1[k], prio)
            for i in range(self.strings.n):
                if not self.strings.present[i]:
                    continue
                p = self.strings.data + self.strings.offsets[i]
                length = self.strings.offsets[i + 1] - self.strings.offsets[i]
                left[0] = 0xFFFFFFFF
                right[0] = 0xFFFFFFFF
                if length == 2 and 0xC2 <= p[0] < 0xE0 and 0x80 <= p[1] < 0xC0:
                    v12 = pair_value(&self.view, p, 0, 2, self.view.byte_ids[p[0]], self.view.byte_ids[p[1]])
                    if v12 == NO_PAIR or <uint32_t>(v12 & 0xFFFFFFFFULL) != i:
                        continue
                    q = <uint32_t>(v12 >> 32)
                    cp = ((p[0] & 0x1F) << 6) | (p[1] & 0x3F)
                    for cls in range(2):
                        left[cls + 1] = end1[cls * 256 + p[0]]
                        right[cls + 1] = start1[cls * 256 + p[1]]
                elif (length == 3 and 0xE0 <= p[0] < 0xF0 and 0x80 <= p[1] < 0xC0
                      and 0x80 <= p[2] < 0xC0 and (p[0] != 0xE0 or p[1] >= 0xA0)):
                    # BPE of c alone: the lower of its two byte pairs first
                    v12 = pair_value(&self.view, p, 0, 2, self.view.byte_ids[p[0]], self.view.byte_ids[p[1]])
                    v23 = pair_value(&self.view, p, 1, 3, self.view.byte_ids[p[1]], self.view.byte_ids[p[2]])
                    if (v12 | 0xFFFFFFFFULL) <= (v23 | 0xFFFFFFFFULL):
                        if v12 == NO_PAIR:
                            continue
                        first = <uint32_t>(v12 >> 32)
                        second = pair_value(&self.view, p, 0, 3, <uint32_t>(v12 & 0xFFFFFFFFULL),
                                            self.view.byte_ids[p[2]])
                    else:
                        first = <uint32_t>(v23 >> 32)
                        second = pair_value(&self.view, p, 0, 3, self.view.byte_ids[p[0]],
                                            <uint32_t>(v23 & 0xFFFFFFFFULL))
                    if second == NO_PAIR or <uint32_t>(second & 0xFFFFFFFFULL) != i:
                        continue
                    q = max(first, <uint32_t>(second >> 32))
                    cp = ((p[0] & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F)
                    for cls in range(2):
                        left[cls + 1] = min(end1[cls * 256 + p[0]],
                                            end2[cls * 65536 + ((<uint32_t>p[0] << 8) | p[1])])
                        right[cls + 1] = min(start1[cls * 256 + p[2]],
                                             start2[cls * 65536 + ((<uint32_t>p[1] << 8) | p[2])])
                else:
                    continue
                mask = 0
                for lc in range(3):
                    for rc in range(3):
                        if q < left[lc] and q < right[rc]:
                            mask |= 1 << (lc * 3 + rc)
                if mask:
                    self.atomic_chars[cp] = i
                    self.atomic_contexts[cp] = mask
        finally:
            free(end1)
            free(end2)
            free(start1)
            free(start2)
        return 0

    cdef int _build_index(self) except -1:
        # at most 3/4 full, and at least one empty slot so every probe ends
        cdef uint64_t n_buckets = (self.strings.n * 4 // 3) // BUCKET_SLOTS + 1
        cdef uint32_t i
        cdef uint64_t h, slot
        cdef const uint8_t* p
        cdef uint64_t length
        self.index.n_buckets = n_buckets
        self.index.slots = <IndexSlot*>calloc(n_buckets * BUCKET_SLOTS, sizeof(IndexSlot))
        self.index.tails = <uint64_t*>calloc(n_buckets * BUCKET_SLOTS, sizeof(uint64_t))
        if not self.index.slots or not self.index.tails:
            raise MemoryError()
        for i in range(self.strings.n):
            if not self.strings.present[i]:
                continue
            p = self.strings.data + self.strings.offsets[i]
            length = self.strings.offsets[i + 1] - self.strings.offsets[i]
            if find_bytes(&self.index, &self.strings, p, length) >= 0:
                continue  # a duplicate spelling keeps its lowest id
            h = hash_bytes(p, length)
            slot = _bucket(h, n_buckets) * BUCKET_SLOTS
            while self.index.slots[slot].id1 != 0:
                slot += 1
                if slot == n_buckets * BUCKET_SLOTS:
                    slot = 0
            self.index.slots[slot].id1 = i + 1
            self.index.slots[slot].tag = _tag(h, length)
            self.index.slots[slot].word = _head(p, length)
            if length > 8:
                memcpy(&self.index.tails[slot], p + length - 8, 8)
        return 0

    cdef int _alloc_pairs(self, uint64_t expected) except -1:
        cdef uint64_t cap = _capacity_for(expected)
        cdef uint64_t i
        self.pairs.mask = cap - 1
        self.pairs.keys = <uint64_t*>malloc(cap * sizeof(uint64_t))
        # zeroed: to_bytes writes the values of empty slots too
        self.pairs.values = <uint64_t*>calloc(cap, sizeof(uint64_t))
        if not self.pairs.keys or not self.pairs.values:
            raise MemoryError()
        for i in range(cap):
            self.pairs.keys[i] = NO_PAIR
        self.n_pairs = 0
        return 0

    cdef int _add_pair(self, uint32_t left, uint32_t right, uint32_t merged, uint32_t priority,
                       bint later_wins=False) except -1:
        # a pair listed twice keeps its first merge (llama.cpp's emplace), or
        # with later_wins its last (tokenizers' map of merges)
        cdef uint64_t key = _pair_key(left, right)
        cdef uint64_t i = _mix(key) & self.pairs.mask
        while self.pairs.keys[i] != NO_PAIR:
            if self.pairs.keys[i] == key:
                if later_wins:
                    self.pairs.values[i] = (<uint64_t>priority << 32) | merged
                return 0
            i = (i + 1) & self.pairs.mask
        self.pairs.keys[i] = key
        self.pairs.values[i] = (<uint64_t>priority << 32) | merged
        self.n_pairs += 1
        return 0

    def __dealloc__(self):
        if self.backing is None:
            free_strings(&self.strings)
            free(self.index.slots)
            free(self.index.tails)
            free(self.pairs.keys)
            free(self.pairs.values)
            free(self.priority)
        free(self.pairs.filter)
        free(self.byte_pairs)
        free(self.atomic_chars)
        free(self.atomic_contexts)
        free(self.token_bigrams)
        free(self.token_edges)
        free(self.token_windows)
        free(self.merges_to_self)
        free(self.char_ids)
        free(self.token_filter)

    def __len__(self):
        return self.strings.n

    def to_bytes(self):
        """The tables as bytes that :meth:`from_bytes` reads back without
        rebuilding the index (native byte order: a cache for this machine).

        >>> t = TokenTables([b"a", b"b", b"ab"])
        >>> TokenTables.from_bytes(t.to_bytes()).find(b"ab")
        2
        """
        cdef uint64_t n = self.strings.n
        cdef uint64_t header[PAYLOAD_WORDS]
        # the last word: 0 ranks, 1 a merge list, 2 one whose merges spell their tokens
        header[:] = [n, self.strings.offsets[n], self.index.n_buckets, self.pairs.mask + 1,
                     self.view.use_pairs + (self.view.use_pairs and self.merges_spelled)]
        at, end = _payload_layout(header)
        cdef bytes out = PyBytes_FromStringAndSize(NULL, end)
        cdef uint8_t* p = <uint8_t*>PyBytes_AS_STRING(out)
        memset(p, 0, end)
        memcpy(p, header, sizeof(header))
        memcpy(p + <uint64_t>at[0], self.strings.offsets, (n + 1) * sizeof(uint64_t))
        memcpy(p + <uint64_t>at[1], self.strings.present, n + 1)
        memcpy(p + <uint64_t>at[2], self.strings.data, header[1])
        memcpy(p + <uint64_t>at[3], self.index.slots, header[2] * BUCKET_SLOTS * sizeof(IndexSlot))
        memcpy(p + <uint64_t>at[4], self.priority, n * sizeof(uint32_t))
        memcpy(p + <uint64_t>at[5], self.pairs.keys, header[3] * sizeof(uint64_t))
        memcpy(p + <uint64_t>at[6], self.pairs.values, header[3] * sizeof(uint64_t))
        memcpy(p + <uint64_t>at[7], self.index.tails, header[2] * BUCKET_SLOTS * sizeof(uint64_t))
        return out

    @staticmethod
    def from_bytes(bytes data not None, Py_ssize_t start=0):
        """The tables :meth:`to_bytes` wrote, from ``data[start:]`` (which
        must end where they end), without copying them: the arrays point into
        ``data``, which the tables keep alive. Anything else (a wrong size, a
        misaligned start, an offset or id outside the tables, a hash table
        without an empty slot) raises ``ValueError`` before any lookup runs.

        >>> data = TokenTables([b"a"]).to_bytes()
        >>> TokenTables.from_bytes(data[:-8])
        Traceback (most recent call last):
        ValueError: serialized tables: 424 bytes, expected 432
        """
        cdef Py_ssize_t size = PyBytes_GET_SIZE(data) - start
        cdef const uint8_t* p
        cdef uint64_t header[PAYLOAD_WORDS]
        cdef TokenTables self
        if start < 0 or size < <Py_ssize_t>sizeof(header):
            raise ValueError(f"serialized tables: {max(size, 0)} bytes, shorter than their header")
        p = <const uint8_t*>PyBytes_AS_STRING(data) + start
        if <size_t>p % sizeof(uint64_t):
            raise ValueError("serialized tables: not 8-byte aligned in memory")
        memcpy(header, p, sizeof(header))
        n, data_len, n_buckets, pair_cap, use_pairs = header
        if n >= NO_TOKEN or n_buckets == 0 or pair_cap < 16 or pair_cap & (pair_cap - 1) or use_pairs > 2:
            raise ValueError(f"serialized tables: impossible header {list(header)}")
        at, end = _payload_layout(header)
        if end != size:
            raise ValueError(f"serialized tables: {size} bytes, expected {end}")
        self = TokenTables.__new__(TokenTables)
        self.backing = data
        self.strings.n = <uint32_t>n
        self.strings.offsets = <uint64_t*>(p + <uint64_t>at[0])
        self.strings.present = <uint8_t*>(p + <uint64_t>at[1])
        self.strings.data = <uint8_t*>(p + <uint64_t>at[2])
        self.index.slots = <IndexSlot*>(p + <uint64_t>at[3])
        self.index.n_buckets = n_buckets
        # (tails are compared, never followed: a wrong one gives a wrong id, no wrong read)
        self.index.tails = <uint64_t*>(p + <uint64_t>at[7])
        self.priority = <uint32_t*>(p + <uint64_t>at[4])
        self.pairs.keys = <uint64_t*>(p + <uint64_t>at[5])
        self.pairs.values = <uint64_t*>(p + <uint64_t>at[6])
        self.pairs.mask = pair_cap - 1
        self._check_loaded(data_len)
        self.merges_spelled = use_pairs == 2
        self._derive(use_pairs > 0)
        return self

    cdef int _check_loaded(self, uint64_t data_len) except -1:
        # Read-back tables are checked as if hostile, since every lookup
        # trusts them: offsets that stay inside the bytes, index and pair
        # entries that name ordinary tokens, and an empty slot in each hash
        # table (a probe ends only at one).
        cdef uint64_t i, n = self.strings.n
        cdef const uint64_t* offsets = self.strings.offsets
        cdef const uint8_t* present = self.strings.present
        cdef const IndexSlot* slot
        cdef uint64_t merged
        cdef bint empty = False
        if offsets[0] != 0 or offsets[n] != data_len:
            raise ValueError("serialized tables: token offsets do not span the token bytes")
        for i in range(n):
            if (offsets[i + 1] < offsets[i] or present[i] > 1
                    or (not present[i] and offsets[i + 1] != offsets[i])):
                raise ValueError(f"serialized tables: token {i} has impossible offsets")
        for i in range(self.index.n_buckets * BUCKET_SLOTS):
            slot = &self.index.slots[i]
            if slot.id1 == 0:
                empty = True
            elif slot.id1 > n or not present[slot.id1 - 1]:
                raise ValueError(f"serialized tables: index slot {i} names no token")
        if not empty:
            raise ValueError("serialized tables: the index has no empty slot")
        empty = False
        self.n_pairs = 0
        for i in range(self.pairs.mask + 1):
            if self.pairs.keys[i] == NO_PAIR:
                empty = True
                continue
            merged = self.pairs.values[i] & 0xFFFFFFFFULL
            if merged >= n or not present[merged]:
                raise ValueError(f"serialized tables: pair slot {i} names no token")
            self.n_pairs += 1
        if not empty:
            raise ValueError("serialized tables: the pair index has no empty slot")
        return 0

    def tokens(self):
        """The bytes of every id (``None`` for ids without ordinary bytes):
        what the constructor was given.

        >>> TokenTables([b"x", None, b"yz"]).tokens()
        (b'x', None, b'yz')
        """
        cdef uint32_t i, n = self.strings.n
        cdef tuple out = PyTuple_New(n)
        cdef object item
        for i in range(n):
            if self.strings.present[i]:
                item = PyBytes_FromStringAndSize(<char*>self.strings.data + self.strings.offsets[i],
                                                 self.strings.offsets[i + 1] - self.strings.offsets[i])
            else:
                item = None
            Py_INCREF(item)
            PyTuple_SET_ITEM(out, i, item)
        return out

    @property
    def atomic_char_count(self):
        """How many characters merging may start from whole."""
        cdef size_t i, count = 0
        if self.atomic_chars == NULL:
            return 0
        for i in range(65536):
            if self.atomic_chars[i] != NO_TOKEN:
                count += 1
        return count

    def find(self, bytes data not None):
        """The id of the ordinary token spelled ``data``, or -1.

        >>> TokenTables([b"x", b"y"]).find(b"y")
        1
        """
        return find_bytes(&self.index, &self.strings,
                          <const uint8_t*>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))

    def pair(self, uint32_t left, uint32_t right):
        """``(merged id, priority)`` if two adjacent tokens merge, else ``None``.

        >>> TokenTables([b"a", b"b", b"ab"]).pair(1, 0) is None
        True
        """
        if left >= self.strings.n or right >= self.strings.n:
            return None
        cdef uint64_t v
        if self.view.use_pairs:
            v = find_pair(&self.pairs, left, right)
        else:
            v = NO_PAIR
            if self.strings.present[left] and self.strings.present[right]:
                merged = self.find(self.token_bytes(left) + self.token_bytes(right))
                if merged >= 0:
                    v = (<uint64_t>self.priority[merged] << 32) | <uint32_t>merged
        if v == NO_PAIR:
            return None
        return (<uint32_t>(v & 0xFFFFFFFF), <uint32_t>(v >> 32))

    def token_bytes(self, token):
        """The bytes of an ordinary token; ``KeyError`` for any other id.

        >>> TokenTables([b"x"]).token_bytes(0)
        b'x'
        """
        cdef long long t = token_id(token)
        if t < 0 or <uint64_t>t >= self.strings.n or not self.strings.present[t]:
            raise KeyError(token)
        cdef uint64_t a = self.strings.offsets[t], b = self.strings.offsets[t + 1]
        return (<char*>self.strings.data)[a:b]
