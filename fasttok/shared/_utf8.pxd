# Text to UTF-8 without the GIL and without touching the str's cached UTF-8.
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport malloc
from libc.string cimport memcpy

cdef extern from "Python.h":
    int PyUnicode_KIND(object text)
    void* PyUnicode_DATA(object text)
    Py_ssize_t PyUnicode_GET_LENGTH(object text)
    bint PyUnicode_IS_ASCII(object text)


cdef enum:
    # A str of fewer code units is transcoded with the GIL held: releasing
    # and taking it back (two mutex handoffs) costs about what transcoding
    # a few hundred does; with it, one call a line of zh.txt through Llama 3
    # took 6,150 instructions, without 5,830 (callgrind, with the loop below)
    UTF8_NOGIL_MIN = 1024
    # Bytes of room a caller of utf8_text_in keeps on its stack: a line of
    # up to 341 characters of a 2-byte str (512 of a 1-byte one) is
    # transcoded there, with no malloc and free (~120 instructions a call,
    # callgrind, a line of multi.txt through o200k_base)
    UTF8_ROOM = 1024


cdef struct Utf8Source:
    # What utf8_write needs of a str, read while holding the GIL; the str
    # must stay alive while it is used.
    const void* data
    Py_ssize_t length
    int kind
    bint ascii


cdef inline void utf8_source(str text, Utf8Source* src) noexcept:
    src.data = PyUnicode_DATA(text)
    src.length = PyUnicode_GET_LENGTH(text)
    src.kind = PyUnicode_KIND(text)
    src.ascii = PyUnicode_IS_ASCII(text)


cdef inline bint has_surrogate(str text) noexcept:
    # whether text holds a code point of U+D800..U+DFFF, which has no UTF-8
    # (Python's UTF-8 refuses it; utf8_write writes U+FFFD for it). A str
    # spells a surrogate pair as two such code points, not one character;
    # a 1-byte str holds none.
    cdef int kind = PyUnicode_KIND(text)
    cdef Py_ssize_t i = 0, n = PyUnicode_GET_LENGTH(text)
    cdef const uint16_t* two
    cdef const uint32_t* four
    cdef uint64_t word
    if kind == 2:
        two = <const uint16_t*>PyUnicode_DATA(text)
        while i + 4 <= n:
            # four units at a time (every line of Chinese is 2-byte units):
            # a surrogate's lane is 0 once masked and flipped, and a lane of
            # 0 is what "x - 1 borrows into its top bit" finds
            memcpy(&word, two + i, 8)
            word = (word & 0xF800F800F800F800ULL) ^ 0xD800D800D800D800ULL
            if (word - 0x0001000100010001ULL) & ~word & 0x8000800080008000ULL:
                return True
            i += 4
        while i < n:
            if (two[i] & 0xF800) == 0xD800:
                return True
            i += 1
    elif kind == 4:
        four = <const uint32_t*>PyUnicode_DATA(text)
        for i in range(n):
            if (four[i] & 0xFFFFF800) == 0xD800:
                return True
    return False


cdef inline size_t utf8_capacity(const Utf8Source* src) noexcept nogil:
    # Bytes utf8_write may need; 0 for ASCII text, which is used in place.
    if src.ascii:
        return 0
    return <size_t>src.length * (2 if src.kind == 1 else (3 if src.kind == 2 else 4))


cdef inline size_t utf8_size(const void* data, size_t length, int kind) noexcept nogil:
    # The UTF-8 size of a str's code units (kind 1, 2 or 4) as encode("utf-8",
    # "surrogatepass") counts them: a surrogate, paired or not, takes three
    cdef size_t i, n = length
    cdef uint32_t c
    if kind == 1:
        for i in range(length):
            n += (<const uint8_t*>data)[i] >> 7
        return n
    for i in range(length):
        c = (<const uint16_t*>data)[i] if kind == 2 else (<const uint32_t*>data)[i]
        n += (c >= 0x80) + (c >= 0x800) + (c >= 0x10000)
    return n


