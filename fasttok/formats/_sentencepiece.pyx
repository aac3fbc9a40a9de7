"""SentencePiece processing: normalizer -> model -> unknowns -> ids / pieces.

This is the compiled model behind :class:`fasttok.Encoding` for SentencePiece
``.model`` files (``unigram`` and ``sentencepiece_bpe``) and for GGUF
``llama`` / ``t5`` vocabularies. One call converts the text to UTF-8 once,
then, without the GIL, normalizes it (:mod:`fasttok.normalizers._spm_normalizer`),
segments it with the Unigram Viterbi (:mod:`fasttok.models._unigram`) or the shared
BPE merge loop (:mod:`fasttok.models._bpe`), and resolves unknown pieces.

Two flavours, chosen by where the vocabulary came from:

``sentencepiece`` (``.model`` files), as ``SentencePieceProcessor.Encode``:
  user-defined symbols are kept whole; BPE merges only into NORMAL,
  USER_DEFINED and UNUSED pieces; an unknown piece becomes its UTF-8 bytes as
  ``<0xXX>`` pieces with byte fallback, otherwise consecutive unknown pieces
  merge into one ``unk``. Decoding hides control pieces, renders ``unk`` as
  ``unk_surface`` (`` ⁇ ``), reassembles byte pieces (invalid UTF-8 -> U+FFFD
  per byte), strips the dummy-prefix space and runs the model's
  ``denormalizer_spec`` over the text. ``SentencePieceStream`` decodes one
  id at a time through the same calls as ``decode_bytes``, holding back
  only what a later id can change; ``decode_with_offsets`` is the same
  pass, noting where each id's text goes out. ``sample_bpe`` is BPE-dropout.
``llama.cpp`` (GGUF files), as ``llama_tokenize`` / ``llama_detokenize``:
  special tokens are split out first (user-defined always, control only when
  allowed) and each text fragment gets the space prefix only at the start or
  after a special token (``llama``) or is normalized on its own (``t5``); BPE
  merges into any token; what no token covers becomes byte tokens (``llama``)
  or one ``unk`` per run (``t5``). Decoding drops control and unknown tokens
  and strips one leading space.

SentencePiece BPE treats the whole normalized text as one word, which makes
one long merge problem. Merges cannot cross a point that no piece spans, so
the text is cut before every ``▁`` whose preceding character never precedes an
interior ``▁`` in a piece (for most vocabularies: before every ``▁``; with
``allow_whitespace_only_pieces``: before every ``▁`` that follows a
non-space), and at user-defined symbols, which never merge. Each cut piece is
merged on its own with ``bpe_merge_parts``; the result is identical because
merges in different pieces never interact, and short pieces take the fast
linear path. Merge priority is the dense rank of ``-score``: higher scores
merge first and equal scores tie, so the leftmost pair wins as in
sentencepiece's agenda (score, then left index).

Performance notes (2-core VM, shared with other jobs; best of 3, lines of the
corpus files through ``encode_many``, against ``sentencepiece.encode(lines)``):

* Work arrays (best paths, symbol arrays) live in a per-call ``Scratch``
  reused across the texts of a batch instead of being allocated per text.
* BPE caches the merged parts of each cut piece for the call (a batch, or a
  text of 2 KB or more): a piece's merges depend on its bytes alone, and
  the cache makes en.txt lines a fifth faster. A cache shared between calls
  was not tried (threads would have to share it).
* ``encode_many`` pauses the garbage collector while it builds the result
  lists: 72k new lists triggered collections that scanned every live object
  (15% of the time).
* The normalizer copies ASCII that no rule can change without looking it up.
* BPE reads each character of up to 3 bytes from ``char_info`` (code point
  -> piece id, 256 KiB) instead of hashing it, and cuts the text on both
  sides of a character no longer mergeable piece contains (by bytes, which
  over-approximates "a merge can include it"): such a character is never
  merged, so the pieces on either side merge independently and it stays a
  part of its own. For a model that knows few CJK characters that turns a
  zh.txt line from one long merge problem into single characters: with
  botchan_bpe_8000_bytefallback zh.txt lines take a third of the time a
  hashed lookup without the cuts takes, 4x faster than sentencepiece.
* ``encode_many`` and ``encode_ordinary`` keep only the ids, resolved
  straight from the pieces (``_resolve`` into an ``IdBuf``) into a 4-byte-a-token array,
  not 16-byte token spans, which takes 40% off whole zh.txt (3 ids a
  character with byte fallback).
* ``encode_ordinary`` (one text) reads the str's cached UTF-8
  (``PyUnicode_AsUTF8AndSize`` makes it on first use and keeps it in the str,
  as sentencepiece's binding does), so encoding one str again converts it
  no more; a str with surrogates has no UTF-8 form and is repaired by
  ``utf8_text``. For a Unigram model without byte fallback the Viterbi
  writes the ids straight into the id array (``viterbi_ids``; unknowns
  merged in place by ``_resolve_in_place``), with no 16-byte spans. The
  normalized text and the id array are the thread's from the last call
  (``FT_SLOT_SPM_NORM`` / ``FT_SLOT_SPM_IDS``, up to 32 MiB each), not
  fresh pages. Together these halve the time of one call on whole zh.txt
  with botchan_bpe_8000_bytefallback (its 3 ids a character fill a large
  id array) and make it 2.1x faster than sentencepiece with
  botchan_unigram_5000 (best of 9 against it in the same run); lines
  (``encode_many``) gain nothing from them.
* BPE-dropout runs sentencepiece's own agenda loop over the whole text
  (``_bpe_agenda``, the loop that UNUSED pieces need anyway) rather than
  the cut pieces: a dropped merge changes which merges follow, so the
  cached parts of a piece do not apply, and sampled texts are short.
* The denormalizer is streamed rule by rule: at each place the trie walk
  tells whether a longer rule could still match once more text arrives,
  so a stream holds back at most one rule's worth of text. Running the
  whole normalizer again over everything held (the simple way) would make
  a stream quadratic in its length.
* ``decode_with_offsets`` notes each id's start in the decode pass itself
  (the run of byte pieces remembers the index of its first id) instead of
  a Python walk that re-derived every piece's surface and compared the
  result with ``decode_bytes``: en.txt as one id list,
  botchan_unigram_4000_bytefallback, 1.19 s -> 0.10 s (decode_bytes alone
  0.03 s). GGUF ``llama``/``t5`` decode through the same core, not a
  Python loop over token bytes: llama-spm, 0.45 s -> 0.02 s.
* Tried and left: a memo of pair values (``PairMemo``) keyed by the two part
  ids, as the byte-level models use, is wrong here, where a part that is no
  piece has the id NO_TOKEN (two such parts share a key, and
  (NO_TOKEN, NO_TOKEN) is the memo's empty key).

>>> from fasttok.vocab import Vocabulary
>>> v = Vocabulary(name="t", model="unigram", byte_level=False,
...                tokens=(b"<unk>", "▁a".encode(), b"b"), scores=(0.0, -1.0, -2.0),
...                token_types=(2, 1, 1), unk_id=0, add_dummy_prefix=True,
...                remove_extra_whitespaces=True, escape_whitespaces=True)
>>> core = SentencePieceCore(v)
>>> core.encode_ordinary("ab c"), core.encode_as_pieces("ab c")
([1, 2, 0], ['▁a', 'b', '▁c'])
"""

from array import array

cimport cython
from cpython.bytes cimport PyBytes_AS_STRING
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcmp, memcpy, memmove, memset

from fasttok.models._bpe cimport (ItemHeap, bpe_merge_parts, heap_pop, heap_push, pair_memo_init,
                    pair_memo_release, uniform01)
from fasttok.shared._id_lists cimport ids_list, ids_lists
from fasttok.shared._token_ids cimport token_id
from fasttok.normalizers._spm_normalizer cimport (Normalizer, SymbolMatcher,
                                                  valid_utf8_len)
from fasttok.shared._growth cimport ByteBuf, OffsetBuf, bytebuf_free, bytebuf_reserve, offsets_free
from fasttok.shared._tables cimport (NO_PAIR, NO_TOKEN, TokenTables, bmp_token_ids, fill_strings, find_bytes,
                       free_strings, hash_bytes, pair_value)
from fasttok.models._unigram cimport (SCORED_MARGIN, SCORED_TRIES, T_BYTE, T_CONTROL, T_NORMAL,
                        T_UNDEFINED, T_UNKNOWN, T_UNUSED,
                        T_USER_DEFINED, IdBuf, Span, SpanBuf, UnigramModel, emit,
                        one_char_len,
                        out_t, spans_free, spans_push, spans_reserve, viterbi_scratch_free)
from fasttok.shared._utf8 cimport (Utf8Source, Utf8Text, has_surrogate, utf8_capacity,
                     utf8_source, utf8_text, utf8_text_cached, utf8_write)

from fasttok.errors import FasttokError

cdef enum:
    # Span.flags of an output token
    FLAG_VOCAB_PIECE = 1    # its piece is the vocabulary's text (byte fallback, special)

cdef extern from "ft_thread_cache.h" nogil:
    # The normalized text and the id array of encode_ordinary, kept per
    # thread between calls
    int FT_SLOT_SPM_NORM
    int FT_SLOT_SPM_IDS
    void* ft_slot_claim(int which, size_t need, size_t* size)
    int ft_slot_give(int which, void* p, size_t size, size_t keep)

cdef enum:
    # bytes of each of those a thread keeps
    THREAD_KEEP = 32 << 20

cdef const uint8_t* SPACE_SYMBOL = <const uint8_t*>b"\xe2\x96\x81"

cdef enum:
    CACHE_SLOTS = 65536      # at most; a power of two, filled to half, then no more inserts
    CACHE_MAX_KEY = 64       # longer pieces are not cached
    # texts shorter than this get no cache of their own (its setup would cost
    # more than it saves); batches always get one
    CACHE_MIN_TEXT = 2048


cdef void scratch_free(Scratch* sc) noexcept nogil:
    pair_memo_release(&sc.memo)
    viterbi_scratch_free(&sc.vit)
    free(sc.starts); free(sc.rel); free(sc.ids); free(sc.frozen)
    sc.starts = sc.rel = sc.ids = NULL
    sc.frozen = NULL
    sc.cap = 0
    free(sc.cache.slots); free(sc.cache.keys); free(sc.cache.parts)
    sc.cache.slots = NULL
    sc.cache.keys = NULL
    sc.cache.parts = NULL


cdef int cache_init(WordCache* c, size_t text_bytes) except -1 nogil:
    # about one slot per 8 bytes of text, between 4096 and CACHE_SLOTS
    cdef size_t slots = 4096
    if c.slots != NULL:
        return 0
    while slots < CACHE_SLOTS and slots * 8 < text_bytes:
        slots *= 2
    c.slots = <CacheSlot*>calloc(slots, sizeof(CacheSlot))
    c.keys_cap = 64 * 1024
    c.keys = <uint8_t*>malloc(c.keys_cap)
    c.parts_cap = 32 * 1024
    c.parts = <uint32_t*>malloc(c.parts_cap * sizeof(uint32_t))
    if c.slots == NULL or c.keys == NULL or c.parts == NULL:
        with gil:
            raise MemoryError()
    c.mask = <uint32_t>(slots - 1)
    c.count = 0
    c.keys_len = c.parts_len = 0
    return 0


