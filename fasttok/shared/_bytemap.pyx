"""GPT-2's reversible map between bytes and printable characters.

Byte-level BPE vocabularies in GGUF and ``tokenizer.json`` files store each
token as text in which every byte became one printable character: bytes
0x21-0x7E, 0xA1-0xAC and 0xAE-0xFF stand for themselves and the other 68
bytes become U+0100 + n in byte order (space is ``Ġ``, newline ``Ċ``). The
loaders undo this once at load time, so the compiled models only ever see
raw bytes.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.unicode cimport PyUnicode_DATA, PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_READ
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memset

from fasttok.shared._growth cimport grow_array
from fasttok.shared._json_reader cimport PackedMerges, PackedVocab
from fasttok.shared._tables cimport MERGE_BATCH, TokenTables, find_bytes

cdef uint32_t BYTE_TO_CHAR[256]
cdef int32_t CHAR_TO_BYTE[0x144]


cdef void _build() noexcept:
    cdef int b, n = 0
    for b in range(0x144):
        CHAR_TO_BYTE[b] = -1
    for b in range(256):
        if 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF:
            BYTE_TO_CHAR[b] = b
        else:
            BYTE_TO_CHAR[b] = 0x100 + n
            n += 1
        CHAR_TO_BYTE[BYTE_TO_CHAR[b]] = b


_build()


def bytes_to_unicode():
    """The byte -> character map as a dict.

    >>> bytes_to_unicode()[ord(" ")]
    'Ġ'
    """
    return {b: chr(BYTE_TO_CHAR[b]) for b in range(256)}


def unicode_to_bytes():
    """The character -> byte map as a dict (the inverse of :func:`bytes_to_unicode`).

    >>> unicode_to_bytes()["Ċ"]
    10
    """
    return {chr(BYTE_TO_CHAR[b]): b for b in range(256)}


def encode_byte_level(bytes data not None):
    """Spell raw bytes in the byte-level alphabet.

    >>> encode_byte_level(b" hi\\n")
    'ĠhiĊ'
    """
    return "".join([chr(BYTE_TO_CHAR[b]) for b in data])


cdef Py_ssize_t _decode(str text, Py_ssize_t start, Py_ssize_t end, uint8_t* out) noexcept:
    # text[start:end] as bytes into out; the index of the first character
    # outside the alphabet, or -1 when there is none
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t i
    cdef uint32_t cp
    for i in range(start, end):
        cp = PyUnicode_READ(kind, data, i)
        if cp >= 0x144 or CHAR_TO_BYTE[cp] < 0:
            return i
        out[i - start] = <uint8_t>CHAR_TO_BYTE[cp]
    return -1


def decode_byte_level(str text not None):
    """Turn a byte-level token string back into its raw bytes.

    Raises ``ValueError`` on a character outside the 256-character alphabet,
    which means the string was not byte-level text.

    >>> decode_byte_level("ĠhiĊ")
    b' hi\\n'
    """
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    cdef bytes out = PyBytes_FromStringAndSize(NULL, n)
    cdef Py_ssize_t bad = _decode(text, 0, n, <uint8_t*>PyBytes_AS_STRING(out))
    if bad >= 0:
        raise ValueError(f"{text!r}: character {text[bad]!r} at {bad} is not in the byte-level alphabet")
    return out


cdef Py_ssize_t _space(str text) noexcept:
    # the index of the one space in text; -1 for none or more than one
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t i, found = -1
    for i in range(PyUnicode_GET_LENGTH(text)):
        if PyUnicode_READ(kind, data, i) == 0x20:
            if found >= 0:
                return -1
            found = i
    return found


def byte_level_merges(list merges not None, TokenTables tables not None, tuple tokens not None):
    """A ``tokenizer.json`` byte-level BPE model's ``merges`` (``"a b"``
    strings or ``["a", "b"]`` pairs) as ``(left, right)`` pairs of the
    ``tokens`` (raw bytes by slot, ``tables`` built from them); or the index
    of the first merge that is not two tokens spelling a third, for the
    caller to say what is wrong with it.

    One pass in C with no object per merge but its pair: the same done with
    dict lookups of the parts' strings was a third of Llama 3's load.

    >>> from fasttok.shared._tables import TokenTables
    >>> tokens = (b"a", b" ", b"a ")
    >>> t = TokenTables(tokens)
    >>> byte_level_merges(["a Ġ", ["a", "Ġ"]], t, tokens), byte_level_merges(["a a"], t, tokens)
    ([(b'a', b' '), (b'a', b' ')], 0)
    """
    cdef Py_ssize_t i, n = len(merges), sp, la, lb
    cdef size_t cap = 0
    cdef str left, right
    cdef int64_t l, r
    cdef uint8_t* buf = NULL
    cdef list out = [None] * n
    cdef tuple pair
    try:
        grow_array(<void**>&buf, &cap, 1, 1, 256)  # never NULL, even for empty parts
        for i in range(n):
            merge = merges[i]
            if type(merge) is str:
                sp = _space(merge)
                if sp < 0:
                    return i
                left, right = merge, merge
                la, lb = sp, PyUnicode_GET_LENGTH(merge) - sp - 1
            elif (type(merge) is list and len(merge) == 2 and type(merge[0]) is str
                  and type(merge[1]) is str):
                left, right = merge[0], merge[1]
                sp = -1
                la, lb = PyUnicode_GET_LENGTH(left), PyUnicode_GET_LENGTH(right)
            else:
                return i
            grow_array(<void**>&buf, &cap, la + lb, 1, 256)
            if _decode(left, 0, la, buf) >= 0 or _decode(right, sp + 1, sp + 1 + lb, buf + la) >= 0:
                return i
            l = find_bytes(&tables.index, &tables.strings, buf, la)
            r = find_bytes(&tables.index, &tables.strings, buf + la, lb)
            if l < 0 or r < 0 or find_bytes(&tables.index, &tables.strings, buf, la + lb) < 0:
                return i
            pair = PyTuple_New(2)
            a, b = tokens[l], tokens[r]
            Py_INCREF(a)
            PyTuple_SET_ITEM(pair, 0, a)
            Py_INCREF(b)
            PyTuple_SET_ITEM(pair, 1, b)
            out[i] = pair
        return out
    finally:
        free(buf)


cdef Py_ssize_t _decode_utf8(const uint8_t* p, size_t n, uint8_t* out) noexcept nogil:
    # byte-level text as UTF-8 (valid) into raw bytes at out: their count,
    # or -1 for a character outside the alphabet (all of it is below U+0800)
    cdef size_t i = 0, k = 0
    cdef uint32_t cp
    while i < n:
        if p[i] < 0x80:
            cp = p[i]
            i += 1
        elif p[i] < 0xE0 and i + 1 < n:
            cp = ((p[i] & 0x1F) << 6) | (p[i + 1] & 0x3F)
            i += 2
        else:
            return -1
        if cp >= 0x144 or CHAR_TO_BYTE[cp] < 0:
            return -1
        out[k] = <uint8_t>CHAR_TO_BYTE[cp]
        k += 1
    return <Py_ssize_t>k


cdef inline int _decode_part(const uint8_t* p, size_t n, uint8_t* buf, size_t* used,
                             const uint8_t** part, size_t* part_len) noexcept nogil:
    # one part of a merge decoded into buf at *used (moved past it), where
    # part/part_len then point: 0, or 1 for text outside the alphabet
    cdef Py_ssize_t k = _decode_utf8(p, n, buf + used[0])
    if k < 0:
        return 1
    part[0] = buf + used[0]
    part_len[0] = <size_t>k
    used[0] += <size_t>k
    return 0


cdef int _fill_slots(PackedVocab vocab, const int32_t* slot_of, int64_t top,
                     TokenTables t) except -1 nogil:
    # The tables' token bytes by id from the kept entries (slot_of: entry
    # by id, -1 for a hole); 1 when an entry is not byte-level text
    cdef int64_t i
    cdef int32_t e
    cdef uint64_t pos = 0
    cdef Py_ssize_t length
    for i in range(top + 1):
        t.strings.offsets[i] = pos
        e = slot_of[i]
        if e < 0:
            continue
        length = _decode_utf8(vocab.data + vocab.offsets[e], vocab.offsets[e + 1] - vocab.offsets[e],
                              t.strings.data + pos)
        if length < 0:
            return 1
        pos += <uint64_t>length
        t.strings.present[i] = 1
    t.strings.offsets[top + 1] = pos
    return 0


cdef int _add_merges(TokenTables t, PackedMerges merges) except -1:
    # every merge into t's pairs (rank = its index, a pair listed twice
    # keeps its last merge, as tokenizers does); 1 when one is not two
    # byte-level tokens spelling a third
    cdef const uint8_t* pa[MERGE_BATCH]
    cdef const uint8_t* pb[MERGE_BATCH]
    cdef size_t la[MERGE_BATCH]
    cdef size_t lb[MERGE_BATCH]
    cdef const uint8_t* a
    cdef const uint8_t* b
    cdef size_t na, nb, need, used, cap = 0, joined_cap = 0
    cdef uint8_t* buf = NULL
    cdef uint8_t* joined = NULL
    cdef Py_ssize_t first, j, count
    try:
        for first in range(0, merges.n, MERGE_BATCH):
            count = min(<Py_ssize_t>MERGE_BATCH, merges.n - first)
            # the batch's text bounds its bytes: room first, so pa/pb stay put
            need = merges.offsets[first + count] - merges.offsets[first]
            grow_array(<void**>&buf, &cap, need + 1, 1, 4096)
            used = 0
            for j in range(count):
                if merges.parts(first + j, &a, &na, &b, &nb):
                    return 1
                if (_decode_part(a, na, buf, &used, &pa[j], &la[j])
                        or _decode_part(b, nb, buf, &used, &pb[j], &lb[j])):
                    return 1
            if t._add_merge_batch(pa, la, pb, lb, count, <uint32_t>first, True, &joined,
                                  &joined_cap):
                return 1
    finally:
        free(buf)
        free(joined)
    return 0


def byte_level_tables(PackedVocab vocab not None, PackedMerges merges not None, added_ids):
    """The token tables of a byte-level BPE model read packed
    (:func:`fasttok.shared._json_reader.read_tokenizer_document`), built
    once: ``(tables, top, left_out)``, ``top`` the largest id kept,
    ``left_out`` the ``(text, id)`` of the entries left out because an
    added token has their id (``added_ids``). ``None`` when the model is not
    the plain case this builds (an entry or merge outside the byte-level
    alphabet, ids listed twice or far apart, a byte missing, a merge that
    is not two tokens spelling a third): the caller then reads the model
    from its Python objects, which says what is wrong.

    >>> import json
    >>> from fasttok.shared._json_reader import read_tokenizer_document
    >>> vocab = {bytes_to_unicode()[b]: b for b in range(256)} | {"ĠĠ": 256, "<s>": 257}
    >>> data = json.dumps({"model": {"vocab": vocab, "merges": ["Ġ Ġ"]}}).encode()
    >>> _, packed = read_tokenizer_document(data)
    >>> tables, top, left_out = byte_level_tables(packed.vocab, packed.merges, {257})
    >>> tables.find(b"  "), tables.pair(32, 32), top, left_out
    (256, (256, 0), 256, [('<s>', 257)])
    """
    cdef Py_ssize_t n = vocab.n, e, kept = 0
    cdef int64_t top = -1, token_id, b
    cdef uint8_t* left_out = <uint8_t*>calloc(n + 1, 1)
    cdef int32_t* slot_of = NULL
    cdef TokenTables t
    cdef uint8_t single
    cdef int failed
    cdef list left = []
    try:
        if left_out == NULL:
            raise MemoryError()
        added = frozenset(added_ids)
        for e in range(n):
            token_id = vocab.entry_ids[e]
            if token_id in added:
                left_out[e] = 1
                left.append((vocab._text(e), token_id))
            else:
                kept += 1
                if token_id > top:
                    top = token_id
        if len({i for _, i in left}) < len(left) or not top < 2 * kept + 1024:
            return None  # ids listed twice or far apart: the Python path's
        slot_of = <int32_t*>malloc((top + 1) * sizeof(int32_t))
        if slot_of == NULL:
            raise MemoryError()
        memset(slot_of, 0xFF, (top + 1) * sizeof(int32_t))
        for e in range(n):
            if not left_out[e]:
                if slot_of[vocab.entry_ids[e]] >= 0:
                    return None
                slot_of[vocab.entry_ids[e]] = <int32_t>e
        t = TokenTables.__new__(TokenTables)
        t.strings.n = <uint32_t>(top + 1)
        t.strings.data = <uint8_t*>malloc(vocab.offsets[n] + 1)
        t.strings.offsets = <uint64_t*>malloc((top + 2) * sizeof(uint64_t))
        t.strings.present = <uint8_t*>calloc(top + 2, 1)
        if not t.strings.data or not t.strings.offsets or not t.strings.present:
            raise MemoryError()
        with nogil:
            failed = _fill_slots(vocab, slot_of, top, t)
        if failed:
            return None
        t._build_index()
        for b in range(256):
            single = <uint8_t>b
            if find_bytes(&t.index, &t.strings, &single, 1) < 0:
                return None
        t.priority = <uint32_t*>malloc((top + 2) * sizeof(uint32_t))
        if not t.priority:
            raise MemoryError()
        for e in range(top + 1):
            t.priority[e] = <uint32_t>e
        t._alloc_pairs(merges.n)
        if _add_merges(t, merges):
            return None
        t.merges_spelled = True
        t._derive(True)
        return t, top, left
    finally:
        free(left_out)
        free(slot_of)
