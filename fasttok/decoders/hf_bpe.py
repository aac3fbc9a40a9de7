"""``tokenizers``' BPEDecoder: the end-of-word suffix back to a space.

>>> BPEDecoder().decode(["hel", "lo</w>", "world</w>"])
'hello world'
"""

from __future__ import annotations

__all__ = ["BPEDecoder"]


class BPEDecoder:
    """Every ``suffix`` becomes a space, in the last token nothing.

    >>> BPEDecoder("@").decode_chain(["a@", "b@"])
    ['a ', 'b']
    """

    __slots__ = ("suffix",)

    def __init__(self, suffix: str = "</w>") -> None:
        self.suffix = suffix

    def decode_chain(self, tokens: list) -> list:
        """Each token with its suffixes replaced.

        >>> BPEDecoder().decode_chain([])
        []
        """
        if not tokens:
            return []
        suffix = self.suffix
        out = [t.replace(suffix, " ") for t in tokens[:-1]]
        out.append(tokens[-1].replace(suffix, ""))
        return out

    def decode(self, tokens: list) -> str:
        """``"".join(self.decode_chain(tokens))``.

        >>> BPEDecoder().decode(["a</w>"])
        'a'
        """
        return "".join(self.decode_chain(tokens))

    def __repr__(self) -> str:
        return f"BPEDecoder(suffix={self.suffix!r})"
