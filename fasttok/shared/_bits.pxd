# Word-at-a-time helpers (ft_bits.h): whether eight bytes read as a word
# are in little-endian order with a trailing-zero count at hand, and that
# count.
from libc.stdint cimport uint64_t

cdef extern from "ft_bits.h" nogil:
    const bint FT_SWAR
    unsigned ft_ctz64(uint64_t x) noexcept
