"""``Encoding.encode``, compiled: its two common calls reach the model's
compiled entry with no Python frame on the way.

A call of a ``str`` with ``disallowed_special="all"``, no ``sample`` and no
``add_special_tokens`` is common in one of two forms: everything allowed
(how ``tokenizers`` matches added tokens) or ``allowed_special`` left at its
default. Each goes to the pair the encoding bound once from its model
(:meth:`~fasttok.models.interface.Model.encoder`): ``call(text, argument)``,
a compiled walk or core with its allowed set or mask. The default form first
asks the model's ``find_special``, bound with the mask of every special,
whether one occurs (``None`` in its place: the encoding has none). What
either gives back as ``None`` (a text the walk declines), a special found,
and every other call (a text that is not a ``str`` among them, refused
there with its message) go to the encoding's ``_encode_general``, the Python
path that checks, raises and encodes exactly as it always has.

Why compiled: a Python method taking keyword arguments costs ~0.12 us a call
on CPython 3.11 before its first line, against ~0.05 us here (the frame
with its keyword binding, then the attribute reads of its body), and a
short line's whole walk is 0.7-1.5 us.

Why an object (:class:`EncodeEntry`, what ``enc.encode`` gives through the
class's :class:`EncodeMethod`, as a function gives a bound method): it holds
the bound pairs in C fields, so a call reads no attribute of the encoding,
and CPython calls it with the argument vector as given
(``tp_vectorcall_offset``, set here since Cython declares no such slot). A
bound method of a function costs a method object's call on top, and a call
with a keyword dict (``functools.partial(enc.encode,
allowed_special="all")``) had CPython copy the dict, unpack it and call
through both. It is made at each attribute read, not kept on the instance:
an encoding holding an object that holds it would be freed only by the
cycle collector. Measurements at the end.

>>> from fasttok.core import Encoding
>>> from fasttok.vocab import Vocabulary
>>> enc = Encoding.from_vocabulary(Vocabulary(
...     name="b", model="byte_bpe", pattern=".", tokens=tuple(bytes([i]) for i in range(256)),
...     special_tokens={"<e>": 256}))
>>> encode(enc, "a<e>", allowed_special="all"), encode(enc, "a<e>", disallowed_special=())
([97, 256], [97, 60, 101, 62])
"""

import weakref

cimport cython
from cpython.object cimport PyObject
from cpython.pycapsule cimport PyCapsule_GetPointer
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE

from fasttok.errors import FasttokError


cdef extern from "Python.h":
    ctypedef PyObject* (*vectorcallfunc)(PyObject* callable, PyObject* const* args,
                                         size_t nargsf, PyObject* kwnames)
    Py_ssize_t PyVectorcall_NARGS(size_t nargsf)
    object PyObject_Vectorcall(object callable, PyObject* const* args, size_t nargsf,
                               PyObject* kwnames)
    object PyObject_GenericGetDict(object o, void* context)
    unsigned long Py_TPFLAGS_HAVE_VECTORCALL
    ctypedef struct TypeSlots "PyTypeObject":
        Py_ssize_t tp_vectorcall_offset
        unsigned long tp_flags


#: encode's default ``allowed_special``, known by identity: the default call
#: takes the bound entry without building or hashing a set
NONE_ALLOWED = frozenset()


