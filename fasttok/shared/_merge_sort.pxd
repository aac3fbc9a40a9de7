# The one stable sort of the compiled core: keys (ids into the caller's own
# data) ordered by a comparison of two of them, bottom-up merge sort. Inline
# here, so each module compiles it with its own comparison, which the C
# compiler then calls directly (or inlines) rather than through the pointer.
from libc.stdint cimport uint32_t
from libc.string cimport memcpy

# whether key a sorts before key b, ctx: the caller's data
ctypedef int (*key_less)(const void* ctx, uint32_t a, uint32_t b) noexcept nogil


cdef inline void merge_sort(uint32_t* keys, uint32_t* spare, size_t n, key_less less,
                            const void* ctx) noexcept nogil:
    # keys[:n] sorted by less, keys that compare equal kept in their order;
    # spare: n keys' room the sort works in
    cdef size_t width = 1, lo, mid, hi, i, j, k
    cdef uint32_t* src = keys
    cdef uint32_t* dst = spare
    cdef uint32_t* swap
    while width < n:
        lo = 0
        while lo < n:
            mid = lo + width if lo + width < n else n
            hi = lo + 2 * width if lo + 2 * width < n else n
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if less(ctx, src[j], src[i]):
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            while i < mid:
                dst[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                dst[k] = src[j]
                j += 1
                k += 1
            lo = hi
        swap = src
        src = dst
        dst = swap
        width *= 2
    if src != keys:
        memcpy(keys, src, n * sizeof(uint32_t))
