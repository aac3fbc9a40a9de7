# Unigram (SentencePiece) training: the word table, the seed pieces, and
# the E-step, M-step and pruning of the EM loop.
"""Unigram training core (compiled), after sentencepiece's ``unigram_model_trainer``.

The corpus is kept as its distinct words (a word begins at each ``▁``)
with their counts, as sentencepiece keeps it after
``SplitSentencesByWhitespace``; every step below runs over those.

* Seeds. sentencepiece builds a suffix array of the whole corpus and takes
  the substrings at the inner nodes of its suffix tree (those followed by
  two different characters), scored ``freq * length``. Here the suffix
  array is built over the distinct words, each suffix weighted by its
  word's count, and sorted on its first ``max_length + 1`` characters only
  (no seed is longer than ``max_length``; the one character more tells
  whether a node that deep branches): a substring's weighted frequency is
  its corpus frequency exactly. The nodes are the same too: a word is kept
  twice, once for its occurrences followed by another word (whose ``▁`` the
  corpus array sees next) and once for those at the end of a sentence, so
  a substring at the end of words branches where it does in the corpus.
  (Taking every word seen twice as a node instead: 2.2% fewer tokens than
  sentencepiece on English, 2% more on the multilingual corpus; not
  telling the two ends apart: 1.9% more on code, where ``▁0,`` ends most
  words and few sentences.) A hash of every
  substring of every word was tried first: ~10x the memory on CJK text,
  whose "words" are whole lines.
* E-step: forward-backward over each word's lattice, the nodes that the
  compiled Unigram model (``fasttok.models._unigram``) gives sampling and
  n-best (``UnigramModel.populate``); the second-best paths of pruning run
  over the same nodes. Expected counts are summed in 40.24 fixed point
  so that the sum, which threads add in any order, is the same bits for any
  thread count.
* Pruning: the piece's best and second-best segmentations of itself, the
  Viterbi counts of the corpus, and the loss of each removal, as
  sentencepiece computes them (its inverted index only sums the counts the
  Viterbi pass already has, so it is not kept).

>>> t = WordTable([(b"\\xe2\\x96\\x81ab", 3, 0), (b"\\xe2\\x96\\x81b", 1, 1)])
>>> t.n_words, sorted(t.char_counts())
(2, [(97, 3), (98, 4), (9601, 4)])
"""

from array import array

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_FromStringAndSize
from libc.math cimport INFINITY, exp, log, log1p
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy

from fasttok.models._unigram cimport IdBuf, LatticeNode, NodeBuf, UnigramModel, ViterbiScratch, \
    viterbi_scratch_free
from fasttok.shared._growth cimport grow_array
from fasttok.shared._merge_sort cimport key_less, merge_sort
from fasttok.shared._utf8 cimport utf8_get, utf8_put
from fasttok.trainers._bpe_trainer cimport PieceCounter

cdef enum:
    SEP = 0x110000            # ends each word in the suffix array's text (above every code point)
    NEXT_WORD = 0x110001      # before SEP: what follows the word is another word's ▁
    SENTENCE_END = 0x110002   # before SEP: the word ends its sentence
    WS_CHAR = 0x2581          # ▁
    UNK_CHAR = 0x2047         # ⁇, what a character outside the coverage becomes
    ANY_SCRIPT = 0xFFFF
    SCRIPT_INHERITED = 0xFFFE

# expected counts are summed as integers of 2**-24
cdef double FIXED_ONE = 16777216.0


def count_words(PieceCounter counter, PieceCounter finals, list sentences):
    """Add the words of normalized sentences (UTF-8 ``bytes``) to ``counter``,
    and the last word of each to ``finals``; a word begins at each ``▁``
    (sentencepiece's ``SplitIntoWords``).

    >>> from fasttok.trainers._bpe_trainer import PieceCounter
    >>> c, f = PieceCounter(), PieceCounter()
    >>> count_words(c, f, ["▁a▁bc▁a".encode()]); sorted(c.items()), f.items()
    ([(b'\\xe2\\x96\\x81a', 2), (b'\\xe2\\x96\\x81bc', 1)], [(b'\\xe2\\x96\\x81a', 1)])
    """
    cdef object s
    cdef const uint8_t* p
    cdef size_t n, i, start
    for s in sentences:
        p = <const uint8_t*>PyBytes_AS_STRING(s)
        n = <size_t>PyBytes_GET_SIZE(s)
        start = 0
        i = 1
        while i + 2 < n:
            if p[i] == 0xE2 and p[i + 1] == 0x96 and p[i + 2] == 0x81:
                counter.add(p + start, i - start, 1)
                start = i
                i += 3
            else:
                i += 1
        if n > start:
            counter.add(p + start, n - start, 1)
            finals.add(p + start, n - start, 1)
        counter.n_bytes += n


