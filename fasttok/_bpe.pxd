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

cdef int bpe_encode_piece(const TokenTablesView* tables, const uint8_t* piece, size_t n,
                          bint whole_piece_lookup, IdBuffer* out) except -1 nogil
