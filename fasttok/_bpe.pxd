# The one BPE merge loop, shared by every model that merges pairs.
from libc.stdint cimport uint8_t, uint32_t

from ._tables cimport TokenTablesView

cdef struct IdBuffer:
    # A growable array of token ids, owned by whoever declared it.
    uint32_t* data
    size_t len
    size_t cap

cdef int ids_reserve(IdBuffer* buf, size_t extra) except -1 nogil
cdef int ids_push(IdBuffer* buf, uint32_t token) except -1 nogil
cdef void ids_free(IdBuffer* buf) noexcept nogil

# Merge parts given by the caller: starts[0..m] (starts[m] == n) and their
# ids[0..m-1] (NO_TOKEN where a part is not a token yet). Merges in place and
# returns the new number of parts. For models whose first parts are
# characters, not bytes (SentencePiece BPE).
cdef size_t bpe_merge_parts(const TokenTablesView* tables, const uint8_t* piece, size_t n,
                            uint32_t* starts, uint32_t* ids, size_t m) except? 0 nogil

cdef int bpe_encode_piece(const TokenTablesView* tables, const uint8_t* piece, size_t n,
                          bint whole_piece_lookup, IdBuffer* out) except -1 nogil
