"""Replace: every match of a string or Oniguruma pattern becomes ``content``.

>>> Replace(" ", "▁").normalize_str("a b")
'a▁b'
>>> Replace(r"\\s+", " ", regex=True).normalize_str("a \\t b")
'a b'
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where a text is replaced as a Python string: a compiled walk never is
    from fasttok.shared.normalized import NormalizedString

__all__ = ["Replace"]


class Replace:
    """``tokenizers.normalizers.Replace``; ``pattern`` is a literal string,
    or an Oniguruma regex with ``regex=True``.

    >>> Replace("", "_").normalize_str("ab")
    '_a_b_'
    """

    def __init__(self, pattern: str, content: str, *, regex: bool = False,
                 compiled: Any = None) -> None:
        # compiled: the regex's compile_onig, made already (a load compiles
        # it to check the file, and builds this stage on first use)
        self.pattern = pattern
        self.content = content
        self.regex = regex
        if regex:
            if compiled is None:
                # imported for a regex only (~1 ms of a load, Llama 2's, whose
                # Replace is of a string); compiled here, as it checks the pattern
                from fasttok.shared.regex_translate import compile_onig

                compiled = compile_onig(pattern)
            self._compiled = compiled

    @functools.cached_property
    def _compiled(self):
        # a string's matcher, compiled on first use: normalize_str replaces
        # it without one, and a cold re.compile was ~0.1 ms of a load
        return re.compile(re.escape(self.pattern))

    def __repr__(self) -> str:
        kind = "Regex" if self.regex else "String"
        return f"Replace({kind}({self.pattern!r}), {self.content!r})"

    def normalize(self, ns: NormalizedString) -> None:
        ns.replace(self._compiled, self.content)

    def normalize_str(self, text: str) -> str:
        if self.pattern and not self.regex:
            return text.replace(self.pattern, self.content)
        from fasttok.shared.normalized import find_matches

        return "".join(self.content if hit else text[s:e]
                       for (s, e), hit in find_matches(self._compiled, text))
