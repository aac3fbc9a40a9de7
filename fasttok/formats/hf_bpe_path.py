"""SentencePiece-style BPE files of ``tokenizer.json`` in one compiled call a text.

A file whose normalizer only writes each space as another string
(``Replace`` of ``" "``) and puts a string before each stretch (``Prepend``),
whose pre-tokenizer is none or a ``Split`` at the spaces that normalizer
has removed, and whose model is ``BPE`` (Llama 2, Gemma 3 and most
SentencePiece conversions), or that does the same with a ``Metaspace`` that
does not split and no normalizer (newer Llama and Mistral conversions),
gives, for each stretch between added tokens, the model's tokens of that
stretch rewritten so. The text is cut at its
added tokens in one compiled call (the matcher's ``cut``), and the
rewriting and the model run in another
(:meth:`fasttok.models.hf_bpe.BPE.text_walker`), with no Python per
stretch or per token: Gemma 3's newlines are added tokens, so a
text of 20,000 lines was 20,000 trips through the Python stages at about
20 µs each, as much as the BPE itself.

The same call gives the offsets (:func:`bpe_stretch_walk`): the normalizer's
alignment is asked of the stage when the walk is built (a written space
spans the space it stands for; the prepended string, the stretch's first
character), each token spans the characters its bytes came from (a
byte-fallback token of one character spans that character), and with no
pre-tokenizer to split it each stretch is one word, as each added token is.

Speed (the first 5,000 lines of each corpus file, one call a line, CPU time,
best of 3, on the shared 2-core machine under load, where a figure moves by
a third from run to run): ``walk.encode`` of en / code / zh lines 3.1 / 1.6
/ 1.0 us on Llama 2, 3.4 / 3.2 / 2.0 on Gemma 3: 6.4 / 9.4 / 13.5 and 8.4 /
7.5 / 9.8 times ``tokenizers``' ``encode`` (offsets included) measured
beside it.

>>> from fasttok.models.hf_bpe import BPE
>>> walk = BPE({"a": 0, "_": 1, "_a": 2}, [("_", "a")]).text_walker(
...     lambda allowed: (lambda text: [text], {}, None, None), space_to="_")
>>> walk.ids("a a", None), [list(a) for a in walk.encode("a a", None)]
([0, 2], [[0, 2], [0, 1, 1, 3], [0, 0]])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

from fasttok.formats.walk import MIN_THREADED_TEXTS, Walk
from fasttok.models.hf_bpe import BPE, StretchWalker
from fasttok.models.interface import run_batch
from fasttok.normalizers.replace import Replace
from fasttok.normalizers.sequence import Sequence
from fasttok.normalizers.simple import Prepend
from fasttok.pre_tokenizers.metaspace import Metaspace
from fasttok.pre_tokenizers.split import Split
from fasttok.shared.normalized import NormalizedString, PreTokenizedString

__all__ = ["bpe_stretch_walk", "stretch_cuts", "StretchWalk"]


class StretchWalk(StretchWalker, Walk):
    """The compiled walk (:class:`~fasttok.models.hf_bpe.StretchWalker`'s
    ``ids`` and ``encode``) with its batch on threads: ``encode_many`` gives
    chunks of texts to :meth:`StretchWalker.encode_offsets_many`, which walks
    each chunk with the GIL released.

    >>> walk = BPE({"a": 0, "_": 1, "_a": 2}, [("_", "a")]).text_walker(
    ...     lambda allowed: (lambda text: [text], {}, None, None), space_to="_", walker=StretchWalk)
    >>> [list(found[0]) for found in walk.encode_many(["a a", "a"], None)]
    [[0, 2], [0]]
    """

    def encode_many(self, texts: list, allowed: Optional[frozenset],
                    num_threads: Optional[int] = None) -> list:
        """:meth:`encode` of each text (see :meth:`Walk.encode_many`)."""
        return run_batch(self, texts if type(texts) is list else list(texts), allowed,
                         "encode_offsets_many", num_threads, MIN_THREADED_TEXTS)


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


def _stretch_rewrites(normalizer: Any, pre_tokenizer: Any,
                      has_normalized_added: bool) -> Optional[dict]:
    # BPE.stretch_walker's rewriting arguments when the normalizer and
    # pre-tokenizer are the ones this module takes, else None (the model is
    # asked for after them: a byte-level file builds it on first use)
    rewrites = _rewrites(normalizer)
    if has_normalized_added or rewrites is None:
        return None
    space_to, prepend = rewrites
    if type(pre_tokenizer) is Metaspace and not pre_tokenizer.split and normalizer is None:
        # Metaspace that does not split writes spaces and puts its
        # replacement before a stretch as the normalizers above do
        scheme = pre_tokenizer.prepend_scheme
        return {"space_to": pre_tokenizer.replacement,
                "prepend": "" if scheme == "never" else pre_tokenizer.replacement,
                "prepend_scheme": None if scheme == "never" else scheme}
    if pre_tokenizer is not None:
        # a Split at spaces, after every space was rewritten, splits nothing
        if not (type(pre_tokenizer) is Split and not pre_tokenizer.regex
                and not pre_tokenizer.invert and pre_tokenizer.pattern == " "
                and space_to is not None and " " not in space_to + prepend):
            return None
    return {"space_to": space_to, "prepend": prepend, "prepend_scheme": None}


_PROBES = (("a b", 0), (" a", 0), ("\u2581a b", 0), ("a b", 1))  # (stretch, where it starts)


def _walked(text: str, at: int, space_to: Optional[str], prepend: str,
            prepend_scheme: Optional[str]) -> tuple:
    # (normalized, alignments) of a stretch as the compiled walk writes it
    space = " " if space_to is None else space_to
    written = text.replace(" ", space)
    aligns: list = []
    for i, c in enumerate(text):
        aligns += [(i, i + 1)] * (len(space) if c == " " else 1)
    if prepend_scheme is not None and (written.startswith(prepend)
                                       or (prepend_scheme == "first" and at)):
        prepend = ""
    return prepend + written, [(0, 1)] * len(prepend) + aligns


def _staged(normalizer: Any, pre_tokenizer: Any, text: str, at: int) -> Optional[tuple]:
    # (normalized, alignments) of a stretch through the stages, if one piece
    piece = NormalizedString(text, original_shift=at)
    if normalizer is not None:
        normalizer.normalize(piece)
    if pre_tokenizer is not None:
        pts = PreTokenizedString(piece)
        pre_tokenizer.pre_tokenize(pts)
        if len(pts.splits) != 1:
            return None
        piece = pts.splits[0]
    return piece.normalized, piece.alignments


def _aligned_as_walked(normalizer: Any, pre_tokenizer: Any, rewrites: dict) -> bool:
    # whether the stages write and align the probes as the walk does: the
    # prepended string spans the first character, a space's string the space
    return all(_staged(normalizer, pre_tokenizer, text, at) == _walked(text, at, **rewrites)
               for text, at in _PROBES)


def stretch_cuts(added: Any, normalize: Optional[Callable[[str], str]]) -> Callable:
    """``cuts_for(allowed)`` of :class:`~fasttok.models.hf_bpe.StretchWalker`
    for the added tokens ``added``: their compiled cut and ids, and the test
    that declines a text in which a token of the normalized pass occurs in a
    stretch's normalization (``normalize``, the normalizer's
    ``normalize_str``). Tokens that are not plain (``single_word``,
    ``lstrip``, ``rstrip``: RoBERTa-style masks) decline the texts they
    occur in; in any other text the plain ones cut as all of them would.
    ``()`` (every text declined) where one id is both. Last, the search for
    all the tokens matched (their :class:`~fasttok.shared._literal_cut.LiteralCut`):
    a text holding none of them is one stretch, walked without the cut.

    >>> from fasttok.added_tokens.hf_added import AddedToken, AddedTokens
    >>> cuts_for = stretch_cuts(AddedTokens([AddedToken("<x>", 7, special=True),
    ...                                      AddedToken("<m>", 8, special=True, lstrip=True)]), None)
    >>> cut, ids, may_occur, tokens = cuts_for(None)
    >>> cut("a<x>"), cut("a <m>"), ids, may_occur, tokens.occurs("a <m>"), tokens.occurs("a<")
    (['a', '<x>', ''], None, {'<x>': 7}, None, True, False)
    """

    def cuts_for(allowed: Optional[frozenset]) -> tuple:
        matcher = added.matcher(False, allowed)
        may_occur = _normalized_test(added.matcher(True, allowed), normalize)
        if matcher.plain:
            return matcher.cut, matcher.ids, may_occur, matcher.literal
        flagged = {t.id for t in matcher.by_text.values()
                   if t.single_word or t.lstrip or t.rstrip}
        if any(t.id in flagged for t in matcher.by_text.values()
               if not (t.single_word or t.lstrip or t.rstrip)):
            return ()
        plain = added.matcher(False, frozenset(matcher.ids.values()) - flagged)
        occurs, cut = added.matcher(False, frozenset(flagged)).occurs, plain.cut

        def cut_unless_flagged(text: str) -> Optional[list]:
            return None if occurs(text) else cut(text)

        return cut_unless_flagged, plain.ids, may_occur, matcher.literal

    return cuts_for


def _normalized_test(matcher: Any, normalize: Optional[Callable[[str], str]]) -> Optional[Callable]:
    # whether a token of the normalized pass may occur in a stretch of
    # parts, or None when that pass has no token
    if not matcher.by_text:
        return None
    occurs, normalize = matcher.occurs, normalize or str

    def may_occur(parts: list) -> bool:
        return any(occurs(normalize(part)) for part in parts[::2] if part)

    return may_occur


def bpe_stretch_walk(record: Any, pipeline: Any) -> Optional[StretchWalk]:
    """The walk (:class:`fasttok.formats.hf_walks.Walk`: ``ids`` and
    ``encode``) of ``pipeline`` when its stages are the ones this module
    takes (``record``, its ``tokenizer.json`` record, is not needed), else
    ``None``; a model with dropout is left to the stages, which draw. A text
    is declined where the added tokens matched are not plain, where a token
    of the normalized pass occurs, or for a lone surrogate.

    >>> import json
    >>> from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
    >>> from fasttok.formats.hf_pipeline import pipeline_from_document
    >>> doc = {"normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "_"},
    ...        "model": {"type": "BPE", "vocab": {"a": 0, "_": 1, "_a": 2}, "merges": [["_", "a"]]}}
    >>> record = tokenizer_json_record(json.dumps(doc), "t.json")
    >>> walk = bpe_stretch_walk(record, pipeline_from_document(record))
    >>> walk.ids("a a", None), [list(a) for a in walk.encode("a a", None)]
    ([0, 2], [[0, 2], [0, 1, 1, 3], [0, 0]])
    """
    normalizer, pre_tokenizer = pipeline.normalizer, pipeline.pre_tokenizer
    # tokens of the normalized pass are looked for text by text
    rewrites = _stretch_rewrites(normalizer, pre_tokenizer, False)
    if rewrites is None or not _aligned_as_walked(normalizer, pre_tokenizer, rewrites):
        return None
    model = pipeline.model
    if type(model) is not BPE or model.dropout:
        return None
    normalize = None if normalizer is None else normalizer.normalize_str
    cuts_for = stretch_cuts(pipeline.added, normalize)
    return model.text_walker(cuts_for, walker=StretchWalk, **rewrites)