@cython.final
@cython.freelist(8)
cdef class EncodeEntry:
    """``Encoding.encode`` of one encoding, holding the entries its model
    bound for the two common calls (see the module notes): what
    ``enc.encode`` is, unless the encoding's class defines its own.

    >>> from fasttok.core import Encoding
    >>> from fasttok.vocab import Vocabulary
    >>> enc = Encoding.from_vocabulary(Vocabulary(
    ...     name="b", model="byte_bpe", pattern=".", tokens=tuple(bytes([i]) for i in range(256)),
    ...     special_tokens={"<e>": 256}))
    >>> type(enc.encode).__name__, enc.encode("a<e>", allowed_special="all")
    ('EncodeEntry', [97, 256])
    """

    # first: what CPython calls for a vector of arguments (see _entry_vectorcall)
    cdef vectorcallfunc vectorcall
    cdef readonly object encoding
    # the encoding's _entries: the model's (call, argument) pairs for
    # everything allowed and for the default call, and the default call's
    # search for a disallowed special and its mask (None: the encoding has
    # no special); read on the first call, bound then if the encoding has
    # not yet (a tokenizer.json's walk is built on its first text)
    cdef tuple entries

    def __cinit__(self):
        self.vectorcall = <vectorcallfunc><void*>_entry_vectorcall

    def __init__(self, encoding not None):
        self.encoding = encoding

    def __call__(self, *args, **kwargs):
        """The encoding's ``encode`` (see :meth:`fasttok.Encoding.encode`)."""
        # CPython calls _entry_vectorcall; this is for callers of tp_call
        return encode(self.encoding, *args, **kwargs)

    def __reduce__(self):
        # pickled as a bound method is, the attribute read again from its
        # encoding: a process pool's map of enc.encode pickles it
        return getattr, (self.encoding, "encode")

    cdef object encode(self, text, allowed_special, disallowed_special, add_special_tokens,
                       sample, alpha, nbest_size, seed):
        cdef object ids
        cdef tuple entries
        if type(text) is str and disallowed_special == "all" and not sample \
                and not add_special_tokens:
            entries = self.entries
            if entries is None:
                entries = self.entries = self.encoding._entries or self.encoding._bind_entries()
            # the default first: comparing a frozenset with "all" takes two
            # refused comparisons
            if allowed_special is NONE_ALLOWED:
                if entries[4] is None or entries[4](text, entries[5]) < 0:
                    ids = entries[2](text, entries[3])
                    if ids is not None:
                        return ids
            elif allowed_special == "all":
                ids = entries[0](text, entries[1])
                if ids is not None:
                    return ids
        return self.encoding._encode_general(text, allowed_special, disallowed_special,
                                             add_special_tokens, sample, alpha, nbest_size, seed)


cdef EncodeEntry _entry_of(encoding):
    # EncodeEntry(encoding) without the call's argument tuple, holding the
    # encoding's entries if it has bound them, read from its __dict__ (the
    # attribute read was ~200 instructions a call: the class's _entries
    # found first, then the instance's)
    cdef EncodeEntry entry = EncodeEntry.__new__(EncodeEntry)
    entry.encoding = encoding
    entry.entries = (<dict>PyObject_GenericGetDict(encoding, NULL)).get("_entries")
    return entry


@cython.final
cdef class EncodeMethod:
    """What ``Encoding.encode`` is: read on an encoding, an
    :class:`EncodeEntry` of it (as a function gives a bound method); read
    on the class, the function :func:`encode`.

    >>> from fasttok import _encode_entry
    >>> from fasttok.core import Encoding
    >>> Encoding.encode is _encode_entry.encode
    True
    """

    def __get__(self, instance, owner):
        if instance is None:
            return encode
        return _entry_of(instance)


cdef object _entry_vectorcall(object entry, PyObject* const* args, size_t nargsf,
                              PyObject* kwnames):
    # EncodeEntry called with a vector of arguments (a direct call: no tuple
    # and no dict made, as tp_call would need): a text alone or with
    # allowed_special straight to the entry; any other call through the
    # module's encode, which checks its arguments and takes the general path
    cdef Py_ssize_t i, nargs = PyVectorcall_NARGS(nargsf)
    cdef Py_ssize_t n = 0 if kwnames is NULL else PyTuple_GET_SIZE(<object>kwnames)
    if nargs == 1 and (n == 0 or n == 1 and
                       <object>PyTuple_GET_ITEM(<object>kwnames, 0) == "allowed_special"):
        return (<EncodeEntry>entry).encode(<object>args[0], <object>args[1] if n else NONE_ALLOWED,
                                           "all", False, False, 0.1, -1, None)
    given = tuple([<object>args[i] for i in range(nargs)])
    keywords = {<object>PyTuple_GET_ITEM(<object>kwnames, i): <object>args[nargs + i]
                for i in range(n)}
    return encode((<EncodeEntry>entry).encoding, *given, **keywords)


# A model's compiled call of one str (the C function its text_call gives)
ctypedef object (*TextCall)(object model, object text)


