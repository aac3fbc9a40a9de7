"""How :func:`fasttok.load` tells the formats apart by a file's first bytes:
one sniff for each format without magic bytes, each reading only ``head``.

They live apart from their formats' readers so that trying them imports
no reader: a ``tokenizer.json`` load imported the SentencePiece and
``tekken.json`` readers only to be told no (~4 ms).

>>> looks_like_tokenizer_json(b'{"version": "1.0", "truncation": null}')
True
"""

from __future__ import annotations

__all__ = ["looks_like_model_proto", "looks_like_tekken_json", "looks_like_tokenizer_json"]


def _head_varint(head: bytes, pos: int) -> tuple:
    # (value, position after it) of the varint at pos, or (-1, pos) when it
    # is cut off or longer than a piece's length can be
    value = shift = 0
    while pos < len(head) and shift < 28:
        byte = head[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            return value, pos
        shift += 7
    return -1, pos


def looks_like_model_proto(head: bytes) -> bool:
    """Whether a file's first bytes start as every ``.model`` file does: field
    1 (``pieces``, length-delimited) whose first field is 1 (``piece``, UTF-8
    text), then ``score`` (2, float), ``type`` (3, varint) or the end of that
    piece. Lets :func:`fasttok.load` recognise models under any name
    (mistral-common's ``tokenizer.model.v3``); a first piece too long for
    ``head`` is not recognised, and the suffix decides.

    >>> looks_like_model_proto(b"\\n\\t\\n\\x05<unk>\\x18\\x02\\n")
    True
    >>> looks_like_model_proto(b"IQ== 0\\nIg== 1\\n")
    False
    """
    if not head.startswith(b"\n"):
        return False
    length, pos = _head_varint(head, 1)
    if length < 3 or not head.startswith(b"\n", pos):
        return False
    end = pos + length
    size, text = _head_varint(head, pos + 1)
    if size < 1 or text + size > min(end, len(head)):
        return False
    try:
        head[text:text + size].decode("utf-8")
    except UnicodeDecodeError:
        return False
    after = text + size
    return after == end or (after < len(head) and head[after] in (0x15, 0x18))


def looks_like_tekken_json(head: bytes) -> bool:
    """Whether a file's first bytes look like ``tekken.json``: a JSON object
    whose first key is ``config`` (as in every file mistral-common ships).

    >>> looks_like_tekken_json(b'{\\n  "config": {\\n    "pattern": "[^\\\\r')
    True
    >>> looks_like_tekken_json(b'{"version": "1.0", "truncation": null}')
    False
    """
    text = head.lstrip()
    return text.startswith(b"{") and text[1:].lstrip().startswith(b'"config"')


def looks_like_tokenizer_json(head: bytes) -> bool:
    """Whether a file's first bytes look like ``tokenizer.json`` (``tokenizers``
    writes ``version`` and ``truncation`` first).

    >>> looks_like_tokenizer_json(b'{\\n  "version": "1.0",\\n  "truncation": null,')
    True
    >>> looks_like_tokenizer_json(b'{"a": 1}')
    False
    """
    text = head.lstrip()
    return text.startswith(b"{") and b'"version"' in text and b'"truncation"' in text
