"""``tokenizers``' WordPiece and CTC decoders, which share its clean-up rule.

>>> WordPiece().decode(["un", "##aff", "##able", "!"])
'unaffable!'
>>> CTC().decode(["<pad>", "h", "h", "i", "|", "y", "o", "u"])
'hi you'
"""

from __future__ import annotations

__all__ = ["WordPiece", "CTC"]


class WordPiece:
    """The WordPiece decoder: continuation pieces lose ``prefix``, the others
    get a space in front (except the first token); ``cleanup`` runs
    :func:`~fasttok.decoders.cleanup.clean_up_tokenization` on each token.

    >>> WordPiece(cleanup=False).decode(["##a", "b", "##c", "."])
    '##a bc .'
    """

    __slots__ = ("prefix", "cleanup")
    #: each token becomes one token from it alone and whether it is the first
    #: (see :mod:`fasttok.decoders.hf_starts`)
    token_local = True

    def __init__(self, prefix: str = "##", cleanup: bool = True) -> None:
        self.prefix = prefix
        self.cleanup = cleanup

    def decode_chain(self, tokens: list) -> list:
        """Each token as it reads in the text.

        >>> WordPiece().decode_chain(["a", "##b", ","])
        ['a', 'b', ',']
        """
        prefix, n = self.prefix, len(self.prefix)
        out = tokens[:1] + [t[n:] if t.startswith(prefix) else " " + t for t in tokens[1:]]
        if self.cleanup:
            # imported by the first decode: a load (BERT's decoder is this
            # one) need not import the module of llama.cpp's clean-up too
            from fasttok.decoders.cleanup import clean_up_tokenization

            out = [clean_up_tokenization(t) for t in out]
        return out

    def decode(self, tokens: list) -> str:
        """``"".join(self.decode_chain(tokens))``.

        >>> WordPiece().decode(["it", "'", "s", "!"])
        "it ' s!"
        """
        return "".join(self.decode_chain(tokens))

    def __repr__(self) -> str:
        return f"WordPiece(prefix={self.prefix!r}, cleanup={self.cleanup})"


class CTC:
    """The CTC decoder: runs of one token collapse to one, ``pad_token`` is
    removed; with ``cleanup`` each token is cleaned up and
    ``word_delimiter_token`` becomes a space; empty tokens are dropped.

    >>> CTC(cleanup=False).decode_chain(["a", "a", "<pad>", "a", "|"])
    ['a', 'a', '|']
    """

    __slots__ = ("pad_token", "word_delimiter_token", "cleanup")

    def __init__(self, pad_token: str = "<pad>", word_delimiter_token: str = "|",
                 cleanup: bool = True) -> None:
        self.pad_token = pad_token
        self.word_delimiter_token = word_delimiter_token
        self.cleanup = cleanup

    def decode_chain(self, tokens: list) -> list:
        """The tokens left once repeats, pads and empties are gone.

        >>> CTC().decode_chain(["|", "|", "a", "<pad>"])
        [' ', 'a']
        """
        from fasttok.decoders.cleanup import clean_up_tokenization

        out = []
        previous = None
        for token in tokens:
            if token == previous:
                continue
            previous = token
            text = token.replace(self.pad_token, "")
            if self.cleanup:
                text = clean_up_tokenization(text).replace(self.word_delimiter_token, " ")
            if text:
                out.append(text)
        return out

    def decode(self, tokens: list) -> str:
        """``"".join(self.decode_chain(tokens))``.

        >>> CTC().decode(["a", "|", "b"])
        'a b'
        """
        return "".join(self.decode_chain(tokens))

    def __repr__(self) -> str:
        return (f"CTC(pad_token={self.pad_token!r}, "
                f"word_delimiter_token={self.word_delimiter_token!r}, cleanup={self.cleanup})")
