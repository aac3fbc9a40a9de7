"""``tokenizers.AddedToken``: a token given to ``add_tokens`` / ``add_special_tokens``.

Its flags say how it is found in the input (see
:mod:`fasttok.added_tokens.hf_added`, which does the finding):
``single_word`` (not inside a word), ``lstrip`` / ``rstrip`` (the
whitespace beside it taken with it), ``normalized`` (looked for in the
normalized text rather than the raw one; unless given, the opposite of
``special``, worked out when asked, as ``tokenizers`` does, so a token made
plain and handed to ``add_special_tokens`` becomes special and unnormalized)
and ``special`` (skipped by ``decode(skip_special_tokens=True)``).

>>> AddedToken("<tool>", lstrip=True)
AddedToken("<tool>", rstrip=False, lstrip=True, single_word=False, normalized=True, special=False)
"""

from __future__ import annotations

from typing import Optional

from fasttok.shared.binding_arguments import as_bool, as_str

__all__ = ["AddedToken"]


class AddedToken:
    """One added token and its matching flags, as ``tokenizers.AddedToken``.

    Equal when content and every flag are equal (``add_tokens`` skips a
    token equal to one it holds); hashed by content.

    >>> AddedToken("x") == AddedToken("x"), AddedToken("x", special=True).normalized
    (True, False)
    """

    __slots__ = ("content", "single_word", "lstrip", "rstrip", "_normalized", "special")

    def __init__(self, content: str = "", single_word: bool = False, lstrip: bool = False,
                 rstrip: bool = False, normalized: Optional[bool] = None,
                 special: bool = False) -> None:
        self.content = as_str(content)
        self.single_word = as_bool(single_word)
        self.lstrip = as_bool(lstrip)
        self.rstrip = as_bool(rstrip)
        self._normalized = None if normalized is None else as_bool(normalized)
        self.special = as_bool(special)

    @property
    def normalized(self) -> bool:
        """Whether the token is looked for in the normalized text (default: not ``special``).

        >>> AddedToken("a").normalized
        True
        """
        return (not self.special) if self._normalized is None else self._normalized

    def _key(self) -> tuple:
        return (self.content, self.single_word, self.lstrip, self.rstrip, self.normalized,
                self.special)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AddedToken):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self.content)

    def __str__(self) -> str:
        return self.content

    def __repr__(self) -> str:
        flags = ", ".join(f"{name}={getattr(self, name)}" for name in
                          ("rstrip", "lstrip", "single_word", "normalized", "special"))
        return f'AddedToken("{self.content}", {flags})'

    def __getstate__(self) -> dict:
        return {"content": self.content, "single_word": self.single_word, "lstrip": self.lstrip,
                "rstrip": self.rstrip, "normalized": self.normalized, "special": self.special}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state)

    def as_json(self, token_id: int) -> dict:
        """The token's entry of ``tokenizer.json``'s ``added_tokens`` list.

        >>> AddedToken("<s>", special=True).as_json(1)["normalized"]
        False
        """
        return {"id": token_id, "content": self.content, "single_word": self.single_word,
                "lstrip": self.lstrip, "rstrip": self.rstrip, "normalized": self.normalized,
                "special": self.special}
