"""An encoder that text is appended to: each push encodes the new text and
the unstable tail, not the whole text again.

The appender keeps the final ids, the text after them (``pending``, whose
ids may still change: at least its last two words, or where it was cut at
an edge, its last :data:`~fasttok.inference.stability.MARGIN` characters
or more) and a short context: the last words before ``pending``, as
encoded alone, whose ids are the last final ids. A push encodes the context and the pending text (the new text
appended), checks that the result begins with the context's ids (so the
pending text's ids are the ones it has in the whole text), and asks
:func:`~fasttok.inference.stability.split_stable` where the ids stop being
final. When the check fails -- an encoding whose context does not encode
alone to the same ids -- the whole text pushed is the context, encoded
again (slower, as re-encoding is). ``flush`` gives the final ids and the
pending text's ids together: ``encode`` of everything pushed.

Cost: a push encodes the context and the pending text only when the new
text holds a place a cut may be (whitespace, or a pending text a few
hundred characters long, cut at an edge or inside a run:
:func:`~fasttok.inference.stability.has_place`), and after a push that
found no cut, once the pending text (if longer than a few words) has
doubled; else it keeps the text and encodes nothing, and the first of
``pending_ids``, ``count`` or ``flush`` after the push encodes it, which
remember the pending text's ids until the next push. Pushing ``n``
characters encodes ``O(n)`` characters (:attr:`Appender.encoded_chars`
counts them), and asking for the pending ids after every push costs an
encode of the pending text each time: a few hundred characters, except
where no cut is found (one unknown id for a whole run; an encoding whose
windows are not exact, ``windows=False``, is never cut; a Unigram
``tokenizer.json`` its compiled walk does not run is cut only where
whitespace is, ``inside_words=False``), where that pending text grows with
the text.

A Unigram model sums path scores from the text's (``tokenizer.json``: the
pre-token's) start and decides ties and near ties by how the sum rounds,
so a window encoded alone is not exact: there ``scored`` encodes the
pending text from the whole text's score where it starts and says where to
cut (some way before the end: where the best paths to the places there
converge, the window's Viterbi checked to give theirs, else a place no
lattice node crosses) and the score there; no context is kept. A run
whose best paths do not converge (one letter on a vocabulary with pieces
of many lengths of it: the first pieces change with the run's length)
is not cut.

>>> encode = lambda s: [ord(ch) for ch in s]          # one id a character
>>> a = Appender(encode)
>>> a.push("ab cd ef"), a.pending, a.flush()
([97, 98], ' cd ef', [97, 98, 32, 99, 100, 32, 101, 102])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Optional

from fasttok.inference.stability import has_place, split_stable

__all__ = ["Appender"]

# a pending text this short is encoded by every push that may cut it; a
# longer one, after a push that found no cut, once it has doubled
_SHORT = 64


class Appender:
    """Text appended piece by piece; ids out as they become final.

    ``encode`` is the encoding's encode with the caller's special-token
    arguments, ``refuse`` raises as it does on a text holding a disallowed
    special token (checked where a push encodes nothing), ``reach`` is
    the longest special token's length in characters, and ``windows``
    whether the ids of a window (the text from a place on, encoded alone)
    are, after its first ids, the whole text's; where they are not (ids
    that depend on the whole text before them: sentencepiece's float32
    Unigram scores), nothing is cut and the pending text is all of it,
    unless ``scored(text, state, cut=True)`` gives ``(ids, k, c,
    state_at_c)``: the ids of ``text`` encoded from ``state`` (the whole
    text's Viterbi where ``text`` starts; None at the start), of which
    ``ids[:k]`` are final and are ``text[:c]``'s (``c`` 0: no cut), as
    :meth:`~fasttok.formats.sentencepiece.SentencePieceModel.encode_scored`
    does (a cut leaving under ``reach`` characters before the trailing
    whitespace is not taken: a special token the text after it completes
    could start before it, or strip that whitespace, ``lstrip``). ``inside_words`` False: cuts only where whitespace is (a Unigram
    model whose ties inside a pre-token go by the score summed before them).

    >>> a = Appender(lambda s: [ord(ch) for ch in s])
    >>> a.push("x y "), a.push("z w"), a.ids, a.pending_ids(), a.count()
    ([], [120, 32, 121], [120, 32, 121], [32, 122, 32, 119], 7)
    """

    def __init__(self, encode: Callable[[str], list], *,
                 refuse: Callable[[str], None] = lambda text: None, reach: int = 1,
                 windows: bool = True, scored: Optional[Callable] = None,
                 inside_words: bool = True) -> None:
        self._given = encode
        self._windows = windows
        self._inside_words = inside_words
        self._scored = scored
        # scored's state where the pending text starts (None: the text's start)
        self._state = None
        self._refuse = refuse
        self._reach = max(reach, 1)
        self._final: list = []
        self._context = ""
        self._context_ids: list = []
        self._text: list = []  # everything pushed, for the fallback
        self.pending = ""
        # the pending text's ids as the last encode found them (None: not
        # encoded since the last push)
        self._tail: Optional[list] = []
        # the pending text's length when a push last found no cut (0: since
        # the last cut, none has)
        self._missed = 0
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
        if not text:
            return []
        if self._scored is not None:
            return self._push_scored(text)
        before = self.pending
        self.pending += text
        window = self._context + self.pending
        # a push looks for a cut where the new text brings a place, and
        # after one that found none, once the pending text has doubled
        looks = self._windows and len(self.pending) >= 2 * self._missed and has_place(
            window, len(window) - len(text) - 1, len(self._context), self._inside_words)
        self._text.append(text)
        try:
            if looks:
                window, ids = self._window_ids()
            else:  # the text is kept; a special token it completes is checked
                self._refuse(window[max(0, len(window) - len(text) - self._reach + 1):])
        except BaseException:  # a disallowed special token: the push did not happen
            self._text.pop()
            self.pending = before
            raise
        if not looks:
            self._tail = None
            return []
        found = split_stable(self._encode, window, ids, len(self._context), settled=True,
                             reach=self._reach, inside_words=self._inside_words)
        if found is None:
            return self._uncut(ids[len(self._context_ids):])
        cut, k, segment, segment_ids = found
        new = ids[len(self._context_ids):k]
        self._context, self._context_ids = segment, segment_ids
        return self._cut(new, ids[k:], window[cut:])

    def _push_scored(self, text: str) -> list:
        # the pending text encoded from the whole text's score where it
        # starts, cut where the encoding says the score is final
        start = len(self.pending)
        self._refuse(self.pending[max(0, start - self._reach + 1):] + text)
        self.pending += text
        if len(self.pending) < 2 * self._missed or not has_place(self.pending, start - 1, 0):
            self._tail = None
            return []
        self.encoded_chars += len(self.pending)
        ids, k, cut, state = self._scored(self.pending, self._state)
        if not cut or len(self.pending.rstrip()) - cut < self._reach:
            # (a special token the text after the cut may yet complete
            # could start before it, or take the whitespace before it in:
            # an added token's lstrip)
            return self._uncut(ids)
        self._state = state
        return self._cut(ids[:k], ids[k:], self.pending[cut:])

    def _uncut(self, tail: list) -> list:
        # a push that found no cut: the pending text's ids are tail, and it
        # is looked at again once it has doubled (if longer than a few words)
        self._tail = tail
        if len(self.pending) > _SHORT:
            self._missed = len(self.pending)
        return []

    def _cut(self, new: list, tail: list, pending: str) -> list:
        # a push that cut: new ids final, the pending text and its ids after them
        self._final += new
        self._tail = tail
        self.pending = pending
        self._missed = 0
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

    def _pending_ids(self) -> list:
        # the pending text's ids, encoded once after a push that did not
        if self._tail is None and self._scored is not None:
            self.encoded_chars += len(self.pending)
            self._tail = self._scored(self.pending, self._state, False)[0]
        elif self._tail is None:
            window, ids = self._window_ids()
            self._tail = ids[len(self._context_ids):]
        return self._tail

    def count(self) -> int:
        """How many ids everything pushed encodes to (final and pending)."""
        return len(self._final) + len(self._pending_ids())

    def pending_ids(self) -> list:
        """The ids of the pending text, as it encodes after the final ids
        (``ids + pending_ids()`` is :meth:`flush`, without copying ``ids``).

        >>> a = Appender(lambda s: [ord(ch) for ch in s])
        >>> a.push("a b c d"), a.pending_ids()
        ([97, 32, 98], [32, 99, 32, 100])
        """
        return list(self._pending_ids())

    def flush(self) -> list:
        """Every id of everything pushed: ``encode`` of the whole text."""
        return self._final + self._pending_ids()
