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
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t
from libc.stdlib cimport free

from fasttok.shared._growth cimport grow_array
from fasttok.shared._tables cimport TokenTables, find_bytes

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
