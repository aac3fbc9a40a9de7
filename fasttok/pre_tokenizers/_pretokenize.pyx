"""Pre-tokenizers that split text exactly as known regexes do, with no regex engine.

Each scanner takes valid UTF-8 and a start offset and returns where the
piece starting there ends, so encoding walks the text once with no regex
engine, no match objects and no Python strings. They are derivations of the
patterns, alternative by alternative, under leftmost-first (backtracking)
semantics; the reasoning for each is written beside it. The lookahead
``\\s+(?!\\S)`` is never backtracked: the whitespace run is measured once and
its last character given back (:func:`_whitespace`).

Three pattern shapes cover every scanner but one: GPT-2's, cl100k's (Llama 3,
Qwen 2 and kin) and o200k's; DeepSeek-V3's three regexes in a row are a fourth
(:func:`_deepseek3`). Each scanner is a one-line instance of a shape with
constant arguments -- which character tables, how many digits a number
piece takes, what counts as a letter -- so the C compiler folds the
parameters away and there is one derivation per shape, not per model.

Two readings of the character classes ("tables"):

* ``UNICODE_16``: tiktoken's regex engine. ASCII through a 128-entry table,
  anything else through the generated Unicode 16.0 tables
  (``unicode_tables.h``); ``(?i:...)`` uses Unicode simple case folding.
* ``LLAMA_CPP``: llama.cpp, for GGUF vocabularies. llama.cpp classifies with
  its own Unicode 15.1 flags, so these scanners read
  :data:`fasttok.shared.llama_unicode.COLLAPSE` (one class byte per code point,
  loaded on first use) and fold case for ASCII only. Running the Unicode 16
  scanners and sending texts with one of the ~30 ranges where the versions
  disagree to Python's ``re`` costs a pass over every non-ASCII text and leaves
  such texts at 3-7 MB/s of ``encode``; the lookup (two loads, against the
  three of the two-stage Unicode 16 table) is exact on every text and as
  fast: scanning alone runs at 250-500 MB/s with either reading (the corpus
  files, 2-core VM, CPU time).

The scanners but DeepSeek-V3's are handed out in a second form that reads
the pieces made of ASCII letters 16 bytes at a time (``ft_scan.h``), in the
cl100k and o200k shapes the other all-ASCII pieces too (punctuation, digits,
whitespace), with the Unicode 16 tables the letter runs holding characters
of two and three bytes (read through a class table), and hands every other
piece to the byte-at-a-time form; :func:`use_simd` chooses which form
:func:`scanner_by_name` hands out, and ``tests/test_scanner_simd.py`` checks
the two split alike.

The differential tests (``tests/test_pretokenizer_scanners.py``) run every
scanner against the ``regex`` module on its reference pattern over generated
text; the encoders are compared with tiktoken and llama.cpp elsewhere.

Known patterns map to scanners in :mod:`fasttok.pre_tokenizers.patterns` (tiktoken's
``pat_str``) and :mod:`fasttok.pre_tokenizers.gguf` (llama.cpp's regex lists).
"""

from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy

from fasttok.shared._bits cimport FT_SWAR, ft_ctz64
from fasttok.shared._unicode cimport (FT_L, FT_LL, FT_LM_LO, FT_LU_LT, FT_M, FT_N, FT_P, FT_S,
                        FT_WS, ft_class, ft_simple_fold_to_ascii_lower)
from fasttok.shared._utf8 cimport utf8_get

cdef extern from "Python.h":
    int PyUnicode_KIND(object text)
    void* PyUnicode_DATA(object text)
    Py_ssize_t PyUnicode_GET_LENGTH(object text)

cdef extern from "ft_scan.h":
    # ft_class of each ASCII byte, which ft_scan.h's pieces read too
    uint16_t ASCII_CLASS "ft_ascii_class"[128]
    # ft_class of each code point below U+0800, for ft_scan.h's two-byte characters
    uint16_t CLASS_2BYTE "ft_class_2byte"[0x800]

cdef int _i
for _i in range(0x800):
    CLASS_2BYTE[_i] = ft_class(_i)
    if _i < 128:
        ASCII_CLASS[_i] = ft_class(_i)
# the class of every code point U+5000-U+9FFF in both readings (see
# _class_at; tests/test_pretokenizer_scanners.py checks both tables hold it)
cdef uint16_t CJK_CLASS = FT_L | FT_LM_LO

cdef enum Tables:
    UNICODE_16
    LLAMA_CPP

cdef enum:
    # Letters of o200k's two case classes: U = [Lu Lt Lm Lo M], W = [Ll Lm Lo M].
    CLS_U = FT_LU_LT | FT_LM_LO | FT_M
    CLS_W = FT_LL | FT_LM_LO | FT_M
    # llama.cpp's gpt-4o pattern spells them "a letter but not a-z" and "a
    # letter but not A-Z": every non-ASCII letter is in both, marks in neither.
    LLAMA_U = FT_LU_LT | FT_LM_LO
    LLAMA_W = FT_LL | FT_LM_LO
    # What [^\s\p{L}\p{N}] excludes.
    NOT_OTHER = FT_WS | FT_L | FT_N

# llama.cpp's class of every code point, as the stand-in byte of
# llama_unicode.COLLAPSE (the str's own Latin-1 buffer, kept alive by
# _llama_collapse), and the class bits each stand-in byte means.
cdef const uint8_t* _llama_collapsed = NULL
cdef object _llama_collapse = None
cdef uint16_t LLAMA_CLASS[256]
cdef uint32_t _CODE_POINTS = 0x110000


cdef int _load_llama_tables() except -1:
    global _llama_collapsed, _llama_collapse
    cdef int b
    if _llama_collapsed != NULL:
        return 0
    from fasttok.shared.llama_unicode import COLLAPSE, STAND_INS

    if PyUnicode_KIND(COLLAPSE) != 1 or PyUnicode_GET_LENGTH(COLLAPSE) != _CODE_POINTS:
        raise ValueError("fasttok.shared.llama_unicode.COLLAPSE must hold one Latin-1 character "
                         "per code point")
    for b in range(256):
        LLAMA_CLASS[b] = 0
    for name, bits in _LLAMA_BITS.items():
        LLAMA_CLASS[ord(STAND_INS[name])] = bits
    _llama_collapse = COLLAPSE
    _llama_collapsed = <const uint8_t*>PyUnicode_DATA(COLLAPSE)
    return 0


