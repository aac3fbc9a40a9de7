# The packed vocabulary and merges of a tokenizer.json model, as the compiled
# reader leaves them (see _json_reader.pyx): what other compiled modules read.
from libc.stdint cimport int64_t, uint8_t, uint64_t


cdef class PackedTexts:
    # Entry i's text: data[offsets[i]:offsets[i + 1]], of n entries; the
    # per-entry arrays (offsets and a subclass's own) have room for entry_cap
    cdef uint8_t* data
    cdef uint64_t* offsets
    cdef Py_ssize_t n
    cdef size_t data_cap, entry_cap
    # open addressing over the texts (a subclass that looks texts up
    # indexes them): entry index + 1, 0 = empty
    cdef uint64_t* slots
    cdef uint64_t mask
    cdef int64_t find(self, const uint8_t* p, size_t n) noexcept nogil
    cdef int64_t find_hashed(self, const uint8_t* p, size_t n, uint64_t h) noexcept nogil
    cdef uint64_t _slot(self, const uint8_t* p, size_t n, uint64_t h) noexcept nogil
    cdef int _index(self, bint repeats) except -1
    cdef object _text(self, Py_ssize_t i)


cdef class PackedVocab(PackedTexts):
    # Entry i (file order): UTF-8 text as PackedTexts', id entry_ids[i].
    # Texts are distinct, valid UTF-8 (no surrogates); ids are 0 .. 2**32 - 2.
    cdef int64_t* entry_ids


cdef class PackedPieces(PackedTexts):
    # A Unigram vocab list [[piece, score], ...]. Entry i (file order): the
    # piece's UTF-8 text as PackedTexts' (valid UTF-8, no surrogates; a text
    # may repeat, and find gives its last entry), the score's JSON number
    # as written at numbers[number_offsets[i]:number_offsets[i + 1]]
    cdef uint8_t* numbers
    cdef uint64_t* number_offsets
    cdef size_t numbers_cap
    cdef bint repeats  # some text is listed twice (known once indexed)
    cdef int _indexed(self) except -1


cdef enum:
    # PackedMerges.kinds
    KIND_STRING = 0x73  # "a b"
    KIND_PAIR = 0x70  # ["a", "b"]
    KIND_OTHER = 0x78  # a string without exactly one space


cdef class PackedMerges(PackedTexts):
    # Merge i's text spans data[offsets[i]:offsets[i + 1]]. kinds[i]: b"s" an
    # "a b" string, its space at mids[i]; b"p" an ["a", "b"] pair, "b"
    # starting at mids[i]; b"x" a string without exactly one space.
    cdef uint64_t* mids
    cdef uint8_t* kinds
    cdef int parts(self, Py_ssize_t i, const uint8_t** left, size_t* left_len,
                   const uint8_t** right, size_t* right_len) noexcept nogil
    cdef object _str(self, uint64_t start, uint64_t end)
