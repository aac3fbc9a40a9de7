"""A linear-time regex engine for the patterns vocabulary files bring (a Pike VM).

A pattern in a ``tokenizer.json`` or ``tekken.json`` is untrusted input: on a
backtracking engine such as ``re``, ``(a|aa)+$`` takes time exponential in the
text. :class:`Regex` runs a program made by
:mod:`fasttok.shared.regex_translate` as Thompson's NFA simulation: all
threads advance together one code point at a time, at most one thread per
instruction, so a search costs O(text length x program size), whatever the
pattern.

Exactness contract: the threads are kept in priority order (the preferred
branch of a split first, a new start last) and a match cuts every thread
after it, which gives the leftmost-first match of a backtracking engine
(Perl, Oniguruma, fancy-regex, ``re``) and not the leftmost-longest one of
POSIX. Only the whole match is reported; groups are not tracked.

What stays linear and is therefore all the program may hold: characters and
classes, splits and jumps (alternation, greedy and lazy repeats), anchors
and word boundaries, a lookaround of one character (``\\s+(?!\\S)``), and a
possessive repeat of one class (``\\p{L}++``), which is deterministic: its
thread takes every character of the class and leaves at the first other.
Iterating the matches (``spans``, ``finditer``, ``findall``) can rescan
text, so it is bounded too: past a linear budget it raises
:class:`~fasttok.errors.FasttokError` (see ``_RESCANS``).

>>> from fasttok.shared.regex_translate import compile_generic
>>> [m.group() for m in compile_generic(r"\\s+(?!\\S)|\\s+|\\w+").finditer("a  b")]
['a', ' ', ' ', 'b']
"""

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport int32_t, int64_t, uint32_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memset

from fasttok.errors import FasttokError

from fasttok.shared._unicode cimport ft_simple_fold_to_ascii_lower


cdef extern from "Python.h":
    int PyUnicode_KIND(object text)
    void* PyUnicode_DATA(object text)
    Py_ssize_t PyUnicode_GET_LENGTH(object text)
    Py_UCS4 PyUnicode_READ(int kind, const void* data, Py_ssize_t index) nogil


#: the instruction names the compiler in regex_translate uses, with their codes
OPS = {"char": OP_CHAR, "class": OP_CLASS, "split": OP_SPLIT, "jmp": OP_JMP,
       "assert": OP_ASSERT, "look": OP_LOOK, "run": OP_RUN, "opt": OP_OPT, "loop": OP_LOOP,
       "match": OP_MATCH}
ANCHORS = {"text_start": AT_TEXT_START, "text_end": AT_TEXT_END,
           "end_newline": AT_END_NEWLINE, "line_start": AT_LINE_START,
           "line_end": AT_LINE_END, "word": AT_WORD, "not_word": AT_NOT_WORD}
LOOKS = {"ahead": LOOK_AHEAD, "not_ahead": LOOK_NOT_AHEAD, "behind": LOOK_BEHIND,
         "not_behind": LOOK_NOT_BEHIND}


cdef struct Text:
    const void* data
    int kind
    Py_ssize_t n


cdef struct Thread:
    int32_t pc
    Py_ssize_t start


cdef struct Work:
    # one search's scratch: two thread lists, the closure's stack, and the
    # mark of the list each instruction was last added to (gen)
    Thread* clist
    Thread* nlist
    int32_t* stack
    uint32_t* mark
    uint32_t gen
    int64_t steps


cdef inline bint in_class(const Program* p, int32_t k, uint32_t c) noexcept nogil:
    if c < 128:
        return (p.ascii[4 * k + (c >> 5)] >> (c & 31)) & 1
    cdef int32_t lo = p.class_start[k], hi = p.class_end[k], mid
    # the last range starting at or before c
    while lo < hi:
        mid = (lo + hi) >> 1
        if p.ranges[2 * mid] <= c:
            lo = mid + 1
        else:
            hi = mid
    return lo > p.class_start[k] and c <= p.ranges[2 * (lo - 1) + 1]


cdef inline bint is_word_at(const Program* p, int32_t word, const Text* t,
                            Py_ssize_t i) noexcept nogil:
    return 0 <= i < t.n and in_class(p, word, PyUnicode_READ(t.kind, t.data, i))