cdef inline CacheSlot* cache_find(WordCache* c, const uint8_t* p, size_t n,
                                  uint64_t h) noexcept nogil:
    # The slot holding key p[0:n], or the empty slot where it would go.
    cdef uint64_t i = h & c.mask
    cdef CacheSlot* slot
    while True:
        slot = &c.slots[i]
        if slot.hash == 0 or (slot.hash == h and slot.key_len == n
                              and memcmp(c.keys + slot.key_at, p, n) == 0):
            return slot
        i = (i + 1) & c.mask


cdef int cache_store(WordCache* c, CacheSlot* slot, const uint8_t* p, size_t n, uint64_t h,
                     const uint32_t* rel, const uint32_t* ids, size_t parts) except -1 nogil:
    cdef size_t j
    cdef void* grown
    if c.count * 2 >= c.mask:
        return 0
    if c.keys_len + n > c.keys_cap:
        grown = realloc(c.keys, 2 * c.keys_cap + n)
        if grown == NULL:
            with gil:
                raise MemoryError()
        c.keys = <uint8_t*>grown
        c.keys_cap = 2 * c.keys_cap + n
    if c.parts_len + 2 * parts > c.parts_cap:
        grown = realloc(c.parts, (2 * c.parts_cap + 2 * parts) * sizeof(uint32_t))
        if grown == NULL:
            with gil:
                raise MemoryError()
        c.parts = <uint32_t*>grown
        c.parts_cap = 2 * c.parts_cap + 2 * parts
    memcpy(c.keys + c.keys_len, p, n)
    for j in range(parts):
        c.parts[c.parts_len + 2 * j] = rel[j]
        c.parts[c.parts_len + 2 * j + 1] = ids[j]
    slot.hash = h
    slot.key_at = <uint32_t>c.keys_len
    slot.key_len = <uint32_t>n
    slot.parts_at = <uint32_t>c.parts_len
    slot.n_parts = <uint32_t>parts
    c.keys_len += n
    c.parts_len += 2 * parts
    c.count += 1
    return 0


cdef int scratch_reserve(Scratch* sc, size_t n) except -1 nogil:
    if n <= sc.cap:
        return 0
    free(sc.starts); free(sc.rel); free(sc.ids); free(sc.frozen)
    sc.cap = 0
    sc.starts = <uint32_t*>malloc(n * sizeof(uint32_t))
    sc.rel = <uint32_t*>malloc(n * sizeof(uint32_t))
    sc.ids = <uint32_t*>malloc(n * sizeof(uint32_t))
    sc.frozen = <uint8_t*>malloc(n)
    if sc.starts == NULL or sc.rel == NULL or sc.ids == NULL or sc.frozen == NULL:
        with gil:
            raise MemoryError()
    sc.cap = n
    return 0


cdef void decode_state_init(DecodeState* st) noexcept nogil:
    memset(st, 0, sizeof(DecodeState))
    st.is_bos_ws = True


cdef void decode_state_free(DecodeState* st) noexcept nogil:
    bytebuf_free(&st.run)
    bytebuf_free(&st.text)
    bytebuf_free(&st.spaces)


cdef inline bint _utf8_head(const uint8_t* s, size_t n) noexcept nogil:
    # Are s[0:n] the first bytes of a character valid_utf8_len would accept
    # (shortest form, no surrogate, at most U+10FFFF), its other bytes missing?
    cdef uint8_t c = s[0]
    cdef size_t need, j
    if c < 0xC2 or c > 0xF4:
        return False
    need = 2 if c < 0xE0 else (3 if c < 0xF0 else 4)
    if n >= need:
        return False
    for j in range(1, n):
        if (s[j] & 0xC0) != 0x80:
            return False
    if n >= 2 and ((c == 0xE0 and s[1] < 0xA0) or (c == 0xED and s[1] >= 0xA0)
                   or (c == 0xF0 and s[1] < 0x90) or (c == 0xF4 and s[1] >= 0x90)):
        return False
    return True


cdef extern from *:
    """
    #define FT_CHAR_JOINABLE 0x80000000U
    #define FT_CHAR_NONE 0x7FFFFFFFU
    """
    # char_info flags: some longer piece contains the character; it is no piece
    const uint32_t CHAR_JOINABLE "FT_CHAR_JOINABLE"
    const uint32_t CHAR_NONE "FT_CHAR_NONE"

cdef enum:
    SYM_FROZEN = 1               # _bpe symbol kinds (see there)
    SYM_ALONE = 2


cdef inline size_t _char_at(const uint8_t* s, size_t n, uint32_t* cp) noexcept nogil:
    # Length of the 1-3 byte UTF-8 character (shortest form) at s with its code
    # point in cp, or 0 for anything else (4-byte, malformed, cut off).
    cdef uint8_t c = s[0]
    if c < 0x80:
        cp[0] = c
        return 1
    if c >= 0xC2 and c < 0xE0:
        if n >= 2 and (s[1] & 0xC0) == 0x80:
            cp[0] = (<uint32_t>(c & 0x1F) << 6) | (s[1] & 0x3F)
            return 2
        return 0
    if c >= 0xE0 and c < 0xF0 and n >= 3 and (s[1] & 0xC0) == 0x80 and (s[2] & 0xC0) == 0x80:
        cp[0] = (<uint32_t>(c & 0x0F) << 12) | (<uint32_t>(s[1] & 0x3F) << 6) | (s[2] & 0x3F)
        if cp[0] >= 0x800:
            return 3
    return 0


cdef inline bint _decode_cp(const uint8_t* s, size_t n, uint32_t* cp) noexcept nogil:
    # Are s[0:n] exactly one character _char_at reads?
    return _char_at(s, n, cp) == n


cdef inline bint _is_space_symbol(const uint8_t* s, size_t n) noexcept nogil:
    return n == 3 and s[0] == 0xE2 and s[1] == 0x96 and s[2] == 0x81


cdef inline bint _cut_before(SentencePieceBPE bpe, const uint8_t* s, const uint32_t* starts,
                             size_t j) noexcept nogil:
    # May symbol j start a new independent piece? Only a ▁ whose preceding
    # character never precedes an interior ▁ in a mergeable piece. (Inline,
    # not a method: it runs at every symbol.)
    cdef size_t a = starts[j], b = starts[j + 1], p = starts[j - 1]
    if not _is_space_symbol(s + a, b - a):
        return False
    if not bpe.has_blockers:
        return True
    return find_bytes(bpe.cut_blockers.view.index, bpe.cut_blockers.view.strings,
                      s + p, a - p) < 0


cdef inline bint _unknown_piece(const Unknowns* u, uint32_t id) noexcept nogil:
    # the unknown rule's test of a model's piece (see _resolve_piece)
    return id == NO_TOKEN or id == u.unknown_id


cdef size_t _converged_node(UnigramModel model, const Unknowns* unknowns, const ByteBuf* norm,
                            const SpanBuf* spans, ViterbiScratch* whole) except? 0 nogil:
    # encode_scored's first candidate: the node of the best path spans (a
    # Viterbi over norm with whole) that the best paths to the places in
    # the margin's last reach bytes converge on (UnigramModel.converged),
    # where a Viterbi from it has the whole's paths there
    # (UnigramModel.same_window), after no unknown piece (the path from it
    # may yet start with one, which merges); 0: none
    cdef size_t q, p, k
    if norm.len <= SCORED_MARGIN:
        return 0
    q = norm.len - SCORED_MARGIN
    p = model.converged(whole, q)
    k = spans.len
    while k > 1 and spans.data[k - 1].start > p:
        k -= 1
    k -= 1
    if k == 0 or spans.data[k].start != p or p <= whole.settled or \
            (unknowns.merge_unknown and _unknown_piece(unknowns, spans.data[k - 1].id)):
        return 0
    return k if model.same_window(norm.data, norm.len, whole, p, q, model.score_at(whole, p)) \
        else 0


cdef inline int _resolve_piece(const Unknowns* u, const uint8_t* s, uint32_t id, uint32_t start,
                               uint32_t end, bint* prev_unknown, out_t* out) except -1 nogil:
    # The unknown rule, for the model's next piece, s[start:end] as id: a
    # piece the model covered stays; an unknown one becomes the byte pieces
    # of its bytes (byte fallback; unk for a byte without one), or unk, one
    # for a whole run of unknown pieces when merge_unknown. prev_unknown
    # carries "the piece before was unknown" from one call to the next.
    cdef bint unknown = _unknown_piece(u, id)
    cdef uint32_t j, byte_id
    if not unknown:
        emit(out, id, start, end, 0)
    elif u.bytes_for_unknown:
        for j in range(start, end):
            byte_id = u.byte_ids[s[j]]
            emit(out, byte_id if byte_id != NO_TOKEN else u.unk_id, j, j + 1, FLAG_VOCAB_PIECE)
    elif u.merge_unknown and prev_unknown[0] and out.len:
        if out_t is SpanBuf:
            out.data[out.len - 1].end = end
    else:
        emit(out, u.unk_id, start, end, 0)
    prev_unknown[0] = unknown
    return 0


cdef int _resolve(const Unknowns* u, const uint8_t* s, const SpanBuf* spans,
                  out_t* out) except -1 nogil:
    # The unknown rule over the model's pieces of s, appended to out (an
    # IdBuf needs room for one id per byte: the spans cover s without overlap).
    cdef size_t i
    cdef const Span* sp
    cdef bint prev_unknown = False
    cdef out_t o = out[0]   # a local copy, which the compiler keeps in registers
    try:
        for i in range(spans.len):
            sp = &spans.data[i]
            _resolve_piece(u, s, sp.id, sp.start, sp.end, &prev_unknown, &o)
    finally:
        out[0] = o
    return 0


cdef int _resolve_in_place(const Unknowns* u, IdBuf* ids) except -1 nogil:
    # The unknown rule over the model's ids alone, in place, for a model
    # without byte fallback (an unknown piece's bytes are not needed; never
    # more ids come out than go in).
    cdef size_t i
    cdef bint prev_unknown = False
    cdef IdBuf o = IdBuf(ids.data, 0)
    for i in range(ids.len):
        _resolve_piece(u, NULL, ids.data[i], 0, 0, &prev_unknown, &o)
    ids.len = o.len
    return 0


cdef list _user_defined(vocab):
    # the user-defined pieces' texts (a missing one empty), which the
    # normalizer keeps whole
    if vocab.token_types is None:
        return []
    return [t if t is not None else b"" for t, kind in zip(vocab.tokens, vocab.token_types)
            if kind == T_USER_DEFINED]


cdef inline void _drop_word_space(ByteBuf* norm, OffsetBuf* n2o) noexcept nogil:
    # The leading ▁ off normalized text (and its offsets, n2o or NULL):
    # llama.cpp's UGM normalizer with remove_extra_whitespaces puts one
    # before every word, the first too, so text that goes on inside a word
    # normalizes alone to a ▁ more than the whole text has there.
    if norm.len >= 3 and not memcmp(norm.data, SPACE_SYMBOL, 3):
        memmove(norm.data, norm.data + 3, norm.len - 3)
        norm.len -= 3
        if n2o != NULL and n2o.len >= 3:
            memmove(n2o.data, n2o.data + 3, (n2o.len - 3) * sizeof(uint32_t))
            n2o.len -= 3


cdef inline void* _realloc_or_free(void* p, size_t size) noexcept nogil:
    # realloc that frees the old block when it fails (so one owner stays)
    cdef void* grown = realloc(p, size)
    if grown == NULL:
        free(p)
    return grown


