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


cdef class SingleWrap:
    """One input's processing as a wrapping: the special tokens before it
    (``head``, an Encoding), the type id its tokens get, the special tokens
    after it (``tail``); its tokens become sequence 0. The lists of both are
    read once, here (each walked encoding puts them around its own).

    >>> from fasttok.post_processors.encoding import Encoding
    >>> SingleWrap(Encoding.empty(), 0, Encoding.empty()).type_id
    0
    """

    cdef readonly object head, tail
    cdef readonly int type_id
    cdef tuple heads, tails  # each field's list, in FIELDS' order (up to the masks)

    def __init__(self, head, int type_id, tail):
        self.head, self.type_id, self.tail = head, type_id, tail
        self.heads = tuple([getattr(head, name) for name in FIELDS[:ATTENTION_MASK + 1]])
        self.tails = tuple([getattr(tail, name) for name in FIELDS[:ATTENTION_MASK + 1]])


cdef class WalkedFields:
    """What each field of a walked encoding is made from: the walk's arrays
    (``ids``; ``offsets``, start and end of each token in turn; ``words``),
    ``strings[id]`` as a token's string but where ``odd`` (``{index: string}``)
    says otherwise, the type id, ``word`` (replacing every word index, or
    ``None``) and the post-processor's ``wrap`` (a :class:`SingleWrap` or
    ``None``); and the fields kept (set by a stage, or made to be changed in
    place), which reading gives instead.

    >>> from array import array
    >>> w = WalkedFields(array("I", [1, 0]), array("i", [0, 1, 1, 2]), array("i", [0, 0]),
    ...                  ["a", "b"], 0, None, None, {1: "x"})
    >>> w.read(2), w.read(3), w.read(6)
    (['b', 'x'], [(0, 1), (1, 2)], [1, 1])
    """

    cdef array.array ids, offsets, words
    cdef list strings
    cdef dict odd
    cdef readonly dict kept  # name -> field; None until one is kept
    cdef int type_id
    cdef object word
    cdef SingleWrap wrap

    def __init__(self, array.array ids not None, array.array offsets not None,
                 array.array words not None, list strings not None, int type_id, word,
                 SingleWrap wrap, dict odd):
        self.ids, self.offsets, self.words, self.strings = ids, offsets, words, strings
        self.type_id = type_id if wrap is None else wrap.type_id
        self.word, self.wrap, self.odd = word, wrap, odd

    cdef list _around(self, int field, list middle):
        if self.wrap is None:
            return middle
        cdef list head = self.wrap.heads[field], tail = self.wrap.tails[field]
        if not head and not tail:
            return middle
        return head + middle + tail

    cpdef object read(self, int field):
        """Field number ``field`` (in :data:`FIELDS`' order): the kept one,
        else a new copy."""
        if self.kept is not None:
            value = self.kept.get(FIELDS[field])
            if value is not None:
                return value
        return self.make(field)

    def keep(self, str name, value):
        """Keep ``value`` as the field ``name``: reading gives it from now on."""
        if self.kept is None:
            self.kept = {}
        self.kept[name] = value

    def keep_all(self):
        """Keep every field not kept yet (a method is about to change them in place)."""
        for number, name in enumerate(FIELDS):
            if self.kept is None or name not in self.kept:
                self.keep(name, self.make(number))

    cpdef object make(self, int field):
        """A new copy of field number ``field``, from the walk."""
        cdef Py_ssize_t n = len(self.ids), start
        cdef list tokens
        if field == IDS:
            return self._around(IDS, self.ids.tolist())
        if field == TYPE_IDS:
            return self._around(TYPE_IDS, [self.type_id] * n)
        if field == TOKENS:
            tokens = token_strings(self.strings, self.ids)
            if self.odd:
                for index, text in self.odd.items():
                    tokens[index] = text
            return self._around(TOKENS, tokens)
        if field == OFFSETS:
            return self._around(OFFSETS, offset_pairs(self.offsets))
        if field == WORD_IDS:
            return self._around(WORD_IDS,
                                self.words.tolist() if self.word is None else [self.word] * n)
        if field == SPECIAL_TOKENS_MASK:
            return self._around(SPECIAL_TOKENS_MASK, [0] * n)
        if field == ATTENTION_MASK:
            if self.wrap is not None:
                n += len(self.wrap.heads[IDS]) + len(self.wrap.tails[IDS])
            return [1] * n
        if field == OVERFLOWING:
            return []
        if field == SEQUENCE_RANGES:
            if self.wrap is None:
                return {}
            start = len(self.wrap.heads[IDS])
            return {0: (start, start + n)}
        raise IndexError(f"no field number {field}")


def walked_encoding(cls, array.array ids not None, array.array offsets not None,
                    array.array words not None, list strings not None, int type_id, word,
                    SingleWrap wrap, dict odd):
    """A new ``cls`` (the walked Encoding class) over :class:`WalkedFields` of the arguments."""
    encoding = cls.__new__(cls)
    encoding._walked = WalkedFields(ids, offsets, words, strings, type_id, word, wrap, odd)
    return encoding


cdef inline object _read(object encoding, int field):
    return (<WalkedFields>encoding._walked).read(field)

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