cdef bint holds(const Program* p, int32_t pc, const Text* t, Py_ssize_t pos) noexcept nogil:
    cdef int32_t a = p.a[pc], b = p.b[pc]
    cdef Py_ssize_t n = t.n
    if p.op[pc] == OP_LOOK:
        if b == LOOK_AHEAD or b == LOOK_NOT_AHEAD:
            return (pos < n and in_class(p, a, PyUnicode_READ(t.kind, t.data, pos))) \
                == (b == LOOK_AHEAD)
        return (pos > 0 and in_class(p, a, PyUnicode_READ(t.kind, t.data, pos - 1))) \
            == (b == LOOK_BEHIND)
    if a == AT_TEXT_START:
        return pos == 0
    if a == AT_TEXT_END:
        return pos == n
    if a == AT_END_NEWLINE:
        return pos == n or (pos == n - 1 and PyUnicode_READ(t.kind, t.data, pos) == 10)
    if a == AT_LINE_START:
        return pos == 0 or PyUnicode_READ(t.kind, t.data, pos - 1) == 10
    if a == AT_LINE_END:
        return pos == n or PyUnicode_READ(t.kind, t.data, pos) == 10
    return (is_word_at(p, b, t, pos - 1) != is_word_at(p, b, t, pos)) == (a == AT_WORD)


cdef void add_thread(const Program* p, Work* w, Thread* lst, Py_ssize_t* count, int32_t pc0,
                     const Text* t, Py_ssize_t pos, Py_ssize_t start) noexcept nogil:
    # The closure of pc0 at pos, depth first with the preferred branch first,
    # appended to lst in priority order: an instruction already in the list
    # was reached by a thread of higher priority, which wins.
    cdef int32_t sp = 0, pc, op
    w.stack[sp] = pc0
    sp += 1
    while sp:
        sp -= 1
        pc = w.stack[sp]
        while True:
            op = p.op[pc]
            w.steps += 1
            if op == OP_LOOP:
                # The loop's start was passed at this position: this
                # iteration took nothing, which ends the loop here, with this
                # path's priority, as in backtracking engines (a thread that
                # did take something finds the start done by one of higher
                # priority, and has only the exit left anyway). Never marked,
                # since each path reaching it decides for itself; it is
                # reached only from marked instructions, so the closure stays
                # linear.
                pc = p.b[pc] if w.mark[p.a[pc]] == w.gen else pc + 1
                continue
            if w.mark[pc] == w.gen:
                break
            w.mark[pc] = w.gen
            if op == OP_JMP:
                pc = p.a[pc]
            elif op == OP_SPLIT:
                w.stack[sp] = p.b[pc]
                sp += 1
                pc = p.a[pc]
            elif op == OP_ASSERT or op == OP_LOOK:
                if not holds(p, pc, t, pos):
                    break
                pc += 1
            elif (op == OP_RUN or op == OP_OPT) and not (
                    pos < t.n and in_class(p, p.a[pc], PyUnicode_READ(t.kind, t.data, pos))):
                pc += 1  # no character of the class here: nothing to take
            else:
                lst[count[0]].pc = pc
                lst[count[0]].start = start
                count[0] += 1
                break


cdef Py_ssize_t search(const Program* p, Work* w, const Text* t, Py_ssize_t pos0,
                       bint must_advance, Py_ssize_t* end) noexcept nogil:
    # The start of the leftmost-first match at or after pos0 (its end in
    # end), or -1. must_advance refuses an empty match at pos0, as re's
    # finditer does after an empty match.
    cdef Py_ssize_t found = -1, ccount = 0, ncount, i, pos
    cdef Thread* swap
    cdef int32_t pc, op
    cdef uint32_t c = 0
    w.gen += 1
    add_thread(p, w, w.clist, &ccount, 0, t, pos0, pos0)
    pos = pos0
    while True:
        if ccount == 0 and found >= 0:
            break
        w.gen += 1
        ncount = 0
        if pos < t.n:
            c = PyUnicode_READ(t.kind, t.data, pos)
        for i in range(ccount):
            pc = w.clist[i].pc
            op = p.op[pc]
            w.steps += 1
            if op == OP_MATCH:
                if must_advance and pos == pos0:
                    continue
                found = w.clist[i].start
                end[0] = pos
                break  # every thread after this one has lower priority
            if pos >= t.n:
                continue
            if op == OP_CHAR:
                if c == <uint32_t>p.a[pc]:
                    add_thread(p, w, w.nlist, &ncount, pc + 1, t, pos + 1, w.clist[i].start)
            elif op == OP_CLASS:
                if in_class(p, p.a[pc], c):
                    add_thread(p, w, w.nlist, &ncount, pc + 1, t, pos + 1, w.clist[i].start)
            elif op == OP_RUN:  # the closure put it here only on a character of its class
                add_thread(p, w, w.nlist, &ncount, pc, t, pos + 1, w.clist[i].start)
            else:  # OP_OPT, likewise
                add_thread(p, w, w.nlist, &ncount, pc + 1, t, pos + 1, w.clist[i].start)
        if pos >= t.n:
            break
        pos += 1
        if found < 0:
            add_thread(p, w, w.nlist, &ncount, 0, t, pos, pos)
        swap = w.clist
        w.clist = w.nlist
        w.nlist = swap
        ccount = ncount
    return found


