"""The stages of a drop-in ``Tokenizer`` as ``tokenizers`` shows them.

``tokenizers.Tokenizer.normalizer`` (and ``pre_tokenizer``, ``model``,
``post_processor``, ``decoder``) give the stage objects, whose Python
methods run one stage alone: ``normalize_str``, ``pre_tokenize_str``,
``token_to_id`` / ``id_to_token``, ``num_special_tokens_to_add``,
``decode``. These views give the same methods over fasttok's stages, read
only (the drop-in is for inference: its pipeline is not rebuilt from parts).

>>> from fasttok.normalizers.simple import Lowercase
>>> Normalizer(Lowercase()).normalize_str("HeLLo")
'hello'
"""

from __future__ import annotations

from typing import Any, Optional

from fasttok.shared.binding_arguments import as_bool, as_str, as_u32

__all__ = ["Normalizer", "PreTokenizer", "Model", "PostProcessor", "Decoder"]


class _View:
    __slots__ = ("_stage",)

    def __init__(self, stage: Any) -> None:
        self._stage = stage

    def __repr__(self) -> str:
        return f"{type(self).__name__}({type(self._stage).__name__})"


class Normalizer(_View):
    """A normalizer's ``normalize_str``.

    >>> from fasttok.normalizers.simple import Lowercase
    >>> Normalizer(Lowercase())
    Normalizer(Lowercase)
    """

    __slots__ = ()

    def normalize_str(self, sequence: str) -> str:
        """``sequence`` normalized.

        >>> from fasttok.normalizers.simple import Lowercase
        >>> Normalizer(Lowercase()).normalize_str("A")
        'a'
        """
        return self._stage.normalize_str(as_str(sequence))


class PreTokenizer(_View):
    """A pre-tokenizer's ``pre_tokenize_str``."""

    __slots__ = ()

    def pre_tokenize_str(self, sequence: str) -> list:
        """``[(piece, (start, end))]``: the pieces of ``sequence`` and where they are.

        >>> from fasttok.loaders.hf_stage_json import pre_tokenizer_from_json
        >>> pre = pre_tokenizer_from_json({"type": "WhitespaceSplit"}, "$", None)
        >>> PreTokenizer(pre).pre_tokenize_str("a  bc")
        [('a', (0, 1)), ('bc', (3, 5))]
        """
        return self._stage.pre_tokenize_str(as_str(sequence))


class Model(_View):
    """A model's vocabulary look-ups."""

    __slots__ = ()

    def token_to_id(self, token: str) -> Optional[int]:
        """The model's id of ``token`` (added tokens are not the model's), or ``None``.

        >>> from fasttok.models.hf_wordlevel import WordLevel
        >>> Model(WordLevel({"a": 0}, "a")).token_to_id("a")
        0
        """
        return self._stage.token_to_id(as_str(token))

    def id_to_token(self, id: int) -> Optional[str]:
        """The model's token of ``id``, or ``None``.

        >>> from fasttok.models.hf_wordlevel import WordLevel
        >>> Model(WordLevel({"a": 0}, "a")).id_to_token(1) is None
        True
        """
        return self._stage.id_to_token(as_u32(id))


class PostProcessor(_View):
    """A post-processor's count of the ids it adds."""

    __slots__ = ()

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        """How many ids it adds to one sequence (or, ``is_pair``, to a pair).

        >>> from fasttok.post_processors.bert import BertProcessing
        >>> bert = PostProcessor(BertProcessing(("[SEP]", 2), ("[CLS]", 1)))
        >>> bert.num_special_tokens_to_add(True)
        3
        """
        return self._stage.added_tokens(as_bool(is_pair))


class Decoder(_View):
    """A decoder's ``decode`` of token strings."""

    __slots__ = ()

    def decode(self, tokens: list) -> str:
        """The text of the token strings ``tokens``.

        >>> from fasttok.decoders.hf_wordpiece import WordPiece
        >>> Decoder(WordPiece()).decode(["hel", "##lo", "there"])
        'hello there'
        """
        if isinstance(tokens, str):
            raise TypeError("Can't extract `str` to `Vec`")
        return self._stage.decode([as_str(t) for t in tokens])