def _dense_ranks(scores, eligible):
    """Merge priority per token: the dense rank of ``-score`` among the
    tokens that may be merge results (others get the lowest priority).

    >>> _dense_ranks([0.0, -1.0, -0.5, -1.0], [False, True, True, True])
    [2, 1, 0, 1]
    """
    distinct = sorted({s for s, ok in zip(scores, eligible) if ok and s == s}, reverse=True)
    rank = {s: i for i, s in enumerate(distinct)}
    worst = len(distinct)
    return [rank.get(s, worst) if ok else worst for s, ok in zip(scores, eligible)]



@cython.final
cdef class SentencePieceBPE:
    """SentencePiece BPE segmentation of normalized text (see the module
    notes): ``tokens``, ``types`` and ``scores`` are parallel, by id;
    ``user_defined`` are the symbols never merged (sentencepiece's flavour);
    ``llama_cpp`` lets every piece be a merge result, not only NORMAL,
    USER_DEFINED and UNUSED ones, but for the ids of ``never`` (its CONTROL
    and UNKNOWN pieces: llama.cpp merges text into ``<s>`` too, fasttok only
    makes it for ``allowed_special``); ``exact_agenda`` runs sentencepiece's
    own loop even without UNUSED pieces (for tests of the cut path).
    """

    def __init__(self, list tokens, list types, list scores, list user_defined, *,
                 bint llama_cpp, bint exact_agenda, never=()):
        cdef Py_ssize_t n = len(tokens), j
        if llama_cpp:
            eligible = [bool(t) for t in tokens]
            for j in never:
                eligible[j] = False
        else:
            eligible = [bool(tokens[j]) and types[j] in (T_NORMAL, T_USER_DEFINED, T_UNUSED)
                        for j in range(n)]
        mergeable = [t if ok else None for t, ok in zip(tokens, eligible)]
        self.tables = TokenTables(mergeable, priorities=_dense_ranks(scores, eligible))
        blockers = set()
        for j in range(n):
            if eligible[j]:
                _interior_space_predecessors(tokens[j], blockers)
        self.cut_blockers = TokenTables(sorted(blockers))
        self.has_blockers = len(blockers) > 0
        self._fill_char_info(mergeable)
        self.frozen = SymbolMatcher(user_defined)
        # UNUSED pieces are merged and then split back through the pairs
        # that made them, which depends on the order of the whole agenda:
        # run sentencepiece's loop for such models.
        unused = [j for j in range(n) if eligible[j] and types[j] == T_UNUSED]
        if not llama_cpp and (unused or exact_agenda):
            self.exact_agenda = True
            self._fill_unused(unused, <uint32_t>n)

    def __dealloc__(self):
        free(self.unused_slot)
        free(self.char_info)

    cdef int _fill_unused(self, list unused, uint32_t n) except -1:
        # unused_slot: each UNUSED piece's index into the agenda's RevMerge table
        cdef uint32_t j
        self.unused_slot = <int32_t*>malloc((n + 1) * sizeof(int32_t))
        if self.unused_slot == NULL:
            raise MemoryError()
        for j in range(n):
            self.unused_slot[j] = -1
        for k, j in enumerate(unused):
            self.unused_slot[j] = k
        self.n_unused = len(unused)
        return 0

    cdef int _fill_char_info(self, list eligible) except -1:
        # For each code point below 0x10000 (its shortest UTF-8 form): its
        # piece id (CHAR_NONE if none) and CHAR_JOINABLE when its bytes occur
        # inside a longer mergeable piece. Marking by byte substring, not by
        # character position, over-approximates "some merge can include it",
        # which keeps a cut next to an unjoinable character exact.
        cdef uint32_t cp
        cdef size_t k, i, L
        cdef const uint8_t* p
        cdef bytes t
        self.char_info = bmp_token_ids(&self.tables.view, CHAR_NONE)
        for t in eligible:
            if t is None or len(t) < 2:
                continue
            p = <const uint8_t*>PyBytes_AS_STRING(t)
            k = len(t)
            for i in range(k):
                for L in range(1, 4):
                    if L < k and i + L <= k and _decode_cp(p + i, L, &cp):
                        self.char_info[cp] |= CHAR_JOINABLE
        return 0

    cdef int segment(self, const uint8_t* s, size_t n, SpanBuf* out, Scratch* sc) except -1 nogil:
        # Split into characters (user-defined symbols whole), cut where no merge
        # can cross, merge each cut piece, append the parts to out.
        cdef uint32_t* starts
        cdef uint32_t* rel
        cdef uint32_t* ids
        cdef uint8_t* frozen
        cdef size_t pos = 0, m = 0, k, a, b, j, parts, base
        cdef int64_t found
        cdef bint check_frozen = self.frozen.count > 0
        cdef bint use_cache
        cdef size_t size
        cdef uint64_t h = 0
        cdef CacheSlot* slot
        cdef const uint32_t* cached
        cdef const uint32_t* char_info = self.char_info
        cdef uint32_t cp, info
        if n == 0:
            return 0
        scratch_reserve(sc, n + 2)
        if sc.cache.slots == NULL and n >= CACHE_MIN_TEXT:
            cache_init(&sc.cache, n)
        use_cache = sc.cache.slots != NULL
        starts = sc.starts
        rel = sc.rel
        ids = sc.ids
        frozen = sc.frozen
        while pos < n:
            # frozen[m]: SYM_FROZEN (a user-defined symbol), SYM_ALONE (a
            # character no merge can include: a piece of its own) or 0;
            # ids[m]: the character's piece id
            k = 0
            if check_frozen:
                k = self.frozen.match(s + pos, n - pos)
            if k:
                frozen[m] = SYM_FROZEN
            else:
                k = _char_at(s + pos, n - pos, &cp)
                if k:
                    info = char_info[cp]
                    frozen[m] = 0 if info & CHAR_JOINABLE else SYM_ALONE
                    info &= ~CHAR_JOINABLE
                    ids[m] = info if info != CHAR_NONE else NO_TOKEN
                else:
                    k = one_char_len(s[pos])
                    if k > n - pos:
                        k = n - pos
                    frozen[m] = 0
                    found = find_bytes(self.tables.view.index,
                                       self.tables.view.strings, s + pos, k)
                    ids[m] = <uint32_t>found if found >= 0 else NO_TOKEN
            starts[m] = <uint32_t>pos
            m += 1
            pos += k
        starts[m] = <uint32_t>n
        frozen[m] = SYM_FROZEN
        a = 0
        while a < m:
            if frozen[a] == SYM_FROZEN:
                found = find_bytes(self.tables.view.index, self.tables.view.strings,
                                   s + starts[a], starts[a + 1] - starts[a])
                spans_push(out, <uint32_t>found if found >= 0 else NO_TOKEN,
                           starts[a], starts[a + 1], 0)
                a += 1
                continue
            if frozen[a] or frozen[a + 1]:
                # one character on its own: nothing to merge
                spans_push(out, ids[a], starts[a], starts[a + 1], 0)
                a += 1
                continue
            b = a + 1
            while b < m and not frozen[b] and not _cut_before(self, s, starts, b):
                b += 1
            base = starts[a]
            size = starts[b] - base
            slot = NULL
            if use_cache and size <= CACHE_MAX_KEY:
                h = hash_bytes(s + base, size) | 1
                slot = cache_find(&sc.cache, s + base, size, h)
                if slot.hash != 0:
                    spans_reserve(out, slot.n_parts)
                    cached = sc.cache.parts + slot.parts_at
                    for j in range(slot.n_parts):
                        spans_push(out, cached[2 * j + 1], <uint32_t>base + cached[2 * j],
                                   <uint32_t>base + (cached[2 * j + 2] if j + 1 < slot.n_parts
                                                     else size), 0)
                    a = b
                    continue
            for j in range(a, b):
                rel[j] = starts[j] - <uint32_t>base
            rel[b] = starts[b] - <uint32_t>base
            parts = bpe_merge_parts(&self.tables.view, s + base, starts[b] - base,
                                    rel + a, ids + a, b - a, &sc.memo)
            if slot != NULL:
                cache_store(&sc.cache, slot, s + base, size, h, rel + a, ids + a, parts)
            spans_reserve(out, parts)
            for j in range(parts):
                spans_push(out, ids[a + j], <uint32_t>base + rel[a + j],
                           <uint32_t>base + rel[a + j + 1], 0)
            a = b
        return 0

    cdef int agenda(self, const uint8_t* s, size_t n, SpanBuf* out, double alpha,
                    uint64_t* rng) except -1 nogil:
        # sentencepiece's BPE loop as written (bpe_model.cc): one agenda over
        # the whole text, stale entries skipped by size, and every push of a
        # pair that makes an UNUSED piece recorded (the last one wins); then
        # each final symbol that is UNUSED is split back recursively.
        # BPE-dropout (rng given): a live merge popped from the agenda is
        # dropped with probability alpha; the pair is not pushed again, as
        # only a neighbour's merge pushes pairs, and those are new ones.
        cdef Symbol* sym = <Symbol*>malloc((n + 1) * sizeof(Symbol))
        cdef RevMerge* rev = <RevMerge*>calloc(self.n_unused + 1, sizeof(RevMerge))
        cdef uint32_t* stack = <uint32_t*>malloc(2 * (n + 1) * sizeof(uint32_t))
        cdef ItemHeap ag
        cdef size_t m = 0, pos = 0, k, i
        cdef int32_t left, right, j
        cdef uint64_t top
        cdef uint32_t size, a, b, id, depth
        ag.items = NULL
        ag.size = ag.cap = 0
        try:
            if sym == NULL or rev == NULL or stack == NULL:
                with gil:
                    raise MemoryError()
            while pos < n:
                k = 0
                if self.frozen.count:
                    k = self.frozen.match(s + pos, n - pos)
                sym[m].frozen = k > 0
                if k == 0:
                    k = one_char_len(s[pos])
                    if k > n - pos:
                        k = n - pos
                sym[m].start = <uint32_t>pos
                sym[m].size = <uint32_t>k
                sym[m].prev = <int32_t>m - 1
                sym[m].next = <int32_t>m + 1 if pos + k < n else -1
                m += 1
                pos += k
            for i in range(1, m):
                self._agenda_push(s, sym, <int32_t>i - 1, <int32_t>i, &ag, rev)
            while ag.size:
                top = ag.items[0].key
                right = <int32_t>(ag.items[0].value >> 32)
                size = <uint32_t>(ag.items[0].value & 0xFFFFFFFFULL)
                heap_pop(&ag)
                left = <int32_t>(top & 0xFFFFFFFFULL)
                if sym[left].size == 0 or sym[right].size == 0 \
                        or sym[left].size + sym[right].size != size:
                    continue
                if rng != NULL and alpha > 0.0 and (alpha >= 1.0 or uniform01(rng) < alpha):
                    continue
                sym[left].size = size
                sym[left].next = sym[right].next
                if sym[right].next >= 0:
                    sym[sym[right].next].prev = left
                sym[right].size = 0
                self._agenda_push(s, sym, sym[left].prev, left, &ag, rev)
                self._agenda_push(s, sym, left, sym[left].next, &ag, rev)
            j = 0 if m else -1
            while j >= 0:
                # resegment: an explicit stack of (start, size) spans
                stack[0] = sym[j].start
                stack[1] = sym[j].size
                depth = 1
                while depth:
                    depth -= 1
                    a = stack[2 * depth]
                    b = stack[2 * depth + 1]
                    id = self._piece_id(s + a, b)
                    if id != NO_TOKEN and self.unused_slot != NULL \
                            and self.unused_slot[id] >= 0 and rev[self.unused_slot[id]].set:
                        # right part pushed first so the left one pops first
                        stack[2 * depth] = a + rev[self.unused_slot[id]].left_size
                        stack[2 * depth + 1] = rev[self.unused_slot[id]].right_size
                        stack[2 * depth + 2] = a
                        stack[2 * depth + 3] = rev[self.unused_slot[id]].left_size
                        depth += 2
                        continue
                    spans_push(out, id, a, a + b, 0)
                j = sym[j].next
        finally:
            free(sym); free(rev); free(stack)
            free(ag.items)
        return 0

    cdef uint32_t _piece_id(self, const uint8_t* p, size_t n) noexcept nogil:
        cdef int64_t found = find_bytes(self.tables.view.index, self.tables.view.strings, p, n)
        return <uint32_t>found if found >= 0 else NO_TOKEN

    cdef int _agenda_push(self, const uint8_t* s, Symbol* sym, int32_t left, int32_t right,
                          ItemHeap* ag, RevMerge* rev) except -1 nogil:
        # MaybeAddNewSymbolPair
        cdef uint64_t v
        cdef uint32_t merged
        cdef int32_t slot
        if left < 0 or right < 0 or sym[left].frozen or sym[right].frozen:
            return 0
        v = pair_value(&self.tables.view, s, sym[left].start,
                       sym[left].start + sym[left].size + sym[right].size, NO_TOKEN, NO_TOKEN)
        if v == NO_PAIR:
            return 0
        # keyed (priority << 32 | left), as sentencepiece orders its agenda
        # (higher score first, then leftmost); the value is (right, size)
        heap_push(ag, (v & 0xFFFFFFFF00000000ULL) | <uint32_t>left,
                  (<uint64_t><uint32_t>right << 32) | (sym[left].size + sym[right].size))
        if self.unused_slot == NULL:
            return 0
        merged = <uint32_t>(v & 0xFFFFFFFFULL)
        slot = self.unused_slot[merged]
        if slot >= 0:
            rev[slot].left_size = sym[left].size
            rev[slot].right_size = sym[right].size
            rev[slot].set = True
        return 0



