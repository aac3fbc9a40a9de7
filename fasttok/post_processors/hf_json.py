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

from fasttok.post_processors.bert import BertProcessing
from fasttok.post_processors.byte_level import ByteLevel
from fasttok.post_processors.padding import PaddingParams
from fasttok.post_processors.roberta import RobertaProcessing
from fasttok.post_processors.sequence import Sequence
from fasttok.post_processors.template import TemplateProcessing
from fasttok.post_processors.truncation import TruncationParams

__all__ = ["post_processor_from_json", "truncation_from_json", "padding_from_json"]

_TYPES = ("RobertaProcessing", "BertProcessing", "ByteLevel", "TemplateProcessing", "Sequence")
# the variants tokenizers reads only under their own "type" (impl_serde_type)
_TAGGED = frozenset({"ByteLevel", "Sequence"})
_STRATEGIES = {"LongestFirst": "longest_first", "OnlyFirst": "only_first",
               "OnlySecond": "only_second"}
_DIRECTIONS = {"Left": "left", "Right": "right"}


class _Mismatch(Exception):
    # one variant's fields are not there: (JSON path, what was expected)
    def __init__(self, where: str, problem: str) -> None:
        super().__init__(where, problem)
        self.where = where
        self.problem = problem


def _field(spec: dict, name: str, where: str):
    if name not in spec:
        raise _Mismatch(f"{where}.{name}", "missing field")
    return spec[name]


def _int(value, where: str, limit: int = 2 ** 64) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < limit:
        raise _Mismatch(where, f"expected an integer from 0 to {limit - 1}, got {value!r}")
    return value


def _u32(value, where: str) -> int:
    return _int(value, where, 2 ** 32)


def _bool(value, where: str) -> bool:
    if not isinstance(value, bool):
        raise _Mismatch(where, f"expected true or false, got {value!r}")
    return value


def _str(value, where: str) -> str:
    if not isinstance(value, str):
        raise _Mismatch(where, f"expected a string, got {value!r}")
    return value


def _list(value, where: str) -> list:
    if not isinstance(value, list):
        raise _Mismatch(where, f"expected a list, got {value!r}")
    return value


