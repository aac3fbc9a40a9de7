"""The stages of one ``tokenizer.json`` and their ids: what :func:`fasttok.load` runs.

:class:`HFStages` holds the file's stages in ``tokenizers``' order
(``encode_single_sequence``) and gives the ids of a text without offsets
(:meth:`HFStages.encode_ids`, what :class:`fasttok.Encoding` uses):

1. **Added tokens** (:class:`~fasttok.added_tokens.hf_added.AddedTokens`):
   those with ``normalized=false`` cut the raw text; each stretch between
   them is normalized (``normalize_str``), then the ``normalized=true`` ones
   cut it.
2. **Pre-tokenizer** on the stretches that are not added tokens.
3. **Model** on each piece: ``tokenize_ids`` (``tokenize_ids_many`` for all
   the pieces of a stretch, where the model has it).

Its compiled walk (:mod:`fasttok.formats.hf_walks`) takes those steps in one
call where it can. The drop-in's ``Encoding`` side (offsets, words,
post-processing, truncation, padding) is a subclass,
:class:`~fasttok.formats.hf_pipeline.HFPipeline`, in its own module: a load
of the ids face never imports it, nor the ``Encoding`` modules it needs.

>>> import json
>>> from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
>>> doc = {"model": {"type": "WordLevel", "vocab": {"a": 0, "b": 1, "[UNK]": 2},
...                  "unk_token": "[UNK]"},
...        "pre_tokenizer": {"type": "WhitespaceSplit"},
...        "added_tokens": [{"id": 3, "content": "<s>", "special": True, "single_word": False,
...                          "lstrip": False, "rstrip": False, "normalized": False}]}
>>> stages = stages_from_document(tokenizer_json_record(json.dumps(doc), "t.json"))
>>> stages.encode_ids("a <s>b c", None), stages.encode_ids("a <s>b c", frozenset())
([0, 3, 1, 2], [0, 2, 2])
>>> stages.decode([0, 3, 1, 2], skip_special_tokens=True)
'a b [UNK]'
>>> stages.tokens("a <s>b")
['a', '[UNK]']
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Optional

from fasttok.errors import FasttokError
from fasttok.loaders.hf_stage_json import decoder_maker, normalizer_maker, \
    post_processor_maker, pre_tokenizer_maker
from fasttok.loaders.hf_tokenizer_json import JsonPathError
from fasttok.models.hf_fields import model_from_json
from fasttok.shared.built_once import built_once
from fasttok.vocab import Vocabulary

if TYPE_CHECKING:
    from fasttok.added_tokens.hf_added import AddedTokens
    from fasttok.formats.walk import Walk
    from fasttok.shared.normalized import NormalizedString

# the staged steps import shared.normalized when they first run: a walked
# file never needs it (~0.2 ms of importing at a Unigram file's load)

__all__ = ["HFStages", "stages_from_document"]


def _added_tokens(vocab: Vocabulary, normalize: Any) -> AddedTokens:
    # the loader gave each added token the id tokenizers gives it (and
    # checked their fields); made, and their module imported, when first
    # asked for: the first encode, which matches them
    from fasttok.added_tokens.hf_added import AddedToken, AddedTokens

    return AddedTokens([AddedToken(content, token_id, special=bool(flags["special"]),
                                   single_word=bool(flags["single_word"]),
                                   lstrip=bool(flags["lstrip"]), rstrip=bool(flags["rstrip"]),
                                   normalized=flags["normalized"])
                        for content, token_id, flags in vocab.metadata["added_tokens"]],
                       normalize)


def _looks_at_the_start(pre_tokenizer: Any) -> bool:
    # whether a pre-tokenizer's pieces depend on where in the input they
    # start (Metaspace's "first" prepend scheme), here or inside a Sequence
    if pre_tokenizer is None:
        return False
    if getattr(pre_tokenizer, "prepend_scheme", None) == "first":
        return True
    return any(map(_looks_at_the_start, getattr(pre_tokenizer, "pretokenizers", ())))


class HFStages:
    """The stages of one ``tokenizer.json`` and the ids they give (see the module docstring)."""

    def __init__(self, *, make_normalizer: Optional[Callable[[], Any]],
                 make_pre_tokenizer: Optional[Callable[[], Any]],
                 model: Any, make_post_processor: Optional[Callable[[], Any]],
                 make_decoder: Optional[Callable[[], Any]],
                 make_added: Callable[[], AddedTokens],
                 truncation: Any = None, padding: Any = None,
                 model_factory: Optional[Callable[[], Any]] = None, record: Any = None) -> None:
        # model_factory (with model None) builds the model on first use: a
        # byte-level file's ids come from the fused core, and its Python BPE
        # model (half of Llama 3's load time) serves only offsets and pieces;
        # make_normalizer, make_pre_tokenizer, make_post_processor and
        # make_decoder (None: no such stage) build those stages when first
        # asked for (their fields checked already): a load builds none;
        # make_added makes the added tokens, also when first asked for
        self._make_normalizer = make_normalizer
        self._make_pre_tokenizer = make_pre_tokenizer
        self._model = model
        self._model_factory = model_factory
        self._make_post_processor = make_post_processor
        self._make_decoder = make_decoder
        #: the file's truncation and padding (read and checked at every load):
        #: the drop-in's settings, which the ids face does not apply
        self.truncation = truncation
        self.padding = padding
        #: the tokenizer.json record the stages were read from (what a walk is built for)
        self.record = record
        self._make_added = make_added
        self._spelled_normalized: Optional[frozenset] = None

    @built_once
    def added(self) -> AddedTokens:
        """The added tokens matched (:meth:`set_added` replaces them)."""
        return self._make_added()

    @built_once
    def added_ids(self) -> frozenset:
        """The ids of :attr:`added`."""
        return frozenset(t.id for t in self.added.tokens)

    def set_added(self, added: AddedTokens, spelled_normalized: Optional[frozenset] = None) -> None:
        """Match ``added`` from now on (``add_tokens`` of the drop-in);
        ``spelled_normalized``: the ids whose token string is their content
        normalized (default: those matched in the normalized text)."""
        self.__dict__["added"] = added
        self._spelled_normalized = spelled_normalized
        # what was built knowing the added tokens: their ids and strings, the walk
        for name in ("added_ids", "_added_strings", "_token_strings", "walk"):
            self.__dict__.pop(name, None)

    @functools.cached_property
    def walk(self) -> Optional[Walk]:
        """The compiled walk of this configuration (:mod:`fasttok.formats.hf_walks`), or ``None``."""
        if self.record is None:
            return None
        # the walks' module is imported by the first encode: a load never needs it
        from fasttok.formats.hf_walks import walk_for

        return walk_for(self.record, self)

    @functools.cached_property
    def _added_strings(self) -> dict:
        # tokenizers gives an added token looked for in the normalized text
        # its normalized spelling as its string (id_to_token, decode): with
        # Llama 2's normalizer "<new>" decodes as "▁<new>", a space
        spelled = self._spelled_normalized
        return self._added_spelled(frozenset(t.id for t in self.added.tokens if t.normalized)
                                   if spelled is None else spelled)

    def _added_spelled(self, normalized_ids: frozenset) -> dict:
        # added token id -> its content, normalized for the ids normalized_ids
        normalize = None if self.normalizer is None else self.normalizer.normalize_str
        return {token_id: normalize(t.content) if normalize and token_id in normalized_ids
                else t.content for token_id, t in self.added.by_id.items()}

    @functools.cached_property
    def _token_strings(self) -> list:
        # id -> token string, for the tokens of walked encodings and of
        # tokens(); a byte-level record spells its tokens without the Python
        # BPE model (most of Llama 3's load, built for nothing else)
        record = self.record
        if record is None or record.merges is None:
            # a BPE whose ids are its entries' places lists them by id (Gemma
            # 3's get_vocab would make a dict of 262k entries for this)
            by_id = getattr(self.model, "texts_by_id", None)
            strings: list = list(by_id) if by_id is not None else []
            for text, token_id in self.model.get_vocab().items() if by_id is None else ():
                if token_id >= len(strings):
                    strings += [None] * (token_id + 1 - len(strings))
                strings[token_id] = text
        else:
            # imported for byte-level records only (the module is the
            # byte-level walk's, which other files never import)
            from fasttok.formats.hf_byte_level import byte_level_token_strings
            strings = byte_level_token_strings(record)
        # an added token in an encoding is spelled as it was matched: normalized
        # only when it is looked for in the normalized text (the spelling
        # add_tokens may give its id elsewhere is id_to_token's)
        added = self._added_spelled(frozenset(t.id for t in self.added.tokens if t.normalized))
        strings += [None] * (max(added, default=-1) + 1 - len(strings))
        for token_id, text in added.items():
            strings[token_id] = text
        return strings

    @built_once
    def normalizer(self) -> Any:
        """The normalizer, or ``None``: built when first asked for (the first encode)."""
        make = self._make_normalizer
        return None if make is None else make()

    @built_once
    def pre_tokenizer(self) -> Any:
        """The pre-tokenizer, or ``None``: built when first asked for (the
        first encode)."""
        make = self._make_pre_tokenizer
        return None if make is None else make()

    @functools.cached_property
    def _start_matters(self) -> bool:
        return _looks_at_the_start(self.pre_tokenizer)

    @built_once
    def post_processor(self) -> Any:
        """The post-processor, or ``None``: built when first asked for (a
        load and an encode of ids never ask)."""
        make = self._make_post_processor
        return None if make is None else make()

    @built_once
    def decoder(self) -> Any:
        """The decoder, or ``None``: built when first asked for (decoding)."""
        make = self._make_decoder
        return None if make is None else make()

    @property
    def model(self) -> Any:
        """The model (built now if it was left for first use)."""
        if self._model is None:
            self._model = self._model_factory()
        return self._model

    @functools.cached_property
    def _ids_many(self) -> Callable[[list], list]:
        # a model with tokenize_ids_many takes a stretch's pieces in one call
        # (a compiled loop, where a Python call a word was a fifth of the time)
        return getattr(self.model, "tokenize_ids_many", None) or self._ids_piece_by_piece

    # ------------------------------------------------------------ one sequence, staged
    def _cut(self, piece: NormalizedString, normalized: bool,
             allowed: Optional[frozenset]) -> list:
        # one added-token pass over a piece: [(piece, token or None)], empty pieces dropped
        out = []
        for token_id, start, end in self.added.find_matches(piece.normalized,
                                                            normalized=normalized,
                                                            allowed=allowed):
            part = piece.slice(start, end)
            if part is None or not part.normalized:
                continue
            out.append((part, None if token_id is None else
                        (token_id, part.normalized, (0, len(part.normalized)))))
        return out

    def _splits(self, text: str, allowed: Optional[frozenset]) -> list:
        # steps 1 and 2: [(piece, added token or None)], in order; the pieces
        # that are not added tokens normalized and then pre-tokenized
        from fasttok.shared.normalized import NormalizedString, PreTokenizedString

        splits = []
        for piece, found in self._cut(NormalizedString(text), False, allowed):
            if found is not None:
                splits.append((piece, found))
                continue
            if self.normalizer is not None:
                self.normalizer.normalize(piece)
            for part, token in self._cut(piece, True, allowed):
                if token is not None or self.pre_tokenizer is None:
                    splits.append((part, token))
                    continue
                pts = PreTokenizedString(part)
                self.pre_tokenizer.pre_tokenize(pts)
                splits.extend((word, None) for word in pts.splits)
        return splits

    def staged_tokens(self, text: str, allowed: Optional[frozenset]) -> list:
        """``[(split, id, token string, (start, end))]`` of ``text`` through
        the stages one by one (the oracle of every walk): each token with the
        index of its pre-tokenizer split (added tokens count as splits) and
        its span of ``text`` in characters, back through the split's alignment."""
        out = []
        tokenize = self.model.tokenize
        for index, (piece, token) in enumerate(self._splits(text, allowed)):
            found = tokenize(piece.normalized) if token is None else (token,)
            for token_id, value, (start, end) in found:
                span = piece.offsets_of(start, end)
                out.append((index, token_id, value, (start, end) if span is None else span))
        return out

    def tokens(self, text: str) -> list:
        """The token strings of ``text`` with no added token matched and no
        post-processing (what :meth:`encode_ids` with nothing allowed gives
        ids for): the walk's ids spelled, else the stages' tokens."""
        walk = self.walk
        if walk is not None:
            found = walk.encode(text, frozenset())
            if found is not None:
                # imported by the first call: a load of the ids face never needs it
                from fasttok.post_processors._encoding_lists import token_strings

                return token_strings(self._token_strings, found[0],
                                     found[3] if len(found) > 3 else None)
        tokenize = self.model.tokenize
        return [value for piece, _ in self._splits(text, frozenset())
                for _, value, _ in tokenize(piece.normalized)]

    # ------------------------------------------------------------ ids only
    def _pieces(self, part: str, at_start: bool) -> list:
        # the pre-tokenizer's pieces of one normalized stretch, as strings
        pre = self.pre_tokenizer
        if pre is None:
            return [part]
        if at_start or not self._start_matters:
            return pre.split_str(part)
        # Metaspace's "first" scheme looks at where the piece starts in the
        # input; a piece placed past the start says so through its offsets
        from fasttok.shared.normalized import NormalizedString, PreTokenizedString

        pts = PreTokenizedString(NormalizedString(part, original_shift=1))
        pre.pre_tokenize(pts)
        return [ns.normalized for ns in pts.splits]

    def _ids_piece_by_piece(self, pieces: list) -> list:
        tokenize_ids = self.model.tokenize_ids
        out: list = []
        for piece in pieces:
            if piece:
                out += tokenize_ids(piece)
        return out

    def encode_ids(self, text: str, allowed: Optional[frozenset],
                   sample: Optional[tuple] = None) -> list:
        """The ids of ``text`` without post-processing; ``allowed``: the added
        token ids matched (``None``: all, as ``tokenizers`` does). The same
        steps as :meth:`encode` on plain strings: no alignment is kept.
        ``sample``: ``(rate, rng)``, each piece drawn by the model's
        ``sample_ids`` with a seed from ``rng``: BPE-dropout's rate, or a
        Unigram model's ``(alpha, nbest_size)``."""
        if not isinstance(text, str):
            raise TypeError(f"text must be str, not {type(text).__name__}")
        added = self.added
        if sample is None and self.walk is not None:
            found = self.walk.ids(text, allowed)
            if found is not None:
                return found
        normalize = None if self.normalizer is None else self.normalizer.normalize_str
        ids_many = self._ids_many
        if sample is not None:
            rate, rng = sample
            sample_ids = self.model.sample_ids

            def ids_many(pieces: list) -> list:
                out: list = []
                for piece in pieces:
                    if piece:
                        out += sample_ids(piece, rate, rng.getrandbits(64))
                return out
        out: list = []
        for token_id, start, end in added.find_matches(text, normalized=False, allowed=allowed):
            if token_id is not None:
                out.append(token_id)
                continue
            stretch = text[start:end]
            if normalize is not None:
                stretch = normalize(stretch)
            if not self.added.any_normalized:
                if stretch:
                    out += ids_many(self._pieces(stretch, start == 0))
                continue
            for token2, start2, end2 in added.find_matches(stretch, normalized=True,
                                                           allowed=allowed):
                if token2 is not None:
                    out.append(token2)
                elif end2 > start2:
                    out += ids_many(self._pieces(stretch[start2:end2], start == 0 == start2))
        return out

    # ------------------------------------------------------------ decoding and vocabulary
    def id_to_token(self, token_id: int) -> Optional[str]:
        """The token string of ``token_id`` (added tokens first, in their
        normalized spelling when they are matched in the normalized text), or ``None``."""
        found = self._added_strings.get(token_id)
        if found is not None:
            return found
        return self.model.id_to_token(token_id)

    def token_to_id(self, token: str) -> Optional[int]:
        """The id of ``token`` (added tokens first), or ``None``."""
        found = self.added.by_content.get(token)
        return found if found is not None else self.model.token_to_id(token)

    def decode_tokens(self, ids: list, skip_special_tokens: bool) -> list:
        """The token strings of ``ids`` that decoding joins (unknown ids dropped,
        as ``tokenizers`` drops them)."""
        out = []
        special = self.added.special_contents
        for token_id in ids:
            if not isinstance(token_id, int) or token_id < 0:
                raise FasttokError(f"invalid token id {token_id!r}")
            token = self.id_to_token(token_id)
            if token is None or (skip_special_tokens and token in special):
                continue
            out.append(token)
        return out

    def decode(self, ids: list, skip_special_tokens: bool) -> str:
        """``tokenizers``' ``decode``."""
        tokens = self.decode_tokens(ids, skip_special_tokens)
        if self.decoder is None:
            return " ".join(tokens)
        return self.decoder.decode(tokens)

    def get_vocab(self, with_added_tokens: bool) -> dict:
        """Token string -> id, with the added tokens when asked."""
        vocab = self.model.get_vocab()
        if with_added_tokens:
            vocab.update(self.added.by_content)
        return vocab

    def get_vocab_size(self, with_added_tokens: bool) -> int:
        """The number of distinct tokens of :meth:`get_vocab`."""
        if not with_added_tokens:
            return self.model.get_vocab_size()
        return len(self.get_vocab(True))


