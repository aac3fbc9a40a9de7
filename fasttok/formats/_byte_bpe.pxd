# Byte-level BPE encoding and decoding (CoreBPE) and its threaded batches,
# for the Cython modules that cimport them.
from cpython.object cimport PyObject
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t

from fasttok.models._bpe cimport Dropout, IdBuffer, PairMemo
from fasttok.models._model_base cimport ModelBase, in_form
from fasttok.pre_tokenizers._pretokenize cimport ScanFn
from fasttok.shared._piece_cache cimport ft_pc_table
from fasttok.shared._tables cimport ByteStrings, TokenTables, TokenTablesView
from fasttok.shared._utf8 cimport Utf8Source, Utf8Text


# Encodes ids[:n] as a list of ints (code_ids: the id of each code for a
# sparse id space, NULL when codes are ids).
cdef list ids_to_list(const uint32_t* ids, size_t n, size_t n_ids, const uint32_t* code_ids)
# Appends the ids of codes[:n] to the array('I') ids (code_ids as in ids_to_list).
cdef int append_ids(object ids, const uint32_t* codes, size_t n, size_t n_codes,
                    const uint32_t* code_ids) except -1


cdef struct Scratch:
    # What one call (or one batch chunk) uses between pieces: the thread's
    # pre-token cache (NULL: off) and its pair memo (entries NULL: none).
    ft_pc_table* pieces
    PairMemo memo

cdef struct HotSlot:
    # One slot of a model's hot table (see CoreBPE._fill_hot): a piece of 2
    # to 7 bytes as one word, its bytes below its length (0: empty), and the
    # one code that piece encodes to.
    uint64_t key
    uint32_t code
    uint32_t unused

cdef struct SpecialMatch:
    Py_ssize_t start
    Py_ssize_t length
    uint32_t index

cdef struct Decoder:
    # id -> bytes. The ordinary ids read the tables' own token bytes (for a
    # cached encoding, the cache file's): a copy of them was 3 MB and a
    # pass over a tuple of 200k bytes objects. Only the other ids, the
    # specials, have bytes of their own, in extra, which covers the ids
    # extra_base .. extra_base + extra.n - 1. (ordinary is a copy of the
    # tables' struct; the arrays stay theirs.)
    ByteStrings ordinary
    ByteStrings extra
    uint32_t extra_base
    # For a sparse id space (else NULL): the id of each ordinary slot and of
    # each extra entry, ascending; the entries are the distinct special ids,
    # with codes extra_base + entry.
    const uint32_t* slot_ids
    const uint32_t* extra_ids

cdef struct Span:
    const uint8_t* src
    uint64_t length

cdef struct BatchChunk:
    Py_ssize_t first  # texts[first:stop]
    Py_ssize_t stop
    IdBuffer out  # their ids, one text after another
    # BATCH_OFFSETS: each text's character offsets (start and end in turn)
    # then its word indices, 3 numbers a token, from 3 times its ids' start
    IdBuffer spans
    long state  # CHUNK_*; written by the thread that encoded it, with release