def _object(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise _Mismatch(where, f"expected an object, got {value!r}")
    return value


def _token(spec: dict, name: str, where: str) -> tuple:
    value = _list(_field(spec, name, where), f"{where}.{name}")
    if len(value) != 2:
        raise _Mismatch(f"{where}.{name}", f"expected [token, id], got {value!r}")
    return (_str(value[0], f"{where}.{name}[0]"), _u32(value[1], f"{where}.{name}[1]"))


def _roberta(spec: dict, where: str, fail) -> RobertaProcessing:
    return RobertaProcessing(_token(spec, "sep", where), _token(spec, "cls", where),
                             _bool(_field(spec, "trim_offsets", where), f"{where}.trim_offsets"),
                             _bool(_field(spec, "add_prefix_space", where),
                                   f"{where}.add_prefix_space"))


def _bert(spec: dict, where: str, fail) -> BertProcessing:
    return BertProcessing(_token(spec, "sep", where), _token(spec, "cls", where))


def _byte_level(spec: dict, where: str, fail) -> ByteLevel:
    use_regex = _bool(spec["use_regex"], f"{where}.use_regex") if "use_regex" in spec else True
    return ByteLevel(_bool(_field(spec, "add_prefix_space", where), f"{where}.add_prefix_space"),
                     _bool(_field(spec, "trim_offsets", where), f"{where}.trim_offsets"),
                     use_regex)


def _piece(value, where: str) -> tuple:
    value = _object(value, where)
    if len(value) != 1 or next(iter(value)) not in ("Sequence", "SpecialToken"):
        raise _Mismatch(where, 'expected {"Sequence": {...}} or {"SpecialToken": {...}}')
    kind, body = next(iter(value.items()))
    at = f"{where}.{kind}"
    body = _object(body, at)
    name = _str(_field(body, "id", at), f"{at}.id")
    type_id = _u32(_field(body, "type_id", at), f"{at}.type_id")
    if kind == "Sequence" and name not in ("A", "B"):
        raise _Mismatch(f"{at}.id", f'expected "A" or "B", got {name!r}')
    return (kind == "Sequence", name, type_id)


def _template(spec: dict, where: str, fail) -> TemplateProcessing:
    templates = []
    for key in ("single", "pair"):
        at = f"{where}.{key}"
        templates.append([_piece(p, f"{at}[{i}]")
                          for i, p in enumerate(_list(_field(spec, key, where), at))])
    at = f"{where}.special_tokens"
    specials = []
    for name, body in _object(_field(spec, "special_tokens", where), at).items():
        here = f"{at}[{name!r}]"
        body = _object(body, here)
        _str(_field(body, "id", here), f"{here}.id")
        ids = [_u32(v, f"{here}.ids[{i}]")
               for i, v in enumerate(_list(_field(body, "ids", here), f"{here}.ids"))]
        tokens = [_str(v, f"{here}.tokens[{i}]")
                  for i, v in enumerate(_list(_field(body, "tokens", here), f"{here}.tokens"))]
        if len(ids) != len(tokens):
            raise fail(here, f"{len(ids)} ids but {len(tokens)} tokens; they must be as many")
        specials.append({"id": name, "ids": ids, "tokens": tokens})
    for i, (is_seq, name, _) in enumerate(templates[0]):
        if is_seq and name == "B":
            raise fail(f"{where}.single[{i}].Sequence.id",
                       "the single-input template uses $B, which tokenizers cannot apply "
                       "(it panics on every input)")
    defined = {s["id"] for s in specials}
    for key, template in zip(("single", "pair"), templates):
        for i, (is_seq, name, _) in enumerate(template):
            if not is_seq and name not in defined:
                raise fail(f"{where}.{key}[{i}].SpecialToken.id",
                           f"special token {name!r} is not in special_tokens")
    return TemplateProcessing(templates[0], templates[1], specials, require_pair=False)


def _sequence(spec: dict, where: str, fail) -> Sequence:
    at = f"{where}.processors"
    items = _list(_field(spec, "processors", where), at)
    out = []
    for i, item in enumerate(items):
        if item is None:
            raise _Mismatch(f"{at}[{i}]", "expected a post-processor, got null")
        out.append(post_processor_from_json(item, f"{at}[{i}]", fail))
    return Sequence(out)


_READERS = {"RobertaProcessing": _roberta, "BertProcessing": _bert, "ByteLevel": _byte_level,
            "TemplateProcessing": _template, "Sequence": _sequence}


def post_processor_from_json(spec: dict | None, where: str, fail):
    """The post-processor of ``spec`` (``None`` for ``null``).

    >>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
    >>> post_processor_from_json({"type": "ByteLevel", "add_prefix_space": True,
    ...                           "trim_offsets": False}, "$.post_processor", fail)
    ByteLevel(add_prefix_space=True, trim_offsets=False, use_regex=True)
    """
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise fail(where, f"expected a post-processor object, got {spec!r}")
    kind = spec.get("type")
    if not isinstance(kind, str) or kind not in _READERS:
        raise fail(f"{where}.type", f"unknown post-processor type {kind!r}; "
                                    f"known: {', '.join(_TYPES)}")
    first = None
    for name in _TYPES:
        if name in _TAGGED and name != kind:
            continue
        try:
            return _READERS[name](spec, where, fail)
        except _Mismatch as mismatch:
            if name == kind:
                first = mismatch
    raise fail(first.where, f"{kind}: {first.problem}")


def _checked(read, spec, where: str, fail):
    try:
        return read(spec, where)
    except _Mismatch as mismatch:
        raise fail(mismatch.where, mismatch.problem) from None


def _enum(value, names: dict, where: str) -> str:
    if not isinstance(value, str) or value not in names:
        raise _Mismatch(where, f"expected one of {', '.join(names)}, got {value!r}")
    return names[value]


def _truncation(spec, where: str) -> TruncationParams:
    spec = _object(spec, where)
    direction = (_enum(spec["direction"], _DIRECTIONS, f"{where}.direction")
                 if "direction" in spec else "right")
    return TruncationParams(
        max_length=_int(_field(spec, "max_length", where), f"{where}.max_length"),
        stride=_int(_field(spec, "stride", where), f"{where}.stride"),
        strategy=_enum(_field(spec, "strategy", where), _STRATEGIES, f"{where}.strategy"),
        direction=direction)


def _padding(spec, where: str) -> PaddingParams:
    spec = _object(spec, where)
    strategy = _field(spec, "strategy", where)
    if strategy == "BatchLongest":
        length = None
    elif isinstance(strategy, dict) and list(strategy) == ["Fixed"]:
        length = _int(strategy["Fixed"], f"{where}.strategy.Fixed")
    else:
        raise _Mismatch(f"{where}.strategy", f'expected "BatchLongest" or {{"Fixed": n}}, '
                                             f"got {strategy!r}")
    multiple = spec.get("pad_to_multiple_of")
    return PaddingParams(
        length=length,
        direction=_enum(_field(spec, "direction", where), _DIRECTIONS, f"{where}.direction"),
        pad_to_multiple_of=(None if multiple is None
                            else _int(multiple, f"{where}.pad_to_multiple_of")),
        pad_id=_u32(_field(spec, "pad_id", where), f"{where}.pad_id"),
        pad_type_id=_u32(_field(spec, "pad_type_id", where), f"{where}.pad_type_id"),
        pad_token=_str(_field(spec, "pad_token", where), f"{where}.pad_token"))


def truncation_from_json(spec: dict | None, where: str, fail) -> TruncationParams | None:
    """The truncation parameters of ``spec`` (``None`` for ``null``).

    >>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
    >>> truncation_from_json({"max_length": 8, "strategy": "Sideways", "stride": 0}, "$.truncation", fail)
    Traceback (most recent call last):
    ValueError: $.truncation.strategy: expected one of LongestFirst, OnlyFirst, OnlySecond, got 'Sideways'
    """
    return None if spec is None else _checked(_truncation, spec, where, fail)


def padding_from_json(spec: dict | None, where: str, fail) -> PaddingParams | None:
    """The padding parameters of ``spec`` (``None`` for ``null``).

    >>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
    >>> padding_from_json({"strategy": {"Fixed": 128}, "direction": "Right", "pad_id": 0,
    ...                    "pad_type_id": 0, "pad_token": "[PAD]"}, "$.padding", fail).length
    128
    """
    return None if spec is None else _checked(_padding, spec, where, fail)
