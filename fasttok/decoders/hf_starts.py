"""Where each token's text starts in a ``tokenizer.json`` decode, in one pass.

fasttok's ``decode_with_offsets`` says token ``i`` starts where
``decode(tokens[:i])`` stops agreeing with ``decode(tokens)`` (UTF-8 bytes),
never before token ``i - 1``. Decoding every prefix is quadratic; this reads
the starts off one decode for the decoder chains whose prefixes it can name
(every chain of the shared files), asking each stage for its rule:

* stages whose ``token_local`` is true (Replace, Metaspace, WordPiece, Strip)
  turn each token into one token from it alone and whether it is first, so
  a prefix of the tokens decodes to a prefix of their pieces;
* then ``ByteFallback``: outside a run of byte tokens a prefix still decodes
  to a prefix; a prefix ending inside a run decodes the run's first ``k``
  bytes by the stage's rule (:meth:`ByteFallback.run_tokens`): their text
  where those bytes are whole UTF-8 characters, else one U+FFFD per byte.
  Either is a prefix of ``r`` or of U+FFFD repeated, so its agreement with
  the whole is ``min(k, cp(r))`` or ``min(3k, cp(U+FFFD…))``, two common
  prefixes found once per run;
* then ``Fuse`` (a no-op for the joined text), and after it ``Strip`` with
  ``stop == 0``: a prefix loses the same leading characters as the whole
  unless it is shorter than them (then it is empty) or the run it ends in
  is where the two part (handled below, in :func:`_run_agreements`).

Any other chain (CTC, BPEDecoder, ByteLevel, a stage after ``Fuse`` other
than a leading ``Strip``) gives ``None``: the caller decodes in windows.

>>> from fasttok.loaders.hf_stage_json import decoder_from_json
>>> chain = decoder_from_json({"type": "Sequence", "decoders": [
...     {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
...     {"type": "ByteFallback"}, {"type": "Fuse"},
...     {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}, "$", None)
>>> token_starts(chain, ["▁a", "<0xE4>", "<0xBD>", "<0xA0>", "!"])
(b'a\\xe4\\xbd\\xa0!', [0, 1, 1, 1, 4])
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Optional, Union

from fasttok.decoders.hf_byte_fallback import ByteFallback
from fasttok.decoders.hf_simple import Fuse, Sequence, Strip

__all__ = ["token_starts", "common_prefix", "decoder_stages", "prefix_agreements"]

_FFFD = "\ufffd".encode("utf-8")


def common_prefix(a: Union[bytes, str], b: Union[bytes, str]) -> int:
    """The length of the longest common prefix of ``a`` and ``b`` (two bytes
    or two strs), by halving (every comparison runs in C).

    >>> common_prefix(b"abcd", b"abxy")
    2
    """
    if b.startswith(a):
        return len(a)
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def decoder_stages(decoder) -> list:
    """The stages of a decoder chain in order, nested ``Sequence``\\s flattened.

    >>> decoder_stages(Sequence([Fuse(), Sequence([Strip(" ", 1, 0)])]))
    [Fuse(), Strip(content=' ', start=1, stop=0)]
    """
    if isinstance(decoder, Sequence):
        return [s for d in decoder.decoders for s in decoder_stages(d)]
    return [decoder]


def _plan(decoder) -> Optional[tuple]:
    # (token-local stages, ByteFallback or None, the leading Strip after Fuse or None)
    stages = decoder_stages(decoder)
    k = 0
    while k < len(stages) and getattr(stages[k], "token_local", False):
        k += 1
    local, rest = stages[:k], stages[k:]
    fallback = None
    if rest and isinstance(rest[0], ByteFallback):
        fallback, rest = rest[0], rest[1:]
    fused = False
    while rest and isinstance(rest[0], Fuse):
        fused, rest = True, rest[1:]
    strip = None
    # U+FFFD as the stripped character would make a broken run's text strippable
    if fused and rest and isinstance(rest[0], Strip) and rest[0].stop == 0 \
            and rest[0].content != "\ufffd":
        strip, rest = rest[0], rest[1:]
    return None if rest else (local, fallback, strip)


def token_starts(decoder, tokens: list) -> Optional[tuple]:
    """``(decoded UTF-8, starts)`` for ``tokens`` (token strings), or ``None``
    when ``decoder``'s chain is not one read here. ``decoder`` ``None``
    joins the tokens with spaces, as ``tokenizers`` does without a decoder.

    >>> from fasttok.decoders.hf_metaspace import Metaspace
    >>> token_starts(Metaspace(), ["▁Hi", "▁there", "!"])
    (b'Hi there!', [0, 2, 8])
    >>> token_starts(None, ["a", "b"])
    (b'a b', [0, 1])
    """
    if decoder is None:
        return _concatenation([t if i == 0 else " " + t for i, t in enumerate(tokens)])
    plan = _plan(decoder)
    if plan is None:
        return None
    local, fallback, strip = plan
    for stage in local:
        tokens = stage.decode_chain(tokens)
    if fallback is not None and any(fallback.byte_of(t) is not None for t in set(tokens)):
        return _with_runs(tokens, fallback, strip)
    data, starts = _concatenation(tokens)
    if strip is None:
        return data, starts
    # a prefix loses the whole's leading characters, or all of itself where it is shorter
    cut = strip.lead("".join(tokens)) * len(strip.content.encode("utf-8"))
    return data[cut:], [max(0, start - cut) for start in starts]


def _concatenation(pieces: list) -> tuple:
    # every prefix of the pieces is what the same prefix of the tokens decodes to
    data = "".join(pieces).encode("utf-8")
    starts, at = [], 0
    for piece in pieces:
        starts.append(at)
        at += len(piece) if piece.isascii() else len(piece.encode("utf-8"))
    return data, starts


def _with_runs(tokens: list, fallback: Optional[ByteFallback], strip: Optional[Strip]) -> tuple:
    # segments: a plain token's text, or (run bytes, its tokens' text)
    segments: list = []
    byte_of = fallback.byte_of if fallback is not None else None
    i, n = 0, len(tokens)
    while i < n:
        byte = byte_of(tokens[i]) if byte_of is not None else None
        if byte is None:
            segments.append(tokens[i])
            i += 1
            continue
        run = bytearray()
        while i < n and byte is not None:
            run.append(byte)
            i += 1
            byte = byte_of(tokens[i]) if i < n else None
        segments.append((bytes(run), "".join(fallback.run_tokens(run))))
    fused = "".join(s if isinstance(s, str) else s[1] for s in segments)
    lead = strip.lead(fused) if strip is not None else 0
    lead_bytes = len(fused[:lead].encode("utf-8"))
    data = fused.encode("utf-8")
    # characters the Strip could take off: the prefixes shorter than this are all stripped ones
    strippable = len(fused) - len(fused.lstrip(strip.content)) if strip is not None else -1
    starts: list = []
    at = chars = 0  # bytes and characters of the fused text before the segment
    for segment in segments:
        text = segment if isinstance(segment, str) else segment[1]
        starts.append(max(starts[-1] if starts else 0, at - lead_bytes, 0))
        if not isinstance(segment, str):
            _run_agreements(segment[0], data, at, lead_bytes, starts,
                            strip if chars <= strippable else None, chars, lead)
        at += len(text.encode("utf-8"))
        chars += len(text)
    return data[lead_bytes:], starts


def _run_agreements(run: bytes, data: bytes, at: int, lead_bytes: int, starts: list,
                    strip: Optional[Strip], chars: int, lead: int) -> None:
    # the starts of the run's tokens after its first: the prefix ending k
    # bytes into the run is the fused text before it (data[:at], ``chars``
    # characters) and B = the run's first k bytes as text, or U+FFFD * k.
    # ``strip`` is given only when all the text before the run is strippable
    # characters: the prefix may then lose other leading characters than the
    # whole (``lead`` of them, ``lead_bytes`` bytes), and B decides how many
    L = len(run)
    try:
        run.decode("utf-8")
        valid_to = L
    except UnicodeDecodeError as exc:
        valid_to = exc.start
    with_run = common_prefix(run, data[at:at + L])
    with_fffd = common_prefix(_FFFD * L, data[at:at + 3 * L])
    if strip is not None:
        # where the prefix loses fewer characters than the whole, B = U+FFFD * k
        # is all that is left of it, compared with the start of the stripped whole
        fffd_alone = common_prefix(_FFFD * L, data[lead_bytes:lead_bytes + 3 * L])
        content_bytes = len(strip.content.encode("utf-8"))
        text = run[:valid_to].decode("utf-8")
        text_run = len(text) - len(text.lstrip(strip.content))
    for k in range(1, L):
        valid = k == valid_to or (k < valid_to and not 0x80 <= run[k] < 0xC0)
        if strip is None:
            agreed = at + (min(k, with_run) if valid else min(3 * k, with_fffd)) - lead_bytes
        elif valid:
            # B's leading characters that strip: all of B while B is all stripped characters
            b_lead = text_run if k >= text_run * content_bytes else k // content_bytes
            if min(strip.start, chars + b_lead) == lead:
                agreed = at + min(k, with_run) - lead_bytes
            else:  # the prefix is all stripped characters: it decodes to nothing
                agreed = 0
        elif min(strip.start, chars) == lead:
            agreed = at + min(3 * k, with_fffd) - lead_bytes
        else:
            agreed = min(3 * k, fffd_alone)
        starts.append(max(starts[-1], agreed))


# ids of context a window decode starts with before the ids it reads anew:
# decoders look back one id (CTC's repeats) or treat the first id apart
# (Metaspace, WordPiece, Strip after Fuse), so those ids are never first
_CONTEXT = 4


def prefix_agreements(decode: Callable[[list], str], ids: list, whole: bytes,
                      one_run: Callable[[Any, Any], bool]) -> Iterator[int]:
    """For each ``i``, how many bytes of ``decode(ids[:i])`` (UTF-8) agree with ``whole``.

    Each prefix is decoded in a window, as ``tokenizers``' ``DecodeStream``
    does: once ``decode(ids[:b])`` is found to be a prefix of ``whole`` (its
    first ``base`` bytes), ``decode(ids[:i])`` is those bytes followed by
    what ``decode(ids[c:i])`` adds to ``decode(ids[c:b])``, with ``c`` a few
    ids before ``b`` as context, moved back while ``one_run(ids[c - 1],
    ids[c])`` (two byte-fallback pieces: ``ByteFallback`` reads a run
    whole, so a window must not start inside one). Where the window's text
    does not start with its context's, or the context decodes to nothing,
    the prefix is decoded whole. While prefixes keep agreeing with
    ``whole`` each id is decoded a bounded number of times (a run of byte
    pieces, once per id of the run).

    >>> list(prefix_agreements(lambda part: "".join(part), ["a", "b", "c"], b"abc",
    ...                        lambda left, right: False))
    [0, 1, 2]
    """
    base = base_at = 0  # decode(ids[:base_at]) is whole[:base]
    context = None      # (c, decode(ids[c:base_at])) for the current base
    for i in range(len(ids)):
        tail = None
        if base_at > 0:
            if context is None:
                c = max(0, base_at - _CONTEXT)
                while c > 0 and one_run(ids[c - 1], ids[c]):
                    c -= 1
                context = (c, decode(ids[c:base_at]))
            c, before = context
            window = decode(ids[c:i])
            if before and window.startswith(before):
                tail = window[len(before):].encode("utf-8")
        if tail is None:
            prefix = decode(ids[:i]).encode("utf-8")
            agreed = common_prefix(prefix, whole)
            if agreed == len(prefix):
                base, base_at, context = agreed, i, None
        else:
            agreed = base + common_prefix(tail, whole[base:base + len(tail)])
            if agreed == base + len(tail):
                base, base_at, context = agreed, i, None
        yield agreed
