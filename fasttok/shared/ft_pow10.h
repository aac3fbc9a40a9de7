/* float(10 ** k) for k in 0..308: the powers of ten serde_json scales a JSON number's
 * significand by (its POW10 table), each the double nearest to 10**k. Written as the
 * decimal literals 1e0 .. 1e308, which the C compiler rounds correctly (GCC and Clang
 * read a decimal floating constant to the nearest double), so the table is made at
 * compile time, not by 309 reads of "1eK" at each import. tests/test_serde_f64.py
 * checks every entry through the compiled score reader.
 */
#ifndef FT_POW10_H
#define FT_POW10_H

#define FT_POW10_PASTE(k) 1e##k
#define FT_POW10_ONE(k) FT_POW10_PASTE(k)
/* the ten powers 1e<t>0 .. 1e<t>9 */
#define FT_POW10_ROW(t) FT_POW10_ONE(t##0), FT_POW10_ONE(t##1), FT_POW10_ONE(t##2), \
    FT_POW10_ONE(t##3), FT_POW10_ONE(t##4), FT_POW10_ONE(t##5), FT_POW10_ONE(t##6), \
    FT_POW10_ONE(t##7), FT_POW10_ONE(t##8), FT_POW10_ONE(t##9)

static const double ft_pow10[309] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
    FT_POW10_ROW(1), FT_POW10_ROW(2), FT_POW10_ROW(3), FT_POW10_ROW(4), FT_POW10_ROW(5),
    FT_POW10_ROW(6), FT_POW10_ROW(7), FT_POW10_ROW(8), FT_POW10_ROW(9), FT_POW10_ROW(10),
    FT_POW10_ROW(11), FT_POW10_ROW(12), FT_POW10_ROW(13), FT_POW10_ROW(14), FT_POW10_ROW(15),
    FT_POW10_ROW(16), FT_POW10_ROW(17), FT_POW10_ROW(18), FT_POW10_ROW(19), FT_POW10_ROW(20),
    FT_POW10_ROW(21), FT_POW10_ROW(22), FT_POW10_ROW(23), FT_POW10_ROW(24), FT_POW10_ROW(25),
    FT_POW10_ROW(26), FT_POW10_ROW(27), FT_POW10_ROW(28), FT_POW10_ROW(29),
    1e300, 1e301, 1e302, 1e303, 1e304, 1e305, 1e306, 1e307, 1e308,
};

#undef FT_POW10_ROW
#undef FT_POW10_ONE
#undef FT_POW10_PASTE

#endif