# llama_unicode's class names -> scanner class bits (a non-ASCII letter is
# both cases: llama.cpp's collapsed \p{Lu} and \p{Ll} are all letters).
_LLAMA_BITS = {"whitespace": FT_WS, "number": FT_N, "letter": FT_L | FT_LM_LO, "mark": FT_M,
               "punctuation": FT_P, "symbol": FT_S}


cdef inline uint32_t _decode(const uint8_t* s, Py_ssize_t i, Py_ssize_t end, int* width) noexcept nogil:
    cdef uint32_t cp
    width[0] = <int>utf8_get(s + i, <size_t>(end - i), &cp)
    return cp


cdef inline uint16_t _class_at(const uint8_t* s, Py_ssize_t i, Py_ssize_t end, int* width,
                               Tables tables) noexcept nogil:
    # The two readings agree on ASCII (letters A-Z a-z, digits 0-9,
    # whitespace \t-\r and space), so ASCII never leaves the small table.
    # They agree too that U+5000-U+9FFF (lead bytes E5-E9, most of Chinese
    # and Japanese kanji) are letters (Lo, every one assigned): that class
    # is known from the lead byte, with no decoding and no table read.
    cdef uint8_t b = s[i]
    cdef uint32_t cp
    if b < 0x80:
        width[0] = 1
        return ASCII_CLASS[b]
    if <uint8_t>(b - 0xE5) < 5 and end - i >= 3:
        width[0] = 3
        return CJK_CLASS
    cp = _decode(s, i, end, width)
    if tables == LLAMA_CPP:
        return LLAMA_CLASS[_llama_collapsed[cp]] if cp < _CODE_POINTS else 0
    return ft_class(cp)


cdef inline Py_ssize_t _run(const uint8_t* s, Py_ssize_t i, Py_ssize_t end, uint16_t mask,
                            Tables tables) noexcept nogil:
    # End of the run of characters having any bit of mask.
    cdef int w
    while i < end:
        if s[i] < 0x80:
            if not (ASCII_CLASS[s[i]] & mask):
                break
            i += 1
        else:
            if not (_class_at(s, i, end, &w, tables) & mask):
                break
            i += w
    return i


cdef inline Py_ssize_t _run_letters(const uint8_t* s, Py_ssize_t i, Py_ssize_t end, uint16_t letters,
                                    Tables tables) noexcept nogil:
    # _run(letters) for a mask whose ASCII members are exactly [A-Za-z] (FT_L,
    # with or without FT_M), eight bytes a step while they are ASCII letters:
    # an English word then costs a step or two instead of a table read per
    # byte. Each byte, case folded (| 0x20) and without its high bit, is a
    # letter when adding 0x1F sets its high bit (>= 'a') and adding 0x05 does
    # not (<= 'z'); no sum carries into the next byte. A byte with its high
    # bit set is no ASCII letter and goes, with the rest, to _run.
    cdef uint64_t w, t, letter
    if FT_SWAR:
        while end - i >= 8:
            memcpy(&w, s + i, 8)
            t = (w | 0x2020202020202020ULL) & 0x7F7F7F7F7F7F7F7FULL
            letter = (t + 0x1F1F1F1F1F1F1F1FULL) & ~(t + 0x0505050505050505ULL) & ~w
            letter &= 0x8080808080808080ULL
            if letter != 0x8080808080808080ULL:
                i += ft_ctz64(letter ^ 0x8080808080808080ULL) >> 3
                if s[i] < 0x80:
                    return i
                break
            i += 8
    return _run(s, i, end, letters, tables)


cdef inline Py_ssize_t _run_without(const uint8_t* s, Py_ssize_t i, Py_ssize_t end, uint16_t mask,
                                    Tables tables) noexcept nogil:
    # End of the run of characters having no bit of mask ([^\s\p{L}\p{N}]+ and kin).
    cdef int w
    while i < end:
        if s[i] < 0x80:
            if ASCII_CLASS[s[i]] & mask:
                break
            i += 1
        else:
            if _class_at(s, i, end, &w, tables) & mask:
                break
            i += w
    return i


cdef inline Py_ssize_t _run_digits(const uint8_t* s, Py_ssize_t i, Py_ssize_t end, int most,
                                   Tables tables) noexcept nogil:
    # \p{N}{1,most}, greedy; the caller has checked the first one.
    cdef int w, count = 0
    while i < end and count < most:
        if not (_class_at(s, i, end, &w, tables) & FT_N):
            break
        i += w
        count += 1
    return i


cdef inline uint32_t _fold(uint32_t c, Tables tables) noexcept nogil:
    # The ASCII lowercase letter (?i:) lets c stand for, else c itself.
    # llama.cpp lowercases with the simple map, under which no non-ASCII code
    # point becomes one of s t m d r e v l; the regex engine case-folds, under
    # which U+017F and U+212A do.
    if c < 0x80:
        return c | 0x20 if 0x41 <= c <= 0x5A else c
    if tables == LLAMA_CPP:
        return c
    return ft_simple_fold_to_ascii_lower(c)


cdef inline Py_ssize_t _contraction(const uint8_t* s, Py_ssize_t i, Py_ssize_t end, bint fold,
                                    Tables tables) noexcept nogil:
    # With s[i] == "'": the end of 's 't 're 've 'm 'll 'd (any case when
    # fold), else 0.
    cdef int w1, w2
    cdef uint32_t a, b
    if i + 1 >= end:
        return 0
    a = _decode(s, i + 1, end, &w1)
    if fold:
        a = _fold(a, tables)
    if a == 0x73 or a == 0x74 or a == 0x6D or a == 0x64:  # s t m d
        return i + 1 + w1
    if a != 0x6C and a != 0x76 and a != 0x72:  # l v r
        return 0
    if i + 1 + w1 >= end:
        return 0
    b = _decode(s, i + 1 + w1, end, &w2)
    if fold:
        b = _fold(b, tables)
    if (a == 0x6C and b == 0x6C) or (a != 0x6C and b == 0x65):  # ll ve re
        return i + 1 + w1 + w2
    return 0


