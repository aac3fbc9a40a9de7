"""Unicode as Hugging Face ``tokenizers`` sees it, from ``_hf_unicode_data``.

``tokenizers`` takes its character classes from Rust crates frozen at old
Unicode versions, and from Rust's standard library at Unicode 17.0 (see
``tools/gen_hf_unicode.py``), so these are not fasttok's Unicode 16.0 tables:
the classes come as ``re`` patterns of one character, the scripts as a lookup
by code point, the lowercase as a ``str.translate`` table.

The classes and tables are made when first imported from here (module
``__getattr__``), each alone: the lot was ~5 ms of every ``tokenizer.json``
load, and most files use one or none.

>>> import re
>>> from fasttok.shared.hf_unicode import LOWERCASE, MARKS
>>> re.findall(MARKS, "a\\u0301\\u0897")  # U+0897 is a mark only since Unicode 16.0
['\\u0301']
>>> script_of("a"), script_of("ア"), script_of(" ")
('Latin', 'Katakana', 'Common')
>>> LOWERCASE[ord("A")], LOWERCASE[0xA7CE]  # U+A7CE is new in Unicode 17.0
('a', '꟏')
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata

from fasttok.shared import _hf_unicode_data as _data

__all__ = ["NORMALIZATION_NEWER", "MARKS", "NONSPACING", "FORMAT", "PUNCTUATION", "LOWERCASE",
           "LOWERCASE_FIXES", "NUMERIC", "ONIG_WORD", "combining", "normalization_newer",
           "normalization_newer_at", "script_of"]


def _ranges(spec: str) -> list:
    out = []
    for item in spec.split():
        lo, _, hi = item.partition("-")
        out.append((int(lo, 16), int(hi or lo, 16)))
    return out


def _members(ranges: list) -> str:
    return "".join(f"\\U{lo:08x}" + (f"-\\U{hi:08x}" if hi != lo else "") for lo, hi in ranges)


def _class(spec: str) -> str:
    return "[" + _members(_ranges(spec)) + "]"


def _one_of(spec: str) -> str:
    # The class of _class as a pattern re checks in constant time: re tests a
    # class with members past the BMP one range at a time (a search of
    # NORMALIZATION_NEWER over 131 KB of English took 0.09 s), so the BMP
    # members make one class and the rest another, tried only past the BMP.
    ranges = _ranges(spec)
    bmp = [(lo, min(hi, 0xFFFF)) for lo, hi in ranges if lo <= 0xFFFF]
    astral = [(max(lo, 0x10000), hi) for lo, hi in ranges if hi > 0xFFFF]
    alternatives = [f"[{_members(bmp)}]"] if bmp else []
    if astral:
        alternatives.append(f"(?=[\\U00010000-\\U0010ffff])[{_members(astral)}]")
    return "(?:" + "|".join(alternatives) + ")"


def _lowercase() -> dict:
    return {int(cp, 16): "".join(chr(int(x, 16)) for x in seq.split(","))
            for cp, seq in (item.split(":") for item in _data.LOWERCASE.split())}


def _version(text: str) -> tuple:
    return tuple(int(x) for x in text.split("."))


# The entries of LOWERCASE that the interpreter's str.lower gets wrong (the
# letters its Unicode does not know yet), or None when its Unicode is newer
# than Rust's and would lowercase letters Rust does not know. Otherwise
# str.lower and the table agree on every other code point: Unicode never takes
# a case mapping back (case pair stability), so an older str.lower can only
# miss mappings. translate(LOWERCASE_FIXES) then str.lower costs a tenth of
# translate(LOWERCASE) on the shared corpus.
def _lowercase_fixes() -> dict | None:
    if _version(unicodedata.unidata_version) > _version(_data.RUST_STD_UNICODE_VERSION):
        return None
    return {cp: low for cp, low in _made("LOWERCASE").items() if chr(cp).lower() != low}


_MAKERS = {
    "NORMALIZATION_NEWER": lambda: _one_of(_data.NORMALIZATION_NEWER),
    "MARKS": lambda: _class(_data.MARKS),
    "NONSPACING": lambda: _one_of(_data.NONSPACING),
    "FORMAT": lambda: _class(_data.FORMAT),
    "PUNCTUATION": lambda: _one_of(_data.PUNCTUATION),
    "ONIG_WORD": lambda: _class(_data.ONIG_WORD),
    "NUMERIC": lambda: _one_of(_data.NUMERIC),
    "LOWERCASE": _lowercase,
    "LOWERCASE_FIXES": _lowercase_fixes,
}


def __getattr__(name: str):
    # a class or table of _MAKERS, made on first use and kept as a global
    maker = _MAKERS.get(name)
    if maker is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = maker()
    return value


def _made(name: str):
    # a class or table of _MAKERS (never None), made once
    found = globals().get(name)
    return __getattr__(name) if found is None else found



@functools.cache
def normalization_newer() -> "re.Pattern[str]":
    """:data:`NORMALIZATION_NEWER` compiled (on first use: importing should not cost it).

    >>> normalization_newer().match("\\u07fd") is not None
    True
    """
    return re.compile(_made("NORMALIZATION_NEWER"))


@functools.cache
def _newer_candidates() -> "re.Pattern[str]":
    # the BMP members and anything past the BMP, as one class: re scans for
    # it four times as fast as for the alternation of _one_of (80 against 20
    # MB/s on the multilingual corpus); the few past the BMP are checked after
    bmp = _members([(lo, min(hi, 0xFFFF)) for lo, hi in _ranges(_data.NORMALIZATION_NEWER)
                    if lo <= 0xFFFF])
    return re.compile(f"[{bmp}\\U00010000-\\U0010ffff]")


def normalization_newer_at(text: str) -> list:
    """The indices in ``text`` of the characters assigned after the
    normalization tables of ``tokenizers``.

    >>> normalization_newer_at("a\\u07fd\\U0001f600\\U0001e030")  # U+1F600 is 6.1
    [1, 3]
    """
    match = normalization_newer().match
    return [m.start() for m in _newer_candidates().finditer(text)
            if m.group() <= "\uffff" or match(m.group())]


def combining(c: str) -> int:
    """The canonical combining class of ``c`` in ``tokenizers``' normalization
    tables (Unicode 9.0): 0 for a character assigned later, the
    interpreter's class otherwise (a class never changes once assigned).

    >>> combining("\\u0301"), combining("\\u07fd")  # U+07FD is 220 since Unicode 11.0
    (230, 0)
    """
    return 0 if normalization_newer().match(c) else unicodedata.combining(c)


@functools.cache
def _script_runs() -> tuple:
    # (the first code point of each run of one script, the runs' scripts)
    starts, scripts = [], []
    for item in _data.SCRIPT_RUNS.split():
        start, index = item.split(":")
        starts.append(int(start, 16))
        scripts.append(_data.SCRIPT_NAMES[int(index)])
    return starts, scripts


def script_of(c: str) -> str:
    """The Script property value of a character as of Unicode 9.0
    (``"Unknown"`` if unassigned then).

    >>> script_of("Ж"), script_of("\\U000e0000"), script_of("\\U0001f999")
    ('Cyrillic', 'Unknown', 'Unknown')
    """
    starts, scripts = _script_runs()
    return scripts[bisect.bisect_right(starts, ord(c)) - 1]
