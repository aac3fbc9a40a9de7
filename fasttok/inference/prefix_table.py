"""The ids whose bytes start with given bytes, from one sorted table.

A logit mask for token healing needs every id whose bytes extend the
bytes backed off (and, to allow a shorter first step, every id that is a
prefix of them); tiktoken's ``encode_with_unstable`` needs the first.
Sorting the token bytes once makes each question a binary search plus the
ids that answer it: the tokens that start with a prefix are one run of the
sorted table, and the tokens that are a prefix of some bytes are found by
looking each of its prefixes up.

>>> table = PrefixTable([(b"a", 0), (b"ab", 1), (b"abc", 2), (b"b", 3)])
>>> table.extending(b"ab"), table.extending(b"ab", prefixes_too=True)
([1, 2], [0, 1, 2])
>>> table.has_longer(b"ab"), table.has_longer(b"abc")
(True, False)
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable

__all__ = ["PrefixTable"]


class PrefixTable:
    """Token bytes sorted once, with their ids, for prefix questions.

    ``pairs`` are ``(token_bytes, id)``; an empty token's bytes are left
    out (no text selects it). The ids are kept as 32-bit integers: a
    256k-token vocabulary's table is its bytes objects and 1 MiB.

    >>> PrefixTable([(b"x", 5), (b"", 6)]).extending(b"")
    [5]
    """

    def __init__(self, pairs: Iterable) -> None:
        entries = sorted((raw, i) for raw, i in pairs if raw)
        self._bytes = [raw for raw, _ in entries]
        self._ids = array("I", [i for _, i in entries])
        del entries
        self.longest = max(map(len, self._bytes), default=0)

    def _run(self, prefix: bytes) -> tuple:
        # the slice of the sorted table whose bytes start with prefix
        start = bisect.bisect_left(self._bytes, prefix)
        end = start
        stop = len(self._bytes)
        while end < stop and self._bytes[end].startswith(prefix):
            end += 1
        return start, end

    def extending(self, prefix: bytes, *, prefixes_too: bool = False) -> list:
        """The ids whose bytes start with ``prefix``, in byte order; with
        ``prefixes_too``, before them the ids whose bytes are a proper prefix
        of ``prefix`` (shortest first).

        >>> PrefixTable([(b"a", 0), (b"ab", 1), (b"b", 2)]).extending(b"ab", prefixes_too=True)
        [0, 1]
        """
        start, end = self._run(prefix)
        found = self._ids[start:end]
        found = found.tolist()
        if prefixes_too:
            shorter = []
            for n in range(1, len(prefix)):
                i = bisect.bisect_left(self._bytes, prefix[:n])
                while i < len(self._bytes) and self._bytes[i] == prefix[:n]:
                    shorter.append(self._ids[i])
                    i += 1
            found = shorter + found
        return found

    def bytes_extending(self, prefix: bytes) -> list:
        """The token bytes that start with ``prefix``, sorted (duplicates kept).

        >>> PrefixTable([(b"ab", 0), (b"a", 1)]).bytes_extending(b"a")
        [b'a', b'ab']
        """
        start, end = self._run(prefix)
        return self._bytes[start:end]

    def has_longer(self, prefix: bytes) -> bool:
        """Whether some token's bytes start with ``prefix`` and are longer.

        >>> PrefixTable([(b"ab", 0)]).has_longer(b"a"), PrefixTable([(b"ab", 0)]).has_longer(b"ab")
        (True, False)
        """
        i = bisect.bisect_right(self._bytes, prefix)
        return i < len(self._bytes) and self._bytes[i].startswith(prefix)
