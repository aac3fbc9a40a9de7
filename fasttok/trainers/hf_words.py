"""The words tokenizers' trainers count: each text normalized, then cut by the pre-tokenizer.

tokenizers' ``train_from_iterator`` runs the tokenizer's normalizer and
pre-tokenizer on each text (not its added tokens: a special token in the
text is trained on as ordinary text) and counts the pieces. The stages here
are fasttok's own implementations of tokenizers' (:mod:`fasttok.normalizers`,
:mod:`fasttok.pre_tokenizers`), built from their ``tokenizer.json``
objects, so that what was trained on is what the written file says.

Most pipelines are slow in Python character by character, so the common
ones take a shorter road to the same words. When the normalizer maps each
character on its own (BERT's, ``Lowercase``, ``NFD``, ``NFKD``,
``StripAccents``; not the composing forms) and the pre-tokenizer cuts at every
ASCII space and drops it (``BertPreTokenizer``, ``Whitespace``,
``WhitespaceSplit``), a text's words are those of its space-separated chunks.

BERT's stages (``BertNormalizer`` or none, then ``BertPreTokenizer``, what
WordPiece trains behind) run compiled, through the per-code-point rules the
encoder uses (:func:`fasttok.models.hf_bert_rule.bert_rule` in a
:class:`~fasttok.models._wordpiece.CodePointRules`, asked of the stages once
for each code point the texts hold): 4096 texts a call, one loop without
the GIL writes the UTF-8 of their words back to back with the end of each
(:meth:`~fasttok.models._wordpiece.CodePointRules.words`), and
:meth:`~fasttok.trainers._bpe_trainer.PieceCounter.add_words` counts them
without the GIL, with no Python object per word. A text holding a code
point the rules leave to the stages (Hangul, marks NFD keeps, lone
surrogates) is cut at its spaces and its chunks go through the rules again;
each distinct chunk still holding one goes through the stages themselves.

The other such pipelines count the distinct chunks first (``str.split`` and
a ``Counter``, in C), normalize each distinct character once, make a chunk
``chunk.translate(table)``, and pre-tokenize only the distinct normalized
chunks. A character whose normalization holds a combining mark that stays
(canonical reordering looks across characters; marks the normalizer drops
cannot matter) or that the interpreter's Unicode does not know sends its
chunks through the normalizer whole.

On the shared corpus (10.5 MB, 304k lines, BERT's pipeline, a 2-core machine
with another job's builds on the other core) BERT's words count in
0.80-1.2 s, where the chunks took 2.7-4.0 s (the two run alternately in one
process) and the stages text by text 12.5 s: about 0.46 s goes to the rules of its 58k distinct code points (the
shared corpus's adversarial file alone holds 52k), 0.15 s to the compiled
loop, 0.06 s to counting, and 0.1 s to the 7.4k distinct chunks with Hangul
that the stages take.

>>> c = count_words(["Hello, hello!"], stages(BERT_NORMALIZER, BERT_PRE_TOKENIZER))
>>> sorted(c.items())
[(b'!', 1), (b',', 1), (b'hello', 2)]
"""

from __future__ import annotations

import itertools
import operator
from collections import Counter
from collections.abc import Iterable
from typing import Any, Optional

from fasttok.errors import FasttokError
from fasttok.loaders.hf_stage_json import normalizer_from_json, pre_tokenizer_from_json
from fasttok.models._wordpiece import CodePointRules
from fasttok.models.hf_bert_rule import bert_rule, each_normalized
from fasttok.normalizers.bert import BertNormalizer
from fasttok.pre_tokenizers.split import BertPreTokenizer
from fasttok.shared.hf_unicode import combining
from fasttok.trainers._bpe_trainer import PieceCounter
from fasttok.trainers.bpe import PretokenBound

__all__ = ["BERT_NORMALIZER", "BERT_PRE_TOKENIZER", "stages", "count_words", "by_chunks",
           "count_stage_words"]

# what a user of tokenizers sets for WordPiece (BERT's), as tokenizer.json writes them
BERT_NORMALIZER = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                   "strip_accents": None, "lowercase": True}
BERT_PRE_TOKENIZER = {"type": "BertPreTokenizer"}


# texts a compiled call: enough that its cost is nothing beside theirs, few
# enough that its buffers stay small
_BATCH = 4096
_LEFT = 8 * _BATCH

_CHAR_LOCAL = {"BertNormalizer", "Lowercase", "NFD", "NFKD", "StripAccents"}
_CUT_AT_SPACES = {"BertPreTokenizer", "Whitespace", "WhitespaceSplit"}


def by_chunks(normalizer: Optional[dict], pre_tokenizer: Optional[dict]) -> bool:
    """Whether the words of a text are those of its space-separated chunks
    under these stages, character by character (see the module notes).

    >>> by_chunks(BERT_NORMALIZER, BERT_PRE_TOKENIZER), by_chunks({"type": "NFC"}, BERT_PRE_TOKENIZER)
    (True, False)
    """
    def local(spec: Optional[dict]) -> bool:
        if spec is None:
            return True
        if spec.get("type") == "Sequence":
            return all(map(local, spec.get("normalizers") or [None]))
        return spec.get("type") in _CHAR_LOCAL

    return (isinstance(pre_tokenizer, dict) and pre_tokenizer.get("type") in _CUT_AT_SPACES
            and (normalizer is None or isinstance(normalizer, dict)) and local(normalizer))


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


def _texts(texts: Iterable[str]) -> Iterable[str]:
    for text in texts:
        if not isinstance(text, str):
            raise TypeError(f"texts must be str, not {type(text).__name__}")
        yield text


