# tokenizers' BPE model, for compiled pipelines that run it on their pieces.
from cpython cimport array
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t

from fasttok.models._bpe cimport Dropout, PairMemo
from fasttok.shared._piece_cache cimport ft_pc_table
from fasttok.shared._tables cimport TokenTables, TokenTablesView


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
    # each written character stands for one of the text's (space is NULL or
    # one character): offsets are then counted, not kept byte by byte
    bint one_for_one
    size_t prepend_chars


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
    cdef tuple names                # the token string of each slot's id, or None until asked
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
    # _run of UTF-8, the stack arrays room items long; pc: the calling
    # thread's pre-token cache, or NULL
    cdef size_t _run_utf8(self, const uint8_t* s, size_t n, uint32_t** starts, uint32_t** slots,
                          uint32_t* stack_starts, uint32_t* stack_slots, size_t room,
                          ft_pc_table* pc) except? 0 nogil
    # SELF_* of each slot: whether the parts of a span spelling it merge into
    # it, learnt the first time (NULL when positions are not the text's bytes)
    cdef uint8_t* span_self
    # whether spans go through the pre-token cache (positions are the text's
    # bytes, no dropout, every slot below 2**24), and this model's owner there
    cdef bint cache_spans
    cdef uint64_t owner
    # where _cached_spans cuts: bit (x << 7 | y) of two ASCII bytes set
    # when both are tokens alone and no token holds them side by side; and
    # one bit per hash of each two characters side by side in some token
    # (pairs_shift: 64 - log2 of its bits), NULL when a token is not UTF-8
    cdef uint8_t* ascii_seams
    cdef uint64_t* char_pairs
    cdef int pairs_shift
    cdef int _fill_seams(self) except -1
    # a walk's buffers, kept for the next call while not taken
    cdef WalkOut spare
    cdef bint spare_taken
    cdef bint _span_is_token(self, const uint8_t* s, uint32_t* starts, uint32_t* slots,
                             size_t k, size_t i, int64_t* learn) noexcept nogil
    cdef size_t _merge_cut(self, const uint8_t* s, uint32_t* starts, uint32_t* slots, size_t m,
                           PairMemo* memo) except? 0 nogil
    # the tokens of s[0:n] cut into spans at the text (no first parts made
    # for a span the cache holds); _span: the tokens of one span
    cdef size_t _cached_spans(self, const uint8_t* s, size_t n, uint32_t* starts, uint32_t* slots,
                              PairMemo* memo, ft_pc_table* pc) except? 0 nogil
    cdef size_t _span(self, const uint8_t* s, size_t a, size_t b, uint32_t* starts,
                      uint32_t* slots, size_t w, PairMemo* memo, ft_pc_table* pc) except? 0 nogil
    # a walk's token ids (list, array('I')) of o's tokens a..b-1, the added
    # ones from o.found[f:]
    cdef list _walk_ids(self, const WalkOut* o, size_t a, size_t b, size_t f)
    cdef array.array _walk_ids_array(self, const WalkOut* o, size_t a, size_t b, size_t f)
    # what a walk of o's tokens a..b-1 returns (ids, or the three arrays)
    cdef object _walked(self, const WalkOut* o, size_t a, size_t b, size_t f, bint offsets)
    # the tokens of parts[0:count] (one text) after o's; 1: declined
    # (offsets past int32, or a stretch's tokens past its bytes), o as it was
    cdef int _walk_c(self, const Rewrite* rw, const StretchPart* parts, size_t count,
                     bint offsets, WalkOut* o, ft_pc_table* pc) except -1 nogil
    cdef object _walk(self, const Rewrite* rw, bint offsets, list parts, dict added, str text)
