# SentencePiece processing (normalizer -> model -> unknown rule -> ids), for
# the Cython modules that cimport it.
cimport cython
from libc.stdint cimport int32_t, uint8_t, uint32_t, uint64_t

from fasttok.models._bpe cimport ItemHeap, PairMemo
from fasttok.models._model_base cimport ModelBase
from fasttok.normalizers._spm_normalizer cimport Normalizer, SymbolMatcher
from fasttok.shared._growth cimport ByteBuf, OffsetBuf
from fasttok.shared._tables cimport ByteStrings, TokenTables
from fasttok.models._unigram cimport IdBuf, SpanBuf, UnigramModel, ViterbiScratch


cdef struct CacheSlot:
    uint64_t hash        # 0: empty
    uint32_t key_at      # into WordCache.keys
    uint32_t key_len
    uint32_t parts_at    # into WordCache.parts: (offset, id) pairs
    uint32_t n_parts

cdef struct WordCache:
    # The merged parts of each piece the text was cut into, for one call (one
    # thread): a piece's merges depend on its bytes alone, and words recur.
    CacheSlot* slots
    uint32_t mask
    uint32_t count
    uint8_t* keys
    size_t keys_len, keys_cap
    uint32_t* parts
    size_t parts_len, parts_cap

cdef struct Scratch:
    # Work arrays reused across the texts of one call (one thread): the
    # Viterbi's best paths, BPE's symbol arrays and word cache.
    ViterbiScratch vit
    uint32_t* starts
    uint32_t* rel
    uint32_t* ids
    uint8_t* frozen
    size_t cap
    WordCache cache
    PairMemo memo  # the thread's pair memo, attached for batches of BPE text

cdef struct Symbol:
    # One symbol of sentencepiece's BPE agenda (the exact path): its bytes
    # are s[start:start + size]; prev/next link the live ones (-1 at the ends).
    uint32_t start
    uint32_t size
    int32_t prev
    int32_t next
    bint frozen

cdef struct RevMerge:
    # For one UNUSED piece: the two symbols of the last pushed pair that
    # would make it (their sizes; the content is the piece itself).
    uint32_t left_size
    uint32_t right_size
    bint set

cdef struct Unknowns:
    # The unknown rule: what a piece the model could not cover becomes.
    uint32_t unknown_id      # the model's id for such a piece (NO_TOKEN is one too)
    uint32_t unk_id          # the vocabulary's unknown piece
    bint bytes_for_unknown   # its bytes as byte pieces (byte fallback)
    bint merge_unknown       # else one unk_id for a run of unknown pieces
    uint32_t byte_ids[256]   # byte -> its byte piece, or NO_TOKEN

cdef struct PieceTable:
    # What each id is: its piece type, the byte of a BYTE piece, whether
    # llama.cpp's detokenize leaves it out, its piece bytes (the vocabulary's
    # text) and what it stands for (▁ as a space).
    uint8_t* types
    uint8_t* byte_of
    uint8_t* hidden
    ByteStrings pieces
    ByteStrings rendered

cdef struct DecodeOptions:
    bint strip_dummy_space         # sentencepiece: a leading ▁ is the dummy prefix
    bint remove_extra_whitespaces  # sentencepiece: every leading ▁ piece goes
    bint add_space_prefix          # llama.cpp: strip one leading space

cdef struct DecodeState:
    # Where one decode (or stream) is in sentencepiece's Decode.
    ByteBuf run          # bytes of byte pieces whose character is not decided yet
    ByteBuf text         # decoded text the denormalizer has not read yet
    ByteBuf spaces       # denormalized trailing spaces (dropped at the end)
    bint is_bos_ws       # a leading ▁ would still be the dummy prefix
    bint bos_ws_seen
    bint any_text        # some decoded text so far
    bint dn_started      # the denormalizer is past its leading spaces
    bint dn_prev_space
    size_t* starts       # decode_with_offsets: where each id's text starts (else NULL)
    size_t index         # ids pushed so far
    size_t run_first     # index of the id whose byte is run.data[0]


