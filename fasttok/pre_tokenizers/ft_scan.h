/* ft_scan.h -- runs of ASCII letters read 16 bytes at a time, and the
 * other ASCII pieces, for the scanners of _pretokenize.pyx.
 *
 * ft_letters_piece and ft_o200k find the pieces that are a run of ASCII
 * letters, or one ASCII character and such a run (most pieces of English
 * and code), with one 16-byte classification a step; in the cl100k and
 * o200k shapes, the ASCII runs of punctuation, digits and whitespace with
 * a loop over ft_ascii_class (ft_ascii_other); and hand every other piece
 * to the byte-at-a-time scanner they are given, whose derivation they
 * follow: the differential tests check that scanner against the regexes,
 * and a test checks the two give the same pieces (_pretokenize.use_simd).
 *
 * SSE2 is part of x86-64, so it needs no run-time dispatch; aarch64 always
 * has NEON. Elsewhere FT_SCAN_SIMD is 0 and these are the byte-at-a-time
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

#include "unicode_tables.h"

/* A scanner of _pretokenize.pyx: the end of the piece starting at s + i. */
typedef ptrdiff_t (*ft_scanner)(const uint8_t* s, ptrdiff_t i, ptrdiff_t end);

/* ft_class of each ASCII byte (FT_L, FT_N, FT_WS, ...), filled by
 * _pretokenize.pyx at import: its scanners and the ones here read it. */
static uint16_t ft_ascii_class[128];

/* ft_class of each code point below U+0800 (ASCII and the two-byte
 * characters: Latin-1, Latin Extended, Greek, Cyrillic, Armenian, Hebrew,
 * Arabic...), filled by _pretokenize.pyx at import from the Unicode 16
 * tables: one load classes a two-byte character where ft_class takes
 * three, and the scanners here read it for the tables' exact class. */
static uint16_t ft_class_2byte[0x800];

/* What the cl100k and o200k shapes take after a run of punctuation:
 * nothing (llama.cpp's seed-coder), [\r\n]* (cl100k) or [\r\n/]* (o200k). */
enum ft_trail { FT_TRAIL_NONE, FT_TRAIL_NEWLINES, FT_TRAIL_NEWLINES_SLASH };

/* The pattern shapes of _pretokenize.pyx read here. */
enum ft_shape { FT_CL100K, FT_GPT2, FT_O200K };

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

/* The window at i (see the top) and how far its mask must be shifted down. */
FT_INLINE ft_v16 ft_window(const uint8_t* s, ptrdiff_t i, ptrdiff_t end, int* shift) {
    if (__builtin_expect(end - i >= 16, 1)) {
        *shift = 0;
        return ft_load16(s + i);
    }
    *shift = (int)(16 - (end - i));
    return ft_load16(s + end - 16);
}

/* Bit k set when byte i + k is an ASCII letter [A-Za-z], in the window at
 * i. A byte >= 0x80 is none: | 0x20 keeps it >= 0xA0. */
FT_INLINE uint32_t ft_letters(const uint8_t* s, ptrdiff_t i, ptrdiff_t end) {
    int shift;
    ft_v16 v = ft_window(s, i, end, &shift);
    return ft_bits16(ft_range16(ft_or16(v, ft_set16(0x20)), 'a', 26)) >> shift;
}

/* The first clear bit of mask at or after start (16 when there is none). */
FT_INLINE int ft_run_end(uint32_t mask, int start) {
    return __builtin_ctz((~mask & (0xFFFFu << start)) | 0x10000u);
}

/* The ASCII characters other than letters that lead no run of letters, as
 * bits of one word (all are below 64): \r \n ' and digits in the cl100k
 * shape ("'" starts its contractions), \r \n and digits in o200k's. */
#define FT_CL100K_NO_LEAD ((1ull << '\n') | (1ull << '\r') | (1ull << '\'') | (0x3FFull << '0'))
#define FT_O200K_NO_LEAD ((1ull << '\n') | (1ull << '\r') | (0x3FFull << '0'))

/* Whether the ASCII non-letter b may lead a run of letters into one piece
 * (gpt2: " ?\p{L}+"; cl100k, o200k: [^\r\n\p{L}\p{N}]). */
FT_INLINE int ft_leads_letters(enum ft_shape shape, uint8_t b) {
    if (shape == FT_GPT2)
        return b == ' ';
    return !(b < 64 && (((shape == FT_CL100K ? FT_CL100K_NO_LEAD : FT_O200K_NO_LEAD) >> b) & 1));
}

