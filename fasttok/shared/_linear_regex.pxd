# The linear-time regex engine (a Pike VM) of fasttok/shared/_linear_regex.pyx.
#
# A program is an array of instructions (op, a, b); character classes are
# sorted inclusive code point ranges with an ASCII bitmap in front. The
# Python side (fasttok.shared.regex_translate) parses a pattern into this
# form; the loops here run it over a str's code points without the GIL.

from libc.stdint cimport int32_t, int64_t, uint32_t


cdef enum Op:
    OP_CHAR         # a: the code point
    OP_CLASS        # a: the class
    OP_SPLIT        # a: the preferred next instruction, b: the other
    OP_JMP          # a: the next instruction
    OP_ASSERT       # a: an Anchor, b: the word class for the word boundaries
    OP_LOOK         # a: the class of the one character, b: a Look
    OP_RUN          # a: the class; a possessive run of it (X*+), however long
    OP_OPT          # a: the class; one character of it if there is one (X?+)
    OP_LOOP         # to b if instruction a was passed at this position, else on
    OP_MATCH


cdef enum Anchor:
    AT_TEXT_START   # \A, and ^ without multi-line
    AT_TEXT_END     # \z, and Rust's $ without multi-line
    AT_END_NEWLINE  # Oniguruma's \Z: the end, or before a final newline
    AT_LINE_START   # ^ of Oniguruma and of (?m)
    AT_LINE_END     # $ of Oniguruma and of (?m)
    AT_WORD         # \b
    AT_NOT_WORD     # \B


cdef enum Look:
    LOOK_AHEAD
    LOOK_NOT_AHEAD
    LOOK_BEHIND
    LOOK_NOT_BEHIND


cdef struct Program:
    int32_t size          # instructions
    int32_t* op
    int32_t* a
    int32_t* b
    uint32_t* ascii       # 4 words per class: which ASCII characters it holds
    int32_t* class_start  # per class: its first range in ranges
    int32_t* class_end    # per class: one past its last range
    uint32_t* ranges      # (first, last) pairs, sorted, disjoint


cdef class Regex:
    cdef Program prog
    cdef readonly str pattern

    cdef list _spans(self, str text, list steps)
