"""``tokenizers``' ByteFallback decoder: runs of ``<0xXX>`` tokens back to text.

A run of byte tokens that is valid UTF-8 becomes one token of its text; an
invalid run becomes one U+FFFD per byte (the whole run, not only its broken
part, as tokenizers does). A byte token is six bytes long, ``<0x``, two
characters Rust's ``u8::from_str_radix(_, 16)`` accepts (hex digits of either
case, or ``+`` and one digit), ``>``: every such spelling is a key of one
table, so recognising a token is one dict look-up.

>>> ByteFallback().decode(["<0xE5>", "<0x8F>", "<0xAB>", "a", "<0xE5>", "<0x8F>"])
'叫a��'
"""

from __future__ import annotations

__all__ = ["ByteFallback"]


def _spellings() -> dict:
    digits = {v: {f"{v:x}", f"{v:X}"} for v in range(16)}
    table = {}
    for byte in range(256):
        for hi in digits[byte >> 4]:
            for lo in digits[byte & 15]:
                table[f"<0x{hi}{lo}>"] = byte
        if byte < 16:
            for lo in digits[byte]:
                table[f"<0x+{lo}>"] = byte
    return table


_BYTE_TOKENS = _spellings()


class ByteFallback:
    """The ByteFallback decoder.

    >>> ByteFallback().decode_chain(["<0x61>", "<0x62>", "c", "<0xZZ>"])
    ['ab', 'c', '<0xZZ>']
    """

    __slots__ = ()

    def decode_chain(self, tokens: list) -> list:
        """Tokens with each run of byte tokens decoded.

        >>> ByteFallback().decode_chain(["<0xC3>", "x"])
        ['�', 'x']
        """
        out = []
        run = bytearray()
        byte_of = _BYTE_TOKENS.get
        for token in tokens:
            byte = byte_of(token)
            if byte is not None:
                run.append(byte)
                continue
            if run:
                out += self.run_tokens(run)
                run.clear()
            out.append(token)
        if run:
            out += self.run_tokens(run)
        return out

    @staticmethod
    def byte_of(token: str):
        """The byte a byte token stands for, or ``None`` for any other token.

        >>> ByteFallback.byte_of("<0x+A>"), ByteFallback.byte_of("<0x41>x")
        (10, None)
        """
        return _BYTE_TOKENS.get(token)

    @staticmethod
    def run_tokens(run: bytes) -> list:
        """The tokens a run of byte tokens becomes: its text, or U+FFFD per byte.

        >>> ByteFallback.run_tokens(b"\\xc3\\xa9"), ByteFallback.run_tokens(b"a\\xff")
        (['é'], ['�', '�'])
        """
        try:
            return [bytes(run).decode("utf-8")]
        except UnicodeDecodeError:
            return ["\ufffd"] * len(run)

    def decode(self, tokens: list) -> str:
        """``"".join(self.decode_chain(tokens))``.

        >>> ByteFallback().decode(["<0x0A>"])
        '\\n'
        """
        return "".join(self.decode_chain(tokens))

    def __repr__(self) -> str:
        return "ByteFallback()"