def stages_from_document(vocab: Vocabulary, kind: type = HFStages, *, lazy_model: bool = False,
                         model_document: Optional[Callable[[], dict]] = None,
                         never: frozenset = frozenset()) -> HFStages:
    """The stages of a ``tokenizer.json`` record (``metadata["document"]``)
    as a ``kind`` (:class:`HFStages`, or the drop-in's
    :class:`~fasttok.formats.hf_pipeline.HFPipeline`), every part checked by
    its stage's reader now and the four stages around the model built when
    first asked for (the compiled walk asks at the first encode); with
    ``lazy_model`` the model is built (and checked) on first use, from
    ``model_document()`` when given (else the document's ``model``);
    ``never``: ids the model never gives for text
    (:func:`~fasttok.models.hf_fields.model_from_json`)."""
    doc = vocab.metadata["document"]
    fail = JsonPathError(vocab.source or vocab.name)
    version = doc.get("version", "1.0")
    if version != "1.0":
        raise fail("$.version", f"unknown tokenizer version {version!r} (tokenizers reads 1.0)")
    make_normalizer = normalizer_maker(doc.get("normalizer"), "$.normalizer", fail)
    if model_document is None:
        build_model = functools.partial(model_from_json, doc.get("model"), "$.model", fail, never)
    else:
        def build_model() -> Any:
            return model_from_json(model_document(), "$.model", fail, never)

    def normalize(text: str) -> str:
        # the added tokens' normalizer: the stage, built when they first need it
        return stages.normalizer.normalize_str(text)

    stages = kind(
        make_normalizer=make_normalizer,
        make_pre_tokenizer=pre_tokenizer_maker(doc.get("pre_tokenizer"), "$.pre_tokenizer",
                                               fail),
        model=None if lazy_model else build_model(),
        model_factory=build_model if lazy_model else None,
        make_post_processor=post_processor_maker(doc.get("post_processor"), "$.post_processor",
                                                 fail),
        make_decoder=decoder_maker(doc.get("decoder"), "$.decoder", fail),
        make_added=functools.partial(_added_tokens, vocab,
                                     None if make_normalizer is None else normalize),
        truncation=_setting(doc, "truncation", fail),
        padding=_setting(doc, "padding", fail),
        record=vocab)
    return stages


