"""The post-processing steps in ``tokenizers``' order: truncate, process, pad.

``TokenizerImpl::post_process``: the inputs are truncated to ``max_length``
less the special tokens the post-processor will add (when it adds them; a
``max_length`` smaller than that count truncates nothing, as the unsigned
subtraction of ``tokenizers`` wraps), then processed (no post-processor: the
pair appended), then padded. In a batch each encoding is padded on its own
first and then the batch to its longest (``BatchLongest``).

>>> from fasttok.post_processors.encoding import Encoding
>>> from fasttok.post_processors.bert import BertProcessing
>>> from fasttok.post_processors.truncation import TruncationParams
>>> e = Encoding([5, 6, 7], list("abc"), [(0, 1), (2, 3), (4, 5)], [0, 1, 2])
>>> post_process(e, None, True, BertProcessing(("[SEP]", 2), ("[CLS]", 1)),
...              TruncationParams(max_length=4)).ids
[1, 5, 6, 2]
"""

from __future__ import annotations

from fasttok.errors import FasttokError
from fasttok.post_processors.encoding import Encoding
from fasttok.post_processors.padding import PaddingParams, pad_encodings
from fasttok.post_processors.processor import default_process
from fasttok.post_processors.truncation import TruncationParams, truncate_encodings

__all__ = ["post_process", "post_process_batch", "check_truncation"]


def check_truncation(params: TruncationParams, processor) -> None:
    """The check of ``tokenizers``' ``with_truncation``: the stride must not exceed
    ``max_length`` less the special tokens of one input (a stride equal to it fails
    later, when an input has to be cut).

    >>> from fasttok.post_processors.bert import BertProcessing
    >>> check_truncation(TruncationParams(max_length=4, stride=3), BertProcessing(("[SEP]", 2), ("[CLS]", 1)))
    Traceback (most recent call last):
    fasttok.errors.FasttokError: tokenizer stride set to 3, which is greater than or equal to its effective max length of 2 (= 4 original max length - 2 added special tokens); use a smaller stride or a larger max_length
    """
    added = processor.added_tokens(False) if processor is not None else 0
    effective = params.max_length - added
    if 0 <= effective < params.stride:
        raise FasttokError(
            f"tokenizer stride set to {params.stride}, which is greater than or equal to its "
            f"effective max length of {effective} (= {params.max_length} original max length "
            f"- {added} added special tokens); use a smaller stride or a larger max_length")


def post_process(encoding: Encoding, pair: Encoding | None, add_special_tokens: bool,
                 processor=None, truncation: TruncationParams | None = None,
                 padding: PaddingParams | None = None) -> Encoding:
    """One encoding (the pair's tokens after the first's) truncated, processed and padded.

    ``encoding`` and ``pair`` come from the model with type ids 0 and 1; they
    may be changed (truncated) on the way.

    >>> from fasttok.post_processors.encoding import Encoding
    >>> post_process(Encoding([5], ["a"], [(0, 1)], [0]), None, True,
    ...              padding=PaddingParams(length=3)).ids
    [5, 0, 0]
    """
    if truncation is not None:
        limit = truncation.max_length
        added = processor.added_tokens(pair is not None) if processor is not None else 0
        if add_special_tokens and added:
            limit -= added
        if limit >= 0:
            encoding, pair = truncate_encodings(encoding, pair, truncation, limit)
    if processor is not None:
        final = processor.process(encoding, pair, add_special_tokens)
    else:
        final = default_process(encoding, pair)
    if padding is not None:
        pad_encodings([final], padding)
    return final


def post_process_batch(inputs, add_special_tokens: bool, processor=None,
                       truncation: TruncationParams | None = None,
                       padding: PaddingParams | None = None) -> list:
    """:func:`post_process` of each ``(encoding, pair or None)`` of ``inputs``, then the
    batch padded together.

    >>> from fasttok.post_processors.encoding import Encoding
    >>> out = post_process_batch([(Encoding([5], ["a"], [(0, 1)], [0]), None),
    ...                           (Encoding([5, 6], ["a", "b"], [(0, 1), (2, 3)], [0, 1]), None)],
    ...                          True, padding=PaddingParams())
    >>> [e.ids for e in out]
    [[5, 0], [5, 6]]
    """
    out = [post_process(e, p, add_special_tokens, processor, truncation, padding)
           for e, p in inputs]
    if padding is not None:
        pad_encodings(out, padding)
    return out
