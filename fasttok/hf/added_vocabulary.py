"""``tokenizers``' ``AddedVocabulary``: which id an added token gets, and which are special.

``add_tokens`` follows ``AddedVocabulary::add_tokens`` (tokenizers 0.23.3):
a special token's content joins the special ones; then each token
is skipped when it is empty or equal (content and flags) to one already
held, else it takes the id its content already has (an added token's, or
the model's: adding ``"hello"`` to a vocabulary holding it adds no id), or
the next free id past the model's vocabulary and the added ids. A token
added again with other flags keeps its id and takes the new flags. The
count returned is of the tokens not skipped.

Each id is matched with the flags of the latest token given for it (so
probed on tokenizers 0.23.3: its source's ``refresh_added_tokens`` on main
reads ``normalized`` from every token ever given for the content);
:meth:`AddedVocabulary.matching` builds the
:class:`~fasttok.added_tokens.hf_added.AddedTokens` the pipeline cuts with.

>>> vocab = AddedVocabulary([])
>>> model_ids = {"hello": 4}
>>> vocab.add([AddedToken("hello"), AddedToken("<new>"), AddedToken("<new>")],
...           model_ids.get, model_size=5)
2
>>> sorted(vocab.by_id)
[4, 5]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Optional

from fasttok.added_tokens.hf_added import AddedToken as MatchedToken, AddedTokens
from fasttok.hf.added_token import AddedToken

__all__ = ["AddedVocabulary"]


class AddedVocabulary:
    """The added tokens of one tokenizer: ``by_id`` (id -> :class:`AddedToken`),
    ``by_content`` (content -> id) and ``special_contents``.

    ``tokens``: ``(id, token)`` pairs as a ``tokenizer.json`` lists them (the
    loader has given each the id ``tokenizers`` gives it).

    >>> AddedVocabulary([(0, AddedToken("<s>", special=True))]).special_contents
    {'<s>'}
    """

    def __init__(self, tokens: list) -> None:
        self.by_id: dict = {}
        self.by_content: dict = {}
        self.special_contents: set = set()
        self.spelled_normalized: set = set()
        for token_id, token in tokens:
            self.by_id[token_id] = token
            self.by_content[token.content] = token_id
            if token.special:
                self.special_contents.add(token.content)
            if token.normalized:
                self.spelled_normalized.add(token.content)

    def add(self, tokens: list, model_token_to_id: Callable[[str], Optional[int]], *,
            model_size: int) -> int:
        """Add ``tokens`` (see the module docstring); how many were not skipped.

        >>> vocab = AddedVocabulary([])
        >>> vocab.add([AddedToken("a", special=True), AddedToken("")], {}.get, model_size=3)
        1
        >>> vocab.by_content
        {'a': 3}
        """
        for token in tokens:
            if token.special and token.content and token.content not in self.special_contents:
                self.special_contents.add(token.content)
                self._listed(token)
        skipped = 0
        for token in tokens:
            if not token.content or self.by_id.get(self.by_content.get(token.content)) == token:
                skipped += 1
                continue
            token_id = self.by_content.get(token.content)
            if token_id is None:
                token_id = model_token_to_id(token.content)
            if token_id is None:
                top = max(self.by_id, default=None)
                token_id = model_size if top is None or (top < model_size and model_size) \
                    else top + 1
            self.by_content[token.content] = token_id
            self.by_id[token_id] = token
            if token.content not in self.special_contents:
                self._listed(token)
        return len(tokens) - skipped

    def _listed(self, token: AddedToken) -> None:
        # tokenizers lists every token it is given (a special content once)
        # and, once a listed token of a content is normalized, spells that
        # content's id normalized for good (id_to_token, decode), even after
        # the content is given again with normalized=False
        if token.normalized:
            self.spelled_normalized.add(token.content)

    def spelled_normalized_ids(self) -> frozenset:
        """The ids whose token string is their content normalized (see :meth:`_listed`).

        >>> vocab = AddedVocabulary([])
        >>> vocab.add([AddedToken("a"), AddedToken("a", normalized=False)], {}.get, model_size=0)
        2
        >>> vocab.spelled_normalized_ids()
        frozenset({0})
        """
        return frozenset(self.by_content[c] for c in self.spelled_normalized
                         if c in self.by_content)

    def matching(self, normalize: Optional[Callable[[str], str]]) -> AddedTokens:
        """The tokens as the pipeline matches them: each id with the flags of
        the latest token given for it (``tokenizers`` 0.23.3 matches a token
        added again with ``normalized=False`` in the raw text only).

        >>> vocab = AddedVocabulary([(7, AddedToken("<s>", special=True))])
        >>> vocab.matching(None).find_matches("a<s>", normalized=False)
        [(None, 0, 1), (7, 1, 4)]
        """
        return AddedTokens([MatchedToken(t.content, token_id,
                                         special=t.content in self.special_contents,
                                         single_word=t.single_word, lstrip=t.lstrip,
                                         rstrip=t.rstrip, normalized=t.normalized)
                            for token_id, t in self.by_id.items()], normalize)

    def as_json(self) -> list:
        """``tokenizer.json``'s ``added_tokens`` list: every token by id.

        >>> AddedVocabulary([(3, AddedToken("b")), (1, AddedToken("a"))]).as_json()[0]["id"]
        1
        """
        return [self.by_id[i].as_json(i) for i in sorted(self.by_id)]
