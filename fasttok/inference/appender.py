"""An encoder that text is appended to: each push encodes the new text and
the unstable tail, not the whole text again.

The appender keeps the final ids, the text after them (``pending``, whose
ids may still change: at least its last two words) and a short context:
the last words before ``pending``, as encoded alone, whose ids are the last
final ids. A push encodes the context and the pending text (the new text
appended), checks that the result begins with the context's ids (so the
pending text's ids are the ones it has in the whole text), and asks
:func:`~fasttok.inference.stability.split_stable` where the ids stop being
final. When the check fails -- an encoding whose context does not encode
alone to the same ids -- the whole text pushed is the context, encoded
again (slower, as re-encoding is). ``flush`` gives the final ids and the
pending text's ids the last push found together: ``encode`` of everything
pushed.

>>> encode = lambda s: [ord(ch) for ch in s]          # one id a character
>>> a = Appender(encode)
>>> a.push("ab cd ef"), a.pending, a.flush()
([97, 98], ' cd ef', [97, 98, 32, 99, 100, 32, 101, 102])
"""

from __future__ import annotations

from collections.abc import Callable

from fasttok.inference.stability import split_stable

__all__ = ["Appender"]


class Appender:
    """Text appended piece by piece; ids out as they become final.

    ``encode`` is the encoding's encode with the caller's special-token
    arguments.

    >>> a = Appender(lambda s: [ord(ch) for ch in s])
    >>> a.push("x y "), a.push("z w"), a.ids, a.pending_ids(), a.count()
    ([], [120, 32, 121], [120, 32, 121], [32, 122, 32, 119], 7)
    """

    def __init__(self, encode: Callable[[str], list]) -> None:
        self._given = encode
        self._final: list = []
        self._context = ""
        self._context_ids: list = []
        self._text: list = []  # everything pushed, for the fallback
        self.pending = ""
        self._tail: list = []  # the pending text's ids, as the last push found them
        #: characters encoded so far by the pushes, their checks and the
        #: flushes: what appending costs, proportional to the text pushed
        self.encoded_chars = 0

    def _encode(self, text: str) -> list:
        self.encoded_chars += len(text)
        return self._given(text)

    @property
    def ids(self) -> list:
        """The final ids so far (a copy); :meth:`flush` adds the pending text's."""
        return list(self._final)

    def push(self, text: str) -> list:
        """Append ``text``; return the ids it made final (possibly none).
        A push that raises (a disallowed special token, as ``encode``
        raises) leaves the appender as it was."""
        if not isinstance(text, str):
            raise TypeError(f"push takes a str, not {type(text).__name__}")
        self._text.append(text)
        self.pending += text
        try:
            window, ids = self._window_ids()
        except BaseException:  # a disallowed special token: the push did not happen
            self._text.pop()
            self.pending = self.pending[:len(self.pending) - len(text)]
            raise
        found = split_stable(self._encode, window, ids, len(self._context), settled=True)
        if found is None:
            self._tail = ids[len(self._context_ids):]
            return []
        cut, k, segment, segment_ids = found
        new = ids[len(self._context_ids):k]
        self._final += new
        self._tail = ids[k:]
        self.pending = window[cut:]
        self._context, self._context_ids = segment, segment_ids
        return new

    def _window_ids(self) -> tuple:
        # the context and pending text, and their ids (the context's first)
        window = self._context + self.pending
        ids = self._encode(window)
        if ids[:len(self._context_ids)] == self._context_ids:
            return window, ids
        # the context's ids change after it: the whole text is the context
        whole = "".join(self._text)
        self._context = whole[:len(whole) - len(self.pending)]
        self._context_ids = list(self._final)
        return whole, self._encode(whole)

    def count(self) -> int:
        """How many ids everything pushed encodes to (final and pending)."""
        return len(self._final) + len(self._tail)

    def pending_ids(self) -> list:
        """The ids of the pending text, as it encodes after the final ids
        (``ids + pending_ids()`` is :meth:`flush`, without copying ``ids``).

        >>> a = Appender(lambda s: [ord(ch) for ch in s])
        >>> a.push("a b c d"), a.pending_ids()
        ([97, 32, 98], [32, 99, 32, 100])
        """
        return list(self._tail)

    def flush(self) -> list:
        """Every id of everything pushed: ``encode`` of the whole text."""
        return self._final + self._tail
