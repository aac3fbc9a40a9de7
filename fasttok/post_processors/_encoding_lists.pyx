"""Walked encodings: the :class:`~fasttok.post_processors.encoding.Encoding`
of a compiled walk's arrays (or, for a batch's text, one block of them),
made in C, its lists made in C when read.

A user reads every field of every encoding of a batch, one call per line:
the Python layers around the walk (a ``walked_encoding`` call, the
encoding's ``__new__`` and ``__init__``, a ``property`` and a function per
field read, ``head + middle + tail`` for the post-processor's tokens) cost
as much as the walk itself. Here an :class:`EncodingMaker` walks a text and
makes its encoding in one call (a batch's in one loop), each field of it
is a :class:`WalkedField` descriptor whose read makes the list in one
allocation with the wrapping's tokens around the walk's, and the
``(start, end)`` pairs of short offsets are made once and shared (tuples
are immutable: sharing them cannot be seen but by ``is``). The drop-in's
``Tokenizer.encode`` (:func:`tokenizer_encode`) and its pipeline's
``encode_single`` are compiled here too, so that a line goes from the
caller to the walk with no Python frame between.

Invariants: a field read gives a new list each time (as ``tokenizers``'
getters do: lists kept alive by thousands of encodings lengthen every pass
of the collector), unless a stage kept one (:meth:`WalkedFields.keep`);
what is made equals what the stages give (tests/test_hf_walked_encodings.py).
A walked encoding, its fields and the walk's arrays are not tracked by the
cycle collector until a field is kept: before that, nothing they hold can
lead back to them (arrays, the shared token strings, the wrapping), so no
cycle can pass through them, and a batch's thousands of encodings cost the
collector nothing; a kept field may hold anything, so keeping one tracks
the encoding and its fields again.

>>> from array import array
>>> token_strings(["a", "b", "c"], array("I", [2, 0]))
['c', 'a']
>>> token_strings(["a"], array("I", [0, 0]), {1: "?"})
['a', '?']
"""

cimport cython
from cpython cimport array
from cpython.list cimport PyList_GET_ITEM, PyList_New, PyList_SET_ITEM
from cpython.object cimport Py_SIZE
from cpython.tuple cimport PyTuple_GET_ITEM
from cpython.object cimport PyTypeObject
from cpython.dict cimport PyDict_Next
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from libc.stdint cimport int32_t, uint32_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

from fasttok.shared._utf8 cimport has_surrogate

from types import MemberDescriptorType

cdef extern from "Python.h":
    ctypedef struct PyMemberDef:
        Py_ssize_t offset
    ctypedef struct PyMemberDescrObject:
        PyMemberDef* d_member
    int PyGC_Enable()
    int PyGC_Disable()
    int PyObject_IS_GC(object op)
    int PyObject_GC_IsTracked(object op)
    void PyObject_GC_Track(object op)
    void PyObject_GC_UnTrack(object op)

# the fields an Encoding has, in the order WalkedFields.make numbers them
FIELDS = ("ids", "type_ids", "tokens", "offsets", "word_ids", "special_tokens_mask",
          "attention_mask", "overflowing", "sequence_ranges")
cdef enum:
    IDS, TYPE_IDS, TOKENS, OFFSETS, WORD_IDS, SPECIAL_TOKENS_MASK, ATTENTION_MASK, \
        OVERFLOWING, SEQUENCE_RANGES
    # the lists a wrapping has one of (FIELDS up to the attention mask)
    WRAPPED = ATTENTION_MASK + 1

# the pairs (start, end) with start < PAIR_STARTS and end - start <
# PAIR_WIDTHS, each made the first time it is asked for and kept (a
# reference held for good): a line's offsets are nearly all of them, and a
# tuple shared costs a fifth of one made (at most 16,384 pairs, ~1.5 MB)
cdef enum:
    PAIR_STARTS = 512
    PAIR_WIDTHS = 32
cdef PyObject* _pairs[PAIR_STARTS * PAIR_WIDTHS]

# the ints of token ids below ID_INTS, each made the first time it is asked
# for and kept, as the pairs are: an id read is an int made and freed
# otherwise (a third of reading a line's ids; 2 MB of table, its pages
# touched as ids are met, and one int per id met)
cdef enum:
    ID_INTS = 1 << 18
cdef PyObject* _ints[ID_INTS]

cdef tuple _NO_ARGS = ()