#define FT_IS_NEWLINE(b) ((b) == '\n' || (b) == '\r')

#define FT_NOINLINE static __attribute__((noinline))

/* The class of the character at r when it is ASCII, two bytes (lead
 * C2-DF: ft_class_2byte), three (lead E0-EF) or four (lead F0-F7: ft_class),
 * decoded as _pretokenize's utf8_get decodes it, and its length in *w; -1
 * for any other (a continuation byte, or a lead cut by the end), which the
 * caller's general scanner decides. */
FT_INLINE int ft_class_short(const uint8_t* s, ptrdiff_t r, ptrdiff_t end, int* w) {
    uint8_t b = s[r];
    if (b < 0x80) {
        *w = 1;
        return ft_ascii_class[b];
    }
    if ((uint8_t)(b - 0xC2) < 30 && r + 1 < end) {
        *w = 2;
        return ft_class_2byte[((b & 0x1F) << 6) | (s[r + 1] & 0x3F)];
    }
    if ((uint8_t)(b - 0xE0) < 16 && r + 2 < end) {
        *w = 3;
        /* U+5000-U+9FFF are all Lo (_pretokenize's _class_at), and so are
         * U+B000-U+CFFF (Hangul syllables, U+AC00-U+D7A3): leads E5-E9, EB, EC */
        if ((0x1BE0u >> (b & 0x0F)) & 1)
            return FT_L | FT_LM_LO;
        return ft_class(((uint32_t)(b & 0x0F) << 12) | ((uint32_t)(s[r + 1] & 0x3F) << 6)
                        | (s[r + 2] & 0x3F));
    }
    if ((uint8_t)(b - 0xF0) < 8 && r + 3 < end) {
        *w = 4;
        return ft_class(((uint32_t)(b & 0x07) << 18) | ((uint32_t)(s[r + 1] & 0x3F) << 12)
                        | ((uint32_t)(s[r + 2] & 0x3F) << 6) | (s[r + 3] & 0x3F));
    }
    return -1;
}

/* The end of the run of letters (FT_L) from r, reading the characters of
 * up to three bytes with ft_class_short and going on through letters_from
 * at any other: the non-ASCII letters of Latin, Greek, Cyrillic, Arabic,
 * Devanagari, Chinese... text, which otherwise took the general scanner
 * (~2.5 times the instructions a byte on multi.txt). Out of line, so the
 * ASCII path that calls it needs no register saves. */
FT_NOINLINE ptrdiff_t ft_letters_on(const uint8_t* s, ptrdiff_t r, ptrdiff_t end,
                                    const ft_scanner* letters_from) {
    int w, cls;
    while (r < end) {
        cls = ft_class_short(s, r, end, &w);
        if (cls < 0)
            return (*letters_from)(s, r, end);
        if (!(cls & FT_L))
            return r;
        r += w;
    }
    return r;
}

/* The piece at i of the cl100k or gpt2 shape whose run of letters starts
 * with a non-ASCII letter: at i (lead < 0), or at i + 1 after an ASCII
 * character that leads letters in the shape lead. ft_letters_on's run;
 * general(s, i, end) for any other piece. (Six arguments: a seventh went
 * on the stack, and its caller, every piece's scanner, paid for the room.) */
FT_NOINLINE ptrdiff_t ft_letters_short(const uint8_t* s, ptrdiff_t i, ptrdiff_t end, int lead,
                                       const ft_scanner* letters_from, ft_scanner general) {
    ptrdiff_t j = lead < 0 ? i : i + 1;
    int w, cls;
    if (lead >= 0 && !ft_leads_letters((enum ft_shape)lead, s[i]))
        return general(s, i, end);
    cls = ft_class_short(s, j, end, &w);
    if (cls < 0 || !(cls & FT_L))
        return general(s, i, end);
    return ft_letters_on(s, j + w, end, letters_from);
}

/* o200k's letter classes: U = [Lu Lt Lm Lo M], W = [Ll Lm Lo M]. */
#define FT_O200K_U (FT_LU_LT | FT_LM_LO | FT_M)
#define FT_O200K_W (FT_LL | FT_LM_LO | FT_M)

/* The end of the run of characters having a bit of mask from r (without:
 * having none), characters ft_class_short reads only: -2 at any other. */
