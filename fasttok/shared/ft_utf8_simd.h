/* Strict UTF-8 checked 32 bytes at a time (AVX2), for the document blocks' UTF-8 test.
 *
 * ft_utf8_valid_prefix(s, n) returns p <= n such that s[:p] is valid strict UTF-8 ending at
 * a character's start: the scalar check (ft_utf8_strict.h, which says where the first bad
 * byte is) goes on from p. On a CPU without AVX2, or a compiler without the target
 * attribute, it returns 0 and the scalar check reads everything.
 *
 * The test of a 32-byte step is Keiser and Lemire's ("Validating UTF-8 in less than one
 * instruction per byte", 2021; simdjson's lookup4): three 16-entry tables, indexed by the
 * high and low nibble of the byte before and the high nibble of the byte itself, give the
 * errors each pair of bytes may be (too short, too long, overlong, surrogate, past
 * U+10FFFF, a second continuation); their AND is the errors it is, less the second
 * continuations that a three- or four-byte lead two or three bytes back asks for. A step
 * of ASCII only checks that the step before did not end inside a character. The rule is
 * Python's decoder's, as the scalar check's.
 *
 * A step that finds an error stops the scan: every byte before the step is valid but for
 * a character cut by the step's start, so p backs up to the start of the character that
 * holds the step's first byte's predecessor, and the scalar check finds the byte itself.
 */
#ifndef FT_UTF8_SIMD_H
#define FT_UTF8_SIMD_H

#include <stddef.h>
#include <stdint.h>

/* s[:i] valid but for the character that holds s[i - 1]: where that character starts */
static inline size_t ft_utf8_back_to_start(const uint8_t *s, size_t i) {
    size_t p;
    if (i == 0)
        return 0;
    p = i - 1;
    while (p > 0 && i - 1 - p < 3 && (s[p] & 0xC0) == 0x80)
        p--;
    return p;
}

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>

#define FT_U8_TOO_SHORT 0x01
#define FT_U8_TOO_LONG 0x02
#define FT_U8_OVERLONG_3 0x04
#define FT_U8_TOO_LARGE 0x08
#define FT_U8_SURROGATE 0x10
#define FT_U8_OVERLONG_2 0x20
#define FT_U8_TOO_LARGE_1000 0x40
#define FT_U8_OVERLONG_4 0x40
#define FT_U8_TWO_CONTS 0x80
#define FT_U8_CARRY (FT_U8_TOO_SHORT | FT_U8_TOO_LONG | FT_U8_TWO_CONTS)

/* the same 16 bytes in both lanes, for _mm256_shuffle_epi8 (which looks up within a lane) */
#define FT_U8_TABLE(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p) \
    _mm256_setr_epi8(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, \
                     a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p)

/* the bytes of (previous, current) shifted by k: byte j is the one k before current's j */
#define FT_U8_PREV(current, previous, k) _mm256_alignr_epi8( \
    (current), _mm256_permute2x128_si256((previous), (current), 0x21), 16 - (k))

