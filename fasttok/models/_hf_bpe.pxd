# tokenizers' BPE model, for compiled pipelines that run it on their pieces.
from cpython cimport array
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t

from fasttok.models._bpe cimport Dropout, PairMemo
from fasttok.shared._tables cimport TokenTables, TokenTablesView


cdef enum:
    WORD_BITS = 13    # the word cache's entries: 8,192 of 64 bytes
    WORD_BYTES = 22   # longest span kept
    WORD_TOKENS = 6   # most tokens of a span kept


cdef struct WordEntry:
    # The tokens of one span of parts that no merge crosses (see _merge_cut):
    # its bytes' hash | 1 (0: empty), the bytes, and each token's slot and end
    uint64_t hash
    uint32_t slots[WORD_TOKENS]
    uint8_t ends[WORD_TOKENS]
    uint8_t n_tokens
    uint8_t length
    uint8_t text[WORD_BYTES]


cdef class HfBpeCore:
    cdef TokenTables tables
    cdef const TokenTablesView* view
    cdef readonly tuple slot_ints   # the id of each slot, as an int
    cdef uint32_t* slot_ids         # the id of each slot
    cdef bint slots_are_ids         # slot i is id i, for every slot
    cdef readonly tuple slot_names  # the token string of each slot's id
    cdef uint32_t* char_slots       # the slot of each BMP character alone, or NO_TOKEN
    cdef uint8_t* edge_bytes        # the first and last byte of each slot's spelling
    cdef bint cut_words             # merged tokens are their parts spelled together
    cdef bytes prefix
    cdef bytes suffix
    cdef uint8_t* key               # room for prefix + a character + suffix
    cdef uint32_t unk_slot
    cdef uint32_t byte_slots[256]
    cdef bint fuse_unk
    cdef bint byte_fallback
    cdef bint ignore_merges
    cdef uint8_t* not_whole         # slots ignore_merges' whole lookup skips, or NULL
    cdef Dropout drop
    cdef readonly str unk_token

    cdef int _fill_edge_bytes(self, tokens) except -1
    # the first parts of s[0:n] (starts[m] their end); returns m
    cdef size_t _first_parts(self, const uint8_t* s, size_t n, uint32_t* starts,
                             uint32_t* slots) except? 0
    cdef size_t _run(self, str sequence, const uint8_t** text, size_t* n_bytes,
                     uint32_t** starts, uint32_t** slots, uint32_t* stack_starts,
                     uint32_t* stack_slots) except? 0
    cdef size_t _run_utf8(self, const uint8_t* s, size_t n, uint32_t** starts, uint32_t** slots,
                          uint32_t* stack_starts, uint32_t* stack_slots) except? 0
    # SELF_* of each slot: whether the parts of a span spelling it merge into
    # it, learnt the first time (NULL when positions are not the text's bytes)
    cdef uint8_t* span_self
    # the word cache, where positions are the text's bytes (else NULL): read
    # and written only with the GIL held, as every caller of _run_utf8 holds it
    cdef WordEntry* words
    cdef bint _span_is_token(self, const uint8_t* s, uint32_t* starts, uint32_t* slots,
                             size_t k, size_t i, int64_t* learn) noexcept
    cdef size_t _merge_cut(self, const uint8_t* s, uint32_t* starts, uint32_t* slots, size_t m,
                           PairMemo* memo) except? 0
    # a walk's token ids (list, array('I')): out holds slots, ADDED_MARK where
    # the next id of found goes
    cdef list _walk_ids(self, const uint32_t* out, size_t n, list found)
    cdef array.array _walk_ids_array(self, const uint32_t* out, size_t n, list found)
    cdef object _walk(self, bytes space_to, bytes prepend, int prepend_when, bint offsets,
                      list parts, dict added)
