"""GGUF ``gemma4`` vocabularies: llama.cpp's BPE over characters, SentencePiece-style.

llama.cpp (``llama-vocab.cpp``) runs a ``gemma4`` file as a BPE vocabulary
with the ``gemma4`` pre-tokenizer type, which differs from the byte-level
``gpt2`` one (:class:`fasttok.formats.gguf.GGUFByteBPE`) in what follows:

1. the tokens are raw UTF-8 text with ``▁`` for a space, not GPT-2's
   byte-level alphabet: each text fragment between special tokens has its
   spaces written as ``▁`` (``escape_whitespaces``) before it is split;
2. the only split is ``[^\\n]+|[\\n]+``: runs of newlines apart from the rest;
   a run of newlines that is a token is that token whole (llama.cpp's "fix
   for gemma 4", PR 21343), any other piece is merged;
3. merging starts from the piece's *characters* (not bytes), the lowest merge
   rank first and the leftmost on ties, a pair listed twice keeping its first
   rank; a final symbol that is no token becomes one ``<0xXX>`` token per
   byte;
4. BOS is always added with ``add_special_tokens`` (llama.cpp overrides a
   file's ``add_bos_token: false``, PR 21500).

Decoding: a NORMAL token is its text with ``▁`` back to a space, a BYTE token
its byte, and the clean-up of tokenization spaces applies, as for ``gpt2``.

Steps 1 and 3 are Hugging Face ``tokenizers``' BPE with ``byte_fallback``,
which runs in the compiled :class:`fasttok.models.hf_bpe.BPE`; it refuses a
merge whose parts or result are no token, where llama.cpp would keep a merge
that can never apply (part) or fall back to bytes (result): such a file is
refused, naming the merge.

>>> import fasttok                                                  # doctest: +SKIP
>>> enc = fasttok.load("ggml-vocab-gemma-4.gguf")                   # doctest: +SKIP
>>> enc.encode("Hello world", disallowed_special=())                # doctest: +SKIP
[9259, 1902]
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from fasttok.errors import VocabularyFileError
from fasttok.formats.gguf import GGUFModel
from fasttok.models.hf_bpe import BPE, BpeMergeError
from fasttok.vocab import Vocabulary

__all__ = ["GGUFCharBPE"]


def _texts(raws) -> list:
    # UTF-8 strings (the loader checked them) decoded in one call: a byte
    # that UTF-8 never holds separates them
    return b"\xff".join(raws).decode("utf-8", "surrogateescape").split("\udcff")


def _file_index(vocab: Vocabulary, k: int) -> int:
    # the index in the file of the record's merge k: the loader left out
    # the merges that can never apply (metadata["unusable_merges"])
    for skipped in sorted(vocab.metadata.get("unusable_merges", ())):
        if skipped > k:
            break
        k += 1
    return k


# llama.cpp's gemma4 regex: newline runs apart from the rest
_PIECES = re.compile(r"[^\n]+|\n+")


class GGUFCharBPE(GGUFModel):
    """A GGUF ``gemma4`` vocabulary, tokenized as llama.cpp does (see the module notes).

    >>> from fasttok.vocab import Vocabulary
    >>> v = Vocabulary(name="t", model="gguf_char_bpe", byte_level=False,
    ...                tokens=(b"<bos>", b"\\xe2\\x96\\x81", b"a", b"\\xe2\\x96\\x81a", b"\\n\\n"),
    ...                token_types=(3, 1, 1, 1, 1), merges=((b"\\xe2\\x96\\x81", b"a"),),
    ...                escape_whitespaces=True, bos_id=0, add_bos=True)
    >>> GGUFCharBPE(v).encode_ordinary("a a\\n\\n")
    [2, 3, 4]
    """

    def __init__(self, vocab: Vocabulary) -> None:
        super().__init__(vocab, clean_spaces=True)
        texts = _texts(vocab.tokens)
        # a text listed twice is its first id's, as llama.cpp's merges find it
        ids = dict(zip(reversed(texts), range(len(texts) - 1, -1, -1)))
        sides = _texts(itertools.chain.from_iterable(vocab.merges or ()))
        # a pair listed twice keeps its first rank (llama.cpp's emplace)
        first: dict = {}
        for k, pair in enumerate(zip(sides[0::2], sides[1::2])):
            first.setdefault(pair, k)
        try:
            # CONTROL and UNKNOWN tokens are never merged into from user text,
            # as GGUFByteBPE keeps them out of its merges
            self._bpe = BPE(ids, list(first), byte_fallback=True, never=self._hidden)
        except BpeMergeError as exc:
            at = _file_index(vocab, list(first.values())[exc.index])
            raise VocabularyFileError(
                vocab.source or vocab.name,
                f"{exc.problem}; llama.cpp keeps such a merge and fasttok does not reproduce "
                "what it does with it: add the token to the vocabulary or drop the merge",
                field=f"tokenizer.ggml.merges[{at}]") from None
        self._ids = ids
        self._newlines = {text: i for text, i in ids.items()
                          if text[:1] == "\n" and not text.strip("\n") and i not in self._hidden}

    def _merged(self, text: str, merge) -> list:
        # the ids of a fragment, each piece that is no whole newline token
        # through merge(piece)
        out: list = []
        newlines = self._newlines
        for piece in _PIECES.findall(text.replace(" ", "\u2581")):
            whole = newlines.get(piece) if piece[0] == "\n" else None
            if whole is not None:
                out.append(whole)
            else:
                out += merge(piece)
        return out

    def _encode_text(self, text: str) -> list:
        return self._merged(text, self._bpe.tokenize_ids)

    def sample(self, text: str, allowed: Any, alpha: float, nbest_size: int,
               rng: Any) -> list:
        """BPE-dropout of each piece between special tokens (``nbest_size`` is ignored)."""
        def merge(piece: str) -> list:
            return self._bpe.sample_ids(piece, alpha, rng.getrandbits(64))

        out: list = []
        for frag in self._fragments(text, self._entries_for(allowed)):
            if type(frag) is int:
                out.append(frag)
            else:
                out += self._merged(frag, merge)
        return out

    def encode_bytes_piece(self, piece: bytes) -> list:
        """Merge ``piece`` (UTF-8, its spaces as ``▁``) as one piece, without the split."""
        text = bytes(piece).decode("utf-8", "replace")
        return self._bpe.tokenize_ids(text.replace(" ", "\u2581"))

    def _find_spelled(self, data: bytes) -> int:
        try:
            return self._ids.get(data.decode("utf-8"), -1)
        except UnicodeDecodeError:
            return -1

    def _normal_piece(self, i: int, text: str) -> bytes:
        return text.replace("\u2581", " ").encode("utf-8")