FT_INLINE ptrdiff_t ft_run_short(const uint8_t* s, ptrdiff_t r, ptrdiff_t end, int mask,
                                 int without) {
    int w, cls;
    for (; r < end; r += w) {
        cls = ft_class_short(s, r, end, &w);
        if (cls < 0)
            return -2;
        if (without ? (cls & mask) != 0 : !(cls & mask))
            break;
    }
    return r;
}

/* o200k's U*W+ at q as _pretokenize's _lower_after_upper reads it (U* takes
 * the run of U; W+ runs on from a W after it, else U* gives back to its
 * last character that is also a W), over characters of up to three bytes:
 * the end, -1 when it fails, -2 at a character ft_class_short does not read. */
FT_INLINE ptrdiff_t ft_o200k_lower_after_upper(const uint8_t* s, ptrdiff_t q, ptrdiff_t end) {
    ptrdiff_t last_both = -1;
    int w, cls;
    for (; q < end; q += w) {
        cls = ft_class_short(s, q, end, &w);
        if (cls < 0)
            return -2;
        if (!(cls & FT_O200K_U))
            return cls & FT_O200K_W ? ft_run_short(s, q + w, end, FT_O200K_W, 0) : last_both;
        if (cls & FT_O200K_W)
            last_both = q + w;
    }
    return last_both;
}

/* What [^\s\p{L}\p{N}] excludes. */
#define FT_NOT_OTHER (FT_WS | FT_L | FT_N)

/* The piece at i of the o200k shape (_pretokenize's _o200k) when it holds a
 * non-ASCII character, starting at i or after the first character there:
 *   P?U*W+ then P?U+W*  a run of letters, at i or after a lead P at i (P =
 *                       [^\r\n\p{L}\p{N}]: ASCII that ft_leads_letters says,
 *                       or a non-ASCII character that is no letter, digit
 *                       or mark); the lead is tried taken first
 *   " ?[^\s\p{L}\p{N}]+[\r\n/]*"  when a lead P takes no letters
 * general(s, i, end) for every other piece: a mark or a digit at i,
 * whitespace, a character ft_class_short does not read met on the way,
 * and a "'" after the letters (a contraction may follow). Out of line, as
 * ft_letters_on. */
FT_NOINLINE ptrdiff_t ft_o200k_short(const uint8_t* s, ptrdiff_t i, ptrdiff_t end,
                                     ft_scanner general) {
    int w, w2, cls = ft_class_short(s, i, end, &w), c2;
    ptrdiff_t q = i, e;
    if (cls < 0)
        return general(s, i, end);
    if (!(cls & FT_L)) {
        if (w == 1 ? !ft_leads_letters(FT_O200K, s[i]) : (cls & (FT_N | FT_M)) != 0)
            return general(s, i, end);
        q = i + w;
    }
    e = ft_o200k_lower_after_upper(s, q, end);
    if (e == -1) {  /* U+W*: one U, then the runs */
        c2 = q < end ? ft_class_short(s, q, end, &w2) : 0;
        if (c2 < 0)
            return general(s, i, end);
        e = c2 & FT_O200K_U ? ft_run_short(s, q + w2, end, FT_O200K_U, 0) : -1;
        if (e >= 0)
            e = ft_run_short(s, e, end, FT_O200K_W, 0);
    }
    if (e == -1) {  /* no letters after the lead: " ?" then the run of others */
        if (s[i] == ' ' && q < end && (c2 = ft_class_short(s, q, end, &w2)) >= 0
            && !(c2 & FT_NOT_OTHER))
            e = ft_run_short(s, q + w2, end, FT_NOT_OTHER, 1);
        else if (!(cls & FT_NOT_OTHER))
            e = ft_run_short(s, q, end, FT_NOT_OTHER, 1);
        else
            return general(s, i, end);
        if (e < 0)
            return general(s, i, end);
        while (e < end && (FT_IS_NEWLINE(s[e]) || s[e] == '/'))
            e++;
        return e;
    }
    if (e < 0 || (e < end && s[e] == '\''))
        return general(s, i, end);
    return e;
}

