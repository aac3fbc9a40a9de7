"""The lists of a walked :class:`~fasttok.post_processors.encoding.Encoding`,
each made from a compiled walk's arrays in one C loop (the user reads a
field of every encoding of a batch: a Python-level ``zip`` or ``map`` there
cost as much as the walk itself), and the getters that read them.

>>> from array import array
>>> offset_pairs(array("i", [0, 2, 3, 5]))
[(0, 2), (3, 5)]
>>> token_strings(["a", "b", "c"], array("I", [2, 0]))
['c', 'a']
"""

from cpython cimport array

# the fields an Encoding has, in the order WalkedFields.make numbers them
FIELDS = ("ids", "type_ids", "tokens", "offsets", "word_ids", "special_tokens_mask",
          "attention_mask", "overflowing", "sequence_ranges")
cdef enum:
    IDS, TYPE_IDS, TOKENS, OFFSETS, WORD_IDS, SPECIAL_TOKENS_MASK, ATTENTION_MASK, \
        OVERFLOWING, SEQUENCE_RANGES


def offset_pairs(array.array offsets) -> list:
    """``[(start, end), ...]`` of a flat ``array('i')`` of starts and ends."""
    cdef int* at = offsets.data.as_ints
    cdef Py_ssize_t i, n = len(offsets) // 2
    return [(at[2 * i], at[2 * i + 1]) for i in range(n)]


def token_strings(list strings, array.array ids) -> list:
    """``[strings[id] for id in ids]`` of an ``array('I')``."""
    cdef unsigned int* at = ids.data.as_uints
    cdef Py_ssize_t i, n = len(ids), size = len(strings)
    for i in range(n):
        if at[i] >= <size_t>size:
            raise IndexError(f"token id {at[i]} has no string")
    return [strings[at[i]] for i in range(n)]


cdef class WalkedFields:
    """What each field of a walked encoding is made from: the walk's arrays
    (``ids``; ``offsets``, start and end of each token in turn; ``words``),
    ``strings[id]`` as a token's string but where ``odd`` (``{index: string}``)
    says otherwise, the type id, ``word`` (replacing every word index, or
    ``None``) and the post-processor's ``wrap`` (a ``SingleWrap`` or ``None``).

    >>> from array import array
    >>> w = WalkedFields(array("I", [1, 0]), array("i", [0, 1, 1, 2]), array("i", [0, 0]),
    ...                  ["a", "b"], 0, None, None, {1: "x"})
    >>> w.make(2), w.make(3), w.make(6)
    (['b', 'x'], [(0, 1), (1, 2)], [1, 1])
    """

    cdef array.array ids, offsets, words
    cdef list strings
    cdef dict odd
    cdef int type_id
    cdef object word, wrap

    def __init__(self, array.array ids not None, array.array offsets not None,
                 array.array words not None, list strings not None, int type_id, word, wrap,
                 dict odd):
        self.ids, self.offsets, self.words, self.strings = ids, offsets, words, strings
        self.type_id = type_id if wrap is None else wrap.type_id
        self.word, self.wrap, self.odd = word, wrap, odd

    cdef list _around(self, str field, list middle):
        if self.wrap is None:
            return middle
        return getattr(self.wrap.head, field) + middle + getattr(self.wrap.tail, field)

    cpdef object make(self, int field):
        """A new copy of field number ``field`` (in :data:`FIELDS`' order)."""
        cdef Py_ssize_t n = len(self.ids), start
        cdef list tokens
        if field == IDS:
            return self._around("ids", self.ids.tolist())
        if field == TYPE_IDS:
            return self._around("type_ids", [self.type_id] * n)
        if field == TOKENS:
            tokens = token_strings(self.strings, self.ids)
            if self.odd:
                for index, text in self.odd.items():
                    tokens[index] = text
            return self._around("tokens", tokens)
        if field == OFFSETS:
            return self._around("offsets", offset_pairs(self.offsets))
        if field == WORD_IDS:
            return self._around("word_ids",
                                self.words.tolist() if self.word is None else [self.word] * n)
        if field == SPECIAL_TOKENS_MASK:
            return self._around("special_tokens_mask", [0] * n)
        if field == ATTENTION_MASK:
            if self.wrap is not None:
                n += len(self.wrap.head.ids) + len(self.wrap.tail.ids)
            return [1] * n
        if field == OVERFLOWING:
            return []
        if field == SEQUENCE_RANGES:
            if self.wrap is None:
                return {}
            start = len(self.wrap.head.ids)
            return {0: (start, start + n)}
        raise IndexError(f"no field number {field}")


cdef inline object _read(object encoding, int field):
    # a field set or kept on the encoding, else a new one
    cdef dict made = encoding._made
    if made:
        value = made.get(FIELDS[field])
        if value is not None:
            return value
    return (<WalkedFields>encoding._walked).make(field)


def read_ids(encoding):
    """The ``ids`` of a walked encoding (kept, or made now)."""
    return _read(encoding, IDS)


def read_type_ids(encoding):
    """The ``type_ids`` of a walked encoding (kept, or made now)."""
    return _read(encoding, TYPE_IDS)


def read_tokens(encoding):
    """The ``tokens`` of a walked encoding (kept, or made now)."""
    return _read(encoding, TOKENS)


def read_offsets(encoding):
    """The ``offsets`` of a walked encoding (kept, or made now)."""
    return _read(encoding, OFFSETS)


def read_word_ids(encoding):
    """The ``word_ids`` of a walked encoding (kept, or made now)."""
    return _read(encoding, WORD_IDS)


def read_special_tokens_mask(encoding):
    """The ``special_tokens_mask`` of a walked encoding (kept, or made now)."""
    return _read(encoding, SPECIAL_TOKENS_MASK)


def read_attention_mask(encoding):
    """The ``attention_mask`` of a walked encoding (kept, or made now)."""
    return _read(encoding, ATTENTION_MASK)


def read_overflowing(encoding):
    """The ``overflowing`` of a walked encoding (kept, or made now)."""
    return _read(encoding, OVERFLOWING)


def read_sequence_ranges(encoding):
    """The ``sequence_ranges`` of a walked encoding (kept, or made now)."""
    return _read(encoding, SEQUENCE_RANGES)
