# What a compiled model offers Encoding.encode_files so that documents go
# from a file's UTF-8 to ids without a Python str each: a DocumentEncoder,
# handed over in a PyCapsule named DOCUMENT_ENCODER by the model's
# document_encoder() method (a model without it gets str documents). The
# capsule's context is the functions' first argument, the compiled model
# (the capsule holds a reference to it; whoever holds the capsule may call
# them from any thread, without the GIL).
from libc.stdint cimport uint8_t, uint32_t, uint64_t

from fasttok.shared._piece_cache cimport ft_pc_table

# Encodes n_docs documents, document i being data[bounds[2i]:bounds[2i+1]]
# (valid UTF-8), as the model's batch encodes the same text as str:
# appends their ids to the growable *ids (*n_ids used of *cap; the caller
# frees it with free()) and sets ends[i] to *n_ids after document i.
# allowed: the special tokens matched as specials (NULL: none), as in the
# model's batch calls. pieces: the pre-token cache table the run asks and
# fills, one only this thread uses meanwhile (NULL: the thread's own).
ctypedef int (*EncodeDocuments)(void* model, const uint8_t* data, const uint64_t* bounds,
                                size_t n_docs, const uint8_t* allowed, uint32_t** ids,
                                size_t* n_ids, size_t* cap, uint64_t* ends,
                                ft_pc_table* pieces) except -1 nogil

# The first special token that mask selects in data[:size], as the model's
# find_special(text, mask) gives it for that text: its index, or -1.
ctypedef Py_ssize_t (*FindSpecial)(void* model, const uint8_t* data, size_t size,
                                   const uint8_t* mask) noexcept nogil

cdef struct DocumentEncoder:
    EncodeDocuments encode
    FindSpecial find_special

# the capsule's name
cdef extern from *:
    """
    #define FT_DOCUMENT_ENCODER "fasttok.document_encoder"
    """
    const char* DOCUMENT_ENCODER "FT_DOCUMENT_ENCODER"
