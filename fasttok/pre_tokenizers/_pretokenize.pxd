# Hand-written pre-tokenizers: each finds where the piece starting at byte i ends.
from libc.stdint cimport uint8_t

ctypedef Py_ssize_t (*ScanFn)(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil

# A name from _pretokenize.SCANNERS; a "llama.cpp:" one loads llama.cpp's
# tables first, so every ScanFn handed out is ready to run without the GIL.
cdef ScanFn scanner_by_name(str name) except NULL