cdef inline size_t utf8_get(const uint8_t* s, size_t n, uint32_t* cp) noexcept nogil:
    # The code point of valid UTF-8 at s (n bytes left; text from a str, so
    # only lengths are checked; a cut sequence is U+FFFD); returns its length
    cdef uint8_t b = s[0]
    if b < 0x80:
        cp[0] = b
        return 1
    if b < 0xE0 and n >= 2:
        cp[0] = ((b & 0x1F) << 6) | (s[1] & 0x3F)
        return 2
    if b < 0xF0 and n >= 3:
        cp[0] = ((b & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F)
        return 3
    if n >= 4:
        cp[0] = ((b & 0x07) << 18) | ((s[1] & 0x3F) << 12) | ((s[2] & 0x3F) << 6) | (s[3] & 0x3F)
        return 4
    cp[0] = 0xFFFD
    return 1


cdef inline size_t utf8_put(uint8_t* d, uint32_t cp) noexcept nogil:
    # The UTF-8 of code point cp at d; returns its length
    if cp < 0x80:
        d[0] = <uint8_t>cp
        return 1
    if cp < 0x800:
        d[0] = <uint8_t>(0xC0 | (cp >> 6))
        d[1] = <uint8_t>(0x80 | (cp & 0x3F))
        return 2
    if cp < 0x10000:
        d[0] = <uint8_t>(0xE0 | (cp >> 12))
        d[1] = <uint8_t>(0x80 | ((cp >> 6) & 0x3F))
        d[2] = <uint8_t>(0x80 | (cp & 0x3F))
        return 3
    d[0] = <uint8_t>(0xF0 | (cp >> 18))
    d[1] = <uint8_t>(0x80 | ((cp >> 12) & 0x3F))
    d[2] = <uint8_t>(0x80 | ((cp >> 6) & 0x3F))
    d[3] = <uint8_t>(0x80 | (cp & 0x3F))
    return 4


cdef inline uint32_t _unit(const Utf8Source* src, Py_ssize_t i) noexcept nogil:
    if src.kind == 1:
        return (<const uint8_t*>src.data)[i]
    if src.kind == 2:
        return (<const uint16_t*>src.data)[i]
    return (<const uint32_t*>src.data)[i]


cdef inline size_t _put_unit(const Utf8Source* src, Py_ssize_t* at, uint8_t* dst) noexcept nogil:
    # Writes the code point at src[at[0]] (two units for a surrogate pair),
    # advances at[0] past it and returns the bytes written. A str holding
    # surrogates (not valid Unicode) is repaired the way tiktoken repairs it
    # (a UTF-16 round trip with errors="replace"): a high surrogate directly
    # followed by a low one becomes the code point they encode, and any
    # other surrogate becomes U+FFFD.
    cdef Py_ssize_t i = at[0]
    cdef uint32_t cp = _unit(src, i), low
    i += 1
    if 0xD800 <= cp <= 0xDFFF:
        if cp <= 0xDBFF and i < src.length:
            low = _unit(src, i)
            if 0xDC00 <= low <= 0xDFFF:
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
                i += 1
            else:
                cp = 0xFFFD
        else:
            cp = 0xFFFD
    at[0] = i
    return utf8_put(dst, cp)


cdef inline size_t utf8_write(const Utf8Source* src, uint8_t* dst) noexcept nogil:
    # Writes the UTF-8 of a non-ASCII str and returns its length. Runs of
    # ASCII go 8 (1-byte units) or 4 (2-byte units) at a time: most text
    # that is not pure ASCII still mostly is (a stray quote mark in English
    # or code), and one code point at a time this was 6-9% of encoding it.
    cdef Py_ssize_t i = 0, n = src.length
    cdef size_t w = 0
    cdef uint64_t word
    cdef uint32_t c
    cdef const uint8_t* units1 = <const uint8_t*>src.data
    cdef const uint16_t* units2 = <const uint16_t*>src.data
    if src.kind == 1:
        while i < n:
            if i + 8 <= n:
                memcpy(&word, units1 + i, 8)
                if not word & 0x8080808080808080ULL:
                    memcpy(dst + w, &word, 8)
                    i += 8
                    w += 8
                    continue
            w += utf8_put(dst + w, units1[i])
            i += 1
    elif src.kind == 2:
        while i < n:
            c = units2[i]
            if c < 0x80:
                if i + 4 <= n:
                    memcpy(&word, units2 + i, 8)
                    if not word & 0xFF80FF80FF80FF80ULL:
                        dst[w] = <uint8_t>c
                        dst[w + 1] = <uint8_t>units2[i + 1]
                        dst[w + 2] = <uint8_t>units2[i + 2]
                        dst[w + 3] = <uint8_t>units2[i + 3]
                        i += 4
                        w += 4
                        continue
                dst[w] = <uint8_t>c
                w += 1
                i += 1
            elif c < 0x800:
                # A run of two-byte characters (the letters of Greek,
                # Cyrillic, Arabic... words) in a loop of its own, as the
                # three-byte run below: utf8_put's tests and the ASCII word
                # test ahead of every character were ~19 instructions one.
                while True:
                    dst[w] = <uint8_t>(0xC0 | (c >> 6))
                    dst[w + 1] = <uint8_t>(0x80 | (c & 0x3F))
                    w += 2
                    i += 1
                    if i == n:
                        break
                    c = units2[i]
                    if c < 0x80 or c >= 0x800:
                        break
            elif <uint32_t>(c - 0xD800) >= 0x800:
                # A run of three-byte characters (every unit of Chinese and
                # Japanese text) in a loop of its own: no test for ASCII
                # ahead or of utf8_put's lengths, a character at a time.
                while True:
                    dst[w] = <uint8_t>(0xE0 | (c >> 12))
                    dst[w + 1] = <uint8_t>(0x80 | ((c >> 6) & 0x3F))
                    dst[w + 2] = <uint8_t>(0x80 | (c & 0x3F))
                    w += 3
                    i += 1
                    if i == n:
                        break
                    c = units2[i]
                    if c < 0x800 or <uint32_t>(c - 0xD800) < 0x800:
                        break
            else:
                w += _put_unit(src, &i, dst + w)
    else:
        while i < n:
            w += _put_unit(src, &i, dst + w)
    return w


cdef struct Utf8Text:
    const uint8_t* data
    size_t size
    uint8_t* owned  # to free, when the text was not ASCII


cdef inline int utf8_text_in(str text, Utf8Text* out, uint8_t* room,
                             size_t room_size) except -1:
    # The UTF-8 of one str: ASCII in place, anything else transcoded (with
    # the GIL released) into room when it fits in room_size bytes, else into
    # a new buffer that the caller frees (out.owned).
    cdef Utf8Source src
    cdef size_t cap
    cdef uint8_t* dst
    utf8_source(text, &src)
    cap = utf8_capacity(&src)
    out.owned = NULL
    if cap == 0:
        out.data = <const uint8_t*>src.data
        out.size = <size_t>src.length
        return 0
    if cap <= room_size:
        dst = room
    else:
        dst = out.owned = <uint8_t*>malloc(cap)
        if dst == NULL:
            raise MemoryError()
    if src.length < UTF8_NOGIL_MIN:
        out.size = utf8_write(&src, dst)
    else:
        with nogil:
            out.size = utf8_write(&src, dst)
    out.data = dst
    return 0


cdef inline int utf8_text(str text, Utf8Text* out) except -1:
    # utf8_text_in with no room: anything but ASCII in a new buffer
    return utf8_text_in(text, out, NULL, 0)


cdef extern from "Python.h":
    const char* _ft_PyUnicode_AsUTF8AndSize "PyUnicode_AsUTF8AndSize" (object text,
                                                                      Py_ssize_t* size)
    void _ft_PyErr_Clear "PyErr_Clear" ()


cdef inline int utf8_text_cached(str text, Utf8Text* out) except -1:
    # utf8_text through the str's own cached UTF-8 (made and kept in the str
    # on first use, as sentencepiece's binding reads it): repeated encodes of
    # one str convert it once. A str with surrogates has no UTF-8 form (the
    # call raises): it takes utf8_text's repair instead.
    cdef Py_ssize_t size
    cdef const char* data = _ft_PyUnicode_AsUTF8AndSize(text, &size)
    if data == NULL:
        _ft_PyErr_Clear()
        return utf8_text(text, out)
    out.data = <const uint8_t*>data
    out.size = <size_t>size
    out.owned = NULL
    return 0