cdef class SentencePieceCore(ModelBase):
    """The compiled SentencePiece model of one :class:`~fasttok.vocab.Vocabulary`.

    ``vocab.model`` is ``"unigram"`` or ``"sentencepiece_bpe"``; a GGUF
    vocabulary (``metadata["tokenizer.ggml.model"]``) runs the llama.cpp
    flavour (see the module notes). Provides the methods
    :class:`fasttok.Encoding` calls, plus :meth:`encode_as_pieces`,
    :meth:`normalize` and :meth:`lattice`.
    """

    def __cinit__(self):
        memset(&self.table, 0, sizeof(PieceTable))

    def __init__(self, vocab, *, flavour=None, bint exact_agenda=False, hidden=None):
        cdef Py_ssize_t n = len(vocab.tokens)
        if flavour is None:
            flavour = ("llama.cpp" if vocab.metadata.get("tokenizer.ggml.model") in ("llama", "t5")
                       else "sentencepiece")
        if flavour not in ("sentencepiece", "llama.cpp"):
            raise ValueError(f"unknown flavour {flavour!r}; use 'sentencepiece' or 'llama.cpp'")
        if hidden is not None and flavour != "llama.cpp":
            raise ValueError("hidden= is llama.cpp's detokenize rule; sentencepiece decodes "
                             "by piece type (use flavour='llama.cpp')")
        if vocab.model not in ("unigram", "sentencepiece_bpe"):
            raise ValueError(f"{vocab.name}: model {vocab.model!r} is not a SentencePiece model")
        if n == 0 or n >= NO_TOKEN:
            raise ValueError(f"{vocab.name}: {n} tokens")
        tokens = [t if t is not None else b"" for t in vocab.tokens]
        types = list(vocab.token_types) if vocab.token_types is not None else [T_NORMAL] * n
        scores = list(vocab.scores) if vocab.scores is not None else [0.0] * n
        unk = vocab.unk_id
        if unk is None or not 0 <= unk < n:
            unk = next((j for j, t in enumerate(types) if t == T_UNKNOWN), None)
        if unk is None:
            raise ValueError(f"{vocab.name}: no unknown piece; SentencePiece models need one")
        self.vocabulary = vocab
        self.flavour = flavour
        self.llama_cpp = flavour == "llama.cpp"
        self.n_tokens = <uint32_t>n
        self.ints = tuple(range(n))
        self.unknowns.unk_id = <uint32_t>unk
        if hidden is None:
            hidden = [j for j in range(n) if types[j] in (T_CONTROL, T_UNKNOWN)]
        self._fill_table(tokens, types, hidden)
        user_defined = _user_defined(vocab)
        if vocab.model == "unigram":
            # llama.cpp's types leave CONTROL and UNKNOWN pieces out already;
            # hidden adds the ones it amends to CONTROL (EOG texts)
            self.unigram = UnigramModel(tokens, scores, types, unk, llama_cpp=self.llama_cpp,
                                        never=hidden if self.llama_cpp else ())
        else:
            self.bpe = SentencePieceBPE(tokens, types, scores,
                                        [] if self.llama_cpp else user_defined,
                                        llama_cpp=self.llama_cpp, exact_agenda=exact_agenda,
                                        never=hidden)
        self._make_normalizers(vocab, user_defined)
        self._set_unknowns(vocab)
        self.unk_surface = str(vocab.metadata.get("unk_surface", " \u2047 ")).encode("utf-8")
        self.decoding.remove_extra_whitespaces = vocab.remove_extra_whitespaces
        self.decoding.strip_dummy_space = vocab.add_dummy_prefix or vocab.remove_extra_whitespaces
        self.decoding.add_space_prefix = vocab.add_dummy_prefix
        # sentencepiece matches no control piece in the text (user-defined
        # symbols are handled by the normalizer and the model); llama.cpp's
        # special tokens are split out by the caller (fasttok.formats.sentencepiece).
        self.special_order = ()

    def __dealloc__(self):
        free(self.table.types)
        free(self.table.byte_of)
        free(self.table.hidden)
        free_strings(&self.table.pieces)
        free_strings(&self.table.rendered)

    cdef int _fill_table(self, list tokens, list types, hidden) except -1:
        # The piece table, and each byte's byte piece (unknowns.byte_ids:
        # "<0xXX>"; for llama.cpp, as its byte_to_token, else the one-byte
        # token itself). hidden: the ids llama.cpp's detokenize leaves out
        # (the control and unknown pieces, or the attributes llama.cpp
        # amends a GGUF file's types to).
        cdef Py_ssize_t n = len(tokens), i
        cdef uint32_t* byte_ids = self.unknowns.byte_ids
        self.table.types = <uint8_t*>malloc(n + 1)
        self.table.byte_of = <uint8_t*>malloc(n + 1)
        self.table.hidden = <uint8_t*>calloc(n + 1, 1)
        if self.table.types == NULL or self.table.byte_of == NULL or self.table.hidden == NULL:
            raise MemoryError()
        for i in hidden:
            if not 0 <= i < n:
                raise ValueError(f"hidden id {i} is not in the vocabulary ({n} tokens)")
            self.table.hidden[i] = 1
        for i in range(256):
            byte_ids[i] = NO_TOKEN
        by_bytes = {}
        for i in range(n):
            self.table.types[i] = <uint8_t>types[i] if 0 <= types[i] <= 6 else T_UNDEFINED
            self.table.byte_of[i] = 0
            by_bytes.setdefault(tokens[i], i)
            if types[i] == T_BYTE and len(tokens[i]) == 6 and tokens[i].startswith(b"<0x"):
                try:
                    b = int(tokens[i][3:5], 16)
                except ValueError:
                    continue
                self.table.byte_of[i] = b
                if byte_ids[b] == NO_TOKEN:
                    byte_ids[b] = <uint32_t>i
        if self.llama_cpp:
            for i in range(256):
                if byte_ids[i] == NO_TOKEN and bytes([i]) in by_bytes:
                    byte_ids[i] = <uint32_t>by_bytes[bytes([i])]
        fill_strings(&self.table.pieces, tokens)
        fill_strings(&self.table.rendered, [self._render(i, tokens[i]) for i in range(n)])
        return 0

    cdef int _make_normalizers(self, vocab, list user_defined) except -1:
        # The normalizer of the first fragment of a text, of the others, and
        # sentencepiece's denormalizer.
        escape = vocab.escape_whitespaces
        if self.llama_cpp and self.bpe is not None:
            # llama.cpp's SPM: only the space prefix and ▁ escaping
            self.normalizer = Normalizer(None, add_dummy_prefix=vocab.add_dummy_prefix,
                                         remove_extra_whitespaces=False,
                                         escape_whitespaces=escape)
            self.normalizer_rest = Normalizer(None, add_dummy_prefix=False,
                                              remove_extra_whitespaces=False,
                                              escape_whitespaces=escape)
            return 0
        # sentencepiece's, or llama.cpp's UGM with its own whitespace rules
        # (every fragment normalized on its own)
        self.normalizer = self._spm_normalizer(vocab, user_defined, vocab.add_dummy_prefix)
        self.normalizer_rest = self.normalizer
        denormalizer = vocab.metadata.get("denormalizer_spec")
        if not self.llama_cpp and denormalizer and denormalizer.get("precompiled_charsmap"):
            # sentencepiece builds it from the spec alone: no user-defined
            # symbols, whitespace never a suffix
            self.denormalizer = Normalizer(
                denormalizer["precompiled_charsmap"],
                add_dummy_prefix=denormalizer.get("add_dummy_prefix", True),
                remove_extra_whitespaces=denormalizer.get("remove_extra_whitespaces", True),
                escape_whitespaces=denormalizer.get("escape_whitespaces", True))
        return 0

    cdef Normalizer _spm_normalizer(self, vocab, list user_defined, bint dummy):
        # sentencepiece's normalizer of the vocabulary, with or without the
        # dummy prefix
        return Normalizer(
            vocab.precompiled_charsmap, add_dummy_prefix=dummy,
            remove_extra_whitespaces=vocab.remove_extra_whitespaces,
            escape_whitespaces=vocab.escape_whitespaces,
            treat_whitespace_as_suffix=bool(vocab.metadata.get("treat_whitespace_as_suffix", False)),
            user_defined=user_defined, flavour=self.flavour)

    cdef int _set_unknowns(self, vocab) except -1:
        # The unknown rule of the flavour: sentencepiece's byte fallback or
        # merged unk runs; llama.cpp's byte tokens for what no BPE token
        # covers, one unk per run for its Unigram.
        cdef Unknowns* u = &self.unknowns
        if self.llama_cpp:
            u.unknown_id = u.unk_id if self.unigram is not None else NO_TOKEN
            u.bytes_for_unknown = self.bpe is not None
            u.merge_unknown = self.unigram is not None
            return 0
        u.unknown_id = u.unk_id
        u.bytes_for_unknown = vocab.byte_fallback
        u.merge_unknown = not vocab.byte_fallback
        if u.bytes_for_unknown:
            missing = [b for b in range(256) if u.byte_ids[b] == NO_TOKEN]
            if missing:
                raise ValueError(f"{vocab.name}: byte_fallback without the <0x{missing[0]:02X}> piece")
        return 0

    cdef bytes _render(self, Py_ssize_t i, bytes piece):
        # What token i stands for on its own: llama.cpp's token_to_piece(special=True)
        cdef int kind = self.table.types[i]
        if kind == T_BYTE and self.unknowns.byte_ids[self.table.byte_of[i]] == <uint32_t>i:
            return bytes([self.table.byte_of[i]])
        if kind in (T_CONTROL, T_UNKNOWN) or (kind == T_USER_DEFINED and self.llama_cpp):
            return piece
        if kind in (T_UNUSED, T_UNDEFINED) and self.llama_cpp:
            return b""
        return piece.replace(b"\xe2\x96\x81", b" ")

    # ------------------------------------------------------------ encoding

    cdef int _segment(self, const uint8_t* s, size_t n, SpanBuf* spans,
                      Scratch* sc, double alpha=0.0, uint64_t* rng=NULL) except -1 nogil:
        # The model's pieces of normalized s[0:n] into spans (emptied first);
        # with rng, BPE-dropout at rate alpha.
        spans.len = 0
        if self.unigram is not None:
            self.unigram.viterbi(s, n, spans, &sc.vit)
        elif self.bpe.exact_agenda or rng != NULL:
            self.bpe.agenda(s, n, spans, alpha, rng)
        else:
            self.bpe.segment(s, n, spans, sc)
        return 0

    cdef int _encode_normalized(self, const uint8_t* s, size_t n, SpanBuf* spans,
                                SpanBuf* toks, Scratch* sc) except -1 nogil:
        self._segment(s, n, spans, sc)
        return _resolve(&self.unknowns, s, spans, toks)

    cdef int _encode_fragment(self, const uint8_t* s, size_t n, bint first, ByteBuf* norm,
                              OffsetBuf* n2o, SpanBuf* spans, SpanBuf* toks,
                              Scratch* sc) except -1 nogil:
        # Normalize s[0:n] into norm and append its tokens to toks (spans in norm).
        if first:
            self.normalizer.normalize_into(s, n, norm, n2o)
        else:
            self.normalizer_rest.normalize_into(s, n, norm, n2o)
        return self._encode_normalized(norm.data, norm.len, spans, toks, sc)

    cdef int _encode_text(self, str text, bint first, SpanBuf* toks, ByteBuf* norm) except -1:
        # All tokens of text appended to toks, spans into norm (its normalized
        # form). first: llama.cpp's SPM adds the space prefix only to the
        # first fragment of a text and to one that follows a special token.
        cdef Utf8Text u
        cdef SpanBuf spans = SpanBuf(NULL, 0, 0)
        cdef Scratch sc
        memset(&sc, 0, sizeof(Scratch))
        utf8_text(text, &u)    # lone surrogates repaired as tiktoken does
        try:
            with nogil:
                self._encode_fragment(u.data, u.size, first, norm, NULL, &spans, toks, &sc)
        finally:
            spans_free(&spans)
            scratch_free(&sc)
            free(u.owned)
        return 0

    cdef list _ids(self, str text, bint first, double alpha=0.0, uint64_t* rng=NULL):
        # _encode_text's ids without its token spans (see encode_many);
        # with rng, BPE-dropout at rate alpha
        cdef Utf8Text u
        cdef SpanBuf spans = SpanBuf(NULL, 0, 0)
        cdef ByteBuf norm = ByteBuf(NULL, 0, 0)
        cdef Scratch sc
        cdef uint32_t* ids = NULL
        cdef size_t ids_size = 0
        cdef IdBuf out_ids
        memset(&sc, 0, sizeof(Scratch))
        # the str's cached UTF-8; lone surrogates repaired as tiktoken does
        utf8_text_cached(text, &u)
        try:
            with nogil:
                # the thread's buffers from the last call, if large enough
                # (fresh ones have their pages faulted in on every call);
                # the normalizer asks for 3 bytes a byte of input
                norm.data = <uint8_t*>ft_slot_claim(FT_SLOT_SPM_NORM, 3 * u.size + 16, &norm.cap)
                if norm.data == NULL:
                    norm.cap = 0
                if first:
                    self.normalizer.normalize_into(u.data, u.size, &norm, NULL)
                else:
                    self.normalizer_rest.normalize_into(u.data, u.size, &norm, NULL)
                ids_size = (norm.len + 1) * sizeof(uint32_t)
                ids = <uint32_t*>ft_slot_claim(FT_SLOT_SPM_IDS, ids_size, &ids_size)
                if ids == NULL:
                    ids = <uint32_t*>malloc(ids_size)
                if ids == NULL:
                    with gil:
                        raise MemoryError()
                out_ids.data = ids
                out_ids.len = 0
                if self.unigram is not None and not self.unknowns.bytes_for_unknown:
                    # the Viterbi's ids straight into ids (at most one a
                    # byte), no spans: only byte fallback needs an unknown
                    # piece's bytes
                    self.unigram.viterbi_ids(norm.data, norm.len, &out_ids, &sc.vit)
                    _resolve_in_place(&self.unknowns, &out_ids)
                else:
                    self._segment(norm.data, norm.len, &spans, &sc, alpha, rng)
                    _resolve(&self.unknowns, norm.data, &spans, &out_ids)
            return ids_list(ids, out_ids.len, self.ints)
        finally:
            if not ft_slot_give(FT_SLOT_SPM_IDS, ids, ids_size, THREAD_KEEP):
                free(ids)
            if ft_slot_give(FT_SLOT_SPM_NORM, norm.data, norm.cap, THREAD_KEEP):
                norm.data = NULL
            spans_free(&spans)
            bytebuf_free(&norm)
            scratch_free(&sc)
            free(u.owned)

    def encode_ordinary(self, str text not None):
        """Ids of ``text`` (SentencePiece matches no special token in text)."""
        return self._ids(text, True)

    def encode(self, str text not None, const uint8_t[::1] allowed not None):
        """Ids of ``text``; the mask is accepted for the ``Encoding`` interface
        (``special_order`` is empty: sentencepiece parses no special token)."""
        return self._ids(text, True)

    def sample_bpe(self, str text not None, double alpha, uint64_t seed, bint first=True):
        """Ids of ``text`` with BPE-dropout, as sentencepiece's BPE
        ``SampleEncode``: each merge the agenda pops is skipped with
        probability ``alpha`` (never at ``alpha <= 0``, always at ``>= 1``);
        normalization, user-defined symbols, UNUSED pieces, byte fallback and
        unknowns as in :meth:`encode` (the llama.cpp flavour: as in
        :meth:`encode_fragment`, ``first`` saying where the fragment is).
        ``seed`` fixes the draws.

        >>> from fasttok.vocab import Vocabulary
        >>> v = Vocabulary(name="t", model="sentencepiece_bpe", byte_level=False, unk_id=0,
        ...                tokens=(b"<unk>", b"a", b"b", b"ab"), scores=(0.0, -2.0, -2.0, -1.0),
        ...                token_types=(2, 1, 1, 1))
        >>> core = SentencePieceCore(v)
        >>> core.sample_bpe("ab", 0.0, 7), core.sample_bpe("ab", 1.0, 7)
        ([3], [1, 2])
        """
        cdef uint64_t state = seed
        if self.bpe is None:
            raise FasttokError(f"{self.vocabulary.name}: BPE-dropout needs a SentencePiece BPE "
                               "model; sample Unigram models with "
                               "fasttok.formats.sentencepiece.sample_encode")
        return self._ids(text, first, alpha, &state)

    def encode_fragment(self, str text not None, bint first=True):
        """Ids of one text fragment between special tokens (the llama.cpp
        flavour's unit; ``first``: at the start or after a special token)."""
        return self._ids(text, first)

    def count(self, str text not None, const uint8_t[::1] allowed=None):
        """How many ids ``text`` encodes to."""
        cdef SpanBuf toks = SpanBuf(NULL, 0, 0)
        cdef ByteBuf norm = ByteBuf(NULL, 0, 0)
        try:
            self._encode_text(text, True, &toks, &norm)
            return toks.len
        finally:
            spans_free(&toks)
            bytebuf_free(&norm)

    cdef uint32_t* _batch_ids(self, list texts, uint64_t* ends) except? NULL:
        # Every text's ids, one after another, in one malloc'd array the
        # caller frees; ends[i] is where text i's ids end. The whole batch
        # runs without the GIL. NULL only for an empty result.
        cdef Py_ssize_t count = len(texts), i
        cdef Utf8Source* inputs
        cdef SpanBuf spans = SpanBuf(NULL, 0, 0)
        cdef ByteBuf norm = ByteBuf(NULL, 0, 0)
        cdef Scratch sc
        cdef size_t total = 0, capacity = 0, used, size
        cdef uint8_t* buffer = NULL
        cdef const uint8_t* data
        cdef uint32_t* ids = NULL
        cdef size_t n_ids = 0, ids_cap = 0
        cdef IdBuf out_ids
        memset(&sc, 0, sizeof(Scratch))
        inputs = <Utf8Source*>malloc((count + 1) * sizeof(Utf8Source))
        try:
            if inputs == NULL:
                raise MemoryError()
            # Read every text's layout under the GIL, then transcode them all
            # into one buffer without it (per text, releasing and taking the
            # GIL back cost more than the transcoding of a short line).
            for i in range(count):
                utf8_source(<str?>texts[i], &inputs[i])
                capacity += utf8_capacity(&inputs[i])
                total += <size_t>inputs[i].length
            buffer = <uint8_t*>malloc(capacity + 1)
            if buffer == NULL:
                raise MemoryError()
            if self.bpe is not None:
                pair_memo_init(&sc.memo, &self.bpe.tables.view)
            with nogil:
                if self.bpe is not None and count > 1:
                    cache_init(&sc.cache, total)
                used = 0
                for i in range(count):
                    if inputs[i].ascii:
                        data = <const uint8_t*>inputs[i].data
                        size = <size_t>inputs[i].length
                    else:
                        data = buffer + used
                        size = utf8_write(&inputs[i], buffer + used)
                        used += size
                    self.normalizer.normalize_into(data, size, &norm, NULL)
                    self._segment(norm.data, norm.len, &spans, &sc)
                    # Only the ids are kept, resolved straight from the
                    # pieces: 4 bytes a token instead of a 16-byte Span, so
                    # a large batch touches (page-faults) a quarter of the
                    # memory. At most one id per normalized byte.
                    if n_ids + norm.len > ids_cap:
                        ids_cap = 2 * ids_cap + norm.len + 1024
                        ids = <uint32_t*>_realloc_or_free(ids, ids_cap * sizeof(uint32_t))
                        if ids == NULL:
                            with gil:
                                raise MemoryError()
                    out_ids.data = ids + n_ids
                    out_ids.len = 0
                    _resolve(&self.unknowns, norm.data, &spans, &out_ids)
                    n_ids += out_ids.len
                    ends[i] = n_ids
            return ids
        except BaseException:
            free(ids)
            raise
        finally:
            scratch_free(&sc)
            free(buffer)
            free(inputs)
            spans_free(&spans); bytebuf_free(&norm)

    def encode_many(self, list texts not None, const uint8_t[::1] allowed=None):
        """Encode a list of texts; the whole batch runs without the GIL
        (``allowed`` is unused: sentencepiece parses no special token)."""
        cdef Py_ssize_t count = len(texts)
        cdef uint64_t* ends = <uint64_t*>malloc((count + 1) * sizeof(uint64_t))
        cdef uint32_t* ids = NULL
        if ends == NULL:
            raise MemoryError()
        try:
            ids = self._batch_ids(texts, ends)
            return ids_lists(ids, ends, count, self.ints)
        finally:
            free(ids)
            free(ends)

    def encode_many_flat(self, list texts not None, const uint8_t[::1] allowed=None):
        """Encode a list of texts into one ``array('I')`` of ids and an
        ``array('Q')`` of ``len(texts) + 1`` offsets (text i's ids are
        ``ids[offsets[i]:offsets[i + 1]]``), no Python int per token."""
        cdef Py_ssize_t count = len(texts), i
        cdef uint64_t* ends = <uint64_t*>malloc((count + 1) * sizeof(uint64_t))
        cdef uint32_t* ids = NULL
        if ends == NULL:
            raise MemoryError()
        try:
            ids = self._batch_ids(texts, ends + 1)
            ends[0] = 0
            flat = array("I")
            flat.frombytes((<char*>ids)[:ends[count] * sizeof(uint32_t)] if ids != NULL else b"")
            offsets = array("Q")
            offsets.frombytes((<char*>ends)[:(count + 1) * sizeof(uint64_t)])
            return flat, offsets
        finally:
            free(ids)
            free(ends)

    def count_many(self, list texts not None, const uint8_t[::1] allowed=None):
        """The number of ids of each text, as a list, without building the ids as ints."""
        _, offsets = self.encode_many_flat(texts, allowed)
        return [offsets[i + 1] - offsets[i] for i in range(len(texts))]

    def encode_to_array(self, str text not None, const uint8_t[::1] allowed=None):
        """The ids of ``text`` as an ``array('I')``, no Python int per token."""
        flat, _ = self.encode_many_flat([text], allowed)
        return flat

    def encode_as_pieces(self, str text not None):
        """The pieces of ``text`` as sentencepiece's ``encode(out_type=str)``
        gives them: the normalized text of each token (so an ``unk`` shows the
        text it covers) and ``<0xXX>`` for byte fallback."""
        return [piece for piece, _ in self.encode_with_pieces(text)]

    def encode_with_pieces(self, str text not None, bint first=True):
        """``[(piece, id)]`` for ``text`` (see :meth:`encode_as_pieces`)."""
        cdef SpanBuf toks = SpanBuf(NULL, 0, 0)
        cdef ByteBuf norm = ByteBuf(NULL, 0, 0)
        cdef size_t i
        cdef Span* t
        try:
            self._encode_text(text, first, &toks, &norm)
            joined = (<char*>norm.data)[:norm.len] if norm.len else b""
            out = []
            for i in range(toks.len):
                t = &toks.data[i]
                if t.flags & FLAG_VOCAB_PIECE or self.llama_cpp:
                    piece = self._piece(t.id)
                else:
                    piece = joined[t.start:t.end]
                out.append((piece.decode("utf-8", "replace"), t.id))
            return out
        finally:
            spans_free(&toks)
            bytebuf_free(&norm)

    def encode_with_offsets(self, str text not None, allowed=None, bint first=True):
        """``(ids, spans, "bytes")``: the ids of ``text`` (``allowed`` unused,
        as in :meth:`encode`; ``first`` as in :meth:`encode_fragment`) with
        each one's span of ``text``'s UTF-8, start and end in turn in an
        ``array('q')``, from the same walk, through the normalizer's
        alignment: sentencepiece's ``begin`` and ``end``. A byte fallback
        token that is not the last of its character gets an empty span at
        the character's start, as sentencepiece gives it; a dummy prefix of
        its own an empty one where it stands.

        >>> from fasttok.vocab import Vocabulary
        >>> v = Vocabulary(name="u", model="unigram", byte_level=False, unk_id=0,
        ...                add_dummy_prefix=True, escape_whitespaces=True,
        ...                tokens=(b"<unk>", "\u2581a".encode(), b"b"), scores=(0.0, -1.0, -2.0),
        ...                token_types=(2, 1, 1))
        >>> ids, spans, unit = SentencePieceCore(v).encode_with_offsets("a\u00e9b")
        >>> ids, list(spans), unit
        ([1, 0, 2], [0, 1, 1, 3, 3, 4], 'bytes')
        """
        cdef Utf8Text u
        cdef SpanBuf toks = SpanBuf(NULL, 0, 0)
        cdef SpanBuf spans = SpanBuf(NULL, 0, 0)
        cdef ByteBuf norm = ByteBuf(NULL, 0, 0)
        cdef OffsetBuf n2o = OffsetBuf(NULL, 0, 0)
        cdef size_t i
        cdef uint32_t* ids = NULL
        cdef int64_t* out = NULL
        cdef Span* t
        cdef Scratch sc
        memset(&sc, 0, sizeof(Scratch))
        utf8_text(text, &u)    # lone surrogates repaired as tiktoken does
        try:
            with nogil:
                self._encode_fragment(u.data, u.size, first, &norm, &n2o, &spans, &toks, &sc)
                ids = <uint32_t*>malloc((toks.len + 1) * sizeof(uint32_t))
                out = <int64_t*>malloc((2 * toks.len + 1) * sizeof(int64_t))
                if ids == NULL or out == NULL:
                    with gil:
                        raise MemoryError()
                for i in range(toks.len):
                    t = &toks.data[i]
                    ids[i] = t.id
                    out[2 * i] = n2o.data[t.start] if n2o.len else 0
                    out[2 * i + 1] = n2o.data[t.end] if n2o.len else 0
                    # the byte pieces of one character: all but the last empty
                    if t.flags & FLAG_VOCAB_PIECE and i + 1 < toks.len and \
                            toks.data[i + 1].flags & FLAG_VOCAB_PIECE and \
                            n2o.data[toks.data[i + 1].start] == n2o.data[t.start]:
                        out[2 * i + 1] = out[2 * i]
            offsets = array("q")
            offsets.frombytes((<char*>out)[:2 * toks.len * sizeof(int64_t)])
            return ids_list(ids, toks.len, self.ints), offsets, "bytes"
        finally:
            free(ids)
            free(out)
            spans_free(&toks)
            spans_free(&spans)
            bytebuf_free(&norm)
            offsets_free(&n2o)
            scratch_free(&sc)
            free(u.owned)

    def encode_scored(self, str text not None, state=None, bint cut=True, allowed=None):
        """``(ids, k, c, state_at_c)``: the ids of ``text`` as a Unigram
        model's whole text has them where ``text`` begins, ``state``
        there (``None``: the text's start; else as this returned it) and,
        with ``cut``, the place an appender keeps the ids before (``c`` > 0,
        else none): ``ids[:k]`` are the ids of ``text[:c]`` whatever follows
        ``text``, and ``text[c:]`` encodes on from ``state_at_c`` to
        ``ids[k:]`` and whatever follows's.

        The path scores, summed from the text's start (float32; in the
        llama.cpp flavour, one fragment between special tokens, double),
        decide near ties by the size of the sum, so a window encoded from 0
        may split otherwise; from the score at a point no lattice node
        crosses, it is the whole text's Viterbi again. A state is that score
        and whether the text there starts with a ``▁`` its dummy prefix
        stands for (a cut at a ``▁`` starts the text after the whitespace;
        any other cut, where the text's normalized form goes on, without
        one: llama.cpp's normalizer with ``remove_extra_whitespaces`` puts
        a ``▁`` before every word, the first too, and that one is dropped).
        The cut is where the best paths to the places a margin before the
        end converge (the Viterbi from there checked to give their paths,
        :meth:`~fasttok.models._unigram.UnigramModel.converged`), else a
        place no lattice node crosses, the longest piece and the margin
        before the end (no continuation reaches back over either); where the
        text after it normalizes alone as the text does there (checked), and
        not after an unknown piece (one after it would merge). ``allowed`` is unused, as in
        :meth:`encode` (the core parses no special tokens).

        >>> from fasttok.vocab import Vocabulary
        >>> v = Vocabulary(name="u", model="unigram", byte_level=False, unk_id=0,
        ...                add_dummy_prefix=True, remove_extra_whitespaces=True,
        ...                escape_whitespaces=True, tokens=(b"<unk>", "\u2581a".encode(), b"a"),
        ...                scores=(0.0, -1.0, -2.0), token_types=(2, 1, 1))
        >>> core = SentencePieceCore(v)
        >>> ids, k, c, state = core.encode_scored("a " * 40)
        >>> ids == core.encode_ordinary("a " * 40), k, c, state
        (True, 23, 46, (-23.0, True))
        >>> core.encode_scored(("a " * 40)[c:], state, cut=False)[0] == ids[k:]
        True
        """
        cdef Utf8Text u
        cdef SpanBuf spans = SpanBuf(NULL, 0, 0)
        cdef SpanBuf toks = SpanBuf(NULL, 0, 0)
        cdef SpanBuf head = SpanBuf(NULL, 0, 0)
        cdef SpanBuf part
        cdef ByteBuf norm = ByteBuf(NULL, 0, 0)
        cdef ByteBuf alone = ByteBuf(NULL, 0, 0)
        cdef OffsetBuf n2o = OffsetBuf(NULL, 0, 0)
        cdef Scratch sc
        cdef size_t k, i, q, reach, o_b = 0, n_final = 0, c = 0, tries = 0
        cdef size_t k_converged
        cdef double start = 0.0, score
        cdef bint space = False, dummy = True, at_converged = False
        # llama.cpp's UGM normalizer puts a ▁ before every word, the first too
        cdef bint word_space = self.llama_cpp and self.vocabulary.remove_extra_whitespaces
        cdef uint32_t* ids = NULL
        cdef Normalizer first, plain
        if self.unigram is None:
            raise FasttokError("encode_scored is a Unigram model's")
        if state is not None:
            start, dummy = state
        if self.normalizer_plain is None:
            self.normalizer_plain = self._spm_normalizer(
                self.vocabulary, _user_defined(self.vocabulary), False)
        plain = self.normalizer_plain
        first = self.normalizer if dummy else plain
        score = start
        memset(&sc, 0, sizeof(Scratch))
        utf8_text(text, &u)    # lone surrogates repaired as tiktoken does
        reach = self.unigram.reach
        try:
            with nogil:
                first.normalize_into(u.data, u.size, &norm, &n2o if cut else NULL)
                if word_space and not dummy:
                    _drop_word_space(&norm, &n2o if cut else NULL)
                self.unigram.viterbi_scored(norm.data, norm.len, &spans, &sc.vit, start, NULL)
                # the node the best paths converge on before the margin
                # (UnigramModel.converged), then the last ones no lattice node crosses
                k = spans.len
                k_converged = _converged_node(self.unigram, &self.unknowns, &norm, &spans,
                                              &sc.vit) if cut else 0
                while cut and tries < SCORED_TRIES:
                    if k_converged:
                        q = spans.data[k_converged].start
                    else:
                        if k <= 1:
                            break
                        k -= 1
                        q = spans.data[k].start
                        if q + 3 + reach + SCORED_MARGIN > norm.len:
                            continue
                        if self.unknowns.merge_unknown and \
                                _unknown_piece(&self.unknowns, spans.data[k - 1].id):
                            continue
                    # at a ▁, the text from its word on with a dummy prefix
                    space = not memcmp(norm.data + q, SPACE_SYMBOL, 3)
                    if space and not memcmp(norm.data + q + 3, SPACE_SYMBOL, 3):
                        k_converged = 0
                        continue
                    tries += 1
                    if k_converged:
                        k = k_converged
                        k_converged = 0
                        at_converged = True
                    else:
                        at_converged = False
                        if self.unigram.crossed(norm.data, norm.len, q):
                            continue
                    # the text from there, alone, normalizes to the text's from q on
                    o_b = n2o.data[q + 3] if space else n2o.data[q]
                    alone.len = 0
                    if space:
                        self.normalizer.normalize_into(u.data + o_b, u.size - o_b, &alone, NULL)
                    else:
                        plain.normalize_into(u.data + o_b, u.size - o_b, &alone, NULL)
                        if word_space:
                            _drop_word_space(&alone, NULL)
                    if alone.len != norm.len - q or memcmp(alone.data, norm.data + q, alone.len):
                        if at_converged:
                            k = spans.len
                        continue
                    # the score at q: the Viterbi's own where it wrote it, else
                    # a Viterbi over the text before q
                    if norm.data[q - 1] < 0x80 or q > sc.vit.settled:
                        score = self.unigram.score_at(&sc.vit, q)
                    else:
                        self.unigram.viterbi_scored(norm.data, q, &head, &sc.vit, start, &score)
                    c = 1
                    break
                if c:
                    part = SpanBuf(spans.data, k, k)
                    _resolve(&self.unknowns, norm.data, &part, &toks)
                    n_final = toks.len
                    part = SpanBuf(spans.data + k, spans.len - k, spans.len - k)
                    _resolve(&self.unknowns, norm.data, &part, &toks)
                    c = 0
                    for i in range(o_b):
                        c += (u.data[i] & 0xC0) != 0x80
                else:
                    _resolve(&self.unknowns, norm.data, &spans, &toks)
                ids = <uint32_t*>malloc((toks.len + 1) * sizeof(uint32_t))
                if ids == NULL:
                    with gil:
                        raise MemoryError()
                for i in range(toks.len):
                    ids[i] = toks.data[i].id
            if c and has_surrogate(text):
                # (c counts utf8_text's characters: a surrogate pair is one)
                from fasttok.shared.surrogates import repaired_starts
                c = repaired_starts(text)[c]
            return (ids_list(ids, toks.len, self.ints), n_final, c,
                    (score, space if c else dummy))
        finally:
            free(ids)
            spans_free(&spans)
            spans_free(&head)
            spans_free(&toks)
            bytebuf_free(&norm)
            bytebuf_free(&alone)
            offsets_free(&n2o)
            scratch_free(&sc)
            free(u.owned)

    def encode_normalized(self, normalized):
        """Segment already-normalized text (``str`` or UTF-8 ``bytes``) without
        normalizing it again: ``[(piece bytes, id)]`` before unknown handling
        (``NO_TOKEN`` = 4294967295 for a BPE part that is no piece)."""
        cdef bytes raw = normalized.encode("utf-8") if isinstance(normalized, str) else bytes(normalized)
        cdef SpanBuf spans = SpanBuf(NULL, 0, 0)
        cdef size_t i
        cdef Scratch sc
        memset(&sc, 0, sizeof(Scratch))
        try:
            self._segment(<const uint8_t*>PyBytes_AS_STRING(raw), len(raw), &spans, &sc)
            return [(raw[spans.data[i].start:spans.data[i].end], spans.data[i].id)
                    for i in range(spans.len)]
        finally:
            spans_free(&spans)
            scratch_free(&sc)

    def encode_bytes_piece(self, bytes piece not None):
        """Segment raw bytes as one already-normalized piece (no normalizer)."""
        cdef SpanBuf spans = SpanBuf(NULL, 0, 0)
        cdef Scratch sc
        memset(&sc, 0, sizeof(Scratch))
        try:
            self._segment(<const uint8_t*>PyBytes_AS_STRING(piece), len(piece), &spans, &sc)
            return self._resolved_list(<const uint8_t*>PyBytes_AS_STRING(piece), len(piece),
                                       &spans)
        finally:
            spans_free(&spans)
            scratch_free(&sc)

    def resolve_unknowns(self, bytes normalized not None, pieces):
        """The ids of a segmentation of ``normalized`` (UTF-8 bytes), given as
        ``[(start, end, id)]`` byte ranges in order, after the unknown rule
        that :meth:`encode` applies to the model's own: byte fallback, or one
        unknown id per run of unknown pieces. For segmentations drawn from
        :meth:`lattice`.

        >>> from fasttok.vocab import Vocabulary
        >>> v = Vocabulary(name="t", model="unigram", byte_level=False, unk_id=0,
        ...                tokens=(b"<unk>", b"a"), scores=(0.0, -1.0), token_types=(2, 1))
        >>> SentencePieceCore(v).resolve_unknowns(b"xya", [(0, 1, 0), (1, 2, 0), (2, 3, 1)])
        [0, 1]
        """
        cdef SpanBuf spans = SpanBuf(NULL, 0, 0)
        cdef Py_ssize_t n = len(normalized), at = 0
        try:
            for start, end, token in pieces:
                if not at <= start <= end <= n:
                    raise ValueError(f"piece ({start}, {end}) is not a range of the "
                                     f"{n} bytes after the one before")
                if not 0 <= token < self.n_tokens:
                    raise KeyError(token)
                spans_push(&spans, <uint32_t>token, <uint32_t>start, <uint32_t>end, 0)
                at = end
            return self._resolved_list(<const uint8_t*>PyBytes_AS_STRING(normalized), n, &spans)
        finally:
            spans_free(&spans)

    cdef list _resolved_list(self, const uint8_t* s, size_t n, const SpanBuf* spans):
        # The ids of spans over s[0:n] after the unknown rule, as a list
        cdef IdBuf ids = IdBuf(<uint32_t*>malloc((n + spans.len + 1) * sizeof(uint32_t)), 0)
        if ids.data == NULL:
            raise MemoryError()
        try:
            _resolve(&self.unknowns, s, spans, &ids)
            return ids_list(ids.data, ids.len, self.ints)
        finally:
            free(ids.data)

    def normalize(self, str text not None):
        """``text`` as the model's normalizer leaves it (``▁`` for spaces)."""
        return self.normalizer.normalize(text)

    def normalize_with_offsets(self, str text not None):
        """``(normalized, offsets)``: see :meth:`fasttok.normalizers._spm_normalizer.Normalizer.normalize_with_offsets`."""
        return self.normalizer.normalize_with_offsets(text)

    def lattice(self, str text not None):
        """Every Unigram lattice node of ``text`` after normalization, as
        ``(start, end, id, score)`` byte offsets into the normalized text."""
        if self.unigram is None:
            raise ValueError("only Unigram models have a lattice")
        return self.unigram.lattice(self.normalizer.normalize(text))

    def find_special(self, str text not None, const uint8_t[::1] mask not None):
        """-1: a SentencePiece model has no special token to find in text."""
        return -1

    # ------------------------------------------------------------ decoding

    cdef bytes _piece(self, Py_ssize_t i):
        cdef uint64_t a = self.table.pieces.offsets[i], b = self.table.pieces.offsets[i + 1]
        return (<char*>self.table.pieces.data)[a:b]

    def decode_bytes(self, tokens):
        """The text the ids stand for, as UTF-8 bytes: sentencepiece's
        ``decode`` or llama.cpp's ``detokenize`` (no special tokens rendered).
        ``KeyError`` on an id that is not in the vocabulary."""
        return self._decode(tokens, False)

    def decode_with_offsets(self, tokens):
        """``(decode_bytes(tokens), starts)``: ``starts[i]`` is the byte index
        in the decoded bytes where the text id ``i`` leaves begins, found by
        the same pass that decodes.

        A piece starts where its surface does: a control piece (llama.cpp:
        a hidden id) leaves none and starts at the next byte, the stripped
        dummy-prefix space takes nothing, ``unk`` starts at its
        ``unk_surface``, and each byte piece of a byte-fallback run at its
        own byte of the character they form (at the U+FFFD it became when
        it forms none). A ``denormalizer_spec`` rewrites text across
        pieces, so there no piece has a surface of its own: each id starts
        where the bytes before it end, as :meth:`stream_decoder` emits them.

        >>> from fasttok.vocab import Vocabulary
        >>> v = Vocabulary(name="t", model="unigram", byte_level=False, unk_id=0,
        ...                add_dummy_prefix=True, escape_whitespaces=True, byte_fallback=True,
        ...                tokens=(b"<unk>", b"<s>", "\u2581a".encode()) + tuple(b"<0x%02X>" % b for b in range(256)),
        ...                scores=(0.0,) * 259, token_types=(2, 3, 1) + (6,) * 256)
        >>> SentencePieceCore(v).decode_with_offsets([2, 1, 3 + 0xC3, 3 + 0xA9, 2])
        (b'a\xc3\xa9 a', [0, 1, 1, 2, 3])
        """
        return self._decode(tokens, True)

    cdef object _decode(self, tokens, bint with_starts):
        # decode_bytes, and with with_starts decode_with_offsets: one loop
        # for both, so the offsets follow the decode rules by construction.
        cdef Py_ssize_t count = len(tokens), i
        cdef uint32_t* ids = <uint32_t*>malloc((count + 1) * sizeof(uint32_t))
        cdef size_t* starts = NULL
        cdef ByteBuf out = ByteBuf(NULL, 0, 0)
        cdef DecodeState st
        cdef long long t
        decode_state_init(&st)
        if with_starts:
            starts = <size_t*>malloc((count + 1) * sizeof(size_t))
        if ids == NULL or (with_starts and starts == NULL):
            free(ids)
            free(starts)
            raise MemoryError()
        try:
            i = 0
            for token in tokens:
                t = token_id(token)
                if t < 0 or t >= self.n_tokens:
                    raise KeyError(token)
                ids[i] = <uint32_t>t
                i += 1
            if self.llama_cpp:
                self._detokenize_llama(ids, count, &out, starts)
            else:
                if self.denormalizer is None:
                    st.starts = starts
                for i in range(count):
                    if starts != NULL and self.denormalizer is not None:
                        # its rules rewrite text across pieces: an id starts
                        # where what came out before it ends, as a stream's
                        starts[i] = out.len
                    self._decode_push(&st, ids[i], &out)
                self._decode_finish(&st, &out)
            data = (<char*>out.data)[:out.len] if out.len else b""
            if not with_starts:
                return data
            return data, [starts[i] for i in range(count)]
        finally:
            free(ids)
            free(starts)
            bytebuf_free(&out)
            decode_state_free(&st)

    cdef int _append(self, ByteBuf* out, const uint8_t* p, size_t n) except -1:
        bytebuf_reserve(out, n)
        memcpy(out.data + out.len, p, n)
        out.len += n
        return 0

    # sentencepiece's Decode, one id at a time. Three stages, each holding
    # back only what a later id can still change: byte pieces until their
    # character is complete (or can no longer be), the text the denormalizer
    # reads until no longer rule can match there, and (with its
    # remove_extra_whitespaces) trailing spaces until something follows.
    # decode_bytes and SentencePieceStream make the same calls, so a stream
    # adds up to decode by construction. With st.starts (decode_with_offsets,
    # no denormalizer) each id's start is written where its text goes out:
    # a byte piece's when its run is decided, any other's after the run
    # before it.

    cdef int _decode_push(self, DecodeState* st, uint32_t id, ByteBuf* out) except -1:
        cdef uint8_t kind = self.table.types[id]
        cdef const uint8_t* p
        cdef size_t n
        if kind == T_BYTE:
            if st.run.len == 0:
                st.run_first = st.index
            bytebuf_reserve(&st.run, 1)
            st.run.data[st.run.len] = self.table.byte_of[id]
            st.run.len += 1
            self._decode_byte_run(st, False, out)
        else:
            self._decode_byte_run(st, True, out)
            if st.starts != NULL:
                st.starts[st.index] = out.len
            if st.bos_ws_seen or st.any_text:
                st.is_bos_ws = False
            if kind == T_CONTROL:
                st.bos_ws_seen = False
            elif kind == T_UNKNOWN:
                self._decoded(st, <const uint8_t*>PyBytes_AS_STRING(self.unk_surface),
                              len(self.unk_surface), False, out)
                st.bos_ws_seen = False
            else:
                p = self.table.pieces.data + self.table.pieces.offsets[id]
                n = self.table.pieces.offsets[id + 1] - self.table.pieces.offsets[id]
                st.bos_ws_seen = False
                if st.is_bos_ws and self.decoding.strip_dummy_space and n >= 3 \
                        and p[0] == 0xE2 and p[1] == 0x96 and p[2] == 0x81:
                    p += 3
                    n -= 3
                    # with remove_extra_whitespaces every leading ▁ piece goes
                    st.bos_ws_seen = not self.decoding.remove_extra_whitespaces
                self._decoded(st, p, n, True, out)
        st.index += 1
        if self.denormalizer is not None:
            self._denormalize(st, False, out)
        return 0

    cdef int _decode_finish(self, DecodeState* st, ByteBuf* out) except -1:
        # End of the ids: decide what was held back, then start afresh.
        self._decode_byte_run(st, True, out)
        if self.denormalizer is not None:
            self._denormalize(st, True, out)
        decode_state_free(st)
        decode_state_init(st)
        return 0

    cdef int _decode_byte_run(self, DecodeState* st, bint final, ByteBuf* out) except -1:
        # sentencepiece's ProcessBytePieces over the decided head of the run:
        # a valid character as it is, an invalid byte as U+FFFD. A head that
        # may still become a character waits for the next id unless final.
        # Each byte piece starts at its own byte of the character, or at the
        # U+FFFD it became.
        cdef size_t i = 0, k, j
        while i < st.run.len:
            k = valid_utf8_len(st.run.data + i, st.run.len - i)
            if k:
                if st.starts != NULL:
                    for j in range(k):
                        st.starts[st.run_first + i + j] = out.len + j
                self._decoded(st, st.run.data + i, k, False, out)
                i += k
            elif not final and _utf8_head(st.run.data + i, st.run.len - i):
                break
            else:
                if st.starts != NULL:
                    st.starts[st.run_first + i] = out.len
                self._decoded(st, <const uint8_t*>b"\xef\xbf\xbd", 3, False, out)
                i += 1
        if i:
            memmove(st.run.data, st.run.data + i, st.run.len - i)
            st.run.len -= i
            st.run_first += i
        return 0

    cdef int _decoded(self, DecodeState* st, const uint8_t* p, size_t n, bint unescape,
                      ByteBuf* out) except -1:
        # Decoded text: to the denormalizer's input if there is one, else out.
        cdef ByteBuf* dest = &st.text if self.denormalizer is not None else out
        cdef size_t i = 0
        if n == 0:
            return 0
        st.any_text = True
        bytebuf_reserve(dest, n)
        if not unescape:
            memcpy(dest.data + dest.len, p, n)
            dest.len += n
            return 0
        while i < n:
            if i + 3 <= n and p[i] == 0xE2 and p[i + 1] == 0x96 and p[i + 2] == 0x81:
                dest.data[dest.len] = 32
                i += 3
            else:
                dest.data[dest.len] = p[i]
                i += 1
            dest.len += 1
        return 0

    cdef int _denormalize(self, DecodeState* st, bint final, ByteBuf* out) except -1:
        # The denormalizer's Normalize over the decoded text, rule by rule,
        # up to the first place where more text could make a longer rule match.
        cdef Normalizer dn = self.denormalizer
        cdef size_t pos = 0, k, rep_len
        cdef const uint8_t* rep
        while pos < st.text.len:
            if not final and dn.rule_may_continue(st.text.data + pos, st.text.len - pos):
                break
            k = dn.prefix(st.text.data + pos, st.text.len - pos, &rep, &rep_len)
            self._denormalized(st, rep, rep_len, out)
            pos += k
        if pos:
            memmove(st.text.data, st.text.data + pos, st.text.len - pos)
            st.text.len -= pos
        return 0

    cdef int _denormalized(self, DecodeState* st, const uint8_t* rep, size_t n,
                           ByteBuf* out) except -1:
        # One rule's output through the denormalizer spec's whitespace options,
        # in the order sentencepiece's Normalize applies them.
        cdef Normalizer dn = self.denormalizer
        if not st.dn_started:
            if dn.remove_extra_whitespaces and n == 1 and rep[0] == 32:
                return 0
            st.dn_started = True
            if dn.add_dummy_prefix:
                self._denormalized_out(st, <const uint8_t*>b" ", 1, out)
            st.dn_prev_space = dn.remove_extra_whitespaces
        if st.dn_prev_space:
            while n and rep[0] == 32:
                rep += 1
                n -= 1
        if n:
            self._denormalized_out(st, rep, n, out)
            st.dn_prev_space = rep[n - 1] == 32
        if not dn.remove_extra_whitespaces:
            st.dn_prev_space = False
        return 0

    cdef int _denormalized_out(self, DecodeState* st, const uint8_t* p, size_t n,
                               ByteBuf* out) except -1:
        # Escape spaces if asked; with remove_extra_whitespaces keep trailing
        # spaces back, since the end of the text drops them.
        cdef Normalizer dn = self.denormalizer
        cdef ByteBuf* dest = &st.spaces if dn.remove_extra_whitespaces else out
        cdef size_t i, keep, unit
        bytebuf_reserve(dest, 3 * n)
        for i in range(n):
            if p[i] == 32 and dn.escape_whitespaces:
                memcpy(dest.data + dest.len, SPACE_SYMBOL, 3)
                dest.len += 3
            else:
                dest.data[dest.len] = p[i]
                dest.len += 1
        if dest == out:
            return 0
        unit = 3 if dn.escape_whitespaces else 1
        keep = 0
        while keep + unit <= st.spaces.len and memcmp(
                st.spaces.data + st.spaces.len - keep - unit,
                SPACE_SYMBOL if dn.escape_whitespaces else <const uint8_t*>b" ", unit) == 0:
            keep += unit
        self._append(out, st.spaces.data, st.spaces.len - keep)
        memmove(st.spaces.data, st.spaces.data + st.spaces.len - keep, keep)
        st.spaces.len = keep
        return 0

    cdef int _detokenize_llama(self, const uint32_t* ids, size_t count, ByteBuf* out,
                               size_t* starts) except -1:
        # llama_detokenize(remove_special=false, unparse_special=false); with
        # starts, where each id's bytes begin (a hidden id's: the next byte).
        # No clean-up of tokenization spaces: llama.cpp runs none for SPM/UGM.
        cdef bint remove_space = self.decoding.add_space_prefix
        cdef size_t i, n
        cdef uint32_t id
        cdef const uint8_t* p
        for i in range(count):
            id = ids[i]
            if starts != NULL:
                starts[i] = out.len
            if not self.table.hidden[id]:
                p = self.table.rendered.data + self.table.rendered.offsets[id]
                n = self.table.rendered.offsets[id + 1] - self.table.rendered.offsets[id]
                if remove_space and n and p[0] == 32:
                    p += 1
                    n -= 1
                self._append(out, p, n)
            remove_space = False
        return 0

    def stream_decoder(self):
        """A :class:`SentencePieceStream`: this model's ``decode`` one id at a time."""
        return SentencePieceStream(self)

    def token_bytes(self, object token):
        """What one id stands for: the piece with ``▁`` as a space, a byte
        piece's byte, a control piece's own text (llama.cpp's
        ``token_to_piece(special=True)``); ``KeyError`` for an unknown id."""
        cdef long long t = token_id(token)
        if t < 0 or t >= self.n_tokens:
            raise KeyError(token)
        cdef uint64_t a = self.table.rendered.offsets[t], b = self.table.rendered.offsets[t + 1]
        return (<char*>self.table.rendered.data)[a:b]

    def id_to_piece(self, object token):
        """The vocabulary's text of one id (``▁`` kept, ``<0x41>`` as is)."""
        cdef long long t = token_id(token)
        if t < 0 or t >= self.n_tokens:
            raise KeyError(token)
        return self._piece(<Py_ssize_t>t).decode("utf-8", "replace")

    def find_token(self, bytes data not None):
        """The id of the piece spelled ``data`` (vocabulary text, ``▁`` for
        spaces), or -1."""
        if self.piece_ids is None:
            ids = {}
            for i in range(self.n_tokens):
                ids.setdefault(self._piece(i), i)
            self.piece_ids = ids
        return self.piece_ids.get(data, -1)


