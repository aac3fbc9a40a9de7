"""The Unicode normalization forms NFC, NFD, NFKC and NFKD, with alignments.

``tokenizers`` normalizes with ``unicode-normalization-alignments``, which
reports each output character as new (``1``), replacing (``0``) or absorbing
others (``-n``), and fasttok reproduces those reports: a character
decomposes into its first part (replacing) and new ones; canonical
reordering moves parts together with their reports; a composition merges the
second character's report into the first's, less one. The text itself is
the standard library's ``unicodedata.normalize``; the reports are only
computed when the text changes. The crate's tables are Unicode 9.0: a
character assigned later has no decomposition, combining class 0 and no
composition there, so text holding one goes through the reports instead
(or, for the text alone, is normalized between such characters, which
nothing moves or composes across).

This module is fasttok's one implementation of the four forms for
``tokenizer.json``: fused paths ask its stages
(:mod:`fasttok.formats.hf_byte_level`) or the same tables
(:func:`fasttok.shared.hf_unicode.combining`, :mod:`fasttok.models.hf_bert_rule`)
rather than the standard library.

>>> NFKC().normalize_str("ﬁ")
'fi'
>>> ns = NormalizedString("a\\u0301\\u0323"); NFC().normalize(ns)
>>> ns.normalized, ns.alignments
('ạ́', [(0, 1), (2, 3)])
"""

from __future__ import annotations

import functools
import unicodedata
from array import array

from fasttok.shared.hf_unicode import (combining, normalization_newer,
                                       normalization_newer_at)
from fasttok.shared.normalized import NormalizedString

__all__ = ["NFC", "NFD", "NFKC", "NFKD", "FORMS", "is_normalized", "normalize_form",
           "normalize_text"]

_COMPOSED: dict = {}


def _compose(a: str, b: str) -> str | None:
    key = a + b
    found = _COMPOSED.get(key)
    if found is None:
        c = unicodedata.normalize("NFC", key)
        found = _COMPOSED[key] = c if len(c) == 1 and not normalization_newer().match(c) else ""
    return found or None


def is_normalized(text: str, form: str) -> bool:
    """Whether ``text`` is in ``form`` as ``tokenizers`` normalizes: a quick
    check that may say no to a text that normalizing leaves alone.

    The interpreter's tables (Unicode 9.0 or later) answer: a character's
    decomposition and combining class never change once it is assigned, and
    to ``tokenizers`` a character assigned after 9.0 is a starter with no
    decomposition that composes with nothing, which can stop a reordering or a
    composition the interpreter would make but never starts one, so a text
    the interpreter finds normalized ``tokenizers`` leaves as it is.

    >>> is_normalized("\\u00e9", "NFC"), is_normalized("e\\u0301", "NFC")
    (True, False)
    """
    return unicodedata.is_normalized(form, text)


def _reports(text: str, form: str) -> list:
    decompose = "NFKD" if form in ("NFKC", "NFKD") else "NFD"
    chars: list = []
    for c in text:
        parts = c if normalization_newer().match(c) else unicodedata.normalize(decompose, c)
        chars.append([parts[0], 0])
        chars.extend([p, 1] for p in parts[1:])
    i, n = 0, len(chars)
    while i < n:
        # stable sort of each run of non-starters by combining class
        if combining(chars[i][0]):
            j = i
            while j < n and combining(chars[j][0]):
                j += 1
            chars[i:j] = sorted(chars[i:j], key=lambda item: combining(item[0]))
            i = j
        else:
            i += 1
    if form in ("NFD", "NFKD"):
        return chars
    out: list = []
    starter = -1
    last_class = -1
    for item in chars:
        cls = combining(item[0])
        if starter >= 0 and (last_class < cls or (last_class == 0 and starter == len(out) - 1)):
            composed = _compose(out[starter][0], item[0])
            if composed is not None:
                out[starter] = [composed, out[starter][1] + item[1] - 1]
                continue
        if cls == 0:
            starter = len(out)
            last_class = 0
        else:
            last_class = cls
        out.append(item)
    return out


def normalize_form(ns: NormalizedString, form: str) -> None:
    """Normalize ``ns`` to ``form`` (``"NFC"``, ``"NFD"``, ``"NFKC"`` or ``"NFKD"``) in place.

    >>> ns = NormalizedString("é"); normalize_form(ns, "NFD"); ns.alignments
    [(0, 1), (0, 1)]
    """
    text = ns.normalized
    if is_normalized(text, form):
        return
    ns.transform(_reports(text, form), 0)


