"""BPE training, compiled: a pre-token counter and the merge loop.

Training runs in two passes, as ``rustbpe`` and Hugging Face ``tokenizers``
run it. First every text is cut into pre-tokens (a hand-written scanner
from :mod:`fasttok.pre_tokenizers._pretokenize` with the GIL released, or
pieces found by the pattern's ``re`` translation, or words a compiled
normalizer wrote back to back into one buffer) and each distinct
pre-token's bytes are counted in :class:`PieceCounter`, an open-addressing
table over one byte arena. The corpus itself is never held.

Then :class:`BpeCore` merges on the distinct pre-tokens ("words"), each
weighted by its count. A pair's count is the number of places it stands
in the words, overlapping ones included (``aaaa`` holds ``(a, a)`` three
times), times the word's count. The pair to merge is the one of the highest
count; among equal counts the smallest ``(left id, right id)``. A word merges
its occurrences left to right without overlap (``aaaaa`` becomes ``X X a``).
The counts are kept incrementally: merging one occurrence removes the pairs
it had with its neighbours and adds those of the new token. The queue is
the code base's 4-ary heap (``RankedHeap`` of ``fasttok/models/_bpe.pxd``),
ordered by (highest count, lowest pair), with lazy invalidation: an entry
whose count has fallen since it was queued goes back with the current one
when it reaches the top. Each entry owns the list of words where its pair
was seen when it was queued; a merge visits only those.

The symbols are the 256 bytes by default. For tokenizers' other options
(``hf`` only) the alphabet is any list of units -- bytes, or the code
points of UTF-8 words -- with tokens before it (the special tokens), and
each unit may be spelt with a continuing prefix (inside a word) or an end
suffix (at its end): the spellings get ids the first time the words, read
in byte order, need them. A unit outside the alphabet is left out of its
word. ``max_token_length`` keeps a pair a merge makes out of the counts when
its two sides stand for that many units or more. The merge rule is the same
for every alphabet.

The two references differ in four rules, each a switch here (``hf``):

- ids before merging: rustbpe's are the byte values; tokenizers' are
  specials first, then the alphabet sorted by the GPT-2 stand-in character
  of each byte (printable bytes in byte order, then the rest), so equal
  counts break ties in a different order;
- a merge whose bytes are already a token: rustbpe gives it a new id anyway
  (its ranks may then list the same bytes twice); tokenizers reuses the id
  and the merge does not count towards the vocabulary size;
- tokenizers never subtracts a merged pair's own occurrences (the pair has
  left the queue, so only a reused id could bring it back, with the old
  count still in it), and queues a stale entry again even when its count
  has fallen to zero; rustbpe does neither;
- both stop when the vocabulary is full, when no pair is left, or (here, for
  both) when the best count is below ``min_frequency``.

Entries with the same count and the same pair (possible only with reused
ids, in tokenizers) leave the queue in an order neither reference defines.

Design notes. Recounting every pair of every word for each merge (minbpe's
way) costs the corpus's distinct pre-tokens per merge; the position lists
make a merge cost only the words that hold its pair. The queue keeps both
references' lazy entries (one list per entry) rather than a decrease-key
heap, because the lists are what decide which words a merge visits, and
both references visit exactly those. Measured on the whole shared corpus
(10.5 MB, 233k distinct pre-tokens; ``bench/test_train_bench.py``): to 32k
tokens 1.8-3.6 s against rustbpe's 4.8-10.5 s and tokenizers' 32-41 s (two
runs on a busy machine), peak 170 MiB against 211 and 400.
"""

from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, qsort
from libc.string cimport memcmp, memcpy, memset

from fasttok.models._bpe cimport RankedHeap, heap_pop, heap_push
from fasttok.pre_tokenizers._pretokenize cimport ScanFn, scanner_by_name
from fasttok.shared._growth cimport grow_array
from fasttok.shared._tables cimport hash_bytes
from fasttok.shared._utf8 cimport utf8_get, utf8_put

cdef uint64_t EMPTY_PAIR = 0xFFFFFFFFFFFFFFFFULL
cdef uint64_t NO_COUNT = 0xFFFFFFFFFFFFFFFFULL  # heap key of count 0; key = NO_COUNT - count
cdef uint32_t NO_UNIT = 0xFFFFFFFFU


