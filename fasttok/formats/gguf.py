"""GGUF ``gpt2`` (byte-level BPE) and ``bert`` (WordPiece) vocabularies, run as llama.cpp runs them.

The pipeline, in llama.cpp's order (``llama_vocab::impl::tokenize``):

1. **Special tokens** (:class:`_Specials`, llama.cpp's ``tokenizer_st_partition``).
   Every token whose attributes say CONTROL, USER_DEFINED or UNKNOWN is
   searched for in the text, *longest token first* (not leftmost first): each
   one splits every remaining text fragment at all its occurrences before the
   next one is looked at. USER_DEFINED tokens are always matched; CONTROL and
   UNKNOWN tokens only when special tokens are parsed. A token with the
   LSTRIP/RSTRIP attribute eats the ASCII whitespace beside it. The
   attributes are the file's token types as llama.cpp amends them at load
   (:func:`token_attributes`): end-of-generation and fill-in-the-middle texts
   become CONTROL, a few texts become USER_DEFINED, some models strip.
2. **Each text fragment** is encoded on its own: byte-level BPE with the
   ``tokenizer.ggml.pre`` regex list (:mod:`fasttok.pre_tokenizers.gguf`) and
   merge-list priority (the compiled :class:`fasttok.formats._byte_bpe.CoreBPE`), or
   WordPiece with llama.cpp's BERT normaliser (:class:`GGUFWordPiece`).
3. **BOS/EOS** when asked (``add_special_tokens=True``): byte-level BPE adds
   BOS and EOS as the file's ``add_bos``/``add_eos`` flags say; WordPiece
   always adds BOS (``[CLS]``) and SEP, as llama.cpp does.

How that maps onto :meth:`fasttok.Encoding.encode`:

* ``encode(text, disallowed_special=())`` is llama.cpp's
  ``tokenize(text, add_special=False, parse_special=False)``;
* ``encode(text, allowed_special="all", add_special_tokens=True)`` is
  ``tokenize(text, add_special=True, parse_special=True)``;
* the special tokens of the tiktoken API (``special_tokens_set``,
  ``is_special_token``, the ``allowed_special``/``disallowed_special`` sets)
  are the CONTROL and UNKNOWN ones, the tokens llama.cpp's ``parse_special``
  switches; allowing only some specials matches only those (a mode llama.cpp
  lacks). USER_DEFINED tokens are ordinary added tokens, as in llama.cpp,
  whose ``parse_special`` and ``special`` flags never touch them: always
  matched (``encode`` with the default ``disallowed_special="all"`` and
  ``encode_ordinary`` give their ids, and never refuse their text), decoded
  as their text, listed in ``token_byte_values`` and found by
  ``encode_single_token``.

Decoding is ``llama_detokenize(..., remove_special=False,
unparse_special=False)``: control tokens render as nothing, user-defined ones
as their text, and the clean-up of tokenization spaces applies where
llama.cpp applies it. :meth:`GGUFModel.detokenize` offers the other modes;
``decode_single_token_bytes`` gives ``llama_token_to_piece(special=True)``.

Performance notes (2-core VM, loaded; 3 MB English / code / multilingual /
Chinese corpus files, ``encode(text, disallowed_special=())``): every ``pre``
with a compiled scanner (gpt-2, llama-bpe, qwen2, qwen35, starcoder, refact,
command-r, seed-coder, gpt-4o, tekken and their kin) runs at 25-65 MB/s, e.g.
qwen2 28 / 51 / 25 / 15 MB/s and starcoder 31 / 56 / 32 / 27 MB/s, where
Python's ``re`` runs the same lists at 1-8 MB/s. The scanners read
llama.cpp's own Unicode 15.1 tables, so they agree with it on every text.
The lists without one (deepseek-*, falcon, default, bloom, kimi) run
Python's ``re`` at 1-7 MB/s. WordPiece (compiled normaliser and a
linear-time longest match, :mod:`fasttok.models._wordpiece`) runs at 23-53 MB/s,
where a Python loop runs at 1-2 MB/s. To find which special token occurs
first, each first character picks the cheaper of searching the text for
every token that starts with it and visiting its occurrences: for qwen2's
290 ``[PAD...]`` tokens on 3 MB that is 0.01 s, where searching for each
token takes 0.25 s.

Known limits: llama.cpp sorts special tokens by length with an unstable
sort and auto-detects fill-in-the-middle tokens in hash-map order; where a
vocabulary leaves either ambiguous, fasttok takes the lower id first.

>>> import fasttok                                                  # doctest: +SKIP
>>> enc = fasttok.load("ggml-vocab-llama-bpe.gguf")                 # doctest: +SKIP
>>> enc.encode("Hello world", allowed_special="all", add_special_tokens=True)  # doctest: +SKIP
[128000, 9906, 1917]
"""

