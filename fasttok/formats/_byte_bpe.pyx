"""The compiled byte-level BPE encoder: specials, pre-tokenizer, merges.

One call converts the text to UTF-8 once (CPython caches it on the str; an
ASCII str is used in place), then, with the GIL released, finds allowed
special tokens by literal search, runs the hand-written scanner over each
segment between them, merges each piece and appends ids to a growable C
buffer. The Python list is built once at the end. Nothing Python-level
happens per byte or per token.

Special tokens are found by a literal search: the set of their first bytes
filters candidate positions (``memchr`` when, as for every OpenAI encoding,
they all start with the same byte), and the candidates are looked up by
hashing the text at each special length, longest first, so when two
specials overlap the longer one wins.

Each thread keeps a pre-token cache (``fasttok/shared/ft_piece_cache.h``,
sized by ``fasttok.set_pretoken_cache``): a bounded table from a piece's
bytes, for this model, to its ids, asked before the piece is looked up or
merged, in every call and batch chunk except when sampling; its token
entries keep the short pieces the token index found to be one token, asked
before the index. Its entries never outlive their thread and never answer
for another model.

Offsets are a flag of the same walk (``encode_offsets``, ``tokenizers``'
``OffsetType``): the walk then also notes where each pre-tokenizer piece
and each special token ends (its id count and end byte), and one pass after
it gives each token its bytes (from the token table; a piece of one token
spans the piece) and turns byte spans into character spans the way
``tokenizers``' ``ByteLevel`` aligns them: each byte stands for its whole
character, so a token that starts or ends inside a character covers it.

Building a model makes no Python object per token: decoding reads the
tables' own token bytes (only the specials are copied), and the ints that
encode returns are made the first time each id is returned, then shared by
every model of the process. A per-model copy of the token bytes and a
tuple of every id's int would be 3 MB and 7 MB for o200k_base, and all but
half a millisecond of the 15 ms a model over tables read from the cache
would take to build.

Ids far apart (a rank file may rank one token 10**8 beside 256 others; a
special token may have id 2**31) would make every table by id follow the
largest id instead of the number of tokens. The model then works with
codes instead: the slots of the tables (the tokens in id order), then one
per distinct special id. Encoding turns codes into ids through an array of
one id per code as it builds the result; decoding finds a code by binary
search in the same array. When the ids are dense (``ids_are_dense``, every
real vocabulary), code and id are the same number and nothing is looked up:
the path of every real vocabulary pays nothing for sparse ids.
"""

import gc
from array import array

from cpython cimport array as carray
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.pycapsule cimport PyCapsule_GetContext, PyCapsule_New, PyCapsule_SetContext
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF

cdef enum:
    DECODE_PREFETCH = 16  # ids ahead whose int objects decode_bytes asks for
    # The hot table (CoreBPE._fill_hot): 8192 slots of 16 bytes, 128 kB, which
    # stay in the core's 1 MB L2 beside the pre-token cache; its pieces
    # have 2 to 7 bytes, so a piece, its length in the top byte, is one word.
    HOT_BITS = 13
    HOT_MAX = 7
    # the codes below this many times the slots are tried for it
    HOT_TRIED = 8
    # pieces cut, and their lookups' lines fetched, before the first of them
    # is encoded (_encode_segment): the misses of a batch then overlap
    AHEAD = 16
    # ids the one-text calls' kept buffer may hold between calls (256 KiB)
    KEPT_IDS_MAX = 1 << 16

cdef extern from "Python.h":
    void PyObject_GC_UnTrack(object op)
    PyObject** PySequence_Fast_ITEMS(object o)
    void Py_INCREF_PTR "Py_INCREF"(PyObject* o)
    void Py_DECREF_PTR "Py_DECREF"(PyObject* o)
    # a list's fields, which ids_to_list sets to hand it an array of items
    ctypedef struct ListFields "PyListObject":
        PyObject** ob_item
        Py_ssize_t allocated
    void Py_SET_SIZE(object o, Py_ssize_t size)
    void* PyMem_Malloc(size_t size)

from libc.stdint cimport INT32_MAX, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memchr, memcmp, memcpy

from fasttok.errors import FasttokError
from fasttok.post_processors.special_ids import AddSpecialIds
from fasttok.vocab import MAX_ID, ids_are_dense

from fasttok.models._bpe cimport (Dropout, IdBuffer, PairMemo, bpe_encode_piece, bpe_merge_piece,
                                  bpe_piece_whole, bpe_prefetch_whole, bpe_sample_piece, ids_free,
                                  ids_push, ids_reserve, pair_memo_if_ready, pair_memo_init,
                                  pair_memo_release)
from fasttok.post_processors._encoding_lists cimport walked_block
from fasttok.pre_tokenizers._pretokenize cimport ScanFn, scanner_by_name
from fasttok.shared._document_encoder cimport DOCUMENT_ENCODER, DocumentEncoder
from fasttok.shared._piece_cache cimport (FT_PC_PAYLOAD, FT_PC_TOKEN_MAX, ft_pc_count, ft_pc_entry,
                                          ft_pc_find, ft_pc_hash, ft_pc_ids, ft_pc_long, ft_pc_long_find,
                                          ft_pc_long_ids, ft_pc_long_put, ft_pc_open,
                                          ft_pc_prefetch, ft_pc_put, ft_pc_token_find,
                                          ft_pc_token_put, ft_pc_token_tail, piece_cache_owner,
                                          piece_cache_table)
from fasttok.shared._token_ids cimport token_id
from fasttok.shared._utf8 cimport (UTF8_ROOM, Utf8Source, Utf8Text, utf8_capacity, utf8_source,
                                    utf8_text, utf8_text_in, utf8_write)
from fasttok.shared._tables cimport (NO_TOKEN, ByteStrings, TokenTables, TokenTablesView, _head,
                       find_bytes, fill_strings, free_strings, hash_bytes, prefetch)


cdef inline uint64_t _hot_key(const uint8_t* p, size_t n) noexcept nogil:
    return _head(p, n) | (<uint64_t>n << 56)


cdef inline size_t _hot_slot(uint64_t key) noexcept nogil:
    return <size_t>((key * 0x9E3779B97F4A7C15ULL) >> (64 - HOT_BITS))


cdef inline int64_t _hot_code(const HotSlot* hot, const uint8_t* p, size_t n) noexcept nogil:
    # the code of piece p[:n] (n >= 2) from the hot table, or -1
    cdef uint64_t key
    cdef const HotSlot* slot
    if n > HOT_MAX:
        return -1
    key = _hot_key(p, n)
    slot = &hot[_hot_slot(key)]
    return slot.code if slot.key == key else -1


cdef inline int64_t _ahead(const TokenTablesView* view, const HotSlot* hot, const uint8_t* p,
                           size_t n, ft_pc_table* pieces, uint64_t owner,
                           uint64_t* h) noexcept nogil:
    # What CoreBPE._encode_segment does for piece p[:n] before its turn,
    # as its batch is cut: the one code of a byte or of a hot piece, or -1;
    # then, for a piece up to FT_PC_PAYLOAD bytes that the hot table lacks,
    # its hash in h and what its lookups will read fetched.
    cdef int64_t code
    if n == 1:
        return view.byte_ids[p[0]]
    if n > FT_PC_PAYLOAD:
        return -1
    code = _hot_code(hot, p, n)
    if code < 0 and n <= FT_PC_TOKEN_MAX:
        code = ft_pc_token_find(pieces, owner, _head(p, n), ft_pc_token_tail(p, n))
    if code < 0:
        h[0] = hash_bytes(p, n)
        bpe_prefetch_whole(view, h[0])
        ft_pc_prefetch(pieces, h[0])
    return code


cdef int _check_ids(const uint32_t* ids, size_t n, size_t n_ints) except -1:
    # NO_TOKEN (a byte without a token) must never reach the caller as an
    # id (n_ints: 1 to 2**32). The loop has no early exit, so the C compiler
    # tests four ids a step: a bulk batch's ids are all read here.
    cdef size_t i
    cdef uint32_t last = <uint32_t>(n_ints - 1)
    cdef bint bad = False
    for i in range(n):
        bad |= ids[i] > last
    if bad:
        _no_token()
    return 0


cdef int _no_token() except -1:
    raise FasttokError(
        "the text holds a byte this vocabulary has no token for (it is not byte-complete)")


# Python ints by id, made the first time an id is returned and kept for the
# life of the process, shared by every model: building a list then only
# takes references, with no int allocated per token (allocation was most of
# the cost of returning a list, and ran under the GIL, which kept
# encode_batch from scaling with threads). A tuple of every id's int, built
# with each model, would be 7 MB and 6 ms of a cached o200k_base load, most
# of it for ids a process never returns. Only the table's pointer array grows,
# when a model with more ids is built; a slot is filled under the GIL.
cdef PyObject** _ints = NULL
cdef size_t _n_ints = 0

# what the arrays that encode_offsets returns are cloned from
cdef carray.array _UINT32S = array("I")
cdef carray.array _INT32S = array("i")


cdef int _reserve_ints(size_t n) except -1:
    global _ints, _n_ints
    cdef PyObject** grown
    if n <= _n_ints:
        return 0
    grown = <PyObject**>calloc(n, sizeof(PyObject*))
    if grown == NULL:
        raise MemoryError()
    if _n_ints:
        memcpy(grown, _ints, _n_ints * sizeof(PyObject*))
    free(_ints)
    _ints = grown
    _n_ints = n
    return 0


cdef PyObject* _new_int(uint32_t i) except NULL:
    cdef object value = i
    Py_INCREF(value)  # the table's own reference
    _ints[i] = <PyObject*>value
    return _ints[i]


# The ids buffer of the one-text calls, kept from call to call: its malloc,
# growth and free were ~190 instructions of a one-line call's ~4,000. A call
# takes it and gives it back holding the GIL, so it stays taken while a
# call's walk runs without the GIL, and a call meeting it taken (another
# thread's, or a finalizer's under a collection) takes a buffer of its own.
cdef IdBuffer _kept_ids = IdBuffer(NULL, 0, 0)
cdef bint _kept_ids_taken = False


cdef inline bint _take_ids(IdBuffer* out) noexcept:
    # out empty, in the kept buffer when it is free (then True)
    global _kept_ids_taken
    out.len = 0
    if _kept_ids_taken:
        out.data = NULL
        out.cap = 0
        return False
    _kept_ids_taken = True
    out.data = _kept_ids.data
    out.cap = _kept_ids.cap
    return True


cdef inline void _give_ids(IdBuffer* out, bint kept) noexcept:
    # out back as the kept buffer (taken by _take_ids: kept), or freed; the
    # kept buffer holds at most KEPT_IDS_MAX ids between calls
    global _kept_ids_taken
    if kept:
        _kept_ids_taken = False
        if out.cap <= KEPT_IDS_MAX:
            _kept_ids.data = out.data
            _kept_ids.cap = out.cap
            return
        _kept_ids.data = NULL
        _kept_ids.cap = 0
    ids_free(out)


cdef object _encode_ordinary_call(object core, object text):
    # CoreBPE.encode_ordinary of a str (its text_call)
    cdef CoreBPE model = <CoreBPE>core
    cdef IdBuffer out
    cdef bint kept = _take_ids(&out)
    try:
        model._encode_text(<str>text, NULL, False, &out)
        return ids_to_list(out.data, out.len, model.n_ids, model.code_ids)
    finally:
        _give_ids(&out, kept)


cdef list ids_to_list(const uint32_t* ids, size_t n, size_t n_ids, const uint32_t* code_ids):
    # code_ids: the id of each code for a sparse id space (NULL: codes are ids)
    cdef list out
    cdef size_t i
    cdef PyObject** ints
    cdef PyObject** items
    cdef PyObject* item
    cdef object value
    _check_ids(ids, n, n_ids)
    if code_ids != NULL:
        # ids far apart: the shared table by id is no place for them
        out = PyList_New(n)
        for i in range(n):
            value = code_ids[ids[i]]
            Py_INCREF(value)
            PyList_SET_ITEM(out, i, value)
        return out
    # The list takes an array of items filled here: PyList_New(n) zeroes
    # its items (calloc), and each store through the list reloaded its
    # items pointer after an INCREF (~60 instructions of a one-line call).
    # Its size is the items filled when an int is made, so that the list
    # holds them if making it fails.
    out = PyList_New(0)
    if n == 0:
        return out
    items = <PyObject**>PyMem_Malloc(n * sizeof(PyObject*))
    if items == NULL:
        raise MemoryError()
    (<ListFields*><PyObject*>out).ob_item = items
    (<ListFields*><PyObject*>out).allocated = <Py_ssize_t>n
    # read after PyList_New: a collection it sets off may run a finalizer
    # that builds a larger model, which moves the table
    ints = _ints
    for i in range(n):
        item = ints[ids[i]]
        if item == NULL:
            Py_SET_SIZE(out, <Py_ssize_t>i)
            item = _new_int(ids[i])
        Py_INCREF_PTR(item)
        items[i] = item
    Py_SET_SIZE(out, <Py_ssize_t>n)
    return out


