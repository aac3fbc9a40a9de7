"""Byte-level BPE's one-text calls (``encode_ordinary``, ``encode``) build
their ids in a buffer kept from call to call: a call gives the ids a model
just made gives, whatever ran before it or while it ran (a text of more ids
than the buffer keeps, a call made from inside another's walk, calls on
other threads while one walks without the GIL).
"""

from __future__ import annotations

import threading

from fasttok.formats._byte_bpe import CoreBPE
from fasttok.shared._tables import TokenTables

BYTES = [bytes([i]) for i in range(256)]


def _bytes_core(**kwargs):
    # every byte its own token: a text's ids are its UTF-8 bytes
    kwargs.setdefault("scanner", "gpt2")
    return CoreBPE(TokenTables(BYTES), {b"<e>": 256}, **kwargs)


def test_short_texts_after_one_of_more_ids_than_the_buffer_keeps():
    core = _bytes_core()
    long_text = "ab " * 30_000  # 90,000 ids: the kept buffer is let go
    assert core.encode_ordinary(long_text) == list(long_text.encode())
    for text in ["", "x", "hello world", "h\xe9llo \u4e16\u754c", "a<e>b"]:
        assert core.encode_ordinary(text) == list(text.encode())
        assert core.encode(text, b"\x01") == _with_special(text)


def _with_special(text):
    ids = []
    for k, part in enumerate(text.split("<e>")):
        if k:
            ids.append(256)
        ids += list(part.encode())
    return ids


def test_a_call_from_inside_another_calls_walk_keeps_the_outer_ids():
    inner = _bytes_core()
    inner_text = "z" * 5_000  # grows a buffer of its own past the outer's
    seen = []

    def splitter(segment):
        # a Python splitter runs inside the outer call, its ids buffer taken
        seen.append(inner.encode_ordinary(inner_text))
        return segment.split(" ")

    outer = _bytes_core(scanner=None, splitter=splitter)
    text = "one two three " * 10
    assert outer.encode_ordinary(text) == list(text.replace(" ", "").encode())
    assert outer.encode(text, b"\x01") == list(text.replace(" ", "").encode())
    assert seen == [list(inner_text.encode())] * 2


def test_calls_on_threads_walking_without_the_gil_give_their_own_ids():
    core = _bytes_core()
    texts = [("%d " % k) * (100 + 37 * k) for k in range(8)]  # >= 256 bytes: walked without the GIL
    expected = [list(text.encode()) for text in texts]
    failures = []

    def run(k):
        for _ in range(200):
            text = texts[(k + _) % len(texts)]
            if core.encode_ordinary(text) != list(text.encode()):
                failures.append(k)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert [core.encode_ordinary(text) for text in texts] == expected
