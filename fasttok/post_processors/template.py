"""TemplateProcessing: special tokens around the inputs as a template says.

A template is a list of pieces: ``$A`` / ``$B`` (the first input, the pair)
and special tokens, each with a type id: ``"[CLS] $A:0 [SEP] $B:1 [SEP]:1"``.
The spellings ``tokenizers`` accepts: ``$`` alone is ``$A``, ``$1`` is ``$A:1``,
``$a``/``$b`` are ``$A``/``$B``; a special token may stand for several tokens
(``special_tokens`` maps its name to ids and token strings). The same template
gives the ids-only function of the tiktoken-style API (:meth:`ids_only`).

>>> from fasttok.post_processors.encoding import Encoding
>>> t = TemplateProcessing("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1",
...                        [("[CLS]", 101), ("[SEP]", 102)])
>>> e = t.process(Encoding([5], ["a"], [(0, 1)], [0]), Encoding([6], ["b"], [(0, 1)], [0]))
>>> e.ids, e.type_ids
([101, 5, 102, 6, 102], [0, 0, 0, 1, 1])
>>> t.ids_only()([5])
[101, 5, 102]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fasttok.errors import FasttokError
from fasttok.post_processors.processor import PostProcessor
from fasttok.post_processors.special_ids import AddSpecialIds, SpecialIdsTemplate

if TYPE_CHECKING:
    from fasttok.post_processors.encoding import Encoding

__all__ = ["TemplateProcessing", "parse_template", "parse_piece"]

# Rust's u32 parse: ASCII digits with an optional "+" (str tests, not a
# regex compiled when the module is imported)
_SEQUENCES = {"": "A", "A": "A", "a": "A", "B": "B", "b": "B"}


def _u32(text: str) -> int | None:
    digits = text[1:] if text.startswith("+") else text
    if not (digits.isascii() and digits.isdigit()):
        return None
    value = int(text)
    return value if value < 2 ** 32 else None


def parse_piece(text: str) -> tuple:
    """One template piece from its string: ``(is_sequence, "A"/"B" or the special
    token's name, type_id)``.

    >>> parse_piece("$B:1"), parse_piece("$2"), parse_piece("[SEP]:1")
    ((True, 'B', 1), (True, 'A', 2), (False, '[SEP]', 1))
    """
    parts = text.split(":")
    if len(parts) > 2:
        raise FasttokError(f"Cannot build Piece from string {text!r}")
    name, type_id = parts[0], 0
    if len(parts) == 2:
        type_id = _u32(parts[1])
        if type_id is None:
            raise FasttokError(f"Cannot build Piece from string {text!r}: bad type id")
    if not name.startswith("$"):
        return (False, name, type_id)
    rest = name[1:]
    if rest in _SEQUENCES:
        return (True, _SEQUENCES[rest], type_id)
    number = _u32(rest)
    if number is None:
        raise FasttokError(f"Cannot build Piece from string {text!r}: "
                           f"a sequence is $A, $B or $<type id>")
    # "$1:2" takes the type id after the colon, as tokenizers' with_type_id does
    return (True, "A", type_id if len(parts) == 2 else number)


def parse_template(template) -> list:
    """A template from a string (pieces split on single spaces) or a list of strings
    or of parsed pieces.

    >>> parse_template("[CLS] $0")
    [(False, '[CLS]', 0), (True, 'A', 0)]
    """
    if isinstance(template, str):
        template = template.split(" ")
    return [parse_piece(p) if isinstance(p, str) else tuple(p) for p in template]


def _special_tokens(special_tokens) -> dict:
    # name -> (ids, tokens), from (name, id) / (id, name) pairs or {"id", "ids", "tokens"}
    out = {}
    for entry in special_tokens:
        if isinstance(entry, dict):
            name, ids, tokens = entry["id"], list(entry["ids"]), list(entry["tokens"])
        else:
            first, second = entry
            name, token_id = (first, second) if isinstance(first, str) else (second, first)
            ids, tokens = [token_id], [name]
        if len(ids) != len(tokens):
            raise FasttokError(f"special token {name!r}: ids and tokens must be of the same length")
        out[name] = (ids, tokens)
    return out


class TemplateProcessing(PostProcessor):
    """``tokenizers.processors.TemplateProcessing(single, pair, special_tokens)``.

    ``special_tokens``: ``(token, id)`` pairs or ``{"id", "ids", "tokens"}`` objects.
    ``require_pair=False`` accepts a pair template without ``$B`` (as a
    ``tokenizer.json`` may have).

    >>> TemplateProcessing("$A </s>", "$A </s> $B </s>", [("</s>", 2)]).added_tokens(True)
    2
    """

    __slots__ = ("single", "pair", "special_tokens", "_added")

    def __init__(self, single="$0", pair="$A:0 $B:1", special_tokens=(), *,
                 require_pair: bool = True) -> None:
        self.single = parse_template(single)
        self.pair = parse_template(pair)
        self.special_tokens = _special_tokens(special_tokens)
        # tokenizers' builder asks for both inputs in the pair template; its JSON reader does not
        if require_pair and not {"A", "B"} <= {name for is_seq, name, _ in self.pair if is_seq}:
            raise FasttokError("Template for `pair` must use both sequences")
        missing = sorted({name for is_seq, name, _ in self.single + self.pair
                          if not is_seq and name not in self.special_tokens})
        if missing:
            raise FasttokError(f"Missing SpecialToken(s) with id(s) `{', '.join(missing)}`")
        self._added = tuple(sum(len(self.special_tokens[name][0])
                                for is_seq, name, _ in template if not is_seq)
                            for template in (self.single, self.pair))

    def __repr__(self) -> str:
        def show(template):
            return " ".join(f"{'$' if s else ''}{n}:{t}" for s, n, t in template)
        return f"TemplateProcessing(single={show(self.single)!r}, pair={show(self.pair)!r})"

    def added_tokens(self, is_pair: bool) -> int:
        """The number of special tokens the template adds.

        >>> TemplateProcessing("[CLS] $A", "[CLS] $A $B", [("[CLS]", 1)]).added_tokens(False)
        1
        """
        return self._added[1 if is_pair else 0]

    def ids_only(self) -> "AddSpecialIds | SpecialIdsTemplate":
        """The single-input template as ids -> ids.

        >>> TemplateProcessing("<s> $A", "<s> $A $B", [("<s>", 1)]).ids_only()([9])
        [1, 9]
        >>> TemplateProcessing("<s> $A <s> $A", "$A $B", [("<s>", 1)]).ids_only()([9])
        [1, 9, 1, 9]
        """
        if any(is_seq and name == "B" for is_seq, name, _ in self.single):
            raise FasttokError("the single-input template uses $B")
        sequences = [i for i, (is_seq, _, _) in enumerate(self.single) if is_seq]
        if len(sequences) != 1:
            return SpecialIdsTemplate([None if is_seq else self.special_tokens[name][0]
                                       for is_seq, name, _ in self.single])
        cut = sequences[0]
        head = [i for _, name, _ in self.single[:cut] for i in self.special_tokens[name][0]]
        tail = [i for _, name, _ in self.single[cut + 1:] for i in self.special_tokens[name][0]]
        return AddSpecialIds(tuple(head), tuple(tail))

    def process_encodings(self, encodings: list, add_special_tokens: bool) -> list:
        """The template's pieces as encodings: the inputs with the piece's type id, the
        special tokens (when ``add_special_tokens``) as encodings of their own.

        >>> from fasttok.post_processors.encoding import Encoding
        >>> len(TemplateProcessing("[CLS] $A", "[CLS] $A $B", [("[CLS]", 1)]).process_encodings(
        ...     [Encoding([5], ["a"], [(0, 1)], [0])], True))
        2
        """
        if len(encodings) not in (1, 2):
            raise FasttokError(f"TemplateProcessing takes one or two encodings, "
                               f"not {len(encodings)}")
        # imported here: a load builds the template for its ids only (processor's note)
        from fasttok.post_processors.encoding import Encoding

        template = self.pair if len(encodings) == 2 else self.single
        out = []
        for is_seq, name, type_id in template:
            if is_seq:
                i = 0 if name == "A" else 1
                if i >= len(encodings):
                    raise FasttokError("the single-input template uses $B")
                e = encodings[i]
                n = len(e.ids)
                e.type_ids = [type_id] * n
                e.set_sequence_id(i)
                out.append(e.view())
            elif add_special_tokens:
                ids, tokens = self.special_tokens[name]
                n = len(ids)
                out.append(Encoding(ids[:], tokens[:], [(0, 0)] * n, [None] * n, [type_id] * n,
                                    [1] * n, [1] * n))
        return out