@cython.final
cdef class BoundEntry:
    """A model's bound method set on its encoding (``enc.encode_ordinary``):
    a call is the method's own vector call, with no Python frame, or, for a
    ``str`` alone when the model gives one (its ``text_call(name)``), its C
    function, with no call layer between (the method object's, the
    function's, its argument parsing: ~100 instructions of a one-line
    call's ~4,700); pickled, it is the encoding's attribute read again, as
    a bound method of the encoding pickles (the compiled model behind it
    does not). It holds the encoding by a weak reference: the encoding
    holds it, and a cycle would leave a dropped encoding to the collector.

    >>> from fasttok.core import Encoding
    >>> from fasttok.vocab import Vocabulary
    >>> enc = Encoding.from_vocabulary(Vocabulary(
    ...     name="b", model="byte_bpe", pattern=".", tokens=tuple(bytes([i]) for i in range(256)),
    ...     special_tokens={"<e>": 256}))
    >>> type(enc.encode_ordinary).__name__, enc.encode_ordinary("a<e>")
    ('BoundEntry', [97, 60, 101, 62])
    """

    # first: what CPython calls for a vector of arguments (_bound_vectorcall)
    cdef vectorcallfunc vectorcall
    cdef readonly object call
    cdef object encoding
    cdef str name
    # the model's C call of a str and the model (call's __self__), or NULL
    cdef TextCall text_call
    cdef object model

    def __cinit__(self):
        self.vectorcall = <vectorcallfunc><void*>_bound_vectorcall

    def __init__(self, call not None, encoding not None, str name not None):
        self.call = call
        self.encoding = weakref.ref(encoding)
        self.name = name
        model = getattr(call, "__self__", None)
        text_call = getattr(model, "text_call", None)
        capsule = text_call(name) if getattr(call, "__name__", None) == name \
            and text_call is not None else None
        if capsule is not None:
            self.model = model
            self.text_call = <TextCall>PyCapsule_GetPointer(capsule, "fasttok.text_call")

    @property
    def compiled(self):
        """Whether a ``str`` alone goes to the model's C call (see the class).

        >>> from fasttok.core import Encoding
        >>> from fasttok.vocab import Vocabulary
        >>> enc = Encoding.from_vocabulary(Vocabulary(
        ...     name="b", model="byte_bpe", pattern=".", tokens=tuple(bytes([i]) for i in range(256))))
        >>> enc.encode_ordinary.compiled, BoundEntry(len, enc, "len").compiled
        (True, False)
        """
        return self.text_call != NULL

    def __call__(self, *args, **kwargs):
        """The bound method (for callers of tp_call; CPython calls _bound_vectorcall)."""
        return self.call(*args, **kwargs)

    def __reduce__(self):
        encoding = self.encoding()
        if encoding is None:
            raise FasttokError(f"the encoding of this {self.name} is gone: pickle "
                               f"enc.{self.name} while enc is alive")
        return getattr, (encoding, self.name)


cdef object _bound_vectorcall(object entry, PyObject* const* args, size_t nargsf,
                              PyObject* kwnames):
    cdef BoundEntry bound = <BoundEntry>entry
    if bound.text_call != NULL and kwnames is NULL and PyVectorcall_NARGS(nargsf) == 1 \
            and type(<object>args[0]) is str:
        return bound.text_call(bound.model, <object>args[0])
    return PyObject_Vectorcall(bound.call, args, nargsf, kwnames)


cdef _enable_vectorcall():
    # CPython finds a vectorcall function at tp_vectorcall_offset in each
    # instance; Cython declares no such slot for a class, so it is set here
    cdef EncodeEntry probe = EncodeEntry.__new__(EncodeEntry)
    cdef BoundEntry bound = BoundEntry.__new__(BoundEntry)
    cdef TypeSlots* slots = <TypeSlots*>EncodeEntry
    slots.tp_vectorcall_offset = <char*>&probe.vectorcall - <char*><PyObject*>probe
    slots.tp_flags |= Py_TPFLAGS_HAVE_VECTORCALL
    slots = <TypeSlots*>BoundEntry
    slots.tp_vectorcall_offset = <char*>&bound.vectorcall - <char*><PyObject*>bound
    slots.tp_flags |= Py_TPFLAGS_HAVE_VECTORCALL