cdef int append_ids(object ids, const uint32_t* codes, size_t n, size_t n_codes,
                    const uint32_t* code_ids) except -1:
    # Appends the ids of codes[:n] to the array('I') ids (code_ids as in ids_to_list).
    cdef carray.array out = ids
    cdef size_t start = len(out)
    carray.resize_smart(out, start + n)
    return write_ids(<uint32_t*>out.data.as_uints + start, codes, n, n_codes, code_ids)


cdef int write_ids(uint32_t* dst, const uint32_t* codes, size_t n, size_t n_codes,
                   const uint32_t* code_ids) except -1:
    # The ids of codes[:n] at dst (code_ids as in ids_to_list). Codes that
    # are ids are tested as _check_ids tests them while they are copied, in
    # one pass over a bulk batch's ids instead of two (see the notes).
    cdef size_t i
    cdef uint32_t last = <uint32_t>(n_codes - 1)
    cdef uint32_t code
    cdef bint bad = False
    if code_ids == NULL:
        for i in range(n):
            code = codes[i]
            dst[i] = code
            bad |= code > last
        if bad:
            _no_token()
        return 0
    _check_ids(codes, n, n_codes)
    for i in range(n):
        dst[i] = code_ids[codes[i]]
    return 0


cdef enum:
    # A text of this many bytes takes the thread's pair memo over (clearing
    # it when another vocabulary had it); a shorter one uses it only when
    # that costs no clearing (pair_memo_if_ready).
    MEMO_MIN_BYTES = 2048
    # A shorter text is encoded with the GIL held: releasing and taking it
    # back was 330 of the 2,355 instructions of a call on one character
    # (cachegrind), and such a text's encoding takes about as long as the
    # Python call around it, which holds the GIL anyway.
    NOGIL_MIN_BYTES = 256


cdef int scratch_init(Scratch* scratch, const TokenTablesView* tables, bint take_memo,
                      ft_pc_table* pieces=NULL) except -1 nogil:
    # The pre-token cache (pieces, a table the caller owns, else the
    # thread's own, made on its first use) and the thread's pair memo for
    # one call or batch chunk (scratch_free gives the memo back).
    scratch.pieces = pieces if pieces != NULL else piece_cache_table()
    if take_memo:
        pair_memo_init(&scratch.memo, tables)
    else:
        pair_memo_if_ready(&scratch.memo, tables)
    return 0


cdef inline int _mark(IdBuffer* marks, size_t n_ids, Py_ssize_t end) except -1 nogil:
    # a piece's marks: the ids so far, the byte it ends at (texts under 2**31 bytes)
    ids_push(marks, <uint32_t>n_ids)
    ids_push(marks, <uint32_t>end)
    return 0


cdef void scratch_free(Scratch* scratch) noexcept nogil:
    scratch.pieces = NULL
    pair_memo_release(&scratch.memo)



cdef inline Py_ssize_t _find_id(const uint32_t* ids, Py_ssize_t n, uint64_t t) noexcept nogil:
    # where t is in the ascending ids[:n], or -1
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if ids[mid] < t:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < n and ids[lo] == t else -1


cdef inline int64_t decoder_code(const Decoder* d, uint64_t t) noexcept nogil:
    # The code of id t in a sparse id space, or -1 for an id that is no
    # token. Specials first: in a vocabulary never validated, a special on
    # an ordinary id decodes as the special, as it does in a dense one.
    cdef Py_ssize_t j = _find_id(d.extra_ids, d.extra.n, t)
    if j >= 0:
        return d.extra_base + j
    j = _find_id(d.slot_ids, d.ordinary.n, t)
    if j >= 0 and d.ordinary.present[j]:
        return j
    return -1


cdef inline bint decoder_span(const Decoder* d, uint64_t t, Span* span) noexcept nogil:
    # Where the bytes of code t are; False when t has none.
    cdef uint64_t u
    if t < d.ordinary.n and d.ordinary.present[t]:
        span.src = d.ordinary.data + d.ordinary.offsets[t]
        span.length = d.ordinary.offsets[t + 1] - d.ordinary.offsets[t]
        return True
    u = t - d.extra_base  # wraps past extra.n below extra_base
    if u >= d.extra.n or not d.extra.present[u]:
        return False
    span.src = d.extra.data + d.extra.offsets[u]
    span.length = d.extra.offsets[u + 1] - d.extra.offsets[u]
    return True


