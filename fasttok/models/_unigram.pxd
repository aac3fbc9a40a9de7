# Unigram (SentencePiece / GGUF t5) segmentation: piece trie and Viterbi,
# and what the SentencePiece core shares with it (piece types, outputs).
from libc.stdint cimport int32_t, uint8_t, uint16_t, uint32_t, uint64_t

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

cdef inline int spans_push(SpanBuf* buf, uint32_t id, uint32_t start, uint32_t end,
                           uint32_t flags) except -1 nogil:
    # Defined here so the modules that cimport it inline it (a call across
    # extension modules goes through a function pointer).
    cdef Span* sp
    if buf.len == buf.cap:
        spans_reserve(buf, 1)
    sp = &buf.data[buf.len]
    sp.id = id
    sp.start = start
    sp.end = end
    sp.flags = flags
    buf.len += 1
    return 0

cdef void spans_free(SpanBuf* buf) noexcept nogil

cdef struct IdBuf:
    # The ids alone of a segmentation (UnigramModel.viterbi_ids): the caller
    # gives room for one id per byte of the text, so nothing grows.
    uint32_t* data
    size_t len

ctypedef fused out_t:
    SpanBuf     # ids and byte spans
    IdBuf       # ids alone (room for one per byte given)


cdef inline int emit(out_t* out, uint32_t id, uint32_t start, uint32_t end,
                     uint32_t flags) except -1 nogil:
    # One token appended to either kind of output (an IdBuf keeps the id alone).
    if out_t is SpanBuf:
        return spans_push(out, id, start, end, flags)
    else:
        out.data[out.len] = id
        out.len += 1
        return 0


cdef inline size_t one_char_len(uint8_t c) noexcept nogil:
    # sentencepiece's OneCharLen: a character's length from its lead byte alone
    if c < 0xC0:
        return 1
    if c < 0xE0:
        return 2
    if c < 0xF0:
        return 3
    return 4

cdef struct ViterbiScratch:
    # The best-path array of one caller (one thread), reused across its
    # calls; borrowed from the thread's cache unless owned. settled: after
    # a Viterbi, the last place before which its path went out early (no
    # node crosses it; the entries up to it are not all written).
    void* best
    size_t size
    int owned
    size_t settled

cdef void viterbi_scratch_free(ViterbiScratch* scratch) noexcept nogil

cdef enum:
    # SentencePiece piece types (the numbering of fasttok.vocab.TokenType)
    T_UNDEFINED = 0
    T_NORMAL = 1
    T_UNKNOWN = 2
    T_CONTROL = 3
    T_USER_DEFINED = 4
    T_UNUSED = 5
    T_BYTE = 6

cdef enum:
    # an appender's scored windows (UnigramWalk.encode_scored and
    # SentencePieceCore's): normalized bytes a cut leaves after it (a
    # charsmap's look-ahead, trailing whitespace; after the longest piece
    # too where no node crosses it), and how many places it tries
    SCORED_MARGIN = 64
    SCORED_TRIES = 8

cdef enum:
    # Piece kinds as the Viterbi sees them.
    KIND_NORMAL = 0
    KIND_USER = 1      # user-defined: the length bonus / zero score
    KIND_UNUSED = 2    # skipped by sentencepiece

cdef struct TrieUnit:
    # One node of the double-array piece trie: its children by byte c sit at
    # base + c, and a unit belongs to the node whose index is its check.
    int32_t base             # 0: no children
    int32_t check            # parent's index; -1 free, -2 the root
    int32_t value            # piece id ending here, or -1
    double score             # that piece's score as the Viterbi adds it

cdef struct TrieStep:
    # What a walk step reads of a unit (TrieUnit's first two fields)
    int32_t base
    int32_t check

cdef struct TrieLeaf:
    # What a match reads of a unit (TrieUnit's last two fields), with the
    # float score of sentencepiece and llama.cpp
    int32_t value
    float score

cdef struct TrieLeafD:
    # TrieLeaf with the double score of tokenizers (its scores are f64)
    int32_t value
    double score


cdef inline bint trie_step(const TrieStep* steps, int32_t* node, uint8_t c) noexcept nogil:
    # One step of a walk: node[0] moves to its child by byte c, or the walk
    # ends (False, node[0] unchanged) where it has none. The lattice and the
    # character table walk with it; the Viterbi spells the same step out
    # (see there).
    cdef int32_t child = steps[node[0]].base + c
    if steps[child].check != node[0]:
        return False
    node[0] = child
    return True

cdef struct LatticeNode:
    # One node of a text's full lattice: bytes [start, end) as piece id, with
    # the score a path through it adds
    uint32_t start
    uint32_t end
    uint32_t id
    double score

cdef struct NodeBuf:
    LatticeNode* data
    size_t len
    size_t cap

cdef struct CharEntry:
    # A character of 2 or 3 bytes as the Viterbi's first step from a position
    uint32_t id              # the node covering exactly it: its piece, or unk
    float score              # that node's score
    int32_t alone            # no piece goes on past it or ends inside it

cdef struct CharEntryD:
    # CharEntry with a double score (tokenizers)
    uint32_t id
    int32_t alone
    double score

cdef struct PieceTrie:
    TrieUnit* units          # units[0] is the root; built, then split into:
    TrieStep* steps          # the walk's array (8 bytes a unit)
    TrieLeaf* leaves         # parallel to steps: the piece ending at each unit
    TrieLeafD* dleaves       # the same with double scores (tokenizers; leaves is NULL then)
    size_t size              # always >= every base + 256, so base + c is in range
    uint32_t n_nodes

cdef class UnigramModel:
    cdef PieceTrie trie
    cdef double* scores
    cdef uint8_t* kinds
    cdef readonly uint32_t n_pieces
    cdef readonly uint32_t unk_id
    cdef readonly double min_score   # float-valued but for tokenizers
    cdef readonly double unk_score
    cdef size_t reach            # the most bytes a lattice node spans
    cdef CharEntry* chars        # 2- and 3-byte characters by blocks of 64 (see _fill_chars)
    cdef CharEntryD* dchars      # the same with double scores (tokenizers; chars is NULL then)
    cdef uint16_t char_block[1056]  # which block holds a character's entry
    cdef readonly bint llama_cpp
    cdef readonly bint tokenizers
    cdef int populate(self, const uint8_t* s, size_t n, NodeBuf* out) except -1 nogil
    cdef int viterbi(self, const uint8_t* s, size_t n, SpanBuf* out,
                     ViterbiScratch* scratch) except -1 nogil
    cdef int viterbi_ids(self, const uint8_t* s, size_t n, IdBuf* out,
                         ViterbiScratch* scratch) except -1 nogil
    cdef int viterbi_from(self, const uint8_t* s, size_t n, SpanBuf* out,
                          ViterbiScratch* scratch, double start, double* margin) except -1 nogil
    cdef int viterbi_scored(self, const uint8_t* s, size_t n, SpanBuf* out,
                            ViterbiScratch* scratch, double start, double* end) except -1 nogil
    cdef double score_at(self, const ViterbiScratch* scratch, size_t key) noexcept nogil
    cdef int own_scratch(self, ViterbiScratch* scratch, size_t n) except -1 nogil
    cdef bint crossed(self, const uint8_t* s, size_t n, size_t q) except -1 nogil
    cdef size_t converged(self, const ViterbiScratch* scratch, size_t q) except? 0 nogil
    cdef bint same_window(self, const uint8_t* s, size_t n, const ViterbiScratch* whole,
                          size_t p, size_t q, double score) except -1 nogil