cdef inline Py_ssize_t _whitespace(const uint8_t* s, Py_ssize_t i, Py_ssize_t end, Tables tables,
                                   bint whole_at_end, bint stop_after_newline,
                                   uint16_t stops) noexcept nogil:
    # The whitespace alternatives every pattern ends with, for a run starting at i:
    #   whole_at_end:       \s++$          the run reaches the end: take it all
    #   stop_after_newline: \s*[\r\n]+     backtracking leaves the run ending at its last \r or \n
    #   then                \s+(?!\S)      a run of 2+ gives back its last character to the next piece
    #   then                \s / \s+       one character (a run of one)
    # A character with a bit of stops ends the text as far as this pattern
    # sees (an earlier regex of the list split the text there).
    cdef Py_ssize_t j = i, last_start = i, after_newline = -1
    cdef int w
    cdef uint8_t b
    cdef uint16_t cls = 0
    cdef bint at_end
    while j < end:
        b = s[j]
        if b < 0x80:
            cls = ASCII_CLASS[b]
            if not (cls & FT_WS):
                break
            if b == 0x0A or b == 0x0D:
                after_newline = j + 1
            last_start = j
            j += 1
        else:
            cls = _class_at(s, j, end, &w, tables)
            if not (cls & FT_WS):
                break
            last_start = j
            j += w
    at_end = j == end or (cls & stops) != 0
    if whole_at_end and at_end:
        return j
    if stop_after_newline and after_newline > 0:
        return after_newline
    if at_end:
        return j
    if last_start > i:
        return last_start
    return j


cdef inline Py_ssize_t _gpt2(const uint8_t* s, Py_ssize_t i, Py_ssize_t end, Tables tables,
                             bint digits_apart) noexcept nogil:
    # 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
    # (the current spelling adds \s++$, which matches exactly where \s+(?!\S)
    # already takes the whole run, and is possessive where nothing backtracks).
    # digits_apart: starcoder's list, which first splits off every \p{N} on
    # its own; the pattern then runs between them, so a digit also ends the
    # text it sees (a space before one is never its prefix).
    cdef int w, w2
    cdef Py_ssize_t r, j = i
    cdef uint16_t cls = _class_at(s, i, end, &w, tables)
    cdef uint16_t nxt, prefixable = FT_L if digits_apart else FT_L | FT_N
    if digits_apart and cls & FT_N:
        return i + w
    if s[i] == 0x27:
        r = _contraction(s, i, end, False, tables)
        if r:
            return r
    if s[i] == 0x20 and i + 1 < end:
        nxt = _class_at(s, i + 1, end, &w2, tables)
        if nxt & prefixable or not (nxt & NOT_OTHER):
            cls = nxt
            j = i + 1
    if cls & FT_L:
        return _run_letters(s, j, end, FT_L, tables)
    if cls & FT_N:
        return _run(s, j, end, FT_N, tables)
    if not (cls & FT_WS):
        return _run_without(s, j, end, NOT_OTHER, tables)
    return _whitespace(s, i, end, tables, True, False, FT_N if digits_apart else 0)


cdef inline Py_ssize_t _cl100k(const uint8_t* s, Py_ssize_t i, Py_ssize_t end, Tables tables,
                               bint whole_at_end, int digits, uint16_t letters,
                               bint newlines_after_other) noexcept nogil:
    # Most pieces of English and code first, small enough to inline into
    # each scanner: a run of letters from an ASCII letter, or from one ASCII
    # character that may lead them (not \r \n ' or a digit: what
    # _cl100k_rest decides the same way). The call and the register saves
    # of the general path were a quarter of the scanner's instructions.
    cdef uint8_t b = s[i]
    cdef uint16_t cls
    if b < 0x80:
        cls = ASCII_CLASS[b]
        if cls & FT_L:
            return _run_letters(s, i, end, letters, tables)
        if (i + 1 < end and s[i + 1] < 0x80 and ASCII_CLASS[s[i + 1]] & FT_L and b != 0x27
                and b != 0x0D and b != 0x0A and not (cls & FT_N)):
            return _run_letters(s, i + 1, end, letters, tables)
    return _cl100k_rest(s, i, end, tables, whole_at_end, digits, letters, newlines_after_other)


cdef inline Py_ssize_t _cl100k_rest(const uint8_t* s, Py_ssize_t i, Py_ssize_t end, Tables tables,
                                    bint whole_at_end, int digits, uint16_t letters,
                                    bint newlines_after_other) noexcept nogil:
    # '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+
    # | ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s
    # with letters for \p{L} (qwen35's [\p{L}\p{M}] -- the leading class still
    # admits a mark, which changes nothing: a mark there is also a letter),
    # digits for the 3, and [\r\n]*+ only when newlines_after_other.
    cdef int w, w2
    cdef Py_ssize_t r
    cdef uint8_t b = s[i]
    cdef uint16_t cls = _class_at(s, i, end, &w, tables)
    cdef uint16_t other = FT_WS | letters | FT_N
    if b == 0x27:
        r = _contraction(s, i, end, True, tables)
        if r:
            return r
    if cls & letters:
        # a run from a character past ASCII (Chinese, most of what reaches
        # here since ft_scan.h takes ASCII's pieces) goes on as _run reads it
        return _run(s, i + w, end, letters, tables) if b >= 0x80 else \
            _run_letters(s, i, end, letters, tables)
    if b != 0x0D and b != 0x0A and not (cls & FT_N):
        # one character of anything else may lead a run of letters
        if i + w < end and _class_at(s, i + w, end, &w2, tables) & letters:
            return _run_letters(s, i + w, end, letters, tables)
    if cls & FT_N:
        return _run_digits(s, i, end, digits, tables)
    r = -1
    if b == 0x20 and i + 1 < end and not (_class_at(s, i + 1, end, &w2, tables) & other):
        r = _run_without(s, i + 1, end, other, tables)
    elif not (cls & other):
        r = _run_without(s, i, end, other, tables)
    if r >= 0:
        while newlines_after_other and r < end and (s[r] == 0x0D or s[r] == 0x0A):
            r += 1
        return r
    return _whitespace(s, i, end, tables, whole_at_end, True, 0)


