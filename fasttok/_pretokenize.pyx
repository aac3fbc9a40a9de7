"""Pre-tokenizers that split text exactly as tiktoken's regexes do.

Each scanner takes valid UTF-8 and a start offset and returns where the
piece starting there ends, so encoding walks the text once with no regex
engine, no match objects and no Python strings. They are derivations of the
patterns, alternative by alternative, under leftmost-first (backtracking)
semantics; the reasoning for each is written beside it. Class tests go
through a 128-entry table for ASCII and the generated Unicode 16.0 tables
(``unicode_tables.h``, the version tiktoken's regex engine uses) otherwise.

The differential tests run every scanner against the ``regex`` module on the
reference pattern over generated text, and the encoders against tiktoken.

Known patterns (tiktoken's ``pat_str`` strings, current and legacy
spellings) map to scanners in :mod:`fasttok.patterns`; anything else goes
through the generic ``re`` translation there.
"""

from libc.stdint cimport uint8_t, uint16_t, uint32_t

from ._unicode cimport (FT_L, FT_LL, FT_LM_LO, FT_LU_LT, FT_M, FT_N, FT_WS, ft_class,
                        ft_simple_fold_to_ascii_lower)

cdef uint16_t ASCII_CLASS[128]
cdef int _i
for _i in range(128):
    ASCII_CLASS[_i] = ft_class(_i)

cdef enum:
    # Letters of o200k's two case classes: U = [Lu Lt Lm Lo M], W = [Ll Lm Lo M].
    CLS_U = FT_LU_LT | FT_LM_LO | FT_M
    CLS_W = FT_LL | FT_LM_LO | FT_M


