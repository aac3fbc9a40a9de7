"""``tokenizers``' ``DecodeStream``: the text of ids that arrive one at a time.

Each step decodes the ids it holds and returns what follows the text it
returned before, once that text is longer than before and does not end in
U+FFFD (an incomplete character, which a later id may complete); then it
drops the ids before the previous prefix so the re-decoded window stays
short. This is the rule of tokenizers' ``step_decode_stream``, step for
step: the same ``None``\\s, the same chunks, and the same error where a
decoder rewrites text it had already given out.

That rule gives text a later id can still change in one case among the
decoders: a ``ByteFallback`` stage gives a run of byte tokens its text only
when the whole run is valid UTF-8, else one U+FFFD per byte, so
``<0x25>`` (``%``) then ``<0x8E>`` is ``"��"``. :func:`holds_byte_runs`
says when a stream that must only give settled text (``Encoding.decode_stream``)
holds the trailing run of byte tokens back until another token ends it: the
worst-case holdback of that rule is the whole run, every other stage holds
nothing beyond tokenizers' rule (an incomplete character at the end).

>>> from fasttok.decoders.hf_metaspace import Metaspace
>>> stream = HFDecodeStream(Metaspace())
>>> token_of = lambda i, skip_special_tokens: {0: "▁Hello", 1: "▁world"}.get(i)
>>> [stream.step(token_of, i) for i in (0, 1)]
['Hello', ' world']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional, Union

from fasttok.errors import FasttokError

__all__ = ["HFDecodeStream", "holds_byte_runs", "TextStream"]


class HFDecodeStream:
    """Streaming decode with a ``tokenizer.json`` decoder (``None``: tokens joined by spaces).

    ``ids`` starts the stream with ids already seen, as tokenizers'
    ``DecodeStream(ids=...)`` does. :meth:`step` takes what tokenizers'
    ``DecodeStream.step(tokenizer, id)`` takes, with the tokenizer replaced by
    ``token_of(id, skip_special_tokens) -> str | None``: the id's token, or
    ``None`` where ``Tokenizer.decode`` leaves the id out (no such id, or a
    special token while ``skip_special_tokens``). An element given as a
    ``str`` is a token already and is used as it is.

    >>> from fasttok.decoders.hf_byte_fallback import ByteFallback
    >>> s = HFDecodeStream(ByteFallback())
    >>> [s.step(None, t) for t in ("<0xE5>", "<0x8F>", "<0xAB>", "!")]
    [None, None, '叫', '!']
    """

    __slots__ = ("decoder", "skip_special_tokens", "_ids", "_prefix", "_prefix_index")

    def __init__(self, decoder, skip_special_tokens: bool = False,
                 ids: Optional[list] = None) -> None:
        self.decoder = decoder
        self.skip_special_tokens = skip_special_tokens
        self._ids = list(ids or ())
        self._prefix = ""
        self._prefix_index = 0

    def step(self, token_of: Optional[Callable], id: Union[int, str, list]) -> Optional[str]:
        """Add an id (or a token, or a list of them); the new text, or ``None`` if none is ready.

        Raises :class:`~fasttok.errors.FasttokError` where the decoded text no
        longer starts with the text already returned (tokenizers'
        ``InvalidPrefix``).

        >>> s = HFDecodeStream(None)
        >>> s.step(None, ["a", "b"]), s.step(None, "c")
        ('a b', ' c')
        """
        ids = self._ids
        if not self._prefix and ids:
            prefix = self._decode(token_of, ids)
            if not prefix.endswith("\ufffd"):
                self._prefix = prefix
                self._prefix_index = len(ids)
        if isinstance(id, list):
            ids.extend(id)
        else:
            ids.append(id)
        text = self._decode(token_of, ids)
        prefix = self._prefix
        if text.endswith("\ufffd") or not _longer_in_utf8(text, prefix):
            return None
        if not text.startswith(prefix):
            raise FasttokError(f"decode stream: {text!r} no longer starts with the text already "
                               f"returned, {prefix!r} (tokenizers' InvalidPrefix)")
        new_prefix_index = len(ids) - self._prefix_index
        del ids[:self._prefix_index]
        self._prefix = self._decode(token_of, ids)
        self._prefix_index = new_prefix_index
        return text[len(prefix):]

    def _decode(self, token_of: Optional[Callable], ids: list) -> str:
        skip = self.skip_special_tokens
        tokens = []
        for i in ids:
            token = i if isinstance(i, str) else token_of(i, skip)
            if token is not None:
                tokens.append(token)
        if self.decoder is None:
            return " ".join(tokens)
        return self.decoder.decode(tokens)


def holds_byte_runs(decoder) -> bool:
    """Whether ``decoder`` (a chain, or ``None``) has a ``ByteFallback``
    stage: then a run of byte tokens is settled only once a token that is not
    one follows it (a later byte token can make the run invalid UTF-8).

    >>> from fasttok.decoders.hf_byte_fallback import ByteFallback
    >>> from fasttok.decoders.hf_simple import Fuse, Sequence
    >>> holds_byte_runs(Sequence([ByteFallback(), Fuse()])), holds_byte_runs(None)
    (True, False)
    >>> ByteFallback().decode(["<0x25>"]), ByteFallback().decode(["<0x25>", "<0x8E>"])
    ('%', '��')
    """
    # the stages' modules here: the drop-in face imports this module with its own
    from fasttok.decoders.hf_byte_fallback import ByteFallback
    from fasttok.decoders.hf_starts import decoder_stages

    return decoder is not None and any(isinstance(s, ByteFallback) for s in decoder_stages(decoder))


def _longer_in_utf8(text: str, prefix: str) -> bool:
    # tokenizers compares byte lengths; they order like character lengths
    # whenever ``text`` starts with ``prefix``
    if text.startswith(prefix):
        return len(text) > len(prefix)
    return len(text.encode("utf-8", "surrogatepass")) > len(prefix.encode("utf-8", "surrogatepass"))


class TextStream:
    """The UTF-8 of ids pushed one at a time, as ``tokenizers``'
    ``DecodeStream`` gives their text (holding back text that ends in U+FFFD,
    an incomplete character), with ``pipeline``'s tokens and decoder (a
    ``tokenizer.json``'s stages), except that where the decoder has a
    ``ByteFallback`` stage a trailing run of byte tokens is held until a
    token that is not one ends it (a later byte token could turn the run
    into U+FFFDs: :func:`holds_byte_runs`); so the text given is settled,
    and :meth:`flush` gives whatever the whole decode has beyond it. Each id
    is checked as decode checks it (``KeyError``, ``TypeError``) by
    ``check`` (ids -> the ids kept: an id only a post-processor adds is left
    out).

    >>> from fasttok.decoders.hf_metaspace import Metaspace
    >>> class Stages:  # what the stream asks of a tokenizer.json's stages
    ...     decoder = Metaspace()
    ...     def id_to_token(self, i): return ["▁Hi", "▁there"][i]
    ...     def decode(self, ids, skip): return self.decoder.decode(list(map(self.id_to_token, ids)))
    >>> stream = TextStream(list, Stages())
    >>> stream.push(0), stream.push(1), stream.flush()
    (b'Hi', b' there', b'')
    """

    def __init__(self, check: Callable[[list], list], pipeline: Any) -> None:
        from fasttok.decoders.hf_byte_fallback import ByteFallback

        self._check = check
        self._pipeline = pipeline
        self._stream = HFDecodeStream(pipeline.decoder)
        self._byte_of = ByteFallback.byte_of if holds_byte_runs(pipeline.decoder) else None
        self._ids: list = []
        self._run: list = []
        self._given = 0

    def _token(self, token_id: int, skip_special_tokens: bool) -> Optional[str]:
        return self._pipeline.id_to_token(token_id)

    def push(self, token: int) -> bytes:
        """The settled UTF-8 that ``token`` adds to the text given so far."""
        kept = self._check([token])
        if not kept:
            return b""  # an id only the post-processor adds decodes to nothing
        token = kept[0]
        self._ids.append(token)
        self._run.append(token)
        if self._byte_of is not None and self._byte_of(self._pipeline.id_to_token(token)) is not None:
            return b""
        text = self._stream.step(self._token, self._run)
        self._run = []
        if text is None:
            return b""
        self._given += len(text)
        return text.encode("utf-8")

    def flush(self) -> bytes:
        """What the whole decode has beyond the text given; the stream starts over."""
        rest = self._pipeline.decode(self._ids, False)[self._given:]
        self._stream = HFDecodeStream(self._pipeline.decoder)
        self._ids = []
        self._run = []
        self._given = 0
        return rest.encode("utf-8")
