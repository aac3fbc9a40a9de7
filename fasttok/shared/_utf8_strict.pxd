# Strict UTF-8 (Python's decoder's rule), one lead-byte table for every
# module that checks it: the document blocks and the JSON reader.
from libc.stdint cimport uint8_t


cdef extern from "ft_utf8_strict.h" nogil:
    # the length of the strict UTF-8 character at s (n >= 1 bytes left), or
    # 0 when none starts there
    size_t ft_utf8_strict_length(const uint8_t* s, size_t n)
