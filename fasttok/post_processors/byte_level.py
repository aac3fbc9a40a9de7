"""ByteLevel as a post-processor: offsets trimmed of the spaces a token carries.

A byte-level token spells a space as ``Ġ``; with ``trim_offsets`` the span of a
token that starts or ends with spaces (``Ġ`` or any Unicode ``White_Space``
character, as Rust's ``char::is_whitespace``) is narrowed by that many
characters. The one space ``add_prefix_space`` put before the first token is
kept (more than one means the text had them). The counts are characters of
the token, each one byte of the text in the byte-level alphabet.

>>> from fasttok.post_processors.encoding import Encoding
>>> e = Encoding([1, 2], ["Ġhi", "ĠthereĠ"], [(0, 3), (3, 10)], [0, 1])
>>> trim_offsets(e, add_prefix_space=True); e.offsets
[(0, 3), (4, 9)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fasttok.post_processors.processor import PostProcessor
from fasttok.shared.byte_level_options import ByteLevelOptions

if TYPE_CHECKING:
    from fasttok.post_processors.encoding import Encoding

__all__ = ["ByteLevel", "trim_offsets"]

# Rust's char::is_whitespace (the Unicode White_Space property) and the
# byte-level alphabet's space
_SPACES = frozenset("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\u0120")


def _leading(token: str) -> int:
    n = 0
    for ch in token:
        if ch not in _SPACES:
            break
        n += 1
    return n


def trim_offsets(encoding: Encoding, add_prefix_space: bool) -> None:
    """Narrow each token's offsets past its leading and trailing spaces
    (``tokenizers``' ``process_offsets``); ``encoding.offsets`` becomes a new list.

    >>> from fasttok.post_processors.encoding import Encoding
    >>> e = Encoding([1], ["ĠĠx"], [(0, 3)], [0]); trim_offsets(e, True); e.offsets
    [(2, 3)]
    """
    offsets = encoding.offsets[:]
    for i, token in enumerate(encoding.tokens):
        if not token or (token[0] not in _SPACES and token[-1] not in _SPACES):
            continue
        lead = _leading(token)
        trail = _leading(token[::-1])
        start, end = offsets[i]
        if lead:
            if (i == 0 or start == 0) and add_prefix_space and lead == 1:
                lead = 0
            start = min(start + lead, end)
        if trail and end >= trail:
            end = max(end - trail, start)
        offsets[i] = (start, end)
    encoding.offsets = offsets


class ByteLevel(ByteLevelOptions, PostProcessor):
    """``tokenizers.processors.ByteLevel``: trims offsets (``trim_offsets``), adds no token.

    >>> from fasttok.post_processors.encoding import Encoding
    >>> ByteLevel(add_prefix_space=False).process(Encoding([1], ["Ġa"], [(1, 3)], [0])).offsets
    [(2, 3)]
    """

    @property
    def keeps_tokens(self) -> bool:
        """Whether the offsets stay as they are (no ``trim_offsets``).

        >>> ByteLevel(trim_offsets=False).keeps_tokens
        True
        """
        return not self.trim_offsets

    def process_encodings(self, encodings: list, add_special_tokens: bool) -> list:
        """Trim the offsets of each encoding and its overflowing pieces; number the sequences.

        >>> ByteLevel().process_encodings([], True)
        []
        """
        for i, e in enumerate(encodings):
            if self.trim_offsets:
                trim_offsets(e, self.add_prefix_space)
                for piece in e.overflowing:
                    trim_offsets(piece, self.add_prefix_space)
            e.set_sequence_id(i)
        return encodings