@cython.final
cdef class SentencePieceBPE:
    # SentencePiece BPE segmentation of normalized text: the cut-and-merge
    # path, and sentencepiece's own agenda loop (UNUSED pieces, dropout).
    # Final, so that its methods are called directly, not through the
    # method table.
    cdef TokenTables tables
    cdef SymbolMatcher frozen           # user-defined symbols (none for llama.cpp)
    cdef TokenTables cut_blockers       # chars that precede an interior ▁ in a piece
    cdef bint has_blockers
    cdef bint exact_agenda              # with UNUSED pieces: sentencepiece's own loop
    cdef int32_t* unused_slot           # UNUSED piece id -> index into a RevMerge table
    cdef uint32_t n_unused
    cdef uint32_t* char_info            # code point < 0x10000 -> id | CHAR_JOINABLE
    cdef int _fill_char_info(self, list eligible) except -1
    cdef int _fill_unused(self, list unused, uint32_t n) except -1
    cdef int segment(self, const uint8_t* s, size_t n, SpanBuf* out, Scratch* sc) except -1 nogil
    cdef int agenda(self, const uint8_t* s, size_t n, SpanBuf* out, double alpha,
                    uint64_t* rng) except -1 nogil
    cdef uint32_t _piece_id(self, const uint8_t* p, size_t n) noexcept nogil
    cdef int _agenda_push(self, const uint8_t* s, Symbol* sym, int32_t left, int32_t right,
                          ItemHeap* ag, RevMerge* rev) except -1 nogil


cdef class SentencePieceCore(ModelBase):
    cdef Normalizer normalizer
    cdef Normalizer normalizer_rest     # llama SPM: fragments after the first
    cdef Normalizer denormalizer        # .model denormalizer_spec, or None
    cdef Normalizer normalizer_plain    # without the dummy prefix (encode_scored), or None
    cdef readonly bint llama_cpp
    cdef readonly str flavour
    cdef UnigramModel unigram           # the model: one of these two
    cdef SentencePieceBPE bpe
    cdef Unknowns unknowns
    cdef PieceTable table
    cdef readonly uint32_t n_tokens
    cdef DecodeOptions decoding
    cdef bytes unk_surface
    cdef dict piece_ids
    cdef readonly object special_order
    cdef readonly object vocabulary
    cdef tuple ints
    cdef int _fill_table(self, list tokens, list types, hidden) except -1
    cdef int _make_normalizers(self, vocab, list user_defined) except -1
    cdef Normalizer _spm_normalizer(self, vocab, list user_defined, bint dummy)
    cdef int _set_unknowns(self, vocab) except -1
    cdef bytes _render(self, Py_ssize_t i, bytes piece)
    cdef list _resolved_list(self, const uint8_t* s, size_t n, const SpanBuf* spans)
    cdef int _segment(self, const uint8_t* s, size_t n, SpanBuf* spans, Scratch* sc,
                      double alpha=*, uint64_t* rng=*) except -1 nogil
    cdef int _encode_normalized(self, const uint8_t* s, size_t n, SpanBuf* spans,
                                SpanBuf* toks, Scratch* sc) except -1 nogil
    cdef int _encode_fragment(self, const uint8_t* s, size_t n, bint first, ByteBuf* norm,
                              OffsetBuf* n2o, SpanBuf* spans, SpanBuf* toks,
                              Scratch* sc) except -1 nogil
    cdef int _encode_text(self, str text, bint first, SpanBuf* toks, ByteBuf* norm) except -1
    cdef list _ids(self, str text, bint first, double alpha=*, uint64_t* rng=*)
    cdef uint32_t* _batch_ids(self, list texts, uint64_t* ends) except? NULL
    cdef bytes _piece(self, Py_ssize_t i)
    cdef object _decode(self, tokens, bint with_starts)
    cdef int _append(self, ByteBuf* out, const uint8_t* p, size_t n) except -1
    cdef int _decode_push(self, DecodeState* st, uint32_t id, ByteBuf* out) except -1
    cdef int _decode_finish(self, DecodeState* st, ByteBuf* out) except -1
    cdef int _decode_byte_run(self, DecodeState* st, bint final, ByteBuf* out) except -1
    cdef int _decoded(self, DecodeState* st, const uint8_t* p, size_t n, bint unescape,
                      ByteBuf* out) except -1
    cdef int _denormalize(self, DecodeState* st, bint final, ByteBuf* out) except -1
    cdef int _denormalized(self, DecodeState* st, const uint8_t* rep, size_t n,
                           ByteBuf* out) except -1
    cdef int _denormalized_out(self, DecodeState* st, const uint8_t* p, size_t n,
                               ByteBuf* out) except -1
    cdef int _detokenize_llama(self, const uint32_t* ids, size_t count, ByteBuf* out,
                               size_t* starts) except -1


cdef class SentencePieceStream:
    cdef SentencePieceCore core
    cdef DecodeState st