/* The end of the piece at i of the cl100k and o200k shapes when it starts
 * with an ASCII byte that is no letter and leads no run of ASCII letters
 * (the caller has tried those), and the bytes that decide it are ASCII: a run of
 * up to `digits` digits, a run of punctuation (after one space or not) and
 * its trail, or a run of whitespace ended by a byte that is not. Both
 * patterns read these alike:
 *   \p{N}{1,digits}                a digit starts a number
 *   " ?[^\s\p{L}\p{N}]++" + trail  one space may lead punctuation
 *   \s*[\r\n]                    whitespace holding a newline ends after its last one
 *   \s+(?!\S) | \s               else it gives its last character to the next piece
 * A non-ASCII byte where it could change the answer (a letter after the
 * first byte, or continuing a run), a run reaching the end (\s++$) and "'"
 * (cl100k's contractions) give -1, and the caller's general scanner, whose
 * derivation these follow (tests/test_scanner_simd.py), decides them from
 * its one call site. Whitespace and
 * punctuation were a third of English's pieces and half of code's, at
 * ~140 instructions each through general. */
FT_INLINE ptrdiff_t ft_ascii_other(const uint8_t* s, ptrdiff_t i, ptrdiff_t end, int digits,
                                   enum ft_trail trail) {
    uint8_t b = s[i];
    uint16_t cls = ft_ascii_class[b];
    ptrdiff_t r = i + 1, after_newline = -1;
    if (r == end)  /* whatever it is, every alternative takes it alone */
        return r;
    /* a non-ASCII letter there would join a leading character, a non-ASCII
     * digit, punctuation or whitespace the run */
    if (s[r] >= 0x80 || b == '\'')
        return -1;
    if (cls & FT_N) {
        while (r - i < digits && r < end && (uint8_t)(s[r] - '0') < 10) r++;
        return r - i < digits && r < end && s[r] >= 0x80 ? -1 : r;
    }
    if (b == ' ' && !(ft_ascii_class[s[r]] & (FT_WS | FT_L | FT_N)))
        cls = ft_ascii_class[s[r++]];  /* " ?" then the run */
    if (!(cls & FT_WS)) {
        while (r < end && s[r] < 0x80 && !(ft_ascii_class[s[r]] & (FT_WS | FT_L | FT_N))) r++;
        if (r < end && s[r] >= 0x80)
            return -1;
        if (trail != FT_TRAIL_NONE)
            while (r < end && (FT_IS_NEWLINE(s[r]) || (trail == FT_TRAIL_NEWLINES_SLASH
                                                        && s[r] == '/')))
                r++;
        return r;
    }
    r = i;
    while (r < end && s[r] < 0x80 && (ft_ascii_class[s[r]] & FT_WS)) {
        if (FT_IS_NEWLINE(s[r])) after_newline = r + 1;
        r++;
    }
    if (r == end || s[r] >= 0x80)
        return -1;
    if (after_newline >= 0)
        return after_newline;
    return r - i >= 2 ? r - 1 : r;
}

/* Where the run of ASCII letters of the piece at i (an ASCII byte) starts:
 * 0 at a letter, 1 after one character that leads letters, -1 when the
 * piece is no such run; byte by byte, for a text under 16 bytes (which has
 * no 16-byte window). */
FT_INLINE int ft_letters_start(enum ft_shape shape, const uint8_t* s, ptrdiff_t i, ptrdiff_t end) {
    uint8_t b = s[i];
    if (ft_ascii_class[b] & FT_L)
        return 0;
    return i + 1 < end && s[i + 1] < 0x80 && (ft_ascii_class[s[i + 1]] & FT_L)
        && ft_leads_letters(shape, b) ? 1 : -1;
}

/* A scanner of _pretokenize.pyx's cl100k or gpt2 shape: the piece at i when
 * it is a run of ASCII letters, or one ASCII character that leads them and
 * such a run, ended by ASCII or the end; *letters_from(s, r, end) when a
 * non-ASCII byte at r ends the ASCII run (the run may go on there); in the
 * cl100k shape (digits, trail: its pattern's), ft_ascii_other's pieces;
 * general(s, i, end) for every other piece. With short_classes (the
 * Unicode 16 tables' scanners) a run meeting or starting with non-ASCII
 * letters goes on through ft_letters_on. A text under 16 bytes is read
 * a byte at a time, with the same outcomes.
 * Out-of-line calls only, so the common path needs no register saves;
 * letters_from is the address of the scanner, not the scanner, so that
 * the load of it is not hoisted into every piece's path. */