from __future__ import annotations

import dataclasses
import functools
from array import array
from typing import Any, Optional

from fasttok.added_tokens.partition import (ATTR_BYTE, ATTR_CONTROL, ATTR_LSTRIP, ATTR_NORMAL,
                                            ATTR_RSTRIP, ATTR_UNDEFINED, ATTR_UNKNOWN, ATTR_UNUSED,
                                            ATTR_USER_DEFINED, PARSED_ONLY, SPECIAL,
                                            SpecialTokenPartition)
from fasttok.decoders.cleanup import clean_up_spaces, clean_up_spaces_kept
from fasttok.decoders.joined import join_bytes
from fasttok.decoders.stream import CleanUpStream, token_int
from fasttok.errors import FasttokError, UnknownEncodingError, VocabularyFileError
from fasttok.models._model_base import spelled_spans
from fasttok.models.interface import ModelBase
from fasttok.post_processors.special_ids import cls_sep, from_flags
from fasttok.pre_tokenizers.gguf import pre_tokenizer
from fasttok.shared._offset_units import spans_in_unit
from fasttok.shared.surrogates import repair_surrogates
from fasttok.vocab import Vocabulary

__all__ = ["GGUFByteBPE", "GGUFWordPiece", "token_attributes", "load_gguf_vocabulary",
           "MODEL_CLASSES", "first_id_by_bytes"]

# GGUF token type -> attribute (llama_vocab::impl::load); other values are UNDEFINED.
_TYPE_ATTR = {0: ATTR_UNDEFINED, 1: ATTR_NORMAL, 2: ATTR_UNKNOWN, 3: ATTR_CONTROL,
              4: ATTR_USER_DEFINED, 5: ATTR_UNUSED, 6: ATTR_BYTE}

