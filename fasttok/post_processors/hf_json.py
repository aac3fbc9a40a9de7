"""The ``post_processor``, ``truncation`` and ``padding`` of a ``tokenizer.json``.

``tokenizers`` reads a post-processor as an untagged enum: the first of
RobertaProcessing (``sep``, ``cls``, ``trim_offsets``, ``add_prefix_space``),
BertProcessing (``sep``, ``cls``), ByteLevel (``add_prefix_space``,
``trim_offsets``, optional ``use_regex``), TemplateProcessing (``single``,
``pair``, ``special_tokens``) and Sequence (``processors``) that reads the
object wins. The first two and TemplateProcessing go by their fields whatever
``type`` says (a RobertaProcessing without ``trim_offsets`` is read as
BertProcessing); ByteLevel and Sequence also need their own ``type``, so a
TemplateProcessing that carries ByteLevel's flags (Cohere's Command-R files)
is still a template. fasttok resolves the same way but asks for a known
``type``, and rejects at load what ``tokenizers`` would only fail on later: a
template naming a special token it does not define, a special token with more
ids than token strings.

>>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
>>> p = post_processor_from_json({"type": "BertProcessing", "sep": ["[SEP]", 102],
...                               "cls": ["[CLS]", 101]}, "$.post_processor", fail)
>>> p.added_tokens(True)
3
>>> truncation_from_json({"max_length": 128, "strategy": "LongestFirst", "stride": 0},
...                      "$.truncation", fail).direction
'right'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Optional

from fasttok.shared.built_once import made_later
from fasttok.shared.json_fields import OBJECT, STR, U32, U64, Fields, check, describe

if TYPE_CHECKING:
    from fasttok.post_processors.padding import PaddingParams
    from fasttok.post_processors.truncation import TruncationParams

__all__ = ["post_processor_from_json", "post_processor_maker", "truncation_from_json",
           "padding_from_json"]

_TYPES = ("RobertaProcessing", "BertProcessing", "ByteLevel", "TemplateProcessing", "Sequence")
# the variants tokenizers reads only under their own "type" (impl_serde_type)
_TAGGED = frozenset({"ByteLevel", "Sequence"})
_STRATEGIES = {"LongestFirst": "longest_first", "OnlyFirst": "only_first",
               "OnlySecond": "only_second"}
_DIRECTIONS = {"Left": "left", "Right": "right"}


class _Mismatch(Exception):
    # one variant's fields are not there: (JSON path, what was expected);
    # the variants read their fields with it as Fields' fail
    def __init__(self, where: str, problem: str) -> None:
        super().__init__(where, problem)
        self.where = where
        self.problem = problem


def _token(f: Fields, name: str) -> tuple:
    value = f.list(name)
    if len(value) != 2:
        raise _Mismatch(f.at(name), f"expected [token, id], got {describe(value)}")
    return (check(value[0], STR, f"{f.at(name)}[0]", _Mismatch),
            check(value[1], U32, f"{f.at(name)}[1]", _Mismatch))


# Each reader checks its variant's fields (the variants are tried in turn)
# and gives what builds its post-processor (made_later): the module is
# imported, and the object built, when something first asks for it
# (add_special_tokens; a load and an encode of ids do not).
def _roberta(f: Fields, fail):
    return made_later("fasttok.post_processors.roberta", "RobertaProcessing", _token(f, "sep"),
                      _token(f, "cls"), f.bool("trim_offsets"), f.bool("add_prefix_space"))


def _bert(f: Fields, fail):
    return made_later("fasttok.post_processors.bert", "BertProcessing", _token(f, "sep"),
                      _token(f, "cls"))


def _byte_level(f: Fields, fail):
    return made_later("fasttok.post_processors.byte_level", "ByteLevel",
                      f.bool("add_prefix_space"), f.bool("trim_offsets"),
                      f.bool("use_regex", default=True))


def _piece(value, where: str) -> tuple:
    f = Fields(value, where, _Mismatch)
    if len(value) != 1 or next(iter(value)) not in ("Sequence", "SpecialToken"):
        raise _Mismatch(where, 'expected {"Sequence": {...}} or {"SpecialToken": {...}}')
    kind = next(iter(value))
    body = f.object(kind)
    name = body.str("id")
    type_id = body.int("type_id", kind=U32)
    if kind == "Sequence" and name not in ("A", "B"):
        raise _Mismatch(body.at("id"), f'expected "A" or "B", got {name!r}')
    return (kind == "Sequence", name, type_id)


def _template(f: Fields, fail):
    templates = [[_piece(p, f"{f.at(key)}[{i}]") for i, p in enumerate(f.list(key))]
                 for key in ("single", "pair")]
    specials = []
    table = f.object("special_tokens")
    for name, body in table.spec.items():
        token = Fields(body, f"{table.where}[{name!r}]", _Mismatch)
        token.str("id")
        ids = token.items("ids", U32)
        tokens = token.items("tokens", STR)
        if len(ids) != len(tokens):
            raise fail(token.where, f"{len(ids)} ids but {len(tokens)} tokens; they must be as many")
        specials.append({"id": name, "ids": ids, "tokens": tokens})
    for i, (is_seq, name, _) in enumerate(templates[0]):
        if is_seq and name == "B":
            raise fail(f"{f.at('single')}[{i}].Sequence.id",
                       "the single-input template uses $B, which tokenizers cannot apply "
                       "(it panics on every input)")
    defined = {s["id"] for s in specials}
    for key, template in zip(("single", "pair"), templates):
        for i, (is_seq, name, _) in enumerate(template):
            if not is_seq and name not in defined:
                raise fail(f"{f.at(key)}[{i}].SpecialToken.id",
                           f"special token {name!r} is not in special_tokens")
    return made_later("fasttok.post_processors.template", "TemplateProcessing", templates[0],
                      templates[1], specials, require_pair=False)


def _sequence(f: Fields, fail):
    makers = []
    for i, item in enumerate(f.list("processors")):
        at = f"{f.at('processors')}[{i}]"
        if item is None:
            raise _Mismatch(at, "expected a post-processor, got null")
        makers.append(post_processor_maker(item, at, fail))

    def make():
        from fasttok.post_processors.sequence import Sequence
        return Sequence([m() for m in makers])

    return make


_READERS = {"RobertaProcessing": _roberta, "BertProcessing": _bert, "ByteLevel": _byte_level,
            "TemplateProcessing": _template, "Sequence": _sequence}


def post_processor_from_json(spec: dict | None, where: str, fail):
    """The post-processor of ``spec`` (``None`` for ``null``).

    >>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
    >>> post_processor_from_json({"type": "ByteLevel", "add_prefix_space": True,
    ...                           "trim_offsets": False}, "$.post_processor", fail)
    ByteLevel(add_prefix_space=True, trim_offsets=False, use_regex=True)
    """
    make = post_processor_maker(spec, where, fail)
    return None if make is None else make()


def post_processor_maker(spec: dict | None, where: str, fail) -> Optional[Callable]:
    """What builds the post-processor of ``spec`` when called (``None`` for
    ``null``), every field checked now, as :func:`post_processor_from_json`
    checks it.

    >>> make = post_processor_maker({"type": "BertProcessing", "sep": ["[SEP]", 1],
    ...                              "cls": ["[CLS]", 0]}, "$.post_processor", None)
    >>> make().added_tokens(False)
    2
    """
    if spec is None:
        return None
    check(spec, OBJECT, where, fail)
    kind = spec.get("type")
    if not isinstance(kind, str) or kind not in _READERS:
        raise fail(f"{where}.type", f"unknown post-processor type {kind!r}; "
                                    f"known: {', '.join(_TYPES)}")
    first = None
    fields = Fields(spec, where, _Mismatch)
    for name in _TYPES:
        if name in _TAGGED and name != kind:
            continue
        try:
            return _READERS[name](fields, fail)
        except _Mismatch as mismatch:
            if name == kind:
                first = mismatch
    raise fail(first.where, f"{kind}: {first.problem}")


# truncation's and padding's modules are the drop-in's (they work on its
# Encoding): imported only for a file that sets them
def _truncation(f: Fields) -> TruncationParams:
    from fasttok.post_processors.truncation import TruncationParams

    return TruncationParams(max_length=f.int("max_length"), stride=f.int("stride"),
                            strategy=f.choice("strategy", _STRATEGIES),
                            direction=f.choice("direction", _DIRECTIONS, default="right"))


def _padding(f: Fields) -> PaddingParams:
    from fasttok.post_processors.padding import PaddingParams

    strategy = f.spec.get("strategy")
    if strategy == "BatchLongest":
        length = None
    elif isinstance(strategy, dict) and list(strategy) == ["Fixed"]:
        length = Fields(strategy, f.at("strategy"), f.fail).int("Fixed")
    elif "strategy" not in f.spec:
        raise f.fail(f.at("strategy"), "missing field")
    else:
        raise f.fail(f.at("strategy"), f'expected "BatchLongest" or {{"Fixed": n}}, '
                                       f"got {describe(strategy)}")
    return PaddingParams(
        length=length, direction=f.choice("direction", _DIRECTIONS),
        pad_to_multiple_of=f.optional("pad_to_multiple_of", U64),
        pad_id=f.int("pad_id", kind=U32), pad_type_id=f.int("pad_type_id", kind=U32),
        pad_token=f.str("pad_token"))


def truncation_from_json(spec: dict | None, where: str, fail) -> TruncationParams | None:
    """The truncation parameters of ``spec`` (``None`` for ``null``).

    >>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
    >>> truncation_from_json({"max_length": 8, "strategy": "Sideways", "stride": 0}, "$.truncation", fail)
    Traceback (most recent call last):
    ValueError: $.truncation.strategy: unknown strategy 'Sideways'; known: LongestFirst, OnlyFirst, OnlySecond
    """
    return None if spec is None else _truncation(Fields(spec, where, fail))


def padding_from_json(spec: dict | None, where: str, fail) -> PaddingParams | None:
    """The padding parameters of ``spec`` (``None`` for ``null``).

    >>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
    >>> padding_from_json({"strategy": {"Fixed": 128}, "direction": "Right", "pad_id": 0,
    ...                    "pad_type_id": 0, "pad_token": "[PAD]"}, "$.padding", fail).length
    128
    """
    return None if spec is None else _padding(Fields(spec, where, fail))
