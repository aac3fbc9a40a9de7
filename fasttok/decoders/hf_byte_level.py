"""``tokenizers``' ByteLevel decoder: byte-level alphabet back to bytes, then UTF-8.

Every token spelled wholly in GPT-2's byte-level alphabet becomes its bytes; a
token with any other character (an added token stored raw) keeps its own
UTF-8 bytes. The bytes of all tokens are joined and decoded once, a broken
sequence becoming U+FFFD as Rust's ``String::from_utf8_lossy`` does (the
same maximal-subpart rule as Python's ``errors="replace"``).

The compiled map of :mod:`fasttok.shared._bytemap` turns the joined tokens
into bytes in one call, and only when some token is not byte-level text is
it called per token. (``str.translate`` to Latin-1 then ``encode`` was 9x
slower: 98 ms against 11 ms for the 325k characters of 55k llama3 tokens.)

>>> ByteLevel().decode(["Hello", "Ġwor", "ld", "Ċ"])
'Hello world\\n'
"""

from __future__ import annotations

from fasttok.decoders.joined import join_bytes
from fasttok.shared._bytemap import decode_byte_level
from fasttok.shared.byte_level_options import ByteLevelOptions

__all__ = ["ByteLevel"]


class ByteLevel(ByteLevelOptions):
    """The ByteLevel decoder: one string out of all the tokens.

    ``add_prefix_space``, ``trim_offsets`` and ``use_regex`` are kept for the
    JSON form; they change nothing in decoding.

    >>> ByteLevel().decode_chain(["Ã©", "Ġ<b>", "\\u00e9"])
    ['é <b>�']
    """

    def decode_chain(self, tokens: list) -> list:
        """All tokens as one string.

        >>> ByteLevel().decode_chain(["a", "Ġb"])
        ['a b']
        """
        try:
            data = decode_byte_level("".join(tokens))
        except ValueError:
            data = join_bytes(_token_bytes(t) for t in tokens)
        return [data.decode("utf-8", "replace")]

    def decode(self, tokens: list) -> str:
        """``"".join(self.decode_chain(tokens))``.

        >>> ByteLevel().decode(["ĠÐ¿", "ÑĢ"])
        ' пр'
        """
        return "".join(self.decode_chain(tokens))


def _token_bytes(token: str) -> bytes:
    try:
        return decode_byte_level(token)
    except ValueError:
        return token.encode("utf-8")
