"""The lists of a walked :class:`~fasttok.post_processors.encoding.Encoding`,
each made from a compiled walk's arrays in one C loop (the user reads a
field of every encoding of a batch: a Python-level ``zip`` or ``map`` there
cost as much as the walk itself).

>>> from array import array
>>> offset_pairs(array("i", [0, 2, 3, 5]))
[(0, 2), (3, 5)]
>>> token_strings(["a", "b", "c"], array("I", [2, 0]))
['c', 'a']
"""

from cpython cimport array


def offset_pairs(array.array offsets) -> list:
    """``[(start, end), ...]`` of a flat ``array('i')`` of starts and ends."""
    cdef int* at = offsets.data.as_ints
    cdef Py_ssize_t i, n = len(offsets) // 2
    return [(at[2 * i], at[2 * i + 1]) for i in range(n)]


def token_strings(list strings, array.array ids) -> list:
    """``[strings[id] for id in ids]`` of an ``array('I')``."""
    cdef unsigned int* at = ids.data.as_uints
    cdef Py_ssize_t i, n = len(ids), size = len(strings)
    for i in range(n):
        if at[i] >= <size_t>size:
            raise IndexError(f"token id {at[i]} has no string")
    return [strings[at[i]] for i in range(n)]
