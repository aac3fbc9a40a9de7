"""Hugging Face ``tokenizers``' BPE model (``models::bpe``), compiled.

What is computed, as ``BPE::merge_word`` and ``Word::merge_all`` do it:

* **First parts.** Each character of the sequence is looked up as it is,
  with the continuing-subword prefix in front when it is not the first and
  the end-of-word suffix behind when it is the last. A character that is no
  token becomes, with ``byte_fallback``, one ``<0xXX>`` token per byte of
  that looked-up text (prefix and suffix included, as tokenizers does),
  provided all of them exist; otherwise the unknown token, one per
  character or one per run with ``fuse_unk``; without an unknown token it
  is dropped. A pending unknown token is written out only when the next
  character is found whole (or at the end), so byte-fallback tokens after it
  come first, as in tokenizers.
* **Merges**: the lowest merge rank first, the leftmost on ties, through
  fasttok's one merge loop (``bpe_merge_parts``) over a pair index whose
  entries name their merged token (``a + b[len(prefix):]``, tokenizers'
  rule); with dropout, ``bpe_sample_parts``.
* **Offsets**: tokenizers counts each part's length in bytes of the
  character (one byte per byte-fallback token), adds them up, and its
  pipeline turns those byte offsets into character offsets through the
  string's alignment; ``tokenize`` returns that result (a byte-fallback
  token of a multi-byte character spans the character). Parts past the end
  (prefix bytes given as byte tokens) keep tokenizers' uncorrected offsets.
* **Walks** of whole texts (``walk_stretches``, ``StretchWalker``): the
  stretches between added tokens, each rewritten as a SentencePiece-style
  normalizer or ``Metaspace`` writes it, in one call; each normalized byte
  remembers the text's character it came from, so a token's offsets are
  those characters' (what tokenizers' alignment gives), with no Python
  object per stretch or per token. A batch (``encode_offsets_many``) cuts
  its texts with the GIL held, walks them all without it, then makes their
  arrays; the walk's buffers are kept for the next call.
* **Spans and the pre-token cache.** Where positions are the text's bytes
  (no prefix or suffix, an unknown token, no dropout), a text is cut into
  spans before any part is made, between two characters that are tokens
  alone and that no token holds side by side (so no merge crosses), and
  each span's tokens (slot and end) are kept in the calling thread's
  pre-token cache (``fasttok/shared/ft_piece_cache.h``) by its bytes: a
  batch's threads each use their own.

Parts are positioned by those cumulative lengths, not by the text's bytes:
with a pair index the merge loop never reads the text, so the positions
only have to be increasing, and the offsets fall out of them.

Performance notes (2-core VM shared with other jobs, CPU time, best of 3,
``tokenize_ids`` per piece against tokenizers' ``Model.tokenize``, whole
corpus files; ``bench/test_hf_bpe_model_bench.py``): llama2 lines 4.8-10x
faster (en.txt 0.25 s against 1.22 s), words 5-8x; gemma3 lines 4-7x, words
3.6-5.4x. What decided it:

* Cuts. A sentencepiece-style file's model gets whole lines (50 characters
  on average in en.txt), which the merge loop took through its queue: 0.96 s
  for en.txt's lines. Merging the spans between points no merge crosses
  (see ``_merge_cut``) brings that to 0.28 s.
* A table of the slot of every BMP character on its own (256 KB, 2 ms to
  fill) in place of hashing each character: the first parts of en.txt's
  lines went from 0.24 s to 0.12 s.
* A byte per token saying whether the parts of a span that spells it
  merge into it, learnt the first time (``span_self``): Gemma 3's en.txt
  (whole, 0.9 MB) 0.125 -> 0.10 s.
* A word cache inside the compiled loop (8,192 spans of up to 22 bytes,
  one per model, 512 KB), in front of ``span_self`` and the merge loop: on
  Gemma 3 the span's lookup in the 262k-token index and ``span_self`` were
  cache misses, the top of the profile. The walk of the first 5,000 lines:
  gemma3 en 4.4 -> 3.65 us, zh 3.1 -> 2.5, code 2.6 -> 2.1. (Not a cache of
  Python lists, like tokenizers' 10,000 words: a word of en.txt cost 0.77
  us through a Python call, so such a cache could only save part of that.)
* It was held by one caller at a time, so the second thread of a batch
  walked without it, and it was probed only after the first parts of the
  whole text were made (2.9k instructions a gemma3 en line) and cut. Now
  the spans are found in the text (``_cached_spans``) and looked up in the
  thread's pre-token cache, first parts made only for a span it misses;
  the cut also compares characters (``char_pairs``), not only the bytes at
  the seam: Gemma 3 has "n’t", so the bytes "n", E2 are side by side in a
  token and "n" + "▁" was never cut by bytes (en lines: 12.4 -> 13.6 spans,
  9.0k -> 8.1k distinct; zh 3.5 -> 7.3 spans, 632 -> 214 of 5,000 lines
  with a span past an entry's 48 bytes). ``StretchWalker.encode`` of the
  first 1,000 gemma3 en lines, warm (callgrind): 12.0k -> 9.3k
  instructions a line (scan 2.5k, cache probes 1.9k, misses 0.9k, the
  normalized copy 1.9k, arrays 1k). Offsets are counted from the written
  bytes where each written character stands for one of the text's,
  instead of storing each byte's character. Timed against the word-cache
  walk, processes alternating, CPU best of 7, first 5,000 lines, load 5-7:
  gemma3 ``encode`` en 2.1-2.7 -> 1.7-2.1 us a line, code 1.4-1.7 ->
  1.1-1.3, zh 1.2-1.6 -> 0.86-0.96; the batch on 2 threads (CPU) en
  2.4-2.6 -> 1.8-1.9, no longer above the 1-thread batch by more than the
  helper thread's cold table; ``fasttok.load(gemma3).encode`` lines en
  2.7 -> 2.0-2.4, zh 1.6 -> 0.9-1.1.
* Tried and dropped: hashing 32 spans at a time and prefetching their
  sets of the cache before probing any (as the byte-level walk does one
  piece ahead): 8% more instructions, no difference in time measurable
  against the walk without it (alternating, load 5).

* Batches (``StretchWalker.encode_offsets_many``): the texts of a chunk
  walked with the GIL released, 128 at a time (all 5,000 en lines in one
  go: 3.31 us a line against 3.05 for ``encode`` in a loop, the tokens
  outgrowing the caches before their arrays were made; by 128: 1.87 against
  2.12). ``hf.Tokenizer.encode_batch`` of those lines on two threads, wall
  time against tokenizers' on its pool, busy machine: llama2 x1.9-2.3 ->
  x2.2-3.0, gemma3 x2.0-2.6 -> x3.0-3.2 (CPU time unchanged, ~x3.5: the
  Encodings are made in Python, one thread at a time). A text no added
  token can start in goes into the block's parts as one stretch, with no
  list (``_uncut``). Its tokens leave the walk as three arrays and a tuple:
  one ``walked_block`` of ``post_processors._encoding_lists`` each, as the
  byte-level core in ``formats`` makes them, gave ``encode_batch`` of the
  bench's 5,000 lines on one thread, every field read, gemma3 code 78.1M ->
  72.5M and zh 73.7M -> 68.6M (callgrind), but a model may not import a
  post-processor (tests/test_layering.py), so it stays with the format. Per call, a text
  holding none of the added tokens' first characters skips the cut's Python
  call: llama2's ids call 9.9k -> 9.5k instructions.

* Building from fasttok's packed ``tokenizer.json`` reading
  (``packed_merge_slots``): Gemma 3's 514k merges, each part and the
  merged text looked up in the 262k-entry index, 142 ms one find after
  another (three cache misses each), 61 ms with 64 merges' finds fetched
  ahead together (``_find_all``); the Python strings' ``merge_slots`` path
  was ~400 ms with its ``str.encode`` calls and first ``TokenTables``.
  Each probe hashed once (not once per prefetch pass) and each merge's
  parts read once: Llama 2's 59k merges 57.4M -> 37.4M instructions
  (callgrind).
* What a load builds: only the merges' check and slots (a bad merge fails
  the load, as in tokenizers). ``HfBpeCore`` (its ``TokenTables``, seams,
  byte slots; ~10 ms for Llama 2) is built on the model's first use
  (``hf_bpe.BPE._core``), and its token strings (``slot_names``, 32k-262k
  ``str``) on the first ``tokenize`` that names them: ``hf_load_time``
  llama2's fasttok.hf load 34 -> 22 ms, the first encode paying the core.

Tokens live in *slots* (the vocabulary's entries in id order) with the id of
each slot beside them, so sparse ids and two spellings of one id (both
allowed in ``tokenizer.json``) cost nothing special.
"""

from cpython cimport array
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_GET_ITEM
from cpython.unicode cimport PyUnicode_DecodeUTF8, PyUnicode_GET_LENGTH
from libc.stdint cimport INT32_MAX, SIZE_MAX, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memchr, memcmp, memcpy, memmove, memset

import array

from fasttok.errors import FasttokError
from fasttok.shared._literal_cut cimport LiteralCut