cdef inline Py_ssize_t _lower_after_upper(const uint8_t* s, Py_ssize_t q, Py_ssize_t end,
                                          uint16_t upper, uint16_t lower,
                                          Tables tables) noexcept nogil:
    # U*W+ at q under backtracking: U* takes the whole run of U; if a W follows,
    # W+ runs on from it. Otherwise U* gives characters back until one of them is
    # also a W (Lm, Lo, M are in both), and W+ is that single character.
    # Returns the end, or -1 when the alternative fails.
    cdef Py_ssize_t u = q, last_both = -1
    cdef int w
    cdef uint16_t cls
    while u < end:
        cls = _class_at(s, u, end, &w, tables)
        if not (cls & upper):
            if cls & lower:
                return _run(s, u, end, lower, tables)
            break
        if cls & lower:
            last_both = u + w
        u += w
    return last_both


cdef inline Py_ssize_t _upper_then_lower(const uint8_t* s, Py_ssize_t q, Py_ssize_t end,
                                         uint16_t upper, uint16_t lower,
                                         Tables tables) noexcept nogil:
    # U+W*: needs one U; never backtracks.
    cdef int w
    if q >= end or not (_class_at(s, q, end, &w, tables) & upper):
        return -1
    return _run(s, _run(s, q, end, upper, tables), end, lower, tables)


cdef inline Py_ssize_t _with_contraction(const uint8_t* s, Py_ssize_t e, Py_ssize_t end,
                                         bint contractions, Tables tables) noexcept nogil:
    cdef Py_ssize_t r
    if contractions and e < end and s[e] == 0x27:
        r = _contraction(s, e, end, True, tables)
        if r:
            return r
    return e


cdef inline Py_ssize_t _o200k(const uint8_t* s, Py_ssize_t i, Py_ssize_t end, Tables tables,
                              int digits, bint contractions) noexcept nogil:
    # P?U*W+C? | P?U+W*C? | \p{N}{1,3} | ?[^\s\p{L}\p{N}]+[\r\n/]* | \s*[\r\n]+ | \s+(?!\S) | \s+
    # with P = [^\r\n\p{L}\p{N}], C the optional contraction. Greedy, not
    # possessive: P? is tried taken, then not taken (which matters when P is a
    # mark, since marks are in P and in U and W too).
    cdef int w, w2
    cdef Py_ssize_t e
    cdef uint8_t b = s[i]
    cdef uint16_t cls = _class_at(s, i, end, &w, tables)
    cdef uint16_t upper = CLS_U if tables == UNICODE_16 else LLAMA_U
    cdef uint16_t lower = CLS_W if tables == UNICODE_16 else LLAMA_W
    cdef bint lead = b != 0x0D and b != 0x0A and not (cls & (FT_L | FT_N))
    cdef bint letter = (cls & (upper | lower)) != 0
    if lead:
        e = _lower_after_upper(s, i + w, end, upper, lower, tables)
        if e >= 0:
            return _with_contraction(s, e, end, contractions, tables)
    if letter:
        e = _lower_after_upper(s, i, end, upper, lower, tables)
        if e >= 0:
            return _with_contraction(s, e, end, contractions, tables)
    if lead:
        e = _upper_then_lower(s, i + w, end, upper, lower, tables)
        if e >= 0:
            return _with_contraction(s, e, end, contractions, tables)
    if letter:
        e = _upper_then_lower(s, i, end, upper, lower, tables)
        if e >= 0:
            return _with_contraction(s, e, end, contractions, tables)
    if cls & FT_N:
        return _run_digits(s, i, end, digits, tables)
    e = -1
    if b == 0x20 and i + 1 < end and not (_class_at(s, i + 1, end, &w2, tables) & NOT_OTHER):
        e = _run_without(s, i + 1, end, NOT_OTHER, tables)
    elif not (cls & NOT_OTHER):
        e = _run_without(s, i, end, NOT_OTHER, tables)
    if e >= 0:
        while e < end and (s[e] == 0x0D or s[e] == 0x0A or s[e] == 0x2F):
            e += 1
        return e
    return _whitespace(s, i, end, tables, False, True, 0)


cdef enum:
    # The class of a character past the end of the stretch DeepSeek-V3's third
    # regex sees: it has no bit of any class.
    DS_STOP = 0x8000
    DS_LETTER = FT_L | FT_M          # [\p{L}\p{M}]
    DS_PUNCT = FT_P | FT_S           # [\p{P}\p{S}]
    DS_SEEN = DS_LETTER | DS_PUNCT | FT_WS   # what some alternative starts with


cdef inline uint16_t _ds_class(const uint8_t* s, Py_ssize_t i, Py_ssize_t end, int* width,
                               Tables tables, bint kana) noexcept nogil:
    # The class of the character at i as the third regex sees it in a stretch
    # of kanji/kana (kana) or of neither (a digit or a kanji/kana ends that
    # one): DS_STOP past the stretch. llama.cpp's ASCII \p{S} has no "~".
    cdef uint16_t cls
    cdef uint32_t cp
    if i >= end:
        width[0] = 0
        return DS_STOP
    if s[i] < 0x80:
        width[0] = 1
        if kana:
            return DS_STOP
        cls = ASCII_CLASS[s[i]]
        if cls & FT_N:
            return DS_STOP
        if tables == LLAMA_CPP and s[i] == 0x7E:
            return 0
        return cls
    cp = _decode(s, i, end, width)
    if (0x4E00 <= cp <= 0x9FA5 or 0x3040 <= cp <= 0x30FF) != kana:
        return DS_STOP
    cls = _class_at(s, i, end, width, tables)
    return DS_STOP if cls & FT_N else cls