_enable_vectorcall()


def encode(self, text, *, allowed_special=NONE_ALLOWED, disallowed_special="all",
           add_special_tokens=False, sample=False, alpha=0.1, nbest_size=-1, seed=None):
    """Encode ``text`` to token ids, with tiktoken's special-token rules.

    Special token strings are errors unless allowed (``allowed_special``:
    a set, or ``"all"``) or explicitly not disallowed
    (``disallowed_special=()`` encodes them as plain text). When two
    allowed specials start at the same place, the longer one wins.
    ``add_special_tokens=True`` adds the BOS/EOS (or CLS/SEP) ids the
    vocabulary asks for (GGUF files); tiktoken encodings have none.
    ``sample=True`` draws one segmentation at random (subword
    regularization), ``seed`` for a repeatable draw: for Unigram models
    as sentencepiece samples (``alpha``, ``nbest_size``: -1 for the whole
    lattice; see :func:`fasttok.formats.sentencepiece.sample_encode`), for BPE models
    BPE-dropout, each merge skipped with probability ``alpha`` (byte-level
    BPE as Hugging Face tokenizers' ``dropout``, SentencePiece BPE as
    sentencepiece's). WordPiece cannot sample and says so.

    >>> import fasttok
    >>> enc = fasttok.get_encoding("gpt2")                  # doctest: +SKIP
    >>> enc.encode("hi<|endoftext|>", allowed_special="all")  # doctest: +SKIP
    [5303, 50256]
    """
    return _entry_of(self).encode(text, allowed_special, disallowed_special, add_special_tokens,
                                  sample, alpha, nbest_size, seed)


# Performance notes
#
# Callgrind, llama3 tokenizer.json, one call per line of the first 2,000
# lines of en.txt, steady (instructions a line):
#
#   call                                        function   entry on the   entry made
#                                                          instance       at each read
#   partial(enc.encode, allowed_special="all")  8,297      7,607          -
#   enc.encode(line, allowed_special="all")     7,668      7,243          -
#   (the walk then, CoreBPE.encode called directly: ~6,670)
#   after the hot table of ab01497 (walk ~5,900):
#   partial(enc.encode, allowed_special="all")  -          6,725          6,733
#   enc.encode(line, allowed_special="all")     -          6,364          6,840
#   e = enc.encode; e(line)  (the default call) -          6,173          6,182
#
# The entry kept on the instance (enc.__dict__["encode"]) held the encoding
# in a cycle, freed only by the collector; made at each read (a freelist,
# no argument tuple, the encoding's bound tuple read on the first call) a
# direct call pays ~480 instructions for it, a partial nothing.
#
# The vector call takes only a text alone or with allowed_special itself:
# parsing every keyword there (eight locals set to their defaults, then
# compared name by name) was 182 instructions of its own a call, now 70.
#
# Tried: EncodeEntry with Cython's __call__ alone (tp_call): the partial
# 7,311, but every direct call with a keyword built a tuple and a dict
# (8,114), slower than the function it replaces.
#
# The entry made at each read takes the encoding's bound entries from its
# __dict__, not through an attribute read in its first call (which found
# the class's _entries = None first, then the instance's: ~200
# instructions). Callgrind, llama3, [enc.encode(line, allowed_special="all")
# for line in lines] over 1,000 lines of zh.txt, steady: 6,319 -> 6,235
# instructions a line (the read and the entry's making still ~270 of them,
# half of it the dict lookup; a partial of enc.encode pays CPython ~1,000
# instructions a call of its own to copy its keywords and unpack them).
#
# enc.encode_ordinary(line) to the model's C call (BoundEntry.text_call)
# instead of its bound method: callgrind, 5,000 lines a call each after a
# warm pass, o200k_base en 23.38M -> 22.87M instructions (~100 a call),
# multi 24.51M -> 24.00M; cl100k_base en 22.13M -> 21.62M. CPU time of
# every line of en.txt under load ~11 (fastest of 4 in a process, 4
# alternating processes) did not tell the two apart: 70-86 ms both ways.
