"""Unicode 16.0.0 character properties, from the generated ``unicode_tables.h``.

The tables are pinned to UCD 16.0.0 because that is what tiktoken 0.14.0's
regex engine uses; the interpreter's ``unicodedata`` (14.0 on Python 3.11)
would put new letters in the wrong class and split text differently. The data
and its provenance live in the header; ``tools/gen_unicode_tables.py``
regenerates it.

Compiled code cimports the C functions from ``_unicode.pxd``. This module
gives Python the same answers, plus :func:`code_point_ranges`, which the
generic regex path uses to spell ``\\p{L}`` and friends as ``re`` character
classes. Ranges are found by sweeping the header's stored blocks (a tenth of
a millisecond) and cached per spec; precomputing them into the header was
rejected because it would double the header for a one-off cost.
"""

from libc.stdint cimport uint8_t, uint32_t
from libc.string cimport memset

cdef extern from "Python.h":
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    int PyUnicode_KIND(object text)
    void* PyUnicode_DATA(object text)
    void PyUnicode_WRITE(int kind, void* data, Py_ssize_t index, Py_UCS4 value) nogil

UNICODE_VERSION = FT_UNICODE_VERSION.decode("ascii")

cdef uint32_t _MAX_CP = 0x10FFFF

# Names indexed by FT_GC_* code, built from the enum so the order cannot drift.
_GC_NAMES = [None] * 32
for _code, _name in (
    (FT_GC_Cn, "Cn"), (FT_GC_Lu, "Lu"), (FT_GC_Ll, "Ll"), (FT_GC_Lt, "Lt"),
    (FT_GC_Lm, "Lm"), (FT_GC_Lo, "Lo"), (FT_GC_Mn, "Mn"), (FT_GC_Mc, "Mc"),
    (FT_GC_Me, "Me"), (FT_GC_Nd, "Nd"), (FT_GC_Nl, "Nl"), (FT_GC_No, "No"),
    (FT_GC_Pc, "Pc"), (FT_GC_Pd, "Pd"), (FT_GC_Ps, "Ps"), (FT_GC_Pe, "Pe"),
    (FT_GC_Pi, "Pi"), (FT_GC_Pf, "Pf"), (FT_GC_Po, "Po"), (FT_GC_Sm, "Sm"),
    (FT_GC_Sc, "Sc"), (FT_GC_Sk, "Sk"), (FT_GC_So, "So"), (FT_GC_Zs, "Zs"),
    (FT_GC_Zl, "Zl"), (FT_GC_Zp, "Zp"), (FT_GC_Cc, "Cc"), (FT_GC_Cf, "Cf"),
    (FT_GC_Cs, "Cs"), (FT_GC_Co, "Co"),
):
    _GC_NAMES[_code] = _name
_GC_NAMES = tuple(_GC_NAMES)

# spec -> bit mask over FT_GC_* codes; White_Space is handled separately.
_SPEC_MASKS = {}
for _code, _name in enumerate(_GC_NAMES):
    if _name is not None:
        _SPEC_MASKS[_name] = 1 << _code
        _SPEC_MASKS[_name[0]] = _SPEC_MASKS.get(_name[0], 0) | (1 << _code)
del _code, _name

_WHITE_SPACE = "White_Space"
_ACCEPTED = (
    ", ".join(n for n in _GC_NAMES if n is not None)
    + "; L, N, M, P, S, Z, C; White_Space"
)
_RANGES_CACHE = {}


cdef inline uint32_t _check_cp(long long cp) except? 0:
    if cp < 0 or cp > _MAX_CP:
        raise ValueError(f"code point {cp} is outside 0..0x10FFFF")
    return <uint32_t>cp


def general_category(long long cp):
    """The two-letter general category of a code point, as of Unicode 16.0.

    Unassigned code points are ``'Cn'``, surrogates ``'Cs'``.

    >>> general_category(ord("A")), general_category(0x0663), general_category(0x10940)
    ('Lu', 'Nd', 'Cn')
    """
    return _GC_NAMES[ft_general_category(_check_cp(cp))]


def is_white_space(long long cp):
    """Whether a code point has the White_Space property (what regex ``\\s`` matches).

    >>> is_white_space(0x3000), is_white_space(0x200B)
    (True, False)
    """
    return ft_is_white_space(_check_cp(cp)) != 0


def class_bits(long long cp):
    """The scanner class bits of a code point (``FT_L`` = 0x001, ... in the header).

    >>> hex(class_bits(ord("A")))  # FT_L | FT_LU_LT
    '0x11'
    """
    return ft_class(_check_cp(cp))


def simple_fold_to_ascii_lower(long long cp):
    """The ASCII lowercase letter (as a code point) that ``cp`` simple-case-folds with, or 0.

    >>> chr(simple_fold_to_ascii_lower(0x212A))  # KELVIN SIGN
    'k'
    >>> simple_fold_to_ascii_lower(ord("é"))
    0
    """
    return ft_simple_fold_to_ascii_lower(_check_cp(cp))


# The header's two-stage table: block cp >> 8 of the code points is the
# 256 property bytes at ft_ucd_stage2[ft_ucd_stage1[cp >> 8] << 8]; blocks
# with the same bytes are stored once (163 for 4,352 blocks).
cdef extern from "unicode_tables.h" nogil:
    const uint8_t* ft_ucd_stage1
    const uint8_t* ft_ucd_stage2


