"""BertNormalizer: BERT's clean-up, CJK spacing, accent stripping, lowercasing.

In ``tokenizers``' order: ``clean_text`` drops NUL, U+FFFD and the "other"
characters (Cc, Cf, Cn, Co, Cs, but not tab, newline or carriage return) and
turns whitespace into a space; ``handle_chinese_chars`` puts a space on
either side of each CJK ideograph (all three take its span);
``strip_accents`` (when ``None``, it follows ``lowercase``) is NFD then
dropping nonspacing marks (Mn only); ``lowercase`` is Rust's per-character
lowercasing. Format characters and nonspacing marks are Unicode 8.0's, as
in the ``unicode_categories`` crate (:mod:`fasttok.shared.hf_unicode`).

>>> BertNormalizer().normalize_str("Héllo\\u4e16\\x00 !")
'hello 世  !'
"""

from __future__ import annotations

import functools
import re

from fasttok.shared.normalized import NormalizedString

__all__ = ["BertNormalizer"]

_CJK = "\u4e00-\u9fff\u3400-\u4dbf\U00020000-\U0002a6df\U0002a700-\U0002b73f" \
       "\U0002b740-\U0002b81f\U0002b920-\U0002ceaf\uf900-\ufaff\U0002f800-\U0002fa1f"


@functools.cache
def _chinese() -> "re.Pattern[str]":
    # compiled on first use, as the classes below: a BERT file's load (the
    # module imported then) need not cost it
    return re.compile(f"[{_CJK}]")


@functools.cache
def _control() -> "re.Pattern[str]":
    # Cc is U+0000-001F and U+007F-009F for good (a Unicode stability policy);
    # spelled out here less tab, newline and CR, one class lets re scan for it
    # (a lookahead excluding those three took 2.7 times as long on English);
    # its modules imported here, ~1 ms each of a load that never needs them
    from fasttok.shared import hf_unicode
    from fasttok.shared.regex_translate import char_class

    return re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f" + char_class(
        "Co", "Cs", extra="\ufffd")[1:-1] + hf_unicode.FORMAT[1:-1] + "]+")


@functools.cache
def _nonspacing() -> "re.Pattern[str]":
    # compiled on first use, as _control: importing the stage should not
    # cost its Unicode classes (hf_unicode makes them when first asked for:
    # imported by name here, they were ~3 ms of the import)
    from fasttok.shared import hf_unicode

    return re.compile(hf_unicode.NONSPACING + "+")


@functools.cache
def _steps():
    # (lowercase, lowercase_ns, remove_class, normalize_form, normalize_text,
    # whitespace -> " " table): the stages' helpers, imported on first use
    # (the three modules were ~2 ms of all-MiniLM-L6-v2's load, whose
    # compiled walk asks the normalizer only when its first encode builds
    # its rules)
    from fasttok.normalizers.simple import lowercase, lowercase_ns
    from fasttok.normalizers.strip import WHITE_SPACE, remove_class
    from fasttok.normalizers.unicode_forms import normalize_form, normalize_text

    return (lowercase, lowercase_ns, remove_class, normalize_form, normalize_text,
            {ord(c): " " for c in WHITE_SPACE + "\t\n\r"})


class BertNormalizer:
    """``tokenizers.normalizers.BertNormalizer``.

    >>> BertNormalizer(lowercase=False).normalize_str("Àa")
    'Àa'
    >>> BertNormalizer(lowercase=False, strip_accents=True).normalize_str("Àa")
    'Aa'
    """

    def __init__(self, clean_text: bool = True, handle_chinese_chars: bool = True,
                 strip_accents: bool | None = None, lowercase: bool = True) -> None:
        self.clean_text = clean_text
        self.handle_chinese_chars = handle_chinese_chars
        self.strip_accents = strip_accents
        self.lowercase = lowercase

    def __repr__(self) -> str:
        return (f"BertNormalizer(clean_text={self.clean_text}, handle_chinese_chars="
                f"{self.handle_chinese_chars}, strip_accents={self.strip_accents}, "
                f"lowercase={self.lowercase})")

    @property
    def _strips(self) -> bool:
        return self.lowercase if self.strip_accents is None else self.strip_accents

    def normalize(self, ns: NormalizedString) -> None:
        _, lowercase_ns, remove_class, normalize_form, _, to_space = _steps()
        if self.clean_text:
            remove_class(ns, _control())
            ns.normalized = ns.normalized.translate(to_space)
        if self.handle_chinese_chars and _chinese().search(ns.normalized):
            chinese = _chinese().match
            ns.expand_chars([f" {c} " if chinese(c) else c for c in ns.normalized])
        if self._strips:
            normalize_form(ns, "NFD")
            remove_class(ns, _nonspacing())
        if self.lowercase:
            lowercase_ns(ns)

    def normalize_str(self, text: str) -> str:
        lowercase, _, _, _, normalize_text, to_space = _steps()
        if self.clean_text:
            text = _control().sub("", text).translate(to_space)
        if self.handle_chinese_chars:
            text = _chinese().sub(r" \g<0> ", text)
        if self._strips:
            text = _nonspacing().sub("", normalize_text(text, "NFD"))
        if self.lowercase:
            text = lowercase(text)
        return text