cdef int _merge_sort(uint32_t* a, size_t n, key_less less, const void* ctx) except -1 nogil:
    # merge_sort (stable: equal keys keep the input's order) with its spare room
    cdef uint32_t* tmp = <uint32_t*>malloc((n + 1) * sizeof(uint32_t))
    if tmp == NULL:
        with gil:
            raise MemoryError()
    merge_sort(a, tmp, n, less, ctx)
    free(tmp)
    return 0


cdef struct SuffixCtx:
    const uint32_t* text
    size_t depth


cdef int _suffix_less(const void* ctx, uint32_t a, uint32_t b) noexcept nogil:
    # the first depth characters of the two suffixes, a word's end (SEP) last
    cdef const SuffixCtx* c = <const SuffixCtx*>ctx
    cdef const uint32_t* t = c.text
    cdef size_t k
    for k in range(c.depth):
        if t[a + k] != t[b + k]:
            return t[a + k] < t[b + k]
        if t[a + k] == SEP:
            return 0
    return 0


cdef struct Candidate:
    uint32_t pos
    uint32_t length
    int64_t score


cdef struct CandidateCtx:
    const uint32_t* text
    const Candidate* cand


cdef int _candidate_less(const void* ctx, uint32_t a, uint32_t b) noexcept nogil:
    # higher score first, then the lower string (sentencepiece's Sorted)
    cdef const CandidateCtx* c = <const CandidateCtx*>ctx
    cdef const Candidate* x = &c.cand[a]
    cdef const Candidate* y = &c.cand[b]
    cdef size_t k, n
    if x.score != y.score:
        return x.score > y.score
    n = x.length if x.length < y.length else y.length
    for k in range(n):
        if c.text[x.pos + k] != c.text[y.pos + k]:
            return c.text[x.pos + k] < c.text[y.pos + k]
    return x.length < y.length


cdef struct SeedRules:
    const uint16_t* script      # per code point; ANY_SCRIPT for digits when numbers may mix
    size_t max_length
    bint by_script
    bint split_digits


cdef bint _valid_piece(const uint32_t* c, size_t n, const SeedRules* rules) noexcept nogil:
    # sentencepiece's IsValidSentencePiece with split_by_whitespace
    cdef uint32_t prev = ANY_SCRIPT, s
    cdef size_t k
    if n == 0 or n > rules.max_length:
        return False
    for k in range(n):
        if c[k] == SEP or c[k] == UNK_CHAR or c[k] == 0 or c[k] == 0x20:
            return False
        if c[k] == WS_CHAR:
            if k > 0:
                return False
            continue
        if c[k] > 0x10FFFF or 0xD800 <= c[k] <= 0xDFFF:
            return False
        if rules.split_digits and 0x30 <= c[k] <= 0x39 and n > 1:
            return False
        s = rules.script[c[k]]
        if s == SCRIPT_INHERITED:
            s = prev
        if rules.by_script and prev != ANY_SCRIPT and s != ANY_SCRIPT and s != prev:
            return False
        if s != ANY_SCRIPT:
            prev = s
    return True