cdef inline Py_ssize_t _ds_run(const uint8_t* s, Py_ssize_t i, Py_ssize_t end, uint16_t mask,
                               Tables tables, bint kana) noexcept nogil:
    cdef int w
    while _ds_class(s, i, end, &w, tables, kana) & mask:
        i += w
    return i


cdef inline Py_ssize_t _deepseek3(const uint8_t* s, Py_ssize_t i, Py_ssize_t end,
                                  Tables tables) noexcept nogil:
    # The Isolated splits of three regexes in a row, each on the pieces of the last:
    #   \p{N}{1,3}
    #   [\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+                         (kanji/kana)
    #   A [!-/:-@[-`{-~][A-Za-z]+ | B [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
    #   | C ?[\p{P}\p{S}]+[\r\n]* | \s*[\r\n]+ | \s+(?!\S) | \s+
    # A piece of the first two is a run of digits (3 at most: no alternative
    # of the third matches a digit, so the piece stays whole), a run of
    # kanji/kana or a run of neither; the third regex sees one such run as
    # its whole text, so its matches end where the run does (_ds_class's
    # DS_STOP) and so does text it leaves unmatched, which is a piece.
    cdef int w, w2
    cdef Py_ssize_t r, j
    cdef uint8_t b = s[i]
    cdef uint16_t cls = _class_at(s, i, end, &w, tables)
    cdef bint kana
    if cls & FT_N:
        return _run_digits(s, i, end, 3, tables)
    kana = b >= 0x80 and _ds_class(s, i, end, &w, tables, True) != DS_STOP
    cls = _ds_class(s, i, end, &w, tables, kana)
    if 0x21 <= b <= 0x7E and not (ASCII_CLASS[b] & (FT_L | FT_N)):
        # A: ASCII punctuation then ASCII letters
        j = i + 1
        while j < end and s[j] < 0x80 and ASCII_CLASS[s[j]] & FT_L:
            j += 1
        if j > i + 1:
            return j
    if cls & DS_LETTER:
        return _ds_run(s, i, end, DS_LETTER, tables, kana)
    if b != 0x0D and b != 0x0A and not (cls & DS_PUNCT) \
            and _ds_class(s, i + w, end, &w2, tables, kana) & DS_LETTER:
        # B with its leading character
        return _ds_run(s, i + w, end, DS_LETTER, tables, kana)
    r = -1
    if b == 0x20 and _ds_class(s, i + 1, end, &w2, tables, kana) & DS_PUNCT:
        r = _ds_run(s, i + 1, end, DS_PUNCT, tables, kana)
    elif cls & DS_PUNCT:
        r = _ds_run(s, i, end, DS_PUNCT, tables, kana)
    if r >= 0:
        # C; a kanji/kana stretch holds no newline
        while not kana and r < end and (s[r] == 0x0D or s[r] == 0x0A):
            r += 1
        return r
    if cls & FT_WS:
        # the whitespace run's end is the text's end to (?!\S) when a digit
        # or a kanji/kana follows
        j = _ds_run(s, i, end, FT_WS, tables, False)
        if _ds_class(s, j, end, &w2, tables, False) == DS_STOP:
            return _whitespace(s, i, j, tables, False, True, 0)
        return _whitespace(s, i, end, tables, False, True, 0)
    # nothing matches here: the unmatched text runs on to where something does
    j = i + w
    while not (_ds_class(s, j, end, &w, tables, kana) & (DS_SEEN | DS_STOP)):
        if _ds_class(s, j + w, end, &w2, tables, kana) & DS_LETTER:
            break
        j += w
    return j


# ---------------------------------------------------------------- the scanners
# tiktoken's patterns (Unicode 16.0); see fasttok.pre_tokenizers.patterns.