cdef class CoreBPE(ModelBase):
    cdef TokenTables tables
    cdef const TokenTablesView* view
    cdef ScanFn scan
    cdef object splitter
    cdef bint whole_piece_lookup
    cdef uint64_t cache_owner  # this model's key in the pre-token cache
    cdef HotSlot* hot  # the frequent short pieces that are one code (_fill_hot)
    # special tokens: bytes -> index into special_ids
    cdef TokenTables special_tables
    cdef uint32_t* special_ids
    cdef Py_ssize_t n_specials
    cdef Py_ssize_t* special_lengths  # distinct lengths, longest first
    cdef Py_ssize_t n_special_lengths
    cdef uint8_t special_first[256]
    cdef int single_first_byte  # the byte every special starts with, or -1
    cdef Decoder decoder
    cdef readonly object special_order
    # what add_special_tokens=True adds (the format sets it; none by default)
    cdef public object post_processor
    cdef size_t n_ids  # every code the model produces or decodes is below it
    cdef uint32_t* code_ids  # the id of each code; NULL when codes are ids
    cdef int _fill_sparse(self, dict specials, ids) except -1
    cdef int _fill_decoder(self, dict specials, decode_tokens) except -1
    cdef int _fill_hot(self) except -1
    cdef bint _next_special(self, const uint8_t* s, Py_ssize_t pos, Py_ssize_t n,
                            const uint8_t* allowed, SpecialMatch* found) noexcept nogil
    cdef int _encode_segment(self, const uint8_t* s, Py_ssize_t start, Py_ssize_t end,
                             IdBuffer* out, Scratch* scratch, Dropout* drop,
                             IdBuffer* marks) except -1 nogil
    cdef int _encode_segment_plain(self, const uint8_t* s, Py_ssize_t start, Py_ssize_t end,
                                   IdBuffer* out, Dropout* drop, IdBuffer* marks) except -1 nogil
    cdef int _encode_bare_piece(self, const uint8_t* p, size_t n, IdBuffer* out,
                                Dropout* drop) except -1 nogil
    cdef int _merge_kept(self, const uint8_t* p, size_t n, uint64_t h, int64_t token,
                         IdBuffer* out, ft_pc_table* pieces, PairMemo* memo) except -1 nogil
    cdef int _encode_long_piece(self, const uint8_t* p, size_t n, IdBuffer* out,
                                ft_pc_table* pieces, PairMemo* memo) except -1 nogil
    cdef int _encode_segment_generic(self, const uint8_t* s, Py_ssize_t start, Py_ssize_t end,
                                     IdBuffer* out, Dropout* drop) except -1
    cdef int _encode_utf8(self, const uint8_t* s, Py_ssize_t n, const uint8_t* allowed,
                          bint use_specials, IdBuffer* out, Scratch* scratch,
                          Dropout* drop, IdBuffer* marks) except -1 nogil
    cdef int _encode_text(self, str text, const uint8_t* allowed, bint use_specials,
                          IdBuffer* out, Dropout* drop=*) except -1
    cdef int _encode_bytes(self, const Utf8Text* u, const uint8_t* allowed, bint use_specials,
                           IdBuffer* out, Dropout* drop, IdBuffer* marks) except -1
    cdef Py_ssize_t _token_offsets(self, const uint8_t* s, size_t size, const IdBuffer* out,
                                   const IdBuffer* marks, int32_t* offsets,
                                   int32_t* words) noexcept nogil
    cdef const uint8_t* _mask(self, bytes allowed) except? NULL
    cdef int _encode_allowing(self, str text, bytes allowed, IdBuffer* out,
                              Dropout* drop=*) except -1


cdef class BatchJob:
    cdef CoreBPE core
    cdef list texts
    cdef Py_ssize_t count
    # our own references to texts[:n_refs], read by _prepare: the caller's
    # list may change meanwhile
    cdef PyObject** refs
    cdef Py_ssize_t n_refs
    cdef Utf8Source* sources
    cdef long prepared  # chunks whose sources are read; atomic
    cdef size_t* ends  # where each text's ids end in its chunk's buffer
    cdef BatchChunk* chunks
    cdef long n_chunks
    cdef long next_chunk  # the next chunk to claim; atomic
    cdef long failed  # set when a thread's work() raised; atomic
    cdef object allowed  # keeps the mask alive
    cdef const uint8_t* mask
    cdef bint use_specials
    cdef int kind
    cdef list lists
    cdef uint8_t* declined  # BATCH_OFFSETS: the texts encode_offsets declines
    # the normalizer (see BatchJob), its stage's quick check (None without
    # one) and stable ranges, and the mask as bytes for its respell; given:
    # NULL without a normalizer, else for each text the codes of the ids the
    # normalizer gave for it (count first; NULL for a text encoded here)
    cdef object normalizer
    cdef object is_normalized
    cdef bytes stable_ranges
    cdef bytes allowed_bytes
    cdef uint32_t** given
    cdef void _plan_chunks(self, Py_ssize_t count, Py_ssize_t chunk_texts, int threads) noexcept
    cdef int _prepare(self, const BatchChunk* chunk) except -1
    cdef object _respelled(self, Py_ssize_t i, str text)
    cdef int _encode_chunk(self, BatchChunk* chunk) except -1 nogil
    cdef long _collect(self) except -1
    cdef int _build_lists(self, const BatchChunk* chunk) except -1
    cdef int _offsets_text(self, Py_ssize_t i, const uint8_t* data, size_t size,
                           BatchChunk* chunk, Scratch* scratch, IdBuffer* marks) except -1 nogil
    cdef int _build_offsets(self, const BatchChunk* chunk) except -1
    cdef object _flat(self)
    cdef list _counts(self)
