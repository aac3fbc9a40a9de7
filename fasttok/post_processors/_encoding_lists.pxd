from libc.stdint cimport int32_t, uint32_t

# A walked encoding's fields in one block of their own, for a walk's batch to
# write each text's tokens into (no array per text): see the .pyx.
cdef object walked_block(size_t n, uint32_t** ids, int32_t** offsets, int32_t** words)