cdef int work_init(const Program* p, Work* w) except -1:
    w.clist = <Thread*>malloc(p.size * sizeof(Thread))
    w.nlist = <Thread*>malloc(p.size * sizeof(Thread))
    w.stack = <int32_t*>malloc((p.size + 1) * sizeof(int32_t))
    w.mark = <uint32_t*>calloc(p.size, sizeof(uint32_t))
    w.gen = 0
    w.steps = 0
    if not (w.clist and w.nlist and w.stack and w.mark):
        work_free(w)
        raise MemoryError()
    return 0


cdef void work_free(Work* w) noexcept:
    free(w.clist)
    free(w.nlist)
    free(w.stack)
    free(w.mark)


cdef Py_ssize_t all_spans(const Program* p, Work* w, const Text* t, Py_ssize_t* out,
                          Py_ssize_t cap, Py_ssize_t* pos, bint* advance,
                          int64_t budget) noexcept nogil:
    # Up to cap matches as re.finditer finds them, from pos on; pos and
    # advance are left where the next call goes on. Returns how many, or -1
    # once the steps pass budget.
    cdef Py_ssize_t k = 0, s, e = 0
    while k < cap and pos[0] <= t.n:
        if w.steps > budget:
            return -1
        s = search(p, w, t, pos[0], advance[0], &e)
        if s < 0:
            pos[0] = t.n + 1
            break
        out[2 * k] = s
        out[2 * k + 1] = e
        k += 1
        pos[0] = e
        advance[0] = s == e
    return k


cdef class Match:
    """One match of a :class:`Regex`: the span of the whole match (``re.Match``'s
    methods for group 0; groups are not tracked).

    >>> from fasttok.shared.regex_translate import compile_onig
    >>> m = compile_onig(r"\\d+").search("ab12c")
    >>> m.span(), m.group(), m.start(), m.end()
    ((2, 4), '12', 2, 4)
    """

    cdef readonly str string
    cdef Py_ssize_t _start, _end

    def _whole(self, group):
        if group != 0:
            raise IndexError("fasttok's linear regex engine reports the whole match only "
                             "(group 0)")

    def start(self, group=0):
        self._whole(group)
        return self._start

    def end(self, group=0):
        self._whole(group)
        return self._end

    def span(self, group=0):
        self._whole(group)
        return (self._start, self._end)

    def group(self, group=0):
        self._whole(group)
        return self.string[self._start:self._end]

    def __repr__(self):
        return f"<fasttok Match span={(self._start, self._end)} match={self.group()!r}>"


cdef Match _match(str text, Py_ssize_t s, Py_ssize_t e):
    cdef Match m = Match.__new__(Match)
    m.string = text
    m._start = s
    m._end = e
    return m


# spans found per trip through nogil
cdef Py_ssize_t _BATCH = 256
# Each search is linear, but iterating them is not always: a thread of higher
# priority than the match found may run far past its end and fail there,
# and the next search covers that ground again (a+b|a on a run of a is
# quadratic, for every leftmost-first engine). A pass over all matches may
# therefore cost (_RESCANS x text + _FLOOR) x program size steps, a linear
# bound no real pattern comes near (one pass costs at most 2 x text x size);
# the floor lets a short text be rescanned as re would.
cdef int64_t _RESCANS = 64
cdef int64_t _FLOOR = 1 << 20