cdef class PieceCounter:
    """Distinct pre-tokens and their counts, counted without the GIL.

    ``scanner`` names a compiled pre-tokenizer (see
    :func:`fasttok.pre_tokenizers.patterns.scanner_for`); without one, pieces
    are added with :meth:`add_pieces`.

    >>> c = PieceCounter("cl100k")
    >>> c.add_texts(["hello hello world"])
    >>> sorted(c.items())
    [(b' hello', 1), (b' world', 1), (b'hello', 1)]
    """

    def __cinit__(self, str scanner=None):
        self.mask = 1023
        self.slots = <PieceSlot*>malloc((self.mask + 1) * sizeof(PieceSlot))
        if self.slots == NULL:
            raise MemoryError()
        memset(self.slots, 0, (self.mask + 1) * sizeof(PieceSlot))
        self.scan = scanner_by_name(scanner) if scanner is not None else NULL

    def __dealloc__(self):
        free(self.slots)
        free(self.arena)

    def __len__(self):
        return self.used

    cdef int grow(self) except -1 nogil:
        cdef size_t cap = (self.mask + 1) * 2, i, j
        cdef PieceSlot* old = self.slots
        cdef PieceSlot* slots = <PieceSlot*>malloc(cap * sizeof(PieceSlot))
        if slots == NULL:
            with gil:
                raise MemoryError()
        memset(slots, 0, cap * sizeof(PieceSlot))
        for i in range(self.mask + 1):
            if old[i].hash:
                j = old[i].hash & (cap - 1)
                while slots[j].hash:
                    j = (j + 1) & (cap - 1)
                slots[j] = old[i]
        self.slots = slots
        self.mask = cap - 1
        free(old)
        return 0

    cdef int add(self, const uint8_t* p, size_t n, int64_t count) except -1 nogil:
        cdef uint64_t h = hash_bytes(p, n) | 1  # never 0, the empty mark
        cdef size_t i = h & self.mask
        cdef PieceSlot* s
        while True:
            s = &self.slots[i]
            if s.hash == 0:
                break
            if s.hash == h and s.length == n and memcmp(self.arena + s.offset, p, n) == 0:
                s.count += count
                return 0
            i = (i + 1) & self.mask
        grow_array(<void**>&self.arena, &self.arena_cap, self.arena_len + n, 1, 1 << 16)
        memcpy(self.arena + self.arena_len, p, n)
        s.hash = h
        s.offset = self.arena_len
        s.length = <uint32_t>n
        s.count = count
        self.arena_len += n
        self.used += 1
        if 2 * self.used > self.mask:
            self.grow()
        return 0

    cdef int scan_text(self, const uint8_t* s, Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t i = 0, end
        while i < n:
            end = self.scan(s, i, n)
            self.add(s + i, end - i, 1)
            i = end
        self.n_bytes += n
        return 0

    def add_texts(self, list texts):
        """Count the pre-tokens of each str in ``texts`` with the compiled
        scanner (the GIL is released while scanning).

        >>> c = PieceCounter("gpt2"); c.add_texts(["a a", "a"]); sorted(c.items())
        [(b' a', 1), (b'a', 2)]
        """
        cdef Py_ssize_t k, n = len(texts)
        cdef const char** ptrs
        cdef Py_ssize_t* lens
        if self.scan == NULL:
            raise ValueError("this counter has no scanner: add pieces with add_pieces")
        ptrs = <const char**>malloc((n + 1) * sizeof(char*))
        lens = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        try:
            if ptrs == NULL or lens == NULL:
                raise MemoryError()
            for k in range(n):
                text = texts[k]
                if not isinstance(text, str):
                    raise TypeError(f"texts must be str, not {type(text).__name__}")
                ptrs[k] = PyUnicode_AsUTF8AndSize(text, &lens[k])
            with nogil:
                for k in range(n):
                    self.scan_text(<const uint8_t*>ptrs[k], lens[k])
        finally:
            free(ptrs)
            free(lens)

    def add_pieces(self, pieces, Py_ssize_t n_bytes=0, int64_t count=1):
        """Count pre-tokens found elsewhere (a pattern without a compiled
        scanner), each ``count`` times (empty ones not at all); ``n_bytes``
        is the size of the text they came from.

        >>> c = PieceCounter(); c.add_pieces(["ab", "ab", "c", ""], 3); sorted(c.items()), c.n_bytes
        ([(b'ab', 2), (b'c', 1)], 3)
        """
        cdef bytes b
        for piece in pieces:
            b = piece.encode("utf-8") if isinstance(piece, str) else bytes(piece)
            if len(b):
                self.add(<const uint8_t*><char*>b, len(b), count)
        self.n_bytes += n_bytes

    def add_words(self, const uint8_t[::1] words not None, const uint64_t[::1] ends not None,
                  Py_ssize_t n_bytes=0):
        """Count once each word of ``words``, a buffer of them back to back
        where word i ends at ``ends[i]`` (and starts where the one before
        ended, the first at 0); empty ones not at all; ``n_bytes`` as for
        :meth:`add_pieces`. The GIL is released while counting.

        >>> from array import array
        >>> c = PieceCounter(); c.add_words(b"abcab", array("Q", [2, 3, 3, 5]), 6)
        >>> sorted(c.items()), c.n_bytes
        ([(b'ab', 2), (b'c', 1)], 6)
        """
        cdef size_t i, a = 0, n = ends.shape[0]
        cdef const uint8_t* p = &words[0] if words.shape[0] else NULL
        for i in range(n):
            if ends[i] < a or ends[i] > <size_t>words.shape[0]:
                raise ValueError(f"ends[{i}] is {ends[i]}: the ends must rise, up to "
                                 f"len(words) = {words.shape[0]}")
            a = ends[i]
        a = 0
        with nogil:
            for i in range(n):
                if ends[i] > a:
                    self.add(p + a, ends[i] - a, 1)
                a = ends[i]
        self.n_bytes += n_bytes

    def add_counts(self, counts):
        """Add ``{pre-token bytes: count}`` (a counter built elsewhere).

        >>> c = PieceCounter(); c.add_counts({b"abab": 3}); c.add_counts({b"abab": 1}); c.items()
        [(b'abab', 4)]
        """
        cdef bytes b
        for piece, count in counts.items():
            b = bytes(piece)
            self.add(<const uint8_t*><char*>b, len(b), count)

    def merge(self, PieceCounter other):
        """Add another counter's pre-tokens (one counter per thread, merged at the end).

        >>> a = PieceCounter(); a.add_pieces(["x"]); b = PieceCounter(); b.add_pieces(["x", "y"])
        >>> a.merge(b); sorted(a.items())
        [(b'x', 2), (b'y', 1)]
        """
        cdef size_t i
        for i in range(other.mask + 1):
            if other.slots[i].hash:
                self.add(other.arena + other.slots[i].offset, other.slots[i].length,
                         other.slots[i].count)
        self.n_bytes += other.n_bytes

    def prune(self, int64_t below):
        """Drop every pre-token counted fewer than ``below`` times (arena and
        table rebuilt, so memory follows what is kept); returns how many went.

        >>> c = PieceCounter(); c.add_counts({b"a": 3, b"b": 1, b"c": 2})
        >>> c.prune(2), sorted(c.items())
        (1, [(b'a', 3), (b'c', 2)])
        """
        cdef size_t i, j, cap = self.mask + 1, kept = 0, kept_bytes = 0
        cdef PieceSlot* slots
        cdef uint8_t* arena
        for i in range(cap):
            if self.slots[i].hash and self.slots[i].count >= below:
                kept += 1
                kept_bytes += self.slots[i].length
        while cap > 1024 and 4 * kept < cap:
            cap //= 2
        slots = <PieceSlot*>calloc(cap, sizeof(PieceSlot))
        arena = <uint8_t*>malloc(kept_bytes + 1)
        if slots == NULL or arena == NULL:
            free(slots)
            free(arena)
            raise MemoryError()
        kept_bytes = 0
        for i in range(self.mask + 1):
            if self.slots[i].hash and self.slots[i].count >= below:
                j = self.slots[i].hash & (cap - 1)
                while slots[j].hash:
                    j = (j + 1) & (cap - 1)
                slots[j] = self.slots[i]
                slots[j].offset = kept_bytes
                memcpy(arena + kept_bytes, self.arena + self.slots[i].offset,
                       self.slots[i].length)
                kept_bytes += self.slots[i].length
        dropped = self.used - kept
        free(self.slots)
        free(self.arena)
        self.slots = slots
        self.mask = cap - 1
        self.arena = arena
        self.arena_len = kept_bytes
        self.arena_cap = kept_bytes + 1
        self.used = kept
        return dropped

    def unit_counts(self, bint chars):
        """``{unit: count}``: how often each byte (or, with ``chars``, each
        code point of the UTF-8 pre-tokens) occurs, each pre-token weighted
        by its count -- what tokenizers' ``limit_alphabet`` cut ranks by.

        >>> c = PieceCounter(); c.add_counts({"aé".encode(): 2, b"a": 1})
        >>> c.unit_counts(True), c.unit_counts(False)[0x61]
        ({97: 3, 233: 2}, 3)
        """
        cdef size_t i, k, n, size = 0x110000 if chars else 256
        cdef const uint8_t* p
        cdef uint32_t cp
        cdef int64_t* counts = <int64_t*>calloc(size, sizeof(int64_t))
        if counts == NULL:
            raise MemoryError()
        try:
            with nogil:
                for i in range(self.mask + 1):
                    if self.slots[i].hash == 0:
                        continue
                    p = self.arena + self.slots[i].offset
                    n = self.slots[i].length
                    k = 0
                    while k < n:
                        cp = _next_unit(p, n, &k, chars)
                        counts[cp] += self.slots[i].count
            return {u: counts[u] for u in range(size) if counts[u]}
        finally:
            free(counts)

    def items(self):
        """``(pre-token bytes, count)`` for every distinct pre-token, in no set order.

        >>> PieceCounter().items()
        []
        """
        cdef size_t i
        return [(self.arena[self.slots[i].offset:self.slots[i].offset + self.slots[i].length],
                 self.slots[i].count) for i in range(self.mask + 1) if self.slots[i].hash]


cdef inline uint32_t _next_unit(const uint8_t* p, size_t n, size_t* k, bint chars) noexcept nogil:
    # The byte or the code point at p[k[0]] (the text is valid UTF-8: it
    # came from a str); moves k past it.
    cdef size_t i = k[0]
    cdef uint32_t c = p[i]
    if not chars or c < 0x80:
        k[0] = i + 1
        return c
    k[0] = i + utf8_get(p + i, n - i, &c)
    return c


cdef inline size_t _unit_slot(uint32_t unit, size_t mask) noexcept nogil:
    return <size_t>((unit * 0x9E3779B1U) >> 7) & mask


# the words sorted by their bytes, so that spellings get their ids in an
# order that does not depend on how the counter was filled (qsort has no
# context argument; the sort runs with the GIL held, one at a time)
cdef PieceSlot* _sorting_slots
cdef uint8_t* _sorting_arena


cdef int _by_bytes(const void* x, const void* y) noexcept nogil:
    cdef PieceSlot* a = &_sorting_slots[(<const size_t*>x)[0]]
    cdef PieceSlot* b = &_sorting_slots[(<const size_t*>y)[0]]
    cdef size_t n = a.length if a.length < b.length else b.length
    cdef int c = memcmp(_sorting_arena + a.offset, _sorting_arena + b.offset, n)
    if c:
        return c
    return (a.length > b.length) - (a.length < b.length)


cdef inline size_t _pair_slot(uint64_t pair, size_t mask) noexcept nogil:
    return <size_t>((pair * 0x9E3779B97F4A7C15ULL) >> 20) & mask


# hf's ids of the 256 bytes: the order of their GPT-2 stand-in characters
cdef uint8_t HF_BYTE_ORDER[256]


cdef void _hf_order() noexcept:
    cdef int b, n = 0
    for b in range(256):
        if 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF:
            HF_BYTE_ORDER[n] = b
            n += 1
    for b in range(256):
        if not (0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF):
            HF_BYTE_ORDER[n] = b
            n += 1


_hf_order()


cdef class BpeCore:
    """The merge loop over a :class:`PieceCounter`'s words.

    ``flavour`` is ``"rustbpe"`` or ``"hf"`` (see the module notes). By
    default the alphabet is the 256 bytes, ids 0-255 in the flavour's order
    (see :meth:`tokens`), and merges make the ids after them.

    The ``hf`` flavour takes tokenizers' other options: ``initial`` tokens
    before the alphabet (the special tokens), ``units`` -- the alphabet, in
    id order: byte values, or with ``chars`` the code points of UTF-8 words
    (a unit outside it is left out of the words, as tokenizers drops a
    character its alphabet lost) --, ``prefix`` (``continuing_subword_prefix``)
    and ``suffix`` (``end_of_word_suffix``) spellings of the units, made as
    the words are read in byte order, after any listed in ``spellings``
    (another run's order), and ``max_token_length``. ``n_words`` is the
    number of words of two units or more (the others cannot merge).

    >>> c = PieceCounter(); c.add_counts({b"abab": 3, b"abac": 1})
    >>> core = BpeCore(c, "rustbpe", 0)
    >>> core.run(258, 10), core.merge_list(), core.tokens()[256:]
    (2, [(97, 98, 256), (256, 256, 257)], [b'ab', b'abab'])
    >>> core = BpeCore(c, "hf", 0, units=[ord("a"), ord("b")], chars=True, prefix=b"##")
    >>> core.run(6, 10), core.tokens()
    (2, [b'a', b'b', b'##b', b'##a', b'ab', b'aba'])
    """

    def __cinit__(self, PieceCounter counter, str flavour, int64_t min_frequency,
                  initial=(), units=None, bint chars=False, bytes prefix=b"", bytes suffix=b"",
                  size_t max_token_length=0, spellings=()):
        cdef size_t i, k, n, total = 0, w = 0, n_slots = 0, cap
        cdef const uint8_t* p
        cdef uint32_t unit, n_units
        cdef uint8_t byte
        cdef int b, kind
        cdef int32_t t
        cdef UnitSlot* slot
        cdef size_t* order = NULL
        cdef bytes token
        global _sorting_slots, _sorting_arena
        if flavour not in ("rustbpe", "hf"):
            raise ValueError(f"flavour is 'rustbpe' or 'hf', not {flavour!r}")
        self.hf = flavour == "hf"
        if not self.hf and (initial or units is not None or chars or prefix or suffix
                            or max_token_length or spellings):
            raise ValueError("alphabets, affixes and max_token_length are tokenizers' "
                             "options: use flavour='hf'")
        self.chars = chars
        self.min_frequency = min_frequency
        self.max_len = max_token_length if max_token_length else <size_t>-1
        self.free_lists = -1
        self.prefix_len = len(prefix)
        self.suffix_len = len(suffix)
        self.prefix = <uint8_t*>malloc(self.prefix_len + 1)
        self.suffix = <uint8_t*>malloc(self.suffix_len + 1)
        for i in range(counter.mask + 1):
            if counter.slots[i].hash:
                total += counter.slots[i].length
                n_slots += 1
        self.sym = <uint32_t*>malloc((total + 1) * sizeof(uint32_t))
        self.start = <uint64_t*>malloc((n_slots + 1) * sizeof(uint64_t))
        self.length = <uint32_t*>malloc((n_slots + 1) * sizeof(uint32_t))
        self.wcount = <int64_t*>malloc((n_slots + 1) * sizeof(int64_t))
        self.pair_mask = 4095
        self.pairs = <PairSlot*>malloc((self.pair_mask + 1) * sizeof(PairSlot))
        if units is None:
            units = [HF_BYTE_ORDER[b] if self.hf else b for b in range(256)]
        cap = 16
        while cap < 2 * len(units) + 2:
            cap *= 2
        self.unit_mask = cap - 1
        self.units = <UnitSlot*>malloc(cap * sizeof(UnitSlot))
        if (self.sym == NULL or self.start == NULL or self.length == NULL or self.wcount == NULL
                or self.pairs == NULL or self.units == NULL or self.prefix == NULL
                or self.suffix == NULL):
            raise MemoryError()
        memcpy(self.prefix, <const char*>prefix, self.prefix_len)
        memcpy(self.suffix, <const char*>suffix, self.suffix_len)
        for i in range(self.pair_mask + 1):
            self.pairs[i].pair = EMPTY_PAIR
        for i in range(cap):
            self.units[i].unit = NO_UNIT
        for token in initial:
            self.token_id(<const uint8_t*><char*>token, len(token), 0)
        for unit in units:
            if unit > (0x10FFFF if chars else 0xFF):
                raise ValueError(f"unit {unit} is not a {'code point' if chars else 'byte'}")
            token = chr(unit).encode("utf-8") if chars else bytes([unit])
            slot = self.find_unit(unit)
            if slot.unit == NO_UNIT:
                slot.unit = unit
                slot.ids[1] = slot.ids[2] = slot.ids[3] = -1
                slot.ids[0] = self.token_id(<const uint8_t*><char*>token, len(token), 1)
        for token in spellings:
            self.token_id(<const uint8_t*><char*>token, len(token), 1)
        if self.prefix_len or self.suffix_len:
            # where a spelling first occurs decides its id
            order = <size_t*>malloc((n_slots + 1) * sizeof(size_t))
            if order == NULL:
                raise MemoryError()
        try:
            k = 0
            for i in range(counter.mask + 1):
                if counter.slots[i].hash:
                    if order != NULL:
                        order[k] = i
                    k += 1
            if order != NULL:
                _sorting_slots = counter.slots
                _sorting_arena = counter.arena
                qsort(order, n_slots, sizeof(size_t), _by_bytes)
            total = 0
            with nogil:
                i = 0
                for w in range(counter.mask + 1):
                    if order != NULL:
                        if w >= n_slots:
                            break
                        i = order[w]
                    else:
                        i = w
                        if counter.slots[i].hash == 0:
                            continue
                    n = counter.slots[i].length
                    p = counter.arena + counter.slots[i].offset
                    n_units = 0
                    k = 0
                    while k < n:
                        # first and last by place in the word, kept or not (as tokenizers)
                        kind = 1 if k and self.prefix_len else 0
                        unit = _next_unit(p, n, &k, chars)
                        slot = self.find_unit(unit)
                        if slot.unit == NO_UNIT:
                            continue
                        kind |= 2 if k == n and self.suffix_len else 0
                        self.sym[total + n_units] = <uint32_t>self.spelling(slot, kind, unit)
                        n_units += 1
                    if n_units < 2:
                        continue
                    self.start[self.n_words] = total
                    self.length[self.n_words] = n_units
                    self.wcount[self.n_words] = counter.slots[i].count
                    total += n_units
                    self.n_words += 1
                for w in range(self.n_words):
                    for k in range(self.length[w] - 1):
                        self.note((<uint64_t>self.sym[self.start[w] + k] << 32)
                                  | self.sym[self.start[w] + k + 1], self.wcount[w], <uint32_t>w)
                self.queue_touched()
        finally:
            free(order)

    cdef UnitSlot* find_unit(self, uint32_t unit) noexcept nogil:
        # the unit's slot, or the empty slot where it would go
        cdef size_t i = _unit_slot(unit, self.unit_mask)
        while self.units[i].unit != unit and self.units[i].unit != NO_UNIT:
            i = (i + 1) & self.unit_mask
        return &self.units[i]

    cdef int32_t spelling(self, UnitSlot* slot, int kind, uint32_t unit) except -2 nogil:
        # The id of a unit spelt with its affixes (kind: 1 prefix, 2 suffix),
        # made the first time it is needed, as tokenizers makes it.
        cdef uint8_t buf[4]
        cdef uint8_t* s
        cdef size_t n = 0, m
        if slot.ids[kind] >= 0:
            return slot.ids[kind]
        if not self.chars:
            buf[0] = <uint8_t>unit
            n = 1
        else:
            n = utf8_put(buf, unit)
        m = (self.prefix_len if kind & 1 else 0) + n + (self.suffix_len if kind & 2 else 0)
        s = <uint8_t*>malloc(m)
        if s == NULL:
            with gil:
                raise MemoryError()
        m = 0
        if kind & 1:
            memcpy(s, self.prefix, self.prefix_len)
            m = self.prefix_len
        memcpy(s + m, buf, n)
        m += n
        if kind & 2:
            memcpy(s + m, self.suffix, self.suffix_len)
            m += self.suffix_len
        try:
            slot.ids[kind] = self.token_id(s, m, 1)
        finally:
            free(s)
        return slot.ids[kind]

    def __dealloc__(self):
        cdef size_t i
        for i in range(self.n_lists):
            free(self.lists[i].words)
        free(self.lists)
        free(self.sym)
        free(self.start)
        free(self.length)
        free(self.wcount)
        free(self.pairs)
        free(self.touched)
        free(self.heap.items)
        free(self.tok_bytes)
        free(self.tok_off)
        free(self.tok_index)
        free(self.merges)
        free(self.tok_len)
        free(self.units)
        free(self.prefix)
        free(self.suffix)

    cdef size_t find_pair(self, uint64_t pair) noexcept nogil:
        cdef size_t i = _pair_slot(pair, self.pair_mask)
        while self.pairs[i].pair != pair and self.pairs[i].pair != EMPTY_PAIR:
            i = (i + 1) & self.pair_mask
        return i

    cdef int32_t new_list(self) except -2 nogil:
        cdef int32_t i = self.free_lists
        if i >= 0:
            self.free_lists = self.lists[i].next
        else:
            grow_array(<void**>&self.lists, &self.cap_lists, self.n_lists + 1, sizeof(PosList), 1024)
            i = <int32_t>self.n_lists
            self.n_lists += 1
            self.lists[i].words = NULL
            self.lists[i].cap = 0
        self.lists[i].n = 0
        self.lists[i].next = -1
        return i

    cdef void drop_list(self, int32_t i) noexcept nogil:
        # keeps the words array for the next list made (most are small)
        self.lists[i].next = self.free_lists
        self.free_lists = i

    cdef int note(self, uint64_t pair, int64_t delta, uint32_t word) except -1 nogil:
        # Adds delta to pair's count; a gain puts word on the pair's list for this merge.
        cdef size_t i, cap, j
        cdef PairSlot* old
        cdef PosList* lst
        cdef int32_t li
        i = self.find_pair(pair)
        if self.pairs[i].pair == EMPTY_PAIR:
            if 2 * (self.pair_used + 1) > self.pair_mask:
                cap = (self.pair_mask + 1) * 2
                old = self.pairs
                self.pairs = <PairSlot*>malloc(cap * sizeof(PairSlot))
                if self.pairs == NULL:
                    self.pairs = old
                    with gil:
                        raise MemoryError()
                for j in range(cap):
                    self.pairs[j].pair = EMPTY_PAIR
                self.pair_mask = cap - 1
                for j in range(cap // 2):
                    if old[j].pair != EMPTY_PAIR:
                        self.pairs[self.find_pair(old[j].pair)] = old[j]
                free(old)
                i = self.find_pair(pair)
            self.pairs[i].pair = pair
            self.pairs[i].count = 0
            self.pairs[i].queued = -1
            self.pairs[i].fresh = -1
            self.pair_used += 1
        self.pairs[i].count += delta
        if delta <= 0:
            return 0
        li = self.pairs[i].fresh
        if li < 0:
            li = self.new_list()
            self.pairs[i].fresh = li
            grow_array(<void**>&self.touched, &self.cap_touched, self.n_touched + 1,
                       sizeof(uint64_t), 1024)
            self.touched[self.n_touched] = pair
            self.n_touched += 1
        lst = &self.lists[li]
        if lst.n and lst.words[lst.n - 1] == word:
            return 0
        grow_array(<void**>&lst.words, &lst.cap, lst.n + 1, sizeof(uint32_t), 4)
        lst.words[lst.n] = word
        lst.n += 1
        return 0

    cdef int queue_touched(self) except -1 nogil:
        # Queues each pair that gained occurrences, with the words it gained them in.
        cdef size_t k, i
        cdef int32_t li
        cdef int64_t count
        for k in range(self.n_touched):
            i = self.find_pair(self.touched[k])
            li = self.pairs[i].fresh
            self.pairs[i].fresh = -1
            count = self.pairs[i].count
            if count > 0:
                self.lists[li].count = count
                self.lists[li].next = self.pairs[i].queued
                self.pairs[i].queued = li
                heap_push(&self.heap, NO_COUNT - <uint64_t>count, self.touched[k])
            else:
                self.drop_list(li)
        self.n_touched = 0
        return 0

    cdef int merge_word(self, uint32_t w, uint32_t a, uint32_t b, uint32_t c) except -1 nogil:
        # Merges (a, b) into c in word w, left to right, and updates the pair counts.
        cdef uint32_t* s = self.sym + self.start[w]
        cdef uint32_t n = self.length[w], i = 0, j = 0
        cdef int64_t cnt = self.wcount[w]
        while i < n:
            if i + 1 < n and s[i] == a and s[i + 1] == b:
                # tokenizers counts a new pair only below max_token_length
                if j > 0:
                    self.note((<uint64_t>s[j - 1] << 32) | a, -cnt, w)
                    if <size_t>self.tok_len[s[j - 1]] + self.tok_len[c] < self.max_len:
                        self.note((<uint64_t>s[j - 1] << 32) | c, cnt, w)
                if not self.hf:
                    self.note((<uint64_t>a << 32) | b, -cnt, w)
                if i + 2 < n:
                    self.note((<uint64_t>b << 32) | s[i + 2], -cnt, w)
                    if <size_t>self.tok_len[c] + self.tok_len[s[i + 2]] < self.max_len:
                        self.note((<uint64_t>c << 32) | s[i + 2], cnt, w)
                s[j] = c
                i += 2
            else:
                s[j] = s[i]
                i += 1
            j += 1
        self.length[w] = j
        return 0

    cdef int push_token(self, const uint8_t* p, size_t n, uint32_t units) except -1 nogil:
        # token id's bytes run from tok_off[id] to tok_off[id + 1]
        cdef size_t id = self.n_tokens, i, j, cap
        cdef int32_t* index
        grow_array(<void**>&self.tok_bytes, &self.tok_bytes_cap, self.tok_bytes_len + n, 1, 1 << 16)
        grow_array(<void**>&self.tok_off, &self.cap_tokens, id + 2, sizeof(uint64_t), 1024)
        grow_array(<void**>&self.tok_len, &self.cap_len, id + 1, sizeof(uint32_t), 1024)
        self.tok_len[id] = units
        memcpy(self.tok_bytes + self.tok_bytes_len, p, n)
        self.tok_off[id] = self.tok_bytes_len
        self.tok_bytes_len += n
        self.tok_off[id + 1] = self.tok_bytes_len
        self.n_tokens += 1
        if not self.hf:
            return 0
        if 2 * self.n_tokens > self.tok_index_mask:
            cap = (self.tok_index_mask + 1) * 2 if self.tok_index_mask else 1024
            index = <int32_t*>malloc(cap * sizeof(int32_t))
            if index == NULL:
                with gil:
                    raise MemoryError()
            memset(index, 0xFF, cap * sizeof(int32_t))
            free(self.tok_index)
            self.tok_index = index
            self.tok_index_mask = cap - 1
            for j in range(self.n_tokens):
                i = hash_bytes(self.tok_bytes + self.tok_off[j],
                               self.tok_off[j + 1] - self.tok_off[j]) & self.tok_index_mask
                while self.tok_index[i] >= 0:
                    i = (i + 1) & self.tok_index_mask
                self.tok_index[i] = <int32_t>j
        else:
            i = hash_bytes(p, n) & self.tok_index_mask
            while self.tok_index[i] >= 0:
                i = (i + 1) & self.tok_index_mask
            self.tok_index[i] = <int32_t>id
        return 0

    cdef int32_t find_token(self, const uint8_t* p, size_t n) noexcept nogil:
        # the id of the token with these bytes (hf keeps the index), or -1
        cdef size_t i
        cdef int32_t t
        if not self.hf:
            return -1
        i = hash_bytes(p, n) & self.tok_index_mask
        while True:
            t = self.tok_index[i]
            if t < 0:
                return -1
            if (self.tok_off[t + 1] - self.tok_off[t] == n
                    and memcmp(self.tok_bytes + self.tok_off[t], p, n) == 0):
                return t
            i = (i + 1) & self.tok_index_mask

    cdef int32_t token_id(self, const uint8_t* p, size_t n, uint32_t units) except -2 nogil:
        # The id of a token with these bytes: the one there is (hf), else a new one.
        cdef int32_t t = self.find_token(p, n) if self.n_tokens else -1
        if t >= 0:
            if self.tok_len[t] == 0:
                self.tok_len[t] = units  # a special token that a merge spells
            return t
        self.push_token(p, n, units)
        return <int32_t>(self.n_tokens - 1)

    cdef int64_t add_token(self, uint32_t a, uint32_t b) except -1 nogil:
        # The id of a's bytes then b's (without b's continuing prefix, as
        # tokenizers joins them): a new one, or (hf) the token that has them.
        cdef size_t la = self.tok_off[a + 1] - self.tok_off[a], lb = self.tok_off[b + 1] - self.tok_off[b]
        cdef const uint8_t* pb = self.tok_bytes + self.tok_off[b]
        cdef uint8_t* buf
        cdef int64_t t
        if (self.prefix_len and lb >= self.prefix_len
                and memcmp(pb, self.prefix, self.prefix_len) == 0):
            pb += self.prefix_len
            lb -= self.prefix_len
        buf = <uint8_t*>malloc(la + lb + 1)
        if buf == NULL:
            with gil:
                raise MemoryError()
        memcpy(buf, self.tok_bytes + self.tok_off[a], la)
        memcpy(buf + la, pb, lb)
        try:
            if self.hf:
                t = self.token_id(buf, la + lb, self.tok_len[a] + self.tok_len[b])
            else:
                self.push_token(buf, la + lb, self.tok_len[a] + self.tok_len[b])
                t = <int64_t>self.n_tokens - 1
        finally:
            free(buf)
        return t

    cdef Py_ssize_t merge_up_to(self, size_t max_tokens, size_t budget) except -1 nogil:
        cdef size_t done = 0, i, k
        cdef uint64_t pair
        cdef int64_t count, cur
        cdef int32_t e, prev
        cdef uint32_t a, b, c
        while done < budget and self.n_tokens < max_tokens and not self.finished:
            if self.heap.size == 0:
                self.finished = True
                break
            count = <int64_t>(NO_COUNT - self.heap.items[0].key)
            pair = self.heap.items[0].value
            heap_pop(&self.heap)
            i = self.find_pair(pair)
            prev = -1
            e = self.pairs[i].queued
            while self.lists[e].count != count:
                prev = e
                e = self.lists[e].next
            cur = self.pairs[i].count
            if cur != count:
                if cur > 0 or self.hf:
                    # tokenizers queues again the count it finds, and reads
                    # a negative one (a merge next to a pair the same merge
                    # reuses counts it down twice) as a u64, the largest of
                    # all: NO_COUNT - cur orders it so, before every other
                    self.lists[e].count = cur
                    heap_push(&self.heap, NO_COUNT - <uint64_t>cur, pair)
                else:
                    if prev < 0:
                        self.pairs[i].queued = self.lists[e].next
                    else:
                        self.lists[prev].next = self.lists[e].next
                    self.drop_list(e)
                continue
            if count == 0 or 0 < count < self.min_frequency:
                self.finished = True
                break
            if prev < 0:
                self.pairs[i].queued = self.lists[e].next
            else:
                self.lists[prev].next = self.lists[e].next
            a = <uint32_t>(pair >> 32)
            b = <uint32_t>(pair & 0xFFFFFFFFULL)
            c = <uint32_t>self.add_token(a, b)
            grow_array(<void**>&self.merges, &self.cap_merges, 3 * self.n_merges + 3,
                       sizeof(uint32_t), 3072)
            self.merges[3 * self.n_merges] = a
            self.merges[3 * self.n_merges + 1] = b
            self.merges[3 * self.n_merges + 2] = c
            self.n_merges += 1
            for k in range(self.lists[e].n):
                self.merge_word(self.lists[e].words[k], a, b, c)
            self.drop_list(e)
            self.queue_touched()
            done += 1
        return done

    def run(self, size_t max_tokens, size_t budget):
        """Merge until there are ``max_tokens`` tokens, nothing is left to
        merge, or ``budget`` merges were made by this call (so a caller can
        show progress); returns the merges made. The GIL is released.

        >>> c = PieceCounter(); c.add_counts({b"aaaa": 1})
        >>> core = BpeCore(c, "rustbpe", 0); core.run(1000, 1000), core.finished
        (2, True)
        """
        cdef Py_ssize_t done
        with nogil:
            done = self.merge_up_to(max_tokens, budget)
        return done

    def merge_list(self):
        """``(left id, right id, new id)`` of each merge, in order.

        >>> c = PieceCounter(); c.add_counts({b"ab": 2}); core = BpeCore(c, "hf", 0)
        >>> core.run(300, 300), core.merge_list()
        (1, [(64, 65, 256)])
        """
        cdef size_t k
        return [(self.merges[3 * k], self.merges[3 * k + 1], self.merges[3 * k + 2])
                for k in range(self.n_merges)]

    def tokens(self):
        """Each id's bytes: the 256 single bytes in the flavour's order, then the merges'.

        >>> c = PieceCounter(); core = BpeCore(c, "hf", 0); core.tokens()[:2], core.tokens()[-1]
        ([b'!', b'"'], b'\\xad')
        """
        cdef size_t k
        return [self.tok_bytes[self.tok_off[k]:self.tok_off[k + 1]]
                for k in range(self.n_tokens)]
