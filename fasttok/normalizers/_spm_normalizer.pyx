"""SentencePiece's normalizer: precompiled charsmap, whitespace rules, alignment.

What it does, in sentencepiece's order (``normalizer.cc``): at each position
the longest user-defined symbol is kept as it is; otherwise the longest rule
of the ``precompiled_charsmap`` replaces its match; otherwise one valid UTF-8
character is copied, or one malformed byte becomes U+FFFD. Around that come
``remove_extra_whitespaces`` (leading and trailing spaces dropped, runs
collapsed), the dummy ``▁`` prefix (a suffix with
``treat_whitespace_as_suffix``) and the escaping of spaces as ``▁``. Every
output byte records the offset of the input byte it came from, which is how
token offsets point into the caller's text.

The charsmap is a darts-clone double array: a unit holds a label byte, a
leaf flag and an XOR offset to its children. The blob comes from a file, so
before any walk every non-leaf unit's child block is checked to lie inside
the array (the array is padded to whole 256-unit blocks, so ``pos ^ byte``
then never leaves it) and every replacement offset is checked when read; the
walk itself needs no bounds checks. Validation costs ~0.1 ms for the usual
44k-unit tables. A pointer-chasing trie rebuilt from the blob was not tried:
the double array is already one load per byte.

Without offsets, a valid 2- or 3-byte character that no rule and no symbol
can start is copied without a walk: ``multi_plain`` (by lead and second
byte) and ``multi_third`` (a bit per third byte, for pairs some rule
starts) are filled from the trie once. On zh.txt lines they leave few
``prefix`` calls (CJK ideographs, and punctuation such as U+3002 whose first
two bytes it shares with the rule for U+3000): ``normalize_bytes`` of the
whole file with botchan_unigram_5000's nmt_nfkc rules takes 40% less time
on zh.txt, 30% less on multi.txt, the same on en.txt. Such characters are
taken as runs (``_plain_run``, a function so that it is inlined), and for
3-byte ones the third-byte mask alone decides (a plain pair has none of its
bits set): testing ``multi_plain`` first is a branch that goes either way
within CJK text. Runs take another 12% off zh.txt and cost en.txt 5% (a run
ends at every space). ``ascii_cont`` lets an ASCII character followed by a
non-ASCII one into a run unless a rule continues it with that lead byte.

GGUF ``t5`` files are normalized the way llama.cpp's UGM tokenizer does it,
which differs on whitespace: with ``remove_extra_whitespaces`` it puts one
space before *every* run of non-spaces (so the first word gets one even
without ``add_space_prefix``), and a NUL byte stops the charsmap walk.
``flavour`` selects that behaviour; the trie walk and the rules are shared.

>>> n = Normalizer(None, add_dummy_prefix=True, remove_extra_whitespaces=True,
...                escape_whitespaces=True)
>>> n.normalize("  Hello   world ")
'▁Hello▁world'
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.stdint cimport uint8_t, uint32_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memchr, memcpy, strlen

from fasttok.shared._charsmap cimport (Charsmap, charsmap_free, charsmap_load, unit_has_leaf,
                                      unit_label, unit_offset, unit_value)
from fasttok.shared._growth cimport (ByteBuf, OffsetBuf, bytebuf_free, bytebuf_reserve,
                                     offsets_free, offsets_reserve)
from fasttok.shared._tables cimport TokenTables, find_bytes
from fasttok.shared._utf8 cimport Utf8Text, utf8_text



# U+2581 LOWER ONE EIGHTH BLOCK, sentencepiece's visible space
cdef const uint8_t* SPACE_SYMBOL = <const uint8_t*>b"\xe2\x96\x81"
cdef const uint8_t* REPLACEMENT = <const uint8_t*>b"\xef\xbf\xbd"


cdef inline bint _trail(uint8_t c) noexcept nogil:
    return (c & 0xC0) == 0x80


cdef size_t valid_utf8_len(const uint8_t* s, size_t n) noexcept nogil:
    cdef uint32_t cp
    cdef uint8_t c = s[0]
    if c < 0x80:
        return 1
    if n >= 2 and (c & 0xE0) == 0xC0:
        cp = (<uint32_t>(c & 0x1F) << 6) | (s[1] & 0x3F)
        if _trail(s[1]) and cp >= 0x80:
            return 2
    elif n >= 3 and (c & 0xF0) == 0xE0:
        cp = (<uint32_t>(c & 0x0F) << 12) | (<uint32_t>(s[1] & 0x3F) << 6) | (s[2] & 0x3F)
        if _trail(s[1]) and _trail(s[2]) and cp >= 0x800 and not (0xD800 <= cp < 0xE000):
            return 3
    elif n >= 4 and (c & 0xF8) == 0xF0:
        cp = ((<uint32_t>(c & 0x07) << 18) | (<uint32_t>(s[1] & 0x3F) << 12)
              | (<uint32_t>(s[2] & 0x3F) << 6) | (s[3] & 0x3F))
        if _trail(s[1]) and _trail(s[2]) and _trail(s[3]) and 0x10000 <= cp <= 0x10FFFF:
            return 4
    return 0


cdef inline size_t _valid_multi_len(const uint8_t* s, size_t n) noexcept nogil:
    # valid_utf8_len for a lead byte >= 0xC0 already followed by a trail byte,
    # inlined for the normalizer's copy path (2- and 3-byte forms decided here)
    cdef uint8_t c = s[0]
    cdef uint32_t cp
    if c < 0xE0:
        return 2 if c >= 0xC2 else 0
    if c < 0xF0:
        if n < 3 or not _trail(s[2]):
            return 0
        cp = (<uint32_t>(c & 0x0F) << 12) | (<uint32_t>(s[1] & 0x3F) << 6)
        return 3 if cp >= 0x800 and not (0xD800 <= cp < 0xE000) else 0
    return valid_utf8_len(s, n)


cdef class SymbolMatcher:
    """Finds the longest of a few fixed symbols starting at a position.

    SentencePiece keeps user-defined symbols out of normalization and, in
    BPE, never merges them; both ask "which symbol starts here?". The symbols
    are hashed once; a query tries each distinct length, longest first, after
    a first-byte filter rejects nearly every position.

    >>> m = SymbolMatcher([b"<sep>", b"<s"])
    >>> m.longest(b"<sep>x"), m.longest(b"<sx"), m.longest(b"x")
    (5, 2, 0)
    """

    def __cinit__(self):
        self.lengths = NULL

    def __init__(self, symbols):
        cdef Py_ssize_t i
        symbols = [bytes(s) for s in symbols if s]
        self.count = len(symbols)
        self.table = TokenTables(symbols)
        lengths = sorted({len(s) for s in symbols}, reverse=True)
        self.lengths = <size_t*>malloc((len(lengths) + 1) * sizeof(size_t))
        if self.lengths == NULL:
            raise MemoryError()
        self.n_lengths = len(lengths)
        for i in range(self.n_lengths):
            self.lengths[i] = lengths[i]
        for i in range(256):
            self.first[i] = 0
        for s in symbols:
            self.first[s[0]] = 1

    def __dealloc__(self):
        free(self.lengths)

    cdef size_t match(self, const uint8_t* s, size_t n) noexcept nogil:
        cdef size_t k, length
        if n == 0 or not self.first[s[0]]:
            return 0
        for k in range(self.n_lengths):
            length = self.lengths[k]
            if length <= n and find_bytes(self.table.view.index, self.table.view.strings,
                                          s, length) >= 0:
                return length
        return 0

    def longest(self, bytes data not None):
        """Length of the longest symbol that ``data`` starts with, or 0."""
        return self.match(<const uint8_t*>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))


cdef class Normalizer:
    """One SentencePiece normalizer (the ``normalizer_spec`` of a model).

    ``charsmap`` is the ``precompiled_charsmap`` blob (``None`` or empty for
    the ``identity`` rule set); ``user_defined`` lists the symbols kept
    verbatim. ``flavour`` is ``"sentencepiece"`` or ``"llama.cpp"`` (GGUF
    ``t5``; see the module notes). Raises
    :class:`~fasttok.shared._charsmap.CharsmapError` for a charsmap whose
    framing is wrong or whose trie points outside itself.

    >>> n = Normalizer(None, add_dummy_prefix=True, remove_extra_whitespaces=False,
    ...                escape_whitespaces=True)
    >>> n.normalize("a  b")
    '▁a▁▁b'
    """

    def __cinit__(self):
        self.units = NULL
        self.strings = NULL

    def __init__(self, charsmap, *, bint add_dummy_prefix, bint remove_extra_whitespaces,
                 bint escape_whitespaces, bint treat_whitespace_as_suffix=False,
                 user_defined=(), str flavour="sentencepiece"):
        cdef size_t i
        cdef Charsmap m
        if flavour == "sentencepiece":
            self.flavour = FLAVOUR_SENTENCEPIECE
        elif flavour == "llama.cpp":
            self.flavour = FLAVOUR_LLAMA_CPP
        else:
            raise ValueError(f"unknown normalizer flavour {flavour!r}; "
                             "use 'sentencepiece' or 'llama.cpp'")
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.escape_whitespaces = escape_whitespaces
        self.treat_whitespace_as_suffix = treat_whitespace_as_suffix
        self.user_symbols = SymbolMatcher(user_defined)
        self.n_units = 0
        self.n_strings = 0
        for i in range(256):
            self.ascii_plain[i] = i < 0x80 and not self.user_symbols.first[i]
        for i in range(128):
            self.ascii_cont[i] = 0
        for i in range(4096):
            self.multi_plain[i] = not self.user_symbols.first[0xC0 + (i >> 6)]
            self.multi_third[i] = 0 if self.multi_plain[i] else ~(<uint64_t>0)
        charsmap_load(bytes(charsmap or b""), &m)
        if m.n_units == 0:
            return
        self.units, self.n_units = m.units, m.n_units
        self.strings, self.n_strings = m.strings, m.n_strings
        self._find_plain_ascii()
        self._find_plain_multi()

    cdef void _find_plain_multi(self):
        # A valid multi-byte character is copied unchanged when no rule starts
        # with its first two bytes (nor is its lead byte alone) and no
        # user-defined symbol starts with its lead byte: prefix() would find
        # no rule and copy it. Marks the (lead, second byte) pairs where a
        # rule may start.
        # For 3-byte characters, multi_third refines a marked pair by the
        # third byte: U+3000 (a rule) marks E3 80, which '。' (E3 80 82) shares.
        cdef size_t root = unit_offset(self.units[0]), node, node2
        cdef uint32_t u, u2, c, d, e
        cdef size_t i
        for c in range(0xC0, 0x100):
            u = self.units[root ^ c]
            if unit_label(u) != c:
                continue
            node = (root ^ c) ^ unit_offset(u)
            for d in range(0x80, 0xC0):
                i = ((c - 0xC0) << 6) | (d & 0x3F)
                if unit_has_leaf(u):
                    self.multi_plain[i] = 0
                    self.multi_third[i] = ~(<uint64_t>0)
                    continue
                u2 = self.units[node ^ d]
                if unit_label(u2) != d:
                    continue
                self.multi_plain[i] = 0
                if unit_has_leaf(u2):
                    self.multi_third[i] = ~(<uint64_t>0)
                    continue
                node2 = (node ^ d) ^ unit_offset(u2)
                for e in range(0x80, 0xC0):
                    if unit_label(self.units[node2 ^ e]) == e:
                        self.multi_third[i] |= (<uint64_t>1) << (e & 0x3F)

    cdef void _find_plain_ascii(self):
        # An ASCII byte is plain when no rule is that byte alone and no rule
        # continues it with another ASCII byte: followed by ASCII (or the end),
        # it is then copied unchanged. Letters are not excluded by their
        # composition rules (e + U+0301 -> é), whose second byte is not ASCII;
        # ascii_cont marks the lead bytes such rules go on with, so a plain
        # byte followed by any other character is copied unchanged too.
        cdef size_t root = unit_offset(self.units[0]), node
        cdef uint32_t u, c, d
        for c in range(0x80):
            u = self.units[root ^ c]
            if unit_label(u) != c:
                continue            # no rule starts with c
            if unit_has_leaf(u):
                self.ascii_plain[c] = False
                continue
            node = (root ^ c) ^ unit_offset(u)
            for d in range(0x100):
                if unit_label(self.units[node ^ d]) == d:
                    if d < 0x80:
                        self.ascii_plain[c] = False
                        break
                    self.ascii_cont[c] |= (<uint64_t>1 << (d - 0xC0)) if d >= 0xC0 else ~(<uint64_t>0)

    def __dealloc__(self):
        free(self.units)
        free(self.strings)

    cdef size_t prefix(self, const uint8_t* s, size_t n, const uint8_t** rep,
                       size_t* rep_len) noexcept nogil:
        # How many input bytes the next normalization step consumes (n > 0),
        # and what it writes (rep, rep_len).
        cdef size_t k, longest = 0, pos
        cdef uint32_t u, value = 0
        cdef uint8_t c
        if self.user_symbols.count:
            k = self.user_symbols.match(s, n)
            if k:
                rep[0] = s
                rep_len[0] = k
                return k
        if self.n_units:
            pos = unit_offset(self.units[0])
            for k in range(n):
                c = s[k]
                if c == 0 and self.flavour == FLAVOUR_LLAMA_CPP:
                    break
                pos ^= c
                u = self.units[pos]
                if unit_label(u) != c:
                    break
                pos ^= unit_offset(u)
                if unit_has_leaf(u):
                    longest = k + 1
                    value = unit_value(self.units[pos])
        if longest and value < self.n_strings:
            rep[0] = self.strings + value
            rep_len[0] = strlen(<const char*>(self.strings + value))
            return longest
        k = valid_utf8_len(s, n)
        if k == 0:
            rep[0] = REPLACEMENT
            rep_len[0] = 3
            return 1
        rep[0] = s
        rep_len[0] = k
        return k

    cdef bint rule_may_continue(self, const uint8_t* s, size_t n) noexcept nogil:
        # Does some rule start with all of s[0:n] and go on? (A stream of
        # text cannot be normalized past s yet.) The walk prefix() takes.
        cdef size_t pos, k
        cdef uint32_t u, c
        if self.n_units == 0:
            return False
        pos = unit_offset(self.units[0])
        for k in range(n):
            c = s[k]
            pos ^= c
            u = self.units[pos]
            if unit_label(u) != c:
                return False
            pos ^= unit_offset(u)
        for c in range(1, 256):
            if unit_label(self.units[pos ^ c]) == c:
                return True
        return False

    cdef int normalize_into(self, const uint8_t* s, size_t n, ByteBuf* out,
                            OffsetBuf* n2o) except -1 nogil:
        """Normalize s[0:n] into out (emptied first); n2o, if not NULL, gets
        one original offset per output byte plus the end offset."""
        out.len = 0
        if n2o != NULL:
            n2o.len = 0
        if n >= <size_t>0xFFFFFFFFU:
            with gil:
                raise ValueError("text longer than 4 GiB")
        if self.flavour == FLAVOUR_LLAMA_CPP:
            return self._normalize_llama(s, n, out, n2o)
        return self._normalize_spm(s, n, out, n2o)

    cdef int _emit(self, const uint8_t* rep, size_t rep_len, uint32_t origin,
                          ByteBuf* out, OffsetBuf* n2o) except -1 nogil:
        # Append a replacement, escaping spaces when asked.
        cdef size_t i, j
        cdef uint8_t c
        bytebuf_reserve(out, 3 * rep_len)
        if n2o != NULL:
            offsets_reserve(n2o, 3 * rep_len)
        for i in range(rep_len):
            c = rep[i]
            if c == 32 and self.escape_whitespaces:
                out.data[out.len] = 0xE2
                out.data[out.len + 1] = 0x96
                out.data[out.len + 2] = 0x81
                out.len += 3
                if n2o != NULL:
                    for j in range(3):
                        n2o.data[n2o.len + j] = origin
                    n2o.len += 3
            else:
                out.data[out.len] = c
                out.len += 1
                if n2o != NULL:
                    n2o.data[n2o.len] = origin
                    n2o.len += 1
        return 0

    cdef int _normalize_spm(self, const uint8_t* s, size_t n, ByteBuf* out,
                            OffsetBuf* n2o) except -1 nogil:
        cdef size_t pos = 0, k, rep_len, space_len
        cdef const uint8_t* rep
        cdef uint32_t consumed = 0
        cdef bint is_prev_space
        cdef const uint8_t* space
        cdef uint8_t c
        if self.remove_extra_whitespaces:
            while pos < n:
                k = self.prefix(s + pos, n - pos, &rep, &rep_len)
                if rep_len != 1 or rep[0] != 32:
                    break
                pos += k
            consumed = <uint32_t>pos
        if pos == n:
            # nothing but spaces: an empty result still gets its end offset
            if n2o != NULL:
                offsets_reserve(n2o, 1)
                n2o.data[0] = consumed
                n2o.len = 1
            return 0
        bytebuf_reserve(out, 3 * (n - pos) + 8)
        if not self.treat_whitespace_as_suffix and self.add_dummy_prefix:
            self._emit(<const uint8_t*>b" ", 1, consumed, out, n2o)
        is_prev_space = self.remove_extra_whitespaces
        while pos < n:
            if n2o == NULL:
                k = _plain_run(self, s + pos, n - pos, out.data + out.len)
                if k:
                    out.len += k
                    pos += k
                    consumed = <uint32_t>pos
                    is_prev_space = False
                    if pos == n:
                        break
            c = s[pos]
            if self.ascii_plain[c] and (pos + 1 == n or s[pos + 1] < 0x80):
                # The common case, without a rule lookup: an ASCII byte that no
                # rule or symbol starting here changes. `out` always has room
                # for 3 bytes per input byte left (reserved below).
                if c == 32:
                    if not is_prev_space:
                        if self.escape_whitespaces:
                            out.data[out.len] = 0xE2
                            out.data[out.len + 1] = 0x96
                            out.data[out.len + 2] = 0x81
                            out.len += 3
                        else:
                            out.data[out.len] = 32
                            out.len += 1
                        if n2o != NULL:
                            offsets_reserve(n2o, 3)
                            for k in range(3 if self.escape_whitespaces else 1):
                                n2o.data[n2o.len] = consumed
                                n2o.len += 1
                        is_prev_space = self.remove_extra_whitespaces
                else:
                    out.data[out.len] = c
                    out.len += 1
                    if n2o != NULL:
                        offsets_reserve(n2o, 1)
                        n2o.data[n2o.len] = consumed
                        n2o.len += 1
                    is_prev_space = False
                pos += 1
                consumed = <uint32_t>pos
                continue
            if (c >= 0xC0 and n2o == NULL and pos + 1 < n and _trail(s[pos + 1])
                    and (self.multi_plain[((c - 0xC0) << 6) | (s[pos + 1] & 0x3F)]
                         or (c >= 0xE0 and c < 0xF0 and pos + 2 < n and not (
                             (self.multi_third[((c - 0xC0) << 6) | (s[pos + 1] & 0x3F)]
                              >> (s[pos + 2] & 0x3F)) & 1)))):
                # A character no rule or symbol starts (CJK, most letters):
                # copied as prefix() would, without the lookups; it has no
                # space to escape or collapse.
                k = _valid_multi_len(s + pos, n - pos)
                if k:
                    memcpy(out.data + out.len, s + pos, k)
                    out.len += k
                    is_prev_space = False
                    pos += k
                    consumed = <uint32_t>pos
                    continue
            k = self.prefix(s + pos, n - pos, &rep, &rep_len)
            if is_prev_space:
                while rep_len and rep[0] == 32:
                    rep += 1
                    rep_len -= 1
            if rep_len:
                if n2o == NULL and (not self.escape_whitespaces
                                    or memchr(rep, 32, rep_len) == NULL):
                    # no offsets, no space to escape: one copy
                    bytebuf_reserve(out, rep_len)
                    memcpy(out.data + out.len, rep, rep_len)
                    out.len += rep_len
                else:
                    self._emit(rep, rep_len, consumed, out, n2o)
                is_prev_space = rep[rep_len - 1] == 32
            pos += k
            consumed = <uint32_t>pos
            if out.cap - out.len < 3 * (n - pos) + 8:
                bytebuf_reserve(out, 3 * (n - pos) + 8)
            if not self.remove_extra_whitespaces:
                is_prev_space = False
        if self.remove_extra_whitespaces:
            space = SPACE_SYMBOL if self.escape_whitespaces else <const uint8_t*>b" "
            space_len = 3 if self.escape_whitespaces else 1
            while out.len >= space_len and _ends_with(out, space, space_len):
                out.len -= space_len
                if n2o != NULL:
                    consumed = n2o.data[out.len]
                    n2o.len = out.len
        if self.treat_whitespace_as_suffix and self.add_dummy_prefix:
            self._emit(<const uint8_t*>b" ", 1, consumed, out, n2o)
        if n2o != NULL:
            offsets_reserve(n2o, 1)
            n2o.data[n2o.len] = consumed
            n2o.len += 1
        return 0

    cdef int _normalize_llama(self, const uint8_t* s, size_t n, ByteBuf* out,
                              OffsetBuf* n2o) except -1 nogil:
        # llama.cpp's llm_tokenizer_ugm_session::normalize, byte for byte.
        cdef size_t pos = 0, k, rep_len, i
        cdef const uint8_t* rep
        cdef bint prepend = not self.treat_whitespace_as_suffix and self.add_dummy_prefix
        cdef bint append = self.treat_whitespace_as_suffix and self.add_dummy_prefix
        cdef bint merge = self.remove_extra_whitespaces
        cdef bint prepended = False, in_word = False
        cdef uint8_t c
        bytebuf_reserve(out, 3 * n + 8)
        while pos < n:
            k = self.prefix(s + pos, n - pos, &rep, &rep_len)
            for i in range(rep_len):
                c = rep[i]
                if c != 32:
                    if not in_word:
                        in_word = True
                        if (prepend and not prepended) or merge:
                            self._emit(<const uint8_t*>b" ", 1, <uint32_t>pos, out, n2o)
                            prepended = True
                    self._emit(rep + i, 1, <uint32_t>pos, out, n2o)
                else:
                    in_word = False
                    if not merge:
                        self._emit(<const uint8_t*>b" ", 1, <uint32_t>pos, out, n2o)
            pos += k
        if append:
            self._emit(<const uint8_t*>b" ", 1, <uint32_t>n, out, n2o)
        if n2o != NULL:
            offsets_reserve(n2o, 1)
            n2o.data[n2o.len] = <uint32_t>n
            n2o.len += 1
        return 0

    def normalize(self, str text not None):
        """The normalized text, as sentencepiece's ``normalize`` returns it."""
        return self.normalize_with_offsets(text)[0]

    def normalize_with_offsets(self, str text not None):
        """``(normalized, offsets)``: ``offsets[i]`` is the index in ``text`` of
        the character that normalized character ``i`` came from; the last entry
        is where the normalized text ends in ``text``.

        >>> n = Normalizer(None, add_dummy_prefix=True, remove_extra_whitespaces=True,
        ...                escape_whitespaces=True)
        >>> n.normalize_with_offsets("  ab")
        ('▁ab', [2, 2, 3, 4])
        """
        cdef Utf8Text u
        cdef const uint8_t* s
        cdef size_t size
        cdef ByteBuf out = ByteBuf(NULL, 0, 0)
        cdef OffsetBuf n2o = OffsetBuf(NULL, 0, 0)
        cdef size_t i
        utf8_text(text, &u)
        s = u.data
        size = u.size
        try:
            with nogil:
                self.normalize_into(s, size, &out, &n2o)
            normalized = (<char*>out.data)[:out.len].decode("utf-8") if out.len else ""
            char_at = char_index(s, size)
            c = char_at[size]
            offsets = []
            for i in range(out.len):
                if (out.data[i] & 0xC0) != 0x80:
                    offsets.append(char_at.get(n2o.data[i], 0))
            offsets.append(char_at.get(n2o.data[out.len], c))
            return normalized, offsets
        finally:
            bytebuf_free(&out)
            offsets_free(&n2o)
            free(u.owned)

    def normalize_bytes(self, data):
        """Normalize raw bytes (which may be malformed UTF-8) to bytes.

        >>> n = Normalizer(None, add_dummy_prefix=False, remove_extra_whitespaces=False,
        ...                escape_whitespaces=False)
        >>> n.normalize_bytes(b"a\\xffb")
        b'a\\xef\\xbf\\xbdb'
        """
        cdef bytes raw = bytes(data)
        cdef ByteBuf out = ByteBuf(NULL, 0, 0)
        try:
            self.normalize_into(<const uint8_t*>PyBytes_AS_STRING(raw), len(raw), &out, NULL)
            return (<char*>out.data)[:out.len] if out.len else b""
        finally:
            bytebuf_free(&out)