cdef inline uint32_t _decode(const uint8_t* s, Py_ssize_t i, Py_ssize_t end, int* width) noexcept nogil:
    # The input is valid UTF-8 (it came from a str), so only lengths are checked.
    cdef uint8_t b = s[i]
    if b < 0x80:
        width[0] = 1
        return b
    if b < 0xE0 and i + 1 < end:
        width[0] = 2
        return ((b & 0x1F) << 6) | (s[i + 1] & 0x3F)
    if b < 0xF0 and i + 2 < end:
        width[0] = 3
        return ((b & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F)
    if i + 3 < end:
        width[0] = 4
        return ((b & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F)
    width[0] = 1
    return 0xFFFD


cdef inline uint16_t _class_at(const uint8_t* s, Py_ssize_t i, Py_ssize_t end, int* width) noexcept nogil:
    cdef uint8_t b = s[i]
    if b < 0x80:
        width[0] = 1
        return ASCII_CLASS[b]
    return ft_class(_decode(s, i, end, width))


cdef inline Py_ssize_t _run(const uint8_t* s, Py_ssize_t i, Py_ssize_t end, uint16_t mask) noexcept nogil:
    # End of the run of characters having any bit of mask.
    cdef int w
    while i < end:
        if s[i] < 0x80:
            if not (ASCII_CLASS[s[i]] & mask):
                break
            i += 1
        else:
            if not (_class_at(s, i, end, &w) & mask):
                break
            i += w
    return i


cdef inline Py_ssize_t _run_other(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    # End of a run of [^\s\p{L}\p{N}].
    cdef int w
    while i < end:
        if s[i] < 0x80:
            if ASCII_CLASS[s[i]] & (FT_WS | FT_L | FT_N):
                break
            i += 1
        else:
            if _class_at(s, i, end, &w) & (FT_WS | FT_L | FT_N):
                break
            i += w
    return i


cdef inline Py_ssize_t _run_digits3(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    # \p{N}{1,3}, greedy; the caller has checked the first one.
    cdef int w, count = 0
    while i < end and count < 3:
        if not (_class_at(s, i, end, &w) & FT_N):
            break
        i += w
        count += 1
    return i


cdef inline bint _is_other(uint16_t cls) noexcept nogil:
    return not (cls & (FT_WS | FT_L | FT_N))


cdef inline Py_ssize_t _contraction(const uint8_t* s, Py_ssize_t i, Py_ssize_t end,
                                    bint fold) noexcept nogil:
    # With s[i] == "'": the end of 's 't 're 've 'm 'll 'd (any case when fold,
    # using Unicode simple case folding, so "'ſ" counts), else 0.
    cdef int w1, w2
    cdef uint32_t a, b
    if i + 1 >= end:
        return 0
    a = _decode(s, i + 1, end, &w1)
    if fold:
        a = ft_simple_fold_to_ascii_lower(a) if a >= 0x80 else (a | 0x20 if 0x41 <= a <= 0x5A else a)
    if a == 0x73 or a == 0x74 or a == 0x6D or a == 0x64:  # s t m d
        return i + 1 + w1
    if a != 0x6C and a != 0x76 and a != 0x72:  # l v r
        return 0
    if i + 1 + w1 >= end:
        return 0
    b = _decode(s, i + 1 + w1, end, &w2)
    if fold:
        b = ft_simple_fold_to_ascii_lower(b) if b >= 0x80 else (b | 0x20 if 0x41 <= b <= 0x5A else b)
    if (a == 0x6C and b == 0x6C) or (a != 0x6C and b == 0x65):  # ll ve re
        return i + 1 + w1 + w2
    return 0


cdef inline Py_ssize_t _whitespace(const uint8_t* s, Py_ssize_t i, Py_ssize_t end,
                                   bint whole_at_end, bint stop_after_newline) noexcept nogil:
    # The whitespace alternatives every pattern ends with, for a run starting at i:
    #   whole_at_end:       \s++$          the run reaches the end: take it all
    #   stop_after_newline: \s*[\r\n]+     backtracking leaves the run ending at its last \r or \n
    #   then                \s+(?!\S)      a run of 2+ gives back its last character to the next piece
    #   then                \s / \s+       one character (a run of one)
    cdef Py_ssize_t j = i, last_start = i, after_newline = -1
    cdef int w
    cdef uint8_t b
    while j < end:
        b = s[j]
        if b < 0x80:
            if not (ASCII_CLASS[b] & FT_WS):
                break
            if b == 0x0A or b == 0x0D:
                after_newline = j + 1
            last_start = j
            j += 1
        else:
            if not (_class_at(s, j, end, &w) & FT_WS):
                break
            last_start = j
            j += w
    if whole_at_end and j == end:
        return end
    if stop_after_newline and after_newline > 0:
        return after_newline
    if j == end:
        return end
    if last_start > i:
        return last_start
    return j


cdef Py_ssize_t scan_gpt2(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    # 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
    # (the current spelling adds \s++$, which matches exactly where \s+(?!\S)
    # already takes the whole run, and is possessive where nothing backtracks).
    cdef int w, w2
    cdef Py_ssize_t r, j = i
    cdef uint16_t cls = _class_at(s, i, end, &w)
    cdef uint16_t nxt
    if s[i] == 0x27:
        r = _contraction(s, i, end, False)
        if r:
            return r
    if s[i] == 0x20 and i + 1 < end:
        nxt = _class_at(s, i + 1, end, &w2)
        if nxt & (FT_L | FT_N) or _is_other(nxt):
            cls = nxt
            j = i + 1
    if cls & FT_L:
        return _run(s, j, end, FT_L)
    if cls & FT_N:
        return _run(s, j, end, FT_N)
    if _is_other(cls):
        return _run_other(s, j, end)
    return _whitespace(s, i, end, True, False)


cdef inline Py_ssize_t _cl100k(const uint8_t* s, Py_ssize_t i, Py_ssize_t end,
                               bint whole_at_end) noexcept nogil:
    # '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+
    # | ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s
    cdef int w, w2
    cdef Py_ssize_t r
    cdef uint8_t b = s[i]
    cdef uint16_t cls = _class_at(s, i, end, &w)
    if b == 0x27:
        r = _contraction(s, i, end, True)
        if r:
            return r
    if cls & FT_L:
        return _run(s, i, end, FT_L)
    if b != 0x0D and b != 0x0A and not (cls & FT_N):
        # one character of anything else may lead a run of letters
        if i + w < end and _class_at(s, i + w, end, &w2) & FT_L:
            return _run(s, i + w, end, FT_L)
    if cls & FT_N:
        return _run_digits3(s, i, end)
    r = -1
    if b == 0x20 and i + 1 < end and _is_other(_class_at(s, i + 1, end, &w2)):
        r = _run_other(s, i + 1, end)
    elif _is_other(cls):
        r = _run_other(s, i, end)
    if r >= 0:
        while r < end and (s[r] == 0x0D or s[r] == 0x0A):
            r += 1
        return r
    return _whitespace(s, i, end, whole_at_end, True)


cdef Py_ssize_t scan_cl100k(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return _cl100k(s, i, end, True)


cdef Py_ssize_t scan_cl100k_legacy(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    # The older spelling (also Llama 3's): \s*[\r\n]+|\s+(?!\S)|\s+ with no \s++$,
    # so a trailing "\n " splits after the newline.
    return _cl100k(s, i, end, False)


cdef inline Py_ssize_t _lower_after_upper(const uint8_t* s, Py_ssize_t q, Py_ssize_t end) noexcept nogil:
    # U*W+ at q under backtracking: U* takes the whole run of U; if a W follows,
    # W+ runs on from it. Otherwise U* gives characters back until one of them is
    # also a W (Lm, Lo, M are in both), and W+ is that single character.
    # Returns the end, or -1 when the alternative fails.
    cdef Py_ssize_t u = q, last_both = -1
    cdef int w
    cdef uint16_t cls
    while u < end:
        cls = _class_at(s, u, end, &w)
        if not (cls & CLS_U):
            if cls & CLS_W:
                return _run(s, u, end, CLS_W)
            break
        if cls & CLS_W:
            last_both = u + w
        u += w
    return last_both


cdef inline Py_ssize_t _upper_then_lower(const uint8_t* s, Py_ssize_t q, Py_ssize_t end) noexcept nogil:
    # U+W*: needs one U; never backtracks.
    cdef int w
    if q >= end or not (_class_at(s, q, end, &w) & CLS_U):
        return -1
    return _run(s, _run(s, q, end, CLS_U), end, CLS_W)


cdef inline Py_ssize_t _with_contraction(const uint8_t* s, Py_ssize_t e, Py_ssize_t end) noexcept nogil:
    cdef Py_ssize_t r
    if e < end and s[e] == 0x27:
        r = _contraction(s, e, end, True)
        if r:
            return r
    return e


cdef Py_ssize_t scan_o200k(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    # P?U*W+C? | P?U+W*C? | \p{N}{1,3} | ?[^\s\p{L}\p{N}]+[\r\n/]* | \s*[\r\n]+ | \s+(?!\S) | \s+
    # with P = [^\r\n\p{L}\p{N}], C the optional contraction. Greedy, not
    # possessive: P? is tried taken, then not taken (which matters when P is a
    # mark, since marks are in P and in U and W too).
    cdef int w, w2
    cdef Py_ssize_t e
    cdef uint8_t b = s[i]
    cdef uint16_t cls = _class_at(s, i, end, &w)
    cdef bint lead = b != 0x0D and b != 0x0A and not (cls & (FT_L | FT_N))
    cdef bint letter = (cls & (FT_L | FT_M)) != 0
    if lead:
        e = _lower_after_upper(s, i + w, end)
        if e >= 0:
            return _with_contraction(s, e, end)
    if letter:
        e = _lower_after_upper(s, i, end)
        if e >= 0:
            return _with_contraction(s, e, end)
    if lead:
        e = _upper_then_lower(s, i + w, end)
        if e >= 0:
            return _with_contraction(s, e, end)
    if letter:
        e = _upper_then_lower(s, i, end)
        if e >= 0:
            return _with_contraction(s, e, end)
    if cls & FT_N:
        return _run_digits3(s, i, end)
    e = -1
    if b == 0x20 and i + 1 < end and _is_other(_class_at(s, i + 1, end, &w2)):
        e = _run_other(s, i + 1, end)
    elif _is_other(cls):
        e = _run_other(s, i, end)
    if e >= 0:
        while e < end and (s[e] == 0x0D or s[e] == 0x0A or s[e] == 0x2F):
            e += 1
        return e
    return _whitespace(s, i, end, False, True)


SCANNERS = ("gpt2", "cl100k", "cl100k_legacy", "o200k")


cdef ScanFn scanner_by_name(str name) except NULL:
    if name == "gpt2":
        return scan_gpt2
    if name == "cl100k":
        return scan_cl100k
    if name == "cl100k_legacy":
        return scan_cl100k_legacy
    if name == "o200k":
        return scan_o200k
    raise ValueError(f"unknown pre-tokenizer {name!r}; known: {', '.join(SCANNERS)}")


def split(str name, str text):
    """Split ``text`` into pieces with the named scanner.

    >>> split("cl100k", "Hello world's 1234")
    ['Hello', ' world', "'s", ' ', '123', '4']
    """
    cdef ScanFn scan = scanner_by_name(name)
    cdef bytes data = text.encode("utf-8")
    cdef const uint8_t* s = data
    cdef Py_ssize_t n = len(data), i = 0, j
    pieces = []
    while i < n:
        j = scan(s, i, n)
        pieces.append(data[i:j].decode("utf-8"))
        i = j
    return pieces
