"""SentencePiece's ``precompiled_charsmap``: framing and trie, checked once.

The blob is a little-endian u32 trie size, a darts-clone double array of that
many bytes, then the NUL-separated replacement strings. A walk XORs a
position with the offset of the unit there, so a unit whose child block lies
outside the array would read past it: every non-leaf unit is checked when
the blob is read, and the normalizer's walk needs no bounds checks. Loaders
call :func:`check_charsmap` so a bad blob fails at load, naming the byte;
the normalizer runs the same checks through ``charsmap_load``.

>>> check_charsmap(b"")
>>> check_charsmap(b"\\x04\\x00")
Traceback (most recent call last):
fasttok.shared._charsmap.CharsmapError: precompiled_charsmap is 2 byte(s); it must start with a 4-byte trie size
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset, strlen

from fasttok.shared._growth cimport OffsetBuf, grow_array, offsets_free, offsets_reserve
from fasttok.shared._utf8 cimport utf8_get, utf8_put
from fasttok.shared._utf8_strict cimport ft_utf8_strict_length

cdef extern from "Python.h":
    object PyUnicode_FromKindAndData(int kind, const void* buffer, Py_ssize_t size)


cdef uint32_t _ONE = 1
# the units are the blob's little-endian u32s, copied as they are on such a host
cdef bint _LITTLE_ENDIAN = (<uint8_t*>&_ONE)[0] == 1


class CharsmapError(ValueError):
    """A ``precompiled_charsmap`` the normalizer cannot run; ``offset`` is the
    byte of the blob at fault (0 for its framing).

    File loaders turn it into a ``VocabularyFileError`` naming the file and field.
    """

    def __init__(self, problem: str, offset: int) -> None:
        super().__init__(problem)
        self.problem = problem
        self.offset = offset


cdef void charsmap_free(Charsmap* m) noexcept nogil:
    free(m.units)
    free(m.strings)
    m.units = NULL
    m.strings = NULL
    m.n_units = 0
    m.n_strings = 0


cdef int charsmap_load(bytes blob, Charsmap* out) except -1:
    cdef size_t size = len(blob), trie_size, padded, i
    cdef const uint8_t* p = <const uint8_t*>PyBytes_AS_STRING(blob)
    cdef const uint8_t* q
    cdef uint32_t u, root
    out.units = NULL
    out.strings = NULL
    out.n_units = 0
    out.n_strings = 0
    if size == 0:
        return 0
    if size < 4:
        raise CharsmapError(f"precompiled_charsmap is {size} byte(s); it must start with a "
                            "4-byte trie size", 0)
    trie_size = p[0] | (<size_t>p[1] << 8) | (<size_t>p[2] << 16) | (<size_t>p[3] << 24)
    if trie_size == 0 or trie_size % 4 or trie_size > size - 4:
        raise CharsmapError(f"precompiled_charsmap declares a trie of {trie_size} bytes, "
                            "which is not a non-zero multiple of 4 within the "
                            f"{size - 4} bytes that follow", 0)
    # Whole 256-unit blocks, zero padded: pos ^ byte stays in its block.
    padded = (trie_size // 4 + 255) & ~(<size_t>255)
    out.n_strings = size - 4 - trie_size
    out.n_units = padded
    out.units = <uint32_t*>malloc(padded * sizeof(uint32_t))
    out.strings = <uint8_t*>malloc(out.n_strings + 1)
    if out.units == NULL or out.strings == NULL:
        charsmap_free(out)
        raise MemoryError()
    memcpy(out.units, p + 4, trie_size)
    memset(<uint8_t*>out.units + trie_size, 0, padded * 4 - trie_size)
    if not _LITTLE_ENDIAN:
        q = p + 4
        for i in range(trie_size // 4):
            out.units[i] = (q[4 * i] | (<uint32_t>q[4 * i + 1] << 8)
                            | (<uint32_t>q[4 * i + 2] << 16) | (<uint32_t>q[4 * i + 3] << 24))
    memcpy(out.strings, p + 4 + trie_size, out.n_strings)
    out.strings[out.n_strings] = 0   # so every replacement ends inside the buffer
    root = unit_offset(out.units[0])
    if root >= padded:
        charsmap_free(out)
        raise CharsmapError(f"precompiled_charsmap: the root's children (unit {root}) lie "
                            f"outside the trie ({padded} units)", 4)
    for i in range(padded):
        u = out.units[i]
        # Leaf units only hold values, each where a replacement starts.
        # Padding units are 0, which points at itself, so a unit at fault is
        # one of the blob's.
        if u >> 31:
            if unit_value(u) >= out.n_strings:
                charsmap_free(out)
                raise CharsmapError(f"precompiled_charsmap: trie unit {i} says a rule's "
                                    f"replacement starts at byte {unit_value(u)} of the "
                                    f"{out.n_strings} after the trie", 4 + 4 * i)
        elif (i ^ unit_offset(u)) >= padded:
            charsmap_free(out)
            raise CharsmapError(f"precompiled_charsmap: trie unit {i} points outside the "
                                f"trie ({padded} units)", 4 + 4 * i)
    return 0


def check_charsmap(charsmap):
    """Raise :class:`CharsmapError` if the normalizer would refuse ``charsmap``
    (``None`` or empty is the identity rule set, always fine)."""
    cdef Charsmap m
    charsmap_load(bytes(charsmap or b""), &m)
    charsmap_free(&m)


cdef class CharsmapRules:
    """The rules of a ``precompiled_charsmap`` looked up one key at a time, as
    ``tokenizers``' ``Precompiled`` does: the *shortest* rule that is a prefix
    of the key (a NUL byte ends the key), and its replacement.

    >>> CharsmapRules(b"").first_rule(b"a") is None
    True
    """

    def __cinit__(self, bytes blob not None):
        charsmap_load(blob, &self.m)

    def __dealloc__(self):
        charsmap_free(&self.m)

    cdef int64_t _first_leaf(self, const uint8_t* s, size_t n) noexcept nogil:
        # the value of the shortest rule that is a prefix of s[:n], or -1
        cdef size_t i
        cdef uint32_t pos, u
        if self.m.n_units == 0:
            return -1
        pos = unit_offset(self.m.units[0])
        for i in range(n):
            if s[i] == 0:
                return -1
            pos ^= s[i]
            u = self.m.units[pos]
            if unit_label(u) != s[i]:
                return -1
            pos ^= unit_offset(u)
            if unit_has_leaf(u):
                return unit_value(self.m.units[pos])
        return -1

    def first_rule(self, bytes key not None):
        """The replacement (``str``) of the shortest rule that is a prefix of
        ``key``, or ``None``."""
        cdef int64_t value = self._first_leaf(<const uint8_t*>PyBytes_AS_STRING(key), len(key))
        return None if value < 0 else self._replacement(<size_t>value)

    def char_rules(self):
        """``{c: first_rule(c's UTF-8)}`` for each character ``c`` of
        :meth:`rule_chars`, as :meth:`put_char_rule` gives a compiled walk
        each one.

        >>> CharsmapRules(b"").char_rules()
        {}
        """
        cdef dict out = {}
        cdef uint32_t* cps = NULL
        cdef size_t n = 0, cap = 0
        cdef Py_UCS4 c
        try:
            for c in self.rule_chars():
                n = 0
                self.put_char_rule(c, &cps, &n, &cap)
                out[c] = PyUnicode_FromKindAndData(4, cps, n)
        finally:
            free(cps)
        return out

    cdef int put_char_rule(self, uint32_t cp, uint32_t** data, size_t* n,
                           size_t* cap) except -1:
        # Decoded here, with no str made (the str and dict of char_rules were
        # 10.9M of a T5 conversion's first encode); UTF-8 that is not valid
        # is refused by _replacement's decoder, as char_rules refuses it
        cdef uint8_t key[4]
        cdef int64_t value = self._first_leaf(key, utf8_put(key, cp))
        cdef const uint8_t* s
        cdef size_t length, i = 0, k
        if value < 0:
            return 0
        s = self.m.strings + value
        length = strlen(<const char*>s)
        grow_array(<void**>data, cap, n[0] + length, sizeof(uint32_t), 64)
        while i < length:
            k = ft_utf8_strict_length(s + i, length - i)
            if k == 0:
                break
            i += utf8_get(s + i, k, &data[0][n[0]])
            n[0] += 1
        if i < length:
            self._replacement(<size_t>value)
            raise UnicodeDecodeError("utf-8", s[:length], i, i + 1, "invalid UTF-8")
        return 1

    cdef str _replacement(self, size_t start):
        # the replacement string starting at byte start of the strings
        cdef size_t end = start
        while self.m.strings[end] != 0:
            end += 1
        return PyUnicode_DecodeUTF8(<const char*>self.m.strings + start, end - start, NULL)

    def rule_chars(self):
        """Every character (surrogates aside) that :meth:`first_rule` of its
        UTF-8 alone finds a rule for, as one ``str`` in code point order:
        what a normalizer must look at, when the rest may be copied through.
        The trie is walked along the UTF-8 forms of code points, leaving a
        byte as soon as the trie has no child for it, so the cost is that of
        the rules, not of all 1.1 million code points (8 ms for a T5
        charsmap's that way; asking :meth:`first_rule` for each, a second).

        >>> CharsmapRules(b"").rule_chars()
        ''
        """
        cdef uint32_t lead, pos = 0, cp
        cdef int hit, after
        cdef OffsetBuf found
        if self.m.n_units == 0:
            return ""
        # the code points go into a C buffer, one str made of them at the
        # end (a str a character, joined, was half of a T5 charsmap's call)
        found.data = NULL
        found.len = found.cap = 0
        try:
            # UTF-8 as Python encodes a str: no overlong forms (C0, C1, E0
            # 80-9F, F0 80-8F), no surrogates (ED A0-BF), nothing past
            # U+10FFFF (F4 90-BF); a NUL byte ends a key, so U+0000 has no rule
            for lead in range(0x01, 0xF5):
                if 0x80 <= lead < 0xC2:
                    continue
                hit = self._step(unit_offset(self.m.units[0]), lead, &pos)
                if hit < 0:
                    continue
                if lead < 0x80:
                    if hit:
                        offsets_reserve(&found, 1)
                        found.data[found.len] = lead
                        found.len += 1
                    continue
                after = 1 if lead < 0xE0 else 2 if lead < 0xF0 else 3
                cp = lead & (0x3F >> after)
                self._rule_chars_after(pos, hit, cp, after,
                                       0xA0 if lead == 0xE0 else 0x90 if lead == 0xF0 else 0x80,
                                       0x9F if lead == 0xED else 0x8F if lead == 0xF4 else 0xBF,
                                       &found)
            return PyUnicode_FromKindAndData(4, found.data, found.len)
        finally:
            offsets_free(&found)

    cdef int _step(self, uint32_t pos, uint32_t b, uint32_t* next_pos) noexcept nogil:
        # _first_leaf's step from trie position pos by byte b: -1 where the
        # trie has no child for it, else 1 where a rule ends there, else 0
        cdef uint32_t u = self.m.units[pos ^ b]
        if unit_label(u) != b:
            return -1
        next_pos[0] = pos ^ b ^ unit_offset(u)
        return unit_has_leaf(u)

    cdef int _rule_chars_after(self, uint32_t pos, bint every, uint32_t cp, int after,
                               uint32_t lo, uint32_t hi, OffsetBuf* found) except -1:
        # The characters of rule_chars whose UTF-8 goes on from trie position
        # pos (its bytes so far make code point bits cp) with a byte in
        # lo..hi and after - 1 more; every: a rule ended on the way (the
        # shortest prefix wins), so each of them has one.
        cdef uint32_t b, c, next_pos = 0
        cdef int hit
        for b in range(lo, hi + 1):
            c = (cp << 6) | (b & 0x3F)
            hit = 1 if every else self._step(pos, b, &next_pos)
            if hit < 0:
                continue
            if after == 1:
                if hit:
                    offsets_reserve(found, 1)
                    found.data[found.len] = c
                    found.len += 1
            else:
                self._rule_chars_after(next_pos, hit, c, after - 1, 0x80, 0xBF, found)
        return 0


# ---------------------------------------------------------------- base64

cdef extern from "Python.h":
    bint PyUnicode_IS_COMPACT_ASCII(object o)
    void* PyUnicode_DATA(object o)
    char* PyBytes_AS_STRING_W "PyBytes_AS_STRING" (object o)

# each base64 character's six bits, 0x40 for any other byte (alphabet order)
cdef uint8_t _SEXTETS[256]


cdef void _fill_sextets() noexcept:
    cdef const char* alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    cdef int i
    for i in range(256):
        _SEXTETS[i] = 0x40
    for i in range(64):
        _SEXTETS[<uint8_t>alphabet[i]] = <uint8_t>i


_fill_sextets()


cdef Py_ssize_t _decode_quads(const uint8_t* s, Py_ssize_t quads, uint8_t* out) noexcept nogil:
    # the groups of four base64 characters s[:4 * quads] (no padding) as
    # 3 * quads bytes at out: quads, or the first group with a fault
    cdef Py_ssize_t i
    cdef uint32_t a, b, c, d
    for i in range(quads):
        a = _SEXTETS[s[4 * i]]
        b = _SEXTETS[s[4 * i + 1]]
        c = _SEXTETS[s[4 * i + 2]]
        d = _SEXTETS[s[4 * i + 3]]
        if (a | b | c | d) & 0x40:
            return i
        a = (a << 18) | (b << 12) | (c << 6) | d
        out[3 * i] = <uint8_t>(a >> 16)
        out[3 * i + 1] = <uint8_t>(a >> 8)
        out[3 * i + 2] = <uint8_t>a
    return quads


cdef int _decode_last(const uint8_t* s, int pad, uint8_t* out) noexcept nogil:
    # the last group s[:4], ending in pad "=" (0-2), as 3 - pad bytes at
    # out: 0, or -1 at a fault
    cdef uint32_t a = _SEXTETS[s[0]], b = _SEXTETS[s[1]]
    cdef uint32_t c = 0 if pad == 2 else _SEXTETS[s[2]]
    cdef uint32_t d = 0 if pad else _SEXTETS[s[3]]
    if (a | b | c | d) & 0x40:
        return -1
    a = (a << 18) | (b << 12) | (c << 6) | d
    out[0] = <uint8_t>(a >> 16)
    if pad < 2:
        out[1] = <uint8_t>(a >> 8)
    if pad < 1:
        out[2] = <uint8_t>a
    return 0


cdef const uint8_t* _base64_text(text, Py_ssize_t* quads, int* pad) except NULL:
    # the ASCII characters of base64 text (a str), its groups of four and
    # its padding, or ValueError for a text of another length or alphabet
    cdef Py_ssize_t n, i
    cdef const uint8_t* s
    if not isinstance(text, str):
        raise TypeError(f"expected a str, got {type(text).__name__}")
    n = len(text)
    if not PyUnicode_IS_COMPACT_ASCII(text):
        for i in range(n):
            if ord(text[i]) > 0x7F:
                raise ValueError(f"character {i} is {text[i]!r}")
    if n % 4:
        raise ValueError(f"{n} characters, not a multiple of 4 (base64 is padded with '=')")
    s = <const uint8_t*>PyUnicode_DATA(text)
    pad[0] = 0
    if n and s[n - 1] == c'=':
        pad[0] = 2 if s[n - 2] == c'=' else 1
    quads[0] = n // 4
    return s if n else <const uint8_t*>b""


cdef int _base64_fault(text, const uint8_t* s, Py_ssize_t quad, int pad) except -1:
    # the ValueError naming the first character at fault in group quad
    cdef Py_ssize_t n = len(text), i
    for i in range(4 * quad, n):
        if _SEXTETS[s[i]] & 0x40 and not (s[i] == c'=' and i >= n - pad):
            raise ValueError(f"character {i} is {chr(s[i])!r}")
    raise AssertionError("unreachable: a group had a fault")


def charsmap_from_base64(text):
    """The bytes of a ``tokenizer.json`` ``precompiled_charsmap``: ``text``
    (a ``str``) read as padded base64: ``base64.b64decode(text,
    validate=True)``'s bytes, in one pass of four characters at a time (the
    standard library's check and decoder made a third of a T5 conversion's
    load). It refuses what that refuses, and also a ``=`` after a whole last
    group of four, which no encoder writes. A ``ValueError`` names the fault.

    >>> charsmap_from_base64("aGk="), charsmap_from_base64("")
    (b'hi', b'')
    >>> charsmap_from_base64("a!==")
    Traceback (most recent call last):
    ValueError: character 1 is '!'
    """
    cdef Py_ssize_t quads, done
    cdef int pad
    cdef const uint8_t* s = _base64_text(text, &quads, &pad)
    if quads == 0:
        return b""
    cdef bytes blob = PyBytes_FromStringAndSize(NULL, quads * 3 - pad)
    cdef uint8_t* out = <uint8_t*>PyBytes_AS_STRING_W(blob)
    done = _decode_quads(s, quads - 1, out)
    if done < quads - 1:
        _base64_fault(text, s, done, pad)
    if _decode_last(s + 4 * (quads - 1), pad, out + 3 * (quads - 1)):
        _base64_fault(text, s, quads - 1, pad)
    return blob


# Performance notes (T5 conversion's charsmap: 320,012 base64 characters,
# a 240,007-byte blob; in-process, best of 30, 2-core VM at load ~5).
#
# - binascii.a2b_base64(text, strict_mode=True) does this decoder's job, but
#   took 0.69 ms (non-strict 0.61-0.69 ms, base64.b64decode(validate=True)
#   0.70 ms) against 0.13 ms here: 0.56 ms, a third of the ~1.5 ms a Unigram
#   file's whole load may take for issue 24's target (half of tokenizers'
#   7 ms, imports included), so the decoder stays (session 6).
# - Decoding the base64 straight into the units' buffer (the strings moved
#   out after), instead of a 240 kB blob copied into the units, was a second
#   decode-and-load path: a warm load 16.6M -> 16.2M instructions
#   (callgrind), a fresh process's first load 278 -> 234 page faults (~2 us
#   each here), and the timed difference (alternating fresh processes at
#   load 6) within the noise; it was folded back into
#   charsmap_load(charsmap_from_base64(text)) (session 7).
# - Two groups a step, their six bytes stored as one 8-byte word (the
#   sextets or-ed for the fault test, then combined in 64 bits): 2.24M ->
#   3.32M instructions a T5 charsmap (callgrind, ten decodes in one
#   process), against the loop of one group and three byte stores that GCC
#   compiles well; not kept (session 9).
# - A Unigram walk's build asks put_char_rule for each character's rule (its
#   replacement decoded into the walk's code points), not char_rules' dict
#   of strs, and rule_chars collects code points in a C buffer, not a str a
#   character: a T5 conversion's first encode 46.4M -> ~30M instructions
#   with the walk's own build (callgrind, session 13).
