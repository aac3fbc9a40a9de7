# Python lists of token ids, built without an int allocated per token.
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.ref cimport PyObject, Py_INCREF
from libc.stdint cimport UINT32_MAX, UINT64_MAX, uint32_t, uint64_t

cdef extern from "Python.h":
    """
    /* whether every one of ids[0:n] is below limit (no early exit: GCC
     * vectorizes it as a compare and an or, where an unsigned maximum
     * without SSE4.1 took ~2.75 instructions an id) */
    static inline int ft_ids_below(const uint32_t* ids, size_t n, uint32_t limit) {
        uint32_t over = 0;
        size_t i;
        for (i = 0; i < n; i++)
            over |= ids[i] >= limit;
        return over == 0;
    }
    /* out[i] = ints[ids[i]] for i < n, each taking a reference; every id
     * below len(ints) (ft_ids_below): no test an id. Raw pointers: a Cython
     * object variable made three reference count changes an id, where one
     * is needed. */
    static inline void ft_ids_items(PyObject** out, const uint32_t* ids, size_t n,
                                    PyObject* const* ints) {
        size_t i;
        for (i = 0; i < n; i++) {
            PyObject* item = ints[ids[i]];
            Py_INCREF(item);
            out[i] = item;
        }
    }
    /* a list of n items the caller sets at once, before any Python code
     * runs: its item array not zeroed first (PyList_New's is, ~8 bytes an
     * id written twice) */
    static inline PyObject* ft_list_unset(size_t n) {
        PyListObject* op = (PyListObject*)PyList_New(0);
        if (op == NULL || n == 0)
            return (PyObject*)op;
        op->ob_item = n > (size_t)PY_SSIZE_T_MAX / sizeof(PyObject*) ? NULL
                      : (PyObject**)PyMem_Malloc(n * sizeof(PyObject*));
        if (op->ob_item == NULL) {
            Py_DECREF(op);
            return PyErr_NoMemory();
        }
        op->allocated = (Py_ssize_t)n;
        Py_SET_SIZE(op, (Py_ssize_t)n);
        return (PyObject*)op;
    }
    #define ft_list_items(list) (((PyListObject*)(list))->ob_item)
    #define ft_tuple_items(tuple) (((PyTupleObject*)(tuple))->ob_item)
    """
    bint ft_ids_below(const uint32_t* ids, size_t n, uint32_t limit) noexcept
    void ft_ids_items(PyObject** out, const uint32_t* ids, size_t n, PyObject** ints) noexcept
    list ft_list_unset(size_t n)
    PyObject** ft_list_items(list items) noexcept
    PyObject** ft_tuple_items(tuple items) noexcept
    void PyObject_GC_UnTrack(object op)
    int PyGC_Disable()
    int PyGC_Enable()


cdef inline list ids_list(const uint32_t* ids, size_t n, tuple ints):
    # ints[i] is the int i for every id: the list only takes references, and,
    # holding only ints, it cannot be part of a reference cycle, so the cycle
    # collector is not told about it.
    cdef list out
    cdef size_t i
    if len(ints) <= UINT32_MAX and not ft_ids_below(ids, n, <uint32_t>len(ints)):
        i = 0
        while ids[i] < <size_t>len(ints):
            i += 1
        raise ValueError(f"internal error: token id {ids[i]} out of range")
    out = ft_list_unset(n)
    ft_ids_items(ft_list_items(out), ids, n, ft_tuple_items(ints))
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