# Texts llama.cpp makes CONTROL when the file does not give the id: one token
# per fill-in-the-middle role (the first found), keyed by the GGUF id keys
# that switch the search off.
_FIM_TEXTS = (
    (("fim_pre_token_id", "prefix_token_id"),
     ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>",
      "<|code_prefix|>", "<|prefix|>")),
    (("fim_suf_token_id", "suffix_token_id"),
     ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
      "<|code_suffix|>", "<|suffix|>")),
    (("fim_mid_token_id", "middle_token_id"),
     ("<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>",
      "<|code_middle|>", "<|middle|>")),
    (("fim_pad_token_id",), ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]")),
    (("fim_rep_token_id",), ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>")),
    (("fim_sep_token_id",), ("<|file_sep|>",)),
)
# End-of-generation texts: always CONTROL (this list also covers llama.cpp's
# end-of-turn and end-of-message searches).
_EOG_TEXTS = (
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<｜end▁of▁sentence｜>", "[e~[",
)
# Set to exactly USER_DEFINED whatever the file says (gpt-oss).
_ALWAYS_USER_DEFINED = ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>")
# (texts that must all be present, text that then becomes exactly this attribute)
_DEMOTIONS = (
    (("<|return|>", "<|call|>", "<|end|>"), "<|end|>", ATTR_USER_DEFINED),
    (("<|calls|>", "<|flush|>", "<|end|>"), "<|end|>", ATTR_USER_DEFINED),
    (("<|tool_response>", "</s>"), "</s>", ATTR_NORMAL),
)
# Per-model strip attributes, first matching rule only: (field, substrings,
# [(text or "*special*", attribute, on)]). Fields: tokenizer.ggml.pre,
# general.architecture, general.name (lowercased).
_STRIP_RULES = (
    ((("pre", ("jina-v2-de", "jina-v2-es", "jina-v2-code")),
      ("arch", ("nomic-bert-moe", "jina-bert-v3"))),
     (("<mask>", ATTR_LSTRIP, True),)),
    ((("name", ("phi-3", "phi3")),),
     (("*special*", ATTR_RSTRIP, True), ("</s>", ATTR_RSTRIP, True), ("<unk>", ATTR_RSTRIP, False),
      ("<s>", ATTR_RSTRIP, False), ("<|endoftext|>", ATTR_RSTRIP, False))),
    ((("name", ("modern-bert",)),), (("[MASK]", ATTR_LSTRIP, True),)),
)

@dataclasses.dataclass
class _TokenText:
    """The raw GGUF text of tokens, and the way back, for one vocabulary."""

    vocab: Vocabulary

    def __post_init__(self) -> None:
        v = self.vocab
        self.specials = {}
        for text, i in v.special_tokens.items():
            self.specials.setdefault(i, text)
        self.by_text = dict(v.special_tokens)
        # A repeated token's text is its first id's; other decode-only tokens
        # are text outside the byte-level alphabet, kept as their UTF-8.
        self.repeated = v.metadata.get("repeated_tokens", {})
        self.decode_only = {i: raw.decode("utf-8")
                            for i, raw in v.metadata.get("decode_only_tokens", {}).items()
                            if i not in self.repeated}
        self._ordinary: Optional[dict] = None

    def text(self, i: int) -> Optional[str]:
        if i in self.specials:
            return self.specials[i]
        if i in self.repeated:
            return self.text(self.repeated[i])
        if i in self.decode_only:
            return self.decode_only[i]
        tok = self.vocab.tokens[i] if i < len(self.vocab.tokens) else None
        if tok is None:
            return None
        if self.vocab.byte_level:
            from fasttok.shared._bytemap import encode_byte_level
            return encode_byte_level(tok)
        return tok.decode("utf-8")

    def find(self, text: str) -> Optional[int]:
        if text in self.by_text:
            return self.by_text[text]
        if self._ordinary is None:
            self._ordinary = {t: i for i, t in enumerate(self.vocab.tokens) if t is not None}
            for i, t in self.decode_only.items():
                self.by_text.setdefault(t, i)
            if text in self.by_text:
                return self.by_text[text]
        if self.vocab.byte_level:
            from fasttok.shared._bytemap import decode_byte_level
            try:
                raw = decode_byte_level(text)
            except ValueError:
                return None
        else:
            raw = text.encode("utf-8")
        return self._ordinary.get(raw)


def token_attributes(vocab: Vocabulary) -> dict:
    """``{id: llama_token_attr}`` for every token llama.cpp does not treat as plain NORMAL.

    The file's token types, amended as ``llama_vocab::impl::load`` amends
    them: end-of-generation texts and the fill-in-the-middle texts become
    CONTROL, gpt-oss's channel texts USER_DEFINED, and some models get
    LSTRIP/RSTRIP. Ids missing from the result are NORMAL.

    >>> v = Vocabulary(name="t", model="byte_bpe", tokens=(b"a", None, b"</s>"),
    ...                token_types=(1, 3, 1), special_tokens={"<s>": 1})
    >>> token_attributes(v) == {1: ATTR_CONTROL, 2: ATTR_NORMAL | ATTR_CONTROL}
    True
    """
    texts = _TokenText(vocab)
    types = vocab.token_types
    attrs: dict = {}
    if types is not None:
        for i, t in enumerate(types):
            if t != 1:
                attrs[i] = _TYPE_ATTR.get(t, ATTR_UNDEFINED)

    def get(i: int) -> int:
        return attrs.get(i, ATTR_NORMAL)

    meta = vocab.metadata
    for keys, candidates in _FIM_TEXTS:
        if any(f"tokenizer.ggml.{k}" in meta for k in keys):
            continue
        found = [i for i in (texts.find(t) for t in candidates) if i is not None]
        if found:
            i = min(found)
            attrs[i] = get(i) | ATTR_CONTROL
    present = {}
    for t in set(_EOG_TEXTS) | set(_ALWAYS_USER_DEFINED) | {t for r in _DEMOTIONS for t in r[0]}:
        i = texts.find(t)
        if i is not None:
            present[t] = i
    for t in _EOG_TEXTS:
        if t in present:
            attrs[present[t]] = get(present[t]) | ATTR_CONTROL
    for t in _ALWAYS_USER_DEFINED:
        if t in present:
            attrs[present[t]] = ATTR_USER_DEFINED
    for needed, target, attr in _DEMOTIONS:
        if all(t in present for t in needed):
            attrs[present[target]] = attr

    fields = {"pre": vocab.pre_tokenizer or "",
              "arch": str(meta.get("general.architecture", "")),
              "name": str(meta.get("general.name", "")).lower()}
    for conditions, actions in _STRIP_RULES:
        if not any(any(s in fields[f] for s in subs) for f, subs in conditions):
            continue
        specials = [i for i in list(attrs) if attrs[i] & SPECIAL]
        for text, bit, on in actions:
            ids = specials if text == "*special*" else [texts.find(text)]
            for i in ids:
                if i is not None:
                    attrs[i] = (get(i) | bit) if on else (get(i) & ~bit)
        break
    return {i: a for i, a in attrs.items() if a != ATTR_NORMAL}




class GGUFModel(ModelBase):
    """The :class:`fasttok.models.interface.Model` of llama.cpp-style vocabularies.

    Subclasses provide ``_encode_text(fragment) -> list[int]``, the pieces
    (``_piece``) and the lookup of a token by its vocabulary text
    (``_find_spelled``); this class does special tokens, masks and decoding,
    and :class:`~fasttok.models.interface.ModelBase` the batches and the
    refusals (named by the vocabulary and its model: WordPiece cannot
    sample, only SentencePiece gives pieces).
    """

    #: whether a BYTE token (``<0xXX>``) stands for its byte (llama.cpp's
    #: WordPiece renders it as nothing)
    renders_byte_tokens = True

    def __init__(self, vocab: Vocabulary, clean_spaces: bool) -> None:
        self.vocab = vocab
        self.label, self.kind = vocab.name, vocab.model
        self.clean_spaces = clean_spaces
        self.post_processor = from_flags(vocab)
        self.texts = _TokenText(vocab)
        self.attrs = token_attributes(vocab)
        entries = []
        for i, attr in self.attrs.items():
            if attr & SPECIAL:
                text = self.texts.text(i)
                if text:
                    entries.append((i, text, attr))
        self._specials = SpecialTokenPartition(entries)
        parsed = sorted((i, t) for i, t, a in entries if a & PARSED_ONLY)
        self._order_ids = [i for i, _ in parsed]
        self._order_texts = [t for _, t in parsed]
        self.special_order = tuple(t.encode("utf-8") for t in self._order_texts)
        self._all_entries = self._specials.entries
        self._hidden = frozenset(i for i, a in self.attrs.items() if a & PARSED_ONLY)
        self._pieces: dict = {}
        self._by_bytes: Optional[dict] = None

    # -------------------------------------------------------------- encoding

    def _entries_for(self, allowed: Any) -> list:
        if allowed is None:
            return self._specials.always
        mask = bytes(allowed)
        if mask.count(1) == len(self._order_ids):
            return self._all_entries
        if not any(mask):
            return self._specials.always
        on = {self._order_ids[k] for k, flag in enumerate(mask) if flag and k < len(self._order_ids)}
        return [e for e in self._all_entries if not e[2] & PARSED_ONLY or e[0] in on]

    def _fragments(self, text: str, entries: list) -> list:
        # text cut at the special tokens that entries match: ids and strs
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        return self._specials.partition(repair_surrogates(text), entries)

    def _encode(self, text: str, entries: list) -> list:
        out: list = []
        for frag in self._fragments(text, entries):
            if type(frag) is int:
                out.append(frag)
            else:
                out += self._encode_text(frag)
        return out

    def encode_ordinary(self, text: str) -> list:
        """Ids with control tokens as plain text (user-defined tokens still
        matched): ``encode(text, None)`` without reading a mask."""
        return self._encode(text, self._specials.always)

    def encode(self, text: str, allowed: Any) -> list:
        """Ids of ``text``; ``allowed[i]`` says whether ``special_order[i]`` is matched."""
        return self._encode(text, self._entries_for(allowed))

    def encode_many(self, texts: list, allowed: Any = None) -> list:
        """:meth:`encode` of each text, the special tokens to match picked once."""
        entries = self._entries_for(allowed)
        return [self._encode(t, entries) for t in texts]

    def encode_with_offsets(self, text: str, allowed: Any) -> tuple:
        """:meth:`encode`'s ids with their spans of ``text``'s UTF-8 (see
        :meth:`fasttok.models.interface.Model.encode_with_offsets`): a
        special token spans its text and the whitespace an LSTRIP/RSTRIP
        token takes, a fragment's tokens what :meth:`_fragment_offsets` gives."""
        repaired = repair_surrogates(text)
        if len(repaired) != len(text):
            raise FasttokError(f"{self.label}: offsets need a text without surrogate pairs "
                               "(join each pair into its character first)")
        frags = self._specials.partition_spans(repaired, self._entries_for(allowed))
        if len(frags) == 1 and len(frags[0]) == 2:
            return self._fragment_offsets(repaired, True)   # no special token: in its unit
        ids: list = []
        spans = array("q")
        first, done, at = True, 0, 0   # at: the UTF-8 length of repaired[:done]
        for frag in frags:
            start, end = frag[-2], frag[-1]
            at += len(repaired[done:start].encode("utf-8"))
            size = len(repaired[start:end].encode("utf-8"))
            if len(frag) == 3:
                ids.append(frag[0])
                spans += array("q", (at, at + size))
                first = True
            else:
                fragment = repaired[start:end]
                found, found_spans, unit = self._fragment_offsets(fragment, first)
                if unit != "bytes":
                    found_spans = [x for span in spans_in_unit(fragment, found_spans, unit, "bytes")
                                   for x in span]
                ids += found
                spans += array("q", [at + x for x in found_spans])
                first = False
            at += size
            done = end
        return ids, spans, "bytes"

    def _fragment_offsets(self, fragment: str, first: bool) -> tuple:
        # (ids, spans, unit) of text between special tokens (first: at the
        # start or after one), as Model.encode_with_offsets gives them: here
        # where the tokens' bytes spell it (byte-level BPE), each token its
        # own bytes
        ids = self._encode_text(fragment)
        spans = spelled_spans(ids, self.token_bytes, fragment)
        if spans is None:
            raise self._refusal("offsets need the walk's spans: {}'s tokens do not spell the "
                                "text (a byte without a token of its own is dropped)")
        return ids, spans, "bytes"

    def find_special(self, text: str, mask: Any) -> int:
        """Index in ``special_order`` of a masked special token that ``text`` contains, or -1."""
        mask = bytes(mask)
        search = self._specials.search_all
        if not any(mask) or not search.may_occur(text):
            return -1
        found = search.occurring(text)
        for k, flag in enumerate(mask[:len(self._order_texts)]):
            if flag and self._order_texts[k] in found:
                return k
        return -1

    # -------------------------------------------------------------- decoding

    def _check(self, token: int) -> int:
        token = token_int(token)
        if not 0 <= token < len(self.vocab.tokens):
            raise KeyError(token)
        return token

    def _piece(self, i: int) -> bytes:
        # llama_token_to_piece(special=True) by the token's attributes; the
        # bytes of an ordinary token are the model's (_normal_piece)
        attr = self.attrs.get(i, ATTR_NORMAL)
        text = self.texts.text(i) or ""
        if attr & SPECIAL:
            return text.encode("utf-8")
        if attr & ATTR_NORMAL:
            return self._normal_piece(i, text)
        if attr & ATTR_BYTE and self.renders_byte_tokens:
            try:
                return bytes([int(text[3:5], 16)])
            except ValueError:
                return b"\x00"
        return b""  # UNUSED, UNDEFINED (and BYTE where not rendered): llama.cpp gives nothing

    def token_bytes(self, token: int) -> bytes:
        """``llama_token_to_piece(token, special=True)``; ``KeyError`` for an id out of range."""
        token = self._check(token)
        piece = self._pieces.get(token)
        if piece is None:
            piece = self._pieces[token] = self._piece(token)
        return piece

    def detokenize(self, tokens: Any, *, remove_special: bool = False,
                   unparse_special: bool = False) -> bytes:
        """``llama_detokenize``: the bytes of ``tokens`` with llama.cpp's options.

        ``unparse_special`` renders control tokens as their text;
        ``remove_special`` drops a leading BOS and trailing EOS that the
        vocabulary adds.
        """
        ids = [self._check(t) for t in tokens]
        v = self.vocab
        strip_space = v.add_dummy_prefix
        if remove_special and v.add_bos and ids and ids[0] == v.bos_id:
            strip_space = False
            ids = ids[1:]
        if remove_special and v.add_eos and ids and ids[-1] == v.eos_id:
            ids = ids[:-1]
        parts = []
        for i in ids:
            piece = b"" if (not unparse_special and i in self._hidden) else self.token_bytes(i)
            if strip_space and piece.startswith(b" "):
                piece = piece[1:]
            strip_space = False
            parts.append(piece)
        data = join_bytes(parts)
        return clean_up_spaces(data) if self.clean_spaces else data

    def decode_bytes(self, tokens: Any) -> bytes:
        """``llama_detokenize(remove_special=False, unparse_special=False)``."""
        return self.detokenize(tokens)

    def decode_with_offsets(self, tokens: Any) -> tuple:
        """:meth:`decode_bytes` and where each id's bytes start in them.

        Each id's bytes at its place (:meth:`stream_piece`: control tokens
        leave nothing, the first loses the space prefix) are joined, and the
        clean-up of tokenization spaces says which bytes survive: an id
        starts at its first surviving byte, or where the next surviving byte
        goes when none of its bytes survive.
        """
        starts, pos = [], 0
        parts = []
        for k, token in enumerate(tokens):
            piece = self.stream_piece(token, k == 0)
            starts.append(pos)
            parts.append(piece)
            pos += len(piece)
        data = join_bytes(parts)
        if not self.clean_spaces:
            return data, starts
        data, kept = clean_up_spaces_kept(data)
        # starts ascend: one walk along kept gives each the count of kept
        # bytes before it, which is where its first surviving byte lands
        out, j = [], 0
        for start in starts:
            while j < len(kept) and kept[j] < start:
                j += 1
            out.append(j)
        return data, out

    def token_byte_values(self) -> list:
        """:meth:`token_bytes` of every id but the CONTROL and UNKNOWN ones, sorted."""
        return sorted(self.token_bytes(i) for i in range(len(self.vocab.tokens))
                      if i not in self._hidden)

    def find_token(self, data: bytes) -> int:
        """The id of the ordinary (not CONTROL/UNKNOWN) token spelled ``data``
        -- its text in the vocabulary, else the bytes :meth:`token_bytes` gives
        for it (the lowest such id) -- or -1."""
        data = bytes(data)
        i = self._find_spelled(data)
        if i >= 0 and i not in self._hidden:
            return i
        if self._by_bytes is None:
            self._by_bytes = first_id_by_bytes(
                self.token_bytes, (i for i in range(len(self.vocab.tokens)) if i not in self._hidden))
        return self._by_bytes.get(data, -1)

    def _find_spelled(self, data: bytes) -> int:
        # the id whose vocabulary text (as the subclass stores it) is data, or -1
        raise NotImplementedError

    def stream_decoder(self) -> CleanUpStream:
        """A stream whose pushes add up to :meth:`decode_bytes`."""
        return CleanUpStream(self.stream_piece, self.clean_spaces)

    def stream_piece(self, token: int, first: bool) -> bytes:
        """The bytes ``decode_bytes`` gives ``token`` at its place in a sequence,
        before the space clean-up (which the stream runs on the joined bytes)."""
        i = self._check(token)
        piece = b"" if i in self._hidden else self.token_bytes(i)
        if first and self.vocab.add_dummy_prefix and piece.startswith(b" "):
            piece = piece[1:]
        return piece


class GGUFByteBPE(GGUFModel):
    """A GGUF ``gpt2`` vocabulary: llama.cpp's byte-level BPE with its pre-tokenizer list.

    Merging runs in the compiled core with merge-list priority; llama.cpp's
    ``ignore_merges`` (a piece that is a token is emitted whole) where the
    ``pre`` value has it. A byte without a token of its own (falcon lacks 28)
    is dropped, as llama.cpp drops it.
    """

    def __init__(self, vocab: Vocabulary) -> None:
        self.pre = pre_tokenizer(vocab.pre_tokenizer)
        super().__init__(vocab, self.pre.clean_spaces)
        from fasttok.formats._byte_bpe import CoreBPE
        from fasttok.shared._tables import TokenTables
        from fasttok.shared._bytemap import decode_byte_level

        tokens = list(vocab.tokens)
        ids = {t: i for i, t in enumerate(tokens) if t is not None}
        # llama.cpp looks merged symbols up among *all* token texts, so a
        # user-defined token spelled in the byte-level alphabet (deepseek's
        # "õ" is byte 0xF5) is what that byte sequence encodes to. CONTROL
        # and UNKNOWN ones (qwen2's "</s>" is a NORMAL entry llama.cpp makes
        # CONTROL) stay out of the merges: llama.cpp's parse_special=false
        # would merge user text into them, which only allowed_special may.
        # Their bytes still decode (token_bytes reads the vocabulary).
        for i in sorted(self.attrs):
            text = self.texts.text(i)
            if self.attrs[i] & PARSED_ONLY:
                raw = tokens[i]
                if raw is not None and len(raw) > 1:   # a byte must stay a symbol
                    tokens[i] = None
                    if ids.get(raw) == i:
                        del ids[raw]
                continue
            if tokens[i] is None and text and i not in self.texts.decode_only:
                try:
                    raw = decode_byte_level(text)
                except ValueError:
                    continue
                if raw not in ids:
                    tokens[i] = raw
                    ids[raw] = i
        merges = [(ids.get(a, -1), ids.get(b, -1)) for a, b in (vocab.merges or ())]
        # A byte with no token (falcon lacks 28) is a symbol no merge touches,
        # and llama.cpp drops it at the end. Here it gets a stand-in id past
        # the vocabulary, which blocks merges the same way and is filtered out.
        self._n = len(tokens)
        missing = [b for b in range(256) if bytes([b]) not in ids]
        self.missing_bytes = bool(missing)
        if missing:
            tokens += [None] * 256
            for b in missing:
                tokens[self._n + b] = bytes([b])
        tables = TokenTables(tokens, merges=merges)
        whole = self.pre.ignore_merges
        self._exact = CoreBPE(tables, {}, tokens, splitter=self.pre.splitter,
                              whole_piece_lookup=whole)
        scanner = self.pre.scanner
        self._fast = (CoreBPE(tables, {}, tokens, scanner=scanner, whole_piece_lookup=whole)
                      if scanner else None)
        self._tables = tables
        self._bpe_ids = ids
        # where every byte is a token, text without a user-defined token is
        # the compiled core's alone: one call a text
        self._plain = self._fast.encode_ordinary if self._fast is not None and not missing \
            else None
        self._plain_always = self._plain is not None and not self._specials.always

    def encode_ordinary(self, text: str) -> list:
        """Ids with control tokens as plain text (user-defined tokens still matched)."""
        if self._plain_always or (self._plain is not None and type(text) is str
                                  and not self._specials.search_always.may_occur(text)):
            return self._plain(text)
        return super().encode_ordinary(text)

    def _encode_text(self, text: str) -> list:
        return self._known((self._fast or self._exact).encode_ordinary(text))

    def _fragment_offsets(self, fragment: str, first: bool) -> tuple:
        # the compiled walk's character spans where it gives every id (a
        # scanner, every byte a token), else each token's own bytes
        found = None if self._plain is None else self._fast.encode_offsets(fragment, None)
        if found is None:
            return super()._fragment_offsets(fragment, first)
        return found[0], found[1], "chars"

    def _known(self, ids: list) -> list:
        # the stand-ins of bytes without a token dropped, as llama.cpp drops them
        if self.missing_bytes and ids and max(ids) >= self._n:
            ids = [i for i in ids if i < self._n]
        return ids

    def sample(self, text: str, allowed: Any, alpha: float, nbest_size: int,
               rng: Any) -> list:
        """BPE-dropout of the text between special tokens (see ``CoreBPE.sample``)."""
        core = self._fast or self._exact
        out: list = []
        for frag in self._fragments(text, self._entries_for(allowed)):
            if type(frag) is int:
                out.append(frag)
            else:
                out += self._known(core.sample(frag, None, alpha, nbest_size, rng))
        return out

    def encode_bytes_piece(self, piece: bytes) -> list:
        """Merge raw bytes as one piece, without the pre-tokenizer."""
        return [i for i in self._exact.encode_bytes_piece(bytes(piece)) if i < self._n]

    def _find_spelled(self, data: bytes) -> int:
        return self._bpe_ids.get(data, -1)

    def _normal_piece(self, i: int, text: str) -> bytes:
        tok = self.vocab.tokens[i]
        return tok if tok is not None else _unknown_bytes(text)


def _unknown_bytes(text: str) -> bytes:
    # llama_decode_text: a character outside the byte-level alphabet becomes
    # "[UNK_BYTE_0x<its utf-8 in hex><the whole token text>]".
    from fasttok.shared._bytemap import decode_byte_level

    out = bytearray()
    for ch in text:
        try:
            out += decode_byte_level(ch)
        except ValueError:
            out += f"[UNK_BYTE_0x{ch.encode('utf-8').hex()}{text}]".encode("utf-8")
    return bytes(out)


class GGUFWordPiece(GGUFModel):
    """A GGUF ``bert`` vocabulary: llama.cpp's WordPiece.

    llama.cpp stores word-initial pieces with a leading ``▁`` (U+2581) and
    continuation pieces bare (no ``##``), and tokenizes each word of the
    normalised text as ``"▁" + word`` by greedy longest match; a word with an
    unmatched position becomes one ``[UNK]``. The normaliser takes each code
    point to the *first* code point of its canonical decomposition (so
    accents and Hangul vowels vanish), drops controls and marks, lowercases
    with the simple map, splits on whitespace and isolates punctuation,
    ASCII symbols and CJK ideographs -- all with llama.cpp's Unicode 15.1
    tables (:mod:`fasttok.shared.llama_unicode`), not the interpreter's
    ``unicodedata``. Both run in the compiled
    :class:`fasttok.models._wordpiece.WordPieceModel`, in time linear in the text
    whatever the tokens' lengths.
    """

    renders_byte_tokens = False

    def __init__(self, vocab: Vocabulary) -> None:
        from fasttok.models._wordpiece import WordPieceModel

        super().__init__(vocab, clean_spaces=True)
        self.post_processor = cls_sep(vocab)
        lowercase = bool(vocab.metadata.get("tokenizer.ggml.normalizer.lowercase", True))
        strip_accents = bool(vocab.metadata.get("tokenizer.ggml.normalizer.strip_accents",
                                                lowercase))
        # CONTROL and UNKNOWN tokens are no words: "[CLS]" in user text
        # (were it one word) must not become the [CLS] id
        words = list(vocab.tokens)
        for i in self._hidden:
            words[i] = None
        self.core = WordPieceModel(words, vocab.unk_id, lowercase=lowercase,
                                   strip_accents=strip_accents)
        self.words = self.core.words
        if not self._specials.always:
            # nothing to look for in ordinary text: one call, no Python frame of ours
            self.encode_ordinary = self.core.encode

    def _encode(self, text: str, entries: list) -> list:
        # The compiled model reads surrogates as the repair would leave them.
        encode = self.core.encode
        if not entries:
            return encode(text)
        out: list = []
        for frag in self._specials.partition(text, entries):
            if type(frag) is int:
                out.append(frag)
            else:
                out += encode(frag)
        return out

    def _encode_text(self, text: str) -> list:
        return self.core.encode(text)

    @functools.cached_property
    def _offset_rules(self) -> Any:
        # llama.cpp's rule (the core's normalizer's table, made by a first
        # encode) as the rules the core's walk with offsets runs
        from fasttok.models._wordpiece import CodePointRules

        self.core.encode("a")
        normalizer = self.core.normalizer
        return CodePointRules(lambda cps: [normalizer.map_code_point(cp) for cp in cps])

    def _fragment_offsets(self, fragment: str, first: bool) -> tuple:
        # the walk's character spans (each normalized character is of one
        # character; [UNK] spans its word)
        found = self.core.encode_with(fragment, self._offset_rules, None, True)
        return found[0], found[1], "chars"

    def encode_many(self, texts: list, allowed: Any = None) -> list:
        if self._entries_for(allowed):
            return super().encode_many(texts, allowed)
        return self.core.encode_many(texts)

    def encode_many_flat(self, texts: list, allowed: Any = None) -> tuple:
        if self._entries_for(allowed):
            return super().encode_many_flat(texts, allowed)
        return self.core.encode_many_flat(texts)

    def count_many(self, texts: list, allowed: Any = None) -> list:
        if self._entries_for(allowed):
            return super().count_many(texts, allowed)
        return self.core.count_many(texts)

    def count(self, text: str, allowed: Any = None) -> int:
        entries = self._entries_for(allowed)
        if not entries:
            return self.core.count(text)
        return len(self._encode(text, entries))

    def encode_bytes_piece(self, piece: bytes) -> list:
        return self._encode_text(bytes(piece).decode("utf-8", "replace"))

    def _find_spelled(self, data: bytes) -> int:
        return self.core.find_token(data)

    def _normal_piece(self, i: int, text: str) -> bytes:
        return text.replace("\u2581", " ").encode("utf-8")


def first_id_by_bytes(token_bytes: Any, ids: Any) -> dict:
    """``{token_bytes(i): i}`` over ``ids``, the first id kept where two
    give the same bytes: the way back from ``decode_single_token_bytes``.

    >>> first_id_by_bytes({1: b"a", 2: b"b", 3: b"a"}.__getitem__, [1, 2, 3])
    {b'a': 1, b'b': 2}
    """
    found: dict = {}
    for i in ids:
        found.setdefault(token_bytes(i), i)
    return found


MODEL_CLASSES = {"gguf_byte_bpe": GGUFByteBPE, "gguf_wordpiece": GGUFWordPiece}

# Vocabulary.model from loaders/gguf.py -> the model fasttok runs it with.
_GGUF_MODEL_NAMES = {"byte_bpe": "gguf_byte_bpe", "wordpiece": "gguf_wordpiece",
                     "char_bpe": "gguf_char_bpe"}


def load_gguf_vocabulary(path: str, **options: Any) -> Vocabulary:
    """A GGUF file's vocabulary, set up for llama.cpp's tokenization.

    ``gpt2`` files get model ``"gguf_byte_bpe"``, ``bert`` files
    ``"gguf_wordpiece"`` and ``gemma4`` files ``"gguf_char_bpe"``
    (:mod:`fasttok.formats.gguf_char_bpe`); ``special_tokens`` becomes the tokens llama.cpp
    treats as special (see :func:`token_attributes`). Other tokenizer models
    (``llama``, ``t5``) keep the loader's model name and run if a model is
    registered for it.
    """
    from fasttok import registry
    from fasttok.loaders.gguf import load_gguf, read_gguf_metadata

    if options:
        raise FasttokError(f"{path}: GGUF files take no loader options (got {', '.join(options)})")
    vocab = load_gguf(path)
    gguf_model = vocab.metadata.get("tokenizer.ggml.model", "?")
    model = _GGUF_MODEL_NAMES.get(vocab.model, vocab.model)
    if model not in registry.MODELS:
        raise UnknownEncodingError(
            f"{path}: GGUF tokenizer model {gguf_model!r} ({vocab.model}) is not supported yet; "
            f"fasttok runs GGUF models gpt2, bert and gemma4"
            + "".join(f", {m}" for m in sorted(registry.MODELS) if m not in
                      ("byte_bpe", "gguf_byte_bpe", "gguf_wordpiece", "gguf_char_bpe")))
    if model == vocab.model:
        return vocab
    if model == "gguf_byte_bpe":
        try:
            pre_tokenizer(vocab.pre_tokenizer)
        except UnknownEncodingError as exc:
            key = "tokenizer.ggml.pre"
            # Only on this error path: read the key/value block again for the offset.
            offset = read_gguf_metadata(path).offsets.get(key)
            raise VocabularyFileError(path, str(exc), offset=offset, field=key) from None
    attrs = token_attributes(vocab)
    texts = _TokenText(vocab)
    specials = {}
    for i in sorted(attrs):
        if attrs[i] & SPECIAL:
            text = texts.text(i)
            if text:
                specials.setdefault(text, i)
    return vocab.replace(model=model, special_tokens=specials)
