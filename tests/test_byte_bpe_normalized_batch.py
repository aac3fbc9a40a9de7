"""Batches of a byte-level ``tokenizer.json`` with a normalizer (Qwen 3's
``NFC``) go through the compiled batch (``CoreBPE.batch_job`` with the
model as its ``normalizer``): the batch reads each text, asks the model to
respell only the texts that fail the normal form's quick check (their
normalized text, or their ids where an allowed special token cuts them) and
encodes without the GIL. Its ids are ``tokenizers``' and the per-text
calls', on one thread and on two, as lists, flat arrays and counts.
"""

from __future__ import annotations

import functools
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA
from fasttok.formats._byte_bpe import BatchJob, CoreBPE
from fasttok.formats.hf_byte_level import NormalizedBPE
from fasttok.normalizers.unicode_forms import NFC
from fasttok.shared._tables import TokenTables

tokenizers = pytest.importorskip("tokenizers")

QWEN3 = DATA / "vocab" / "hf" / "qwen3" / "tokenizer.json"
SPECIALS = ("<|im_start|>", "<|endoftext|>")

# pieces whose joins NFC changes: combining marks after letters (composed,
# reordered), Hangul jamo (composed), singletons (the Kelvin and Ohm signs),
# beside ASCII, composed letters and the special tokens
PIECES = ("e", "a", "o", " ", "K", "\n", "\u0301", "\u0308", "\u0323", "\u0327", "\u00e9",
          "\u1100", "\u1161", "\u11a8", "\u212a", "\u2126", "\u4e2d", "\U0001f600") + SPECIALS
TEXTS = st.lists(st.lists(st.sampled_from(PIECES), max_size=12).map("".join),
                 min_size=1, max_size=40)


@functools.lru_cache(maxsize=None)
def _qwen3() -> tuple:
    if not QWEN3.is_file():
        pytest.skip(f"{QWEN3} not found")
    return fasttok.load(QWEN3), tokenizers.Tokenizer.from_file(str(QWEN3))


def _lists(flat: tuple) -> list:
    ids, offsets = flat
    return [list(ids[offsets[i]:offsets[i + 1]]) for i in range(len(offsets) - 1)]


@pytest.mark.parametrize("threads", [1, 2])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=TEXTS)
def test_qwen3_batch_ids_are_tokenizers_ids_on_text_nfc_changes(threads, texts):
    enc, reference = _qwen3()
    expected = [e.ids for e in reference.encode_batch(texts, add_special_tokens=False)]
    assert enc.encode_batch(texts, allowed_special="all", num_threads=threads) == expected
    assert _lists(enc.encode_batch(texts, allowed_special="all", num_threads=threads,
                                   flat=True)) == expected
    assert enc.count_batch(texts, allowed_special="all", num_threads=threads) == \
        [len(ids) for ids in expected]


@pytest.mark.parametrize("threads", [1, 2])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=TEXTS)
def test_qwen3_ordinary_batch_is_the_per_text_calls(threads, texts):
    enc, _ = _qwen3()
    expected = [enc.encode_ordinary(text) for text in texts]
    assert _lists(enc.encode_ordinary_batch(texts, num_threads=threads, flat=True)) == expected


def test_the_batch_asks_respell_only_for_texts_not_in_normal_form():
    asked = []

    class Counting(NormalizedBPE):
        def respell(self, text, allowed):
            asked.append(text)
            return super().respell(text, allowed)

    model = Counting(CoreBPE(TokenTables([bytes([i]) for i in range(256)]), {}, scanner="gpt2"),
                     NFC())
    texts = ["ascii", "caf\u00e9", "cafe\u0301", "\u212a", "\u4e2d"] * 20
    expected = [model.encode_ordinary(t) for t in texts]
    asked.clear()
    assert model.encode_many(texts) == expected
    assert asked == [t for t in texts if not unicodedata.is_normalized("NFC", t)]


def test_a_normalizers_batch_job_is_the_compiled_one():
    enc, _ = _qwen3()
    model = enc._core._core
    assert type(model) is NormalizedBPE
    assert type(model.batch_job(["e\u0301"], None, "encode_many_flat", 2)) is BatchJob


@pytest.mark.parametrize("how", ["encode_many", "encode_many_flat", "count_many"])
def test_ids_respell_gives_keep_their_ids_in_a_sparse_id_space(how):
    # a special token cutting text NFC changes: respell gives ids, which the
    # batch turns back into the core's codes (ids far apart here)
    core = CoreBPE(TokenTables([bytes([i]) for i in range(256)]), {b"<e>": 10**6},
                   ids=[2 * i for i in range(256)], scanner="gpt2")
    model = NormalizedBPE(core, NFC())
    texts = ["e\u0301<e>a\u0308", "x", "<e>", "o\u0308"]
    expected = [model.encode(t, b"\x01") for t in texts]
    assert expected[0] == [2 * 195, 2 * 169, 10**6, 2 * 195, 2 * 164]
    found = getattr(model, how)(texts, b"\x01")
    if how == "encode_many_flat":
        found = _lists(found)
    assert found == (expected if how != "count_many" else [len(ids) for ids in expected])


def test_offsets_refuse_a_normalizer():
    core = CoreBPE(TokenTables([bytes([i]) for i in range(256)]), {}, scanner="gpt2")
    with pytest.raises(ValueError, match="offsets"):
        core.batch_job(["a"], None, "encode_offsets_many", 1, NormalizedBPE(core, NFC()))
