# The growth rule of every growable C array in the compiled core.
from libc.stdlib cimport realloc


cdef inline int grow_array(void** data, size_t* cap, size_t need, size_t item_size,
                           size_t first) except -1 nogil:
    # Makes room for need items of item_size bytes in *data (capacity *cap,
    # doubling from first), raising MemoryError if that cannot be had.
    cdef size_t new_cap
    cdef void* grown
    if need <= cap[0]:
        return 0
    new_cap = cap[0] * 2 if cap[0] else first
    while new_cap < need:
        new_cap *= 2
    if new_cap > (<size_t>-1) // item_size:
        with gil:
            raise MemoryError()
    grown = realloc(data[0], new_cap * item_size)
    if grown == NULL:
        with gil:
            raise MemoryError()
    data[0] = grown
    cap[0] = new_cap
    return 0
