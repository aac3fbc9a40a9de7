# Unigram (SentencePiece / GGUF t5) segmentation: piece trie and Viterbi.
from libc.stdint cimport int32_t, uint8_t, uint32_t, uint64_t

cdef struct Span:
    # One segment of the normalized text: bytes [start, end) are token id.
    uint32_t id
    uint32_t start
    uint32_t end
    uint32_t flags

cdef struct SpanBuf:
    Span* data
    size_t len
    size_t cap

cdef int spans_reserve(SpanBuf* buf, size_t extra) except -1 nogil
cdef int spans_push(SpanBuf* buf, uint32_t id, uint32_t start, uint32_t end,
                    uint32_t flags) except -1 nogil
cdef void spans_free(SpanBuf* buf) noexcept nogil

cdef struct BestPath:
    # The best segmentation of the first `end` bytes ends with token id,
    # which starts at byte `start` (-1: no segmentation reaches here yet).
    double score
    int32_t start
    uint32_t id

cdef enum:
    # Piece kinds as the Viterbi sees them.
    KIND_NORMAL = 0
    KIND_USER = 1      # user-defined: the length bonus / zero score
    KIND_UNUSED = 2    # skipped by sentencepiece

cdef struct PieceTrie:
    # A byte trie over the pieces. Children of the root are a direct table;
    # deeper edges live in one open-addressing hash keyed by (parent, byte).
    int32_t root[256]        # child of the root for each byte, or -1
    int32_t* values          # node -> piece id, or -1
    uint64_t* keys           # (parent << 8 | byte); 0 = empty slot
    uint32_t* children
    uint64_t mask
    uint32_t n_nodes

cdef class UnigramModel:
    cdef PieceTrie trie
    cdef float* scores
    cdef uint8_t* kinds
    cdef readonly uint32_t n_pieces
    cdef readonly uint32_t unk_id
    cdef readonly float min_score
    cdef readonly float max_score
    cdef readonly float unk_score
    cdef readonly bint llama_cpp
    cdef int viterbi(self, const uint8_t* s, size_t n, SpanBuf* out) except -1 nogil