def normalize_text(text: str, form: str) -> str:
    """``text`` in ``form``, as ``tokenizers`` normalizes it.

    >>> normalize_text("\u32ff", "NFKC")  # Unicode 12.1: the crate does not know it
    '㋿'
    """
    newer = normalization_newer_at(text)
    if not newer:
        return unicodedata.normalize(form, text)
    # a character the crate does not know decomposes to itself, has class 0
    # and composes with nothing, so nothing moves or composes across it: the
    # text between such characters normalizes on its own, and the
    # interpreter's tables are the crate's there (no composition of older
    # characters makes a newer one: Unicode excludes those). A Python loop a
    # character (_reports) was most of the time training spent normalizing
    # the shared corpus, and 22 KB/s for the fused NFC path.
    parts = []
    start = 0
    for at in newer:
        parts += (unicodedata.normalize(form, text[start:at]), text[at])
        start = at + 1
    parts.append(unicodedata.normalize(form, text[start:]))
    return "".join(parts)


# Per form, ranges of code points each of which is in the form and changes
# nothing before or after it (quick check Yes, combining class 0), so a text
# made of them alone is in the form (unicodedata.is_normalized says so
# without normalizing); tests/test_unicode_form_ranges.py checks every code
# point of them against the interpreter's tables. The compiled entry
# (fasttok.models._model_base.normal_first) asks them before the quick
# check: a line of Chinese is then a few comparisons a character, not two
# calls and a table walk (~90 of a qwen3 zh.txt line's ~1,300 ns).
_CJK = ((0x4E00, 0x9FFF),)  # the unified ideographs: every one assigned by Unicode 14
# dashes and quotes, CJK punctuation (the compatibility forms change a few)
_PUNCTUATION = ((0x2010, 0x2027), (0x3000, 0x3029))
_K_PUNCTUATION = ((0x2012, 0x2016), (0x2018, 0x2023), (0x2027, 0x2027), (0x3001, 0x3029))
_KANA = ((0x3041, 0x3096), (0x30A1, 0x30FA), (0x30FC, 0x30FE))
# NFC's other scripts and symbols of the shared corpora, where a line that
# left the ranges went to the quick check (12,296 of multi.txt's 23,761
# lines of its steady half, 13% of qwen3's instructions there): Hangul
# syllables, Greek and Cyrillic letters, Arabic letters, general
# punctuation, box drawing with the symbols around it, emoji.
# Each range holds only characters assigned by the interpreter's Unicode:
# a later one may be a combining mark.
_NFC_SCRIPTS = ((0xAC00, 0xD7A3), (0x38E, 0x3A1), (0x3A3, 0x482), (0x48A, 0x52F), (0x61B, 0x64A),
                (0x671, 0x6D5), (0x2028, 0x2064), (0x2460, 0x2ADB), (0x1F300, 0x1F6D7),
                (0x1F900, 0x1FA53))
# (the entry tries them in order: Chinese text's first)
STABLE_RANGES = {
    "NFC": _CJK + ((0xFF01, 0xFF5E), (0, 0x2FF)) + _PUNCTUATION + _KANA + ((0x309B, 0x309C),)
    + _NFC_SCRIPTS,
    "NFKC": _CJK + ((0, 0x9F),) + _K_PUNCTUATION + _KANA,
    "NFD": _CJK + ((0, 0xBF),) + _PUNCTUATION,
    "NFKD": _CJK + ((0, 0x9F),) + _K_PUNCTUATION,
}


class _Form:
    form = ""

    def __init__(self) -> None:
        #: ``is_normalized(text)``: :func:`is_normalized` in this form (if
        #: true, ``normalize_str`` leaves ``text`` alone), bound without a
        #: Python frame: the fused byte-level path asks it once a call, and
        #: two frames cost it 140 ns a line of English
        self.is_normalized = functools.partial(unicodedata.is_normalized, self.form)
        #: :data:`STABLE_RANGES` of this form as the compiled entry reads
        #: them: first and last code point of each, 32-bit words
        self.stable_ranges = array("I", [c for r in STABLE_RANGES[self.form] for c in r]).tobytes()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def normalize(self, ns: NormalizedString) -> None:
        normalize_form(ns, self.form)

    def normalize_str(self, text: str) -> str:
        return normalize_text(text, self.form)


class NFC(_Form):
    """Canonical composition (``tokenizers.normalizers.NFC``).

    >>> NFC().normalize_str("e\\u0301") == "\\u00e9"
    True
    """

    form = "NFC"


class NFD(_Form):
    """Canonical decomposition (``tokenizers.normalizers.NFD``).

    >>> len(NFD().normalize_str("\\u00e9"))
    2
    """

    form = "NFD"


class NFKC(_Form):
    """Compatibility composition (``tokenizers.normalizers.NFKC``).

    >>> NFKC().normalize_str("①")
    '1'
    """

    form = "NFKC"


class NFKD(_Form):
    """Compatibility decomposition (``tokenizers.normalizers.NFKD``).

    >>> NFKD().normalize_str("ﬀ")
    'ff'
    """

    form = "NFKD"


#: the stage of each form, by its ``tokenizer.json`` type
FORMS = {stage.form: stage for stage in (NFC, NFD, NFKC, NFKD)}
