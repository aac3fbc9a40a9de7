/* Word-at-a-time helpers the compiled cores share.
 *
 * FT_SWAR: 1 where eight bytes read as one uint64_t hold them first to last
 * from the low bits up (a little-endian GCC or clang target), so that a
 * count of trailing zeros over a mask of them finds the first byte marked.
 * Paths that read text a word at a time test it and keep a byte loop for
 * other targets.
 *
 * ft_ctz64(x): the trailing zeros of x, which is not 0 (a builtin where the
 * compiler has one, else a loop). */
#ifndef FT_BITS_H
#define FT_BITS_H

#include <stdint.h>

#if (defined(__GNUC__) || defined(__clang__)) && defined(__BYTE_ORDER__) \
    && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FT_SWAR 1
#else
#define FT_SWAR 0
#endif

static inline unsigned ft_ctz64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_ctzll(x);
#else
    unsigned n = 0;
    while (!(x & 1)) {
        x >>= 1;
        n++;
    }
    return n;
#endif
}

#endif
