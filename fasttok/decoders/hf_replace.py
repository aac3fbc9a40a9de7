"""``tokenizers``' Replace decoder: every match of a pattern in each token replaced.

tokenizers runs both pattern kinds through Oniguruma (a string pattern
escaped), matches taken left to right without overlap, and an empty token
left alone. A string pattern is therefore ``str.replace`` (which puts an
empty pattern between every two characters and at both ends, as Oniguruma's
match iterator does). A regex pattern is translated by
:func:`fasttok.shared.regex_translate.compile_generic` and iterated as the
``onig`` crate does (:func:`fasttok.shared.normalized.match_spans`, the
pre-tokenizers' too): an empty match right where the last match ended is
skipped by one character, which Python's own ``finditer`` would keep, and a
pattern that makes the engine rescan the text past its budget is a
:class:`~fasttok.errors.FasttokError` (a search loop of its own was
quadratic: ``(?:a+b)?`` on a fused run of 20,000 ``a``, 11 s).

>>> Replace("▁", " ").decode(["▁Hello", "▁world"])
' Hello world'
>>> Replace(regex=r"a*", content="-").decode(["baac"])
'-b-c-'
"""

from __future__ import annotations

from typing import Optional

from fasttok.shared.normalized import match_spans

__all__ = ["Replace"]


class Replace:
    """Replace ``pattern`` (a string) or ``regex`` (a pattern) by ``content``.

    >>> Replace("ab", "x").decode_chain(["abab", "", "cab"])
    ['xx', '', 'cx']
    """

    __slots__ = ("pattern", "regex", "content", "_compiled")
    #: each token becomes one token from it alone and whether it is the first
    #: (see :mod:`fasttok.decoders.hf_starts`)
    token_local = True

    def __init__(self, pattern: Optional[str] = None, content: str = "", *,
                 regex: Optional[str] = None) -> None:
        if (pattern is None) == (regex is None):
            raise ValueError("give exactly one of pattern (a string) and regex")
        self.pattern = pattern
        self.regex = regex
        self.content = content
        self._compiled = None if regex is None else _compiled(regex)

    def decode_chain(self, tokens: list) -> list:
        """Each token with its matches replaced.

        >>> Replace(regex=r"\\s+", content="_").decode_chain(["a  b", "c"])
        ['a_b', 'c']
        """
        content = self.content
        if self._compiled is None:
            pattern = self.pattern
            return [t.replace(pattern, content) if t else t for t in tokens]
        return [_replace_matches(self._compiled, t, content) if t else t for t in tokens]

    def decode(self, tokens: list) -> str:
        """``"".join(self.decode_chain(tokens))``.

        >>> Replace("_", " ").decode(["a_", "b"])
        'a b'
        """
        return "".join(self.decode_chain(tokens))

    def __repr__(self) -> str:
        what = f"{self.pattern!r}" if self.regex is None else f"regex={self.regex!r}"
        return f"Replace({what}, content={self.content!r})"


def _compiled(regex: str):
    # regex_translate imported for a regex only (~1 ms of the load of a
    # file whose Replace is of a string: Llama 2, Gemma 3)
    from fasttok.shared.regex_translate import compile_generic

    return compile_generic(regex)


def _replace_matches(compiled, text: str, content: str) -> str:
    parts = []
    kept = 0
    for start, end in match_spans(compiled, text):
        parts.append(text[kept:start])
        parts.append(content)
        kept = end
    parts.append(text[kept:])
    return "".join(parts)
