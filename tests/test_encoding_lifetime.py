"""An encoding lives as long as its user holds it: nothing fasttok keeps
(caches of special-token masks, stream decoders, batch jobs) holds it alive
after the last reference is dropped, whatever vocabulary it runs."""

from __future__ import annotations

import gc
import weakref

import pytest

import fasttok
from conftest import DATA_MISSING, MISSING_DATA_REASON, ONE_FILE_PER_KIND

pytestmark = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)

FILES = ONE_FILE_PER_KIND


def _use(enc) -> None:
    specials = sorted(enc.special_tokens_set)[:1]
    text = "Hello world, 你好! " + "".join(specials)
    ids = enc.encode(text, allowed_special=set(specials))
    enc.encode(text, allowed_special="all")
    enc.encode(text, disallowed_special=())
    enc.count(text, allowed_special=set(specials))
    enc.encode_batch([text] * 40, num_threads=2, allowed_special="all")
    enc.decode(ids)
    stream = enc.decode_stream()
    for t in ids:
        stream.push(t)
    stream.flush()


@pytest.mark.parametrize("kind", sorted(FILES))
def test_an_encoding_that_has_encoded_is_freed_when_dropped(kind):
    enc = fasttok.load(str(FILES[kind]))
    _use(enc)
    alive = weakref.ref(enc)
    del enc
    gc.collect()
    assert alive() is None


_ROUNDS_SCRIPT = """
import gc, sys
import fasttok
sys.path.insert(0, sys.argv[2])
from test_encoding_lifetime import _use

def rss_kib():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))

marks = []
for i in range(200):
    enc = fasttok.load(sys.argv[1])
    _use(enc)
    del enc
    gc.collect()
    if i in (19, 199):
        marks.append(rss_kib())
print(*marks)
"""


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(FILES))
def test_two_hundred_load_encode_drop_rounds_keep_rss_flat(kind):
    import subprocess
    import sys
    from pathlib import Path

    out = subprocess.run([sys.executable, "-c", _ROUNDS_SCRIPT, str(FILES[kind]),
                          str(Path(__file__).parent)], capture_output=True, text=True, check=True)
    after_20, after_200 = map(int, out.stdout.split())
    assert after_200 <= after_20 * 1.10, (after_20, after_200)
