"""GPT-2's reversible map between bytes and printable characters.

Byte-level BPE vocabularies in GGUF and ``tokenizer.json`` files store each
token as text in which every byte became one printable character: bytes
0x21-0x7E, 0xA1-0xAC and 0xAE-0xFF stand for themselves and the other 68
bytes become U+0100 + n in byte order (space is ``Ġ``, newline ``Ċ``). The
loaders undo this once at load time, so the compiled models only ever see
raw bytes.
"""

from libc.stdint cimport int32_t, uint8_t, uint32_t

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


def decode_byte_level(str text not None):
    """Turn a byte-level token string back into its raw bytes.

    Raises ``ValueError`` on a character outside the 256-character alphabet,
    which means the string was not byte-level text.

    >>> decode_byte_level("ĠhiĊ")
    b' hi\\n'
    """
    cdef Py_ssize_t i, n = len(text)
    cdef uint32_t cp
    cdef bytearray out = bytearray(n)
    cdef unsigned char[::1] view = out
    for i in range(n):
        cp = ord(text[i])
        if cp >= 0x144 or CHAR_TO_BYTE[cp] < 0:
            raise ValueError(f"{text!r}: character {text[i]!r} at {i} is not in the byte-level alphabet")
        view[i] = <uint8_t>CHAR_TO_BYTE[cp]
    return bytes(out)
