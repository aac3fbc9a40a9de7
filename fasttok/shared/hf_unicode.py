"""Unicode as Hugging Face ``tokenizers`` sees it, from ``_hf_unicode_data``.

``tokenizers`` takes its character classes from Rust crates frozen at old
Unicode versions (see ``tools/gen_hf_unicode.py``), so these are not
fasttok's Unicode 16.0 tables: the classes come as ``re`` character classes,
the scripts as a lookup by code point.

>>> import re
>>> re.findall(MARKS, "a\\u0301\\u0897")  # U+0897 is a mark only since Unicode 16.0
['\\u0301']
>>> script_of("a"), script_of("ア"), script_of(" ")
('Latin', 'Katakana', 'Common')
"""

from __future__ import annotations

import bisect

from fasttok.shared import _hf_unicode_data as _data

__all__ = ["NORMALIZATION_NEWER", "MARKS", "NONSPACING", "FORMAT", "PUNCTUATION", "LOWERCASE",
           "ONIG_WORD", "script_of"]


def _class(spec: str) -> str:
    parts = []
    for item in spec.split():
        lo, _, hi = item.partition("-")
        parts.append(f"\\U{int(lo, 16):08x}" + (f"-\\U{int(hi, 16):08x}" if hi else ""))
    return "[" + "".join(parts) + "]"


NORMALIZATION_NEWER = _class(_data.NORMALIZATION_NEWER)
MARKS = _class(_data.MARKS)
NONSPACING = _class(_data.NONSPACING)
FORMAT = _class(_data.FORMAT)
PUNCTUATION = _class(_data.PUNCTUATION)
ONIG_WORD = _class(_data.ONIG_WORD)
LOWERCASE = {int(cp, 16): "".join(chr(int(x, 16)) for x in seq.split(","))
             for cp, seq in (item.split(":") for item in _data.LOWERCASE.split())}

_RUN_STARTS = []
_RUN_SCRIPTS = []
for _item in _data.SCRIPT_RUNS.split():
    _start, _index = _item.split(":")
    _RUN_STARTS.append(int(_start, 16))
    _RUN_SCRIPTS.append(_data.SCRIPT_NAMES[int(_index)])
del _item, _start, _index


def script_of(c: str) -> str:
    """The Script property value of a character as of Unicode 9.0
    (``"Unknown"`` if unassigned then).

    >>> script_of("Ж"), script_of("\\U000e0000"), script_of("\\U0001f999")
    ('Cyrillic', 'Unknown', 'Unknown')
    """
    return _RUN_SCRIPTS[bisect.bisect_right(_RUN_STARTS, ord(c)) - 1]