cdef Py_ssize_t scan_gpt2(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return _gpt2(s, i, end, UNICODE_16, False)

cdef Py_ssize_t scan_gpt2_digits(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    # tokenizers' Digits(individual_digits) then ByteLevel's gpt2 regex
    # (Cohere's Command-R and Aya): every \p{N} a piece alone, the regex between
    return _gpt2(s, i, end, UNICODE_16, True)

cdef Py_ssize_t scan_deepseek3(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    # tokenizers' Split sequence of DeepSeek-V3's three regexes (see _deepseek3)
    return _deepseek3(s, i, end, UNICODE_16)

cdef Py_ssize_t scan_cl100k(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return _cl100k(s, i, end, UNICODE_16, True, 3, FT_L, True)

cdef Py_ssize_t scan_cl100k_legacy(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    # The older spelling (also Llama 3's): \s*[\r\n]+|\s+(?!\S)|\s+ with no \s++$,
    # so a trailing "\n " splits after the newline.
    return _cl100k(s, i, end, UNICODE_16, False, 3, FT_L, True)

cdef Py_ssize_t scan_qwen2(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return _cl100k(s, i, end, UNICODE_16, False, 1, FT_L, True)

cdef Py_ssize_t scan_o200k(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return _o200k(s, i, end, UNICODE_16, 3, True)

cdef Py_ssize_t scan_tekken(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return _o200k(s, i, end, UNICODE_16, 1, False)

# llama.cpp's regex lists (its Unicode 15.1 tables); see fasttok.pre_tokenizers.gguf.

cdef Py_ssize_t scan_llama_gpt2(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return _gpt2(s, i, end, LLAMA_CPP, False)

cdef Py_ssize_t scan_llama_starcoder(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return _gpt2(s, i, end, LLAMA_CPP, True)

cdef Py_ssize_t scan_llama_llama3(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return _cl100k(s, i, end, LLAMA_CPP, False, 3, FT_L, True)

cdef Py_ssize_t scan_llama_qwen2(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return _cl100k(s, i, end, LLAMA_CPP, False, 1, FT_L, True)

cdef Py_ssize_t scan_llama_qwen35(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return _cl100k(s, i, end, LLAMA_CPP, False, 1, FT_L | FT_M, True)

cdef Py_ssize_t scan_llama_seed_coder(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return _cl100k(s, i, end, LLAMA_CPP, False, 1, FT_L, False)

cdef Py_ssize_t scan_llama_gpt4o(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return _o200k(s, i, end, LLAMA_CPP, 3, True)

cdef Py_ssize_t scan_llama_tekken(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return _o200k(s, i, end, LLAMA_CPP, 1, False)


cdef Py_ssize_t scan_llama_deepseek3(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return _deepseek3(s, i, end, LLAMA_CPP)


# Names in the order of _SCAN; a name starting "llama.cpp:" reads llama.cpp's tables.
SCANNERS = ("gpt2", "cl100k", "cl100k_legacy", "qwen2", "o200k", "tekken", "gpt2_digits",
            "deepseek3",
            "llama.cpp:gpt2", "llama.cpp:starcoder", "llama.cpp:llama3", "llama.cpp:qwen2",
            "llama.cpp:qwen35", "llama.cpp:seed-coder", "llama.cpp:gpt-4o", "llama.cpp:tekken",
            "llama.cpp:deepseek-v3")
# The scanners of the gpt2, cl100k and o200k shapes again, reading the
# pieces that are runs of ASCII letters 16 bytes at a time (ft_scan.h), and
# in the cl100k and o200k shapes the other ASCII pieces (with the digits
# and the trail after punctuation of their pattern), and handing the rest
# to the scanners above; _letters_* go on with a run that a non-ASCII byte
# ends.

cdef extern from "ft_scan.h":
    const bint FT_SCAN_SIMD  # 1 where the build has SSE2 or NEON
    cdef enum ft_shape:
        FT_CL100K
        FT_GPT2
    cdef enum ft_trail:
        FT_TRAIL_NONE
        FT_TRAIL_NEWLINES
    # short_classes: read two-byte characters from ft_class_2byte (the
    # Unicode 16 tables' classes; 0 for llama.cpp's)
    Py_ssize_t ft_letters_piece(ft_shape shape, const uint8_t* s, Py_ssize_t i, Py_ssize_t end,
                                const ScanFn* letters_from, ScanFn general, int digits,
                                ft_trail trail, bint short_classes) noexcept nogil
    Py_ssize_t ft_o200k(const uint8_t* s, Py_ssize_t i, Py_ssize_t end, ScanFn general,
                        int digits, bint short_classes) noexcept nogil

cdef Py_ssize_t _letters_unicode16(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return _run(s, i, end, FT_L, UNICODE_16)

cdef Py_ssize_t _letters_llama(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return _run(s, i, end, FT_L, LLAMA_CPP)

cdef Py_ssize_t _letters_or_marks_llama(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return _run(s, i, end, FT_L | FT_M, LLAMA_CPP)

# Passed from this table, read at run time, so the C compiler cannot inline
# them (and _run) into every scanner below: that growth pushed _run and
# _class_at out of line in the general paths (cl100k zh 268 -> 279
# instructions a piece).
cdef ScanFn[3] _LETTERS_FROM = [_letters_unicode16, _letters_llama, _letters_or_marks_llama]

cdef Py_ssize_t simd_gpt2(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return ft_letters_piece(FT_GPT2, s, i, end, &_LETTERS_FROM[0], scan_gpt2, 0, FT_TRAIL_NONE,
                            True)

cdef Py_ssize_t simd_gpt2_digits(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return ft_letters_piece(FT_GPT2, s, i, end, &_LETTERS_FROM[0], scan_gpt2_digits, 0,
                            FT_TRAIL_NONE, True)

cdef Py_ssize_t simd_cl100k(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return ft_letters_piece(FT_CL100K, s, i, end, &_LETTERS_FROM[0], scan_cl100k, 3,
                            FT_TRAIL_NEWLINES, True)

cdef Py_ssize_t simd_cl100k_legacy(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return ft_letters_piece(FT_CL100K, s, i, end, &_LETTERS_FROM[0], scan_cl100k_legacy, 3,
                            FT_TRAIL_NEWLINES, True)

cdef Py_ssize_t simd_qwen2(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return ft_letters_piece(FT_CL100K, s, i, end, &_LETTERS_FROM[0], scan_qwen2, 1,
                            FT_TRAIL_NEWLINES, True)

cdef Py_ssize_t simd_o200k(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return ft_o200k(s, i, end, scan_o200k, 3, True)

cdef Py_ssize_t simd_tekken(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return ft_o200k(s, i, end, scan_tekken, 1, True)

cdef Py_ssize_t simd_llama_gpt2(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return ft_letters_piece(FT_GPT2, s, i, end, &_LETTERS_FROM[1], scan_llama_gpt2, 0,
                            FT_TRAIL_NONE, False)

cdef Py_ssize_t simd_llama_starcoder(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return ft_letters_piece(FT_GPT2, s, i, end, &_LETTERS_FROM[1], scan_llama_starcoder, 0,
                            FT_TRAIL_NONE, False)

cdef Py_ssize_t simd_llama_llama3(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return ft_letters_piece(FT_CL100K, s, i, end, &_LETTERS_FROM[1], scan_llama_llama3, 3,
                            FT_TRAIL_NEWLINES, False)

cdef Py_ssize_t simd_llama_qwen2(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return ft_letters_piece(FT_CL100K, s, i, end, &_LETTERS_FROM[1], scan_llama_qwen2, 1,
                            FT_TRAIL_NEWLINES, False)

cdef Py_ssize_t simd_llama_qwen35(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return ft_letters_piece(FT_CL100K, s, i, end, &_LETTERS_FROM[2], scan_llama_qwen35, 1,
                            FT_TRAIL_NEWLINES, False)

cdef Py_ssize_t simd_llama_seed_coder(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return ft_letters_piece(FT_CL100K, s, i, end, &_LETTERS_FROM[1], scan_llama_seed_coder, 1,
                            FT_TRAIL_NONE, False)

cdef Py_ssize_t simd_llama_gpt4o(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return ft_o200k(s, i, end, scan_llama_gpt4o, 3, False)

cdef Py_ssize_t simd_llama_tekken(const uint8_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    return ft_o200k(s, i, end, scan_llama_tekken, 1, False)


cdef ScanFn[17] _SCAN = [scan_gpt2, scan_cl100k, scan_cl100k_legacy, scan_qwen2, scan_o200k,
                         scan_tekken, scan_gpt2_digits, scan_deepseek3,
                         scan_llama_gpt2, scan_llama_starcoder, scan_llama_llama3, scan_llama_qwen2,
                         scan_llama_qwen35, scan_llama_seed_coder, scan_llama_gpt4o,
                         scan_llama_tekken, scan_llama_deepseek3]
cdef ScanFn[17] _SIMD_SCAN = [simd_gpt2, simd_cl100k, simd_cl100k_legacy, simd_qwen2, simd_o200k,
                              simd_tekken, simd_gpt2_digits, scan_deepseek3,
                              simd_llama_gpt2, simd_llama_starcoder, simd_llama_llama3,
                              simd_llama_qwen2, simd_llama_qwen35, simd_llama_seed_coder,
                              simd_llama_gpt4o, simd_llama_tekken, scan_llama_deepseek3]
_INDEX = {name: k for k, name in enumerate(SCANNERS)}

# Whether scanner_by_name hands out the _SIMD_SCAN scanners (use_simd).
cdef bint _simd = FT_SCAN_SIMD


def use_simd(bint on):
    """Hand out the scanners that read 16 bytes at a time (on) or the byte-at-a-time ones (off).

    Returns the previous setting. Scanners already handed out keep their
    kind; without SSE2 or NEON in the build the setting stays off. For
    tests that run the two kinds against each other.

    >>> previous = use_simd(False)
    >>> split("cl100k", "Hello world, 16 bytes and more")
    ['Hello', ' world', ',', ' ', '16', ' bytes', ' and', ' more']
    >>> _ = use_simd(previous)
    """
    global _simd
    previous = _simd
    _simd = on and FT_SCAN_SIMD
    return bool(previous)


cdef ScanFn scanner_by_name(str name) except NULL:
    k = _INDEX.get(name)
    if k is None:
        raise ValueError(f"unknown pre-tokenizer {name!r}; known: {', '.join(SCANNERS)}")
    if name.startswith("llama.cpp:"):
        _load_llama_tables()
    return _SIMD_SCAN[<int>k] if _simd else _SCAN[<int>k]


def split(str name, str text):
    """Split ``text`` into pieces with the named scanner.

    >>> split("cl100k", "Hello world's 1234")
    ['Hello', ' world', "'s", ' ', '123', '4']
    >>> split("qwen2", "x 1234")
    ['x', ' ', '1', '2', '3', '4']
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


# Performance notes
#
# ASCII letter runs (_run_letters) read 8 bytes a step, and _cl100k tries
# the commonest pieces (letters, or one leading ASCII character and
# letters) before the general path (_cl100k_rest). Cachegrind, cl100k_base
# encode_ordinary of 600 kB of en.txt after its first half (instructions of
# the scan functions): 16.8M -> 14.5M (the whole encode 66.5M -> 64.3M);
# 400 kB of code.txt 11.8M -> 10.5M; zh.txt 21.0M -> 22.2M (its pieces pay
# the fast path's test and leave through _cl100k_rest; 0.5% of zh's encode).
# The step of 8 needs a little-endian word and __builtin_ctzll; other
# compilers and byte orders take the byte loop. Timed A/B (separate
# processes taking turns, best of 5, load ~5-6 on 2 cores): en 40.4 -> 41.4
# MB/s, code 66.4 -> 67.1, within noise.
#
# 16-byte reads (ft_scan.h: SSE2, NEON on aarch64). Callgrind, the scanner
# alone over the first 1 MB of each corpus file, instructions a piece, byte
# path -> 16-byte path (en, code, zh, multi):
#   cl100k  95.4 -> 75.7   120.2 -> 113.2   259.1 -> 269.4   186.8 -> 190.9
#   o200k  145.8 -> 92.6   164.7 -> 134.3   275.1 -> 280.7   214.8 -> 212.1
#   gpt2    83.9 -> 66.5    89.4 -> 85.2    205.6 -> 217.1   154.9 -> 161.9
# (qwen2, the Llama 3 spelling, tekken and the llama.cpp forms alike; the
# o200k byte path itself lost ~2% to the C compiler's inlining as the
# module grew). Steady encode_ordinary of the second 600 kB of the first
# 1.2 MB of a corpus file, warm on the first (cachegrind, whole process
# minus the same process without that call; en, code, zh):
#   cl100k_base 60.5M -> 57.5M   54.8M -> 53.4M   151.4M -> 151.9M
#   o200k_base  67.9M -> 59.8M   61.0M -> 56.3M   158.9M -> 160.2M
# What decided the shape:
# - One 16-byte letter test is not cheaper than the 8-byte word test for a
#   word: swapping it into _run_letters alone changed nothing (95 -> 100).
#   The gain is structural: the whole path for "run of ASCII letters, or one
#   character and such a run" is one small C function with only tail calls
#   out, so it needs no register saves, where _cl100k's general path
#   inlined into it made every piece pay them (and gcc inlined
#   _cl100k_rest whatever Cython's inline said; C's always_inline and the
#   scanner passed in as a pointer are what make the split hold).
# - Digit, punctuation and whitespace runs from 16-byte masks too (each
#   class 4-6 vector operations, against a byte loop over one to three
#   bytes): en 79.4 -> 85.8, code 116.9 -> 111.5, zh 273 -> 283 (those
#   figures before the last two changes below). Dropped for en's sake.
# - A run that a non-ASCII byte ends goes on through _letters_* from there
#   rather than the general path from the start (multi 199 -> 192), and a
#   window 16 bytes from the end is read without the shift (-> 189).
# - AVX2 was not tried: 0.04% of en's cl100k pieces and 0.9% of code's are
#   longer than 16 bytes.
# - zh and multi pay a few instructions a piece: the non-ASCII test first,
#   and the 16-byte test wasted where a space or punctuation leads CJK.
# CPU time of the cl100k scanner alone did not move (en 489-501 MB/s either
# way, best of 5 alternating, load ~5): a piece's end depends on the load
# at its start, and that chain, not the instruction count, bounds a loop
# that only scans. DeepSeek-V3's scanners take the byte path only.
#
# The cl100k shape's other ASCII pieces in ft_scan.h (tried, not kept):
# ft_letters_piece also took a run of punctuation (alone or after a space,
# with its newlines), up to `digits` digits and a whitespace run split as
# _whitespace splits it, from four more 16-byte masks, leaving general()
# "'" and the runs that meet a byte >= 0x80. It gave the byte scanner's
# pieces on the corpora and 3,000 random strings. Callgrind, cl100k_base,
# 6,000 unseen lines of code.txt: the scanner 7.52M -> 6.48M instructions
# (74,151 pieces), the walk 20.10M -> 19.06M; but timed (alternating fresh
# processes, steady protocol, load 3.6-3.9) code 0.95 (2 of 8 faster) and
# 1.01 (7 of 14), en 0.99 (4 of 8): no gain to measure. The samples of the scanner sit on its entry
# (an indirect call a piece), not on classifying bytes.
#
# The ASCII pieces that are no letter run (ft_scan.h's ft_ascii_other):
# punctuation (after a space or not) with its trailing newlines, up to
# `digits` digits, and whitespace runs ended by an ASCII byte, read with
# ft_ascii_class in the cl100k and o200k shapes instead of through the
# general scanner (an out-of-line call, _class_at and the whole
# alternative ladder: ~140 instructions a piece, and a third of English's
# pieces, half of code's); texts under 16 bytes too. Callgrind, the bulk
# bench's steady protocol (one thread, the unseen second half after the
# first), whole walk, base -> this: cl100k en 110.87M -> 104.40M (general
# calls 108,075 -> ~34k; the scanner 29.4M -> 23.0M), code 95.80M ->
# 79.99M (scanner 38.0M -> 22.2M), multi 152.30M -> 150.55M; o200k en
# 129.91M -> 120.96M, code 97.50M -> 77.64M; llama3 en 109.14M ->
# 102.77M, code 95.42M -> 79.62M; qwen3 en 128.80M -> 121.95M, code
# 100.59M -> 83.28M. Chinese pays: the scanner of cl100k zh 14.89M ->
# 15.72M, o200k zh 13.76M -> 14.89M, qwen3 zh 14.89M -> 15.72M, since GCC
# (-O3) now leaves _run_letters/_run and _class_at out of line in the
# general path, which zh's pieces take. Tried against that and not kept:
# ft_ascii_other out of line, one copy (zh the same, en +0.7M, code
# +1.3M); the general scanners handed in through _SCAN, so no wrapper
# inlines them (zh the same); a piece from a CJK lead byte sent straight
# to letters_from (zh scanner -0.3M, en +0.25M). Session 8's version of
# the same pieces from four more 16-byte masks a piece had saved a seventh
# of code's scanner; a byte loop over one to three bytes is cheaper.
# Then the letter runs of texts under 16 bytes (a line a document: 4% of
# en's pieces) read a byte at a time in ft_scan.h rather than by the
# general scanner: scanner 22.97M -> 22.01M on cl100k en, o200k en 27.57M
# -> 26.72M, cl100k code 22.22M -> 21.29M, zh unchanged.
# A scanner that cuts a batch of pieces a call (simd_cl100k in a loop
# filling an array of ends, for _byte_bpe's batches of AHEAD pieces, so no
# indirect call a piece) was tried after this and not kept: the walk's own
# instructions fell 2.78M but the scanner's rose 4.0M (GCC kept the call to
# simd_cl100k in the loop, which now also carried the count and the
# array), cl100k en 104.40M -> 105.64M.
#
# A character whose lead byte is E5-E9 (U+5000-U+9FFF, every one a letter
# in both readings) is classed from that byte, with no decoding and no
# table read (_class_at). Callgrind, llama3 tokenizer.json, one encode a
# line of the first 1,000 lines of zh.txt, steady: the scanner 945 -> 835
# instructions a line, the whole call 6,449 -> 6,319.
# Lead byte E4 as well (U+4000-U+4FFF but U+4DC0-U+4DFF, the hexagrams,
# whose second byte is B7; 37.6k of the 260k characters of zh.txt's steady
# half) was tried and not kept: callgrind, cl100k_base, the bulk bench's
# steady protocol, zh 94.86M -> 94.07M instructions but en 110.88M ->
# 114.07M, since the longer test pushed _class_at and _whitespace out of
# line in the general path (3.4M and 2.3M of calls on en).
#
# Two-byte letters (Latin-1 and Latin Extended, Greek, Cyrillic, Armenian,
# Hebrew, Arabic) in ft_scan.h, for the Unicode 16 scanners: a piece
# starting with one, or with an ASCII character leading one, and an ASCII
# run meeting one, are read through ft_class_2byte (ft_letters_on in the
# cl100k and gpt2 shapes, ft_o200k_short's exact U*W+ / U+W* in o200k's)
# instead of the general scanner and its decoding. Callgrind, 5,000 lines
# of multi.txt a call each (encode_ordinary, after a warm pass): cl100k_base
# 28.49M -> 26.82M instructions, o200k_base 26.91M -> 25.82M; en.txt the
# same (22.39M -> 22.40M, 23.69M -> 23.69M) once the extra paths were kept
# out of every piece's: ft_letters_short takes six arguments (a seventh
# on the stack cost each piece the room) and letters_from is passed by
# address (the load of it had been hoisted into every piece, +80k).
# Then three-byte characters the same way (ft_class_short: ft_class, or
# U+5000-U+9FFF from the lead byte as _class_at), so a run of Devanagari,
# Thai, Hangul, kana or Chinese no longer leaves for general: cl100k_base
# multi 26.30M -> 25.64M, zh 21.50M -> 20.92M; o200k_base multi 25.25M ->
# 24.84M, zh 21.51M -> 21.10M (it had been 21.40M before the two-byte
# path, whose extra test its pieces paid); en unchanged.
