# The base class of every model (see _model_base.pyx), for the compiled
# models that derive from it: the required methods and the defaults are all
# Python-level (def), so there is nothing to declare but the class; it has
# no state.
cdef class ModelBase:
    pass


cpdef bint in_normal_form(str text, object stage) except -1
# in_normal_form of a stage whose quick check and stable_ranges are given
# (read once by a caller asking for many texts: each read of the quick
# check makes a bound method)
cdef bint in_form(str text, object is_normalized, bytes ranges) except -1