cdef _interior_space_predecessors(bytes token, set out):
    # Add to out every character that directly precedes a ▁ not at the start.
    cdef Py_ssize_t i = 0, prev = -1, n = len(token), k
    cdef const uint8_t* p = <const uint8_t*>PyBytes_AS_STRING(token)
    while i < n:
        k = one_char_len(p[i])
        if k > n - i:
            k = n - i
        if i > 0 and _is_space_symbol(p + i, k) and prev >= 0:
            out.add(token[prev:i])
        prev = i
        i += k


cdef class SentencePieceStream:
    """sentencepiece's ``decode`` of a ``.model`` file, fed one id at a time.

    :meth:`push` returns the UTF-8 bytes no later id can change and
    :meth:`flush` the rest; together they are ``decode_bytes`` of all the
    ids, for every way of splitting them. Held back: the bytes of byte
    pieces until their character is complete (or cannot become one), text
    where a longer denormalizer rule could still match, and, when the
    denormalizer removes extra whitespace, trailing spaces. Control pieces
    add nothing, ``▁`` becomes a space, and the dummy-prefix space is
    stripped at the start of the text only. After :meth:`flush` the stream
    starts a new text.

    >>> from fasttok.vocab import Vocabulary
    >>> v = Vocabulary(name="t", model="unigram", byte_level=False, unk_id=0,
    ...                add_dummy_prefix=True, escape_whitespaces=True, byte_fallback=True,
    ...                tokens=(b"<unk>", "\u2581a".encode()) + tuple(b"<0x%02X>" % b for b in range(256)),
    ...                scores=(0.0,) * 258, token_types=(2, 1) + (6,) * 256)
    >>> stream = SentencePieceCore(v).stream_decoder()
    >>> [stream.push(t) for t in (1, 2 + 0xC3, 2 + 0xA9, 1)], stream.flush()
    ([b'a', b'', b'\xc3\xa9', b' a'], b'')
    """

    def __cinit__(self):
        decode_state_init(&self.st)

    def __init__(self, SentencePieceCore core not None):
        if core.llama_cpp:
            raise FasttokError(f"{core.vocabulary.name}: a GGUF vocabulary decodes as llama.cpp "
                               "does; stream it with Encoding.decode_stream")
        self.core = core

    def __dealloc__(self):
        decode_state_free(&self.st)

    def push(self, token):
        """Add one id; the bytes it completes (``KeyError`` for an unknown id)."""
        cdef long long t = token_id(token)
        cdef ByteBuf out = ByteBuf(NULL, 0, 0)
        if t < 0 or t >= self.core.n_tokens:
            raise KeyError(token)
        try:
            self.core._decode_push(&self.st, <uint32_t>t, &out)
            return (<char*>out.data)[:out.len] if out.len else b""
        finally:
            bytebuf_free(&out)

    def flush(self):
        """End the text: whatever was held back, decided as its end decides it."""
        cdef ByteBuf out = ByteBuf(NULL, 0, 0)
        try:
            self.core._decode_finish(&self.st, &out)
            return (<char*>out.data)[:out.len] if out.len else b""
        finally:
            bytebuf_free(&out)
