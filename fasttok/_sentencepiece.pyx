"""SentencePiece processing: normalizer -> model -> unknowns -> ids / pieces.

This is the compiled model behind :class:`fasttok.Encoding` for SentencePiece
``.model`` files (``unigram`` and ``sentencepiece_bpe``) and for GGUF
``llama`` / ``t5`` vocabularies. One call converts the text to UTF-8 once,
then, without the GIL, normalizes it (:mod:`fasttok._spm_normalizer`),
segments it with the Unigram Viterbi (:mod:`fasttok._unigram`) or the shared
BPE merge loop (:mod:`fasttok._bpe`), and resolves unknown pieces.

Two flavours, chosen by where the vocabulary came from:

``sentencepiece`` (``.model`` files), as ``SentencePieceProcessor.Encode``:
  user-defined symbols are kept whole; BPE merges only into NORMAL,
  USER_DEFINED and UNUSED pieces; an unknown piece becomes its UTF-8 bytes as
  ``<0xXX>`` pieces with byte fallback, otherwise consecutive unknown pieces
  merge into one ``unk``. Decoding hides control pieces, renders ``unk`` as
  ``unk_surface`` (`` ⁇ ``), reassembles byte pieces (invalid UTF-8 -> U+FFFD
  per byte) and strips the dummy-prefix space.
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

>>> from fasttok.vocab import Vocabulary
>>> v = Vocabulary(name="t", model="unigram", byte_level=False,
...                tokens=(b"<unk>", "▁a".encode(), b"b"), scores=(0.0, -1.0, -2.0),
...                token_types=(2, 1, 1), unk_id=0, add_dummy_prefix=True,
...                remove_extra_whitespaces=True, escape_whitespaces=True)
>>> core = SentencePieceCore(v)
>>> core.encode_ordinary("ab c"), core.encode_as_pieces("ab c")
([1, 2, 0, 0], ['▁a', 'b', '▁', 'c'])
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.long cimport PyLong_FromUnsignedLong
from cpython.ref cimport Py_INCREF
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memcpy

from ._bpe cimport bpe_merge_parts
from ._spm_normalizer cimport (ByteBuf, Normalizer, OffsetBuf, SymbolMatcher, bytebuf_free,
                               bytebuf_reserve, offsets_free, valid_utf8_len)
from ._tables cimport (ByteStrings, NO_TOKEN, TokenTables, fill_strings, find_bytes,
                       free_strings)
from ._unigram cimport Span, SpanBuf, UnigramModel, spans_free, spans_push, spans_reserve

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size) except NULL

# SentencePiece piece types (fasttok.vocab.TokenType)
cdef enum:
    T_UNDEFINED = 0
    T_NORMAL = 1
    T_UNKNOWN = 2
    T_CONTROL = 3
    T_USER_DEFINED = 4
    T_UNUSED = 5
    T_BYTE = 6

cdef enum:
    MODEL_UNIGRAM = 0
    MODEL_BPE = 1

cdef enum:
    # Span.flags of an output token
    FLAG_VOCAB_PIECE = 1    # its piece is the vocabulary's text (byte fallback, special)

cdef const uint8_t* SPACE_SYMBOL = <const uint8_t*>b"\xe2\x96\x81"

_TYPES = {"normal": T_NORMAL, "unknown": T_UNKNOWN, "control": T_CONTROL,
          "user_defined": T_USER_DEFINED, "unused": T_UNUSED, "byte": T_BYTE}

# What llama.cpp's isspace() strips next to lstrip/rstrip special tokens.
_C_SPACE = " \t\n\v\f\r"


cdef inline size_t _one_char_len(uint8_t c) noexcept nogil:
    if c < 0xC0:
        return 1
    if c < 0xE0:
        return 2
    if c < 0xF0:
        return 3
    return 4


cdef inline bint _is_space_symbol(const uint8_t* s, size_t n) noexcept nogil:
    return n == 3 and s[0] == 0xE2 and s[1] == 0x96 and s[2] == 0x81


cdef list _ids_list(const Span* toks, size_t a, size_t b):
    cdef list out = PyList_New(b - a)
    cdef size_t i
    cdef object item
    for i in range(a, b):
        item = PyLong_FromUnsignedLong(toks[i].id)
        Py_INCREF(item)
        PyList_SET_ITEM(out, i - a, item)
    return out


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


cdef class SentencePieceCore:
    """The compiled SentencePiece model of one :class:`~fasttok.vocab.Vocabulary`.

    ``vocab.model`` is ``"unigram"`` or ``"sentencepiece_bpe"``; a GGUF
    vocabulary (``metadata["tokenizer.ggml.model"]``) runs the llama.cpp
    flavour (see the module notes). Provides the methods
    :class:`fasttok.Encoding` calls, plus :meth:`encode_as_pieces`,
    :meth:`normalize` and :meth:`lattice`.
    """

    cdef Normalizer normalizer
    cdef Normalizer normalizer_rest     # llama SPM: fragments after the first
    cdef int model_kind
    cdef readonly bint llama_cpp
    cdef readonly str flavour
    cdef UnigramModel unigram
    cdef TokenTables bpe_tables
    cdef SymbolMatcher frozen           # sentencepiece BPE: user-defined symbols
    cdef TokenTables cut_blockers       # chars that precede an interior ▁ in a piece
    cdef bint cut_at_spaces
    cdef bint has_blockers
    cdef dict piece_ids
    cdef uint8_t* types
    cdef uint8_t* byte_of               # BYTE piece -> its byte
    cdef readonly uint32_t n_tokens
    cdef uint32_t unk_id
    cdef uint32_t unknown_id            # the id that means "not covered" (or NO_TOKEN)
    cdef uint32_t byte_ids[256]
    cdef bint bytes_for_unknown
    cdef bint merge_unknown
    cdef ByteStrings pieces             # raw piece bytes by id
    cdef ByteStrings rendered           # what each id stands for (▁ -> space, byte pieces)
    cdef bytes unk_surface
    cdef bint strip_dummy_space         # sentencepiece decode
    cdef bint remove_extra_whitespaces
    cdef bint add_space_prefix          # llama.cpp decode
    cdef readonly object special_order
    cdef dict special_index             # special bytes -> index in special_order
    cdef list special_ids
    cdef list special_texts
    cdef list always_special            # user-defined tokens (llama.cpp parses them always)
    cdef dict lstrip_ids
    cdef dict rstrip_ids
    cdef readonly object vocabulary

    def __cinit__(self):
        self.types = NULL
        self.byte_of = NULL
        self.pieces.data = NULL
        self.pieces.offsets = NULL
        self.pieces.present = NULL
        self.rendered.data = NULL
        self.rendered.offsets = NULL
        self.rendered.present = NULL

    def __init__(self, vocab, *, flavour=None, lstrip=(), rstrip=()):
        cdef Py_ssize_t n = len(vocab.tokens), i
        tokens = list(vocab.tokens)
        types = list(vocab.token_types) if vocab.token_types is not None else [T_NORMAL] * n
        scores = list(vocab.scores) if vocab.scores is not None else [0.0] * n
        if flavour is None:
            flavour = ("llama.cpp" if vocab.metadata.get("tokenizer.ggml.model") in ("llama", "t5")
                       else "sentencepiece")
        if flavour not in ("sentencepiece", "llama.cpp"):
            raise ValueError(f"unknown flavour {flavour!r}; use 'sentencepiece' or 'llama.cpp'")
        if vocab.model not in ("unigram", "sentencepiece_bpe"):
            raise ValueError(f"{vocab.name}: model {vocab.model!r} is not a SentencePiece model")
        if n == 0 or n >= NO_TOKEN:
            raise ValueError(f"{vocab.name}: {n} tokens")
        self.vocabulary = vocab
        self.flavour = flavour
        self.llama_cpp = flavour == "llama.cpp"
        self.model_kind = MODEL_UNIGRAM if vocab.model == "unigram" else MODEL_BPE
        self.n_tokens = <uint32_t>n
        tokens = [t if t is not None else b"" for t in tokens]
        unk = vocab.unk_id
        if unk is None or not 0 <= unk < n:
            unk = next((j for j, t in enumerate(types) if t == T_UNKNOWN), None)
        if unk is None:
            raise ValueError(f"{vocab.name}: no unknown piece; SentencePiece models need one")
        self.unk_id = <uint32_t>unk
        self.types = <uint8_t*>malloc(n + 1)
        self.byte_of = <uint8_t*>malloc(n + 1)
        if self.types == NULL or self.byte_of == NULL:
            raise MemoryError()
        for i in range(256):
            self.byte_ids[i] = NO_TOKEN
        by_bytes = {}
        for i in range(n):
            self.types[i] = <uint8_t>types[i] if 0 <= types[i] <= 6 else T_UNDEFINED
            self.byte_of[i] = 0
            by_bytes.setdefault(tokens[i], i)
            if types[i] == T_BYTE and len(tokens[i]) == 6 and tokens[i].startswith(b"<0x"):
                try:
                    b = int(tokens[i][3:5], 16)
                except ValueError:
                    continue
                self.byte_of[i] = b
                if self.byte_ids[b] == NO_TOKEN:
                    self.byte_ids[b] = <uint32_t>i
        if self.llama_cpp:
            # llama.cpp's byte_to_token: "<0xXX>", else the one-byte token itself
            for i in range(256):
                if self.byte_ids[i] == NO_TOKEN and bytes([i]) in by_bytes:
                    self.byte_ids[i] = <uint32_t>by_bytes[bytes([i])]
        user_defined = [tokens[j] for j in range(n) if types[j] == T_USER_DEFINED]
        escape = vocab.escape_whitespaces
        suffix = bool(vocab.metadata.get("treat_whitespace_as_suffix", False))

        if self.model_kind == MODEL_UNIGRAM:
            self.unigram = UnigramModel(tokens, scores, types, unk, llama_cpp=self.llama_cpp)
            if self.llama_cpp:
                # llama.cpp's UGM: its own whitespace rules, one normalize per fragment
                self.normalizer = Normalizer(
                    vocab.precompiled_charsmap, add_dummy_prefix=vocab.add_dummy_prefix,
                    remove_extra_whitespaces=vocab.remove_extra_whitespaces,
                    escape_whitespaces=escape, treat_whitespace_as_suffix=suffix,
                    user_defined=user_defined, flavour="llama.cpp")
        else:
            if self.llama_cpp:
                eligible = [bool(t) for t in tokens]
            else:
                eligible = [bool(tokens[j]) and types[j] in (T_NORMAL, T_USER_DEFINED, T_UNUSED)
                            for j in range(n)]
            self.bpe_tables = TokenTables([t if ok else None for t, ok in zip(tokens, eligible)],
                                          priorities=_dense_ranks(scores, eligible))
            blockers = set()
            for j in range(n):
                if eligible[j]:
                    _interior_space_predecessors(tokens[j], blockers)
            self.cut_at_spaces = True
            self.cut_blockers = TokenTables(sorted(blockers))
            self.has_blockers = len(blockers) > 0
            if not self.llama_cpp:
                self.frozen = SymbolMatcher(user_defined)
            if self.llama_cpp:
                # llama.cpp's SPM: only the space prefix and ▁ escaping
                self.normalizer = Normalizer(None, add_dummy_prefix=vocab.add_dummy_prefix,
                                             remove_extra_whitespaces=False,
                                             escape_whitespaces=escape)
                self.normalizer_rest = Normalizer(None, add_dummy_prefix=False,
                                                  remove_extra_whitespaces=False,
                                                  escape_whitespaces=escape)
        if not self.llama_cpp:
            self.normalizer = Normalizer(
                vocab.precompiled_charsmap, add_dummy_prefix=vocab.add_dummy_prefix,
                remove_extra_whitespaces=vocab.remove_extra_whitespaces,
                escape_whitespaces=escape, treat_whitespace_as_suffix=suffix,
                user_defined=user_defined)
        if self.normalizer_rest is None:
            self.normalizer_rest = self.normalizer

        if self.llama_cpp:
            self.unknown_id = self.unk_id if self.model_kind == MODEL_UNIGRAM else NO_TOKEN
            self.bytes_for_unknown = self.model_kind == MODEL_BPE
            self.merge_unknown = self.model_kind == MODEL_UNIGRAM
        else:
            self.unknown_id = self.unk_id
            self.bytes_for_unknown = vocab.byte_fallback
            self.merge_unknown = not vocab.byte_fallback
        if self.bytes_for_unknown and not self.llama_cpp:
            missing = [b for b in range(256) if self.byte_ids[b] == NO_TOKEN]
            if missing:
                raise ValueError(f"{vocab.name}: byte_fallback without the <0x{missing[0]:02X}> piece")

        fill_strings(&self.pieces, tokens)
        fill_strings(&self.rendered, [self._render(j, tokens[j]) for j in range(n)])
        self.unk_surface = str(vocab.metadata.get("unk_surface", " \u2047 ")).encode("utf-8")
        self.remove_extra_whitespaces = vocab.remove_extra_whitespaces
        self.strip_dummy_space = vocab.add_dummy_prefix or vocab.remove_extra_whitespaces
        self.add_space_prefix = vocab.add_dummy_prefix

        # Special tokens: the Encoding's allowed mask indexes special_order.
        specials = {}
        if self.llama_cpp:
            for j in range(n):
                if types[j] in (T_CONTROL, T_USER_DEFINED, T_UNKNOWN) and tokens[j]:
                    specials.setdefault(tokens[j], j)
        for text, sid in vocab.special_tokens.items():
            specials.setdefault(text.encode("utf-8"), sid)
        order = sorted(specials, key=lambda b: (specials[b], b))
        self.special_order = tuple(order)
        self.special_index = {b: k for k, b in enumerate(order)}
        self.special_ids = [specials[b] for b in order]
        self.special_texts = [b.decode("utf-8", "replace") for b in order]
        self.always_special = [k for k, b in enumerate(order)
                               if self.llama_cpp and specials[b] < n
                               and types[specials[b]] == T_USER_DEFINED]
        self.lstrip_ids = {int(x): True for x in lstrip}
        self.rstrip_ids = {int(x): True for x in rstrip}

    def __dealloc__(self):
        free(self.types)
        free(self.byte_of)
        free_strings(&self.pieces)
        free_strings(&self.rendered)

    cdef bytes _render(self, Py_ssize_t i, bytes piece):
        # What token i stands for on its own: llama.cpp's token_to_piece(special=True)
        cdef int kind = self.types[i]
        if kind == T_BYTE and self.byte_ids[self.byte_of[i]] == <uint32_t>i:
            return bytes([self.byte_of[i]])
        if kind in (T_CONTROL, T_UNKNOWN) or (kind == T_USER_DEFINED and self.llama_cpp):
            return piece
        if kind in (T_UNUSED, T_UNDEFINED) and self.llama_cpp:
            return b""
        return piece.replace(b"\xe2\x96\x81", b" ")

    # ------------------------------------------------------------ encoding

    cdef int _bpe(self, const uint8_t* s, size_t n, SpanBuf* out) except -1 nogil:
        # Split into characters (user-defined symbols whole), cut where no merge
        # can cross, merge each cut piece, append the parts to out.
        cdef uint32_t* starts
        cdef uint32_t* rel
        cdef uint32_t* ids
        cdef uint8_t* frozen
        cdef size_t pos = 0, m = 0, k, a, b, j, parts, base
        cdef int64_t found
        cdef bint check_frozen = self.frozen is not None and self.frozen.count > 0
        cdef const uint8_t* prev
        if n == 0:
            return 0
        starts = <uint32_t*>malloc((n + 1) * sizeof(uint32_t))
        rel = <uint32_t*>malloc((n + 1) * sizeof(uint32_t))
        ids = <uint32_t*>malloc((n + 1) * sizeof(uint32_t))
        frozen = <uint8_t*>malloc(n + 1)
        if starts == NULL or rel == NULL or ids == NULL or frozen == NULL:
            free(starts); free(rel); free(ids); free(frozen)
            with gil:
                raise MemoryError()
        try:
            while pos < n:
                k = 0
                if check_frozen:
                    k = self.frozen.match(s + pos, n - pos)
                frozen[m] = k > 0
                if k == 0:
                    k = _one_char_len(s[pos])
                    if k > n - pos:
                        k = n - pos
                starts[m] = <uint32_t>pos
                m += 1
                pos += k
            starts[m] = <uint32_t>n
            a = 0
            while a < m:
                if frozen[a]:
                    found = find_bytes(self.bpe_tables.view.index, self.bpe_tables.view.strings,
                                       s + starts[a], starts[a + 1] - starts[a])
                    spans_push(out, <uint32_t>found if found >= 0 else NO_TOKEN,
                               starts[a], starts[a + 1], 0)
                    a += 1
                    continue
                b = a + 1
                while b < m and not frozen[b] and not self._cut_before(s, starts, b):
                    b += 1
                base = starts[a]
                for j in range(a, b):
                    rel[j] = starts[j] - <uint32_t>base
                    found = find_bytes(self.bpe_tables.view.index, self.bpe_tables.view.strings,
                                       s + starts[j], starts[j + 1] - starts[j])
                    ids[j] = <uint32_t>found if found >= 0 else NO_TOKEN
                rel[b] = starts[b] - <uint32_t>base
                parts = bpe_merge_parts(&self.bpe_tables.view, s + base, starts[b] - base,
                                        rel + a, ids + a, b - a)
                spans_reserve(out, parts)
                for j in range(parts):
                    spans_push(out, ids[a + j], <uint32_t>base + rel[a + j],
                               <uint32_t>base + rel[a + j + 1], 0)
                a = b
        finally:
            free(starts); free(rel); free(ids); free(frozen)
        return 0

    cdef inline bint _cut_before(self, const uint8_t* s, const uint32_t* starts,
                                 size_t j) noexcept nogil:
        # May symbol j start a new independent piece? Only a ▁ whose preceding
        # character never precedes an interior ▁ in a mergeable piece.
        cdef size_t a = starts[j], b = starts[j + 1], p = starts[j - 1]
        if not self.cut_at_spaces or not _is_space_symbol(s + a, b - a):
            return False
        if not self.has_blockers:
            return True
        return find_bytes(self.cut_blockers.view.index, self.cut_blockers.view.strings,
                          s + p, a - p) < 0

    cdef int _resolve(self, const uint8_t* s, SpanBuf* spans, SpanBuf* toks) except -1 nogil:
        # Unknown pieces: byte tokens, or one unk per run.
        cdef size_t i, j
        cdef Span* sp
        cdef bint prev_unknown = False, unknown
        cdef uint32_t id
        for i in range(spans.len):
            sp = &spans.data[i]
            id = sp.id
            unknown = id == NO_TOKEN or id == self.unknown_id
            if not unknown:
                spans_push(toks, id, sp.start, sp.end, 0)
            elif self.bytes_for_unknown:
                for j in range(sp.start, sp.end):
                    id = self.byte_ids[s[j]]
                    spans_push(toks, id if id != NO_TOKEN else self.unk_id, <uint32_t>j,
                               <uint32_t>j + 1, FLAG_VOCAB_PIECE)
            elif self.merge_unknown and prev_unknown and toks.len:
                toks.data[toks.len - 1].end = sp.end
            else:
                spans_push(toks, self.unk_id, sp.start, sp.end, 0)
            prev_unknown = unknown
        return 0

    cdef int _encode_normalized(self, const uint8_t* s, size_t n, SpanBuf* spans,
                                SpanBuf* toks) except -1 nogil:
        spans.len = 0
        if self.model_kind == MODEL_UNIGRAM:
            self.unigram.viterbi(s, n, spans)
        else:
            self._bpe(s, n, spans)
        return self._resolve(s, spans, toks)

    cdef int _encode_fragment(self, const uint8_t* s, size_t n, bint first, ByteBuf* norm,
                              OffsetBuf* n2o, SpanBuf* spans, SpanBuf* toks) except -1 nogil:
        # Normalize s[0:n] into norm and append its tokens to toks (spans in norm).
        if first:
            self.normalizer.normalize_into(s, n, norm, n2o)
        else:
            self.normalizer_rest.normalize_into(s, n, norm, n2o)
        return self._encode_normalized(norm.data, norm.len, spans, toks)

    cdef list _fragments(self, str text, const uint8_t[::1] allowed):
        # llama.cpp's tokenizer_st_partition: split out special tokens, longest
        # first, each over every remaining text fragment. Returns a list of
        # str (text) and int (token id).
        cdef Py_ssize_t k
        chosen = list(self.always_special)
        if allowed is not None:
            chosen.extend(k for k in range(len(self.special_order))
                          if allowed[k] and k not in self.always_special)
        if not chosen:
            return [text]
        chosen.sort(key=lambda k: (-len(self.special_order[k]), self.special_ids[k]))
        frags = [text]
        for k in chosen:
            needle = self.special_texts[k]
            sid = self.special_ids[k]
            if not needle:
                continue
            new = []
            for frag in frags:
                if not isinstance(frag, str) or needle not in frag:
                    new.append(frag)
                    continue
                start = 0
                while True:
                    hit = frag.find(needle, start)
                    if hit < 0:
                        break
                    left = frag[start:hit]
                    if sid in self.lstrip_ids:
                        left = left.rstrip(_C_SPACE)
                    if left:
                        new.append(left)
                    new.append(sid)
                    start = hit + len(needle)
                    if sid in self.rstrip_ids:
                        while start < len(frag) and frag[start] in _C_SPACE:
                            start += 1
                if start < len(frag):
                    new.append(frag[start:])
            frags = new
        return frags

    cdef int _encode_text(self, str text, const uint8_t[::1] allowed, SpanBuf* toks,
                          ByteBuf* norm, list norms) except -1:
        # All tokens of text appended to toks. With norms (a list), the
        # normalized bytes of each fragment are kept for pieces, and toks'
        # spans point into their concatenation.
        cdef Py_ssize_t size
        cdef const uint8_t* s
        cdef SpanBuf spans = SpanBuf(NULL, 0, 0)
        cdef size_t before, j, shift = 0
        cdef bint first = True
        cdef bytes raw
        try:
            if self.llama_cpp and (self.always_special or allowed is not None):
                frags = self._fragments(text, allowed)
            else:
                frags = [text]
            for frag in frags:
                if isinstance(frag, int):
                    spans_push(toks, <uint32_t>frag, <uint32_t>shift, <uint32_t>shift,
                               FLAG_VOCAB_PIECE)
                    first = True     # llama.cpp: the text after a special gets the prefix
                    continue
                s = <const uint8_t*>PyUnicode_AsUTF8AndSize(frag, &size)
                before = toks.len
                with nogil:
                    self._encode_fragment(s, size, first, norm, NULL, &spans, toks)
                first = False
                if norms is not None:
                    raw = (<char*>norm.data)[:norm.len] if norm.len else b""
                    norms.append(raw)
                    for j in range(before, toks.len):
                        toks.data[j].start += <uint32_t>shift
                        toks.data[j].end += <uint32_t>shift
                    shift += norm.len
        finally:
            spans_free(&spans)
        return 0

    cdef list _ids(self, str text, const uint8_t[::1] allowed):
        cdef SpanBuf toks = SpanBuf(NULL, 0, 0)
        cdef ByteBuf norm = ByteBuf(NULL, 0, 0)
        try:
            self._encode_text(text, allowed, &toks, &norm, None)
            return _ids_list(toks.data, 0, toks.len)
        finally:
            spans_free(&toks)
            bytebuf_free(&norm)

    def encode_ordinary(self, str text not None):
        """Ids of ``text``; special token strings are plain text (llama.cpp:
        ``parse_special=false``, so user-defined tokens are still matched)."""
        return self._ids(text, None)

    def encode(self, str text not None, const uint8_t[::1] allowed not None):
        """Ids of ``text``; ``allowed[i]`` says whether ``special_order[i]`` is parsed."""
        if allowed.shape[0] < len(self.special_order):
            raise ValueError("the allowed mask is shorter than the list of special tokens")
        if not self.llama_cpp or not self.special_order:
            return self._ids(text, None)
        return self._ids(text, allowed)

    def count(self, str text not None, const uint8_t[::1] allowed=None):
        """How many ids ``text`` encodes to."""
        return len(self._ids(text, allowed if self.llama_cpp and self.special_order else None))

    def encode_many(self, list texts not None, const uint8_t[::1] allowed=None):
        """Encode a list of texts; without special tokens to look for, the
        whole batch runs without the GIL."""
        cdef Py_ssize_t count = len(texts), i
        cdef const uint8_t** starts
        cdef Py_ssize_t* sizes
        cdef size_t* ends
        cdef SpanBuf toks = SpanBuf(NULL, 0, 0)
        cdef SpanBuf spans = SpanBuf(NULL, 0, 0)
        cdef ByteBuf norm = ByteBuf(NULL, 0, 0)
        cdef list result
        if self.llama_cpp and (self.always_special or allowed is not None):
            return [self._ids(t, allowed) for t in texts]
        starts = <const uint8_t**>malloc((count + 1) * sizeof(uint8_t*))
        sizes = <Py_ssize_t*>malloc((count + 1) * sizeof(Py_ssize_t))
        ends = <size_t*>malloc((count + 1) * sizeof(size_t))
        try:
            if starts == NULL or sizes == NULL or ends == NULL:
                raise MemoryError()
            for i in range(count):
                starts[i] = <const uint8_t*>PyUnicode_AsUTF8AndSize(texts[i], &sizes[i])
            with nogil:
                for i in range(count):
                    self._encode_fragment(starts[i], sizes[i], True, &norm, NULL, &spans, &toks)
                    ends[i] = toks.len
            result = PyList_New(count)
            a = 0
            for i in range(count):
                one = _ids_list(toks.data, a, ends[i])
                Py_INCREF(one)
                PyList_SET_ITEM(result, i, one)
                a = ends[i]
            return result
        finally:
            free(starts); free(sizes); free(ends)
            spans_free(&toks); spans_free(&spans); bytebuf_free(&norm)

    def encode_as_pieces(self, str text not None, const uint8_t[::1] allowed=None):
        """The pieces of ``text`` as sentencepiece's ``encode(out_type=str)``
        gives them: the normalized text of each token (so an ``unk`` shows the
        text it covers), ``<0xXX>`` for byte fallback, a special's own text."""
        return [piece for piece, _ in self.encode_with_pieces(text, allowed)]

    def encode_with_pieces(self, str text not None, const uint8_t[::1] allowed=None):
        """``[(piece, id)]`` for ``text`` (see :meth:`encode_as_pieces`)."""
        cdef SpanBuf toks = SpanBuf(NULL, 0, 0)
        cdef ByteBuf norm = ByteBuf(NULL, 0, 0)
        cdef size_t i
        cdef Span* t
        norms = []
        try:
            self._encode_text(text, allowed if self.llama_cpp else None, &toks, &norm, norms)
            joined = b"".join(norms)
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

    def encode_normalized(self, normalized):
        """Segment already-normalized text (``str`` or UTF-8 ``bytes``) without
        normalizing it again: ``[(piece bytes, id)]`` before unknown handling
        (``NO_TOKEN`` = 4294967295 for a BPE part that is no piece)."""
        cdef bytes raw = normalized.encode("utf-8") if isinstance(normalized, str) else bytes(normalized)
        cdef SpanBuf spans = SpanBuf(NULL, 0, 0)
        cdef size_t i
        try:
            if self.model_kind == MODEL_UNIGRAM:
                self.unigram.viterbi(<const uint8_t*>PyBytes_AS_STRING(raw), len(raw), &spans)
            else:
                self._bpe(<const uint8_t*>PyBytes_AS_STRING(raw), len(raw), &spans)
            return [(raw[spans.data[i].start:spans.data[i].end], spans.data[i].id)
                    for i in range(spans.len)]
        finally:
            spans_free(&spans)

    def encode_bytes_piece(self, bytes piece not None):
        """Segment raw bytes as one already-normalized piece (no normalizer)."""
        cdef SpanBuf spans = SpanBuf(NULL, 0, 0)
        cdef SpanBuf toks = SpanBuf(NULL, 0, 0)
        try:
            self._encode_normalized(<const uint8_t*>PyBytes_AS_STRING(piece), len(piece),
                                    &spans, &toks)
            return _ids_list(toks.data, 0, toks.len)
        finally:
            spans_free(&spans)
            spans_free(&toks)

    def normalize(self, str text not None):
        """``text`` as the model's normalizer leaves it (``▁`` for spaces)."""
        return self.normalizer.normalize(text)

    def normalize_with_offsets(self, str text not None):
        """``(normalized, offsets)``: see :meth:`fasttok._spm_normalizer.Normalizer.normalize_with_offsets`."""
        return self.normalizer.normalize_with_offsets(text)

    def lattice(self, str text not None):
        """Every Unigram lattice node of ``text`` after normalization, as
        ``(start, end, id, score)`` byte offsets into the normalized text."""
        if self.unigram is None:
            raise ValueError("only Unigram models have a lattice")
        return self.unigram.lattice(self.normalizer.normalize(text))

    def find_special(self, str text not None, const uint8_t[::1] mask not None):
        """The index in ``special_order`` of the leftmost special that ``mask``
        selects and ``text`` contains (the longest one there), or -1."""
        best = -1
        best_at = -1
        for k, needle in enumerate(self.special_texts):
            if k < mask.shape[0] and mask[k] and needle:
                at = text.find(needle)
                if at >= 0 and (best < 0 or at < best_at or (
                        at == best_at and len(needle) > len(self.special_texts[best]))):
                    best, best_at = k, at
        return best

    # ------------------------------------------------------------ decoding

    cdef bytes _piece(self, Py_ssize_t i):
        cdef uint64_t a = self.pieces.offsets[i], b = self.pieces.offsets[i + 1]
        return (<char*>self.pieces.data)[a:b]

    def decode_bytes(self, tokens):
        """The text the ids stand for, as UTF-8 bytes: sentencepiece's
        ``decode`` or llama.cpp's ``detokenize`` (no special tokens rendered).
        ``KeyError`` on an id that is not in the vocabulary."""
        cdef Py_ssize_t count = len(tokens), i
        cdef uint32_t* ids = <uint32_t*>malloc((count + 1) * sizeof(uint32_t))
        cdef ByteBuf out = ByteBuf(NULL, 0, 0)
        cdef long long t
        if ids == NULL:
            raise MemoryError()
        try:
            i = 0
            for token in tokens:
                t = token
                if t < 0 or t >= self.n_tokens:
                    raise KeyError(token)
                ids[i] = <uint32_t>t
                i += 1
            if self.llama_cpp:
                self._detokenize_llama(ids, count, &out)
            else:
                self._decode_spm(ids, count, &out)
            return (<char*>out.data)[:out.len] if out.len else b""
        finally:
            free(ids)
            bytebuf_free(&out)

    cdef int _append(self, ByteBuf* out, const uint8_t* p, size_t n) except -1:
        bytebuf_reserve(out, n)
        memcpy(out.data + out.len, p, n)
        out.len += n
        return 0

    cdef int _append_unescaped(self, ByteBuf* out, const uint8_t* p, size_t n) except -1:
        # copy, turning every ▁ into a space
        cdef size_t i = 0
        bytebuf_reserve(out, n)
        while i < n:
            if i + 3 <= n and p[i] == 0xE2 and p[i + 1] == 0x96 and p[i + 2] == 0x81:
                out.data[out.len] = 32
                i += 3
            else:
                out.data[out.len] = p[i]
                i += 1
            out.len += 1
        return 0

    cdef int _flush_bytes(self, ByteBuf* out, const uint8_t* b, size_t n) except -1:
        # byte pieces -> text: valid UTF-8 characters as they are, each
        # invalid byte as U+FFFD (sentencepiece's ProcessBytePieces)
        cdef size_t i = 0, k
        while i < n:
            k = valid_utf8_len(b + i, n - i)
            if k == 0:
                self._append(out, <const uint8_t*>b"\xef\xbf\xbd", 3)
                i += 1
            else:
                self._append(out, b + i, k)
                i += k
        return 0

    cdef int _decode_spm(self, const uint32_t* ids, size_t count, ByteBuf* out) except -1:
        cdef ByteBuf pending = ByteBuf(NULL, 0, 0)
        cdef bint is_bos_ws = True, bos_ws_seen = False
        cdef size_t i
        cdef uint32_t id
        cdef uint8_t kind
        cdef const uint8_t* p
        cdef size_t n
        try:
            for i in range(count):
                id = ids[i]
                kind = self.types[id]
                if kind == T_BYTE:
                    bytebuf_reserve(&pending, 1)
                    pending.data[pending.len] = self.byte_of[id]
                    pending.len += 1
                    continue
                if pending.len:
                    self._flush_bytes(out, pending.data, pending.len)
                    pending.len = 0
                if bos_ws_seen or out.len:
                    is_bos_ws = False
                if kind == T_CONTROL:
                    bos_ws_seen = False
                    continue
                if kind == T_UNKNOWN:
                    self._append(out, <const uint8_t*>PyBytes_AS_STRING(self.unk_surface),
                                 len(self.unk_surface))
                    bos_ws_seen = False
                    continue
                p = self.pieces.data + self.pieces.offsets[id]
                n = self.pieces.offsets[id + 1] - self.pieces.offsets[id]
                bos_ws_seen = False
                if is_bos_ws and self.strip_dummy_space and n >= 3 \
                        and p[0] == 0xE2 and p[1] == 0x96 and p[2] == 0x81:
                    p += 3
                    n -= 3
                    bos_ws_seen = not self.remove_extra_whitespaces
                self._append_unescaped(out, p, n)
            if pending.len:
                self._flush_bytes(out, pending.data, pending.len)
        finally:
            bytebuf_free(&pending)
        return 0

    cdef int _detokenize_llama(self, const uint32_t* ids, size_t count, ByteBuf* out) except -1:
        # llama_detokenize(remove_special=false, unparse_special=false)
        cdef bint remove_space = self.add_space_prefix
        cdef size_t i, n
        cdef uint32_t id
        cdef uint8_t kind
        cdef const uint8_t* p
        for i in range(count):
            id = ids[i]
            kind = self.types[id]
            if kind != T_CONTROL and kind != T_UNKNOWN:
                p = self.rendered.data + self.rendered.offsets[id]
                n = self.rendered.offsets[id + 1] - self.rendered.offsets[id]
                if remove_space and n and p[0] == 32:
                    p += 1
                    n -= 1
                self._append(out, p, n)
            remove_space = False
        return 0

    def token_bytes(self, Py_ssize_t token):
        """What one id stands for: the piece with ``▁`` as a space, a byte
        piece's byte, a control piece's own text (llama.cpp's
        ``token_to_piece(special=True)``); ``KeyError`` for an unknown id."""
        if token < 0 or token >= self.n_tokens:
            raise KeyError(token)
        cdef uint64_t a = self.rendered.offsets[token], b = self.rendered.offsets[token + 1]
        return (<char*>self.rendered.data)[a:b]

    def id_to_piece(self, Py_ssize_t token):
        """The vocabulary's text of one id (``▁`` kept, ``<0x41>`` as is)."""
        if token < 0 or token >= self.n_tokens:
            raise KeyError(token)
        return self._piece(token).decode("utf-8", "replace")

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
        k = _one_char_len(p[i])
        if k > n - i:
            k = n - i
        if i > 0 and _is_space_symbol(p + i, k) and prev >= 0:
            out.add(token[prev:i])
        prev = i
        i += k