cdef class WordTable:
    """The distinct words of the corpus and their counts.

    ``items`` is ``[(word bytes, count, count at the end of a sentence)]``;
    the table keeps its order (the caller sorts it, so the result does not
    depend on how it was counted).

    >>> WordTable([(b"\\xe2\\x96\\x81a", 2, 1)]).total_count
    2
    """

    cdef uint8_t* text
    cdef uint64_t* start
    cdef int64_t* freq
    cdef int64_t* final
    cdef readonly size_t n_words
    cdef readonly int64_t total_count

    def __cinit__(self):
        self.text = NULL
        self.start = NULL
        self.freq = NULL
        self.final = NULL

    def __init__(self, list items):
        cdef size_t n = len(items), i, size = 0
        cdef bytes word
        for word, _, _ in items:
            size += <size_t>PyBytes_GET_SIZE(word)
        self.text = <uint8_t*>malloc(size + 1)
        self.start = <uint64_t*>malloc((n + 1) * sizeof(uint64_t))
        self.freq = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        self.final = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        if self.text == NULL or self.start == NULL or self.freq == NULL or self.final == NULL:
            raise MemoryError()
        self.n_words = n
        self.total_count = 0
        size = 0
        for i in range(n):
            word, count, final = items[i]
            if not 0 <= final <= count:
                raise ValueError(f"word {word!r}: {final} of its {count} at sentence ends")
            self.final[i] = final
            self.start[i] = size
            memcpy(self.text + size, PyBytes_AS_STRING(word), PyBytes_GET_SIZE(word))
            size += <size_t>PyBytes_GET_SIZE(word)
            self.freq[i] = count
            self.total_count += <int64_t>count
        self.start[n] = size

    def __dealloc__(self):
        free(self.text)
        free(self.start)
        free(self.freq)
        free(self.final)

    def char_counts(self):
        """``[(code point, count)]`` of every character, each word's weighted
        by its count, in code point order."""
        cdef int64_t* counts = <int64_t*>calloc(0x110000, sizeof(int64_t))
        cdef size_t w, pos, end
        cdef uint32_t cp
        if counts == NULL:
            raise MemoryError()
        try:
            with nogil:
                for w in range(self.n_words):
                    pos = self.start[w]
                    end = self.start[w + 1]
                    while pos < end:
                        pos += utf8_get(self.text + pos, end - pos, &cp)
                        if cp < 0x110000:
                            counts[cp] += self.freq[w]
            return [(int(c), counts[c]) for c in range(0x110000) if counts[c]]
        finally:
            free(counts)

    def rare_words(self, const uint8_t[:] kept not None):
        """``[(index, word with ⁇ for each character not kept)]`` for every word
        that has such a character; ``kept`` has one byte per code point."""
        cdef size_t w, pos, end, step
        cdef uint32_t cp
        cdef bint rare
        out = []
        for w in range(self.n_words):
            pos = self.start[w]
            end = self.start[w + 1]
            rare = False
            while pos < end:
                pos += utf8_get(self.text + pos, end - pos, &cp)
                if cp >= 0x110000 or not kept[cp]:
                    rare = True
                    break
            if not rare:
                continue
            pieces = []
            pos = self.start[w]
            while pos < end:
                step = utf8_get(self.text + pos, end - pos, &cp)
                if cp >= 0x110000 or not kept[cp]:
                    pieces.append("\u2047".encode())
                else:
                    pieces.append(PyBytes_FromStringAndSize(<char*>self.text + pos, step))
                pos += step
            out.append((w, b"".join(pieces)))
        return out

    def seed_pieces(self, const uint16_t[:] script not None, size_t max_length, size_t limit,
                    bint split_by_unicode_script=True, bint split_digits=False):
        """The ``limit`` substrings of two or more characters with the highest
        ``frequency * length`` among the suffix-tree nodes of the words, best
        first, as ``(pieces, scores)``: a list of bytes and an ``array("q")``
        (see the module notes). ``script`` gives each code point's script
        number."""
        cdef SeedRules rules
        cdef SuffixCtx sctx
        cdef CandidateCtx cctx
        cdef uint32_t* text = NULL
        cdef int64_t* weight = NULL
        cdef uint32_t* sa = NULL
        cdef Candidate* cand = NULL
        cdef uint32_t* order = NULL
        cdef uint32_t* stack_h = NULL
        cdef uint32_t* stack_pos = NULL
        cdef int64_t* stack_before = NULL
        cdef int64_t seen, before
        cdef uint32_t lb_pos
        cdef size_t n_text = 0, n_sa = 0, n_cand = 0, cap_cand = 0, top, i, k, w, pos, end
        cdef size_t h, depth = max_length + 1
        cdef uint32_t cp
        cdef int64_t f
        cdef Candidate* c
        cdef char buf[64]
        cdef size_t blen
        rules.script = &script[0]
        rules.max_length = max_length
        rules.by_script = split_by_unicode_script
        rules.split_digits = split_digits
        if script.shape[0] < 0x110000:
            raise ValueError("script needs one entry per code point")
        try:
            with nogil:
                for w in range(self.n_words):
                    n_text += 2 * (self.start[w + 1] - self.start[w] + 2)
                if n_text >= 0xFFFFFFF0U:
                    with gil:
                        raise MemoryError("the distinct words have more than 2**32 characters")
                text = <uint32_t*>malloc((n_text + depth + 1) * sizeof(uint32_t))
                weight = <int64_t*>malloc((n_text + 1) * sizeof(int64_t))
                sa = <uint32_t*>malloc((n_text + 1) * sizeof(uint32_t))
                if text == NULL or weight == NULL or sa == NULL:
                    with gil:
                        raise MemoryError()
                n_text = 0
                # each word once for its occurrences inside sentences and
                # once for those at their ends: what follows a word is all
                # the corpus array sees of its context
                for w in range(2 * self.n_words):
                    f = self.final[w // 2] if w & 1 else self.freq[w // 2] - self.final[w // 2]
                    if f == 0:
                        continue
                    pos = self.start[w // 2]
                    end = self.start[w // 2 + 1]
                    while pos < end:
                        pos += utf8_get(self.text + pos, end - pos, &cp)
                        weight[n_text] = f
                        sa[n_sa] = <uint32_t>n_text
                        n_sa += 1
                        text[n_text] = cp
                        n_text += 1
                    weight[n_text] = 0
                    text[n_text] = SENTENCE_END if w & 1 else NEXT_WORD
                    weight[n_text + 1] = 0
                    text[n_text + 1] = SEP
                    n_text += 2
                for i in range(depth + 1):
                    text[n_text + i] = SEP
                sctx.text = text
                sctx.depth = depth
                _merge_sort(sa, n_sa, _suffix_less, &sctx)
                # The inner nodes are the lcp intervals, found with a stack as
                # the sorted suffixes go by; each open interval keeps its
                # depth, its first suffix and the weight before it, so a
                # closed one's frequency is the weight seen since.
                stack_h = <uint32_t*>malloc((depth + 2) * sizeof(uint32_t))
                stack_pos = <uint32_t*>malloc((depth + 2) * sizeof(uint32_t))
                stack_before = <int64_t*>malloc((depth + 2) * sizeof(int64_t))
                if stack_h == NULL or stack_pos == NULL or stack_before == NULL:
                    with gil:
                        raise MemoryError()
                top = 0
                stack_h[0] = 0
                stack_pos[0] = 0
                stack_before[0] = 0
                seen = 0
                for i in range(1, n_sa + 1):
                    before = seen
                    seen += weight[sa[i - 1]]
                    h = 0
                    if i < n_sa:
                        while h < depth and text[sa[i - 1] + h] == text[sa[i] + h] \
                                and text[sa[i] + h] != SEP:
                            h += 1
                    lb_pos = sa[i - 1]
                    while stack_h[top] > h:
                        _add_candidate(&cand, &n_cand, &cap_cand, text, stack_pos[top],
                                       stack_h[top], seen - stack_before[top], &rules)
                        lb_pos = stack_pos[top]
                        before = stack_before[top]
                        top -= 1
                    if stack_h[top] < h:
                        top += 1
                        stack_h[top] = <uint32_t>h
                        stack_pos[top] = lb_pos
                        stack_before[top] = before
                free(sa)
                sa = NULL
                order = <uint32_t*>malloc((n_cand + 1) * sizeof(uint32_t))
                if order == NULL:
                    with gil:
                        raise MemoryError()
                for i in range(n_cand):
                    order[i] = <uint32_t>i
                cctx.text = text
                cctx.cand = cand
                _merge_sort(order, n_cand, _candidate_less, &cctx)
            pieces = []
            scores = array("q")
            for i in range(n_cand if n_cand < limit else limit):
                c = &cand[order[i]]
                blen = 0
                for k in range(c.length):
                    blen += utf8_put(<uint8_t*>buf + blen, text[c.pos + k])
                pieces.append(PyBytes_FromStringAndSize(buf, blen))
                scores.append(c.score)
            return pieces, scores
        finally:
            free(text)
            free(weight)
            free(sa)
            free(cand)
            free(order)
            free(stack_h)
            free(stack_pos)
            free(stack_before)

    cdef int _check_span(self, UnigramModel model, size_t lo, size_t hi,
                         Py_ssize_t out_len) except -1:
        # words lo..hi of the table, into one count per piece
        if hi > self.n_words or lo > hi:
            raise ValueError("word range out of the table")
        if <size_t>out_len < model.n_pieces:
            raise ValueError("out needs one entry per piece")
        return 0

    def expected_counts(self, UnigramModel model, size_t lo, size_t hi, int64_t[:] out not None):
        """Add the expected count of every piece over words ``lo`` to ``hi``
        (forward-backward on each word's lattice) to ``out``, in units of
        2**-24; returns the log-likelihood of those words, count-weighted."""
        self._check_span(model, lo, hi, out.shape[0])
        cdef double objective = 0.0
        with nogil:
            objective = _expected(self, model, lo, hi, &out[0])
        return objective

    def viterbi_counts(self, UnigramModel model, size_t lo, size_t hi, int64_t[:] out not None):
        """Add to ``out`` how often each piece is in the best segmentation of
        words ``lo`` to ``hi`` (count-weighted); returns the number of tokens."""
        self._check_span(model, lo, hi, out.shape[0])
        cdef int64_t tokens = 0
        with nogil:
            tokens = _viterbi_counts(self, model, lo, hi, &out[0])
        return tokens


cdef int _add_candidate(Candidate** cand, size_t* n, size_t* cap, const uint32_t* text,
                        uint32_t pos, size_t length, int64_t freq,
                        const SeedRules* rules) except -1 nogil:
    cdef Candidate* c
    if length < 2 or freq < 2 or not _valid_piece(text + pos, length, rules):
        return 0
    grow_array(<void**>cand, cap, n[0] + 1, sizeof(Candidate), 1 << 12)
    c = &cand[0][n[0]]
    c.pos = pos
    c.length = <uint32_t>length
    c.score = freq * <int64_t>length
    n[0] += 1
    return 0


cdef struct Lattice:
    NodeBuf nodes
    double* alpha
    double* beta
    size_t cap_pos


cdef int _populate(UnigramModel m, const uint8_t* s, size_t n, Lattice* lat) except -1 nogil:
    # s's lattice nodes, with room for its forward and backward sums
    m.populate(s, n, &lat.nodes)
    if lat.cap_pos < n + 1:
        free(lat.alpha)
        free(lat.beta)
        lat.alpha = <double*>malloc((n + 1) * sizeof(double))
        lat.beta = <double*>malloc((n + 1) * sizeof(double))
        lat.cap_pos = n + 1
        if lat.alpha == NULL or lat.beta == NULL:
            lat.cap_pos = 0
            with gil:
                raise MemoryError()
    return 0


cdef void _lattice_free(Lattice* lat) noexcept nogil:
    free(lat.nodes.data)
    free(lat.alpha)
    free(lat.beta)


cdef inline double _log_add(double a, double b) noexcept nogil:
    cdef double t
    if a < b:
        t = a
        a = b
        b = t
    if b == -INFINITY or b < a - 50.0:
        return a
    return a + log1p(exp(b - a))


cdef double _expected(WordTable t, UnigramModel m, size_t lo, size_t hi,
                      int64_t* out) except? -1.0 nogil:
    cdef Lattice lat
    cdef size_t w, i, n
    cdef const uint8_t* s
    cdef const LatticeNode* nd
    cdef double z, objective = 0.0, freq, mass
    lat.nodes = NodeBuf(NULL, 0, 0)
    lat.alpha = NULL
    lat.beta = NULL
    lat.cap_pos = 0
    try:
        for w in range(lo, hi):
            s = t.text + t.start[w]
            n = t.start[w + 1] - t.start[w]
            if n == 0:
                continue
            _populate(m, s, n, &lat)
            for i in range(n + 1):
                lat.alpha[i] = -INFINITY
                lat.beta[i] = -INFINITY
            lat.alpha[0] = 0.0
            lat.beta[n] = 0.0
            for i in range(lat.nodes.len):
                nd = &lat.nodes.data[i]
                lat.alpha[nd.end] = _log_add(lat.alpha[nd.end], lat.alpha[nd.start] + nd.score)
            for i in range(lat.nodes.len, 0, -1):
                nd = &lat.nodes.data[i - 1]
                lat.beta[nd.start] = _log_add(lat.beta[nd.start], lat.beta[nd.end] + nd.score)
            z = lat.alpha[n]
            freq = <double>t.freq[w]
            objective += freq * z
            for i in range(lat.nodes.len):
                nd = &lat.nodes.data[i]
                if nd.id == m.unk_id:
                    continue
                mass = freq * exp(lat.alpha[nd.start] + nd.score + lat.beta[nd.end] - z)
                out[nd.id] += <int64_t>(mass * FIXED_ONE + 0.5)
    finally:
        _lattice_free(&lat)
    return objective


cdef int64_t _viterbi_counts(WordTable t, UnigramModel m, size_t lo, size_t hi,
                             int64_t* out) except -1 nogil:
    cdef ViterbiScratch scratch
    cdef IdBuf ids
    cdef size_t w, i, n, longest = 0
    cdef int64_t tokens = 0
    scratch.best = NULL
    scratch.size = 0
    scratch.owned = 0
    for w in range(lo, hi):
        n = t.start[w + 1] - t.start[w]
        if n > longest:
            longest = n
    ids.data = <uint32_t*>malloc((longest + 1) * sizeof(uint32_t))
    if ids.data == NULL:
        with gil:
            raise MemoryError()
    try:
        for w in range(lo, hi):
            ids.len = 0
            m.viterbi_ids(t.text + t.start[w], t.start[w + 1] - t.start[w], &ids, &scratch)
            tokens += <int64_t>ids.len * t.freq[w]
            for i in range(ids.len):
                out[ids.data[i]] += t.freq[w]
    finally:
        free(ids.data)
        viterbi_scratch_free(&scratch)
    return tokens


def add_into(int64_t[:] total not None, int64_t[:] part not None):
    """``total += part``, element by element (the threads' partial counts).

    >>> from array import array
    >>> a = array("q", [1, 2]); add_into(a, array("q", [3, 4])); list(a)
    [4, 6]
    """
    cdef Py_ssize_t i
    if part.shape[0] != total.shape[0]:
        raise ValueError("the two arrays differ in length")
    for i in range(total.shape[0]):
        total[i] += part[i]


cdef double _digamma(double x) noexcept nogil:
    # the asymptotic series, after moving x above 7 (as sentencepiece does)
    cdef double result = 0.0, xx, xx2, xx4
    while x < 7.0:
        result -= 1.0 / x
        x += 1.0
    x -= 0.5
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    return (result + log(x) + (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4
            + (31.0 / 8064.0) * xx4 * xx2 - (127.0 / 30720.0) * xx4 * xx4)


def m_step(int64_t[:] expected not None, size_t n_pieces):
    """The pieces kept by the M-step and their new scores, ``(indices,
    scores)``: a piece expected less than half a time is dropped, the others
    get ``digamma(count) - digamma(total)`` (sentencepiece's Bayesian EM).

    >>> from array import array
    >>> keep, scores = m_step(array("q", [1 << 22, 3 << 24, 1 << 24]), 3)
    >>> keep, [round(s, 3) for s in scores]      # scores: an array("d")
    ([1, 2], [-0.333, -1.833])
    """
    cdef size_t i
    cdef double total = 0.0, logsum, count
    keep = []
    for i in range(n_pieces):
        count = expected[i] / FIXED_ONE
        if count < 0.5:
            continue
        keep.append(i)
        total += count
    logsum = _digamma(total)
    return keep, array("d", [_digamma(expected[i] / FIXED_ONE) - logsum for i in keep])


cdef int _second_best(UnigramModel m, const uint8_t* s, size_t n, IdBuf* out) except -1 nogil:
    # the best segmentation of s that is not the whole of it in one piece,
    # the unknown piece allowed (a character the M-step dropped); out.len =
    # 0 when there is none
    cdef NodeBuf nodes = NodeBuf(NULL, 0, 0)
    cdef double* best = <double*>malloc((n + 1) * sizeof(double))
    cdef uint32_t* back = <uint32_t*>malloc((n + 1) * sizeof(uint32_t))
    cdef uint32_t* via = <uint32_t*>malloc((n + 1) * sizeof(uint32_t))
    cdef const LatticeNode* nd
    cdef size_t pos, i
    cdef double score
    out.len = 0
    try:
        if best == NULL or back == NULL or via == NULL:
            with gil:
                raise MemoryError()
        m.populate(s, n, &nodes)
        for i in range(n + 1):
            best[i] = -INFINITY
        best[0] = 0.0
        # nodes come by start, so best[start] is final when its nodes come
        for i in range(nodes.len):
            nd = &nodes.data[i]
            if best[nd.start] == -INFINITY or (nd.start == 0 and nd.end == n and nd.id != m.unk_id):
                continue
            score = best[nd.start] + nd.score
            if score > best[nd.end]:
                best[nd.end] = score
                back[nd.end] = nd.start
                via[nd.end] = nd.id
        if best[n] != -INFINITY:
            pos = n
            while pos > 0:
                out.data[out.len] = via[pos]
                out.len += 1
                pos = back[pos]
    finally:
        free(nodes.data)
        free(best)
        free(back)
        free(via)
    return 0


def prune(UnigramModel model, list pieces, int64_t[:] viterbi not None, size_t keep_size):
    """Which pieces survive a pruning round, as indices: the pieces whose
    removal would cost the corpus likelihood most, ``keep_size`` of them
    (sentencepiece's ``PruneSentencePieces``; ``viterbi`` is how often each
    piece, and after them the unknown piece, is in the corpus's best
    segmentation).

    >>> from array import array
    >>> from fasttok.models._unigram import UnigramModel
    >>> m = UnigramModel([b"a", b"b", b"ab", b"<unk>"], [-1.0, -1.0, -1.5, 0.0], [1, 1, 1, 2], 3)
    >>> prune(m, [b"a", b"b", b"ab"], array("q", [5, 5, 9, 0]), 2)
    [0, 1]
    """
    cdef size_t n = len(pieces), i, j, longest = 1
    cdef IdBuf ids
    cdef bytes p
    cdef double total = 0.0, logsum, f, logprob_sp, logsum_alt, logprob_alt
    if <size_t>viterbi.shape[0] <= n or model.unk_id != n:
        raise ValueError("viterbi needs one count per piece and one for the unknown piece, "
                         "the model's last id")
    for p in pieces:
        if <size_t>PyBytes_GET_SIZE(p) > longest:
            longest = PyBytes_GET_SIZE(p)
    for i in range(n):
        total += <double>viterbi[i]
    if total <= 0:
        return list(range(min(n, keep_size)))
    logsum = log(total)
    ids.data = <uint32_t*>malloc((longest + 1) * sizeof(uint32_t))
    if ids.data == NULL:
        raise MemoryError()
    kept = []
    losses = []
    try:
        for i in range(n):
            if viterbi[i] == 0:
                continue
            p = pieces[i]
            ids.len = 0
            model.viterbi_ids(<const uint8_t*>PyBytes_AS_STRING(p), PyBytes_GET_SIZE(p), &ids,
                              NULL)
            if ids.len >= 2:
                continue   # its own best segmentation splits it: it goes
            _second_best(model, <const uint8_t*>PyBytes_AS_STRING(p), PyBytes_GET_SIZE(p), &ids)
            if ids.len == 0:
                kept.append(i)
                continue
            f = <double>viterbi[i]
            logprob_sp = log(f) - logsum
            # its occurrences go to the alternatives: each gains f
            logsum_alt = log(total + f * (<double>ids.len - 1.0))
            logprob_alt = 0.0
            for j in range(ids.len):
                logprob_alt += log(<double>viterbi[ids.data[j]] + f) - logsum_alt
            losses.append((-f * (logprob_sp - logprob_alt), i))
    finally:
        free(ids.data)
    losses.sort()
    for _, i in losses:
        if len(kept) >= keep_size:
            break
        kept.append(i)
    return kept