cdef class CoreBPE(ModelBase):
    """Encode and decode with one byte-level BPE vocabulary.

    ``tables`` holds the ordinary tokens; ``specials`` maps special token
    bytes to ids; ``scanner`` names a hand-written pre-tokenizer, and when it
    is ``None`` the ``splitter`` (a callable from a text segment to its
    pieces, e.g. a translated regex) splits the text instead, slower.

    An id decodes to ``decode_tokens[id]`` when that is given and not
    ``None``, else to its special token (the first one named, when two
    share the id), else to the tables' token.

    ``ids``, when given, is the id of each of the tables' tokens, ascending
    (the tables then hold the tokens in id order, without holes). With
    ``ids``, or with specials far past the tokens, the id space is sparse
    (see the module notes) and ``decode_tokens`` must be ``None``.

    >>> from fasttok.shared._tables import TokenTables
    >>> core = CoreBPE(TokenTables([b"a", b"b", b"ab", b" "]), {b"<e>": 4}, scanner="gpt2")
    >>> core.encode_ordinary("ab ab"), core.encode("ab<e>", b"\\x01")
    ([2, 3, 2], [2, 4])
    >>> core.decode_bytes([2, 4, 3])
    b'ab<e> '

    >>> far = CoreBPE(TokenTables([b"a", b"b", b"ab"]), {b"<e>": 2**31}, ids=[5, 6, 10**9],
    ...               scanner="gpt2")
    >>> far.encode("ab<e>b", b"\\x01"), far.decode_bytes([10**9, 2**31, 6])
    ([1000000000, 2147483648, 6], b'ab<e>b')
    """

    def __cinit__(self):
        self.special_ids = NULL
        self.special_lengths = NULL
        self.decoder.ordinary.n = 0
        self.decoder.ordinary.offsets = NULL
        self.decoder.extra.data = NULL
        self.decoder.extra.offsets = NULL
        self.decoder.extra.present = NULL
        self.decoder.slot_ids = NULL
        self.decoder.extra_ids = NULL
        self.code_ids = NULL
        self.hot = NULL

    # tiktoken's internals (_encode_bytes, encode_with_unstable) apply
    tiktoken_pieces = True
    kind = "byte-level BPE"

    def __init__(self, TokenTables tables not None, dict specials not None, decode_tokens=None,
                 *, ids=None, str scanner=None, splitter=None, bint whole_piece_lookup=True):
        cdef Py_ssize_t i, length
        if scanner is None and splitter is None:
            raise ValueError("a pre-tokenizer is needed: give scanner or splitter")
        self.post_processor = AddSpecialIds()
        self.tables = tables
        self.view = &tables.view
        self.scan = scanner_by_name(scanner) if scanner is not None else NULL
        self.splitter = splitter
        self.whole_piece_lookup = whole_piece_lookup
        self.cache_owner = piece_cache_owner()
        self._fill_hot()
        order = sorted(specials, key=lambda b: specials[b])
        self.special_order = tuple(order)
        self.n_specials = len(order)
        self.special_tables = TokenTables(list(order))
        self.special_ids = <uint32_t*>malloc((self.n_specials + 1) * sizeof(uint32_t))
        lengths = sorted({len(b) for b in order}, reverse=True)
        self.special_lengths = <Py_ssize_t*>malloc((len(lengths) + 1) * sizeof(Py_ssize_t))
        if self.special_ids == NULL or self.special_lengths == NULL:
            raise MemoryError()
        for i in range(self.n_specials):
            self.special_ids[i] = specials[order[i]]
        self.n_special_lengths = len(lengths)
        for i in range(self.n_special_lengths):
            self.special_lengths[i] = lengths[i]
        for i in range(256):
            self.special_first[i] = 0
        firsts = {b[0] for b in order if b}
        for b in firsts:
            self.special_first[b] = 1
        self.single_first_byte = next(iter(firsts)) if len(firsts) == 1 else -1
        top = max(len(tables) - 1, max(specials.values(), default=-1))
        if ids is None and (decode_tokens is not None
                            or ids_are_dense(top, len(tables) + self.n_specials)):
            self._fill_decoder(specials, decode_tokens)
            _reserve_ints(self.n_ids)
        elif decode_tokens is not None:
            raise ValueError("decode_tokens are given by id, which needs a dense id space: "
                             "leave out ids, or decode_tokens")
        else:
            self._fill_sparse(specials, ids)

    cdef int _fill_sparse(self, dict specials, ids) except -1:
        # Codes for a sparse id space: the tables' slots, then the distinct
        # special ids in ascending order (decoding gives the first name of
        # an id two specials share).
        cdef Py_ssize_t n_slots = len(self.tables), i
        cdef dict first_name = {}
        if ids is not None and len(ids) != n_slots:
            raise ValueError(f"{len(ids)} ids for {n_slots} tokens")
        for raw, sid in specials.items():
            first_name.setdefault(sid, raw)
        special_ids = sorted(first_name)
        self.n_ids = n_slots + len(special_ids)
        self.code_ids = <uint32_t*>malloc((self.n_ids + 1) * sizeof(uint32_t))
        if self.code_ids == NULL:
            raise MemoryError()
        previous = -1
        for i in range(n_slots):
            token_id = i if ids is None else ids[i]
            if not previous < token_id <= MAX_ID:
                raise ValueError(f"id {token_id} of token {i} is not above the one before it "
                                 f"({previous}) and at most {MAX_ID}")
            self.code_ids[i] = token_id
            previous = token_id
        for i in range(len(special_ids)):
            self.code_ids[n_slots + i] = special_ids[i]
        code_of = {sid: n_slots + i for i, sid in enumerate(special_ids)}
        for i in range(self.n_specials):
            self.special_ids[i] = code_of[specials[self.special_order[i]]]
        self.decoder.ordinary = self.tables.strings
        # 16 bytes past the last special, as in _fill_decoder
        fill_strings(&self.decoder.extra, [first_name[sid] for sid in special_ids] + [bytes(16)])
        self.decoder.extra.n -= 1
        self.decoder.extra_base = <uint32_t>n_slots
        self.decoder.slot_ids = self.code_ids
        self.decoder.extra_ids = self.code_ids + n_slots
        return 0

    cdef int _fill_decoder(self, dict specials, decode_tokens) except -1:
        cdef const ByteStrings* ordinary = &self.tables.strings
        cdef dict own = {}
        cdef list given = (decode_tokens if type(decode_tokens) is list
                           else [] if decode_tokens is None else list(decode_tokens))
        cdef bytes tok
        cdef Py_ssize_t i, length
        for i in range(len(given)):
            if given[i] is None:
                continue
            tok = given[i]
            length = len(tok)
            if (i >= ordinary.n or not ordinary.present[i]
                    or <Py_ssize_t>(ordinary.offsets[i + 1] - ordinary.offsets[i]) != length
                    or memcmp(ordinary.data + ordinary.offsets[i], PyBytes_AS_STRING(tok), length)):
                own[i] = tok
        for raw, sid in specials.items():
            if sid >= len(given) or given[sid] is None:
                own.setdefault(sid, raw)  # the first name of an id two specials share
        self.n_ids = max(ordinary.n, max(own, default=-1) + 1)
        if any(i < ordinary.n and ordinary.present[i] for i in own):
            # Some id spells other bytes than its ordinary token (a special
            # token on an ordinary id, in a vocabulary never validated):
            # every id then decodes from a copy, as the ids of extra.
            for i, token in enumerate(self.tables.tokens()):
                own.setdefault(i, token)
        else:
            self.decoder.ordinary = ordinary[0]
        base = min(own, default=0)
        # and 16 bytes past the last one, no id's (n leaves them out), so
        # that decode_bytes may copy any of these 16 bytes at a time
        fill_strings(&self.decoder.extra,
                     [own.get(i) for i in range(base, max(own, default=-1) + 1)] + [bytes(16)])
        self.decoder.extra.n -= 1
        self.decoder.extra_base = base
        return 0

    def __dealloc__(self):
        free(self.hot)
        free(self.special_ids)
        free(self.special_lengths)
        free(self.code_ids)
        free_strings(&self.decoder.extra)

    cdef int _fill_hot(self) except -1:
        # A piece of English is a token whole four times in five, and most
        # of those are short and frequent (" the", " of", ".\n"); the
        # filter bit and index slot that bpe_piece_whole reads for them are
        # two cache misses of a table of megabytes. The hot table answers
        # them from 128 kB, with no hash_bytes: each slot holds the first
        # piece of 2 to HOT_MAX bytes, in code order (a BPE vocabulary ranks
        # its frequent tokens first), whose slot it is and that
        # bpe_encode_piece encodes to one code, so a hit is exactly what the
        # walk would give.
        cdef const ByteStrings* strings = self.view.strings
        cdef size_t code, n, stop = min(<size_t>strings.n, <size_t>HOT_TRIED << HOT_BITS)
        cdef const uint8_t* p
        cdef uint64_t key
        cdef HotSlot* slot
        cdef IdBuffer one = IdBuffer(NULL, 0, 0)
        self.hot = <HotSlot*>calloc(1 << HOT_BITS, sizeof(HotSlot))
        if self.hot == NULL:
            raise MemoryError()
        try:
            for code in range(stop):
                n = strings.offsets[code + 1] - strings.offsets[code]
                if n < 2 or n > HOT_MAX:
                    continue
                p = strings.data + strings.offsets[code]
                key = _hot_key(p, n)
                slot = &self.hot[_hot_slot(key)]
                if slot.key != 0:
                    continue
                one.len = 0
                bpe_encode_piece(self.view, p, n, self.whole_piece_lookup, &one, NULL)
                if one.len == 1:
                    slot.key = key
                    slot.code = one.data[0]
        finally:
            ids_free(&one)
        return 0

    cdef bint _next_special(self, const uint8_t* s, Py_ssize_t pos, Py_ssize_t n,
                            const uint8_t* allowed, SpecialMatch* found) noexcept nogil:
        # Leftmost allowed special at or after pos, the longest one at that position.
        cdef Py_ssize_t j, k, length
        cdef int64_t index
        cdef const void* hit
        if self.n_specials == 0:
            return False
        j = pos
        while j < n:
            if self.single_first_byte >= 0:
                hit = memchr(s + j, self.single_first_byte, n - j)
                if hit == NULL:
                    return False
                j = <const uint8_t*>hit - s
            elif not self.special_first[s[j]]:
                j += 1
                continue
            for k in range(self.n_special_lengths):
                length = self.special_lengths[k]
                if j + length > n:
                    continue
                index = find_bytes(self.special_tables.view.index, self.special_tables.view.strings,
                                   s + j, length)
                if index >= 0 and (allowed == NULL or allowed[index]):
                    found.start = j
                    found.length = length
                    found.index = <uint32_t>index
                    return True
            j += 1
        return False

    cdef int _encode_segment(self, const uint8_t* s, Py_ssize_t start, Py_ssize_t end,
                             IdBuffer* out, Scratch* scratch, Dropout* drop,
                             IdBuffer* marks) except -1 nogil:
        # drop: BPE-dropout's draw when sampling, else NULL; scratch: NULL
        # when sampling (the draws make a piece's ids vary); marks: as in
        # _encode_utf8. Either of those goes to _encode_segment_plain, so
        # the loop below tests neither a piece. The segment goes in
        # batches of up to AHEAD pieces:
        # a batch is cut first, and each of its pieces asked of what it can
        # be asked before its turn (_ahead): a piece of one byte is one
        # table read, a piece of 2 to HOT_MAX bytes is asked of the hot table
        # (_fill_hot), one of 2 to FT_PC_TOKEN_MAX bytes then of the thread's
        # token entries (ft_pc_token_find: the pieces this model's index
        # found to be one token), and every other piece up to FT_PC_PAYLOAD
        # bytes is hashed once and what its lookups read is fetched (its filter word
        # and index bucket, its set of the thread's pre-token cache; not the
        # bucket's tails, see the performance notes), so that the
        # batch's cache misses overlap. Then each piece in turn is its
        # known code, else looked up whole (bpe_piece_whole: most pieces of
        # English; kept in the token entries when found), else asked of the
        # cache while its gate is open
        # (ft_pc_open), else merged and kept there; a piece over
        # FT_PC_PAYLOAD bytes is asked of the cache's long entries
        # (_encode_long_piece). The cache holds only pieces that merge (see
        # the performance notes).
        cdef Py_ssize_t i = start, j, n, q
        cdef Py_ssize_t ends[AHEAD]
        cdef int64_t codes[AHEAD]
        cdef uint64_t hashes[AHEAD]
        cdef int k, count
        cdef int64_t code, token
        cdef const ft_pc_entry* e
        cdef uint64_t h
        cdef const TokenTablesView* view = self.view
        cdef bint whole = self.whole_piece_lookup
        cdef ft_pc_table* pieces
        cdef PairMemo* memo
        if drop != NULL or scratch == NULL:
            return self._encode_segment_plain(s, start, end, out, drop, marks)
        pieces = scratch.pieces
        memo = &scratch.memo
        while i < end:
            count = 0
            q = i
            while count < AHEAD and q < end:
                j = self.scan(s, q, end)
                codes[count] = _ahead(view, self.hot, s + q, j - q, pieces, self.cache_owner,
                                      &hashes[count])
                ends[count] = j
                count += 1
                q = j
            for k in range(count):
                j = ends[k]
                n = j - i
                code = codes[k]
                h = hashes[k]
                if code >= 0:
                    if out.len == out.cap:
                        ids_reserve(out, 1)
                    out.data[out.len] = <uint32_t>code
                    out.len += 1
                elif n > FT_PC_PAYLOAD:
                    self._encode_long_piece(s + i, n, out, pieces, memo)
                elif bpe_piece_whole(view, s + i, n, h, whole, out, &token):
                    if n <= FT_PC_TOKEN_MAX:
                        ft_pc_token_put(pieces, self.cache_owner, _head(s + i, n),
                                        ft_pc_token_tail(s + i, n), out.data[out.len - 1])
                elif not ft_pc_open(pieces, h):
                    bpe_merge_piece(view, s + i, n, token, out, memo)
                else:
                    e = ft_pc_find(pieces, self.cache_owner, s + i, n, h)
                    ft_pc_count(pieces, h, e != NULL)
                    if e != NULL:
                        if out.len + e.n_ids > out.cap:  # (ids_reserve is a call into _bpe)
                            ids_reserve(out, e.n_ids)
                        memcpy(out.data + out.len, ft_pc_ids(e), e.n_ids * sizeof(uint32_t))
                        out.len += e.n_ids
                    else:
                        self._merge_kept(s + i, n, h, token, out, pieces, memo)
                if marks != NULL:
                    _mark(marks, out.len, j)
                i = j
        return 0

    cdef int _encode_segment_plain(self, const uint8_t* s, Py_ssize_t start, Py_ssize_t end,
                                   IdBuffer* out, Dropout* drop, IdBuffer* marks) except -1 nogil:
        # _encode_segment with no scratch (no cache, no memo) or sampling:
        # each piece as it is cut
        cdef Py_ssize_t i = start, j
        while i < end:
            j = self.scan(s, i, end)
            self._encode_bare_piece(s + i, j - i, out, drop)
            if marks != NULL:
                _mark(marks, out.len, j)
            i = j
        return 0

    cdef int _encode_bare_piece(self, const uint8_t* p, size_t n, IdBuffer* out,
                                Dropout* drop) except -1 nogil:
        # a piece with no cache or memo: sampled when drop is given
        if drop != NULL:
            return bpe_sample_piece(self.view, p, n, self.whole_piece_lookup, drop, out)
        return bpe_encode_piece(self.view, p, n, self.whole_piece_lookup, out, NULL)

    cdef int _merge_kept(self, const uint8_t* p, size_t n, uint64_t h, int64_t token,
                         IdBuffer* out, ft_pc_table* pieces, PairMemo* memo) except -1 nogil:
        # _encode_segment's piece that the cache missed: merged, and kept.
        # Out of line, as the other rare paths: the loop's own registers
        # then hold across the common ones. A token that merges back into
        # itself (a model without the whole-piece lookup learns it at its
        # first merge, merges_to_self) is found whole from then on, so it
        # goes to the token entries, not the cache, where it would evict a
        # piece that merges (4,457 of qwen3's en.txt steady half).
        cdef size_t before = out.len
        bpe_merge_piece(self.view, p, n, token, out, memo)
        if token >= 0 and out.len == before + 1 and out.data[before] == <uint32_t>token:
            if n <= FT_PC_TOKEN_MAX:
                ft_pc_token_put(pieces, self.cache_owner, _head(p, n), ft_pc_token_tail(p, n),
                                <uint32_t>token)
            return 0
        ft_pc_put(pieces, self.cache_owner, p, n, h, out.data + before, out.len - before)
        return 0

    cdef int _encode_long_piece(self, const uint8_t* p, size_t n, IdBuffer* out,
                                ft_pc_table* pieces, PairMemo* memo) except -1 nogil:
        # _encode_segment's piece of more than FT_PC_PAYLOAD bytes, through
        # the cache's long entries (pieces may be NULL: off). Pieces this long
        # are few, but one that repeats (a table's ruled line) merges through
        # the queue at ~70 instructions a byte.
        cdef uint64_t h = ft_pc_hash(p, n)
        cdef const ft_pc_long* e = ft_pc_long_find(pieces, self.cache_owner, p, n, h)
        cdef size_t before = out.len
        if e != NULL:
            ids_reserve(out, e.n_ids)
            memcpy(out.data + out.len, ft_pc_long_ids(e), e.n_ids * sizeof(uint32_t))
            out.len += e.n_ids
            return 0
        bpe_encode_piece(self.view, p, n, self.whole_piece_lookup, out, memo)
        if out.len - before > 1:
            ft_pc_long_put(pieces, self.cache_owner, p, n, h, out.data + before, out.len - before)
        return 0

    cdef int _encode_segment_generic(self, const uint8_t* s, Py_ssize_t start, Py_ssize_t end,
                                     IdBuffer* out, Dropout* drop) except -1:
        cdef bytes piece
        cdef str segment = (<const char*>s)[start:end].decode("utf-8")
        for text in self.splitter(segment):
            piece = text.encode("utf-8")
            self._encode_bare_piece(<const uint8_t*>PyBytes_AS_STRING(piece), len(piece), out, drop)
        return 0

    cdef int _encode_utf8(self, const uint8_t* s, Py_ssize_t n, const uint8_t* allowed,
                          bint use_specials, IdBuffer* out, Scratch* scratch,
                          Dropout* drop, IdBuffer* marks) except -1 nogil:
        # marks (NULL: ids alone) gets, after each pre-tokenizer piece and
        # each special token, the number of ids and the byte where it ends:
        # what _token_offsets reads (the pieces lie end to end, a scanner's
        # pieces cover their segment)
        cdef Py_ssize_t pos = 0, seg_end
        cdef SpecialMatch m
        cdef bint has_special
        while True:
            has_special = use_specials and self._next_special(s, pos, n, allowed, &m)
            seg_end = m.start if has_special else n
            if self.scan != NULL:
                self._encode_segment(s, pos, seg_end, out, scratch, drop, marks)
            else:
                with gil:
                    self._encode_segment_generic(s, pos, seg_end, out, drop)
            if not has_special:
                return 0
            ids_push(out, self.special_ids[m.index])
            pos = m.start + m.length
            if marks != NULL:
                _mark(marks, out.len, pos)

    cdef int _encode_text(self, str text, const uint8_t* allowed, bint use_specials,
                          IdBuffer* out, Dropout* drop=NULL) except -1:
        cdef Utf8Text u
        cdef uint8_t room[UTF8_ROOM]
        utf8_text_in(text, &u, room, UTF8_ROOM)
        try:
            self._encode_bytes(&u, allowed, use_specials, out, drop, NULL)
        finally:
            free(u.owned)
        return 0

    cdef int _encode_bytes(self, const Utf8Text* u, const uint8_t* allowed, bint use_specials,
                           IdBuffer* out, Dropout* drop, IdBuffer* marks) except -1:
        # one text's UTF-8 through _encode_utf8, with the thread's scratch
        # unless sampling. (The pair memo carrying over from call to call
        # took code.txt's lines through Qwen 3 from 0.45 to 0.8 times
        # quicktok-v1's speed.)
        cdef Scratch scratch
        cdef Scratch* use = NULL
        scratch.pieces = NULL
        scratch.memo.entries = NULL
        scratch.memo.owned = 0
        try:
            if drop == NULL:
                scratch_init(&scratch, self.view, u.size >= MEMO_MIN_BYTES)
                use = &scratch
            if u.size < NOGIL_MIN_BYTES:
                self._encode_utf8(u.data, u.size, allowed, use_specials, out, use, drop, marks)
            else:
                with nogil:
                    self._encode_utf8(u.data, u.size, allowed, use_specials, out, use, drop,
                                      marks)
        finally:
            scratch_free(&scratch)
        return 0

    cdef Py_ssize_t _token_offsets(self, const uint8_t* s, size_t size, const IdBuffer* out,
                                   const IdBuffer* marks, int32_t* offsets,
                                   int32_t* words) noexcept nogil:
        # Each token's character span and piece index from the marks of
        # _encode_utf8, as tokenizers' ByteLevel aligns a piece's bytes:
        # every byte to the whole character it belongs to, so a token that
        # starts or ends inside a character covers all of it. Returns the
        # characters of the text (its code points, as its UTF-8 counts them).
        cdef size_t k, t, first = 0, stop, pos = 0, end, cursor = 0
        cdef Py_ssize_t chars = 0  # characters starting before cursor
        cdef const uint64_t* lengths = self.view.strings.offsets
        cdef uint32_t code
        for k in range(marks.len // 2):
            stop = marks.data[2 * k]
            for t in range(first, stop):
                if stop - first == 1:
                    end = marks.data[2 * k + 1]  # a special's code has no table bytes
                else:
                    code = out.data[t]
                    end = pos + <size_t>(lengths[code + 1] - lengths[code])
                while cursor <= pos:
                    chars += (s[cursor] & 0xC0) != 0x80
                    cursor += 1
                offsets[2 * t] = <int32_t>(chars - 1)
                while cursor < end:
                    chars += (s[cursor] & 0xC0) != 0x80
                    cursor += 1
                offsets[2 * t + 1] = <int32_t>chars
                words[t] = <int32_t>k
                pos = end
            first = stop
        while cursor < size:
            chars += (s[cursor] & 0xC0) != 0x80
            cursor += 1
        return chars

    def encode_with_offsets(self, str text not None, bytes allowed=None):
        """``(ids, spans, "chars")``, the model interface's offsets: the ids and
        character spans of :meth:`encode_offsets`' walk; a text it declines
        (a surrogate pair, 2**31 characters) or a model splitting with a
        Python splitter gets each token's own bytes, as the base class gives them.

        >>> from fasttok.shared._tables import TokenTables
        >>> core = CoreBPE(TokenTables([bytes([i]) for i in range(256)]), {}, scanner="gpt2")
        >>> ids, spans, unit = core.encode_with_offsets("h\\xe9")
        >>> list(ids), list(spans), unit
        ([104, 195, 169], [0, 1, 1, 2, 1, 2], 'chars')
        """
        found = self.encode_offsets(text, allowed) if self.scan != NULL else None
        if found is None:
            return ModelBase.encode_with_offsets(self, text, allowed)
        return found[0], found[1], "chars"

    def encode_offsets(self, str text not None, bytes allowed=None):
        """The ids of ``text`` (``allowed`` as in :meth:`count`) with each
        one's character span and the index of its pre-tokenizer piece (a
        special token is a piece), as ``tokenizers`` gives a byte-level
        model's ``offsets`` and ``word_ids``: ``(ids, offsets, words)``, an
        ``array('I')``, an ``array('i')`` of start and end in turn and an
        ``array('i')``; ``None`` for a text holding a surrogate pair (one
        code point of UTF-8 for two characters of ``text``) or too long
        for 32-bit offsets.

        >>> from fasttok.shared._tables import TokenTables
        >>> core = CoreBPE(TokenTables([bytes([i]) for i in range(256)] + [b"\\xc3\\xa9"]),
        ...                {b"<e>": 257}, scanner="gpt2")
        >>> [list(a) for a in core.encode_offsets("\\xe9<e>\\U0001f600", b"\\x01")]
        [[256, 257, 240, 159, 152, 128], [0, 1, 1, 4, 4, 5, 4, 5, 4, 5, 4, 5], [0, 1, 2, 2, 2, 2]]
        """
        cdef Utf8Text u
        cdef IdBuffer out = IdBuffer(NULL, 0, 0)
        cdef IdBuffer marks = IdBuffer(NULL, 0, 0)
        cdef const uint8_t* mask = NULL
        cdef carray.array ids, offsets, words
        cdef Py_ssize_t chars
        if self.scan == NULL:
            raise FasttokError("offsets need a compiled scanner: this model splits with a "
                               "Python splitter, whose pieces carry no positions")
        if allowed is not None:
            mask = self._mask(allowed)
        utf8_text(text, &u)
        try:
            if u.size > INT32_MAX:
                return None
            self._encode_bytes(&u, mask, mask != NULL, &out, NULL, &marks)
            ids = carray.clone(_UINT32S, 0, False)
            # (which refuses a code with no token before its length is read below)
            append_ids(ids, out.data, out.len, self.n_ids, self.code_ids)
            offsets = carray.clone(_INT32S, 2 * out.len, False)
            words = carray.clone(_INT32S, out.len, False)
            with nogil:
                chars = self._token_offsets(u.data, u.size, &out, &marks,
                                            <int32_t*>offsets.data.as_ints,
                                            <int32_t*>words.data.as_ints)
            if chars != len(text):
                return None
            return ids, offsets, words
        finally:
            ids_free(&marks)
            ids_free(&out)
            free(u.owned)

    def encode_ordinary(self, str text not None):
        """Ids of ``text`` with special token strings treated as plain text."""
        return _encode_ordinary_call(self, text)

    def text_call(self, str name not None):
        """The capsule (``"fasttok.text_call"``) of a C function ``f(self,
        text)`` that is ``getattr(self, name)(text)`` for a ``str``, which
        :class:`fasttok._encode_entry.BoundEntry` calls with no Python call
        between; ``None`` for another name, or a subclass's own method.

        >>> from fasttok.shared._tables import TokenTables
        >>> core = CoreBPE(TokenTables([bytes([i]) for i in range(256)]), {}, scanner="gpt2")
        >>> core.text_call("encode_ordinary") is not None, core.text_call("encode")
        (True, None)
        """
        if name == "encode_ordinary" and type(self).encode_ordinary is CoreBPE.encode_ordinary:
            return PyCapsule_New(<void*>_encode_ordinary_call, "fasttok.text_call", NULL)
        return None

    def encode(self, str text not None, bytes allowed not None):
        """Ids of ``text``; ``allowed[i]`` says whether ``special_order[i]`` is a special here."""
        cdef IdBuffer out
        cdef const uint8_t* mask = self._mask(allowed)
        cdef bint kept = _take_ids(&out)
        try:
            self._encode_text(text, mask, True, &out)
            return ids_to_list(out.data, out.len, self.n_ids, self.code_ids)
        finally:
            _give_ids(&out, kept)

    def sample(self, str text not None, bytes allowed, double alpha, int nbest_size,
               rng not None):
        """Ids of ``text`` with BPE-dropout: :meth:`encode` (``allowed`` as in
        :meth:`count`), with each merge skipped with probability ``alpha`` as
        Hugging Face tokenizers' BPE ``dropout`` does (a skipped merge waits
        until the next merge is made, then may be drawn again). ``alpha <= 0``
        gives :meth:`encode`'s ids, ``alpha >= 1`` one id per byte (where the
        whole-piece lookup does not apply). ``rng`` (a ``random.Random``)
        seeds the draws; ``nbest_size`` has no meaning for BPE and is ignored,
        as sentencepiece ignores it.

        >>> import random
        >>> from fasttok.shared._tables import TokenTables
        >>> core = CoreBPE(TokenTables([b"a", b"b", b"ab", b" "]), {}, scanner="gpt2")
        >>> core.sample("ab", None, 0.0, -1, random.Random(7)), core.sample(" ab", None, 1.0, -1, random.Random(7))
        ([2], [3, 0, 1])
        """
        cdef IdBuffer out = IdBuffer(NULL, 0, 0)
        cdef Dropout drop
        drop.rate = alpha
        drop.state = rng.getrandbits(64)
        try:
            self._encode_allowing(text, allowed, &out, &drop)
            return ids_to_list(out.data, out.len, self.n_ids, self.code_ids)
        finally:
            ids_free(&out)

    cdef const uint8_t* _mask(self, bytes allowed) except? NULL:
        # The bytes of a mask of special tokens (NULL for a vocabulary with
        # none). Masks are bytes, not buffers: acquiring a typed memoryview
        # argument was a quarter of the call of encoding a short line.
        if self.n_specials == 0:
            return NULL
        if len(allowed) < self.n_specials:
            raise ValueError("the allowed mask is shorter than the list of special tokens")
        return <const uint8_t*>PyBytes_AS_STRING(allowed)

    cdef int _encode_allowing(self, str text, bytes allowed, IdBuffer* out,
                              Dropout* drop=NULL) except -1:
        # allowed: None for ordinary encoding, else the mask of special
        # tokens that count as specials; drop as in _encode_segment
        if allowed is None or self.n_specials == 0:
            return self._encode_text(text, NULL, False, out, drop)
        return self._encode_text(text, self._mask(allowed), True, out, drop)

    def count(self, str text not None, bytes allowed=None):
        """How many ids ``text`` encodes to, without building them as Python ints."""
        cdef IdBuffer out = IdBuffer(NULL, 0, 0)
        try:
            self._encode_allowing(text, allowed, &out)
            return out.len
        finally:
            ids_free(&out)

    def encode_many(self, list texts not None, const uint8_t[::1] allowed=None, normalizer=None):
        """Encode a list of texts, holding the GIL only to read them and build the lists.

        ``allowed`` is ``None`` for ordinary encoding; ``normalizer`` as in
        :class:`BatchJob`. Returns a list of lists.
        """
        return BatchJob(self, texts, allowed, BATCH_LISTS, 1, normalizer).run_alone()

    def encode_many_flat(self, list texts not None, const uint8_t[::1] allowed=None,
                         normalizer=None):
        """Encode a list of texts into one ``array('I')`` of ids and an
        ``array('Q')`` of ``len(texts) + 1`` offsets: text i's ids are
        ``ids[offsets[i]:offsets[i + 1]]``. No Python int is made per token."""
        return BatchJob(self, texts, allowed, BATCH_FLAT, 1, normalizer).run_alone()

    def count_many(self, list texts not None, const uint8_t[::1] allowed=None, normalizer=None):
        """The number of ids of each text, as a list, without building the ids."""
        return BatchJob(self, texts, allowed, BATCH_COUNTS, 1, normalizer).run_alone()

    def encode_offsets_many(self, list texts not None, const uint8_t[::1] allowed=None):
        """:meth:`encode_offsets` of each text, holding the GIL only to read
        the texts and make each one's block of tokens (read as the three
        arrays).

        >>> from fasttok.shared._tables import TokenTables
        >>> core = CoreBPE(TokenTables([b"a", b"b", b"ab"]), {}, scanner="gpt2")
        >>> [[list(a) for a in found] for found in core.encode_offsets_many(["ab", "ba"])]
        [[[2], [0, 2], [0]], [[1, 0], [0, 1, 1, 2], [0, 0]]]
        """
        return BatchJob(self, texts, allowed, BATCH_OFFSETS, 1).run_alone()

    def batch_job(self, list texts not None, const uint8_t[::1] allowed, str how not None,
                  int threads, normalizer=None):
        """A :class:`BatchJob` over ``texts`` for ``threads`` threads; ``how``
        is ``"encode_many"``, ``"encode_many_flat"``, ``"count_many"`` or
        ``"encode_offsets_many"`` and says what the job returns (as those
        methods do); ``normalizer`` as in :class:`BatchJob`."""
        return BatchJob(self, texts, allowed, _BATCH_KINDS[how], threads, normalizer)

    def encode_to_array(self, str text not None, bytes allowed=None):
        """The ids of ``text`` as an ``array('I')``; ``allowed`` as in :meth:`count`."""
        cdef IdBuffer out = IdBuffer(NULL, 0, 0)
        try:
            self._encode_allowing(text, allowed, &out)
            ids = array("I")
            append_ids(ids, out.data, out.len, self.n_ids, self.code_ids)
            return ids
        finally:
            ids_free(&out)

    def encode_bytes_piece(self, bytes piece not None, whole_piece_lookup=None):
        """Merge raw bytes as one piece, with no pre-tokenizer (tiktoken's ``encode_single_piece``).

        ``whole_piece_lookup=False`` merges even a piece that is a token
        itself (tiktoken's bare ``byte_pair_encode``); ``None`` keeps the
        model's own rule."""
        cdef IdBuffer out = IdBuffer(NULL, 0, 0)
        cdef bint whole = (self.whole_piece_lookup if whole_piece_lookup is None
                           else bool(whole_piece_lookup))
        try:
            bpe_encode_piece(self.view, <const uint8_t*>PyBytes_AS_STRING(piece), len(piece),
                             whole, &out, NULL)
            return ids_to_list(out.data, out.len, self.n_ids, self.code_ids)
        finally:
            ids_free(&out)

    def last_piece(self, str text not None, bytes allowed=None):
        """The UTF-8 bytes of the last pre-tokenizer piece of ``text`` after
        its last allowed special token (``allowed`` as in :meth:`count`):
        what tiktoken's unstable-token logic re-merges. ``b""`` when the text
        is empty or ends with a special token.

        >>> from fasttok.shared._tables import TokenTables
        >>> core = CoreBPE(TokenTables([b"a", b"b", b"ab", b" "]), {b"<e>": 4}, scanner="gpt2")
        >>> core.last_piece("ab ab", b"\\x01"), core.last_piece("ab<e>", b"\\x01")
        (b' ab', b'')
        """
        cdef Utf8Text u
        cdef SpecialMatch m
        cdef Py_ssize_t pos = 0, i, j, last = 0
        cdef const uint8_t* mask = NULL
        if allowed is not None:
            mask = self._mask(allowed)
        utf8_text(text, &u)
        try:
            if mask != NULL:
                while self._next_special(u.data, pos, u.size, mask, &m):
                    pos = m.start + m.length
            if self.scan == NULL:
                pieces = list(self.splitter((<const char*>u.data)[pos:u.size].decode("utf-8")))
                # (wraparound is off: no pieces[-1])
                return pieces[len(pieces) - 1].encode("utf-8") if pieces else b""
            i = last = pos
            while i < u.size:
                last = i
                i = self.scan(u.data, i, u.size)
            return (<const char*>u.data)[last:u.size]
        finally:
            free(u.owned)

    def leading_pieces(self, str text not None, Py_ssize_t cover):
        """The UTF-8 bytes of the pre-tokenizer pieces of ``text`` (specials
        read as text, as ``encode_ordinary`` does) up to the first that
        reaches byte ``cover``: what the ids spelling its first ``cover``
        bytes are merged from.

        >>> from fasttok.shared._tables import TokenTables
        >>> core = CoreBPE(TokenTables([b"a", b"b", b" "]), {}, scanner="gpt2")
        >>> core.leading_pieces("ab ab ba", 4), core.leading_pieces("ab ab ba", 100)
        ([b'ab', b' ab'], [b'ab', b' ab', b' ba'])
        """
        cdef Utf8Text u
        cdef Py_ssize_t i = 0, j
        cdef list out = []
        utf8_text(text, &u)
        try:
            if self.scan == NULL:
                for piece in self.splitter(text):
                    out.append(piece.encode("utf-8"))
                    i += len(out[len(out) - 1])
                    if i >= cover:
                        break
                return out
            while i < u.size and i < cover:
                j = self.scan(u.data, i, u.size)
                out.append((<const char*>u.data)[i:j])
                i = j
            return out
        finally:
            free(u.owned)

    def find_special(self, str text not None, bytes mask not None):
        """The first special token (as its index in ``special_order``) that
        ``mask`` selects and ``text`` contains, or -1."""
        cdef Utf8Text u
        cdef SpecialMatch m
        cdef bint found
        cdef const uint8_t* selected = self._mask(mask)
        if selected == NULL:
            return -1
        utf8_text(text, &u)
        try:
            with nogil:
                found = self._next_special(u.data, 0, u.size, selected, &m)
        finally:
            free(u.owned)
        return m.index if found else -1

    def document_encoder(self):
        """A PyCapsule of this model's
        ``fasttok.shared._document_encoder.DocumentEncoder``: how
        ``encode_files`` encodes documents straight from a file's UTF-8,
        without a str each (its context, which it keeps alive, is this
        model, the functions' first argument).

        >>> from fasttok.shared._tables import TokenTables
        >>> type(CoreBPE(TokenTables([b"a"]), {}, scanner="gpt2").document_encoder()).__name__
        'PyCapsule'
        """
        capsule = PyCapsule_New(<void*>&_DOCUMENTS, DOCUMENT_ENCODER, _release_model)
        PyCapsule_SetContext(capsule, <void*>self)
        Py_INCREF(self)
        return capsule

    def decode_bytes(self, tokens):
        """The bytes of a sequence of ids; ``KeyError`` on an id that is not in the vocabulary."""
        cdef object sequence = tokens if type(tokens) is list or type(tokens) is tuple else list(tokens)
        cdef Py_ssize_t count = len(sequence), i
        cdef PyObject** items = PySequence_Fast_ITEMS(sequence)
        cdef uint64_t total = 0, pos = 0, a, ahead, token
        cdef Span* spans = <Span*>malloc((count + 1) * sizeof(Span))
        # the ordinary ids' table in locals, which the compiler keeps in
        # registers (read through the struct, they were spilled and
        # reloaded per id: 2-5% of decode)
        cdef uint64_t n_ordinary = self.decoder.ordinary.n
        cdef const uint8_t* present = self.decoder.ordinary.present
        cdef const uint64_t* offsets = self.decoder.ordinary.offsets
        cdef const uint8_t* data = self.decoder.ordinary.data
        cdef const uint8_t* data_end = data + (offsets[n_ordinary] if n_ordinary else 0)
        cdef long long t
        cdef int64_t code
        cdef bytes out
        cdef char* dst
        if spans == NULL:
            raise MemoryError()
        # Three passes, each fetching a few steps ahead what it will need:
        # the ids of an encode result are the shared ints of _ints and the
        # token table is megabytes, so reading either one item at a time
        # waits on a cache miss per id (half of decode's time without prefetching).
        try:
            if self.code_ids == NULL:
                for i in range(count):
                    if i + DECODE_PREFETCH < count:
                        prefetch(items[i + DECODE_PREFETCH])
                    t = token_id(<object>items[i])
                    if t < 0 or <uint64_t>t >= self.n_ids:
                        raise KeyError(<object>items[i])
                    spans[i].length = <uint64_t>t  # the code, until the pass below
            else:
                for i in range(count):
                    t = token_id(<object>items[i])
                    code = decoder_code(&self.decoder, <uint64_t>t) if 0 <= t < NO_TOKEN else -1
                    if code < 0:
                        raise KeyError(<object>items[i])
                    spans[i].length = <uint64_t>code
            for i in range(count):
                if i + DECODE_PREFETCH < count:
                    ahead = spans[i + DECODE_PREFETCH].length
                    prefetch(&offsets[ahead if ahead < n_ordinary else n_ordinary])
                token = spans[i].length
                if token < n_ordinary and present[token]:
                    spans[i].src = data + offsets[token]
                    spans[i].length = offsets[token + 1] - offsets[token]
                elif not decoder_span(&self.decoder, token, &spans[i]):
                    raise KeyError(<object>items[i])
                total += spans[i].length
            out = PyBytes_FromStringAndSize(NULL, total)
            dst = PyBytes_AS_STRING(out)
            for i in range(count):
                if i + DECODE_PREFETCH < count:
                    prefetch(spans[i + DECODE_PREFETCH].src)
                a = spans[i].length
                # (a special's bytes are followed by 16 bytes of their own,
                # so for them the last test may go either way)
                if a <= 16 and pos + 16 <= total and spans[i].src + 16 <= data_end:
                    # a fixed-size copy is two moves, not a call; the bytes
                    # past this token's are overwritten by the next one
                    memcpy(dst + pos, spans[i].src, 16)
                else:
                    memcpy(dst + pos, spans[i].src, a)
                pos += a
            return out
        finally:
            free(spans)

    def token_bytes(self, token):
        """The bytes of one id, ordinary or special; ``KeyError`` otherwise."""
        cdef Span span
        cdef long long t = token_id(token)
        cdef int64_t code = t
        if self.code_ids != NULL:
            code = decoder_code(&self.decoder, <uint64_t>t) if 0 <= t < NO_TOKEN else -1
        if code < 0 or not decoder_span(&self.decoder, <uint64_t>code, &span):
            raise KeyError(token)
        return (<const char*>span.src)[:span.length]

    def token_byte_values(self):
        """The bytes of every ordinary token (specials left out), sorted:
        tiktoken's ``token_byte_values``."""
        return sorted(t for t in self.tables.tokens() if t is not None)

    def find_token(self, bytes data not None):
        """The id of the ordinary token spelled ``data``, or -1."""
        found = self.tables.find(data)
        if found >= 0 and self.code_ids != NULL:
            return self.code_ids[found]
        return found


cdef int _encode_documents(void* model, const uint8_t* data, const uint64_t* bounds,
                           size_t n_docs, const uint8_t* allowed, uint32_t** ids, size_t* n_ids,
                           size_t* cap, uint64_t* ends, ft_pc_table* pieces) except -1 nogil:
    # DocumentEncoder.encode: each document through _encode_utf8, as a
    # batch chunk encodes its texts (one scratch for the run, so the
    # pre-token cache, pieces or the thread's, serves them all), ids from
    # codes at the end
    # (<CoreBPE>model: a borrowed reference, no count taken without the GIL)
    cdef IdBuffer out = IdBuffer(ids[0], n_ids[0], cap[0])
    cdef size_t i, first = n_ids[0]
    cdef Scratch scratch
    cdef bint use_specials = allowed != NULL and (<CoreBPE>model).n_specials > 0
    cdef const uint32_t* code_ids = (<CoreBPE>model).code_ids
    scratch.pieces = NULL
    scratch.memo.entries = NULL
    scratch.memo.owned = 0
    try:
        scratch_init(&scratch, (<CoreBPE>model).view, True, pieces)
        for i in range(n_docs):
            (<CoreBPE>model)._encode_utf8(data + bounds[2 * i],
                                          <Py_ssize_t>(bounds[2 * i + 1] - bounds[2 * i]),
                                          allowed, use_specials, &out, &scratch, NULL, NULL)
            ends[i] = out.len
        if code_ids != NULL:
            for i in range(first, out.len):
                out.data[i] = code_ids[out.data[i]]
    finally:
        scratch_free(&scratch)
        ids[0], n_ids[0], cap[0] = out.data, out.len, out.cap
    return 0


cdef Py_ssize_t _find_special_utf8(void* model, const uint8_t* data, size_t size,
                                   const uint8_t* mask) noexcept nogil:
    # DocumentEncoder.find_special: CoreBPE.find_special over UTF-8
    cdef SpecialMatch m
    if (<CoreBPE>model)._next_special(data, 0, <Py_ssize_t>size, mask, &m):
        return m.index
    return -1


cdef DocumentEncoder _DOCUMENTS = DocumentEncoder(_encode_documents, _find_special_utf8)


cdef void _release_model(object capsule) noexcept:
    # the capsule's reference to its model
    Py_DECREF_PTR(<PyObject*>PyCapsule_GetContext(capsule))


cdef enum:
    BATCH_LISTS = 0
    BATCH_FLAT = 1
    BATCH_COUNTS = 2
    BATCH_OFFSETS = 3
    # a chunk's state
    CHUNK_WAITING = 0
    CHUNK_ENCODED = 1
    CHUNK_COLLECTED = 2
    MIN_CHUNK_TEXTS = 32
    CHUNKS_PER_THREAD = 8

_BATCH_KINDS = {"encode_many": BATCH_LISTS, "encode_many_flat": BATCH_FLAT, "count_many": BATCH_COUNTS,
                "encode_offsets_many": BATCH_OFFSETS}

cdef extern from *:
    """
    #if defined(_MSC_VER)
    #include <intrin.h>
    #include <windows.h>
    #define FT_FETCH_ADD(p, v) _InterlockedExchangeAdd((volatile long*)(p), (long)(v))
    #define FT_LOAD_ACQUIRE(p) _InterlockedOr((volatile long*)(p), 0)
    #define FT_STORE_RELEASE(p, v) ((void)_InterlockedExchange((volatile long*)(p), (long)(v)))
    #define FT_SHORT_PAUSE() Sleep(0)
    #else
    #include <time.h>
    static void ft_short_pause(void) { struct timespec t = {0, 20000}; nanosleep(&t, NULL); }
    #define FT_SHORT_PAUSE() ft_short_pause()
    #define FT_FETCH_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
    #define FT_LOAD_ACQUIRE(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
    #define FT_STORE_RELEASE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
    #endif
    """
    long atomic_fetch_add "FT_FETCH_ADD"(long* p, long v) nogil
    long atomic_load_acquire "FT_LOAD_ACQUIRE"(long* p) nogil
    void atomic_store_release "FT_STORE_RELEASE"(long* p, long v) nogil
    void short_pause "FT_SHORT_PAUSE"() nogil  # a few microseconds' sleep


cdef class BatchJob:
    """One batch call: its texts in chunks that any number of threads claim,
    one at a time, and encode without the GIL, while the calling thread also
    turns each chunk it finds encoded into the result (lists of ints need
    the GIL). Building every list after the encoding, or in each thread
    after its own chunk, leaves one thread waiting for the GIL while the other
    builds: two threads run 1.5x one on short lines, where building is a
    fifth of the work.

    Helper threads call :meth:`work`; the calling thread calls :meth:`run`,
    then waits for the helpers, then calls :meth:`finish` for the result.
    :meth:`run` first reads the texts (a reference to each, and where its
    characters are: a cache miss per text, 3 ms for 70k lines), chunk by
    chunk, while the helpers already encode the chunks it has read; so
    :meth:`work` waits for a :meth:`run` in another thread.

    ``normalizer`` (not with ``encode_offsets_many``), for a model whose text
    is normalized first: an object whose ``stage`` is a Unicode form's
    normalizer and whose ``respell(text, allowed)`` gives, for a text not in
    that form (:func:`~fasttok.models._model_base.in_normal_form`), what to
    encode instead: the normalized text, or the text's ids (a list) where the
    special tokens ``allowed`` selects cut it. :meth:`run` asks while it reads
    the texts, so the texts are still encoded without the GIL.

    >>> from fasttok.shared._tables import TokenTables
    >>> core = CoreBPE(TokenTables([b"a", b"b", b"ab"]), {}, scanner="gpt2")
    >>> job = core.batch_job(["ab", "ba", "a"], None, "encode_many", 2)
    >>> job.run(); job.finish()
    [[2], [1, 0], [0]]
    """

    def __cinit__(self):
        self.refs = NULL
        self.n_refs = 0
        self.sources = NULL
        self.ends = NULL
        self.chunks = NULL
        self.n_chunks = 0
        self.declined = NULL
        self.given = NULL

    def __init__(self, CoreBPE core not None, list texts not None, const uint8_t[::1] allowed,
                 int kind, int threads, normalizer=None):
        cdef Py_ssize_t count = len(texts), i
        self.core = core
        self.texts = texts
        self.count = count
        self.kind = kind
        self.allowed = allowed
        self.use_specials = allowed is not None and core.n_specials > 0
        if self.use_specials and allowed.shape[0] < core.n_specials:
            raise ValueError("the allowed mask is shorter than the list of special tokens")
        if kind == BATCH_OFFSETS and core.scan == NULL:
            raise FasttokError("offsets need a compiled scanner: this model splits with a "
                               "Python splitter, whose pieces carry no positions")
        if kind == BATCH_OFFSETS and normalizer is not None:
            raise ValueError("a normalizer's batch gives no offsets (normalizing moves them)")
        self.normalizer = normalizer
        if normalizer is not None and normalizer.stage is not None:
            self.is_normalized = normalizer.stage.is_normalized
            self.stable_ranges = normalizer.stage.stable_ranges
        self.allowed_bytes = bytes(allowed) if normalizer is not None and self.use_specials \
            else None
        if normalizer is not None:
            # made before any chunk is read, so that the threads encoding
            # chunks read it as _prepare sets it for each chunk
            self.given = <uint32_t**>calloc(count + 1, sizeof(uint32_t*))
            if self.given == NULL:
                raise MemoryError()
        self.mask = &allowed[0] if self.use_specials else NULL
        # one chunk for one thread; else about CHUNKS_PER_THREAD a thread,
        # which even out texts of uneven cost
        chunk_texts = count if threads <= 1 else count // (CHUNKS_PER_THREAD * threads) + 1
        if chunk_texts < MIN_CHUNK_TEXTS:
            chunk_texts = MIN_CHUNK_TEXTS
        self.refs = <PyObject**>malloc((count + 1) * sizeof(PyObject*))
        self.sources = <Utf8Source*>malloc((count + 1) * sizeof(Utf8Source))
        self.ends = <size_t*>malloc((count + 1) * sizeof(size_t))
        # see _plan_chunks for the bound
        self.chunks = <BatchChunk*>calloc(count // chunk_texts + 256, sizeof(BatchChunk))
        if kind == BATCH_OFFSETS:
            self.declined = <uint8_t*>calloc(count + 1, 1)
        if self.refs == NULL or self.sources == NULL or self.ends == NULL or self.chunks == NULL \
                or (kind == BATCH_OFFSETS and self.declined == NULL):
            raise MemoryError()
        self._plan_chunks(count, chunk_texts, threads)
        self.prepared = 0
        self.next_chunk = 0
        self.failed = 0
        self.lists = PyList_New(count) if kind == BATCH_LISTS or kind == BATCH_OFFSETS else None

    cdef void _plan_chunks(self, Py_ssize_t count, Py_ssize_t chunk_texts, int threads) noexcept:
        # Chunks of chunk_texts texts, shrinking towards the end to what is
        # left over twice the threads (down to MIN_CHUNK_TEXTS): the threads
        # then run out of work within a small chunk of each other, instead
        # of one encoding a whole last chunk while the others wait. That
        # makes count / chunk_texts chunks, then fewer than 256 as they
        # shrink by at least a quarter each, then at most 4.
        cdef Py_ssize_t first = 0, size
        cdef Py_ssize_t share = 2 * threads if threads > 1 else 1
        self.n_chunks = 0
        while first < count:
            size = min(chunk_texts, max((count - first) // share, MIN_CHUNK_TEXTS))
            self.chunks[self.n_chunks].first = first
            self.chunks[self.n_chunks].stop = min(count, first + size)
            first = self.chunks[self.n_chunks].stop
            self.n_chunks += 1

    cdef int _prepare(self, const BatchChunk* chunk) except -1:
        cdef Py_ssize_t i
        cdef object text
        for i in range(chunk.first, chunk.stop):
            text = self.texts[i]
            utf8_source(<str?>text, &self.sources[i])
            if self.is_normalized is not None and not self.sources[i].ascii \
                    and not in_form(text, self.is_normalized, self.stable_ranges):
                text = self._respelled(i, text)
            Py_INCREF(text)
            self.refs[i] = <PyObject*>text
            self.n_refs = i + 1
        return 0

    cdef object _respelled(self, Py_ssize_t i, str text):
        # Text i that the normalizer changes: the str to encode in its place
        # (its source read), or, when the normalizer gives its ids, text with
        # an empty source and the ids' codes in given[i] (count first).
        cdef object found = self.normalizer.respell(text, self.allowed_bytes)
        cdef list ids
        cdef uint32_t* codes
        cdef Py_ssize_t k, n
        cdef uint64_t token
        if type(found) is str:
            utf8_source(found, &self.sources[i])
            return found
        ids = found
        n = len(ids)
        codes = <uint32_t*>malloc((n + 1) * sizeof(uint32_t))
        if codes == NULL:
            raise MemoryError()
        self.given[i] = codes
        codes[0] = <uint32_t>n
        for k in range(n):
            token = ids[k]
            codes[k + 1] = <uint32_t>(token if self.core.code_ids == NULL
                                      else decoder_code(&self.core.decoder, token))
        utf8_source("", &self.sources[i])
        return text

    def __dealloc__(self):
        cdef long k
        cdef Py_ssize_t i
        if self.refs != NULL:
            for i in range(self.n_refs):
                Py_DECREF_PTR(self.refs[i])
        free(self.refs)
        if self.chunks != NULL:
            for k in range(self.n_chunks):
                ids_free(&self.chunks[k].out)
                ids_free(&self.chunks[k].spans)
        free(self.chunks)
        free(self.sources)
        free(self.ends)
        free(self.declined)
        if self.given != NULL:
            for i in range(self.count):
                free(self.given[i])
        free(self.given)

    def work(self):
        """Encode chunks until none is left to claim (for the helper threads)."""
        cdef long k
        try:
            with nogil:
                while True:
                    k = atomic_fetch_add(&self.next_chunk, 1)
                    if k >= self.n_chunks:
                        break
                    while atomic_load_acquire(&self.prepared) <= k and not atomic_load_acquire(&self.failed):
                        short_pause()
                    if atomic_load_acquire(&self.failed):
                        break
                    self._encode_chunk(&self.chunks[k])
        except BaseException:
            atomic_store_release(&self.failed, 1)  # run() stops waiting for its chunk
            raise

    def run(self):
        """:meth:`work`, building the results of the chunks found encoded
        after each one, then of the chunks still being encoded as they end
        (for the calling thread)."""
        cdef long k
        try:
            for k in range(self.n_chunks):
                self._prepare(&self.chunks[k])
                atomic_store_release(&self.prepared, k + 1)
        except BaseException:
            atomic_store_release(&self.failed, 1)  # work() stops waiting for it
            raise
        while True:
            k = atomic_fetch_add(&self.next_chunk, 1)
            if k >= self.n_chunks:
                break
            with nogil:
                self._encode_chunk(&self.chunks[k])
            self._collect()
        # Waiting here rather than in join(): a chunk's lists get built as
        # soon as it is encoded, while the other threads still encode theirs.
        while self._collect() < self.n_chunks and not atomic_load_acquire(&self.failed):
            with nogil:
                short_pause()

    def finish(self):
        """The result, once every chunk is encoded (after the threads are joined)."""
        cdef long k
        self._collect()
        for k in range(self.n_chunks):
            if self.chunks[k].state != CHUNK_COLLECTED:
                raise RuntimeError("a batch chunk was not encoded (a thread failed)")
        if self.kind == BATCH_LISTS or self.kind == BATCH_OFFSETS:
            return self.lists  # (which the job holds until it goes too)
        if self.kind == BATCH_FLAT:
            return self._flat()
        return self._counts()

    def run_alone(self):
        """The result, every chunk encoded by the calling thread."""
        self.run()
        return self.finish()

    cdef int _encode_chunk(self, BatchChunk* chunk) except -1 nogil:
        # Encodes one chunk into its own buffer. Its non-ASCII texts are
        # transcoded into one buffer, allocated once.
        cdef Scratch scratch
        cdef uint8_t* buffer = NULL
        cdef size_t capacity = 0, used = 0, size, text_units = 0
        cdef const uint8_t* data
        cdef Py_ssize_t i
        cdef IdBuffer marks = IdBuffer(NULL, 0, 0)
        scratch.pieces = NULL
        scratch.memo.entries = NULL
        scratch.memo.owned = 0
        try:
            for i in range(chunk.first, chunk.stop):
                capacity += utf8_capacity(&self.sources[i])
                text_units += <size_t>self.sources[i].length
            # about a token per 4 characters of ASCII text, and up to one and
            # a half per character of Chinese (cl100k_base): a third of a
            # token per character, and per byte that a text past ASCII may
            # transcode to, so that the buffer seldom grows (each growth
            # copies it; at a third per character zh.txt's grew three times)
            ids_reserve(&chunk.out, (text_units + capacity) // 3 + 64)
            buffer = <uint8_t*>malloc(capacity + 1)
            if buffer == NULL:
                with gil:
                    raise MemoryError()
            scratch_init(&scratch, self.core.view, True)
            for i in range(chunk.first, chunk.stop):
                if self.sources[i].ascii:
                    data = <const uint8_t*>self.sources[i].data
                    size = <size_t>self.sources[i].length
                else:
                    data = buffer + used
                    size = utf8_write(&self.sources[i], buffer + used)
                    used += size
                if self.given != NULL and self.given[i] != NULL:
                    ids_reserve(&chunk.out, self.given[i][0])
                    memcpy(chunk.out.data + chunk.out.len, self.given[i] + 1,
                           self.given[i][0] * sizeof(uint32_t))
                    chunk.out.len += self.given[i][0]
                elif self.kind == BATCH_OFFSETS:
                    self._offsets_text(i, data, size, chunk, &scratch, &marks)
                elif size == 0:
                    pass  # (a corpus's blank lines: 29% of en.txt's)
                elif self.use_specials or self.core.scan == NULL:
                    self.core._encode_utf8(data, size, self.mask, self.use_specials, &chunk.out,
                                           &scratch, NULL, NULL)
                else:
                    # one segment, with no specials to find: _encode_utf8's
                    # loop is ~50 instructions a text of a bulk batch's ~180
                    # a text around the pieces (en.txt's lines: 38 bytes)
                    self.core._encode_segment(data, 0, size, &chunk.out, &scratch, NULL, NULL)
                self.ends[i] = chunk.out.len
        finally:
            scratch_free(&scratch)
            free(buffer)
            ids_free(&marks)
        atomic_store_release(&chunk.state, CHUNK_ENCODED)
        return 0

    cdef int _offsets_text(self, Py_ssize_t i, const uint8_t* data, size_t size,
                           BatchChunk* chunk, Scratch* scratch, IdBuffer* marks) except -1 nogil:
        # Text i of a BATCH_OFFSETS chunk as encode_offsets walks it (marks:
        # a buffer reused text to text): its ids join the chunk's, its
        # offsets and words the chunk's spans. A declined text keeps its ids
        # there too (the chunk's ends count them).
        cdef size_t start = chunk.out.len, n, k
        cdef IdBuffer ids
        cdef int32_t* spans
        if size > INT32_MAX:
            self.declined[i] = 1
            return 0
        marks.len = 0
        self.core._encode_utf8(data, size, self.mask, self.use_specials, &chunk.out, scratch,
                               NULL, marks)
        n = chunk.out.len - start
        for k in range(0, marks.len, 2):
            marks.data[k] -= <uint32_t>start  # counted from the text's first id
        ids.data = chunk.out.data + start
        ids.len = ids.cap = n
        ids_reserve(&chunk.spans, 3 * n)
        spans = <int32_t*>(chunk.spans.data + chunk.spans.len)
        chunk.spans.len += 3 * n
        if self.core._token_offsets(data, size, &ids, marks, spans, spans + 2 * n) \
                != self.sources[i].length:
            self.declined[i] = 1
        return 0

    cdef long _collect(self) except -1:
        # Builds the lists of every chunk encoded and not yet collected;
        # returns how many chunks are now collected.
        cdef long k, collected = 0
        cdef BatchChunk* chunk
        for k in range(self.n_chunks):
            chunk = &self.chunks[k]
            if atomic_load_acquire(&chunk.state) == CHUNK_ENCODED:
                if self.kind == BATCH_LISTS:
                    self._build_lists(chunk)
                elif self.kind == BATCH_OFFSETS:
                    self._build_offsets(chunk)
                chunk.state = CHUNK_COLLECTED
            collected += chunk.state == CHUNK_COLLECTED
        return collected

    cdef int _build_lists(self, const BatchChunk* chunk) except -1:
        cdef size_t a = 0, b
        cdef Py_ssize_t i
        cdef list one
        cdef size_t n_ids = self.core.n_ids
        cdef const uint32_t* code_ids = self.core.code_ids
        # Creating the lists counts toward the collector's allocation
        # threshold even though they are untracked below; pausing it saves
        # dozens of collections per batch.
        collecting = gc.isenabled()
        gc.disable()
        try:
            for i in range(chunk.first, chunk.stop):
                b = self.ends[i]
                one = ids_to_list(chunk.out.data + a, b - a, n_ids, code_ids)
                # A list of ints cannot be part of a reference cycle, so the
                # cycle collector need not know about it. Tracked, a batch of
                # 70k short lines set off collections that walked every one
                # of them: a sixth of the batch's time, all under the GIL.
                # (Should a caller later put the list inside itself, that
                # cycle would not be collected: a leak, never a crash.)
                PyObject_GC_UnTrack(one)
                Py_INCREF(one)
                PyList_SET_ITEM(self.lists, i, one)
                a = b
        finally:
            if collecting:
                gc.enable()
        return 0

    cdef int _build_offsets(self, const BatchChunk* chunk) except -1:
        # each text's ids, offsets and words in one walked_block (read as
        # the three arrays encode_offsets gives), or None
        cdef size_t a = 0, b, n
        cdef Py_ssize_t i
        cdef uint32_t* ids
        cdef int32_t* offsets
        cdef int32_t* words
        cdef const int32_t* spans
        for i in range(chunk.first, chunk.stop):
            b = self.ends[i]
            n = b - a
            if self.declined[i]:
                found = None
            else:
                found = walked_block(n, &ids, &offsets, &words)
                write_ids(ids, chunk.out.data + a, n, self.core.n_ids, self.core.code_ids)
                spans = <const int32_t*>chunk.spans.data + 3 * a
                memcpy(offsets, spans, 3 * n * sizeof(int32_t))
            Py_INCREF(found)
            PyList_SET_ITEM(self.lists, i, found)
            a = b
        return 0

    cdef object _flat(self):
        # the offsets written in their array, not copied into it (twice,
        # through a bytes object: 0.6M instructions of en.txt's steady half)
        cdef long k
        cdef Py_ssize_t i, count = self.count
        cdef uint64_t base = 0
        cdef uint64_t* offsets
        cdef const BatchChunk* chunk
        cdef carray.array ids = array("I")
        cdef carray.array result = array("Q")
        carray.resize(result, count + 1)
        offsets = <uint64_t*>result.data.as_voidptr
        offsets[0] = 0
        for k in range(self.n_chunks):
            chunk = &self.chunks[k]
            append_ids(ids, chunk.out.data, chunk.out.len, self.core.n_ids, self.core.code_ids)
            for i in range(chunk.first, chunk.stop):
                offsets[i + 1] = base + self.ends[i]
            base += chunk.out.len
        return ids, result

    cdef list _counts(self):
        cdef long k
        cdef Py_ssize_t i
        cdef size_t a
        cdef list result = []
        for k in range(self.n_chunks):
            a = 0
            for i in range(self.chunks[k].first, self.chunks[k].stop):
                result.append(self.ends[i] - a)
                a = self.ends[i]
        return result


# Performance notes
#
# Offsets (encode_offsets): the walk notes two numbers per piece, not per
# token, and the pass after it reads token lengths from the table, so the
# ids path pays one test of a NULL pointer per piece. Measured on the first
# 5,000 lines of en.txt, one call a line, old and new core interleaved 15
# times (CPU, best): Llama 3 1.114 -> 1.122 us, Qwen 3 1.363 -> 1.361 us for
# encode; encode_offsets with its three arrays ~2.2 us. Alternatives not
# taken: a second scan of the pieces for offsets (a copy of the walk), and
# the offsets found per token inside the merge loop (work for the ids path).

#
# Offsets of a batch (BatchJob, BATCH_OFFSETS): each text is encoded into
# its chunk's ids, as the ids-only kinds do, and its marks are counted from
# its first id for _token_offsets. First 5,000 lines
# of en.txt, Llama 3, one process (CPU, best of 6, 2 cores shared with other
# work): walk.encode one call a line ~1.9-2.2 us, encode_offsets_many on one
# thread 1.4-1.9 us, on two threads +20-30% CPU and no wall-clock gain while
# the machine's cores were taken by other processes (tokenizers' rayon
# batch showed wall == CPU time too). A thread starts and joins in ~90 us.

#
# The pre-token cache (a per-thread table of 64-byte entries, key and ids
# inline; ft_piece_cache.h) replaced a cache of each call's own (4096 slots
# pointing into the call's text and ids, for calls of 2 kB or more), so
# that one call per line and a batch's chunks reuse what earlier calls
# merged. Measured with cl100k_base, 2 cores shared with other work:
# * asked first for every piece of 2 to 48 bytes, or only for the pieces
#   that are no token whole (the token index first): on text seen before
#   (100 kB of en.txt encoded 20 times) first is 1.85x no cache on en
#   (14 vs 26 ms) and 1.5x on zh.txt; after the index only +12% on en,
#   since 77% of en's pieces are tokens whole and the index, not merging,
#   is their cost. On unseen text (warm on the first half of en.txt, time
#   the second) both are within noise of no cache; instruction counts and
#   simulated misses (cachegrind, 1 MB last level, 600 kB warm + 600 kB
#   timed) give en 97.9M "cycles" first, 101.2M index first, 98.1M
#   without; code 92.3M / 92.8M / 99.3M; zh 231.7M / 230.6M / 229.0M.
# * 16384 entries (1 MiB, the default) against 4096 and 65536: a 64k-entry
#   table holds 96% of en's pieces on a second pass (88% at 16k) but each
#   probe is then a miss of the 1 MB L2, and unseen en text ran 0.77x and
#   0.95x of no cache in two runs; 4k entries hold 78%.
# * the gate (FT_PC_WINDOW): with the index asked first, zh.txt's probes hit
#   21% of the time and saved no merging (the pieces that repeat are short
#   ones that merge in a step), while each probe was a cache miss: 10% of
#   the profile. The gate limits what text that does not repeat costs.
#   Its first rule (closed for 15 windows after one of few hits, nothing
#   kept meanwhile) closed itself again on reopening, since its own misses
#   came first: one call a line, the bench's seven passes over 5,000 lines,
#   llama3 en probed the cache in 3 of 7 passes and qwen3 en in 3 partial
#   ones (probe counts of an instrumented build). Now a 1-in-8 sample by
#   hash is always probed and kept and decides alone (ft_piece_cache.h):
#   every pass after the second probes all. bench/test_hf_ids_peers_bench.py
#   lines, quicktok-v1 / fasttok, base 7665035 -> 42f9993 (with the per-call
#   cuts of that commit), two alternating pairs at load 5-6: llama3 en
#   1.67/1.48 -> 1.91/2.07, code 1.41/1.32 -> 1.55/1.56, zh 1.27/1.35 ->
#   1.40/1.45; qwen3 en 1.49/1.54 -> 2.01/1.94, code 1.18/1.21 -> 1.63/1.51,
#   zh 1.34/1.13 -> 1.52/1.56.
# * the sample at 1 in 16 or 1 in 32 pieces instead of 1 in 8, against
#   qwen3 zh's steady regression (text seen once keeps its sample): 3,000
#   unseen lines, callgrind, 44.58M -> 44.42M instructions at 1 in 16, D1
#   read misses 295.6k -> 300.7k; CPU medians of 9 alternating processes
#   (load 9-12) 29.1 / 30.7 / 30.5 ms; qwen3 code's lines one call each
#   19.65M -> 19.60M instructions. Not kept: the sample is not the cost.
# * the probe's first load was 63% of _encode_segment's samples (llama3,
#   en lines); with the next piece cut, hashed and its set prefetched
#   before this one is encoded, 41%.
# Figures (bench/pretoken_cache_speed.py, FASTTOK_PRETOKEN_CACHE=0 for
# off; load average 6-7 on 2 cores), one call per line, the first 5,000 lines, cache off -> on, MB/s: cl100k
# en 36.0 -> 49.2, code 35.1 -> 52.1, zh 23.1 -> 30.4; llama3 en 29.0 ->
# 39.1, code 28.0 -> 35.6, zh 18.4 -> 23.7 (quicktok-v1 / fasttok time
# 1.16-1.37 -> 1.34-1.90). Whole files, warm on the first half, the unseen
# second half timed: no difference outside noise (en 16k entries 35 MB/s,
# 64k 40, off 42), and gigatoken 0.10.0 takes 0.33-0.43 of fasttok's time
# on en and code whatever the cache: there the cost is the token index
# lookup (28% of a profile, a filter bit and an index slot, both cache
# misses), the scanner and merging words seen once, not what a cache saves.
#
# Where whole-text encode goes (cachegrind, cl100k_base encode_ordinary of
# 600 kB of en.txt after its first half, 136,332 pieces, 153k ids, the
# scanners of b00ec83): 64.3M instructions, 470 a piece. The scanner 14.5M;
# _encode_segment with the cache inlined 20.2M (hash, probe, the gate's
# counts, the copy: ~150 a piece); merging the pieces the cache misses
# ~16M (_merge_linear 7.3M, the whole piece lookup 2.5M, _merge_heap 1.5M);
# the str's UTF-8 (en.txt's str is UCS-2: utf8_write) 3.9M; the list of
# ints ~3.5M. A hit of one id copied by a store instead of memcpy was
# tried: 8.31M -> 8.42M in _encode_segment's own lines, not kept.
#
# What the pre-token cache can save on unseen text (the bulk bench's steady
# protocol: warm on the first half of a corpus file, time the second), by
# cl100k_base's pieces of the second half: a token whole / one byte / to
# merge and seen in the first half / to merge and new: en 79.9% / 11.9% /
# 2.2% / 6.0% (the new ones 12% of the bytes), code 61.7 / 31.9 / 0.3 /
# 6.1, zh 16.1 / 0.6 / 0.5 / 82.8, multi 36.3 / 15.6 / 7.3 / 40.7. A whole
# token costs one index lookup with or without the cache, so only the third
# class is saved, and the time goes to the scanner, the index and merging
# the new pieces: cpu-clock samples (perf) of en put 28% in _merge_linear,
# half of them on the first load of a pair memo slot. Steady MB/s by cache
# entries (load 2, CPU, best of 5): en 0: 76.5, 16k: 72.5, 64k: 71.7, 256k:
# 68.2; code 99.3 / 115.4 / 118.7 / 113.5; zh 51.9 / 46.5 / 46.9 / 46.6.
# Hence (_encode_segment): a piece is hashed once (hash_bytes, the index's
# hash, which the cache takes too) a piece ahead, its filter word, index
# bucket and cache set are fetched then, it is looked up whole first, and
# only a piece that merges is asked of the cache and kept there (the
# entries then go to what they save); _merge_linear fetches the memo slots
# of a merge's two new pairs before it moves the parts. 10,000 unseen en
# lines (callgrind, 1 MB last level): 24.7M -> 26.1M instructions, 71.8k ->
# 54.4k last-level misses (prefetches are not simulated); zh unchanged
# (83.8M -> 83.6M). Timed at load 7.5 (best of 15, alternating builds):
# en 53.5 -> 54.2, code 94.5 -> 102.4, zh 47.5 -> 49.1, multi 39.5 -> 40.1.
#
# zh.txt (cl100k_base, 4,000 unseen lines, 550 kB; callgrind): 83.6M
# instructions, 152 a byte: _merge_linear 21.5M, _char_parts (the atomic
# characters' two table reads) 13.6M, bpe_merge_parts' first pair values
# 12.2M, the scanner 9.9M + 2.7M of Unicode tables, the UTF-8 of the UCS-2
# str 8.1M, _merge_linear's three memmove calls a merge 4.7M. 83% of its
# pieces merge and are new, so no cache helps; merging is the cost. One
# loop moving the three arrays instead of the memmoves was tried: GCC turns
# it back into the same three calls (-ftree-loop-distribute-patterns).
#
# The hot table (_fill_hot, 4096 slots of 16 bytes) in front of the token
# index: 46% of cl100k_base's en pieces of the unseen half (50% of code)
# are found there, without hash_bytes, the three prefetches, the filter
# bit or the index probe. cachegrind (1 MB last level), 6,000 unseen en
# lines after the first half of en.txt, encode_ordinary_batch on one
# thread: 21.38M -> 19.29M instructions (47,916 pieces: ~445 -> ~400 a
# piece), D1 read misses 150k -> 142k, last-level misses 63k -> 62k: the
# frequent tokens' filter words and index lines were already in L2, so
# what it saves is instructions. Its hit rate is bounded by how well a
# vocabulary's ranks follow the text: direct mapped 46.3%, 2-way 49.3%,
# 4-way 50.3%, 8192 slots 52.1%, 16384 56.6%, pieces of 8 bytes too
# +0.9% (cl100k en, a model of the table in Python). A CoreBPE over
# cl100k's tables, the hot table's build included, takes 0.37 ms.
# The same 6,000 unseen lines, builds without and with it (cachegrind):
# _encode_segment's own instructions o200k en 7.42M -> 5.71M, llama3 en
# 7.41M -> 5.50M (whole walk 21.05M -> 18.82M), cl100k code 6.74M -> 4.81M
# (14.65M -> 12.93M), qwen3 code 6.81M -> 4.84M. Timed (the unseen second
# half of each file in a fresh process, the two builds alternating, CPU,
# best of 5, load 9-10 on 2 cores): cl100k en 52.9 -> 54.2 MB/s, code
# 86.8 -> 84.6 (noise); at load 1.1-1.3, 40 alternating pairs each, the
# median ratio with / without is en 1.007 (20 of 40 faster), code 1.032
# (26 of 40); hashing and fetching every piece, hot or not (no branch on
# the hot lookup), was no different (en 0.984, code 1.006). The walk is
# bound by the misses of the pieces the table does not hold (the index,
# the pre-token cache, merging), not by instructions.
#
# Batches of pieces (_encode_segment, AHEAD) and the index's tails
# (_tables' index.tails). perf cpu-clock samples of the bulk bench's steady
# protocol (cl100k_base, the unseen second half of en.txt, 10 rounds in one
# process, only the timed call sampled) put 37% of the time in
# _encode_segment, and within it 19% on the first read of an index slot
# fetched a single piece ahead and ~17% on the offsets of a token longer
# than 8 bytes, whose bytes memcmp then read (memcmp 7% of all samples):
# 8.5% of en's unseen pieces are such tokens. Cutting and fetching 16
# pieces before encoding the first, then comparing keys of 9 to 16 bytes by
# their slot and tail words: new / old in alternating fresh processes (best
# of 3 rounds each, load 6-7), en median ratio 1.19 (9 of 10 faster), code
# 1.02. Tried on top and not kept: asking the batch's hot slots in a loop
# of their own after fetching them (en 0.89, 0 of 10 faster); reading the
# token filter as the batch is cut and fetching the index bucket only for a
# piece whose bit is set, else only its pre-token cache set, so fewer lines
# are in flight (en 0.98, 5 of 10). After the change, en's samples:
# _encode_segment 35-41% (of which the hot table's slot, an L2 read, ~14%,
# the first index slot ~12%, the pre-token cache probe ~7%), _merge_linear
# 31-37%, the scanner 9-12%; code's: _encode_segment 40%, _merge_linear 22%,
# the scanner 23%.
# The bucket's tails are not fetched ahead with the bucket: a tail is read
# only for a piece of 9 to 16 bytes whose slot word matched, and an extra
# line in flight for every piece of more than 8 bytes cost more than it
# hid. Builds fetching them / not, alternating fresh processes, the steady
# protocol's CPU time (ms, best of 3 in a process, median of 7-9, load
# 9-12 on 2 cores): cl100k en 22.0 -> 19.9 and 23.6 -> 20.9 (the builds in
# either order), o200k en 24.4 -> 22.3, cl100k code 13.8 -> 11.8, llama3
# zh 28.6 -> 26.3 and 23.4 -> 23.5. Fetching them only for pieces of 9 to
# 16 bytes: cl100k en 22.3, llama3 zh 27.9. Not fetching the filter word
# either: cl100k en 19.5 against 18.3, code 12.1 against 11.5; nor the
# pre-token cache set: 19.8 and 11.3; qwen3 zh 24.6-24.8 all three: both
# fetches kept. On Chinese the tails fetch was all cost: 3,000 unseen
# lines of zh.txt on Llama 3 (callgrind, 1 MB last level) read a tail 56
# times, with no miss, while most of their pieces are over 8 bytes; the
# same lines on the trees of ac78c56 and 5a5c9e7: 41.08M -> 39.44M
# instructions, D1 read misses 270.5k -> 272.9k, last-level 71.4k ->
# 70.6k (the tails array itself costs Llama 3's zh nothing measurable).
#
# Parts between space cuts, asked of the pre-token cache before any scan
# (tried, not kept). A part ran from one space cut to the next: a space
# after a printable ASCII character other than a space, where every
# scanner but DeepSeek-V3's starts a piece and no piece looks past it. Each
# part of 2 to 48 bytes was hashed and its set fetched AHEAD parts at a
# time, then asked under an owner of its own; a hit gave all its ids, a
# miss went through the walk by pieces and was kept. A model of the 16k
# entry table on the steady halves put the parts' hit rate at en 69%, code
# 79%, multi 60% (zh's parts are whole lines, over 48 bytes). Callgrind,
# cl100k_base, the bulk bench's steady protocol (en, 220,889 parts for
# 326,053 pieces): 113.9M -> 139.0M instructions. The scanner fell from
# 29.4M to 18.7M, but the parts' own cut, hash, probe, copy and insertion
# took 35.7M (~160 a part), and merging rose from 21M to 31M: parts crowd
# the pieces that merge out of the table, and a part new only by its sign
# (" word,") merges its word again. With the table left to parts alone
# (a miss's pieces not asked or kept): 138.6M, merging 39M. CPU medians of
# fresh processes, the two builds alternating (load ~5): en 19.9 -> 25.4
# ms (0 of 7 faster), code 12.9 -> 14.8 ms (0 of 7). A part that is one
# frequent token (" the") costs a cut, a hash and a probe against a scan
# and a hot slot, the same; only parts of several pieces gain, and en has
# 1.48 pieces a part.
#
# Where the steady half of en.txt goes (cl100k_base, the bulk bench's
# protocol, callgrind; 320k pieces: 80% tokens whole, 12% one byte, 4.5%
# merged and found in the pre-token cache, 3.3% merged and new). The cache's
# hits are few, so its hit path is not where the time is: _encode_segment's
# own lines (hot table, hash, index, the loop) ~36M of 92.8M, ~113 a piece;
# the scanner ~19M; merging the ~12k pieces the cache misses ~19M, ~1,500
# instructions each (_merge_linear's scan for the lowest pair ~6M of it, the
# pair lookups most of the rest). Before the long entries (ft_piece_cache.h),
# 182 pieces over 48 bytes (box-drawing rules of 220 bytes, 41 distinct)
# took 6.6M through the merge queue. Simulated cycles (Ir + 10 per L1 miss
# + 100 per last-level miss) 109.6M -> 101.9M with this session's changes
# (the long entries, the rare paths out of the loop); qwen3 zh 146.4M ->
# 136.2M (the index probed once a piece, the ids buffer reserved for
# Chinese: last-level write misses 45.9k -> 6.2k).
#
# The thread's token entries (ft_piece_cache.h, ft_pc_token_find): a piece
# of 2 to 15 bytes that the hot table lacks is asked of a direct-mapped
# table of 32-byte entries (its first 8 bytes, the rest and its length,
# the model's owner, the code) before it is hashed for the index, and a
# piece the index finds to be one token is kept there. Callgrind with its
# cache simulation, the bulk bench's steady protocol (one thread, the
# unseen second half after the first; /tmp/b1s11/matrix.sh), 4096 entries
# against none, instructions: cl100k en 93.60M -> 90.53M, code 79.49M ->
# 73.15M, zh 98.03M -> 98.05M, multi 130.00M -> 127.73M; o200k en 102.59M
# -> 99.01M, code 77.47M -> 69.26M, zh 109.64M -> 110.09M, multi 153.82M
# -> 150.00M. cl100k en by entries: 1024 94.35M (more than none: most
# pieces missed, and each miss is a probe and a store more), 4096 90.53M,
# 8192 88.71M; D1 read misses 759k none, 829k at 1024, 734k at 8192.
# Hence 8192 (256 KiB; the L2 is 1 MiB a core), against 4096: cl100k en
# 90.53M -> 88.76M, code 73.15M -> 72.75M, qwen3 en 104.95M -> 103.32M
# (D1 read misses 758k -> 734k, 404k -> 399k, 917k -> 881k).
#
# Tried in session 12 (callgrind with its cache and branch simulation, the
# bulk bench's steady protocol: one thread, the unseen second half after
# the first; /tmp/b1s12/steady.py):
# * the hot table at 8192 slots (128 kB) against 4096: instructions cl100k
#   en 90.69M -> 89.67M, code 71.29M -> 70.84M, o200k en 97.00M -> 96.06M,
#   qwen3 en 103.45M -> 102.23M; D1 misses cl100k en 911k -> 892k (the
#   index and token entries it spares missed more than its own lines). Kept;
#   it tries twice the codes, so a CoreBPE over cl100k's tables builds in
#   0.55 ms instead of 0.18-0.23 (CPU, best of 20, load ~7).
# * the gate open at one hit in 8 probes instead of one in 3
#   (FT_PC_MIN_HIT_RATE): cl100k en 92.39M -> 91.33M, qwen3 en 107.49M ->
#   106.41M, multi -1.4% and -0.7%, but zh +1.2% on both (69.62M ->
#   70.45M, 87.78M -> 88.81M). The closed gate merged 22,975 of qwen3 en's
#   pieces, 6,426 at one in 8, yet only ~1,800 more hit: what it kept out
#   was mostly new. Not kept.
# * a piece's first 8 bytes read once in _ahead, by one load and a mask
#   where the piece ends 8 bytes or more before its segment does, for the
#   hot key, the token entry and the hash alike: instructions +1.7% to
#   +2.0% (the mask for every piece up to 48 bytes cost more than the
#   branches on the length it replaced), mispredicts -3%. Not kept.
#
# Session 13 (callgrind of the bulk bench's steady protocol, one thread,
# encode_ordinary_batch(flat=True) of the unseen second half after the
# first, --cache-sim=yes --branch-sim=yes --LL=8388608,16,64; est = Ir +
# 14 x D1 misses + 100 x LL misses + 15 x mispredicts; /tmp/p/steady.py):
# * the offsets of _flat written in their array rather than copied into it
#   through a bytes object: est cl100k en 152.02M -> 149.69M, code 113.09M
#   -> 111.02M, multi 173.37M -> 171.16M, zh 101.42M -> 101.12M. Kept.
# * the ids are still copied from the chunk's buffer into the array
#   (append_ids: cl100k en 1.45M instructions, 19k LL and 23k D1 write
#   misses, est ~3.7M, 2.4%). Not done: the array's memory is PyMem's,
#   grown with the GIL, where the walk grows its buffer by realloc without
#   it, and an array adopting a malloc'd block breaks under -X dev. The
#   copy now tests the ids too (write_ids), where _check_ids read them all
#   before memcpy did: est cl100k en 149.93M -> 148.20M, code 111.09M ->
#   109.32M, zh 101.23M -> 99.17M, multi 171.20M -> 168.99M; qwen3 en
#   172.66M -> 171.02M, code 120.93M -> 119.17M, zh 125.51M -> 124.03M,
#   multi 231.23M -> 229.61M. Kept. Timed with _merge_kept's change below
#   (alternating fresh processes, CPU medians, load 4.3-4.8): cl100k en
#   0.981 (12 of 15 faster), zh 0.971 (12 of 21); the session's tree
#   against the one before it (load ~5.4): cl100k en 0.919 (12 of 15),
#   code 0.932 (11 of 11), qwen3 multi 0.977 (9 of 11).
# * _prepare fetching the str of the text 8 ahead (a batch's strs were
#   made long before and are each a miss here: cl100k en 50.7k D1 and LL
#   read misses in _prepare, est ~7M of 148M, invisible to callgrind's
#   count of a prefetch): alternating fresh processes, load ~4, cl100k en
#   0.988 (9 of 21 faster), code 0.987 (10 of 15). Not kept.
# * BatchJob's reference to each text (Py_INCREF in _prepare, Py_DECREF
#   when the job goes): 25k LL write misses at the job's end on cl100k en
#   (est ~2.5M, the strs evicted by the walk); needed, since the list may
#   change while the GIL is released.
# * What qwen3 en pays beyond cl100k en (102.24M against 89.68M
#   instructions, est 176.49M against 152.02M before the NFC change of
#   _model_base): merging 21.2k pieces against 14.2k (_merge_linear 21.3M
#   against 16.1M, _encode_bytes 4.1M against 2.8M), though by tokenizers'
#   own pre-tokenizer 8.2% of qwen3's pieces and 8.3% of llama3's are no
#   token whole (6.8% and 6.9% unseen in the first half): 5,843 of qwen3's
#   merges are of tokens met for the first time, merged once to learn
#   whether they merge back into themselves (llama3 has the whole-piece
#   lookup; see below); and the NFC test of each
#   line that is not ASCII (in_form 3.26M, of which is_normalized 0.9M for
#   the 485 lines with box drawing; 2.44M with the new ranges).
# * qwen3's tokens first seen in the steady half (en: 5,843, merged once
#   each to learn merges_to_self, ~1,300 instructions a merge; 2,428 of
#   them of 2 to 7 bytes and under code 65,536, which _fill_hot passed over
#   because their hot slot was taken). _fill_hot learning every such token,
#   slot taken or not, for a model without the whole-piece lookup: qwen3
#   en 100.07M -> 97.89M instructions, but a model build 46-48 -> 56-60 ms
#   (CPU, fasttok.load of the file a second time in a process, 3 runs each,
#   load ~4.5). Not kept: it charges every load for one pass of unseen text.
# * Timed, the tree before both changes against after (alternating fresh
#   processes, the steady call's CPU time, medians, load 3.2-3.8 on 2
#   cores): qwen3 multi 0.969 (9 of 15 faster), zh 0.988 (13 of 21), en
#   1.008 (6 of 11); cl100k en 1.004 (4 of 11). Only multi's gain shows.
