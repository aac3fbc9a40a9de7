"""llama.cpp's added tokens: their attributes and the partition of text at them.

llama.cpp (``tokenizer_st_partition``) searches the text for every token
whose attributes say CONTROL, USER_DEFINED or UNKNOWN, *longest token first*
(not leftmost first): each one splits every remaining fragment at all its
occurrences before the next one is looked at. USER_DEFINED tokens are always
matched; CONTROL and UNKNOWN ones only when special tokens are parsed
(``PARSED_ONLY``). A token with LSTRIP/RSTRIP eats the ASCII whitespace
beside it.

Finding which specials occur at all is the cost that matters for files with
hundreds of them (qwen2's 290 ``[PAD...]`` tokens): per first character,
:meth:`SpecialTextSearch.occurring` takes the cheaper of searching the
text for each special (in C) and visiting each place the character occurs.
"""

from __future__ import annotations

import os

from fasttok.shared.literal_match import first_char_test

__all__ = ["SpecialTokenPartition", "SpecialTextSearch", "ATTR_UNDEFINED", "ATTR_UNKNOWN", "ATTR_UNUSED",
           "ATTR_NORMAL", "ATTR_CONTROL", "ATTR_USER_DEFINED", "ATTR_BYTE", "ATTR_LSTRIP",
           "ATTR_RSTRIP", "SPECIAL", "PARSED_ONLY"]

# llama_token_attr bits (llama.h)
ATTR_UNDEFINED = 0
ATTR_UNKNOWN = 1 << 0
ATTR_UNUSED = 1 << 1
ATTR_NORMAL = 1 << 2
ATTR_CONTROL = 1 << 3
ATTR_USER_DEFINED = 1 << 4
ATTR_BYTE = 1 << 5
ATTR_LSTRIP = 1 << 7
ATTR_RSTRIP = 1 << 8
SPECIAL = ATTR_CONTROL | ATTR_USER_DEFINED | ATTR_UNKNOWN
PARSED_ONLY = ATTR_CONTROL | ATTR_UNKNOWN  # matched only when special tokens are parsed


_ASCII_SPACE = " \t\n\v\f\r"  # C isspace() in the C locale


class SpecialTextSearch:
    """Which of some special texts occur in a text.

    >>> search = SpecialTextSearch(["<s>", "[PAD1]", "[PAD2]"])
    >>> search.may_occur("a [b]"), sorted(search.occurring("x<s>[PAD2]"))
    (True, ['<s>', '[PAD2]'])
    """

    def __init__(self, texts: list) -> None:
        # first character -> second character ("" for one-character texts) -> texts
        self.by_first: dict = {}
        for t in texts:
            if t:
                self.by_first.setdefault(t[0], {}).setdefault(t[1:2], []).append(t)
        # first character -> the longest start all its texts share: where that
        # is not in the text, none of them is (qwen2's 290 "[PAD151646]"...
        # are one search for "[PAD151" instead of 290)
        self.shared_start = {c: os.path.commonprefix([t for ts in group.values() for t in ts])
                             for c, group in self.by_first.items()}
        #: whether some text's first character is in a text
        self.may_occur = first_char_test(texts)

    def occurring(self, text: str) -> set:
        """The special texts that occur in ``text`` (anywhere, overlaps included).

        Per first character, whichever is cheaper: look at each place the
        character occurs (~300 ns a place, in Python), or search the text for
        each special (~0.3 ns a character, in C).
        """
        found: set = set()
        for c in self.may_occur.firsts.intersection(text):
            if self.shared_start[c] not in text:
                continue
            group = self.by_first[c]
            n_texts = sum(map(len, group.values()))
            if text.count(c) * 1000 > n_texts * len(text):
                found.update(t for ts in group.values() for t in ts if t in text)
                continue
            pos = text.find(c)
            while pos >= 0:
                for t in group.get("", ()):
                    found.add(t)
                for t in group.get(text[pos + 1:pos + 2], ()):
                    if t not in found and text.startswith(t, pos):
                        found.add(t)
                pos = text.find(c, pos + 1)
        return found


class SpecialTokenPartition:
    """llama.cpp's ``tokenizer_st_partition`` over one vocabulary's special tokens.

    ``entries`` are ``(id, text, attributes)``. :meth:`partition` cuts a text
    into fragments: ``str`` (text still to encode) or ``int`` (a token id).

    >>> p = SpecialTokenPartition([(1, "<s>", ATTR_CONTROL), (2, "<|x|>", ATTR_USER_DEFINED)])
    >>> p.partition("a<s> <|x|>", p.entries)
    ['a', 1, ' ', 2]
    >>> p.partition("a<s> <|x|>", p.always)
    ['a<s> ', 2]
    """

    def __init__(self, entries: list) -> None:
        # entries: (id, text, attr), any order; llama.cpp tries longer texts first
        self.entries = sorted(entries, key=lambda e: (-len(e[1].encode("utf-8")), e[0]))
        self.always = [e for e in self.entries if not e[2] & PARSED_ONLY]
        #: the search for every special text, and for those matched always
        self.search_all = SpecialTextSearch([t for _, t, _ in self.entries])
        self.search_always = SpecialTextSearch([t for _, t, _ in self.always])

    def partition(self, text: str, entries: list) -> list:
        """``text`` cut at every occurrence of the ``entries`` (a subset of
        :attr:`entries`), longer texts first; LSTRIP/RSTRIP tokens take the
        ASCII whitespace beside them."""
        if not entries or not text:
            return [text] if text else []
        return [text[f[0]:f[1]] if len(f) == 2 else f[0] for f in self.partition_spans(text, entries)]

    def partition_spans(self, text: str, entries: list) -> list:
        """:meth:`partition`'s fragments as where they are in ``text``:
        ``(start, end)`` for text, ``(id, start, end)`` for a token, whose
        span holds the whitespace an LSTRIP/RSTRIP token takes.

        >>> p = SpecialTokenPartition([(1, "<s>", ATTR_CONTROL | ATTR_RSTRIP)])
        >>> p.partition_spans("a<s>  b", p.entries)
        [(0, 1), (1, 1, 6), (6, 7)]
        """
        if not entries or not text:
            return [(0, len(text))] if text else []
        # any other list of entries is a part of all of them
        search = self.search_always if entries is self.always else self.search_all
        if not search.may_occur(text):
            return [(0, len(text))]
        found = search.occurring(text)
        active = [e for e in entries if e[1] in found]
        if not active:
            return [(0, len(text))]
        frags: list = [(0, len(text))]
        for sid, needle, attr in active:
            lstrip, rstrip = attr & ATTR_LSTRIP, attr & ATTR_RSTRIP
            size = len(needle)
            out: list = []
            for frag in frags:
                if len(frag) == 3:
                    out.append(frag)
                    continue
                pos, end = frag
                while True:
                    at = text.find(needle, pos, end)
                    if at < 0:
                        break
                    left = at
                    if lstrip:
                        while left > pos and text[left - 1] in _ASCII_SPACE:
                            left -= 1
                    if left > pos:
                        out.append((pos, left))
                    pos = at + size
                    if rstrip:
                        while pos < end and text[pos] in _ASCII_SPACE:
                            pos += 1
                    out.append((sid, left, pos))
                if pos < end:
                    out.append((pos, end))
            frags = out
        return frags
