# SentencePiece's precompiled_charsmap blob: its framing and trie checked once,
# by the loaders (to name the byte at fault) and by the normalizer that runs it.
from libc.stdint cimport int64_t, uint8_t, uint32_t

from fasttok.shared._growth cimport OffsetBuf

cdef struct Charsmap:
    uint32_t* units     # darts-clone double array, zero padded to whole 256-unit blocks
    size_t n_units
    uint8_t* strings    # replacement strings, NUL-terminated
    size_t n_strings

# Fills `out` from the blob (an empty blob gives no units) or raises
# CharsmapError; on error nothing is left allocated.
cdef int charsmap_load(bytes blob, Charsmap* out) except -1
cdef void charsmap_free(Charsmap* m) noexcept nogil

# darts-clone unit fields
cdef inline bint unit_has_leaf(uint32_t u) noexcept nogil:
    return (u >> 8) & 1

cdef inline uint32_t unit_value(uint32_t u) noexcept nogil:
    return u & 0x7FFFFFFF

cdef inline uint32_t unit_label(uint32_t u) noexcept nogil:
    return u & 0x800000FFU

cdef inline uint32_t unit_offset(uint32_t u) noexcept nogil:
    return (u >> 10) << ((u & (1 << 9)) >> 6)


cdef class CharsmapRules:
    # tokenizers' lookup: the shortest rule that is a prefix of a key
    cdef Charsmap m
    # the value (where its replacement starts in m.strings) of the shortest
    # rule that is a prefix of s[:n], or -1
    cdef int64_t _first_leaf(self, const uint8_t* s, size_t n) noexcept nogil
    # the replacement string starting at byte start of m.strings
    cdef str _replacement(self, size_t start)
    # char_rules' rule of code point cp: its replacement's code points
    # appended to data[0][:n[0]] (capacity cap[0], grown), 1; 0: no rule
    cdef int put_char_rule(self, uint32_t cp, uint32_t** data, size_t* n,
                           size_t* cap) except -1
    cdef int _step(self, uint32_t pos, uint32_t b, uint32_t* next_pos) noexcept nogil
    cdef int _rule_chars_after(self, uint32_t pos, bint every, uint32_t cp, int after,
                               uint32_t lo, uint32_t hi, OffsetBuf* found) except -1
