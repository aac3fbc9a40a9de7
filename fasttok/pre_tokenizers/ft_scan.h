/* ft_scan.h -- runs of ASCII letters read 16 bytes at a time, for the
 * cl100k-shaped scanners of _pretokenize.pyx.
 *
 * ft_cl100k finds the pieces that are a run of ASCII letters, or one ASCII
 * character and such a run (most pieces of English and code), with one
 * 16-byte classification a step, and hands every other piece to the
 * byte-at-a-time scanner it is given; so the scanners' behaviour is that
 * scanner's, which the differential tests check against the regexes, and a
 * test checks the two paths give the same pieces (_pretokenize.use_simd).
 *
 * SSE2 is part of x86-64, so it needs no run-time dispatch; aarch64 always
 * has NEON. Elsewhere FT_SCAN_SIMD is 0 and ft_cl100k is the byte-at-a-time
 * scanner. AVX2's 32 bytes would not pay: 0.04% of en.txt's cl100k pieces
 * and 0.9% of code.txt's are longer than 16 bytes.
 *
 * A window is the 16 bytes from s + i, or, closer than 16 bytes to end,
 * the 16 ending at end (which needs end >= 16: the bytes before i are then
 * text too) with the mask shifted down, so bits at and past end are clear
 * and no run reads past the text.
 */
#ifndef FT_SCAN_H
#define FT_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* A scanner of _pretokenize.pyx: the end of the piece starting at s + i. */
typedef ptrdiff_t (*ft_scanner)(const uint8_t* s, ptrdiff_t i, ptrdiff_t end);

#if (defined(__GNUC__) || defined(__clang__)) && defined(__SSE2__)
#include <emmintrin.h>
#define FT_SCAN_SIMD 1
typedef __m128i ft_v16;

static inline ft_v16 ft_load16(const uint8_t* p) { return _mm_loadu_si128((const __m128i*)p); }
static inline ft_v16 ft_or16(ft_v16 a, ft_v16 b) { return _mm_or_si128(a, b); }
static inline ft_v16 ft_set16(uint8_t c) { return _mm_set1_epi8((char)c); }
/* Bytes in [lo, lo + n): adding 0x80 - lo moves the range to the bottom of
 * the signed bytes, where one signed compare finds it (SSE2 has no unsigned
 * byte compare). */
static inline ft_v16 ft_range16(ft_v16 v, uint8_t lo, uint8_t n) {
    return _mm_cmplt_epi8(_mm_add_epi8(v, ft_set16((uint8_t)(0x80 - lo))),
                          ft_set16((uint8_t)(0x80 + n)));
}
static inline uint32_t ft_bits16(ft_v16 v) { return (uint32_t)_mm_movemask_epi8(v); }

#elif (defined(__GNUC__) || defined(__clang__)) && defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
#define FT_SCAN_SIMD 1
typedef uint8x16_t ft_v16;

static inline ft_v16 ft_load16(const uint8_t* p) { return vld1q_u8(p); }
static inline ft_v16 ft_or16(ft_v16 a, ft_v16 b) { return vorrq_u8(a, b); }
static inline ft_v16 ft_set16(uint8_t c) { return vdupq_n_u8(c); }
static inline ft_v16 ft_range16(ft_v16 v, uint8_t lo, uint8_t n) {
    return vcltq_u8(vsubq_u8(v, ft_set16(lo)), ft_set16(n));
}
/* NEON has no movemask: keep one bit of each byte's answer (bit k % 8 of
 * byte k) and add each half's eight bytes. */
static inline uint32_t ft_bits16(ft_v16 v) {
    static const uint8_t weights[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    uint8x16_t m = vandq_u8(v, vld1q_u8(weights));
    return (uint32_t)vaddv_u8(vget_low_u8(m)) | ((uint32_t)vaddv_u8(vget_high_u8(m)) << 8);
}

#else
#define FT_SCAN_SIMD 0
#endif

#if FT_SCAN_SIMD
#define FT_INLINE static inline __attribute__((always_inline))

/* Bit k set when byte i + k is an ASCII letter [A-Za-z], in the window at
 * i (see the top). A byte >= 0x80 is none: | 0x20 keeps it >= 0xA0. */
FT_INLINE uint32_t ft_letters16(ft_v16 v) {
    return ft_bits16(ft_range16(ft_or16(v, ft_set16(0x20)), 'a', 26));
}
FT_INLINE uint32_t ft_letters(const uint8_t* s, ptrdiff_t i, ptrdiff_t end) {
    if (__builtin_expect(end - i >= 16, 1))
        return ft_letters16(ft_load16(s + i));
    return ft_letters16(ft_load16(s + end - 16)) >> (16 - (end - i));
}

/* The first clear bit of mask at or after start (16 when there is none). */
FT_INLINE int ft_run_end(uint32_t mask, int start) {
    return __builtin_ctz((~mask & (0xFFFFu << start)) | 0x10000u);
}

/* The ASCII characters that lead no run of letters in the cl100k shape
 * (\r \n ' and digits), as bits of one word: all are below 64. */
#define FT_LEAD_NO_LETTERS ((1ull << '\n') | (1ull << '\r') | (1ull << '\'') | (0x3FFull << '0'))

/* A scanner of _pretokenize.pyx's cl100k shape: the piece at i when it is
 * a run of ASCII letters, or one ASCII character ([^\r\n\p{L}\p{N}] and
 * not the "'" of a contraction) and such a run, ended by ASCII or the end;
 * letters_from(s, r, end) when a non-ASCII byte at r ends the ASCII run
 * (the run may go on there); general(s, i, end) for every other piece and
 * in texts under 16 bytes. Out-of-line calls only, so the common path needs
 * no register saves. */
FT_INLINE ptrdiff_t ft_cl100k(const uint8_t* s, ptrdiff_t i, ptrdiff_t end, ft_scanner letters_from,
                              ft_scanner general) {
    uint8_t b = s[i];
    uint32_t letters;
    ptrdiff_t r;
    int e;
    if (end < 16 || b >= 0x80)
        return general(s, i, end);
    letters = ft_letters(s, i, end);
    if (letters & 1)
        e = ft_run_end(letters, 0);
    else if ((letters & 2) && !(b < 64 && ((FT_LEAD_NO_LETTERS >> b) & 1)))
        e = ft_run_end(letters, 1);
    else
        return general(s, i, end);
    r = i + e;
    while (e == 16) {
        /* at r == end the window is the last 16 bytes, all shifted out */
        e = ft_run_end(ft_letters(s, r, end), 0);
        r += e;
    }
    return r == end || s[r] < 0x80 ? r : letters_from(s, r, end);
}

#else
#define ft_cl100k(s, i, end, letters_from, general) ((void)(letters_from), (general)((s), (i), (end)))
#endif

#endif