cdef class Regex:
    """A compiled pattern run in time linear in the text: the ``re.Pattern``
    methods fasttok's callers use (``search``, ``finditer``, ``findall``),
    with ``re``'s rules for where the next match may start. Build it with
    :func:`fasttok.shared.regex_translate.compile_generic` or ``compile_onig``.

    >>> from fasttok.shared.regex_translate import compile_generic
    >>> r = compile_generic(r"(a|aa)+$")
    >>> r.findall("aaaa b aaa"), r.count_steps("a" * 10) < r.count_steps("a" * 20)
    (['aaa'], True)
    """

    def __cinit__(self):
        memset(&self.prog, 0, sizeof(Program))

    def __init__(self, str pattern not None, list code not None, list classes not None):
        cdef Py_ssize_t i, j, k, nranges = 0
        cdef uint32_t lo, hi, c
        if not code:
            raise FasttokError(f"pattern {pattern!r}: empty program")
        self.pattern = pattern
        for ranges in classes:
            nranges += len(ranges)
        p = &self.prog
        p.size = len(code)
        p.op = <int32_t*>PyMem_Malloc(3 * p.size * sizeof(int32_t))
        p.ascii = <uint32_t*>PyMem_Malloc((4 * len(classes) + 1) * sizeof(uint32_t))
        p.class_start = <int32_t*>PyMem_Malloc((2 * len(classes) + 1) * sizeof(int32_t))
        p.ranges = <uint32_t*>PyMem_Malloc((2 * nranges + 1) * sizeof(uint32_t))
        if not (p.op and p.ascii and p.class_start and p.ranges):
            raise MemoryError()
        p.a = p.op + p.size
        p.b = p.a + p.size
        p.class_end = p.class_start + len(classes)
        for i, (op, a, b) in enumerate(code):
            if not (0 <= op <= OP_MATCH):
                raise ValueError(f"instruction {i}: unknown op {op}")
            if op in (OP_SPLIT, OP_JMP, OP_LOOP) and not (0 <= a < p.size and 0 <= b < p.size):
                raise ValueError(f"instruction {i}: jump out of the program")
            if op in (OP_CLASS, OP_RUN, OP_OPT, OP_LOOK) and not 0 <= a < len(classes):
                raise ValueError(f"instruction {i}: no class {a}")
            if op in (OP_OPT, OP_RUN, OP_CHAR, OP_CLASS, OP_ASSERT, OP_LOOK, OP_LOOP) \
                    and i + 1 >= p.size:
                raise ValueError(f"instruction {i}: falls off the program")
            p.op[i], p.a[i], p.b[i] = op, a, b
        k = 0
        for i, ranges in enumerate(classes):
            p.class_start[i] = k
            for j in range(4):
                p.ascii[4 * i + j] = 0
            for lo, hi in ranges:
                p.ranges[2 * k], p.ranges[2 * k + 1] = lo, hi
                k += 1
                c = lo
                while c <= hi and c < 128:
                    p.ascii[4 * i + (c >> 5)] |= 1u << (c & 31)
                    c += 1
            p.class_end[i] = k

    def __dealloc__(self):
        PyMem_Free(self.prog.op)
        PyMem_Free(self.prog.ascii)
        PyMem_Free(self.prog.class_start)
        PyMem_Free(self.prog.ranges)

    def __repr__(self):
        return f"fasttok.Regex({self.pattern!r})"

    def search(self, str text not None, Py_ssize_t pos=0):
        """The leftmost-first match at or after ``pos``, or ``None``
        (anchors and lookbehinds still see the text before ``pos``).

        >>> from fasttok.shared.regex_translate import compile_onig
        >>> compile_onig("^a").search("aba", 1) is None, compile_onig("a").search("aba", 1).span()
        (True, (2, 3))
        """
        cdef Text t
        cdef Work w
        cdef Py_ssize_t s, e = 0
        t.data, t.kind, t.n = PyUnicode_DATA(text), PyUnicode_KIND(text), PyUnicode_GET_LENGTH(text)
        if pos < 0:
            pos = 0
        if pos > t.n:
            return None
        work_init(&self.prog, &w)
        with nogil:
            s = search(&self.prog, &w, &t, pos, False, &e)
        work_free(&w)
        return None if s < 0 else _match(text, s, e)

    def spans(self, str text not None):
        """The ``(start, end)`` of every match, as ``re.finditer`` finds them.

        >>> from fasttok.shared.regex_translate import compile_generic
        >>> compile_generic("a*").spans("baa")
        [(0, 0), (1, 3), (3, 3)]
        """
        return self._spans(text, None)

    def finditer(self, str text not None):
        """An iterator of the matches, as ``re.finditer``'s.

        >>> from fasttok.shared.regex_translate import compile_generic
        >>> [m.group() for m in compile_generic(r"\\p{N}+").finditer("a12b3")]
        ['12', '3']
        """
        return iter([_match(text, s, e) for s, e in self._spans(text, None)])

    def findall(self, str text not None):
        """The text of every match (the whole match, whatever groups the pattern has).

        >>> from fasttok.shared.regex_translate import compile_generic
        >>> compile_generic(r"(a)b|c").findall("abcab")
        ['ab', 'c', 'ab']
        """
        return [text[s:e] for s, e in self._spans(text, None)]

    def count_steps(self, str text not None):
        """The VM steps of :meth:`spans` on ``text`` (instructions visited), the
        cost measure of the linearity tests.

        >>> from fasttok.shared.regex_translate import compile_generic
        >>> compile_generic("a").count_steps("")
        2
        """
        steps = [0]
        self._spans(text, steps)
        return steps[0]

    cdef list _spans(self, str text, list steps):
        cdef Text t
        cdef Work w
        cdef Py_ssize_t k, i, pos = 0
        cdef bint advance = False
        cdef Py_ssize_t buf[2 * 256]
        cdef list out = []
        cdef int64_t budget
        t.data, t.kind, t.n = PyUnicode_DATA(text), PyUnicode_KIND(text), PyUnicode_GET_LENGTH(text)
        budget = self.prog.size * (_RESCANS * <int64_t>t.n + _FLOOR)
        work_init(&self.prog, &w)
        try:
            while pos <= t.n:
                with nogil:
                    k = all_spans(&self.prog, &w, &t, buf, _BATCH, &pos, &advance, budget)
                if k < 0:
                    raise FasttokError(
                        f"pattern {self.pattern!r} makes the regex engine go over this text "
                        f"more than {_RESCANS} times (a search ahead of each match that fails "
                        "only far away, as a+b|a on a run of a); rewrite the pattern so the "
                        "alternatives do not run past each other")
                for i in range(k):
                    out.append((buf[2 * i], buf[2 * i + 1]))
        finally:
            work_free(&w)
        if steps is not None:
            steps[0] = w.steps
        return out


