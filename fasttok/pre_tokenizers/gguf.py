"""Pre-tokenizers for GGUF ``gpt2`` vocabularies, by ``tokenizer.ggml.pre``, as llama.cpp splits.

llama.cpp pre-tokenizes byte-level BPE text with a *list* of regexes applied
in order: the first splits the text, each later one splits every piece the
previous produced, and text a regex does not match stays a piece of its own
between the matches (it is never dropped). This module reproduces that, with
llama.cpp's own reading of the patterns:

* A pattern using ``\\p{..}`` runs on a *collapsed* copy of the text in which
  every non-ASCII code point is a single stand-in for its class (letter,
  number, punctuation, mark, symbol, whitespace, other; see
  :data:`fasttok.shared.llama_unicode.COLLAPSE`), and ``\\p{X}`` becomes that stand-in
  plus the ASCII members of X. So ``\\p{Lu}`` means any letter, ``\\p{S}``
  misses ``~``, and the classes are Unicode 15.1 as llama.cpp's tables say.
* A pattern without ``\\p{..}`` runs on the text with non-ASCII whitespace
  turned into ``\\x0b``; ``\\s`` is ASCII whitespace there, so a literal
  U+3000 in a pattern never matches.
* llama.cpp runs the GPT-2 and Llama 3 patterns through hand-written
  splitters instead. They equal the collapsed regex, except that the GPT-2
  one ends with an implicit ``|\\s+`` (the pattern llama.cpp stores has no
  trailing ``\\s+``) and case-insensitive contractions are ASCII only.

Offsets are code points throughout, as in llama.cpp, so the collapsed text
lines up with the real one character for character.

Speed: the lists that are one pattern of GPT-2's, cl100k's or o200k's shape
(gpt-2, llama3, qwen2, qwen35, seed-coder, bailingmoe, gpt-4o, tekken),
starcoder's ``\\p{N}`` + GPT-2 and deepseek-v3's three name a compiled scanner
(:attr:`PreTokenizer.scanner`) that reads llama.cpp's own Unicode 15.1
tables and folds case as it does, so it splits every text as this module's
Python path does; the other lists run Python's ``re`` on the collapsed
text. ``encode`` in MB/s on the corpus files (en / code / multi / zh /
adversarial; 2-core VM, CPU time): qwen2 28 / 51 / 25 / 15 / 23, starcoder
31 / 56 / 32 / 27 / 28, qwen35 31 / 58 / 27 / 19 / 25, against 4-8 MB/s for
the same lists through ``re``; deepseek-v3 (the byte-level core's
``encode_ordinary``, deepseek-llm's vocabulary, first MB of each file) 38 /
71 / 51 / 47 / 34 against 4.4 / 4.9 / 5.8 / 4.4 / 4.4 through ``re``. Rejected: reading Unicode 16.0 instead and
sending texts holding one of the ~30 ranges where 15.1 and 16.0 disagree to
``re``, since such texts (most of adversarial.txt) run at ``re`` speed.

>>> pre_tokenizer("qwen2").split("Hello wörld 123!!\\n")
['Hello', ' wörld', ' ', '1', '2', '3', '!!\\n']
>>> pre_tokenizer("starcoder").split("x = 42")
['x', ' =', ' ', '4', '2']
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Optional

from fasttok.shared import llama_unicode as lu
from fasttok.errors import FasttokError, UnknownEncodingError

__all__ = ["PreTokenizer", "PRE_TOKENIZERS", "SCANNERS", "pre_tokenizer", "RegexListSplitter",
           "translate_pattern", "known_pre_tokenizers"]

# ---------------------------------------------------------------- the patterns (llama.cpp's)

GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"""
LLAMA3_ORIGINAL = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"""
                   r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
_CONTRACTIONS = r"""(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"""
LLAMA3 = (_CONTRACTIONS + r"""|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"""
          r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
QWEN2 = (_CONTRACTIONS + r"""|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"""
         r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
QWEN35 = (_CONTRACTIONS + r"""|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"""
          r"""| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")


def _ranges(spec: str) -> str:
    # "41-5A B5" -> a class body; the patterns' non-ASCII characters are kept
    # as code points because several (U+1F7D, U+2126, U+212A...) are canonical
    # singletons that any NFC pass over this file would silently replace.
    out = []
    for item in spec.split():
        lo, _, hi = item.partition("-")
        out.append(f"\\U{int(lo, 16):08x}" + (f"-\\U{int(hi, 16):08x}" if hi else ""))
    return "".join(out)


# deepseek-llm's letters: the cased letters (Lu Ll Lt) of these blocks
_DEEPSEEK_LETTERS = _ranges(
    "41-5A 61-7A B5 C0-D6 D8-F6 F8-1BA 1BC-1BF 1C4-293 295-2AF 370-373 376-377 37B-37D 37F 386 "
    "388-38A 38C 38E-3A1 3A3-3F5 3F7-481 48A-52F 531-556 10A0-10C5 13A0-13F5 13F8-13FD "
    "1C90-1CBA 1CBD-1CBF 1D00-1D2B 1D6B-1D77 1D79-1D9A 1E00-1F15 1F18-1F1D 1F20-1F45 1F48-1F4D "
    "1F50-1F57 1F59 1F5B 1F5D 1F5F-1F7D 1F80-1FB4 1FB6-1FBC 1FBE 1FC2-1FC4 1FC6-1FCC 1FD0-1FD3 "
    "1FD6-1FDB 1FE0-1FEC 1FF2-1FF4 1FF6-1FFC 2102 2107 210A-2113 2115 2119-211D 2124 2126 2128 "
    "212A-212D 212F-2134 2139 213C-213F 2145-2149 214E 2183-2184 2C00-2C7B 2C7E-2CE4 2CEB-2CEE "
    "2CF2-2CF3 A640-A66D A680-A69B A722-A76F A771-A787 A78B-A78E AB70-ABBF FB00-FB06 FB13-FB17 "
    "FF21-FF3A FF41-FF5A 10400-1044F 104B0-104D3 104D8-104FB 10C80-10CB2 10CC0-10CF2 "
    "118A0-118DF 1E900-1E943")
_DEEPSEEK_PUNCT = _ranges("21-2F 3A-7E FF01-FF0F FF1A-FF5E 2018-201F 3000-3002")
_DEEPSEEK_CJK = "[" + _ranges("4E00-9FA5 800-4E00 AC00-D7FF") + "]+"
DEEPSEEK_LLM = ("[\r\n]", "\\s?[" + _DEEPSEEK_LETTERS + "]+", "\\s?[" + _DEEPSEEK_PUNCT + "]+",
                "\\s+$", _DEEPSEEK_CJK, "\\p{N}+")
DEEPSEEK_CODER = ("[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", _DEEPSEEK_CJK, "\\p{N}")
DEEPSEEK3 = (
    "\\p{N}{1,3}",
    "[" + _ranges("4E00-9FA5 3040-309F 30A0-30FF") + "]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
    "| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
)

# llama.cpp added the backquote to falcon's first class in 2025; the vendored
# copy the goldens come from has it too (the golden tests say which).
FALCON = (r"[\p{P}\$\+<=>\^~\|`]+", GPT2, r"[0-9][0-9][0-9]")
DEFAULT = (r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", r"[0-9][0-9][0-9]")
BLOOM = (" ?[^(\\s|.,!?" + _ranges("2026 3002 FF0C 3001 964 6D4 60C") + ")]+",)
GPT4O = (
    r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+" + _CONTRACTIONS + "?"
    r"|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*" + _CONTRACTIONS + "?"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
)
TEKKEN = (
    r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+"
    r"|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*"
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
)
SEED_CODER = (_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+"
              r"|\s*[\r\n]+|\s+(?!\S)|\s+",)
BAILINGMOE = (r"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
              r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+",)
STARCODER = (r"\p{N}", GPT2)

# regex list -> the compiled scanner (fasttok.pre_tokenizers._pretokenize) that splits like
# it on every text. bailingmoe's list is qwen2's in other words: its
# \s*[\r\n] ends where \s*[\r\n]+ does (after the run's last newline).
SCANNERS = {
    (GPT2,): "llama.cpp:gpt2",
    STARCODER: "llama.cpp:starcoder",
    (LLAMA3,): "llama.cpp:llama3",
    (LLAMA3_ORIGINAL,): "llama.cpp:llama3",
    (QWEN2,): "llama.cpp:qwen2",
    BAILINGMOE: "llama.cpp:qwen2",
    (QWEN35,): "llama.cpp:qwen35",
    SEED_CODER: "llama.cpp:seed-coder",
    GPT4O: "llama.cpp:gpt-4o",
    TEKKEN: "llama.cpp:tekken",
    DEEPSEEK3: "llama.cpp:deepseek-v3",
}


@dataclasses.dataclass(frozen=True)
class PreTokenizer:
    """How llama.cpp pre-tokenizes one family of ``tokenizer.ggml.pre`` values.

    ``regexes`` are llama.cpp's patterns, applied in order; ``ignore_merges``
    means a piece that is itself a token is emitted whole (Llama 3 and kin);
    ``clean_spaces`` is llama.cpp's detokenizer clean-up (``" ?"`` -> ``"?"``,
    ``" 's"`` -> ``"'s"``...), on for most byte-level vocabularies.

    >>> pre_tokenizer("llama-bpe").scanner, pre_tokenizer("llama-bpe").ignore_merges
    ('llama.cpp:llama3', True)
    """

    regexes: tuple
    ignore_merges: bool = False
    clean_spaces: bool = True

    @property
    def scanner(self) -> Optional[str]:
        """The compiled scanner that splits exactly like this list, or ``None``.

        >>> pre_tokenizer("qwen2").scanner, pre_tokenizer("falcon").scanner
        ('llama.cpp:qwen2', None)
        """
        return SCANNERS.get(self.regexes)

    @functools.cached_property
    def splitter(self) -> "RegexListSplitter":
        """The exact (Python) splitter for the list."""
        return RegexListSplitter(self.regexes)

    def split(self, text: str) -> list:
        """The pieces of ``text``, exactly as llama.cpp's ``unicode_regex_split``.

        >>> pre_tokenizer("gpt-2").split("Hi  there\\n")
        ['Hi', ' ', ' there', '\\n']
        """
        return self.splitter(text)


_LLAMA3_FAMILY = PreTokenizer((LLAMA3,), ignore_merges=True)
_GPT2_FAMILY = PreTokenizer((GPT2,))
_STARCODER_FAMILY = PreTokenizer(STARCODER)
_QWEN2_FAMILY = PreTokenizer((QWEN2,), clean_spaces=False)

# tokenizer.ggml.pre -> how to split (llama.cpp's llm_tokenizer_bpe and
# llama_vocab::impl::load, 2026). A missing key is "default".
PRE_TOKENIZERS: dict = {
    **dict.fromkeys(("llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral",
                     "midm-2.0", "lfm2", "jina-v5-nano"), _LLAMA3_FAMILY),
    **dict.fromkeys(("dbrx", "smaug-bpe", "glm4", "chatglm-bpe"), PreTokenizer((LLAMA3,))),
    "deepseek-llm": PreTokenizer(DEEPSEEK_LLM, clean_spaces=False),
    "deepseek-coder": PreTokenizer(DEEPSEEK_CODER, clean_spaces=False),
    **dict.fromkeys(("deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"),
                    PreTokenizer(DEEPSEEK3, clean_spaces=False)),
    "falcon": PreTokenizer(FALCON),
    **dict.fromkeys(("gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es",
                     "jina-v2-de", "a.x-4.0", "mellum", "modern-bert", "jina-v1-en",
                     "jina-v2-code", "roberta-bpe", "exaone4", "mpt", "olmo", "jais"),
                    _GPT2_FAMILY),
    **dict.fromkeys(("trillion", "granite-docling"), PreTokenizer((GPT2,), clean_spaces=False)),
    **dict.fromkeys(("starcoder", "refact", "codeshell", "exaone", "minerva-7b", "mellum2"),
                    _STARCODER_FAMILY),
    **dict.fromkeys(("command-r", "smollm"), PreTokenizer(STARCODER, clean_spaces=False)),
    **dict.fromkeys(("qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "hunyuan", "solar-open",
                     "grok-2"), _QWEN2_FAMILY),
    **dict.fromkeys(("megrez", "stablelm2"), PreTokenizer((QWEN2,))),
    "qwen35": PreTokenizer((QWEN35,), clean_spaces=False),
    "poro-chat": PreTokenizer(BLOOM, clean_spaces=False),
    **dict.fromkeys(("bloom", "gpt3-finnish"), PreTokenizer(BLOOM)),
    "viking": PreTokenizer(BLOOM + (r"\p{N}",), clean_spaces=False),
    **dict.fromkeys(("gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"),
                    PreTokenizer(GPT4O, clean_spaces=False)),
    "tekken": PreTokenizer(TEKKEN, ignore_merges=True, clean_spaces=False),
    "seed-coder": PreTokenizer(SEED_CODER, clean_spaces=False),
    **dict.fromkeys(("bailingmoe", "bailingmoe2", "llada-moe"),
                    PreTokenizer(BAILINGMOE, clean_spaces=False)),
    "default": PreTokenizer(DEFAULT),
}


def known_pre_tokenizers() -> list:
    """The ``tokenizer.ggml.pre`` values fasttok can split, sorted.

    >>> "qwen2" in known_pre_tokenizers()
    True
    """
    return sorted(PRE_TOKENIZERS)


def pre_tokenizer(pre: Optional[str]) -> PreTokenizer:
    """The :class:`PreTokenizer` for a ``tokenizer.ggml.pre`` value (``None``/empty: default).

    >>> pre_tokenizer("martian")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    fasttok.errors.UnknownEncodingError: unknown GGUF pre-tokenizer 'martian' (tokenizer.ggml.pre); ...
    """
    spec = PRE_TOKENIZERS.get(pre or "default")
    if spec is None:
        raise UnknownEncodingError(
            f"unknown GGUF pre-tokenizer {pre!r} (tokenizer.ggml.pre); fasttok knows: "
            + ", ".join(known_pre_tokenizers())
            + ". Add it to fasttok.pre_tokenizers.gguf.PRE_TOKENIZERS with llama.cpp's regex list.")
    return spec


# ---------------------------------------------------------------- translating patterns

COLLAPSED = "collapsed"
WIDE = "wide"

# \p{X} -> its collapsed stand-in plus X's ASCII members (llama.cpp's k_ucat_*
# tables): ASCII letters and digits only, and no "~" among the symbols.
_CATEGORY_CLASS = {
    "N": "\\xd10-9",
    "L": "\\xd2A-Za-z",
    "P": "\\xd3!-#%-*,-/:;?@\\[-\\]_{}",
    "M": "\\xd4",
    "S": "\\xd5$+<->^`|",
}
for _sub in ("Lu", "Ll", "Lt", "Lm", "Lo"):
    _CATEGORY_CLASS[_sub] = _CATEGORY_CLASS["L"]
_PROPERTY = re.compile(r"\\p\{([A-Za-z]+)\}")


def translate_pattern(pattern: str) -> tuple:
    """``(compiled re pattern, space)`` running a llama.cpp pattern in Python.

    ``space`` is ``"collapsed"`` when the pattern uses ``\\p{..}`` (run it on
    ``text.translate(COLLAPSE)``), else ``"wide"`` (run it on
    ``text.translate(WIDE)``). The GPT-2 and Llama 3 patterns that llama.cpp
    hands to its own splitters get what those splitters add.

    >>> translate_pattern(r"\\p{N}+")[0].pattern, translate_pattern(r"\\s+$")[1]
    ('[\\\\xd10-9]+', 'wide')
    """
    if pattern == LLAMA3_ORIGINAL:
        pattern = LLAMA3
    suffix = r"|\s+" if pattern == GPT2 else ""
    if _PROPERTY.search(pattern) is None:
        return _compile(_dollar(pattern) + suffix, pattern), WIDE
    if any(ord(c) > 0x7F for c in pattern):
        raise FasttokError(f"pattern {pattern!r} mixes \\p{{..}} with non-ASCII characters, "
                           "which llama.cpp does not support either")
    out = []
    inside = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        escaped = i > 0 and pattern[i - 1] == "\\"
        if c == "[" and not escaped:
            inside = True
        elif c == "]" and inside and not escaped:
            inside = False
        elif c == "\\":
            m = _PROPERTY.match(pattern, i)
            if m and m.group(1) in _CATEGORY_CLASS:
                body = _CATEGORY_CLASS[m.group(1)]
                out.append(body if inside else f"[{body}]")
                i = m.end()
                continue
            out.append(pattern[i:i + 2])
            i += 2
            continue
        elif c == "$" and not inside:
            c = r"\Z"
        out.append(c)
        i += 1
    return _compile("".join(out) + suffix, pattern), COLLAPSED


def _dollar(pattern: str) -> str:
    # ECMAScript's $ (no multiline) matches only at the end; Python's also
    # before a final newline.
    out = []
    inside = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if c == "[":
            inside = True
        elif c == "]":
            inside = False
        elif c == "$" and not inside:
            c = r"\Z"
        out.append(c)
        i += 1
    return "".join(out)


def _compile(text: str, original: str) -> "re.Pattern[str]":
    try:
        # re.ASCII: \s, \S and \d are ASCII only, as in std::regex under the C locale.
        return re.compile(text, re.ASCII)
    except re.error as exc:
        raise FasttokError(f"llama.cpp pattern {original!r} cannot be run by Python's re: {exc}") \
            from None


class RegexListSplitter:
    """llama.cpp's ``unicode_regex_split``: a list of patterns, each splitting the pieces of the last.

    Every later pattern sees one piece of the first pattern's split at a time,
    so how such a piece ends up split depends on its text alone; the answers for
    short pieces are remembered (a bounded table), which keeps a text of many
    equal pieces (a megabyte of newlines) from running every pattern per piece.

    >>> RegexListSplitter((r"\\p{N}", r"[a-z]+"))("ab1cd")
    ['ab', '1', 'cd']
    """

    _REMEMBERED_LENGTH = 64
    _REMEMBERED_PIECES = 1 << 16

    def __init__(self, patterns: tuple) -> None:
        self.patterns = tuple(patterns)
        self._steps = [translate_pattern(p) for p in self.patterns]
        self._later: dict = {}

    def __call__(self, text: str) -> list:
        if not text:
            return []
        pattern, space = self._steps[0]
        first = _split_pieces(pattern, _source(text, space), [(0, len(text))])
        if len(self._steps) == 1:
            return [text[a:b] for a, b in first]
        later = self._later
        out: list = []
        for a, b in first:
            piece = text[a:b]
            parts = later.get(piece)
            if parts is None:
                parts = self._split_later(piece)
                if b - a <= self._REMEMBERED_LENGTH:
                    if len(later) >= self._REMEMBERED_PIECES:
                        later.clear()
                    later[piece] = parts
            out.extend(parts)
        return out

    def _split_later(self, piece: str) -> list:
        # The patterns after the first on one of its pieces, as a text of its own.
        sources: dict = {}
        pieces = [(0, len(piece))]
        for pattern, space in self._steps[1:]:
            source = sources.get(space)
            if source is None:
                source = sources[space] = _source(piece, space)
            pieces = _split_pieces(pattern, source, pieces)
        return [piece[a:b] for a, b in pieces]


def _source(text: str, space: str) -> str:
    # The text a translated pattern runs on (see translate_pattern).
    if text.isascii():
        return text
    return text.translate(lu.COLLAPSE if space == COLLAPSED else lu.WIDE)


def _split_pieces(pattern: "re.Pattern[str]", source: str, pieces: list) -> list:
    out: list = []
    append = out.append
    whole = len(pieces) == 1 and pieces[0] == (0, len(source))
    for a, b in pieces:
        # Each piece is matched on its own, as std::regex_iterator over the
        # sub-range does: $ and lookaheads see the piece's end, not the text's.
        sub = source if whole else source[a:b]
        last = 0
        for m in pattern.finditer(sub):
            start, end = m.span()
            if start > last:
                append((a + last, a + start))
            if end > start:
                append((a + start, a + end))
            last = end
        if last < b - a:
            append((a + last, b))
    return out