cdef inline size_t _plain_run(Normalizer self, const uint8_t* s, size_t n, uint8_t* out) noexcept nogil:
    # Copies to out the characters from s that no rule or symbol starts and
    # that are not spaces (what prefix() would copy unchanged), up to the
    # first other one; returns how many bytes.
    cdef size_t i = 0, k, index
    cdef uint8_t c, d
    while i < n:
        c = s[i]
        if c < 0x80:
            if c == 32 or not self.ascii_plain[c]:
                break
            if i + 1 < n:
                d = s[i + 1]
                if d >= 0x80 and (d < 0xC0 or (self.ascii_cont[c] >> (d - 0xC0)) & 1):
                    break
            out[i] = c
            i += 1
            continue
        if c < 0xC0 or i + 1 >= n or not _trail(s[i + 1]):
            break
        index = (<size_t>(c - 0xC0) << 6) | (s[i + 1] & 0x3F)
        # decided by the lead byte's class, a branch that follows the
        # script: for 3-byte characters a plain pair has no third-byte bit
        if c >= 0xE0 and c < 0xF0:
            if i + 2 >= n or (self.multi_third[index] >> (s[i + 2] & 0x3F)) & 1:
                break
        elif not self.multi_plain[index]:
            break
        k = _valid_multi_len(s + i, n - i)
        if k == 0:
            break
        out[i] = c
        out[i + 1] = s[i + 1]
        if k > 2:
            out[i + 2] = s[i + 2]
            if k > 3:
                out[i + 3] = s[i + 3]
        i += k
    return i


cdef dict char_index(const uint8_t* s, size_t n):
    # byte offset in s -> character index, for the starts of characters and
    # for n (the number of characters)
    cdef dict char_at = {}
    cdef size_t i, c = 0
    for i in range(n):
        if (s[i] & 0xC0) != 0x80:
            char_at[i] = c
            c += 1
    char_at[n] = c
    return char_at


cdef inline bint _ends_with(const ByteBuf* buf, const uint8_t* tail, size_t n) noexcept nogil:
    cdef size_t i
    for i in range(n):
        if buf.data[buf.len - n + i] != tail[i]:
            return False
    return True
