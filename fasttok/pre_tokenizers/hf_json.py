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
from typing import Optional

from fasttok.errors import FasttokError
from fasttok.pre_tokenizers import PREPEND_SCHEMES
from fasttok.shared.built_once import made_later
from fasttok.shared.json_fields import Fields

__all__ = ["pre_tokenizer_from_json", "pre_tokenizer_maker"]

# Each reader checks its fields and gives what builds its pre-tokenizer
# (made_later): the stage's module is imported, and the object built, when
# first asked for (the first encode), so a load imports none of them and a
# file only the ones it names (ByteLevel's, Split's and UnicodeScripts'
# modules were a tenth of what fasttok.load of a Unigram file imported). A
# Split of a regex is built at load: compiling the pattern is its check.


def _byte_level(f: Fields):
    return made_later("fasttok.pre_tokenizers.byte_level", "ByteLevel",
                      add_prefix_space=f.bool("add_prefix_space"),
                      trim_offsets=f.bool("trim_offsets"),
                      use_regex=f.bool("use_regex", default=True))


def _split(f: Fields):
    from fasttok.pre_tokenizers.split import Split
    from fasttok.shared.normalized import BEHAVIORS
    pattern, regex = f.pattern()
    behavior = f.choice("behavior", BEHAVIORS)
    invert = f.bool("invert")
    try:
        built = Split(pattern, behavior, invert, regex=regex)
    except FasttokError as exc:
        raise f.fail(f.at("pattern.Regex"), str(exc)) from None
    return lambda: built


def _metaspace(f: Fields):
    replacement = f.char("replacement")
    f.str("str_rep", default=None)
    split = f.bool("split", default=True, nullable=True)
    scheme = f.choice("prepend_scheme", PREPEND_SCHEMES, default="always")
    if f.bool("add_prefix_space", default=True) is False:
        if scheme != "never":
            raise f.fail(f.at("add_prefix_space"), "add_prefix_space false needs "
                                                   "prepend_scheme \"never\"")
    return made_later("fasttok.pre_tokenizers.metaspace", "Metaspace", replacement, scheme,
                      True if split is None else split)


def _bert(f: Fields):
    return made_later("fasttok.pre_tokenizers.split", "BertPreTokenizer")


def _char_delimiter(f: Fields):
    return made_later("fasttok.pre_tokenizers.split", "CharDelimiterSplit", f.char("delimiter"))


def _whitespace(f: Fields):
    return made_later("fasttok.pre_tokenizers.split", "Whitespace")


def _whitespace_split(f: Fields):
    return made_later("fasttok.pre_tokenizers.split", "WhitespaceSplit")


def _punctuation(f: Fields):
    from fasttok.shared.normalized import BEHAVIORS
    return made_later("fasttok.pre_tokenizers.split", "Punctuation",
                      f.choice("behavior", BEHAVIORS, default="Isolated"))


def _digits(f: Fields):
    return made_later("fasttok.pre_tokenizers.split", "Digits", f.bool("individual_digits"))


def _sequence(f: Fields):
    makers = f.stages("pretokenizers", pre_tokenizer_maker)

    def make():
        from fasttok.pre_tokenizers.sequence import Sequence
        return Sequence([m() for m in makers])

    return make


def _unicode_scripts(f: Fields):
    return made_later("fasttok.pre_tokenizers.unicode_scripts", "UnicodeScripts")


# type -> what builds the pre-tokenizer of its object (read by Fields)
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
    make = pre_tokenizer_maker(spec, where, fail)
    return None if make is None else make()


def pre_tokenizer_maker(spec: dict | None, where: str, fail: Callable) -> Optional[Callable]:
    """What builds the pre-tokenizer ``spec`` describes when called (``None``
    for ``null``), every field checked now, as :func:`pre_tokenizer_from_json`
    checks it.

    >>> make = pre_tokenizer_maker({"type": "WhitespaceSplit"}, "$.p", None)
    >>> make().pre_tokenize_str("a b")
    [('a', (0, 1)), ('b', (2, 3))]
    """
    if spec is None:
        return None
    f = Fields(spec, where, fail)
    return _FACTORIES[f.type(_FACTORIES)](f)
