"""The ``truncation`` and ``padding`` of a ``tokenizer.json``: the drop-in's
settings (they work on its ``Encoding``), read and checked as ``tokenizers``
0.23.3 reads them. The post-processor is read with the other stages
(:mod:`fasttok.loaders.hf_stage_json`).

>>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
>>> truncation_from_json({"max_length": 128, "strategy": "LongestFirst", "stride": 0},
...                      "$.truncation", fail).direction
'right'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fasttok.shared.json_fields import U32, U64, Fields, describe

if TYPE_CHECKING:
    from fasttok.post_processors.padding import PaddingParams
    from fasttok.post_processors.truncation import TruncationParams

__all__ = ["truncation_from_json", "padding_from_json"]

_STRATEGIES = {"LongestFirst": "longest_first", "OnlyFirst": "only_first",
               "OnlySecond": "only_second"}
_DIRECTIONS = {"Left": "left", "Right": "right"}


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
