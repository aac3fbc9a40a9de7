"""SentencePiece-style BPE files of ``tokenizer.json`` in one compiled call a text.

A file whose normalizer only writes each space as another string
(``Replace`` of ``" "``) and puts a string before each stretch (``Prepend``),
whose pre-tokenizer is none or a ``Split`` at the spaces that normalizer
has removed, and whose model is ``BPE`` (Llama 2, Gemma 3 and most
SentencePiece conversions) gives, for each stretch between added tokens,
the model's ids of that stretch rewritten so. The text is cut at its added
tokens by their regex (``re.split``, in C), and the rewriting and the model
run in :meth:`fasttok.models.hf_bpe.BPE.stretches_ids`, with no Python per
stretch: Gemma 3's newlines are added tokens, so a text of 20,000 lines was
20,000 trips through the Python stages at about 20 µs each, as much as
the BPE itself.

>>> from fasttok.models.hf_bpe import BPE
>>> from fasttok.normalizers.replace import Replace
>>> ids = bpe_stretch_path(Replace(" ", "_"), None, BPE({"a": 0, "_": 1, "_a": 2}, [("_", "a")]),
...                        False)
>>> ids(["a a", "<x>", ""], {"<x>": 7})
[0, 2, 7]
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Optional

from fasttok.models.hf_bpe import BPE
from fasttok.normalizers.replace import Replace
from fasttok.normalizers.sequence import Sequence
from fasttok.normalizers.simple import Prepend
from fasttok.pre_tokenizers.split import Split

__all__ = ["bpe_stretch_path"]


def _rewrites(normalizer: Any) -> Optional[tuple]:
    # (space_to or None, prepend) meaning the normalizer, or None: at most
    # one Replace of a space (by a non-empty string, so that no stretch
    # becomes empty and loses its Prepend) and one Prepend, in either order
    steps = normalizer.normalizers if type(normalizer) is Sequence else \
        [] if normalizer is None else [normalizer]
    space_to, prepend = None, None
    for step in steps:
        if (type(step) is Replace and not step.regex and step.pattern == " " and step.content
                and space_to is None):
            space_to = step.content
            if prepend is not None:
                prepend = prepend.replace(" ", space_to)
        elif type(step) is Prepend and prepend is None:
            prepend = step.prepend
        else:
            return None
    return space_to, prepend or ""


def bpe_stretch_path(normalizer: Any, pre_tokenizer: Any, model: Any,
                     has_normalized_added: bool) -> Optional[Callable[[list, dict], list]]:
    """``ids(parts, added_ids)`` for a text cut at its added tokens (see
    :meth:`fasttok.added_tokens.hf_added.AddedTokens.matcher`'s ``split``),
    when the stages are the ones above (else ``None``);
    ``has_normalized_added``: whether some added token is matched in the
    normalized text (such a file keeps the stages' own path)."""
    rewrites = _rewrites(normalizer)
    if has_normalized_added or type(model) is not BPE or rewrites is None:
        return None
    space_to, prepend = rewrites
    if pre_tokenizer is not None:
        # a Split at spaces, after every space was rewritten, splits nothing
        if not (type(pre_tokenizer) is Split and not pre_tokenizer.regex
                and not pre_tokenizer.invert and pre_tokenizer.pattern == " "
                and space_to is not None and " " not in space_to + prepend):
            return None
    return functools.partial(model.stretches_ids, space_to=space_to, prepend=prepend)
