"""``tokenizers``' Metaspace decoder: the replacement character back to spaces.

Every replacement character becomes a space, except in the first token,
where unless ``prepend_scheme`` is ``"never"`` every one of them is dropped
(tokenizers drops them all there, not only the prepended one).

>>> Metaspace().decode(["▁Hey", "▁friend", "!"])
'Hey friend!'
"""

from __future__ import annotations

from fasttok.shared import DECODER_PREPEND_SCHEMES as PREPEND_SCHEMES

__all__ = ["Metaspace", "PREPEND_SCHEMES"]


class Metaspace:
    """The Metaspace decoder (``split`` only matters to the pre-tokenizer).

    >>> Metaspace(prepend_scheme="never").decode(["▁a", "▁b"])
    ' a b'
    """

    __slots__ = ("replacement", "prepend_scheme", "split")
    #: each token becomes one token from it alone and whether it is the first
    #: (see :mod:`fasttok.decoders.hf_starts`)
    token_local = True

    def __init__(self, replacement: str = "\u2581", prepend_scheme: str = "always",
                 split: bool = True) -> None:
        if len(replacement) != 1:
            raise ValueError(f"replacement must be one character, got {replacement!r}")
        if prepend_scheme not in PREPEND_SCHEMES:
            raise ValueError(f"prepend_scheme must be one of {PREPEND_SCHEMES}, got {prepend_scheme!r}")
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split = split

    def decode_chain(self, tokens: list) -> list:
        """Each token with its replacement characters made spaces (or dropped).

        >>> Metaspace().decode_chain(["▁▁a", "b▁"])
        ['a', 'b ']
        """
        r = self.replacement
        out = [t.replace(r, " ") for t in tokens]
        if out and self.prepend_scheme != "never":
            out[0] = tokens[0].replace(r, "")
        return out

    def decode(self, tokens: list) -> str:
        """``"".join(self.decode_chain(tokens))``.

        >>> Metaspace().decode(["▁a"])
        'a'
        """
        return "".join(self.decode_chain(tokens))

    def __repr__(self) -> str:
        return (f"Metaspace(replacement={self.replacement!r}, "
                f"prepend_scheme={self.prepend_scheme!r}, split={self.split})")
