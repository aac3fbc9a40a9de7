# Python lists of token ids, built without an int allocated per token.
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.ref cimport PyObject, Py_INCREF
from libc.stdint cimport UINT64_MAX, uint32_t, uint64_t

cdef extern from "Python.h":
    """
    /* out[i] = ints[ids[i]] for i < n, each taking a reference, up to the
     * first id not below n_ints: the places written (n, or that id's; the
     * rest left NULL). Raw pointers: a Cython object variable made three
     * reference count changes an id, where one is needed. */
    static inline size_t ft_ids_items(PyObject** out, const uint32_t* ids, size_t n,
                                      PyObject* const* ints, size_t n_ints) {
        size_t i;
        for (i = 0; i < n; i++) {
            PyObject* item;
            if (ids[i] >= n_ints)
                return i;
            item = ints[ids[i]];
            Py_INCREF(item);
            out[i] = item;
        }
        return n;
    }
    #define ft_list_items(list) (((PyListObject*)(list))->ob_item)
    #define ft_tuple_items(tuple) (((PyTupleObject*)(tuple))->ob_item)
    """
    size_t ft_ids_items(PyObject** out, const uint32_t* ids, size_t n, PyObject** ints,
                        size_t n_ints) noexcept
    PyObject** ft_list_items(list items) noexcept
    PyObject** ft_tuple_items(tuple items) noexcept
    void PyObject_GC_UnTrack(object op)
    int PyGC_Disable()
    int PyGC_Enable()


cdef inline list ids_list(const uint32_t* ids, size_t n, tuple ints):
    # ints[i] is the int i for every id: the list only takes references, and,
    # holding only ints, it cannot be part of a reference cycle, so the cycle
    # collector is not told about it.
    cdef list out = PyList_New(n)
    cdef size_t i = ft_ids_items(ft_list_items(out), ids, n, ft_tuple_items(ints), len(ints))
    if i < n:
        raise ValueError(f"internal error: token id {ids[i]} out of range")
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
