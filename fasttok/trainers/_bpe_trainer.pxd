# Byte-level BPE training: the pre-token counter and the merge loop.
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t

from fasttok.models._bpe cimport RankedHeap
from fasttok.pre_tokenizers._pretokenize cimport ScanFn


cdef struct PieceSlot:
    # One distinct pre-token: its bytes at offset in the counter's arena.
    uint64_t hash  # 0: an empty slot
    uint64_t offset
    uint32_t length
    int64_t count


cdef class PieceCounter:
    cdef PieceSlot* slots
    cdef size_t mask  # slots - 1 (a power of two)
    cdef size_t used
    cdef uint8_t* arena
    cdef size_t arena_len
    cdef size_t arena_cap
    cdef ScanFn scan
    cdef readonly uint64_t n_bytes

    cdef int add(self, const uint8_t* p, size_t n, int64_t count) except -1 nogil
    cdef int grow(self) except -1 nogil
    cdef int scan_text(self, const uint8_t* s, Py_ssize_t n) except -1 nogil


cdef struct UnitSlot:
    # One unit of the alphabet (a byte, or a code point) and the ids of its
    # four spellings: plain, after the continuing prefix, before the end
    # suffix, both; -1 where not made yet.
    uint32_t unit  # NO_UNIT: an empty slot
    int32_t ids[4]


cdef struct PairSlot:
    uint64_t pair  # left << 32 | right; EMPTY_PAIR marks a free slot
    int64_t count  # occurrences in the words, each weighted by its word's count
    int32_t queued  # the position lists queued for this pair (linked by next), -1 none
    int32_t fresh  # the list gathered during the current merge, -1 none


cdef struct PosList:
    # The words where a pair may occur, as the references keep them: a
    # queue entry owns one, made when the pair is counted or created.
    uint32_t* words
    size_t n
    size_t cap
    int64_t count  # the count the entry was queued with
    int32_t next


cdef class BpeCore:
    cdef uint32_t* sym  # every word's symbols, word w at start[w], length[w] of them
    cdef uint64_t* start
    cdef uint32_t* length
    cdef int64_t* wcount
    cdef readonly size_t n_words

    cdef PairSlot* pairs
    cdef size_t pair_mask
    cdef size_t pair_used
    cdef PosList* lists
    cdef size_t n_lists
    cdef size_t cap_lists
    cdef int32_t free_lists
    cdef uint64_t* touched  # pairs that gained occurrences in the current merge
    cdef size_t n_touched
    cdef size_t cap_touched
    cdef RankedHeap heap

    cdef uint8_t* tok_bytes  # token id's bytes from tok_off[id] to tok_off[id + 1]
    cdef size_t tok_bytes_len
    cdef size_t tok_bytes_cap
    cdef uint64_t* tok_off
    cdef readonly size_t n_tokens
    cdef size_t cap_tokens
    cdef uint32_t* tok_len  # units (bytes or characters) a token stands for, without affixes
    cdef size_t cap_len
    cdef int32_t* tok_index  # hf: token bytes -> id, open addressing, -1 empty
    cdef size_t tok_index_mask

    cdef uint32_t* merges  # left, right, new id for each merge
    cdef size_t n_merges
    cdef size_t cap_merges

    cdef UnitSlot* units  # the alphabet, open addressing on the unit
    cdef size_t unit_mask
    cdef uint8_t* prefix  # continuing_subword_prefix, stripped from a merge's right part
    cdef size_t prefix_len
    cdef uint8_t* suffix  # end_of_word_suffix
    cdef size_t suffix_len
    cdef size_t max_len  # a pair is counted only below this many units (max_token_length)

    cdef bint hf
    cdef bint chars  # units are UTF-8 characters, not bytes
    cdef int64_t min_frequency
    cdef readonly bint finished

    cdef size_t find_pair(self, uint64_t pair) noexcept nogil
    cdef int note(self, uint64_t pair, int64_t delta, uint32_t word) except -1 nogil
    cdef int queue_touched(self) except -1 nogil
    cdef int32_t new_list(self) except -2 nogil
    cdef void drop_list(self, int32_t i) noexcept nogil
    cdef int merge_word(self, uint32_t w, uint32_t a, uint32_t b, uint32_t c) except -1 nogil
    cdef int64_t add_token(self, uint32_t a, uint32_t b) except -1 nogil
    cdef int push_token(self, const uint8_t* p, size_t n, uint32_t units) except -1 nogil
    cdef int32_t find_token(self, const uint8_t* p, size_t n) noexcept nogil
    cdef int32_t token_id(self, const uint8_t* p, size_t n, uint32_t units) except -2 nogil
    cdef UnitSlot* find_unit(self, uint32_t unit) noexcept nogil
    cdef int32_t spelling(self, UnitSlot* slot, int kind, uint32_t unit) except -2 nogil
    cdef Py_ssize_t merge_up_to(self, size_t max_tokens, size_t budget) except -1 nogil