__attribute__((target("avx2")))
static size_t ft_utf8_valid_prefix_avx2(const uint8_t *s, size_t n) {
    const __m256i low_nibble = _mm256_set1_epi8(0x0F);
    const __m256i byte_1_high = FT_U8_TABLE(
        /* 0_______ ________: ASCII then a character */
        FT_U8_TOO_LONG, FT_U8_TOO_LONG, FT_U8_TOO_LONG, FT_U8_TOO_LONG,
        FT_U8_TOO_LONG, FT_U8_TOO_LONG, FT_U8_TOO_LONG, FT_U8_TOO_LONG,
        /* 10______ ________: a continuation first */
        FT_U8_TWO_CONTS, FT_U8_TWO_CONTS, FT_U8_TWO_CONTS, FT_U8_TWO_CONTS,
        /* 1100____, 1101____: two-byte leads */
        FT_U8_TOO_SHORT | FT_U8_OVERLONG_2, FT_U8_TOO_SHORT,
        /* 1110____: three-byte lead */
        FT_U8_TOO_SHORT | FT_U8_OVERLONG_3 | FT_U8_SURROGATE,
        /* 1111____: four-byte lead (or none) */
        FT_U8_TOO_SHORT | FT_U8_TOO_LARGE | FT_U8_TOO_LARGE_1000 | FT_U8_OVERLONG_4);
    const __m256i byte_1_low = FT_U8_TABLE(
        FT_U8_CARRY | FT_U8_OVERLONG_3 | FT_U8_OVERLONG_2 | FT_U8_OVERLONG_4,  /* ____0000 */
        FT_U8_CARRY | FT_U8_OVERLONG_2,                                          /* ____0001 */
        FT_U8_CARRY, FT_U8_CARRY,                                                /* ____001_ */
        FT_U8_CARRY | FT_U8_TOO_LARGE,                                           /* ____0100 */
        FT_U8_CARRY | FT_U8_TOO_LARGE | FT_U8_TOO_LARGE_1000,                   /* ____0101 */
        FT_U8_CARRY | FT_U8_TOO_LARGE | FT_U8_TOO_LARGE_1000,                   /* ____011_ */
        FT_U8_CARRY | FT_U8_TOO_LARGE | FT_U8_TOO_LARGE_1000,
        FT_U8_CARRY | FT_U8_TOO_LARGE | FT_U8_TOO_LARGE_1000,                   /* ____1___ */
        FT_U8_CARRY | FT_U8_TOO_LARGE | FT_U8_TOO_LARGE_1000,
        FT_U8_CARRY | FT_U8_TOO_LARGE | FT_U8_TOO_LARGE_1000,
        FT_U8_CARRY | FT_U8_TOO_LARGE | FT_U8_TOO_LARGE_1000,
        FT_U8_CARRY | FT_U8_TOO_LARGE | FT_U8_TOO_LARGE_1000,
        FT_U8_CARRY | FT_U8_TOO_LARGE | FT_U8_TOO_LARGE_1000 | FT_U8_SURROGATE,  /* ____1101 */
        FT_U8_CARRY | FT_U8_TOO_LARGE | FT_U8_TOO_LARGE_1000,
        FT_U8_CARRY | FT_U8_TOO_LARGE | FT_U8_TOO_LARGE_1000);
    const __m256i byte_2_high = FT_U8_TABLE(
        /* ________ 0_______: a character after a lead */
        FT_U8_TOO_SHORT, FT_U8_TOO_SHORT, FT_U8_TOO_SHORT, FT_U8_TOO_SHORT,
        FT_U8_TOO_SHORT, FT_U8_TOO_SHORT, FT_U8_TOO_SHORT, FT_U8_TOO_SHORT,
        /* ________ 1000____ */
        FT_U8_TOO_LONG | FT_U8_OVERLONG_2 | FT_U8_TWO_CONTS | FT_U8_OVERLONG_3
            | FT_U8_TOO_LARGE_1000 | FT_U8_OVERLONG_4,
        /* ________ 1001____ */
        FT_U8_TOO_LONG | FT_U8_OVERLONG_2 | FT_U8_TWO_CONTS | FT_U8_OVERLONG_3 | FT_U8_TOO_LARGE,
        /* ________ 101_____ */
        FT_U8_TOO_LONG | FT_U8_OVERLONG_2 | FT_U8_TWO_CONTS | FT_U8_SURROGATE | FT_U8_TOO_LARGE,
        FT_U8_TOO_LONG | FT_U8_OVERLONG_2 | FT_U8_TWO_CONTS | FT_U8_SURROGATE | FT_U8_TOO_LARGE,
        /* ________ 11______ */
        FT_U8_TOO_SHORT, FT_U8_TOO_SHORT, FT_U8_TOO_SHORT, FT_U8_TOO_SHORT);
    /* a lead in the last three bytes whose character does not fit before the step's end */
    const __m256i last_leads = _mm256_setr_epi8(
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, (char)(0xF0 - 1), (char)(0xE0 - 1),
        (char)(0xC0 - 1));
    __m256i previous = _mm256_setzero_si256(), incomplete = _mm256_setzero_si256();
    __m256i input, prev1, found, third, fourth;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        input = _mm256_loadu_si256((const __m256i *)(s + i));
        if (_mm256_movemask_epi8(input) == 0) {
            if (!_mm256_testz_si256(incomplete, incomplete))
                return ft_utf8_back_to_start(s, i);
            incomplete = _mm256_setzero_si256();
        } else {
            prev1 = FT_U8_PREV(input, previous, 1);
            found = _mm256_and_si256(
                _mm256_and_si256(
                    _mm256_shuffle_epi8(byte_1_high,
                                        _mm256_and_si256(_mm256_srli_epi16(prev1, 4), low_nibble)),
                    _mm256_shuffle_epi8(byte_1_low, _mm256_and_si256(prev1, low_nibble))),
                _mm256_shuffle_epi8(byte_2_high,
                                    _mm256_and_si256(_mm256_srli_epi16(input, 4), low_nibble)));
            /* 0x80 where a three-byte lead is two back or a four-byte lead three back */
            third = _mm256_subs_epu8(FT_U8_PREV(input, previous, 2), _mm256_set1_epi8(0xE0 - 0x80));
            fourth = _mm256_subs_epu8(FT_U8_PREV(input, previous, 3), _mm256_set1_epi8(0xF0 - 0x80));
            found = _mm256_xor_si256(found, _mm256_and_si256(_mm256_or_si256(third, fourth),
                                                             _mm256_set1_epi8((char)0x80)));
            if (!_mm256_testz_si256(found, found))
                return ft_utf8_back_to_start(s, i);
            incomplete = _mm256_subs_epu8(input, last_leads);
        }
        previous = input;
    }
    return ft_utf8_back_to_start(s, i);
}

static size_t ft_utf8_valid_prefix(const uint8_t *s, size_t n) {
    static int avx2 = -1;  /* whether the CPU has AVX2, asked once (a race writes the same) */
    if (avx2 < 0)
        avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    return avx2 ? ft_utf8_valid_prefix_avx2(s, n) : 0;
}
#else
static size_t ft_utf8_valid_prefix(const uint8_t *s, size_t n) {
    (void)s;
    (void)n;
    return 0;
}
#endif

#endif