def _count_chunks(texts: Iterable[str], pipeline: tuple, counter: PieceCounter) -> None:
    normalizer, pre_tokenizer = pipeline
    normalize = (lambda t: t) if normalizer is None else normalizer.normalize_str
    seen = itertools.count()
    try:
        # one pass in C: the texts (numbered as they go) cut at spaces, counted
        chunks = Counter(itertools.chain.from_iterable(map(
            operator.methodcaller("split", " "), map(operator.itemgetter(0), zip(texts, seen)))))
    except (TypeError, AttributeError) as exc:
        raise TypeError(f"texts must be str ({exc})") from None
    n_texts = next(seen)
    n_bytes = sum(len(c.encode("utf-8", "surrogatepass")) * n for c, n in chunks.items())
    n_bytes += max(0, sum(chunks.values()) - n_texts)  # the spaces
    table: dict = {}
    whole: set = set()
    for c, out in each_normalized(sorted(set("".join(chunks))), normalize):
        # a normalization of starters only (combining class 0 in tokenizers'
        # tables) is one that canonical reordering never moves
        if not any(map(combining, out)):
            table[ord(c)] = out
        else:
            whole.add(c)
    normalized: Counter = Counter()
    for chunk, count in chunks.items():
        text = normalize(chunk) if whole and not whole.isdisjoint(chunk) else chunk.translate(table)
        normalized[text] += count
    del chunks
    split = pre_tokenizer.split_str
    add = counter.add_pieces
    for text, count in normalized.items():
        add(split(text), 0, count)
    counter.add_pieces((), n_bytes)


def _count_by_rules(texts: Iterable[str], rules, pipeline: tuple, counter: PieceCounter,
                    bound: Optional[PretokenBound]) -> None:
    # a batch of texts at a time, its words in one buffer from the compiled
    # rules counted in C; a text holding a character the rules leave to the
    # stages is kept aside, at most _LEFT of them at a time (a Korean corpus
    # is nearly all such texts: memory must not follow it)
    left: list = []
    rest = iter(texts)
    while batch := tuple(itertools.islice(rest, _BATCH)):
        words, ends, others, size = rules.words(batch)
        counter.add_words(words, ends, size)
        left.extend(map(batch.__getitem__, others))
        if len(left) >= _LEFT:
            _count_left(left, rules, pipeline, counter)
            left = []
        if bound is not None:
            bound.keep_within(counter)
    if left:
        _count_left(left, rules, pipeline, counter)
        if bound is not None:
            bound.keep_within(counter)


def _count_left(left: list, rules, pipeline: tuple, counter: PieceCounter) -> None:
    # the texts the rules left: cut at their spaces, the chunks through the
    # rules again, each distinct chunk still holding such a character
    # through the stages once
    chunks = list(itertools.chain.from_iterable(map(operator.methodcaller("split", " "), left)))
    words, ends, others, size = rules.words(chunks)
    counter.add_words(words, ends, size + len(chunks) - len(left))  # and the spaces
    normalizer, pre_tokenizer = pipeline
    normalize = str if normalizer is None else normalizer.normalize_str
    for chunk, count in Counter(map(chunks.__getitem__, others)).items():
        counter.add_pieces(pre_tokenizer.split_str(normalize(chunk)),
                           len(chunk.encode("utf-8", "surrogatepass")) * count, count)


def count_words(texts: Iterable[str], pipeline: tuple, chunked: bool = False,
                bound: Optional[PretokenBound] = None) -> PieceCounter:
    """Count the words of ``texts`` under ``(normalizer, pre_tokenizer)``;
    ``chunked``: by space-separated chunks (only where :func:`by_chunks` says
    so), BERT's stages through their compiled rules; ``bound`` caps the
    distinct words held (:class:`~fasttok.trainers.bpe.PretokenBound`; other
    char-by-char stages then count text by text, as their chunk counting
    holds every distinct chunk).

    >>> sorted(count_words(["a b", "a"], (None, None)).items())
    [(b'a', 1), (b'a b', 1)]
    """
    counter = PieceCounter()
    if chunked:
        normalizer, pre_tokenizer = pipeline
        if (type(pre_tokenizer) is BertPreTokenizer
                and (normalizer is None or type(normalizer) is BertNormalizer)):
            _count_by_rules(texts, CodePointRules(bert_rule(normalizer, pre_tokenizer)),
                            pipeline, counter, bound)
            return counter
        if bound is None:
            _count_chunks(texts, pipeline, counter)
            return counter
    normalizer, pre_tokenizer = pipeline
    normalize: Any = None if normalizer is None else normalizer.normalize_str
    split: Any = None if pre_tokenizer is None else pre_tokenizer.split_str
    add = counter.add_pieces
    for text in _texts(texts):
        n = len(text.encode("utf-8", "surrogatepass"))
        if normalize is not None:
            text = normalize(text)
        pieces = [text] if split is None else split(text)
        add([p for p in pieces if p], n)
        if bound is not None:
            bound.keep_within(counter)
    return counter


def count_stage_words(texts: Iterable[str], normalizer: Optional[dict],
                      pre_tokenizer: Optional[dict],
                      bound: Optional[PretokenBound] = None) -> PieceCounter:
    """Count the words of ``texts`` (an iterable of str, not one str) behind
    the ``tokenizer.json`` objects ``normalizer`` and ``pre_tokenizer``, by
    chunks where that gives the same counts; ``bound`` as in :func:`count_words`.

    >>> sorted(count_stage_words(["a b", "a"], None, {"type": "Whitespace"}).items())
    [(b'a', 2), (b'b', 1)]
    """
    if isinstance(texts, (str, bytes)):
        raise TypeError("texts is an iterable of str (a list, a file's lines), not one "
                        f"{type(texts).__name__}: wrap a single text in a list")
    return count_words(texts, stages(normalizer, pre_tokenizer),
                       by_chunks(normalizer, pre_tokenizer), bound)
