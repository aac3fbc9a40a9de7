"""``tokenizers``' small decoders: Fuse, Strip and Sequence.

>>> Sequence([Strip(" ", 1, 0), Fuse()]).decode_chain([" a", " b"])
['ab']
"""

from __future__ import annotations

from fasttok.errors import ReferenceFailsError

__all__ = ["Fuse", "Strip", "Sequence"]


class Fuse:
    """All tokens joined into one.

    >>> Fuse().decode_chain(["a", "b"])
    ['ab']
    """

    __slots__ = ()

    def decode_chain(self, tokens: list) -> list:
        """``["".join(tokens)]``.

        >>> Fuse().decode_chain([])
        ['']
        """
        return ["".join(tokens)]

    def decode(self, tokens: list) -> str:
        """``"".join(tokens)``.

        >>> Fuse().decode(["a", "b"])
        'ab'
        """
        return "".join(tokens)

    def __repr__(self) -> str:
        return "Fuse()"


class Strip:
    """Up to ``start`` leading and ``stop`` trailing ``content`` characters off each token.

    tokenizers 0.23.3 panics where its right-hand loop walks past the start
    of a token (a token that is all ``content`` and shorter than ``stop``,
    an empty one with ``stop > 0``) or the two cuts cross; fasttok raises
    :class:`~fasttok.errors.ReferenceFailsError` there.

    >>> Strip("H", 1, 0).decode_chain(["Hey", " friend!", "HHH"])
    ['ey', ' friend!', 'HH']
    """

    __slots__ = ("content", "start", "stop")
    #: each token is stripped alone (see :mod:`fasttok.decoders.hf_starts`)
    token_local = True

    def __init__(self, content: str = " ", start: int = 0, stop: int = 0) -> None:
        if len(content) != 1:
            raise ValueError(f"content must be one character, got {content!r}")
        self.content = content
        self.start = start
        self.stop = stop

    def decode_chain(self, tokens: list) -> list:
        """Each token stripped.

        >>> Strip("y", 0, 1).decode_chain(["Hey", "yy"])
        ['He', 'y']
        """
        c, stop = self.content, self.stop
        out = []
        for token in tokens:
            n = len(token)
            lead = self.lead(token)
            trail = n - len(token.rstrip(c))
            if stop > trail == n:
                raise ReferenceFailsError(f"Strip of {token!r}: {stop} trailing characters "
                                          "reach past its start (tokenizers panics here)")
            end = n - min(trail, stop)
            if end < lead:
                raise ReferenceFailsError(f"Strip of {token!r}: the leading and trailing cuts "
                                          "cross (tokenizers panics here)")
            out.append(token[lead:end])
        return out

    def lead(self, token: str) -> int:
        """How many characters come off the start of ``token``.

        >>> Strip(" ", 2, 0).lead("   a"), Strip(" ", 2, 0).lead("a ")
        (2, 0)
        """
        return min(len(token) - len(token.lstrip(self.content)), self.start)

    def decode(self, tokens: list) -> str:
        """``"".join(self.decode_chain(tokens))``.

        >>> Strip(" ", 1, 0).decode([" a", "  b"])
        'a b'
        """
        return "".join(self.decode_chain(tokens))

    def __repr__(self) -> str:
        return f"Strip(content={self.content!r}, start={self.start}, stop={self.stop})"


class Sequence:
    """Decoders run one after the other, each on the tokens the last one made.

    >>> Sequence([]).decode(["a", "b"])
    'ab'
    """

    __slots__ = ("decoders",)

    def __init__(self, decoders: list) -> None:
        self.decoders = list(decoders)

    def decode_chain(self, tokens: list) -> list:
        """The tokens after every decoder's ``decode_chain``.

        >>> Sequence([Fuse(), Strip("a", 1, 1)]).decode_chain(["a", "b", "a"])
        ['b']
        """
        for decoder in self.decoders:
            tokens = decoder.decode_chain(tokens)
        return tokens

    def decode(self, tokens: list) -> str:
        """``"".join(self.decode_chain(tokens))``.

        >>> Sequence([Strip(" ", 1, 0)]).decode([" a", " b"])
        'ab'
        """
        return "".join(self.decode_chain(tokens))

    def __repr__(self) -> str:
        return f"Sequence({self.decoders!r})"
