"""The words tokenizers' trainers count: each text normalized, then cut by the pre-tokenizer.

tokenizers' ``train_from_iterator`` runs the tokenizer's normalizer and
pre-tokenizer on each text (not its added tokens: a special token in the
text is trained on as ordinary text) and counts the pieces. The stages here
are fasttok's own implementations of tokenizers' (:mod:`fasttok.normalizers`,
:mod:`fasttok.pre_tokenizers`), built from their ``tokenizer.json``
objects, so that what was trained on is what the written file says.

>>> c = count_words(["Hello, hello!"], stages(BERT_NORMALIZER, BERT_PRE_TOKENIZER))
>>> sorted(c.items())
[(b'!', 1), (b',', 1), (b'hello', 2)]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Optional

from fasttok.errors import FasttokError
from fasttok.normalizers.hf_json import normalizer_from_json
from fasttok.pre_tokenizers.hf_json import pre_tokenizer_from_json
from fasttok.trainers._bpe_trainer import PieceCounter

__all__ = ["BERT_NORMALIZER", "BERT_PRE_TOKENIZER", "stages", "count_words"]

# what a user of tokenizers sets for WordPiece (BERT's), as tokenizer.json writes them
BERT_NORMALIZER = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                   "strip_accents": None, "lowercase": True}
BERT_PRE_TOKENIZER = {"type": "BertPreTokenizer"}


def _fail(where: str, problem: str) -> FasttokError:
    return FasttokError(f"{where}: {problem}")


def stages(normalizer: Optional[dict], pre_tokenizer: Optional[dict]) -> tuple:
    """The normalizer and pre-tokenizer that ``tokenizer.json`` objects
    describe (``None`` for none); a bad object raises :class:`~fasttok.FasttokError`
    naming the field.

    >>> stages(None, {"type": "Whitespace"})[1].split_str("a b")
    ['a', 'b']
    """
    return (normalizer_from_json(normalizer, "normalizer", _fail),
            pre_tokenizer_from_json(pre_tokenizer, "pre_tokenizer", _fail))


def count_words(texts: Iterable[str], pipeline: tuple) -> PieceCounter:
    """Count the words of ``texts`` under ``(normalizer, pre_tokenizer)``.

    >>> sorted(count_words(["a b", "a"], (None, None)).items())
    [(b'a', 1), (b'a b', 1)]
    """
    normalizer, pre_tokenizer = pipeline
    normalize: Any = None if normalizer is None else normalizer.normalize_str
    split: Any = None if pre_tokenizer is None else pre_tokenizer.split_str
    counter = PieceCounter()
    add = counter.add_pieces
    for text in texts:
        if not isinstance(text, str):
            raise TypeError(f"texts must be str, not {type(text).__name__}")
        n = len(text.encode("utf-8"))
        if normalize is not None:
            text = normalize(text)
        pieces = [text] if split is None else split(text)
        add([p for p in pieces if p], n)
    return counter
