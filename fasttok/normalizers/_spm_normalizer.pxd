# SentencePiece text normalization, shared by the SentencePiece models and
# GGUF `llama` / `t5` vocabularies (fasttok/formats/_sentencepiece.pyx cimports it).
from libc.stdint cimport uint8_t, uint32_t, uint64_t

from fasttok.shared._growth cimport ByteBuf, OffsetBuf
from fasttok.shared._tables cimport TokenTables

cdef enum:
    # How the normalizer treats whitespace: as sentencepiece's Normalizer does,
    # or as llama.cpp's UGM tokenizer does for GGUF `t5` files.
    FLAVOUR_SENTENCEPIECE = 0
    FLAVOUR_LLAMA_CPP = 1

# sentencepiece's string_util::DecodeUTF8 validity (no overlongs, no
# surrogates, at most U+10FFFF): the length of the valid character at s, or 0.
cdef size_t valid_utf8_len(const uint8_t* s, size_t n) noexcept nogil

# byte offset -> character index of UTF-8 text, for offsets into the caller's str
cdef dict char_index(const uint8_t* s, size_t n)


cdef class SymbolMatcher:
    # Longest listed symbol (user-defined pieces) starting at a position.
    cdef TokenTables table
    cdef size_t* lengths        # distinct symbol lengths, longest first
    cdef size_t n_lengths
    cdef uint8_t first[256]     # which bytes start a symbol
    cdef readonly Py_ssize_t count
    cdef size_t match(self, const uint8_t* s, size_t n) noexcept nogil


cdef class Normalizer:
    cdef uint32_t* units        # darts-clone double array, validated
    cdef size_t n_units
    cdef uint8_t* strings       # replacement strings, NUL-terminated
    cdef size_t n_strings
    cdef readonly SymbolMatcher user_symbols
    cdef readonly bint add_dummy_prefix
    cdef readonly bint remove_extra_whitespaces
    cdef readonly bint escape_whitespaces
    cdef readonly bint treat_whitespace_as_suffix
    cdef readonly int flavour
    cdef bint ascii_plain[256]   # copied unchanged when followed by ASCII
    cdef uint64_t ascii_cont[128]   # bit (lead - 0xC0): a rule goes on with that lead byte
    cdef uint8_t multi_plain[4096]  # (lead - 0xC0) * 64 + second & 0x3F: no rule starts so
    cdef uint64_t multi_third[4096] # same index; bit (third & 0x3F): a rule may start so
    cdef void _find_plain_ascii(self)
    cdef void _find_plain_multi(self)
    cdef size_t prefix(self, const uint8_t* s, size_t n, const uint8_t** rep,
                       size_t* rep_len) noexcept nogil
    cdef bint rule_may_continue(self, const uint8_t* s, size_t n) noexcept nogil
    cdef int normalize_into(self, const uint8_t* s, size_t n, ByteBuf* out,
                            OffsetBuf* n2o) except -1 nogil
    cdef int _emit(self, const uint8_t* rep, size_t rep_len, uint32_t origin,
                   ByteBuf* out, OffsetBuf* n2o) except -1 nogil
    cdef int _normalize_spm(self, const uint8_t* s, size_t n, ByteBuf* out,
                            OffsetBuf* n2o) except -1 nogil
    cdef int _normalize_llama(self, const uint8_t* s, size_t n, ByteBuf* out,
                              OffsetBuf* n2o) except -1 nogil
