from libc.stdint cimport int32_t, uint8_t, uint16_t


cdef enum:
    # strings starting with at most this many bytes are searched by the C
    # library's memchr, each byte's next place kept (a table test each
    # byte of the text was ~5 instructions a byte: ALBERT's "<" and "[")
    FEW_FIRSTS = 4
    # ASCII first bytes occurs_in searches a Latin-1 text for with memchr
    FEW_ASCII_FIRSTS = 8
    # first characters it searches a UCS-2 text for eight units at a time
    FEW_FIRST_CHARS = 8


cdef class LiteralCut:
    cdef int32_t root[256]      # the root's child by byte, or -1
    cdef int32_t* edge_start    # node i's edges are edge_start[i] .. edge_start[i + 1]
    cdef uint8_t* edge_byte
    cdef int32_t* edge_child
    cdef int32_t* ends          # the index of the string ending at the node (its last
                                # if repeated), or -1
    cdef uint8_t firsts[FEW_FIRSTS]  # the bytes the strings start with, when they are
    cdef int n_firsts           # at most FEW_FIRSTS of them (else 0)
    cdef int n_roots            # how many bytes the strings start with
    cdef uint8_t ascii_firsts[FEW_ASCII_FIRSTS]  # the ASCII ones among them, when they
    cdef int n_ascii_firsts     # are at most FEW_ASCII_FIRSTS (else -1)
    cdef uint16_t first_chars[FEW_FIRST_CHARS]  # the strings' first characters, when
    cdef int n_first_chars      # at most FEW_FIRST_CHARS, none past U+FFFF or a
                                # surrogate (else -1); the first repeated after them
    cdef uint8_t block_stop[0x400]  # by code unit >> 6 from 0x80 to 0xFFFF: 1 where a
                                # string starts with a character of the block's first
                                # byte, 2 for the surrogates' blocks
    cdef Py_ssize_t n_strings   # how many strings were given (empty ones too)
    cdef tuple strings          # the strings until the trie is built from them

    cdef int _build(self) except -1
    cdef int32_t _find(self, const uint8_t* s, size_t n, size_t at, const uint8_t* mask,
                       size_t* start, size_t* end) noexcept
    cdef bint _occurs_at(self, int kind, const void* data, Py_ssize_t n,
                         Py_ssize_t i) noexcept
    cdef int occurs_in(self, str text, bint surrogates) except -1
