"""Token spans from one unit of a text into another (private; use
:meth:`fasttok.Encoding.encode_with_offsets`)."""

from array import array
from typing import Any

UNITS: tuple[str, str, str]

def spans_in_unit(
    text: str, spans: Any, source: str, unit: str, flat: bool = ...
) -> list[tuple[int, int]] | array[int]: ...
