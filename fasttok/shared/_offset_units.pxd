# Token spans from one unit of a text into another (see _offset_units.pyx).
from libc.stdint cimport int64_t

cdef enum:
    UNIT_BYTES = 0  # UTF-8 bytes
    UNIT_CHARS = 1  # code points (Python's str indices)
    UNIT_UTF16 = 2  # UTF-16 code units

cdef struct Cursor:
    # a place in a str between two code points, counted in each unit
    const void* data  # the str's code points (PyUnicode_DATA)
    int kind          # their width (PyUnicode_KIND: 1, 2 or 4 bytes)
    Py_ssize_t length # how many there are
    Py_ssize_t chars
    int64_t bytes
    int64_t utf16

# the cursor moved to offset (counted in source; inside a character: to its
# start, or with is_end to its end), and that position counted in target
cdef int64_t move_to(Cursor* c, int64_t offset, int source, int target,
                     bint is_end) noexcept nogil
# offsets[0:n] (start and end in turn) from source to target, in place
cdef int convert_offsets(Cursor* c, int64_t* offsets, Py_ssize_t n, int source,
                         int target) noexcept nogil
