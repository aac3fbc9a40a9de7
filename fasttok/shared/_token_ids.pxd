# Ids as the callers of decode give them: Python ints of any size.
from cpython.object cimport PyObject


cdef extern from "Python.h":
    long long PyLong_AsLongLongAndOverflow(object obj, int* overflow) except? -1


cdef inline long long token_id(object token) except? -2:
    # The id as a C integer, -1 for one too large or too negative for any
    # vocabulary: callers reject it as the unknown id it is (a KeyError,
    # like every other id that is not a token). A non-integer raises
    # TypeError, as int() would.
    cdef int overflow = 0
    cdef long long value = PyLong_AsLongLongAndOverflow(token, &overflow)
    return -1 if overflow else value
