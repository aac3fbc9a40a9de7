# Python lists of token ids, built without an int allocated per token.
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_GET_ITEM
from libc.stdint cimport uint32_t

cdef extern from "Python.h":
    void PyObject_GC_UnTrack(object op)


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