FT_INLINE ptrdiff_t ft_letters_piece(enum ft_shape shape, const uint8_t* s, ptrdiff_t i,
                                     ptrdiff_t end, const ft_scanner* letters_from,
                                     ft_scanner general, int digits, enum ft_trail trail,
                                     int short_classes) {
    uint8_t b = s[i];
    uint32_t letters;
    ptrdiff_t r;
    int e = -1;
    if (b >= 0x80)
        return short_classes ? ft_letters_short(s, i, end, -1, letters_from, general)
                             : general(s, i, end);
    if (end >= 16) {
        letters = ft_letters(s, i, end);
        if (letters & 1)
            e = ft_run_end(letters, 0);
        else if ((letters & 2) && ft_leads_letters(shape, b))
            e = ft_run_end(letters, 1);
    } else if ((e = ft_letters_start(shape, s, i, end)) >= 0) {
        while (i + e < end && s[i + e] < 0x80 && (ft_ascii_class[s[i + e]] & FT_L)) e++;
    }
    if (e < 0) {  /* one place, so each scanner holds one copy of it */
        /* ft_ascii_other would leave the piece to general */
        if (short_classes && i + 1 < end && s[i + 1] >= 0x80)
            return ft_letters_short(s, i, end, shape, letters_from, general);
        r = shape == FT_CL100K ? ft_ascii_other(s, i, end, digits, trail) : -1;
        return r >= 0 ? r : general(s, i, end);
    }
    r = i + e;
    while (e == 16) {
        /* at r == end the window is the last 16 bytes, all shifted out */
        e = ft_run_end(ft_letters(s, r, end), 0);
        r += e;
    }
    if (r == end || s[r] < 0x80)
        return r;
    return short_classes ? ft_letters_on(s, r, end, letters_from) : (*letters_from)(s, r, end);
}

/* A scanner of _pretokenize.pyx's o200k shape: the piece at i when it is
 * [A-Z]*[a-z]* (one letter at least), alone or led by one ASCII character,
 * and ended by ASCII other than "'" (a contraction may follow) or the end:
 * in ASCII no letter is both cases, so P?U*W+ and P?U+W* both end there;
 * ft_ascii_other's pieces (digits: the pattern's). With short_classes (the
 * Unicode 16 tables' scanners) a piece starting with a non-ASCII character,
 * or whose ASCII letters meet one, is ft_o200k_short's. general(s, i,
 * end) for every other piece and runs reaching 16 bytes. A text under 16
 * bytes is read a byte at a time, with the same outcomes. */
FT_INLINE ptrdiff_t ft_o200k(const uint8_t* s, ptrdiff_t i, ptrdiff_t end, ft_scanner general,
                             int digits, int short_classes) {
    uint8_t b = s[i];
    uint32_t upper, lower;
    ptrdiff_t r;
    int shift, start = -1, e = 0;
    ft_v16 v;
    if (b >= 0x80)
        return short_classes ? ft_o200k_short(s, i, end, general) : general(s, i, end);
    if (end >= 16) {
        v = ft_window(s, i, end, &shift);
        upper = ft_bits16(ft_range16(v, 'A', 26)) >> shift;
        lower = ft_bits16(ft_range16(v, 'a', 26)) >> shift;
        if ((upper | lower) & 1)
            start = 0;
        else if (((upper | lower) & 2) && ft_leads_letters(FT_O200K, b))
            start = 1;
        if (start >= 0)
            e = ft_run_end(lower, ft_run_end(upper, start));
    } else if ((start = ft_letters_start(FT_O200K, s, i, end)) >= 0) {
        for (e = start; i + e < end && (uint8_t)(s[i + e] - 'A') < 26; e++) {}
        for (; i + e < end && (uint8_t)(s[i + e] - 'a') < 26; e++) {}
    }
    if (start < 0) {
        r = ft_ascii_other(s, i, end, digits, FT_TRAIL_NEWLINES_SLASH);
        if (r >= 0)
            return r;
        r = i + 1;  /* ft_o200k_short's when non-ASCII letters may follow */
    } else {
        r = i + e;
        if (e < 16 && (r == end || (s[r] < 0x80 && s[r] != '\'')))
            return r;
    }
    if (short_classes && e < 16 && r < end && s[r] >= 0x80)
        return ft_o200k_short(s, i, end, general);
    return general(s, i, end);
}

#else
#define ft_letters_piece(shape, s, i, end, letters_from, general, digits, trail, short_classes) \
    ((void)(letters_from), (general)((s), (i), (end)))
#define ft_o200k(s, i, end, general, digits, short_classes) ((general)((s), (i), (end)))
#endif

#endif