cdef enum:
    _NONE = 1
    _SOME = 2
    _ALL = 3


cdef inline bint _hit(uint8_t byte, uint32_t gc_mask, bint white_space) noexcept nogil:
    # whether a property byte (ft__ucd_byte's) is one of a sweep's
    return ((gc_mask >> (byte & 0x1F)) & 1) or (white_space and (byte >> 5) & 1)


cdef list _scan(uint32_t gc_mask, bint white_space):
    # The ranges of the code points whose general category is in gc_mask,
    # or (white_space) that are White_Space. Each stored block is looked at
    # once, as none, all or some of it matching; only blocks of the last
    # kind are walked code point by code point (all 1.1 million code points
    # one by one took 1.2 ms a sweep).
    cdef list ranges = []
    cdef uint8_t kind[256]   # per stored block: 0 not seen yet, NONE, SOME or ALL
    cdef const uint8_t* bytes_
    cdef uint32_t block, k, hits
    cdef long long start = -1
    memset(kind, 0, sizeof(kind))
    for block in range((_MAX_CP + 1) >> 8):
        bytes_ = ft_ucd_stage2 + (<uint32_t>ft_ucd_stage1[block] << 8)
        if kind[ft_ucd_stage1[block]] == 0:
            hits = 0
            for k in range(256):
                hits += _hit(bytes_[k], gc_mask, white_space)
            kind[ft_ucd_stage1[block]] = _NONE if hits == 0 else _ALL if hits == 256 else _SOME
        if kind[ft_ucd_stage1[block]] == _ALL:
            if start < 0:
                start = block << 8
        elif kind[ft_ucd_stage1[block]] == _NONE:
            if start >= 0:
                ranges.append((start, (block << 8) - 1))
                start = -1
        else:
            for k in range(256):
                if _hit(bytes_[k], gc_mask, white_space):
                    if start < 0:
                        start = (block << 8) | k
                elif start >= 0:
                    ranges.append((start, ((block << 8) | k) - 1))
                    start = -1
    if start >= 0:
        ranges.append((start, _MAX_CP))
    return ranges


def code_point_ranges(str spec not None):
    """Sorted inclusive ``(first, last)`` ranges of the code points matching ``spec``.

    ``spec`` is a general category (``"Lu"``), a major class (``"L"``, ``"N"``,
    ``"M"``, ``"P"``, ``"S"``, ``"Z"``, ``"C"``; ``"C"`` includes unassigned
    code points) or ``"White_Space"``. Raises ``ValueError`` for anything else.

    >>> code_point_ranges("Zl"), code_point_ranges("White_Space")[:2]
    ([(8232, 8232)], [(9, 13), (32, 32)])
    """
    cached = _RANGES_CACHE.get(spec)
    if cached is None:
        if spec == _WHITE_SPACE:
            cached = tuple(_scan(0, True))
        else:
            mask = _SPEC_MASKS.get(spec)
            if mask is None:
                raise ValueError(
                    f"unknown Unicode property {spec!r}; accepted: {_ACCEPTED}"
                )
            cached = tuple(_scan(mask, False))
        _RANGES_CACHE[spec] = cached
    return list(cached)


def code_points(*specs, str leave_out=""):
    """The code points matching any of ``specs`` (as :func:`code_point_ranges`
    takes them), as one ``str`` in code point order, less the characters of
    ``leave_out``: one sweep of the tables for all of them, where a
    :func:`code_point_ranges` call is one each.

    >>> code_points("Zl", "Zp"), code_points("Zl", "Zp", leave_out="\u2028")
    ('\u2028\u2029', '\u2029')
    """
    cdef uint32_t mask = 0, lo, hi, cp, next_skip
    cdef bint white_space = False
    cdef list ranges, skip
    cdef Py_ssize_t n = 0, at = 0, j = 0
    cdef int kind
    cdef void* data
    for spec in specs:
        if spec == _WHITE_SPACE:
            white_space = True
        elif spec in _SPEC_MASKS:
            mask |= _SPEC_MASKS[spec]
        else:
            raise ValueError(f"unknown Unicode property {spec!r}; accepted: {_ACCEPTED}")
    # written into one str, the characters left out passed over in the same
    # sweep (a str a range, joined, was 3.6M of the 5.9M instructions of the
    # cluster classes' three calls; a Python test of each character, or
    # str.translate, after it was as much again)
    ranges = _scan(mask, white_space)
    skip = sorted(set(map(ord, leave_out)))
    next_skip = skip[0] if skip else 0xFFFFFFFF
    for lo, hi in ranges:
        n += hi - lo + 1
    out = PyUnicode_New(n, ranges[len(ranges) - 1][1] if ranges else 0)
    kind = PyUnicode_KIND(out)
    data = PyUnicode_DATA(out)
    for lo, hi in ranges:
        for cp in range(lo, hi + 1):
            while cp > next_skip:
                j += 1
                next_skip = skip[j] if j < len(skip) else 0xFFFFFFFF
            if cp != next_skip:
                PyUnicode_WRITE(kind, data, at, cp)
                at += 1
    # a slice makes the str as small as its characters let it be
    return out if at == n else out[:at]
