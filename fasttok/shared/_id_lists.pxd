# Python lists of token ids, built without an int allocated per token.
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_GET_ITEM
from libc.stdint cimport UINT64_MAX, uint32_t, uint64_t

cdef extern from "Python.h":
    void PyObject_GC_UnTrack(object op)
    int PyGC_Disable()
    int PyGC_Enable()


cdef inline list ids_list(const uint32_t* ids, size_t n, tuple ints):
    # ints[i] is the int i for every id: the list only takes references, and,
    # holding only ints, it cannot be part of a reference cycle, so the cycle
    # collector is not told about it.
    cdef list out = PyList_New(n)
    cdef size_t i, n_ints = len(ints)
    cdef object item
    for i in range(n):
        if ids[i] >= n_ints:
            raise ValueError(f"internal error: token id {ids[i]} out of range")
        item = <object>PyTuple_GET_ITEM(ints, ids[i])
        Py_INCREF(item)
        PyList_SET_ITEM(out, i, item)
    PyObject_GC_UnTrack(out)
    return out


cdef inline list ids_lists(const uint32_t* ids, const uint64_t* ends, size_t n, tuple ints):
    # One ids_list for each of n texts whose ids stand one after another in
    # ids, text i's ending at ends[i]. An end of UINT64_MAX gives None in its
    # place (a text with no ids to give; the next one starts where the last
    # list ended). Thousands of new lists would set off collections that
    # walk every object of the program, none of which these lists can free,
    # so the cycle collector is paused while they are built.
    cdef list out
    cdef size_t i
    cdef uint64_t a = 0
    cdef int gc_was_on = PyGC_Disable()
    try:
        out = PyList_New(n)
        for i in range(n):
            if ends[i] == UINT64_MAX:
                one = None
            else:
                one = ids_list(ids + a, ends[i] - a, ints)
                a = ends[i]
            Py_INCREF(one)
            PyList_SET_ITEM(out, i, one)
        return out
    finally:
        if gc_was_on:
            PyGC_Enable()
