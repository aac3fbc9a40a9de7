"""Precompiled: a SentencePiece ``precompiled_charsmap`` the way ``tokenizers`` runs it.

This is not SentencePiece's own walk (longest rule at each byte, which
:mod:`fasttok.normalizers._spm_normalizer` does). ``tokenizers`` cuts the
text into extended grapheme clusters; a cluster shorter than 6 bytes is
looked up whole, and if the *shortest* rule that is a prefix of it matches,
the whole cluster becomes that rule's replacement; otherwise each of its
characters is looked up alone. A replacement of ``k`` characters for ``m``
replaces the first ones, adds the rest (``k > m``), or has its last
character absorb the difference (``k < m``; an empty replacement lets the
character before it absorb it), which is where the alignments come from.

Clusters follow UAX #29 where it matters here, that is for clusters shorter
than 6 bytes: CR LF, marks, ZWJ/ZWNJ and the other extenders after a
character that is no control, and prepended concatenation marks before one.

>>> p = Precompiled(b"")
>>> p.normalize_str("abc")
'abc'
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from fasttok.shared._charsmap import CharsmapRules

if TYPE_CHECKING:  # annotations only: a compiled walk of this stage never needs the module
    from fasttok.shared.normalized import NormalizedString

__all__ = ["Precompiled", "cluster_classes", "graphemes"]

# the Mc that UAX #29 leaves out of Grapheme_Cluster_Break=Extend or SpacingMark
_NOT_SPACING = "\u102b\u102c\u1038\u1062-\u1064\u1067-\u106d\u1083\u1087-\u108c\u108f" \
               "\u109a-\u109c\u1a61\u1a63\u1a64\uaa7b\uaa7d\U00011720\U00011721"
_PREPEND = "[\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\u0d4e\U000110bd\U000110cd" \
           "\U000111c2\U000111c3\U0001193f\U00011941\U00011a3a\U00011a84-\U00011a89" \
           "\U00011d46\U00011f02]"
# what the classes below are made of, read by both the cluster pattern and
# cluster_classes: the general categories of a class, and literal members
# (class bodies of characters and ranges)
_EXTEND_CATEGORIES = ("M",)
_EXTENDERS = "\u200c\u200d\uff9e\uff9f\u0e33\u0eb3\U0001f3fb-\U0001f3ff\U000e0020-\U000e007f"
_CONTROL_CATEGORIES = ("Cc", "Cf", "Zl", "Zp", "Cs")
_NOT_CONTROL = "\u200c\u200d\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd"


# The classes below are built on first use, and the translator that spells
# them imported then: spelling out \p{M} and the control classes is most of
# what importing the stage would cost.
@functools.cache
def _extend() -> str:
    # Grapheme_Cluster_Break=Extend or SpacingMark, as classes: the marks
    # (less _NOT_SPACING), ZWNJ, ZWJ, the halfwidth sound marks, emoji
    # modifiers and tags, Thai/Lao SARA AM
    from fasttok.shared.regex_translate import char_class

    return ("(?:(?![" + _NOT_SPACING + "])" + char_class(*_EXTEND_CATEGORIES) +
            "|[" + _EXTENDERS + "])")


@functools.cache
def _control() -> str:
    from fasttok.shared.regex_translate import char_class

    return "(?:(?![" + _NOT_CONTROL + "])" + char_class(*_CONTROL_CATEGORIES) + ")"


@functools.cache
def _grapheme() -> "re.Pattern[str]":
    # compiled on first use: importing the stage should not cost its Unicode classes
    return re.compile(f"\r\n|{_PREPEND}*(?:(?!{_control()}).){_extend()}*|.", re.S)


# What may join the character after it (a prepend mark, CR) or not be
# encoded at all (a surrogate, which must fail as the cluster walk fails)
_JOINS_NEXT = "\r" + _PREPEND[1:-1] + "\\ud800-\\udfff"
# re checks a class holding characters past the BMP range by range, which
# made the plain runs slower than the walk (0.5 s on 131 KB): the classes
# below hold BMP characters and one range for all the rest, which always
# goes to the walk
_PAST_BMP = "\\U00010000-\\U0010ffff"


@functools.lru_cache(maxsize=None)
def _bmp_extenders() -> str:
    # the BMP characters _extend() matches, as class members
    return re.escape("".join(c for c in cluster_classes()[2] if c < "\U00010000"))


def _plain_runs(rule_chars: str) -> "re.Pattern[str]":
    # Runs of characters that are each a cluster of their own without a rule:
    # none has a rule, is a mark or an extender, or joins the next; the run
    # does not follow one that joins it and stops before a mark that would
    # join its last character. The cluster walk would copy them one by one;
    # normalize_str copies them whole and walks only what lies between (cut
    # at cluster boundaries, so the clusters there are the same).
    rules = re.escape("".join(c for c in rule_chars if c < "\U00010000"))
    extenders = _bmp_extenders()
    return re.compile(f"((?<![{_JOINS_NEXT}{_PAST_BMP}])"
                      f"(?:[^{_JOINS_NEXT}{rules}{extenders}{_PAST_BMP}]"
                      f"(?![{extenders}{_PAST_BMP}]))+)")


@functools.cache
def cluster_classes() -> tuple:
    """``(prepend, control, extend)``: the characters of the three classes
    :func:`graphemes` builds clusters from (a cluster is CR LF, or prepended
    marks, a character that is no control and its extenders, or any one
    character), each as one ``str``, for a compiled walk that cuts clusters
    the same way. Built once, from the cluster pattern's classes.

    >>> prepend, control, extend = cluster_classes()
    >>> "\\u0600" in prepend, "\\r" in control, "\\u0301" in extend, "a" in prepend + control + extend
    (True, True, True, False)
    """
    # From the classes' data and the compiled Unicode tables their
    # patterns are spelled from, not by scanning code points with the
    # patterns (that took 0.12 s, on the first encode of every Unigram file),
    # one sweep of the tables a class (a set of each category's characters
    # took 9 ms); a slow test scans every code point with the patterns.
    from fasttok.shared._unicode import code_points

    # code_points leaves out the characters each class leaves out as it
    # sweeps the tables, and gives the marks in order: the extenders join
    # them in one merge of two sorted runs (a set of them sorted, and a
    # Python test of each character, were 80% of a first call's 11.3M
    # instructions)
    prepend = "".join(sorted(_members(_PREPEND[1:-1])))
    control = code_points(*_CONTROL_CATEGORIES, leave_out="".join(_members(_NOT_CONTROL)))
    extenders = _members(_EXTENDERS)
    extend = list(code_points(*_EXTEND_CATEGORIES,
                              leave_out="".join(_members(_NOT_SPACING) | extenders)))
    extend += sorted(extenders)
    extend.sort()
    return prepend, control, "".join(extend)


def _members(body: str) -> set:
    # the characters of a class body of characters and ranges ("a-c")
    out = set()
    at = 0
    while at < len(body):
        if body[at + 1:at + 2] == "-" and at + 2 < len(body):
            out.update(map(chr, range(ord(body[at]), ord(body[at + 2]) + 1)))
            at += 3
        else:
            out.add(body[at])
            at += 1
    return out


def graphemes(text: str) -> list:
    """``text`` cut into extended grapheme clusters (as far as clusters under 6 bytes go).

    >>> graphemes("e\\u0301a\\r\\n") == ["e\\u0301", "a", "\\r\\n"]
    True
    """
    return _grapheme().findall(text)


def _replace(transformations: list, old: str, new: str) -> None:
    # tokenizers' precompiled::replace, report by report
    transformations.extend([c, 0] for c in new)
    diff = len(new) - len(old)
    if diff > 0:
        for item in transformations[-diff:]:
            item[1] = 1
    elif diff < 0 and transformations:
        transformations[-1][1] += diff


class Precompiled:
    """``tokenizers.normalizers.Precompiled`` over a ``precompiled_charsmap`` blob.

    >>> Precompiled(b"").normalize_str("")
    ''
    """

    def __init__(self, charsmap: bytes, rules: "CharsmapRules | None" = None) -> None:
        # rules: charsmap's, read already (a load reads them to check the
        # file, and builds this stage on first use)
        self._rules = CharsmapRules(bytes(charsmap)) if rules is None else rules
        self._size = len(charsmap)
        self._cache: dict = {}
        # normalize_str's plain runs, made by its first call: a file whose
        # compiled walk runs the charsmap never needs them, and making them
        # (every rule's character, the cluster classes, a regex of them)
        # was most of a T5 conversion's load
        self._plain: "re.Pattern[str] | None" = None

    def __repr__(self) -> str:
        return f"Precompiled(<{self._size} bytes>)"

    @property
    def rules(self) -> CharsmapRules:
        """The charsmap's rules (what a compiled walk looks clusters and each
        character alone up in).

        >>> Precompiled(b"").rules.first_rule(b"a") is None
        True
        """
        return self._rules

    def _rule(self, chunk: str):
        found = self._cache.get(chunk, self)
        if found is self:
            found = self._cache[chunk] = self._rules.first_rule(chunk.encode("utf-8"))
        return found

    def _reports(self, text: str) -> list | None:
        transformations: list = []
        modified = False
        rule = self._rule
        for g in graphemes(text):
            if len(g) == 1 or len(g.encode("utf-8")) < 6:
                norm = rule(g)
                if norm is not None:
                    modified = True
                    _replace(transformations, g, norm)
                    continue
                if len(g) == 1:
                    transformations.append([g, 0])
                    continue
            for c in g:
                norm = rule(c)
                if norm is not None:
                    modified = True
                    _replace(transformations, c, norm)
                else:
                    transformations.append([c, 0])
        return transformations if modified else None

    def normalize(self, ns: NormalizedString) -> None:
        reports = self._reports(ns.normalized)
        if reports is not None:
            ns.transform(reports, 0)

    def _walk_str(self, text: str) -> str:
        reports = self._reports(text)
        return text if reports is None else "".join(c for c, _ in reports)

    def normalize_str(self, text: str) -> str:
        if self._plain is None:
            self._plain = _plain_runs(self._rules.rule_chars())
        # split on the plain runs' group: [walked, plain, walked, ..., walked]
        parts = self._plain.split(text)
        parts[::2] = [self._walk_str(p) if p else p for p in parts[::2]]
        return "".join(parts)