from fasttok.models._bpe cimport Dropout, PairMemo, bpe_merge_parts, bpe_sample_parts, pair_memo_init, pair_memo_release
from fasttok.shared._growth cimport grow_array
from fasttok.shared._json_reader cimport KIND_PAIR, PackedMerges, PackedVocab
from fasttok.shared._piece_cache cimport (FT_PC_PAYLOAD, ft_pc_count, ft_pc_entry, ft_pc_find, ft_pc_fits,
                                          ft_pc_hash, ft_pc_ids, ft_pc_open, ft_pc_put, ft_pc_table,
                                          piece_cache_owner, piece_cache_table)
from fasttok.shared._id_lists cimport PyObject_GC_UnTrack, ids_list
from fasttok.shared._utf8 cimport Utf8Source, has_surrogate, utf8_capacity, utf8_source, utf8_write
from fasttok.shared._tables cimport NO_TOKEN, SELF_NO, SELF_UNKNOWN, SELF_YES, ByteStrings, TokenTables, \
    TokenTablesView, bmp_token_ids, find_bytes, find_token, ft_load_byte, ft_store_byte, hash_bytes, \
    prefetch


cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size) except NULL


class UnkTokenNotFoundError(FasttokError):
    """The model's ``unk_token`` is not in its vocabulary and a character
    needed it (tokenizers' ``UnkTokenOutOfVocabulary``): add the token to the
    vocabulary or enable ``byte_fallback``."""


cdef enum:
    STACK_PARTS = 128
    NO_UNK = 0xFFFFFFFF       # no unknown token: unknown characters are dropped
    MISSING_UNK = 0xFFFFFFFE  # an unknown token named that is not in the vocabulary


cdef inline size_t _utf8_width(uint8_t lead) noexcept nogil:
    if lead < 0x80:
        return 1
    if lead < 0xE0:
        return 2
    if lead < 0xF0:
        return 3
    return 4