def _setting(doc: dict, key: str, fail: Any) -> Any:
    # the file's truncation or padding (None for null): their reader, the
    # drop-in's, is imported for a file that sets one
    spec = doc.get(key)
    if spec is None:
        return None
    from fasttok.post_processors.hf_json import padding_from_json, truncation_from_json

    read = truncation_from_json if key == "truncation" else padding_from_json
    return read(spec, f"$.{key}", fail)


# Performance notes (issue 24: a load <= 0.5x tokenizers'; callgrind
# instructions of a fresh process, FASTTOK_CACHE=0, minus `import fasttok`).
#
# - Load: the drop-in's Encoding side moved to HFPipeline's module (with
#   the post-processors making Encodings only when asked) and the
#   tokenizer_config.json read by the compiled reader (no json import):
#   all-MiniLM-L6-v2 57.0M -> 54.1M, T5 conversion 51.8M -> 48.8M. Of the
#   rest, importing this module and the stages' is ~18-19M; importing a
#   compiled module is ~0.3-1.2M, of which the dynamic linker (symbol
#   lookups, relocations) is ~13%, the rest the interpreter's module and
#   type set-up: linker flags could save ~0.1M a module, so none were tried.
# - Where a Unigram conversion's load stands (session 13; T5 botchan_unigram_5000,
#   fresh processes, minus `import fasttok`'s 162.3M): fasttok.load 29.0M,
#   of which 13.6M of work (JSON 5.1M, the charsmap's base64 2.2M and trie
#   check 0.8M, the rest Python) and 15.1M importing ~22 modules. A module
#   costs ~0.3M before its own code (20 empty modules: 5.9M, the import
#   system's finders and loaders, in Python); the rest is their bodies,
#   mostly unmarshalling code in proportion to its size (loaders'
#   hf_tokenizer_json 2.5M, formats.hf 1.5M, this module 1.4M, table_cache
#   1.15M). At tokenizers' 8-9 ms (~30M) a load <= 0.5x has ~15M in all, which
#   the work alone nearly is: the target needs a load that imports next to
#   nothing past `import fasttok` (fewer, smaller reader modules: a layout
#   change), so it is not met (bench/hf_load_time.py at load 5: fasttok.load
#   0.95-1.14x tokenizers on the botchan files, 0.70x on kyoto; the drop-in,
#   its imports done, 0.33-0.46x).
# - Session 14 (instructions inside the fasttok.load call only, after
#   `import fasttok`): the stage readers one module in the loader
#   (loaders/hf_stage_json.py: a load imports no stage package), the model
#   dispatch in models/hf_fields, the file's reading out of the table
#   cache's module (fasttok/tokenizer_json.py), the decode side's helpers
#   in the decoders: 24 -> 17 modules, T5 26.96M -> 23.65M, the six files
#   -3.2M each (bench/hf_load_time.py at load 3: 0.62-0.93x tokenizers).
#   Left: ~12M importing 17 modules, ~8.5M compiled work (the document
#   5.05M, the charsmap 3.05M), ~3M Python (the added tokens 1.5M for
#   T5's 104); five of the six files also import the regex translator
#   (~2.2M) to check their Replace regexes. <= 0.5x is ~13-14M: a load of
#   ~7 modules. Tried and dropped: the added tokens' flags read a field at
#   a time in C loops (map, set, zip): 1.53M -> 1.58M.
# - The first encode of a Unigram file (the same measure, load and encode
#   minus load): 75.7M -> 32.4M in session 13, of which ~20.2M of work and
#   ~12M importing the walk's ~18 modules. What went: UnigramWalk's build
#   putting the rules' code points into Python lists (63.4M -> 46.4M of
#   work), the charsmap's rule of each character as a dict of strs
#   (put_char_rule now), the cluster classes' sets sorted and per-character
#   tests (11.3M -> 3.8M: code_points leaves characters out as it sweeps),
#   memcmp for most of the piece trie's sort (its texts' heads compared),
#   shared.normalized imported by stages the walk only asks for rules,
#   the 256 byte pieces looked up for a model without byte fallback.
#   Left: the piece trie's build ~5.7M (5,000 pieces placed), the walk's
#   build ~3M, the scores' parse 1.5M, the added tokens' LiteralCut 1.5M
#   (a dict trie in Python; its edges left unsorted for one-child nodes:
#   -0.08M, not kept); load and first encode together
#   1.47-1.91x tokenizers' (the drop-in 1.14-1.34x) at load 3.7, 2.03-2.95x
#   and 1.64-2.04x before.
# - The first encode of all-MiniLM-L6-v2 (~250M) is mostly compiling the
#   BERT stages' Unicode classes with re: _optimize_charset fills a bitmap
#   one BMP code point at a time, twice per class (body and prefix), so
#   the CJK class alone is 27M, BertPreTokenizer's pieces 52M, the
#   normalization-newer classes behind NFD 39M. An ASCII path in the two
#   stages (the classes restricted to ASCII) was tried and gave nothing:
#   the BERT walk asks its rule for the Latin-1 block whole on the first
#   text (fasttok.models._wordpiece.CodePointRules.cover), and that block
#   needs every class. What would help: a rule for that block that compiles
#   no class, or classes compiled without re's per-code-point bitmap.
