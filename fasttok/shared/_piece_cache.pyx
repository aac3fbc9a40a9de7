"""The pre-token cache's setting and per-thread tables (``ft_piece_cache.h``).

One process-wide setting, read once from ``FASTTOK_PRETOKEN_CACHE`` (a
number of entries) when this module is first imported and changed by
:func:`set_entries` (``fasttok.set_pretoken_cache``). Each thread that
encodes gets its own table of that many 64-byte entries, freed when the
thread ends; a new setting empties every thread's table at its next call.

>>> previous = set_entries(1024)
>>> entries(), set_entries(previous) == 1024
(1024, True)
"""

import os

from libc.stdint cimport uint64_t

from fasttok.errors import FasttokError

cdef extern from *:
    """
    #define FT_PIECE_CACHE_STATE 1
    #include "ft_piece_cache.h"
    """
    ft_pc_table* ft_pc_thread() nogil
    uint64_t ft_pc_new_owner() nogil
    void ft_pc_set_entries(unsigned long long entries) nogil
    unsigned long long ft_pc_entries() nogil
    size_t ft_pc_used(const ft_pc_table* t) nogil
    size_t ft_pc_long_used(const ft_pc_table* t) nogil
    size_t ft_pc_token_used(const ft_pc_table* t) nogil


cdef ft_pc_table* piece_cache_table() noexcept nogil:
    return ft_pc_thread()


cdef uint64_t piece_cache_owner() noexcept nogil:
    return ft_pc_new_owner()


# far more than any cache can use: 2**32 entries are 256 GiB a thread
_MAX_ENTRIES = 1 << 32


def set_entries(entries):
    """Sets the entries of every thread's pre-token cache (rounded down to a
    power of two; 0 turns it off) and returns the previous setting.

    >>> previous = set_entries(3)
    >>> entries(), set_entries(previous)
    (2, 2)
    """
    entries = int(entries)
    if not 0 <= entries <= _MAX_ENTRIES:
        raise FasttokError(f"the pre-token cache takes 0 to {_MAX_ENTRIES} entries, not "
                           f"{entries}: give 0 to turn it off")
    previous = ft_pc_entries()
    ft_pc_set_entries(entries)
    return previous


def entries():
    """The entries each thread's pre-token cache gets (0: off).

    >>> entries() >= 0
    True
    """
    return ft_pc_entries()


def thread_info():
    """The calling thread's cache as it is now: ``{"entries": ..., "used":
    ..., "long_entries": ..., "long_used": ..., "token_entries": ...,
    "token_used": ..., "bytes": ...}`` (bytes: the 64-byte entries, the
    1024-byte long entries and the 32-byte token entries it holds memory
    for; the long ones are allocated when the first piece too long for an
    entry is kept, the token ones when a byte-level model first keeps a
    piece that is one of its tokens), plus the largest piece a 64-byte entry
    can hold (``"payload"``: its key bytes rounded up to 4, plus 4 per id).

    >>> info = thread_info()
    >>> info["bytes"] == (64 * info["entries"] + 1024 * info["long_entries"]
    ...                   + 32 * info["token_entries"]), info["payload"]
    (True, 48)
    """
    cdef ft_pc_table* t = ft_pc_thread()
    n = t.n_entries if t != NULL else 0
    longs = ft_pc_long_slots(n) if t != NULL and t.longs != NULL else 0
    tokens = ft_pc_token_slots(n) if t != NULL and t.token_block != NULL else 0
    return {"entries": n, "used": ft_pc_used(t), "long_entries": longs,
            "long_used": ft_pc_long_used(t), "token_entries": tokens,
            "token_used": ft_pc_token_used(t),
            "bytes": n * FT_PC_ENTRY_BYTES + longs * FT_PC_LONG_BYTES + tokens * FT_PC_TOKEN_BYTES,
            "payload": FT_PC_PAYLOAD}


def _read_environment():
    value = os.environ.get("FASTTOK_PRETOKEN_CACHE")
    if value is None or not value.strip():
        return
    try:
        wanted = int(value)
    except ValueError:
        raise FasttokError(f"FASTTOK_PRETOKEN_CACHE={value!r}: give a number of entries "
                           f"(0 turns the pre-token cache off)") from None
    set_entries(wanted)


_read_environment()