cdef inline object _pair(int start, int end):
    # a pair of two ints, untracked: it can hold no cycle (the collector
    # untracks such a tuple at its first pass, after walking it)
    cdef int width = end - start
    cdef Py_ssize_t slot
    cdef object pair
    if <unsigned int>start >= PAIR_STARTS or <unsigned int>width >= PAIR_WIDTHS:
        pair = (start, end)
        _untrack(pair)
        return pair
    slot = start * PAIR_WIDTHS + width
    if _pairs[slot] == NULL:
        pair = (start, end)
        _untrack(pair)
        Py_INCREF(pair)
        _pairs[slot] = <PyObject*>pair
    return <object>_pairs[slot]


cdef list _set_pairs(list out, Py_ssize_t h, const int32_t* at, Py_ssize_t n):
    # out[h + i] = (at[2i], at[2i + 1]) for each i below n. Past the shared
    # pairs, a token that starts where the one before it ends takes that
    # end's int, and one spanning what the one before spans (a character's
    # byte-fallback pieces) takes its pair: half the ints of a long text.
    # The collector is paused: every 700 new tuples set off a pass that
    # walked the young objects, the list being filled among them (a third
    # of reading the offsets of Gemma 3's 5,000 English lines as one text).
    cdef Py_ssize_t i
    cdef int start, end, last_start = -1, last_end = -1
    cdef object pair = None, end_int = None
    cdef int was_enabled = PyGC_Disable()
    try:
        for i in range(n):
            start, end = at[2 * i], at[2 * i + 1]
            if <unsigned int>start < PAIR_STARTS and <unsigned int>(end - start) < PAIR_WIDTHS:
                _set(out, h + i, _pair(start, end))
                continue
            if start != last_start or end != last_end:
                pair = (end_int if start == last_end else start, end)
                _untrack(pair)
                end_int = <object>PyTuple_GET_ITEM(pair, 1)
                last_start, last_end = start, end
            _set(out, h + i, pair)
    finally:
        if was_enabled:
            PyGC_Enable()
    return out


cdef inline object _shared_int(unsigned int value):
    # the int value, below ID_INTS
    cdef object number
    if _ints[value] == NULL:
        number = value
        Py_INCREF(number)
        _ints[value] = <PyObject*>number
    return <object>_ints[value]


cdef inline object _id_int(unsigned int value):
    return value if value >= ID_INTS else _shared_int(value)


cdef inline object _word_int(int value):
    # (a word index is below ID_INTS: it counts the text's pieces)
    return value if <unsigned int>value >= ID_INTS else _shared_int(value)


cdef inline void _track(object value) noexcept:
    # (tracking an object twice is a fatal error, and an object of a type
    # the collector does not know has no place to be tracked in)
    if PyObject_IS_GC(value) and not PyObject_GC_IsTracked(value):
        PyObject_GC_Track(value)


cdef inline void _untrack(object value) noexcept:
    if PyObject_GC_IsTracked(value):
        PyObject_GC_UnTrack(value)


cdef inline void _set(list out, Py_ssize_t i, object item) noexcept:
    # PyList_SET_ITEM steals the reference that Cython's temporary gives back
    Py_INCREF(item)
    PyList_SET_ITEM(out, i, item)


cdef list _around(list head, Py_ssize_t n, list tail):
    # a new list of head's items, n items for the caller to set (NULL until
    # then: set them before anything else runs), then tail's
    cdef Py_ssize_t h = len(head), t = len(tail), i
    cdef list out = PyList_New(h + n + t)
    for i in range(h):
        _set(out, i, <object>PyList_GET_ITEM(head, i))
    for i in range(t):
        _set(out, h + n + i, <object>PyList_GET_ITEM(tail, i))
    return out


cdef int _check_ids(list strings, array.array ids) except -1:
    cdef unsigned int* at = ids.data.as_uints
    cdef Py_ssize_t i, size = len(strings)
    for i in range(len(ids)):
        if at[i] >= <size_t>size:
            raise IndexError(f"token id {at[i]} has no string")
    return 0


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
    cdef Py_ssize_t added  # how many tokens head and tail hold
    cdef Py_ssize_t lead  # how many head holds

    def __init__(self, head, int type_id, tail):
        self.head, self.type_id, self.tail = head, type_id, tail
        self.heads = tuple([list(getattr(head, name)) for name in FIELDS[:WRAPPED]])
        self.tails = tuple([list(getattr(tail, name)) for name in FIELDS[:WRAPPED]])
        self.lead = len(self.heads[IDS])
        self.added = self.lead + len(self.tails[IDS])


