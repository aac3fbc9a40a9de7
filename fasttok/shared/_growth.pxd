# The growth rule of every growable C array in the compiled core, and the
# growable byte and offset buffers the SentencePiece normalizer fills and the
# modules that read its output (models, formats) declare.
from libc.stdint cimport uint8_t, uint32_t
from libc.stdlib cimport free, realloc


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


cdef struct ByteBuf:
    # Growable bytes, owned by whoever declared it (free with bytebuf_free).
    uint8_t* data
    size_t len
    size_t cap


cdef struct OffsetBuf:
    # Growable uint32 array (normalized byte -> original byte offsets).
    uint32_t* data
    size_t len
    size_t cap


cdef inline int bytebuf_reserve(ByteBuf* buf, size_t extra) except -1 nogil:
    return grow_array(<void**>&buf.data, &buf.cap, buf.len + extra, 1, 256)


cdef inline void bytebuf_free(ByteBuf* buf) noexcept nogil:
    free(buf.data)
    buf.data = NULL
    buf.len = buf.cap = 0


cdef inline int offsets_reserve(OffsetBuf* buf, size_t extra) except -1 nogil:
    return grow_array(<void**>&buf.data, &buf.cap, buf.len + extra, sizeof(uint32_t), 256)


cdef inline void offsets_free(OffsetBuf* buf) noexcept nogil:
    free(buf.data)
    buf.data = NULL
    buf.len = buf.cap = 0