cdef inline uint32_t _code_point(const uint8_t* p, size_t w) noexcept nogil:
    if w == 1:
        return p[0]
    if w == 2:
        return ((p[0] & 0x1F) << 6) | (p[1] & 0x3F)
    return ((p[0] & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F)


cdef inline uint32_t _any_code_point(const uint8_t* p, size_t w) noexcept nogil:
    # _code_point, of 4 bytes too
    if w == 4:
        return ((p[0] & 0x07) << 18) | ((p[1] & 0x3F) << 12) | ((p[2] & 0x3F) << 6) | (p[3] & 0x3F)
    return _code_point(p, w)


cdef inline uint64_t _pair_bit(uint32_t left, uint32_t right, int shift) noexcept nogil:
    # the bit of two characters side by side in HfBpeCore.char_pairs
    return (((<uint64_t>left << 21) | right) * 0x9E3779B97F4A7C15ULL) >> shift


cdef inline void _add_part(uint32_t* starts, uint32_t* slots, size_t* m, uint32_t* pos,
                           uint32_t slot, size_t length) noexcept nogil:
    # a part of length bytes at pos (a function, not a method: the first
    # parts call it for every character, and a method goes through the vtable)
    starts[m[0]] = pos[0]
    slots[m[0]] = slot
    m[0] += 1
    pos[0] += <uint32_t>length


cdef Py_ssize_t _put(str text, uint8_t** buf, size_t* cap, size_t at) except -2:
    # text's UTF-8 at buf[0] + at (grown as needed); -1 if it holds a
    # surrogate (which spells no token)
    cdef Utf8Source src
    cdef size_t need
    if has_surrogate(text):
        return -1
    utf8_source(text, &src)
    need = at + (<size_t>src.length if src.ascii else utf8_capacity(&src))
    grow_array(<void**>buf, cap, need, 1, 256)
    if src.ascii:
        memcpy(buf[0] + at, src.data, <size_t>src.length)
        return src.length
    return <Py_ssize_t>utf8_write(&src, buf[0] + at)


def merge_slots(merges, TokenTables tables not None, size_t cut, int64_t empty_slot=-1, *,
                bint legacy=False, const uint8_t[::1] skip=None):
    """The ``(left slot, right slot, merged slot)`` of each of ``merges`` in
    ``tables``, laid end to end in one ``array('I')`` (as
    :class:`~fasttok.shared._tables.TokenTables` takes them), the merged
    token being the left part and the right one less its first ``cut``
    bytes (tokenizers' join under a continuing-subword prefix); or
    ``(index, part)`` of the first merge naming no token: part 0 the left
    one, 1 the right one, 2 the merged one, 3 none (the merge is not of the
    form). ``empty_slot``: the slot of the empty token, if the vocabulary has
    one (the tables hold no empty spelling). ``skip``: one byte a slot, the
    merges into a slot whose byte is not 0 left out.

    ``merges`` are pairs of token strings, or with ``legacy`` the strings
    ``"a b"`` of tokenizer.json's older form, split at their one space here
    (a line starting ``#version`` is skipped, as tokenizers skips it).

    One pass in C: three dict lookups a merge in Python were most of Gemma
    3's load (514k merges), and splitting Llama 2's 61k strings in Python
    was a third of its model's build.

    >>> from fasttok.shared._tables import TokenTables
    >>> t = TokenTables([b"a", b"##b", b"ab"])
    >>> merge_slots([("a", "##b")], t, 2), merge_slots([("a", "##b"), ("a", "x")], t, 2)
    (array('I', [0, 1, 2]), (1, 1))
    >>> merge_slots(["#version: 0.2", "a ##b"], t, 2, legacy=True)
    array('I', [0, 1, 2])
    >>> merge_slots(["a  b"], t, 2, legacy=True)
    (0, 3)
    >>> merge_slots([("a", "##b")], t, 2, skip=b"\\0\\0\\1")
    array('I')
    """
    cdef array.array out
    cdef Py_ssize_t index = -1, la, lb, n
    cdef int64_t l, r, m
    cdef size_t cap = 0, n_out = 0, out_cap = 0
    cdef uint8_t* buf = NULL
    cdef uint32_t* found = NULL
    cdef uint8_t* space
    if skip is not None and <size_t>skip.shape[0] < <size_t>len(tables):
        raise ValueError(f"skip has {skip.shape[0]} bytes for {len(tables)} slots")
    try:
        grow_array(<void**>&buf, &cap, 1, 1, 256)  # never NULL, even for empty parts
        grow_array(<void**>&found, &out_cap, 3 * len(merges) + 1, sizeof(uint32_t), 256)
        for merge in merges:
            index += 1
            if legacy:
                if type(merge) is not str:
                    return index, 3
                n = _put(merge, &buf, &cap, 0)
                if n < 0:  # a surrogate: which part holds it names the part
                    if merge.startswith("#version"):
                        continue
                    parts = merge.split(" ")
                    if len(parts) != 2:
                        return index, 3
                    return index, 0 if _put(parts[0], &buf, &cap, 0) < 0 else 1
                if n >= 8 and memcmp(buf, b"#version", 8) == 0:
                    continue
                space = <uint8_t*>memchr(buf, 0x20, n)
                if space == NULL or memchr(space + 1, 0x20, n - (space + 1 - buf)) != NULL:
                    return index, 3
                la = space - buf
                # the right part right after the left one, as below
                memmove(space, space + 1, n - la - 1)
                lb = n - la - 1
            else:
                if (type(merge) is not list and type(merge) is not tuple) or len(merge) != 2:
                    return index, 3
                a, b = merge
                if type(a) is not str or type(b) is not str:
                    return index, 3
                la = _put(a, &buf, &cap, 0)
                if la < 0:
                    return index, 0
                lb = _put(b, &buf, &cap, la)
                if lb < 0:
                    return index, 1
            l = find_bytes(&tables.index, &tables.strings, buf, la) if la else empty_slot
            if l < 0:
                return index, 0
            r = find_bytes(&tables.index, &tables.strings, buf + la, lb) if lb else empty_slot
            if r < 0:
                return index, 1
            # the cut must leave whole characters of the right part
            if cut > <size_t>lb or (cut < <size_t>lb and (buf[la + cut] & 0xC0) == 0x80):
                return index, 2
            memmove(buf + la, buf + la + cut, lb - cut)
            m = (find_bytes(&tables.index, &tables.strings, buf, la + lb - cut)
                 if la + lb - cut else empty_slot)
            if m < 0:
                return index, 2
            if skip is not None and skip[m]:
                continue
            found[n_out] = <uint32_t>l
            found[n_out + 1] = <uint32_t>r
            found[n_out + 2] = <uint32_t>m
            n_out += 3
        out = array.clone(array.array("I"), n_out, False)
        memcpy(out.data.as_uints, found, n_out * sizeof(uint32_t))
        return out
    finally:
        free(buf)
        free(found)


cdef enum:
    FIND_BLOCK = 64  # merges whose parts packed_merge_slots looks up together


cdef struct _Probe:
    # a text looked up in a PackedVocab: its hash, then its entry index, -1 for none
    const uint8_t* p
    size_t n
    uint64_t h
    int64_t found


cdef void _find_all(PackedVocab vocab, _Probe* probes, size_t count) noexcept nogil:
    # vocab.find of each probe, their cache misses overlapped: every probe's
    # first slot is fetched, then the offsets and the text it names, before
    # any is compared (one find after another waited on three misses each).
    # Each text is hashed once: hashing it for each pass was 9 of a merge's
    # 12 hashes, ~60% of packed_merge_slots' own instructions (Llama 2)
    cdef size_t j
    cdef uint64_t e
    for j in range(count):
        probes[j].h = hash_bytes(probes[j].p, probes[j].n)
        prefetch(&vocab.slots[probes[j].h & vocab.mask])
    for j in range(count):
        e = vocab.slots[probes[j].h & vocab.mask]
        if e:
            prefetch(&vocab.offsets[e - 1])
    for j in range(count):
        e = vocab.slots[probes[j].h & vocab.mask]
        if e:
            prefetch(vocab.data + vocab.offsets[e - 1])
    for j in range(count):
        probes[j].found = vocab.find_hashed(probes[j].p, probes[j].n, probes[j].h)


def packed_merge_slots(PackedVocab vocab not None, PackedMerges merges not None, size_t cut, *,
                       const uint8_t[::1] skip=None):
    """:func:`merge_slots` of merges and a vocabulary kept packed by
    fasttok's ``tokenizer.json`` reader, whose ids are its entries' places
    (``vocab.in_order``: then the slots are the entries): the parts are
    found with ``vocab.find`` in the packed UTF-8, no Python string made
    for an entry or a merge. The merges are in the legacy form when none is
    a pair, as :func:`merge_slots` is told; a failing merge gives the same
    ``(index, part)`` (the reader refuses a document holding a surrogate,
    so no part here holds one).

    >>> from fasttok.shared._json_reader import read_tokenizer_document
    >>> doc, m = read_tokenizer_document(
    ...     b'{"model": {"vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b", "a x"]}}')
    >>> packed_merge_slots(m.vocab, m.merges, 0)
    (1, 1)
    """
    cdef array.array out
    cdef Py_ssize_t i, first, last, n = merges.n
    cdef size_t la, lb, j, used, cap = 0, n_out = 0
    cdef const uint8_t* a
    cdef const uint8_t* b
    cdef int64_t l, r, m
    cdef uint8_t* buf = NULL
    cdef uint32_t* found = NULL
    cdef _Probe probes[3 * FIND_BLOCK]
    cdef bint formed[FIND_BLOCK]   # the merge has two parts
    cdef bint legacy = n > 0
    cdef Py_ssize_t bad = -1
    cdef int part = 0
    if not vocab.in_order:
        raise ValueError("the vocabulary's ids are not its entries' places")
    if skip is not None and skip.shape[0] < vocab.n:
        raise ValueError(f"skip has {skip.shape[0]} bytes for {vocab.n} slots")
    for i in range(n):
        if merges.kinds[i] == KIND_PAIR:
            legacy = False
            break
    found = <uint32_t*>malloc((3 * <size_t>n + 1) * sizeof(uint32_t))
    try:
        if found == NULL:
            raise MemoryError()
        with nogil:
            first = 0
            while first < n and bad < 0:
                last = min(first + FIND_BLOCK, n)
                # the block's merged texts, written one after another: no
                # longer than its merges' texts, which hold both parts
                grow_array(<void**>&buf, &cap, merges.offsets[last] - merges.offsets[first] + 1,
                           1, 4096)
                used = 0
                for i in range(first, last):
                    j = 3 * (i - first)
                    probes[j].n = probes[j + 1].n = probes[j + 2].n = 0
                    probes[j].p = probes[j + 1].p = probes[j + 2].p = buf
                    formed[i - first] = merges.parts(i, &a, &la, &b, &lb) == 0
                    if not formed[i - first]:
                        continue
                    probes[j].p, probes[j].n = a, la
                    probes[j + 1].p, probes[j + 1].n = b, lb
                    if cut <= lb:
                        memcpy(buf + used, a, la)
                        memcpy(buf + used + la, b + cut, lb - cut)
                        probes[j + 2].p, probes[j + 2].n = buf + used, la + lb - cut
                        used += la + lb - cut
                _find_all(vocab, probes, 3 * (last - first))
                for i in range(first, last):
                    j = 3 * (i - first)
                    if legacy:
                        a = merges.data + merges.offsets[i]
                        if merges.offsets[i + 1] - merges.offsets[i] >= 8 \
                                and memcmp(a, b"#version", 8) == 0:
                            continue
                    elif merges.kinds[i] != KIND_PAIR:
                        bad = i
                        part = 3
                        break
                    if not formed[i - first]:
                        bad = i
                        part = 3
                        break
                    l, r, m = probes[j].found, probes[j + 1].found, probes[j + 2].found
                    if l < 0 or r < 0:
                        bad = i
                        part = 0 if l < 0 else 1
                        break
                    b, lb = probes[j + 1].p, probes[j + 1].n
                    # the cut must leave whole characters of the right part
                    if cut > lb or (cut < lb and (b[cut] & 0xC0) == 0x80) or m < 0:
                        bad = i
                        part = 2
                        break
                    if skip is not None and skip[m]:
                        continue
                    found[n_out] = <uint32_t>l
                    found[n_out + 1] = <uint32_t>r
                    found[n_out + 2] = <uint32_t>m
                    n_out += 3
                first = last
        if bad >= 0:
            return bad, part
        out = array.clone(array.array("I"), n_out, False)
        memcpy(out.data.as_uints, found, n_out * sizeof(uint32_t))
        return out
    finally:
        free(buf)
        free(found)


cpdef enum:
    # when walk_stretches puts its prepend string before a stretch
    PREPEND_EACH = 0           # each non-empty one
    PREPEND_UNLESS_THERE = 1   # each that does not start with it once written
    PREPEND_FIRST = 2          # as PREPEND_UNLESS_THERE, the text's first only


cdef enum:
    ADDED_MARK = 0xFFFFFFFF  # an added token's place among a walk's slots
    SPARE_BYTES = 1 << 20    # a walk's buffers past this many items are not kept
    BATCH_BLOCK = 128        # texts a batch walks between two makings of arrays
    SPAN_SLOTS = 1 << 24     # slots a cached token's word has room for (8 bits: its end)
    MASKED_ROOM = 4          # bytes of a space's rewriting written under a mask


cdef array.array _U32 = array.array("I")
cdef array.array _I32 = array.array("i")


cdef void _out_free(WalkOut* o) noexcept nogil:
    free(o.parts)
    free(o.buf)
    free(o.char_at)
    free(o.starts)
    free(o.slots)
    free(o.out)
    free(o.found)
    free(o.spans)
    free(o.words)
    memset(o, 0, sizeof(WalkOut))


cdef size_t _fill_parts(list parts, dict added, WalkOut* o, size_t at) except? 0:
    # parts (stretches at even places, added tokens' texts at odd ones, as
    # walk_stretches takes them) as o.parts[at:]; returns the number
    cdef Py_ssize_t i, size, count = len(parts)
    cdef StretchPart* part
    grow_array(<void**>&o.parts, &o.parts_cap, at + <size_t>count, sizeof(StretchPart), 16)
    for i in range(count):
        text = parts[i]
        if type(text) is not str:
            raise TypeError(f"parts[{i}] is {type(text).__name__}, not str")
        part = &o.parts[at + <size_t>i]
        part.length = <size_t>PyUnicode_GET_LENGTH(text)
        if i & 1:
            part.text = NULL
            part.added = added[text]
        else:
            _fill_stretch(text, part)
    return <size_t>count


cdef int _fill_stretch(str text, StretchPart* part) except -1:
    # part for the stretch text (its text never NULL, even when empty)
    cdef Py_ssize_t size
    part.length = <size_t>PyUnicode_GET_LENGTH(text)
    part.text = <const uint8_t*>PyUnicode_AsUTF8AndSize(text, &size)
    part.size = <size_t>size
    return 0


cdef int _rewrite(Rewrite* rw, bytes space_to, bytes prepend, int prepend_when) except -1:
    # rw for walk_stretches' first arguments (the bytes kept by the caller)
    rw.space = NULL if space_to is None else <const char*>space_to
    rw.space_len = 1 if space_to is None else len(space_to)
    rw.prepend = <const uint8_t*>prepend
    rw.prepend_len = len(prepend)
    rw.when = prepend_when
    rw.one_for_one = space_to is None or len(space_to.decode("utf-8", "surrogatepass")) == 1
    rw.prepend_chars = len(prepend.decode("utf-8", "surrogatepass"))
    return 0


cdef bint _starts_with(const uint8_t* text, size_t size, const uint8_t* prefix, size_t plen,
                       const char* space, size_t slen) noexcept nogil:
    # whether text, each space written as space (when not NULL), starts with prefix
    if size and text[0] == 0x20 and space != NULL:
        return slen >= plen and memcmp(space, prefix, plen) == 0
    return size >= plen and memcmp(text, prefix, plen) == 0


cdef inline size_t _write_masked(uint8_t* buf, size_t n, const uint8_t* text, size_t size,
                                 const char* space, size_t slen) noexcept nogil:
    # text written at buf + n, each space as space (slen <= MASKED_ROOM
    # bytes, room for that past the end); returns the end. Every byte
    # stores space's bytes in one word, then itself over the first unless
    # it is a space, and moves on by 1 or slen: no copy call per space.
    cdef size_t k
    cdef uint8_t b
    cdef uint8_t tail[MASKED_ROOM]
    cdef size_t step = slen - 1
    cdef bint is_space
    memset(tail, 0, MASKED_ROOM)
    memcpy(tail, space, slen)
    for k in range(size):
        b = text[k]
        is_space = b == 0x20
        memcpy(buf + n, tail, MASKED_ROOM)
        buf[n] = tail[0] if is_space else b
        n += 1 + (step if is_space else 0)
    return n


cdef void _count_spans(const uint8_t* buf, const uint32_t* starts, size_t m, uint32_t at,
                       size_t prepended, int32_t* spans) noexcept nogil:
    # The character span of each of m tokens (bytes starts[j]..starts[j + 1]
    # of buf) where each written character stands for one of the text's,
    # from at, and the first prepended ones for the first: a token spans
    # the characters of its first and last bytes, counted as it goes.
    cdef size_t q = 0, j
    cdef int64_t lead = 0, first, last  # lead bytes of buf[0:q]
    for j in range(m):
        while q <= starts[j]:
            lead += (buf[q] & 0xC0) != 0x80
            q += 1
        first = lead - 1 - <int64_t>prepended
        while q < starts[j + 1]:
            lead += (buf[q] & 0xC0) != 0x80
            q += 1
        last = lead - 1 - <int64_t>prepended
        spans[2 * j] = <int32_t>(at + (first if first > 0 else 0))
        spans[2 * j + 1] = <int32_t>(at + (last if last > 0 else 0) + 1)


cdef array.array _int_array(const int32_t* data, size_t n):
    # an array('i') of data[0:n]
    cdef array.array out = array.clone(_I32, n, False)
    memcpy(out.data.as_ints, data, n * sizeof(int32_t))
    return out


cdef inline uint32_t _char_slot(HfBpeCore core, const uint8_t* p, size_t w) noexcept nogil:
    # the slot of the character p[0:w] alone, or NO_TOKEN
    cdef int64_t found
    if w <= 3:
        return core.char_slots[_code_point(p, w)]
    found = find_token(core.view, p, w)
    return <uint32_t>found if found >= 0 else NO_TOKEN


cdef inline bint _seam(HfBpeCore core, const uint8_t* s, size_t k, uint32_t left,
                       uint32_t right, size_t width) noexcept nogil:
    # whether _cached_spans cuts s before its character at k (code point
    # right, of width bytes; left: the one before it, one of the two not
    # ASCII): both are tokens alone, and no token holds their bytes at the
    # seam or the two characters side by side
    cdef uint32_t bigram = (<uint32_t>s[k - 1] << 8) | s[k]
    cdef uint64_t bit
    cdef size_t p = k - 1
    if (core.view.token_bigrams[bigram >> 3] >> (bigram & 7)) & 1:
        if core.char_pairs == NULL:
            return False
        bit = _pair_bit(left, right, core.pairs_shift)
        if (core.char_pairs[bit >> 6] >> (bit & 63)) & 1:
            return False
    while (s[p] & 0xC0) == 0x80:
        p -= 1
    return _char_slot(core, s + p, k - p) != NO_TOKEN and _char_slot(core, s + k, width) != NO_TOKEN


cdef class HfBpeCore:
    """The compiled BPE of one ``tokenizers`` BPE model: ``tokens`` are the
    slots' UTF-8 spellings, ``ids`` their ids, ``names`` the token string
    reported for each slot (default: its spelling), ``merges`` ``(left slot,
    right slot, merged slot)`` in rank order (or those laid end to end in an
    ``array('I')``, as :func:`merge_slots` gives them); a pair of slots listed twice
    keeps its last merge, as tokenizers' map of merges does. ``not_whole``:
    slots that ``ignore_merges``' lookup of a whole word never gives (the
    Encoding's special added tokens; their merges are left out by the caller).

    >>> core = HfBpeCore([b"a", b"b", b"ab"], (0, 1, 2), [(0, 1, 2)])
    >>> core.tokenize_slots("abba")
    ([2, 1, 0], [0, 2, 3, 4])
    """

    def __cinit__(self):
        self.char_slots = NULL
        self.edge_bytes = NULL
        self.key = NULL
        self.span_self = NULL
        self.not_whole = NULL
        self.slot_ids = NULL
        self.ascii_seams = NULL
        self.char_pairs = NULL
        memset(&self.spare, 0, sizeof(WalkOut))

    def __init__(self, tokens, tuple ids not None, merges, *, tuple names=None, int64_t unk_slot=-1,
                 str unk_token=None,
                 bytes prefix=b"", bytes suffix=b"", bint fuse_unk=False, bint byte_fallback=False,
                 bint ignore_merges=False, double dropout=0.0, uint64_t seed=0, not_whole=()):
        cdef Py_ssize_t i, n = len(tokens)
        cdef int64_t found
        if len(ids) != n or (names is not None and len(names) != n):
            raise ValueError(f"ids and names must have one entry per token ({n})")
        self.tables = TokenTables(tokens, merges=merges, later_merge_wins=True)
        self.view = &self.tables.view
        self.slot_ints = ids
        self.slot_ids = <uint32_t*>malloc((n + 1) * sizeof(uint32_t))
        if self.slot_ids == NULL:
            raise MemoryError()
        self.slots_are_ids = True
        for i in range(n):
            self.slot_ids[i] = ids[i]
            self.slots_are_ids &= self.slot_ids[i] == i
        # the names are made on first use (tokenize): decoding 32k-262k
        # spellings was a tenth of a load that never asks for them
        self.names = names
        self.key = <uint8_t*>malloc(len(prefix) + 4 + len(suffix))
        if self.key == NULL:
            raise MemoryError()
        # most characters are looked up bare, and a table read is cheaper than hashing
        self.char_slots = bmp_token_ids(self.view, NO_TOKEN)
        # with a prefix a merged token is not its parts spelled together,
        # which the cuts rely on
        self.cut_words = len(prefix) == 0
        if self.cut_words:
            self._fill_edge_bytes(tokens)
        self.prefix = prefix
        self.suffix = suffix
        self.prefix_c = self.prefix
        self.suffix_c = self.suffix
        self.prefix_len = len(prefix)
        self.suffix_len = len(suffix)
        self.unk_token = unk_token
        if unk_token is None:
            self.unk_slot = NO_UNK
        elif unk_slot < 0:
            self.unk_slot = MISSING_UNK
        else:
            self.unk_slot = <uint32_t>unk_slot
        # positions are the text's bytes when nothing is added to a part
        # (prefix, suffix) and no character is dropped (no unknown token)
        if self.cut_words and len(suffix) == 0 and self.unk_slot != NO_UNK:
            self.span_self = <uint8_t*>calloc(n + 1, 1)
            if self.span_self == NULL:
                raise MemoryError()
        # a cached token is its slot and its end in the span, in one word
        self.cache_spans = self.span_self != NULL and n < SPAN_SLOTS
        self.owner = piece_cache_owner()
        if self.cache_spans:
            self._fill_seams()
        self.fuse_unk = fuse_unk
        self.byte_fallback = byte_fallback
        self.ignore_merges = ignore_merges
        if ignore_merges and not_whole:
            self.not_whole = <uint8_t*>calloc(n + 1, 1)
            if self.not_whole == NULL:
                raise MemoryError()
            for i in not_whole:
                if not 0 <= i < n:
                    raise ValueError(f"not_whole slot {i} is not one of the {n} slots")
                self.not_whole[i] = 1
        for i in range(256):
            found = self.tables.find(f"<0x{i:02X}>".encode())
            self.byte_slots[i] = <uint32_t>found if found >= 0 else NO_TOKEN
        self.drop.rate = dropout
        self.drop.state = seed

    cdef int _fill_edge_bytes(self, tokens) except -1:
        # the first and the last byte of each slot's spelling
        cdef Py_ssize_t i, n = len(tokens)
        cdef bytes token
        self.edge_bytes = <uint8_t*>malloc(2 * n + 1)
        if self.edge_bytes == NULL:
            raise MemoryError()
        for i in range(n):
            token = tokens[i]
            self.edge_bytes[2 * i] = token[0] if token else 0
            self.edge_bytes[2 * i + 1] = token[len(token) - 1] if token else 0
        return 0

    cdef int _fill_seams(self) except -1:
        # ascii_seams and char_pairs (see the .pxd) from the slots' spellings
        cdef const ByteStrings* strings = self.view.strings
        cdef const uint8_t* bigrams = self.view.token_bigrams
        cdef const uint8_t* p
        cdef const uint8_t* end
        cdef uint32_t x, y, bigram, cp, before
        cdef size_t i, w, k, bits = 1 << 12
        cdef uint64_t bit
        self.ascii_seams = <uint8_t*>calloc(128 * 128 // 8, 1)
        if self.ascii_seams == NULL:
            raise MemoryError()
        for x in range(128):
            for y in range(128):
                bigram = (x << 8) | y
                if self.char_slots[x] != NO_TOKEN and self.char_slots[y] != NO_TOKEN \
                        and not (bigrams[bigram >> 3] >> (bigram & 7)) & 1:
                    self.ascii_seams[((x << 7) | y) >> 3] |= <uint8_t>(1 << (y & 7))
        # four bits a slot: Gemma 3's 262k tokens hold 34k pairs, 3% of
        # bits then set by others (a seam left uncut, never a wrong one)
        while bits < 4 * <size_t>strings.n and bits < (1 << 22):
            bits <<= 1
        self.pairs_shift = 64
        while (<size_t>1 << (64 - self.pairs_shift)) < bits:
            self.pairs_shift -= 1
        self.char_pairs = <uint64_t*>calloc(bits // 64, sizeof(uint64_t))
        if self.char_pairs == NULL:
            raise MemoryError()
        with nogil:
            for i in range(strings.n):
                p = strings.data + strings.offsets[i]
                end = strings.data + strings.offsets[i + 1]
                while p < end:
                    w = _utf8_width(p[0])
                    if (p[0] & 0xC0) == 0x80 or p[0] >= 0xF8 or <size_t>(end - p) < w:
                        w = 0
                    for k in range(1, w):
                        if (p[k] & 0xC0) != 0x80:
                            w = 0
                    if w == 0:
                        # not UTF-8: its characters are not the text's, so
                        # only the byte pairs cut
                        free(self.char_pairs)
                        self.char_pairs = NULL
                        return 0
                    cp = _any_code_point(p, w)
                    if p != strings.data + strings.offsets[i]:
                        bit = _pair_bit(before, cp, self.pairs_shift)
                        self.char_pairs[bit >> 6] |= <uint64_t>1 << (bit & 63)
                    before = cp
                    p += w
        return 0

    def __dealloc__(self):
        free(self.char_slots)
        free(self.edge_bytes)
        free(self.key)
        free(self.span_self)
        free(self.not_whole)
        free(self.slot_ids)
        free(self.ascii_seams)
        free(self.char_pairs)
        _out_free(&self.spare)

    @property
    def slot_names(self):
        """The token string reported for each slot: the ``names`` given, else
        each slot's spelling decoded (made on first use).

        >>> HfBpeCore([b"a", b"\\xc3\\xa9"], (0, 1), []).slot_names
        ('a', '\xe9')
        """
        cdef const ByteStrings* strings
        cdef Py_ssize_t i
        if self.names is None:
            strings = self.view.strings
            self.names = tuple([
                PyUnicode_DecodeUTF8(<const char*>strings.data + strings.offsets[i],
                                     strings.offsets[i + 1] - strings.offsets[i], NULL)
                for i in range(strings.n)])
        return self.names

    def slot_of(self, bytes token not None):
        """The slot spelled ``token``, or -1.

        >>> HfBpeCore([b"a", b"b"], (0, 1), []).slot_of(b"b")
        1
        """
        return self.tables.find(token)

    cdef size_t _first_parts(self, const uint8_t* s, size_t n, uint32_t* starts,
                             uint32_t* slots) except? 0 nogil:
        # One part per character (or per byte of a byte-fallback character);
        # starts[m] is the end of the last. Returns m.
        cdef size_t i = 0, j, w, k, klen, m = 0, unk_len = 0
        cdef size_t plen = self.prefix_len, slen = self.suffix_len
        cdef uint32_t pos = 0
        cdef const uint8_t* key
        # the looked-up text with prefix or suffix: on the stack, as threads
        # walk at once (the model's own room only for a prefix past 56 bytes)
        cdef uint8_t stack_key[64]
        cdef uint8_t* room = self.key
        if plen + 4 + slen <= 64:
            room = &stack_key[0]
        cdef int64_t slot
        cdef bint pending = False, every
        while i < n:
            w = _utf8_width(s[i])
            j = i + w
            if (i == 0 or plen == 0) and (j < n or slen == 0):
                key = s + i
                klen = w
            else:
                klen = 0
                if i > 0:
                    memcpy(room, self.prefix_c, plen)
                    klen = plen
                memcpy(room + klen, s + i, w)
                klen += w
                if j == n:
                    memcpy(room + klen, self.suffix_c, slen)
                    klen += slen
                key = room
            if key == s + i and w <= 3:
                slot = self.char_slots[_code_point(key, w)]
                slot = -1 if slot == NO_TOKEN else slot
            else:
                slot = find_token(self.view, key, klen)
            if slot >= 0:
                if pending:
                    _add_part(starts, slots, &m, &pos, self.unk_slot, unk_len)
                    pending = False
                _add_part(starts, slots, &m, &pos, <uint32_t>slot, w)
                i = j
                continue
            if self.byte_fallback:
                every = True
                for k in range(klen):
                    if self.byte_slots[key[k]] == NO_TOKEN:
                        every = False
                        break
                if every:
                    for k in range(klen):
                        _add_part(starts, slots, &m, &pos, self.byte_slots[key[k]], 1)
                    i = j
                    continue
            if self.unk_slot != NO_UNK:
                if self.unk_slot == MISSING_UNK:
                    with gil:
                        raise UnkTokenNotFoundError(
                            f"Unk token `{self.unk_token}` not found in the vocabulary")
                if pending and self.fuse_unk:
                    unk_len += w
                else:
                    if pending:
                        _add_part(starts, slots, &m, &pos, self.unk_slot, unk_len)
                    pending = True
                    unk_len = w
            i = j
        if pending:
            _add_part(starts, slots, &m, &pos, self.unk_slot, unk_len)
        starts[m] = pos
        return m

    cdef size_t _run(self, str sequence, const uint8_t** text, size_t* n_bytes,
                     uint32_t** starts, uint32_t** slots, uint32_t* stack_starts,
                     uint32_t* stack_slots) except? 0:
        # The merged parts of sequence in *starts / *slots (the stack arrays
        # when they fit, else allocated: the caller frees what is not its stack).
        cdef Py_ssize_t size
        cdef const uint8_t* s = <const uint8_t*>PyUnicode_AsUTF8AndSize(sequence, &size)
        text[0] = s
        n_bytes[0] = <size_t>size
        return self._run_utf8(s, <size_t>size, starts, slots, stack_starts, stack_slots,
                              STACK_PARTS, piece_cache_table())

    cdef size_t _run_utf8(self, const uint8_t* s, size_t n, uint32_t** starts, uint32_t** slots,
                          uint32_t* stack_starts, uint32_t* stack_slots, size_t room,
                          ft_pc_table* pc) except? 0 nogil:
        # _run of the UTF-8 text s[0:n]
        cdef size_t cap, m
        cdef int64_t whole
        cdef PairMemo memo
        if n == 0:
            return 0
        if self.ignore_merges and self.drop.rate <= 0.0:
            # tokenizers looks the whole sequence up only when it runs without dropout
            whole = find_token(self.view, s, n)
            if whole >= 0 and (self.not_whole == NULL or not self.not_whole[whole]):
                stack_starts[0] = 0
                stack_starts[1] = <uint32_t>n
                stack_slots[0] = <uint32_t>whole
                return 1
        cap = n * (1 + self.prefix_len + self.suffix_len) + 1
        if cap >= <size_t>0xFFFFFFFFU:
            with gil:
                raise OverflowError("a sequence of 4 GiB or more cannot be tokenized")
        if cap > room:
            starts[0] = <uint32_t*>malloc(cap * sizeof(uint32_t))
            slots[0] = <uint32_t*>malloc(cap * sizeof(uint32_t))
            if starts[0] == NULL or slots[0] == NULL:
                with gil:
                    raise MemoryError()
        if self.cache_spans and self.drop.rate <= 0.0:
            pair_memo_init(&memo, self.view)
            try:
                return self._cached_spans(s, n, starts[0], slots[0], &memo, pc)
            finally:
                pair_memo_release(&memo)
        m = self._first_parts(s, n, starts[0], slots[0])
        if m < 2:
            return m
        if self.drop.rate > 0.0:
            return bpe_sample_parts(self.view, s, starts[0][m], starts[0], slots[0], m, &self.drop)
        pair_memo_init(&memo, self.view)
        try:
            if not self.cut_words:
                return bpe_merge_parts(self.view, s, starts[0][m], starts[0], slots[0], m, &memo)
            return self._merge_cut(s, starts[0], slots[0], m, &memo)
        finally:
            pair_memo_release(&memo)

    cdef size_t _merge_cut(self, const uint8_t* s, uint32_t* starts, uint32_t* slots, size_t m,
                           PairMemo* memo) except? 0 nogil:
        # Merges the parts in spans between the points that no merge crosses,
        # each on its own: a merged token is its parts spelled together, so a
        # merge across two parts puts the last byte of one before the first
        # byte of the other inside a token, and where no token holds those
        # two bytes side by side (token_bigrams) nothing ever merges across.
        # Lines of llama2 text are then cut into their words, which the
        # linear scan merges (en.txt lines: 0.96 s whole, 0.55 s cut).
        cdef size_t i, k = 0, w = 0, r, j
        cdef uint32_t base, bigram
        cdef int64_t learn
        cdef const uint8_t* bigrams = self.view.token_bigrams
        for i in range(1, m + 1):
            if i < m:
                bigram = (<uint32_t>self.edge_bytes[2 * slots[i - 1] + 1] << 8) | self.edge_bytes[2 * slots[i]]
                if (bigrams[bigram >> 3] >> (bigram & 7)) & 1:
                    continue
            base = starts[k]
            learn = -1
            if i - k >= 2 and self.span_self != NULL and self._span_is_token(s, starts, slots, k, i,
                                                                              &learn):
                starts[w] = base
                slots[w] = slots[k]
                r = 1
            else:
                # the span k..i: positions from 0, as the merge loop takes them
                for j in range(k, i + 1):
                    starts[j] -= base
                r = bpe_merge_parts(self.view, NULL, starts[i], starts + k, slots + k, i - k, memo)
                if learn >= 0:
                    # what _span_is_token left to learn: whether the span's
                    # token is what its parts merge into
                    ft_store_byte(&self.span_self[learn],
                                  SELF_YES if r == 1 and slots[k] == learn else SELF_NO)
                for j in range(r):
                    starts[w + j] = starts[k + j] + base
                    slots[w + j] = slots[k + j]
                starts[i] += base
            w += r
            k = i
        starts[w] = starts[m]
        return w

    cdef size_t _cached_spans(self, const uint8_t* s, size_t n, uint32_t* starts, uint32_t* slots,
                              PairMemo* memo, ft_pc_table* pc) except? 0 nogil:
        # _merge_cut's spans found in the text itself, before any part is
        # made: a span ends between two characters that are tokens on their
        # own (so each is its own first part) where no token holds the two
        # side by side (the bytes at the seam, for ASCII; else the bytes or
        # the two characters, char_pairs), so no merge crosses. A span is
        # then one lookup in the thread's pre-token cache by its bytes (its
        # tokens follow from them alone); only a span missing there is cut
        # into first parts and merged (_span). Positions are the text's
        # bytes here (see span_self). Returns the tokens' count.
        cdef size_t k, a = 0, w = 0, width
        cdef uint32_t before, cp, y, pair
        cdef const uint8_t* seams = self.ascii_seams
        if n == 0:
            return 0
        # before: the code point of the character ending at k
        width = _utf8_width(s[0])
        before = _code_point(s, width) if width <= 3 else _any_code_point(s, width)
        k = width
        while k < n:
            y = s[k]
            if y < 0x80:
                width = 1
                cp = y
                if before < 0x80:
                    pair = (before << 7) | y
                    if not (seams[pair >> 3] >> (pair & 7)) & 1:
                        before = cp
                        k += 1
                        continue
                elif not _seam(self, s, k, before, cp, width):
                    before = cp
                    k += 1
                    continue
            else:
                width = _utf8_width(y)
                cp = _any_code_point(s + k, width)
                if not _seam(self, s, k, before, cp, width):
                    before = cp
                    k += width
                    continue
            w = self._span(s, a, k, starts, slots, w, memo, pc)
            a = k
            before = cp
            k += width
        w = self._span(s, a, n, starts, slots, w, memo, pc)
        starts[w] = <uint32_t>n
        return w

    cdef size_t _span(self, const uint8_t* s, size_t a, size_t b, uint32_t* starts,
                      uint32_t* slots, size_t w, PairMemo* memo, ft_pc_table* pc) except? 0 nogil:
        # The tokens of the span s[a:b] at starts[w:], slots[w:] (room for
        # b - a + 1 from w: a token spans a byte at least, so w <= a);
        # returns w past them.
        cdef size_t n = b - a, m, r, j
        cdef uint32_t start = <uint32_t>a, slot
        cdef uint64_t h = 0
        cdef const ft_pc_entry* e
        cdef const uint32_t* kept
        cdef uint32_t packed[FT_PC_PAYLOAD]  # (a quarter of it is room enough)
        cdef bint cached
        if _utf8_width(s[a]) == n:
            # one character: its token, if it is one
            slot = _char_slot(self, s + a, n)
            if slot != NO_TOKEN:
                starts[w] = start
                slots[w] = slot
                return w + 1
        cached = pc != NULL and n <= FT_PC_PAYLOAD
        if cached:
            h = ft_pc_hash(s + a, n)
            cached = ft_pc_open(pc, h)
        if cached:
            e = ft_pc_find(pc, self.owner, s + a, n, h)
            ft_pc_count(pc, h, e != NULL)
            if e != NULL:
                kept = ft_pc_ids(e)
                for j in range(e.n_ids):
                    starts[w + j] = start
                    slots[w + j] = kept[j] >> 8
                    start = <uint32_t>a + (kept[j] & 0xFF)
                return w + e.n_ids
        m = self._first_parts(s + a, n, starts + w, slots + w)
        r = m if m < 2 else self._merge_cut(s + a, starts + w, slots + w, m, memo)
        if cached and ft_pc_fits(n, r):
            for j in range(r):
                packed[j] = (slots[w + j] << 8) | starts[w + j + 1]
            ft_pc_put(pc, self.owner, s + a, n, h, packed, r)
        for j in range(r):
            starts[w + j] += start
        return w + r

    cdef bint _span_is_token(self, const uint8_t* s, uint32_t* starts, uint32_t* slots,
                             size_t k, size_t i, int64_t* learn) noexcept nogil:
        # Whether the parts k..i are known to merge into the one token their
        # bytes spell (then slots[k] is it); else *learn is that token when
        # its answer is not known yet (left as it was otherwise).
        # Positions are the text's bytes here: no prefix or suffix, no
        # character dropped, and a byte-fallback or unknown part is as long
        # as its bytes.
        cdef int64_t token = find_token(self.view, s + starts[k], starts[i] - starts[k])
        cdef uint8_t known
        if token < 0:
            return False
        known = ft_load_byte(&self.span_self[token])
        if known == SELF_YES:
            slots[k] = <uint32_t>token
            return True
        if known == SELF_UNKNOWN:
            learn[0] = token
        return False

    def tokenize_ids(self, str sequence not None):
        """The ids of ``sequence``.

        >>> HfBpeCore([b"a", b"b", b"ab"], (5, 6, 7), [(0, 1, 2)]).tokenize_ids("abb")
        [7, 6]
        """
        cdef uint32_t stack_starts[STACK_PARTS]
        cdef uint32_t stack_slots[STACK_PARTS]
        cdef uint32_t* starts = stack_starts
        cdef uint32_t* slots = stack_slots
        cdef const uint8_t* text
        cdef size_t n, m
        try:
            m = self._run(sequence, &text, &n, &starts, &slots, stack_starts, stack_slots)
            return ids_list(slots, m, self.slot_ints)
        finally:
            if starts != stack_starts:
                free(starts)
            if slots != stack_slots:
                free(slots)

    def walk_stretches(self, bytes space_to, bytes prepend not None, int prepend_when,
                       bint offsets, list parts not None, dict added not None):
        """The tokens of a text cut at its added tokens (the arguments in
        this order so that a partial binds the first four): ``parts`` as
        ``re.split`` with one group gives them, the stretches between added
        tokens at even places, the added tokens' texts at odd ones (each its
        id in ``added``). Each stretch is normalized (every space written as
        ``space_to`` when given, ``prepend`` before it) and tokenized, all in
        one call: Gemma 3's newlines are added tokens. ``prepend_when``:
        ``PREPEND_EACH`` non-empty stretch (the ``Prepend`` normalizer), or,
        as ``Metaspace`` puts its replacement, only before a stretch that
        does not start with it once written (``PREPEND_UNLESS_THERE``), and
        only the stretch at the start of the text (``PREPEND_FIRST``).

        Without ``offsets``, the list of ids. With them, ``(ids, offsets,
        words)`` as ``array('I')``, ``array('i')``, ``array('i')``: each
        token's start and end in characters of the text, through the
        normalization's alignment (a written space, and ``prepend``, span
        the character they stand for: the space, the stretch's first
        character), and the index of its split (a stretch or an added token)
        as tokenizers' ``word_ids`` give it; or ``None`` when a stretch's
        tokens count more bytes than it has (a prefix or suffix written as
        byte tokens), whose offsets tokenizers does not correct. A lone
        surrogate is Python's ``UnicodeEncodeError``, as in the stages.

        >>> core = HfBpeCore([b"a", b"_", b"_a"], (0, 1, 2), [(1, 0, 2)])
        >>> core.walk_stretches(b"_", b"", PREPEND_EACH, False, ["a a", "<x>", "", "<x>", " a"],
        ...                     {"<x>": 9})
        [0, 2, 9, 9, 2]
        >>> ids, offsets, words = core.walk_stretches(b"_", b"_", PREPEND_EACH, True,
        ...                                           ["a", "<x>", " a"], {"<x>": 9})
        >>> list(ids), list(offsets), list(words)
        ([2, 9, 1, 2], [0, 1, 1, 4, 4, 5, 4, 6], [0, 1, 2, 2])
        >>> core.walk_stretches(b"_", b"_", PREPEND_FIRST, False, ["a", "<x>", "a", "<x>", " a"],
        ...                     {"<x>": 9})
        [2, 9, 0, 9, 2]
        """
        cdef Rewrite rw
        _rewrite(&rw, space_to, prepend, prepend_when)
        return self._walk(&rw, offsets, parts, added, None)

    cdef object _walk(self, const Rewrite* rw, bint offsets, list parts, dict added, str text):
        # walk_stretches of one text (parts, or text as one stretch when
        # parts is None), in the kept buffers when no other call holds
        # them (taken and given back with the GIL held)
        cdef WalkOut o
        cdef bint spare = not self.spare_taken
        cdef size_t count
        if spare:
            self.spare_taken = True
            o = self.spare
            o.n = o.n_found = 0
        else:
            memset(&o, 0, sizeof(WalkOut))
        try:
            if parts is None:
                grow_array(<void**>&o.parts, &o.parts_cap, 1, sizeof(StretchPart), 16)
                _fill_stretch(text, o.parts)
                count = 1
            else:
                count = _fill_parts(parts, added, &o, 0)
            if self._walk_c(rw, o.parts, count, offsets, &o, piece_cache_table()):
                return None
            return self._walked(&o, 0, o.n, 0, offsets)
        finally:
            if spare and o.buf_cap <= SPARE_BYTES and o.out_cap <= SPARE_BYTES:
                self.spare = o
            else:
                _out_free(&o)
                if spare:
                    memset(&self.spare, 0, sizeof(WalkOut))
            if spare:
                self.spare_taken = False

    cdef int _walk_c(self, const Rewrite* rw, const StretchPart* parts, size_t count,
                     bint offsets, WalkOut* o, ft_pc_table* pc) except -1 nogil:
        cdef uint32_t* starts
        cdef uint32_t* slots
        cdef size_t n0 = o.n, f0 = o.n_found, i, n, m, j, k, p, size, length, room, cap
        cdef size_t slen = rw.space_len, plen = rw.prepend_len
        cdef const char* space = rw.space
        cdef const uint8_t* text
        cdef uint32_t at = 0, ci
        cdef int32_t word = 0
        cdef uint8_t b
        cdef bint declined = False, by_byte
        for i in range(count):
            length = parts[i].length
            if offsets and <size_t>at + length > <size_t>INT32_MAX:
                declined = True
                break
            text = parts[i].text
            if text == NULL:
                grow_array(<void**>&o.found, &o.found_cap, o.n_found + 1, sizeof(uint32_t), 16)
                o.found[o.n_found] = parts[i].added
                o.n_found += 1
                grow_array(<void**>&o.out, &o.out_cap, o.n + 1, sizeof(uint32_t), 256)
                o.out[o.n] = ADDED_MARK
                if offsets:
                    grow_array(<void**>&o.spans, &o.spans_cap, 2 * o.n + 2, sizeof(int32_t), 512)
                    grow_array(<void**>&o.words, &o.words_cap, o.n + 1, sizeof(int32_t), 256)
                    o.spans[2 * o.n] = <int32_t>at
                    o.spans[2 * o.n + 1] = <int32_t>(at + length)
                    o.words[o.n] = word
                o.n += 1
                word += 1
                at += <uint32_t>length
                continue
            if length == 0:
                continue
            size = parts[i].size
            p = plen
            if p and rw.when != PREPEND_EACH and (
                    (rw.when == PREPEND_FIRST and at != 0)
                    or _starts_with(text, size, rw.prepend, plen, space, slen)):
                p = 0
            # room for MASKED_ROOM bytes past the end: _write_masked's stores
            grow_array(<void**>&o.buf, &o.buf_cap, p + size * slen + MASKED_ROOM, 1, 256)
            memcpy(o.buf, rw.prepend, p)
            by_byte = offsets and not rw.one_for_one
            if by_byte:
                grow_array(<void**>&o.char_at, &o.char_cap, p + size * slen, sizeof(uint32_t), 256)
                for k in range(p):
                    o.char_at[k] = at
            if space == NULL:
                memcpy(o.buf + p, text, size)
                n = p + size
            elif not by_byte and slen <= MASKED_ROOM:
                n = _write_masked(o.buf, p, text, size, space, slen)
            elif by_byte:
                n = p
                ci = at
                for k in range(size):
                    b = text[k]
                    if k and (b & 0xC0) != 0x80:
                        ci += 1
                    if b == 0x20 and space != NULL:
                        memcpy(o.buf + n, space, slen)
                        for j in range(slen):
                            o.char_at[n + j] = ci
                        n += slen
                    else:
                        o.buf[n] = b
                        o.char_at[n] = ci
                        n += 1
            else:
                n = p
                for k in range(size):
                    b = text[k]
                    if b == 0x20 and space != NULL:
                        memcpy(o.buf + n, space, slen)
                        n += slen
                    else:
                        o.buf[n] = b
                        n += 1
            # the parts' room for the model's first parts of n bytes
            room = n * (1 + self.prefix_len + self.suffix_len) + 1
            if room > o.part_cap:
                # both grow alike from one capacity
                cap = o.part_cap
                grow_array(<void**>&o.starts, &cap, room, sizeof(uint32_t), 256)
                cap = o.part_cap
                grow_array(<void**>&o.slots, &cap, room, sizeof(uint32_t), 256)
                o.part_cap = cap
            starts = o.starts
            slots = o.slots
            m = self._run_utf8(o.buf, n, &starts, &slots, o.starts, o.slots, o.part_cap, pc)
            if offsets and m and starts[m] > n:
                declined = True
                break
            grow_array(<void**>&o.out, &o.out_cap, o.n + m, sizeof(uint32_t), 256)
            memcpy(o.out + o.n, slots, m * sizeof(uint32_t))
            if offsets:
                grow_array(<void**>&o.spans, &o.spans_cap, 2 * (o.n + m), sizeof(int32_t), 512)
                grow_array(<void**>&o.words, &o.words_cap, o.n + m, sizeof(int32_t), 256)
                if by_byte:
                    for j in range(m):
                        o.spans[2 * (o.n + j)] = <int32_t>o.char_at[starts[j]]
                        o.spans[2 * (o.n + j) + 1] = <int32_t>o.char_at[starts[j + 1] - 1] + 1
                else:
                    _count_spans(o.buf, starts, m, at, rw.prepend_chars if p else 0,
                                 o.spans + 2 * o.n)
                for j in range(m):
                    o.words[o.n + j] = word
            o.n += m
            word += 1
            at += <uint32_t>length
        if declined:
            o.n = n0
            o.n_found = f0
            return 1
        return 0

    cdef object _walked(self, const WalkOut* o, size_t a, size_t b, size_t f, bint offsets):
        if not offsets:
            return self._walk_ids(o, a, b, f)
        return self._walk_ids_array(o, a, b, f), _int_array(o.spans + 2 * a, 2 * (b - a)), \
            _int_array(o.words + a, b - a)

    cdef list _walk_ids(self, const WalkOut* o, size_t a, size_t b, size_t f):
        cdef list ids = PyList_New(b - a)
        cdef size_t j
        cdef object item
        for j in range(a, b):
            if o.out[j] == ADDED_MARK:
                item = o.found[f]
                f += 1
            else:
                item = <object>PyTuple_GET_ITEM(self.slot_ints, o.out[j])
            Py_INCREF(item)
            PyList_SET_ITEM(ids, j - a, item)
        PyObject_GC_UnTrack(ids)
        return ids

    cdef array.array _walk_ids_array(self, const WalkOut* o, size_t a, size_t b, size_t f):
        cdef array.array ids = array.clone(_U32, b - a, False)
        cdef uint32_t* data = ids.data.as_uints
        cdef size_t j
        for j in range(a, b):
            if o.out[j] == ADDED_MARK:
                data[j - a] = o.found[f]
                f += 1
            elif self.slots_are_ids:
                data[j - a] = o.out[j]
            else:
                data[j - a] = self.slot_ids[o.out[j]]
        return ids

    def sample_ids(self, str sequence not None, double rate, uint64_t seed):
        """The ids of ``sequence`` with BPE-dropout at ``rate``, drawn from
        ``seed`` (the model's own dropout and generator are left as they were).

        >>> HfBpeCore([b"a", b"b", b"ab"], (5, 6, 7), [(0, 1, 2)]).sample_ids("ab", 1.0, 3)
        [5, 6]
        """
        cdef Dropout kept = self.drop
        self.drop.rate = rate
        self.drop.state = seed
        try:
            return self.tokenize_ids(sequence)
        finally:
            self.drop = kept

    def tokenize_slots(self, str sequence not None):
        """``(slots, offsets)`` of ``sequence``: the slot of each token and the
        ``len(slots) + 1`` cumulative byte lengths tokenizers counts (see the
        module notes).

        >>> HfBpeCore([b"a", b"b"], (0, 1), []).tokenize_slots("ba")
        ([1, 0], [0, 1, 2])
        """
        cdef uint32_t stack_starts[STACK_PARTS]
        cdef uint32_t stack_slots[STACK_PARTS]
        cdef uint32_t* starts = stack_starts
        cdef uint32_t* slots = stack_slots
        cdef const uint8_t* text
        cdef size_t n, m, i
        try:
            m = self._run(sequence, &text, &n, &starts, &slots, stack_starts, stack_slots)
            return [slots[i] for i in range(m)], [starts[i] for i in range(m + 1)] if m else []
        finally:
            if starts != stack_starts:
                free(starts)
            if slots != stack_slots:
                free(slots)

    def tokenize(self, str sequence not None):
        """``[(id, token, (start, end))]`` with character offsets in
        ``sequence`` as tokenizers' pipeline reports them.

        >>> HfBpeCore([b"a", b"\\xc3\\xa9"], (0, 1), []).tokenize("a\\xe9")
        [(0, 'a', (0, 1)), (1, '\\xe9', (1, 2))]
        """
        cdef uint32_t stack_starts[STACK_PARTS]
        cdef uint32_t stack_slots[STACK_PARTS]
        cdef uint32_t* starts = stack_starts
        cdef uint32_t* slots = stack_slots
        cdef uint32_t* char_of = NULL
        cdef const uint8_t* text
        cdef size_t n, m, i, b, c = 0
        cdef uint32_t a, e, slot
        cdef list out
        cdef tuple slot_ints = self.slot_ints, slot_names = self.slot_names
        try:
            m = self._run(sequence, &text, &n, &starts, &slots, stack_starts, stack_slots)
            out = []
            if m == 0:
                return out
            if n == <size_t>PyUnicode_GET_LENGTH(sequence) and starts[m] <= n:
                for i in range(m):
                    a = starts[i]
                    e = starts[i + 1]
                    out.append((slot_ints[slots[i]], slot_names[slots[i]], (a, e)))
                return out
            # the character of each byte, as tokenizers' offset converter maps them
            char_of = <uint32_t*>malloc(n * sizeof(uint32_t))
            if char_of == NULL:
                raise MemoryError()
            b = 0
            while b < n:
                for i in range(_utf8_width(text[b])):
                    char_of[b + i] = <uint32_t>c
                b += _utf8_width(text[b])
                c += 1
            for i in range(m):
                a = starts[i]
                e = starts[i + 1]
                slot = slots[i]
                if e <= n:
                    span = (char_of[a], char_of[e - 1] + 1)
                elif a < n:
                    span = (char_of[a], char_of[a] + 2)
                else:
                    span = (a, e)
                out.append((slot_ints[slot], slot_names[slot], span))
            return out
        finally:
            free(char_of)
            if starts != stack_starts:
                free(starts)
            if slots != stack_slots:
                free(slots)


cdef class StretchWalker:
    """A text's tokens through :meth:`HfBpeCore.walk_stretches`, the text cut
    here: ``ids(text, allowed)`` and ``encode(text, allowed)`` in one call
    each (the Python layer above them was a tenth of a line's time).
    ``cuts_for(allowed)`` gives, once per ``allowed`` set, ``(cut, added,
    may_occur, tokens)``: ``cut(text)`` the parts of a text as ``walk_stretches``
    takes them (``None`` declines the text), ``added`` the added tokens'
    ids by text, ``may_occur(parts)`` (or ``None``) whether to decline the
    parts, ``tokens`` the search for the tokens' texts (a
    :class:`~fasttok.shared._literal_cut.LiteralCut`, or ``None``): a
    text holding none of them is one stretch, not cut (unless ``may_occur``
    is given); or ``()`` to decline every text.

    >>> core = HfBpeCore([b"a", b"_", b"_a"], (0, 1, 2), [(1, 0, 2)])
    >>> walker = StretchWalker(core, b"_", b"", PREPEND_EACH,
    ...                        lambda allowed: (lambda text: text.split("|"), {}, None, None))
    >>> walker.ids("a a", None), [list(a) for a in walker.encode("a a", None)]
    ([0, 2], [[0, 2], [0, 1, 1, 3], [0, 0]])
    """

    cdef HfBpeCore core
    cdef bytes space_to
    cdef bytes prepend
    cdef Rewrite rw
    cdef object cuts_for
    cdef dict cuts

    def __init__(self, HfBpeCore core not None, bytes space_to, bytes prepend not None,
                 int prepend_when, cuts_for not None):
        self.core = core
        self.space_to = space_to
        self.prepend = prepend
        _rewrite(&self.rw, space_to, prepend, prepend_when)
        self.cuts_for = cuts_for
        self.cuts = {}

    cdef tuple _cut(self, allowed):
        # cuts_for(allowed), asked once per allowed set
        cut = self.cuts.get(allowed)
        if cut is None:
            cut = self.cuts[allowed] = self.cuts_for(allowed)
        return cut

    cdef bint _uncut(self, text, tuple cut):
        # whether text is walked as one stretch, with no cut: no added
        # token's text is in it, nor a lone surrogate (which the cut
        # declines: it has no UTF-8), and no test of the normalized pass asks
        return cut and cut[2] is None and cut[3] is not None and type(text) is str \
            and not (<LiteralCut?>cut[3]).occurs_in(text, True)

    cdef list _parts(self, text, tuple cut):
        # the parts of text as walk_stretches takes them, or None (declined),
        # for a text that is not _uncut
        if not cut:
            return None
        parts = cut[0](text)
        if parts is None:
            return None
        may_occur = cut[2]
        if may_occur is not None and may_occur(parts):
            return None
        return parts

    cdef object _run(self, text, allowed, bint offsets):
        cdef tuple cut = self._cut(allowed)
        cdef list parts
        if self._uncut(text, cut):
            # one stretch, no cut or list
            return self.core._walk(&self.rw, offsets, None, None, text)
        parts = self._parts(text, cut)
        if parts is None:
            return None
        return self.core._walk(&self.rw, offsets, parts, cut[1], None)

    def ids(self, text, allowed):
        """The ids of ``text`` (``allowed``: the added token ids matched,
        ``None`` for all), or ``None`` for a text declined."""
        return self._run(text, allowed, False)

    def encode(self, text, allowed):
        """``(ids, offsets, words)`` of ``text`` (see
        :meth:`HfBpeCore.walk_stretches`), or ``None`` for a text declined."""
        return self._run(text, allowed, True)

    def encode_offsets_many(self, list texts not None, allowed):
        """:meth:`encode` of each text, in order: the texts cut (in Python),
        then all walked with the GIL released once, then their arrays made.
        Each thread walking a batch uses its own pre-token cache.

        >>> core = HfBpeCore([b"a", b"_", b"_a"], (0, 1, 2), [(1, 0, 2)])
        >>> walker = StretchWalker(core, b"_", b"", PREPEND_EACH,
        ...                        lambda allowed: (lambda text: text.split("|"), {"x": 7}, None, None))
        >>> [[list(a) for a in found] for found in walker.encode_offsets_many(["a a", "a|x|a"], None)]
        [[[0, 2], [0, 1, 1, 3], [0, 0]], [[0, 7, 0], [0, 1, 1, 2, 2, 3], [0, 1, 2]]]
        """
        cdef Py_ssize_t count = len(texts), i
        cdef tuple cut = self._cut(allowed)
        cdef list cuts = [None] * BATCH_BLOCK  # a block's texts' parts, kept while walked
        cdef list out = [None] * count
        cdef list parts
        # where each text of a block has its parts in o.parts; once walked,
        # where its tokens and added ids end in o (SIZE_MAX: declined)
        cdef size_t at[BATCH_BLOCK + 1]
        cdef size_t ends[2 * BATCH_BLOCK]
        cdef size_t n, a, f
        cdef Py_ssize_t first, block
        cdef WalkOut o
        cdef ft_pc_table* pc
        cdef HfBpeCore core = self.core
        memset(&o, 0, sizeof(WalkOut))
        try:
            # block by block: the tokens of a whole batch outgrew the CPU's
            # caches before their arrays were made
            for first in range(0, count, BATCH_BLOCK):
                block = min(BATCH_BLOCK, count - first)
                n = a = f = 0
                o.n = o.n_found = 0
                for i in range(block):
                    at[i] = n
                    text = texts[first + i]
                    if self._uncut(text, cut):
                        # one stretch, no cut or list (kept alive by texts)
                        grow_array(<void**>&o.parts, &o.parts_cap, n + 1, sizeof(StretchPart), 16)
                        _fill_stretch(text, &o.parts[n])
                        n += 1
                        cuts[i] = text
                        continue
                    parts = self._parts(text, cut)
                    cuts[i] = parts
                    if parts is not None:
                        n += _fill_parts(parts, cut[1], &o, n)
                at[block] = n
                with nogil:
                    # this thread's cache (every thread walking a chunk has its own)
                    pc = piece_cache_table()
                    for i in range(block):
                        if core._walk_c(&self.rw, o.parts + at[i], at[i + 1] - at[i], True, &o,
                                        pc):
                            ends[2 * i] = SIZE_MAX
                        else:
                            ends[2 * i] = o.n
                            ends[2 * i + 1] = o.n_found
                for i in range(block):
                    if cuts[i] is not None and ends[2 * i] != SIZE_MAX:
                        out[first + i] = core._walked(&o, a, ends[2 * i], f, True)
                        a, f = ends[2 * i], ends[2 * i + 1]
            return out
        finally:
            _out_free(&o)