cdef int _respell(list out, Py_ssize_t h, Py_ssize_t n, dict odd) except -1:
    # out[h + index] = text for each {index: text} of odd, index below n (a
    # Unigram line of unknown runs has several: the dict's items as tuples
    # and an int sum each were half of reading its tokens)
    cdef Py_ssize_t pos = 0, index
    cdef PyObject* key
    cdef PyObject* text
    cdef PyObject* old
    while PyDict_Next(odd, &pos, &key, &text):
        index = <object>key
        if not 0 <= index < n:
            raise IndexError(f"token index {index} is not below {n}")
        old = PyList_GET_ITEM(out, h + index)
        Py_INCREF(<object>text)
        PyList_SET_ITEM(out, h + index, <object>text)
        Py_XDECREF(old)
    return 0


def token_strings(list strings, array.array ids, dict odd=None) -> list:
    """``[strings[id] for id in ids]`` of an ``array('I')``, but ``odd[i]``
    at each index ``i`` of ``odd`` (``{index: string}``, a walk's fourth item)."""
    _check_ids(strings, ids)
    cdef unsigned int* at = ids.data.as_uints
    cdef list out = [<object>PyList_GET_ITEM(strings, at[i]) for i in range(len(ids))]
    if odd:
        _respell(out, 0, len(out), odd)
    return out


