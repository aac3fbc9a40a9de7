# The pre-token cache (ft_piece_cache.h): the inline lookup and insertion
# every compiled core uses, and the one setting and per-thread tables that
# this module keeps for all of them.
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t, uint64_t

cdef extern from "ft_piece_cache.h" nogil:
    enum:
        FT_PC_ENTRY_BYTES
        FT_PC_PAYLOAD
        FT_PC_LONG_BYTES
        FT_PC_TOKEN_MAX
        FT_PC_TOKEN_BYTES
    ctypedef struct ft_pc_entry:
        uint8_t length
        uint8_t n_ids
    ctypedef struct ft_pc_long:
        uint16_t n_ids
    ctypedef struct ft_pc_table:
        size_t n_entries
        const ft_pc_long* longs
        const void* token_block
    bint ft_pc_open(const ft_pc_table* t, uint64_t h)
    void ft_pc_count(ft_pc_table* t, uint64_t h, bint hit)
    uint64_t ft_pc_hash(const uint8_t* p, size_t n)
    void ft_pc_prefetch(const ft_pc_table* t, uint64_t h)
    bint ft_pc_fits(size_t n, size_t n_ids)
    const uint32_t* ft_pc_ids(const ft_pc_entry* e)
    const ft_pc_entry* ft_pc_find(const ft_pc_table* t, uint64_t owner, const uint8_t* key,
                                  size_t n, uint64_t h)
    void ft_pc_put(ft_pc_table* t, uint64_t owner, const uint8_t* key, size_t n, uint64_t h,
                   const uint32_t* ids, size_t n_ids)
    const ft_pc_long* ft_pc_long_find(const ft_pc_table* t, uint64_t owner, const uint8_t* key,
                                      size_t n, uint64_t h)
    void ft_pc_long_put(ft_pc_table* t, uint64_t owner, const uint8_t* key, size_t n, uint64_t h,
                        const uint32_t* ids, size_t n_ids)
    const uint32_t* ft_pc_long_ids(const ft_pc_long* e)
    size_t ft_pc_long_slots(size_t n)
    uint64_t ft_pc_token_tail(const uint8_t* p, size_t n)
    int64_t ft_pc_token_find(const ft_pc_table* t, uint64_t owner, uint64_t head, uint64_t tail)
    void ft_pc_token_put(ft_pc_table* t, uint64_t owner, uint64_t head, uint64_t tail,
                         uint64_t code)
    size_t ft_pc_token_slots(size_t n)
    void ft_pc_table_init(ft_pc_table* t, size_t n)
    void ft_pc_table_free(ft_pc_table* t)

# The calling thread's table, or NULL when the cache is off: take it once
# per call (it stays valid until the thread takes it again).
cdef ft_pc_table* piece_cache_table() noexcept nogil
# A new owner identity for a model (never 0, never given twice).
cdef uint64_t piece_cache_owner() noexcept nogil
