"""``tokenizers``' ``AddedVocabulary``: which id an added token gets, and which are special.

``add_tokens`` follows ``AddedVocabulary::add_tokens`` (tokenizers 0.23.3):
a special token joins the special list (once per content); then each token
is skipped when it is empty or equal (content and flags) to one already
held, else it takes the id its content already has (an added token's, or
the model's: adding ``"hello"`` to a vocabulary holding it adds no id), or
the next free id past the model's vocabulary and the added ids. A token
added again with other flags keeps its id and takes the new flags. The
count returned is of the tokens not skipped.

The tokens are matched in the order of the special list, then the others;
whether a token is looked for in the normalized text comes from the list
entry and every other flag from the latest token given for the id, as in
``refresh_added_tokens``. :meth:`AddedVocabulary.matching` builds the
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
    ``by_content`` (content -> id), the special list and the others, in order.

    ``tokens``: ``(id, token)`` pairs as a ``tokenizer.json`` lists them (the
    loader has given each the id ``tokenizers`` gives it).

    >>> AddedVocabulary([(0, AddedToken("<s>", special=True))]).special_contents
    {'<s>'}
    """

    def __init__(self, tokens: list) -> None:
        self.by_id: dict = {}
        self.by_content: dict = {}
        self.special: list = []
        self.special_contents: set = set()
        self.others: list = []
        for token_id, token in tokens:
            self.by_id[token_id] = token
            self.by_content[token.content] = token_id
            if token.special:
                if token.content not in self.special_contents:
                    self.special.append(token)
                    self.special_contents.add(token.content)
            else:
                self.others.append(token)

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
                self.special.append(token)
                self.special_contents.add(token.content)
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
                self.others.append(token)
        return len(tokens) - skipped

    def matching(self, model_token_to_id: Callable[[str], Optional[int]],
                 normalize: Optional[Callable[[str], str]]) -> AddedTokens:
        """The tokens as the pipeline matches them.

        >>> vocab = AddedVocabulary([(7, AddedToken("<s>", special=True))])
        >>> vocab.matching({}.get, None).find_matches("a<s>", normalized=False)
        [(None, 0, 1), (7, 1, 4)]
        """
        out = []
        for listed in self.special + self.others:
            token_id = self.by_content.get(listed.content)
            if token_id is None:
                token_id = model_token_to_id(listed.content)
            flags = self.by_id.get(token_id, listed)
            out.append(MatchedToken(listed.content, token_id,
                                    special=listed.content in self.special_contents,
                                    single_word=flags.single_word, lstrip=flags.lstrip,
                                    rstrip=flags.rstrip, normalized=listed.normalized))
        return AddedTokens(out, normalize)

    def as_json(self) -> list:
        """``tokenizer.json``'s ``added_tokens`` list: every token by id.

        >>> AddedVocabulary([(3, AddedToken("b")), (1, AddedToken("a"))]).as_json()[0]["id"]
        1
        """
        return [self.by_id[i].as_json(i) for i in sorted(self.by_id)]