@cython.final  # (its cpdef methods called from C without a look for an override)
cdef class WalkedFields:
    """What each field of a walked encoding is made from: the walk's arrays
    (``ids``; ``offsets``, start and end of each token in turn; ``words``),
    or the same in one block of its own (:func:`walked_block`, a batch's),
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
    # or, made by walked_block: n tokens' ids, offsets and words in one
    # block (no array, and no tuple of them, for each text of a batch)
    cdef uint32_t* block
    cdef Py_ssize_t n
    cdef list strings
    cdef dict odd
    cdef readonly dict kept  # name -> field; None until one is kept
    cdef int type_id
    cdef object word
    cdef SingleWrap wrap

    def __init__(self, array.array ids not None, array.array offsets not None,
                 array.array words not None, list strings not None, int type_id, word,
                 SingleWrap wrap, dict odd):
        _fill(self, ids, offsets, words, strings, type_id, word, wrap, odd)

    def __dealloc__(self):
        free(self.block)

    def __len__(self):
        return 3

    def __getitem__(self, Py_ssize_t k):
        # (ids, offsets, words) as arrays, as the walk's encode gives them:
        # a batch's block read by a caller that takes the walk's arrays
        cdef Py_ssize_t n = self._count()
        if k == 0:
            return _array_of(_U32, <const int32_t*>self._id_data(), n)
        if k == 1:
            return _array_of(_I32, self._offset_data(), 2 * n)
        if k == 2:
            return _array_of(_I32, self._word_data(), n)
        raise IndexError("walked fields are (ids, offsets, words)")

    def __eq__(self, other):
        # as the walk's (ids, offsets, words) it stands for
        if isinstance(other, (tuple, WalkedFields)):
            return tuple(self) == tuple(other)
        return NotImplemented

    cpdef object read(self, int field):
        """Field number ``field`` (in :data:`FIELDS`' order): the kept one,
        else a new copy."""
        if self.kept is not None:
            value = self.kept.get(FIELDS[field])
            if value is not None:
                return value
        return self.make(field)

    def keep(self, str name, value):
        """Keep ``value`` as the field ``name``: reading gives it from now on
        (the caller tracks the encoding: see the module notes)."""
        if self.kept is None:
            self.kept = {}
            _track(self)
        self.kept[name] = value

    def keep_all(self):
        """Keep every field not kept yet (a method is about to change them in place)."""
        for number, name in enumerate(FIELDS):
            if self.kept is None or name not in self.kept:
                self.keep(name, self.make(number))

    cdef inline list _framed(self, int field, Py_ssize_t n):
        # the wrapping's list of field around n unset items (see _around)
        if self.wrap is None:
            return PyList_New(n)
        return _around(<list><object>PyTuple_GET_ITEM(self.wrap.heads, field), n,
                       <list><object>PyTuple_GET_ITEM(self.wrap.tails, field))

    cdef inline Py_ssize_t _start(self) noexcept:
        # where the walk's tokens start, past the wrapping's head
        return 0 if self.wrap is None else self.wrap.lead

    cdef inline Py_ssize_t _count(self) noexcept:
        # how many tokens the walk gave (an array's size, its items)
        return self.n if self.block != NULL else Py_SIZE(self.ids)

    cdef inline const uint32_t* _id_data(self) noexcept:
        return self.block if self.block != NULL else <const uint32_t*>self.ids.data.as_uints

    cdef inline const int32_t* _offset_data(self) noexcept:
        if self.block != NULL:
            return <const int32_t*>(self.block + self.n)
        return <const int32_t*>self.offsets.data.as_ints

    cdef inline const int32_t* _word_data(self) noexcept:
        if self.block != NULL:
            return <const int32_t*>(self.block + 3 * self.n)
        return <const int32_t*>self.words.data.as_ints

    cdef list _repeated(self, int field, object value):
        cdef Py_ssize_t n = self._count(), h = self._start(), i
        cdef list out = self._framed(field, n)
        for i in range(n):
            _set(out, h + i, value)
        return out

    cdef list _ids(self):
        cdef Py_ssize_t n = self._count(), h = self._start(), i
        cdef const uint32_t* at = self._id_data()
        cdef list out = self._framed(IDS, n)
        for i in range(n):
            _set(out, h + i, _id_int(at[i]))
        return out

    cdef list _tokens(self):
        cdef Py_ssize_t n = self._count(), h = self._start(), i
        cdef size_t size = len(self.strings)
        cdef const uint32_t* at = self._id_data()
        cdef list out = self._framed(TOKENS, n)
        for i in range(n):
            if at[i] >= size:
                raise IndexError(f"token id {at[i]} has no string")
            _set(out, h + i, <object>PyList_GET_ITEM(self.strings, at[i]))
        if self.odd:
            _respell(out, h, n, self.odd)
        return out

    cdef list _offsets(self):
        cdef Py_ssize_t n = self._count(), h = self._start()
        return _set_pairs(self._framed(OFFSETS, n), h, self._offset_data(), n)

    cdef list _word_ids(self):
        if self.word is not None:
            return self._repeated(WORD_IDS, self.word)
        cdef Py_ssize_t n = self._count(), h = self._start(), i
        cdef const int32_t* at = self._word_data()
        cdef list out = self._framed(WORD_IDS, n)
        for i in range(n):
            _set(out, h + i, _word_int(at[i]))
        return out

    cpdef object make(self, int field):
        """A new copy of field number ``field``, from the walk."""
        cdef Py_ssize_t n = self._count(), start
        if field == IDS:
            return self._ids()
        if field == TYPE_IDS:
            return self._repeated(TYPE_IDS, self.type_id)
        if field == TOKENS:
            return self._tokens()
        if field == OFFSETS:
            return self._offsets()
        if field == WORD_IDS:
            return self._word_ids()
        if field == SPECIAL_TOKENS_MASK:
            return self._repeated(SPECIAL_TOKENS_MASK, 0)
        if field == ATTENTION_MASK:
            if self.wrap is not None:
                n += self.wrap.added
            return [1] * n
        if field == OVERFLOWING:
            return []
        if field == SEQUENCE_RANGES:
            if self.wrap is None:
                return {}
            start = self._start()
            return {0: (start, start + n)}
        raise IndexError(f"no field number {field}")


cdef inline void _fill(WalkedFields fields, array.array ids, array.array offsets,
                       array.array words, list strings, int type_id, object word,
                       SingleWrap wrap, dict odd) noexcept:
    fields.ids, fields.offsets, fields.words = ids, offsets, words
    # an array holds no object (see the module notes)
    _untrack(ids)
    _untrack(offsets)
    _untrack(words)
    _fill_rest(fields, strings, type_id, word, wrap, odd)


cdef inline void _fill_rest(WalkedFields fields, list strings, int type_id, object word,
                            SingleWrap wrap, dict odd) noexcept:
    fields.strings = strings
    fields.type_id = type_id if wrap is None else wrap.type_id
    fields.word, fields.wrap, fields.odd = word, wrap, odd


cdef array.array _U32 = array.array("I")
cdef array.array _I32 = array.array("i")


cdef array.array _array_of(array.array kind, const int32_t* data, Py_ssize_t n):
    cdef array.array out = array.clone(kind, n, False)
    memcpy(out.data.as_ints, data, n * sizeof(int32_t))
    return out


cdef object walked_block(size_t n, uint32_t** ids, int32_t** offsets, int32_t** words):
    # WalkedFields with a block for n tokens, whose ids, offsets (2n) and
    # words the caller writes at the places given, for _new_walked to take
    # as it would take a walk's arrays
    cdef WalkedFields fields = WalkedFields.__new__(WalkedFields)
    fields.block = <uint32_t*>malloc((4 * n if n else 1) * sizeof(uint32_t))
    if fields.block == NULL:
        raise MemoryError()
    fields.n = <Py_ssize_t>n
    ids[0] = fields.block
    offsets[0] = <int32_t*>(fields.block + n)
    words[0] = <int32_t*>(fields.block + 3 * n)
    _untrack(fields)
    return fields


cdef Py_ssize_t _walked_at(object cls) except -1:
    # where an instance of cls holds its _walked slot, or 0 where cls has none
    fields = getattr(cls, "_walked", None)
    if type(fields) is not MemberDescriptorType or not issubclass(cls, fields.__objclass__):
        return 0
    return (<PyMemberDescrObject*><PyObject*>fields).d_member.offset


cdef object _new_walked(object cls, object found, list strings, int type_id, object word,
                        SingleWrap wrap, Py_ssize_t at=0):
    # a new cls over WalkedFields of a walk's found (ids, offsets, words[, odd]),
    # made without a Python-level __new__ or __init__ call; at: where it
    # holds its _walked slot (_walked_at), stored there directly (setting
    # the attribute looked the slot up: a tenth of making an encoding)
    cdef WalkedFields fields
    cdef PyObject** slot
    if type(found) is WalkedFields and (<WalkedFields>found).strings is None:
        # walked_block's, taken as they are (each is made for one encoding)
        fields = <WalkedFields>found
        _fill_rest(fields, strings, type_id, word, wrap, None)
    else:
        fields = WalkedFields.__new__(WalkedFields)
        _fill(fields, found[0], found[1], found[2], strings, type_id, word, wrap,
              found[3] if len(found) > 3 else None)
    encoding = (<PyTypeObject*>cls).tp_new(<type>cls, <PyObject*>_NO_ARGS, NULL)
    if at:
        # (a new object's slot is empty: nothing to release)
        slot = <PyObject**>(<char*><PyObject*>encoding + at)
        Py_INCREF(fields)
        slot[0] = <PyObject*>fields
    else:
        encoding._walked = fields
    # untracked until a field is kept (see the module notes)
    _untrack(fields)
    _untrack(encoding)
    return encoding


def keep_fields(encoding):
    """Keep every field of the walked ``encoding`` not kept yet (a method is
    about to change them in place), the encoding tracked again.

    >>> import gc
    >>> from array import array
    >>> from fasttok.post_processors.encoding import Encoding
    >>> e = Encoding.walked(array("I", [1]), array("i", [0, 1]), array("i", [0]), ["a", "b"])
    >>> gc.is_tracked(e), keep_fields(e), gc.is_tracked(e), e._walked.kept["tokens"]
    (False, None, True, ['b'])
    """
    _track(encoding)
    (<WalkedFields?>encoding._walked).keep_all()


def walked_encoding(cls, array.array ids not None, array.array offsets not None,
                    array.array words not None, list strings not None, int type_id, word,
                    SingleWrap wrap, dict odd):
    """A new ``cls`` (the walked Encoding class) over :class:`WalkedFields` of the arguments."""
    return _new_walked(cls, (ids, offsets, words, odd), strings, type_id, word, wrap)


cdef class WalkedField:
    """Field ``name`` of walked encodings, the data descriptor their class
    has for it: reading makes the field (or gives the one kept), setting
    keeps the value given. ``fields`` is the class's ``_walked`` slot (its
    member descriptor), where an encoding holds its :class:`WalkedFields`:
    an encoding of that very class is read there directly (looking the
    attribute up was a fifth of reading a short field).

    >>> from array import array
    >>> from fasttok.post_processors.encoding import Encoding, WalkedEncoding
    >>> type(WalkedEncoding.offsets).__name__, WalkedEncoding.offsets.name
    ('WalkedField', 'offsets')
    >>> Encoding.walked(array("I", [1]), array("i", [0, 2]), array("i", [0]), ["a", "b"]).tokens
    ['b']
    """

    cdef readonly str name
    cdef int number
    cdef type owner  # the class whose encodings hold their fields at `at`
    cdef Py_ssize_t at

    def __init__(self, str name not None, fields=None):
        self.name, self.number = name, FIELDS.index(name)
        if fields is not None:
            if type(fields) is not MemberDescriptorType:
                raise TypeError(f"fields must be a slot's member descriptor, not {fields!r}")
            self.owner = fields.__objclass__
            self.at = (<PyMemberDescrObject*><PyObject*>fields).d_member.offset

    cdef inline WalkedFields _fields(self, encoding):
        cdef PyObject* found
        if type(encoding) is self.owner:
            found = (<PyObject**>(<char*><PyObject*>encoding + self.at))[0]
            if found != NULL:
                return <WalkedFields?><object>found
        return <WalkedFields?>encoding._walked

    def __get__(self, encoding, owner):
        if encoding is None:
            return self
        cdef WalkedFields fields = self._fields(encoding)
        if fields.kept is None:
            return fields.make(self.number)
        return fields.read(self.number)

    def __set__(self, encoding, value):
        _track(encoding)
        self._fields(encoding).keep(self.name, value)


cdef class EncodingMaker:
    """The encodings of one input each, as a pipeline set so makes them from
    its walk: ``cls`` (the walked Encoding class) over the walk's arrays
    with ``strings[id]`` as token strings and ``wrap`` (a
    :class:`SingleWrap`, or ``None``) around them; ``walk_encoder(allowed)``
    is the walk's ``encoder``: ``(call, argument)``, ``call(text, argument)``
    its ``encode(text, allowed)``, bound again only when ``allowed`` is
    another object than the last call's. Only for a pipeline whose
    truncation and padding leave one input alone.

    >>> from array import array
    >>> from fasttok.post_processors.encoding import WalkedEncoding
    >>> walk = lambda text, allowed: None if text == "?" else (
    ...     array("I", [1]), array("i", [0, len(text)]), array("i", [0]))
    >>> maker = EncodingMaker(WalkedEncoding, ["a", "b"], None, lambda allowed: (walk, allowed))
    >>> maker.encode("xy", None).offsets, maker.encode("?", None)
    ([(0, 2)], None)
    >>> first, second = maker.make_many([walk("x", None), None], ["x", "?"], len)
    >>> first.tokens, second
    (['b'], 1)
    """

    cdef object cls, walk_encoder
    cdef list strings
    cdef SingleWrap wrap
    cdef Py_ssize_t at  # where a cls holds its _walked slot (_walked_at)
    # the walk's entry for the last allowed (bound on first use: a walk's
    # masks are made when first asked)
    cdef object allowed, call, argument

    def __init__(self, cls not None, list strings not None, SingleWrap wrap,
                 walk_encoder not None):
        self.cls, self.strings, self.wrap, self.walk_encoder = cls, strings, wrap, walk_encoder
        self.at = _walked_at(cls)

    def encode(self, text, allowed):
        """The encoding of ``text`` (``allowed``: the added token ids matched),
        or ``None`` where the walk declines it."""
        return self._encode(text, allowed)

    cdef object _encode(self, text, allowed):
        if self.call is None or allowed is not self.allowed:
            self.call, self.argument = self.walk_encoder(allowed)
            self.allowed = allowed
        found = self.call(text, self.argument)
        if found is None:
            return None
        return _new_walked(self.cls, found, self.strings, 0, None, self.wrap, self.at)

    def make_many(self, list found not None, list texts not None, declined not None):
        """The encoding of each walk's answer in ``found`` (of ``texts``, in
        order); ``declined(text)`` gives the one the walk declined."""
        cdef Py_ssize_t i, n = len(found)
        if len(texts) != n:
            raise ValueError(f"{n} walked texts for {len(texts)} texts")
        cdef list out = PyList_New(n)
        for i in range(n):
            item = found[i]
            if item is None:
                _set(out, i, declined(texts[i]))
            else:
                _set(out, i, _new_walked(self.cls, item, self.strings, 0, None, self.wrap,
                                         self.at))
        return out


# what tokenizers says of text without UTF-8, by where it stands: a text,
# a batch's input, the words of a pre-tokenized input
_TEXT = "TextInputSequence must be str"
_BATCH_TEXT = ("TextEncodeInput must be Union[TextInputSequence, "
               "Tuple[InputSequence, InputSequence]]")
_WORDS = "PreTokenizedInputSequence must be Union[List[str], Tuple[str]]"


cdef enum:
    # lists and tuples looked into below the value refuse_surrogates is
    # given: a batch's input, its pair, a pair's words. Deeper is no input
    # of any shape (the pipeline's type check refuses it), and a list
    # holding itself would recurse until the C stack overflowed
    INPUT_DEPTH = 3


cdef int _refuse_surrogates(object value, str message, int depth) except -1:
    cdef object item
    if isinstance(value, str):
        if has_surrogate(value):
            raise TypeError(message)
    elif depth > 0 and isinstance(value, (list, tuple)):
        for item in value:
            _refuse_surrogates(item, message, depth - 1)
    return 0


def refuse_surrogates(value, bint is_pretokenized=False, bint batch=False):
    """Refuse, with ``tokenizers``' ``TypeError``, an input that is a ``str``
    without UTF-8 (holding a surrogate code point) or a list or tuple
    holding one (as deep as an input's words lie): ``value`` is one
    input, or with ``batch`` a list of them. A scan of the code points in
    place (encoding the text to UTF-8 made a copy of it).

    >>> refuse_surrogates(["a", ("b", 3)], batch=True) is None
    True
    >>> refuse_surrogates(["a", ("b", "\\ud83d\\ude00")], batch=True)
    Traceback (most recent call last):
    TypeError: TextInputSequence must be str
    """
    if is_pretokenized:
        _refuse_surrogates(value, _WORDS, INPUT_DEPTH)
    elif not batch:
        _refuse_surrogates(value, _TEXT, INPUT_DEPTH)
    else:
        for item in value:
            _refuse_surrogates(item, _BATCH_TEXT if isinstance(item, str) else _TEXT, INPUT_DEPTH)


def encode_single(pipeline, text, allowed, add_special_tokens):
    """``HFPipeline.encode_single``: one ``str`` (``allowed``: the added
    token ids matched, ``None`` for all), post-processed, walked and wrapped
    by the pipeline's :class:`EncodingMaker` where it has one.

    >>> from fasttok.hf import Tokenizer
    >>> tok = Tokenizer.from_str('{"model": {"type": "WordLevel", "vocab": {"a": 0},'
    ...                          ' "unk_token": "a"}}')
    >>> encode_single(tok._pipeline, "a", None, True).ids
    [0]
    """
    return _encode_single(pipeline, text, allowed, add_special_tokens)


cdef object _encode_single(pipeline, text, allowed, add_special_tokens):
    # the maker is looked up at each call: the pipeline drops its makers
    # when its truncation, padding or added tokens change
    maker = pipeline._makers[add_special_tokens]
    if maker is None:
        return pipeline._encode_single(text, allowed, add_special_tokens)
    encoding = (<EncodingMaker>maker)._encode(text, allowed)
    if encoding is None:
        return pipeline._encode_single(text, allowed, add_special_tokens, None)
    return encoding


def tokenizer_encode(self, sequence, pair=None, is_pretokenized=False, add_special_tokens=True):
    """One sequence (or a pair) as an ``Encoding``: ``fasttok.hf.Tokenizer.encode``.

    The common call (one ``str``, the flags ``bool``) is checked here and
    goes to the pipeline's walk, with no Python frame between (a line's
    Python layers cost a third as much as its walk); any other is
    ``self._encode_any``'s. Text with lone surrogates is refused as
    ``tokenizers`` refuses it:

    >>> from fasttok.hf import Tokenizer
    >>> tok = Tokenizer.from_str('{"model": {"type": "WordLevel", "vocab": {"a": 0},'
    ...                          ' "unk_token": "a"}}')
    >>> tok.encode("a").ids, tok.encode("a", "a").ids
    ([0], [0, 0])
    >>> tok.encode("x\\ud800")
    Traceback (most recent call last):
    TypeError: TextInputSequence must be str
    """
    if type(sequence) is str and pair is None and is_pretokenized is False \
            and type(add_special_tokens) is bool:
        if has_surrogate(sequence):
            raise TypeError(_TEXT)
        return _encode_single(self._pipeline, sequence, self._allowed, add_special_tokens)
    return self._encode_any(sequence, pair, is_pretokenized, add_special_tokens)


# named as the method it is: a bound method pickles as its instance and
# name (a process pool's map of tok.encode)
tokenizer_encode.__name__ = "encode"
tokenizer_encode.__qualname__ = "Tokenizer.encode"


# Performance notes
# -----------------
# Gemma 3, the first 5,000 lines of en.txt, one encode a line, every field
# read once (15.3 tokens a line; wall clock, best of 7, shared 2-core VM):
# reading a field through a ``property`` over a Python-level ``read_<field>``
# with ``head + middle + tail`` lists cost ids 0.37, tokens 0.29, offsets
# 0.54, attention mask 0.10, word ids 0.28 us (load 0.3); through
# WalkedField and one-allocation lists, offsets 0.14 and word ids 0.15
# (load 1.3; the offsets' pairs shared). The ints of ids shared: ~1.5k
# instructions a line fewer (callgrind). A line's encode outside the walk
# (Tokenizer.encode, the pipeline, walked_encoding's 9 arguments, the
# encoding's __new__ and the WalkedFields' __init__) was ~0.8 us, now one
# EncodingMaker.encode call, ~1.1k instructions past the walk's.
# Not done: WalkedEncoding as an extension type holding the arrays itself
# (one object a line, not two) cannot derive from Encoding, a Python class
# with __slots__ (layout conflict); untracking the lists from the collector
# gains nothing where they are freed at once (its passes come from
# allocation counts).
#
# A batch (HFPipeline.encode_batch), Llama 3, the first 5,000 lines of
# en.txt, every field of every encoding read once, one thread (callgrind,
# the call and the reads): 124.5M instructions, of which the collector's
# passes ~21M (gc_collect_main, list/tuple/subtype traverse: the walk's
# list of results and the encodings' list, young and 5,000 long, walked at
# every pass; six tracked objects a line: three arrays, a tuple, the
# fields, the encoding). The encodings, fields and arrays left untracked
# and the collector paused for the batch: 103.7M (the walk's own share
# 29.3M -> 34.7M in between, another change). Field reads without an
# exception check a list item (_set noexcept), word ids from the shared
# ints, the token id check in the loop that reads the strings, cpdef
# calls of a final class: reads 24.7M -> 19.7M, the whole 97.4M.
# A walked encoding's fields read at its _walked slot's place (WalkedField's
# fields), not looked up by name: reads 19.7M -> 16.5M, the whole 93.5M.
#
# The drop-in per call (session 6; callgrind of bench/test_hf_drop_in_bench.py's
# cells, 5,000 lines, every field read, one thread). Llama 3 zh batch, 83.3M
# instructions: the walk 26.5M, the arrays of its results 5.2M, make_many
# 4.5M, the field reads 16.5M and freeing the lists read ~10M, the
# surrogate check (the batch's text joined, then encoded to UTF-8) and
# ByteLevelWalk.encode_many's _plain called a text; the rest the bench's
# own Python. The surrogate check as a scan of the code points
# (refuse_surrogates): 76.4M; no _plain a text where the core walks all:
# 70.1M (other helpers' walk commits landed in between: part of these
# steps may be theirs); the reads' framing and the encoding's slot stored
# directly: 67.8M.
# Llama 2 zh lines, 89.0M: Tokenizer.encode, _refuse_surrogates (a frame
# and a UTF-8 copy of each non-ASCII line, ~460 instructions) and
# HFPipeline.encode_single were three Python frames around the maker; as
# tokenizer_encode and encode_single here, 78.1M; with the reads' changes
# 75.8M. Left: a field read is ~600 instructions for a line's ~10 items
# (~100 of them the attribute lookup of a Python class's slot) and freeing
# its list ~400; releasing the GIL in the byte-level core's encode_offsets
# costs ~200 a line (1.7% of Llama 3 zh lines).
#
# A batch's texts each as one walked_block (session 7): the walks' batch
# calls (StretchWalker's and the byte-level core's) wrote three arrays and a
# tuple of them a text, each allocated, untracked and freed (~1,100
# instructions a text); one block in the WalkedFields that the encoding
# takes as it is. Callgrind, HFPipeline.encode_batch of the first 5,000
# lines on one thread, every field read: gemma3 code 78.1M -> 72.5M, zh
# 73.7M -> 68.6M; llama3 code 61.0M -> 54.9M, zh 68.2M -> 62.5M.
# A field read calls make directly when nothing is kept (llama3 zh 62.3M
# -> 61.7M); the surrogate scan of a 2-byte str four units at a time
# (shared._utf8.has_surrogate: 61.7M -> 61.4M). Seen and left: the
# bench's own Python (its _consume, ~7.6M of a 5,000-line batch cell)
# and the lists a read makes and frees (~150 + ~300 instructions a list
# past its items) are most of what is left outside the walk; tokenizers'
# reads of the same cell are ~72M (its tokens alone 37M: a new str a token).