def ascii_fold_orbits():
    """Each ASCII lowercase letter with the code points that simple-case-fold
    together with it (Unicode 16.0), for ``(?i)``: ``k`` with ``K`` and the
    KELVIN SIGN, ``s`` with ``S`` and LONG S.

    >>> [hex(cp) for cp in ascii_fold_orbits()[ord("k")]]
    ['0x4b', '0x6b', '0x212a']
    """
    cdef uint32_t cp, lower
    orbits = {}
    for cp in range(0x110000):
        lower = ft_simple_fold_to_ascii_lower(cp)
        if lower:
            orbits.setdefault(lower, []).append(cp)
    return orbits


# Performance notes (2-core VM, CPU time; the first 3 MB of corpus/en.txt).
#
# * Against re on its translation of the same pattern, all matches as spans:
#   cl100k 0.46 s (re 1.27), o200k 0.49 s (3.00), tokenizers' GPT-2 regex
#   0.50 s (0.77), Whitespace's \w+|[^\w\s]+ 0.32 s (1.17), ' {2,}' 0.07 s
#   (0.07); the loop op that ends a loop on an empty iteration cost about a
#   third (cl100k 0.33 s before it). re loses on the big \p{..} classes, which it tests range by
#   range past the ASCII ones; here a class is an ASCII bitmap and a binary
#   search over its ranges.
# * A new start thread is seeded at every position only until a match is
#   recorded; tokenizer patterns record one after a character, so about one
#   closure of the whole program is paid per match, not per character.
# * Not done: a lazy DFA (states as sets of threads, cached transitions),
#   which would drop the per-character closure; the compiled scanners of
#   fasttok.pre_tokenizers._pretokenize already serve the known patterns, and
#   this engine is already faster than re on the others.
# * Rejected: a backtracker with a visited bitmap of (instruction, position)
#   (RE2's BitState): as fast in the common case, but its memory is text x
#   program bits per search.
