"""``pre_tokenizer_from_json``: a ``tokenizer.json`` ``pre_tokenizer`` object as a pre-tokenizer.

Fields, their defaults and the spellings accepted are ``tokenizers``
0.23.3's (Metaspace's older ``add_prefix_space`` and ``str_rep`` included);
every field read is checked, and an error names its JSON path.

>>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
>>> pre_tokenizer_from_json({"type": "Metaspace", "replacement": "▁", "add_prefix_space": True},
...                         "$.pre_tokenizer", fail)
Metaspace(replacement='▁', prepend_scheme='always', split=True)
"""

from __future__ import annotations

from collections.abc import Callable

from fasttok.errors import FasttokError
from fasttok.shared.json_fields import Fields
from fasttok.shared.normalized import BEHAVIORS

__all__ = ["pre_tokenizer_from_json"]

# Each factory imports its stage's module: a file imports the pre-tokenizers
# it names, not all of them (ByteLevel's, Split's and UnicodeScripts' modules
# were a tenth of what fasttok.load of a Unigram file imported).


def _byte_level(f: Fields):
    from fasttok.pre_tokenizers.byte_level import ByteLevel
    return ByteLevel(add_prefix_space=f.bool("add_prefix_space"),
                     trim_offsets=f.bool("trim_offsets"),
                     use_regex=f.bool("use_regex", default=True))


def _split(f: Fields):
    from fasttok.pre_tokenizers.split import Split
    pattern, regex = f.pattern()
    behavior = f.choice("behavior", BEHAVIORS)
    invert = f.bool("invert")
    try:
        return Split(pattern, behavior, invert, regex=regex)
    except FasttokError as exc:
        raise f.fail(f.at("pattern.Regex"), str(exc)) from None


def _metaspace(f: Fields):
    from fasttok.pre_tokenizers.metaspace import PREPEND_SCHEMES, Metaspace
    replacement = f.char("replacement")
    f.str("str_rep", default=None)
    split = f.bool("split", default=True, nullable=True)
    scheme = f.choice("prepend_scheme", PREPEND_SCHEMES, default="always")
    if f.bool("add_prefix_space", default=True) is False:
        if scheme != "never":
            raise f.fail(f.at("add_prefix_space"), "add_prefix_space false needs "
                                                   "prepend_scheme \"never\"")
    return Metaspace(replacement, scheme, True if split is None else split)


def _bert(f: Fields):
    from fasttok.pre_tokenizers.split import BertPreTokenizer
    return BertPreTokenizer()


def _char_delimiter(f: Fields):
    from fasttok.pre_tokenizers.split import CharDelimiterSplit
    return CharDelimiterSplit(f.char("delimiter"))


def _whitespace(f: Fields):
    from fasttok.pre_tokenizers.split import Whitespace
    return Whitespace()


def _whitespace_split(f: Fields):
    from fasttok.pre_tokenizers.split import WhitespaceSplit
    return WhitespaceSplit()


def _punctuation(f: Fields):
    from fasttok.pre_tokenizers.split import Punctuation
    return Punctuation(f.choice("behavior", BEHAVIORS, default="Isolated"))


def _digits(f: Fields):
    from fasttok.pre_tokenizers.split import Digits
    return Digits(f.bool("individual_digits"))


def _sequence(f: Fields):
    from fasttok.pre_tokenizers.sequence import Sequence
    return Sequence(f.stages("pretokenizers", pre_tokenizer_from_json))


def _unicode_scripts(f: Fields):
    from fasttok.pre_tokenizers.unicode_scripts import UnicodeScripts
    return UnicodeScripts()


# type -> the pre-tokenizer of its object (read by Fields)
_FACTORIES = {
    "BertPreTokenizer": _bert, "ByteLevel": _byte_level, "CharDelimiterSplit": _char_delimiter,
    "Metaspace": _metaspace, "Whitespace": _whitespace, "Sequence": _sequence, "Split": _split,
    "Punctuation": _punctuation, "WhitespaceSplit": _whitespace_split, "Digits": _digits,
    "UnicodeScripts": _unicode_scripts,
}


def pre_tokenizer_from_json(spec: dict | None, where: str, fail: Callable):
    """The pre-tokenizer a ``tokenizer.json`` ``pre_tokenizer`` object describes
    (``None`` for ``null``); ``fail(where, problem)`` builds the error raised.

    >>> fail = lambda where, problem: ValueError(f"{where}: {problem}")
    >>> pre_tokenizer_from_json({"type": "Foo"}, "$.p", fail)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: $.p.type: unknown type 'Foo'; known: BertPreTokenizer, ByteLevel, ...
    """
    if spec is None:
        return None
    f = Fields(spec, where, fail)
    return _FACTORIES[f.type(_FACTORIES)](f)
