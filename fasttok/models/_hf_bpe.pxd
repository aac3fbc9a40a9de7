# tokenizers' BPE model, for compiled pipelines that run it on their pieces.
from cpython cimport array
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t

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


cdef struct StretchPart:
    # One part of a text cut at its added tokens, as a walk reads it
    const uint8_t* text  # a stretch's UTF-8 (owned by its str), NULL for an added token
    size_t size          # the stretch's bytes
    size_t length        # its characters
    uint32_t added       # the added token's id


cdef struct Rewrite:
    # How a walk writes each stretch (see walk_stretches)
    const char* space    # what a space is written as, or NULL: kept
    size_t space_len
    const uint8_t* prepend
    size_t prepend_len
    int when             # PREPEND_*


cdef struct WalkOut:
    # A walk's buffers (kept between calls) and the tokens of the texts
    # walked into it so far: each token's slot (ADDED_MARK for an added
    # token, whose id is the next of found), character span and word
    StretchPart* parts
    size_t parts_cap
    uint8_t* buf         # the normalized stretch
    size_t buf_cap
    uint32_t* char_at    # the text's character of each of buf's bytes
    size_t char_cap
    uint32_t* starts     # the stretch's parts (past STACK_PARTS)
    uint32_t* slots
    size_t part_cap
    uint32_t* out
    size_t out_cap
    size_t n
    uint32_t* found
    size_t found_cap
    size_t n_found
    int32_t* spans
    size_t spans_cap
    int32_t* words
    size_t words_cap


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
    cdef const char* prefix_c       # prefix's and suffix's bytes, for the nogil walk
    cdef const char* suffix_c
    cdef size_t prefix_len
    cdef size_t suffix_len
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
                             uint32_t* slots) except? 0 nogil
    cdef size_t _run(self, str sequence, const uint8_t** text, size_t* n_bytes,
                     uint32_t** starts, uint32_t** slots, uint32_t* stack_starts,
                     uint32_t* stack_slots) except? 0
    # _run of UTF-8, the stack arrays room items long; cache: the word
    # cache this caller holds, or NULL
    cdef size_t _run_utf8(self, const uint8_t* s, size_t n, uint32_t** starts, uint32_t** slots,
                          uint32_t* stack_starts, uint32_t* stack_slots, size_t room,
                          WordEntry* cache) except? 0 nogil
    # SELF_* of each slot: whether the parts of a span spelling it merge into
    # it, learnt the first time (NULL when positions are not the text's bytes)
    cdef uint8_t* span_self
    # the word cache, where positions are the text's bytes (else NULL): one
    # caller at a time holds it (_take_words, _give_words, with the GIL held)
    cdef WordEntry* words
    cdef bint words_taken
    # a walk's buffers, kept for the next call while not taken
    cdef WalkOut spare
    cdef bint spare_taken
    cdef WordEntry* _take_words(self)
    cdef void _give_words(self, WordEntry* cache)
    cdef bint _span_is_token(self, const uint8_t* s, uint32_t* starts, uint32_t* slots,
                             size_t k, size_t i, int64_t* learn) noexcept nogil
    cdef size_t _merge_cut(self, const uint8_t* s, uint32_t* starts, uint32_t* slots, size_t m,
                           PairMemo* memo, WordEntry* cache) except? 0 nogil
    # a walk's token ids (list, array('I')) of o's tokens a..b-1, the added
    # ones from o.found[f:]
    cdef list _walk_ids(self, const WalkOut* o, size_t a, size_t b, size_t f)
    cdef array.array _walk_ids_array(self, const WalkOut* o, size_t a, size_t b, size_t f)
    # what a walk of o's tokens a..b-1 returns (ids, or the three arrays)
    cdef object _walked(self, const WalkOut* o, size_t a, size_t b, size_t f, bint offsets)
    # the tokens of parts[0:count] (one text) after o's; 1: declined
    # (offsets past int32, or a stretch's tokens past its bytes), o as it was
    cdef int _walk_c(self, const Rewrite* rw, const StretchPart* parts, size_t count,
                     bint offsets, WalkOut* o, WordEntry* cache) except -1 nogil
    cdef object _walk(self, const Rewrite* rw, bint offsets, list parts, dict added, str text)
