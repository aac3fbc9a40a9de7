"""Every public ``Encoding`` method, on every vocabulary file in the data folder
and every named encoding, agrees with ``encode`` / ``decode``.

Only the public API is used (``fasttok.load``, ``fasttok.get_encoding``, the
returned ``Encoding`` and its ``vocabulary`` record), so the test keeps working
while the modules behind it move.

What "agrees" means depends on the kind of vocabulary, and each test says
which statement it makes per kind and why:

* tiktoken (``.tiktoken`` files, named encodings): byte-level BPE with no
  decode-time rewriting; ids and bytes are interchangeable and every
  statement is exact.
* ``gguf_gpt2`` (byte-level BPE from GGUF): as tiktoken, except that some
  files ask for llama.cpp's space clean-up when decoding.
* ``gguf_llama`` / ``spm_bpe`` / ``gguf_t5`` / ``spm_unigram``: SentencePiece
  style; decode drops the dummy-prefix space and renders ``unk``.
* ``gguf_bert``: WordPiece; a token's bytes start with a space where a word
  starts, and decode cleans up spaces around punctuation, so decode is the
  concatenation with some spaces deleted.

Where a statement holds only for some kinds the test says why, next to the
``if`` that picks them.

A method may raise ``fasttok.FasttokError`` only where ``UNSUPPORTED`` says
the kind cannot support it; any other exception, or a ``FasttokError``
anywhere else, fails.
"""

from __future__ import annotations

import functools
import json
import os
from array import array
from pathlib import Path

import pytest

import fasttok
from conftest import ALL_ENCODINGS, DATA, DATA_MISSING, HF_BYTE_LEVEL, MISSING_DATA_REASON, \
    Raised, missing_data_reason, outcome, read_jsonl

pytestmark = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)

TIKTOKEN_KINDS = ("tiktoken",)
GGUF_KIND = {"gpt2": "gguf_gpt2", "llama": "gguf_llama", "bert": "gguf_bert", "t5": "gguf_t5"}
SPM_KIND = {"sentencepiece_bpe": "spm_bpe", "unigram": "spm_unigram"}
SENTENCEPIECE_KINDS = ("gguf_llama", "gguf_t5", "spm_bpe", "spm_unigram")
HF_KIND = {"BPE": "hf_bpe", "WordPiece": "hf_wordpiece", "Unigram": "hf_unigram"}
HF_FILES = [DATA / "vocab" / "hf" / name / "tokenizer.json" for name in HF_BYTE_LEVEL] + [
    DATA / "vocab" / "hf" / "llama2" / "tokenizer.json",
    DATA / "vocab" / "hf" / "all-MiniLM-L6-v2" / "tokenizer.json",
    DATA / "vocab" / "hf" / "unigram" / "botchan_unigram_5000.v5.24.0.T5Tokenizer.json"]
ALL_KINDS = TIKTOKEN_KINDS + ("gguf_gpt2", "gguf_bert", "hf_byte_bpe") + \
    tuple(HF_KIND.values()) + SENTENCEPIECE_KINDS
NOT_TIKTOKEN = frozenset(ALL_KINDS) - frozenset(TIKTOKEN_KINDS)

# The one table of methods a kind may refuse with FasttokError, and why it
# genuinely cannot do them. Anything not listed must work.
UNSUPPORTED = {
    # pieces are SentencePiece's notion; byte-level BPE and WordPiece have none
    "encode_as_pieces": frozenset({"tiktoken", "gguf_gpt2", "gguf_bert", "hf_byte_bpe"}),
    # WordPiece has one segmentation per word: nothing to sample from; tokenizers'
    # Unigram model does not sample either
    "sample": frozenset({"gguf_bert", "hf_wordpiece", "hf_unigram"}),
    # BERT vocabularies name no end-of-sequence token (only [SEP])
    "eot_token": frozenset({"gguf_bert", "hf_wordpiece"}),
    # tiktoken's internals, reproduced on tiktoken's byte-level BPE only
    "_encode_bytes": NOT_TIKTOKEN,
    # needs the tiktoken regex pattern; other kinds have their own pre-tokenizers
    "_encode_only_native_bpe": NOT_TIKTOKEN,
}

PUBLIC_METHODS = (
    "encode", "encode_ordinary", "encode_batch", "encode_ordinary_batch", "count", "count_batch",
    "encode_to_array", "encode_to_numpy", "encode_single_token", "encode_single_piece",
    "encode_as_pieces", "decode", "decode_bytes", "decode_batch", "decode_bytes_batch",
    "decode_single_token_bytes", "decode_tokens_bytes", "decode_with_offsets", "decode_stream",
    "token_byte_values", "is_special_token", "_encode_bytes", "encode_with_unstable",
    "_encode_only_native_bpe",
)
PUBLIC_ATTRIBUTES = ("eot_token", "special_tokens_set", "n_vocab", "max_token_value", "name")

# Texts beyond lines.jsonl: the edge cases every kind must take.
EXTRA_TEXTS = ["", " ", "\t\n  \r\n", "naïve café — 日本語テキスト", "👨‍👩‍👧 🦙 🏳️‍🌈!",
               "Ünïcödé ü ß Ω ж"]
PER_CATEGORY = 3         # lines.jsonl texts per category for small vocabularies
PER_CATEGORY_BIG = 1     # ... and for vocabularies of BIG_VOCAB ids or more
BIG_VOCAB = 100_000
THREADS = (1, 4)
BATCH_MIN = 3 * 64 + 1   # encode_batch hands out chunks of >= 64 texts: make several
UNSTABLE_TEXTS = 4       # encode_with_unstable looks at every token sharing a prefix: slow
INVALID_UTF8 = [b"\xff", b"abc\xe2\x82", b"\xf0\x9f\xa6 ok", b"a\x80b\xc3"]


# --------------------------------------------------------------------------
# What to test on
# --------------------------------------------------------------------------

def _vocabulary_files() -> list:
    params = []
    for folder, suffix in (("tiktoken", ".tiktoken"), ("gguf", ".gguf"), ("sentencepiece", ".model")):
        where = DATA / "vocab" / folder
        found = sorted(where.glob(f"*{suffix}")) if where.is_dir() else []
        if not found:
            params.append(pytest.param(None, id=f"{folder}-absent", marks=pytest.mark.skip(
                reason=missing_data_reason(where / f"*{suffix}"))))
        params += [pytest.param(("file", folder, path), id=path.name) for path in found]
    params += [pytest.param(("file", "hf", path), id=f"hf-{path.parent.name}-{path.stem}",
                            marks=() if path.is_file() else pytest.mark.skip(
                                reason=missing_data_reason(path)))
               for path in HF_FILES]
    return params


ENCODINGS = _vocabulary_files() + [pytest.param(("named", "tiktoken", name), id=f"named-{name}")
                                   for name in ALL_ENCODINGS]


@functools.lru_cache(maxsize=None)
def _gguf_index() -> dict:
    path = DATA / "vocab" / "gguf" / "index.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _kind(folder: str, path: Path | None, enc) -> str:
    if folder == "tiktoken":
        return "tiktoken"
    if folder == "hf":
        if enc.vocabulary.merges is not None:
            return "hf_byte_bpe"
        return HF_KIND[enc.vocabulary.metadata["document"]["model"]["type"]]
    if folder == "gguf":
        model = _gguf_index().get(path.name, {}).get("tokenizer.ggml.model")
        if model is None:  # a file the index does not list: ask the loaded vocabulary
            model = {"gguf_byte_bpe": "gpt2", "sentencepiece_bpe": "llama",
                     "gguf_wordpiece": "bert", "unigram": "t5"}[enc.vocabulary.model]
        return GGUF_KIND[model]
    return SPM_KIND[enc.vocabulary.model]


class Case:
    """One encoding under test: ``enc``, its ``kind`` and the ``texts`` to use."""

    def __init__(self, source: tuple) -> None:
        how, folder, what = source
        self.enc = fasttok.get_encoding(what) if how == "named" else fasttok.load(str(what))
        self.kind = _kind(folder, None if how == "named" else what, self.enc)
        self.texts = _texts(self.enc)
        self.byte_has_token: dict = {}
        self._encoded: dict = {}

    def __repr__(self) -> str:
        return f"<{self.kind} {self.enc.name}>"

    def may_refuse(self, method: str) -> bool:
        return self.kind in UNSUPPORTED.get(method, ())

    def run(self, method: str, call, *args, **kwargs):
        """``call(*args, **kwargs)``; ``UNSUPPORTED_HERE`` when it raised a
        FasttokError the table allows for this kind (with a message)."""
        try:
            return call(*args, **kwargs)
        except fasttok.FasttokError as err:
            if not self.may_refuse(method):
                pytest.fail(f"{self}: {method} raised FasttokError, and UNSUPPORTED does not let "
                            f"a {self.kind} vocabulary refuse it: {err}", pytrace=False)
            assert str(err).strip(), f"{self}: {method} refused without saying why"
            return UNSUPPORTED_HERE


UNSUPPORTED_HERE = object()


@functools.lru_cache(maxsize=None)
def _lines() -> tuple:
    path = DATA / "testcases" / "lines.jsonl"
    if not path.is_file():
        pytest.skip(missing_data_reason(path))
    return tuple(read_jsonl(path))


def _texts(enc) -> list:
    per = PER_CATEGORY_BIG if enc.n_vocab >= BIG_VOCAB else PER_CATEGORY
    taken: dict = {}
    for row in _lines():
        bucket = taken.setdefault(row["category"], [])
        if len(bucket) < per:
            bucket.append(row["text"])
    texts = [t for bucket in taken.values() for t in bucket] + EXTRA_TEXTS
    special = _a_special(enc)
    if special is not None:
        texts += [special, f"before {special} after"]
    return texts


def _a_special(enc):
    # <|endoftext|>, else the end-of-sequence token's text, else the shortest
    specials = enc.special_tokens_set
    if "<|endoftext|>" in specials:
        return "<|endoftext|>"
    eos = enc.vocabulary.eos_id
    if eos is not None:
        text = enc.decode_single_token_bytes(eos).decode("utf-8", "replace")
        if text in specials:
            return text
    return min(specials, key=lambda s: (len(s), s)) if specials else None


@pytest.fixture(scope="module", params=ENCODINGS)
def case(request) -> Case:
    return Case(request.param)


def _has_special(case: Case, text: str) -> bool:
    return any(s in text for s in case.enc.special_tokens_set)


def _batch_texts(case: Case) -> list:
    """The texts repeated until there are BATCH_MIN of them, so that a batch
    with num_threads=4 really runs on several threads."""
    return (case.texts * (BATCH_MIN // len(case.texts) + 1))[:max(BATCH_MIN, len(case.texts))]


def _encode_all(case: Case, text: str) -> list:
    """encode(text, allowed_special="all"), computed once per text (a copy)."""
    ids = case._encoded.get(text)
    if ids is None:
        ids = case._encoded[text] = case.enc.encode(text, allowed_special="all")
    return list(ids)


def _unk(case: Case):
    return case.enc.vocabulary.unk_id


def _valid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _special_id(enc, special: str) -> int:
    # the id encode gives a special token string when it is allowed (some GGUF
    # files also hold an ordinary token with the same text, which
    # encode_single_token may give instead)
    ids = enc.encode(special, allowed_special={special})
    assert len(ids) == 1, (special, ids)
    return ids[0]


def _representable(case: Case, text: str) -> bool:
    # every byte of the text has a token of its own (byte-level BPE files may
    # lack some: falcon has no token for b"\\x03"), so it can round-trip
    return all(_has_byte(case, b) for b in set(text.encode("utf-8", "surrogatepass")))


def _has_byte(case: Case, byte: int) -> bool:
    if byte not in case.byte_has_token:
        try:
            found = case.enc.encode_single_token(bytes([byte]))
            case.byte_has_token[byte] = case.enc.decode_single_token_bytes(found) == bytes([byte])
        except KeyError:
            case.byte_has_token[byte] = False
    return case.byte_has_token[byte]


def _id_sample(case: Case) -> list:
    """About 300 ids spread over the vocabulary, the ends, and the special ids."""
    enc = case.enc
    step = max(1, enc.n_vocab // 300)
    ids = set(range(0, enc.n_vocab, step)) | set(range(min(300, enc.n_vocab)))
    ids |= {enc.max_token_value} | {_special_id(enc, s) for s in _some_specials(enc)}
    return sorted(ids)


# --------------------------------------------------------------------------
# The surface
# --------------------------------------------------------------------------

def test_every_public_method_and_attribute_is_there(case):
    missing = [m for m in PUBLIC_METHODS if not callable(getattr(case.enc, m, None))]
    assert not missing, f"{case}: missing methods {missing}"
    for name in PUBLIC_ATTRIBUTES:
        case.run(name, getattr, case.enc, name)


# --------------------------------------------------------------------------
# Encoding
# --------------------------------------------------------------------------

def test_encode_ordinary_is_encode_with_nothing_disallowed(case):
    for text in case.texts:
        assert case.enc.encode_ordinary(text) == case.enc.encode(text, disallowed_special=()), text


def test_encode_without_special_text_ignores_allowed_special(case):
    for text in case.texts:
        if not _has_special(case, text):
            ordinary = case.enc.encode_ordinary(text)
            assert case.enc.encode(text) == ordinary, text
            assert _encode_all(case, text) == ordinary, text


def test_encode_refuses_a_disallowed_special_token_string(case):
    special = _a_special(case.enc)
    if special is None:
        return  # a vocabulary without special tokens has nothing to refuse
    text = f"before {special} after"
    with pytest.raises(ValueError):
        case.enc.encode(text)
    with pytest.raises(ValueError):
        case.enc.encode(text, disallowed_special={special})
    with pytest.raises(ValueError):
        case.enc.count(text)
    with pytest.raises(ValueError):
        case.enc.encode_batch(["plain", text], num_threads=1)
    assert case.enc.encode(text, disallowed_special=()) == case.enc.encode_ordinary(text)
    others = sorted(case.enc.special_tokens_set - {special})[:1]
    if others:  # disallowing only another special lets this one through as text
        assert case.enc.encode(text, disallowed_special=set(others)) == \
            case.enc.encode_ordinary(text)


SPECIALS_CHECKED = 40  # per encoding (deepseek-llm has 2400)


def _some_specials(enc) -> list:
    specials = sorted(enc.special_tokens_set)
    step = max(1, len(specials) // SPECIALS_CHECKED)
    return specials[::step]


def test_every_special_token_string_is_refused_unless_allowed(case):
    # tiktoken's rule, which encode documents for every vocabulary: a
    # special_tokens_set string in the text is an error by default.
    refused_not = [s for s in _some_specials(case.enc)
                   if not isinstance(outcome(case.enc.encode, f"a {s} b"), Raised)]
    assert not refused_not, f"{case}: encode accepted these special token strings: {refused_not}"


def test_encode_ordinary_never_gives_a_special_id(case):
    # encode_ordinary treats special token strings as plain text, and the
    # model never matches them (a tokenizer.json Unigram holds its added
    # tokens as pieces too, and tokenizers matches "</s>" in text; see
    # test_injection_after_normalization.py). Only a Unigram's unknown id,
    # for characters it has no piece for, may be special: T5 conversions of
    # transformers 5.24 make unk_id the </s> piece.
    enc = case.enc
    unknown = enc.vocabulary.metadata["document"]["model"].get("unk_id") \
        if case.kind == "hf_unigram" else None
    matched = {s: ids for s in _some_specials(enc)
               for ids in [enc.encode_ordinary(f"a {s} b")]
               if any(enc.is_special_token(t) and t != unknown for t in ids)}
    assert not matched, f"{case}: encode_ordinary gave special ids for {matched}"


def test_encode_allowed_special_gives_the_special_id(case):
    enc = case.enc
    for special in sorted(enc.special_tokens_set)[:20]:
        token = _special_id(enc, special)
        assert enc.is_special_token(token), special
        assert enc.decode_single_token_bytes(enc.encode_single_token(special)) == \
            enc.decode_single_token_bytes(token), special
        for allowed in ("all", {special}):
            ids = enc.encode(f"x{special}y", allowed_special=allowed)
            assert token in ids, (special, allowed, ids)


def test_encode_add_special_tokens_only_adds_ids_around(case):
    # The same ids (BOS/CLS first, EOS/SEP last, as the file asks) go around
    # every text; the ids in between are encode's. Where they go is read off
    # the text with the most ids, then required of every text.
    enc = case.enc
    plains = [_encode_all(case, t) for t in case.texts]
    added = [enc.encode(t, allowed_special="all", add_special_tokens=True) for t in case.texts]
    longest = max(range(len(plains)), key=lambda i: len(plains[i]))
    plain, around = plains[longest], added[longest]
    k = next((i for i in range(len(around) - len(plain) + 1)
              if around[i:i + len(plain)] == plain), None)
    assert k is not None, (case.texts[longest], plain, around)
    head, tail = around[:k], around[k + len(plain):]
    assert len(head) <= 1 and len(tail) <= 1, (head, tail)
    for text, p, a in zip(case.texts, plains, added):
        assert a == head + p + tail, (text, head, tail, p, a)
    if case.kind == "tiktoken":
        assert head == tail == []


def _sampled(case: Case, text: str, seed: int):
    return case.run("sample", case.enc.encode, text, allowed_special="all", sample=True,
                    alpha=0.5, seed=seed)


def test_sampled_ids_decode_to_the_text(case):
    # BPE dropout only skips merges, so the bytes are the same; a Unigram
    # sample is another segmentation of the same normalized text, so decode
    # (which undoes the same normalization) gives the same text, except
    # where unknown characters are covered by unk pieces in a different way.
    for text in case.texts:
        for seed in (0, 1):
            ids = _sampled(case, text, seed)
            if ids is UNSUPPORTED_HERE:
                return
            plain = _encode_all(case, text)
            if case.kind in ("gguf_t5", "spm_unigram") and _unk(case) in plain:
                continue
            assert case.enc.decode_bytes(ids) == case.enc.decode_bytes(plain), (text, seed, ids, plain)


def test_sampling_with_a_seed_repeats(case):
    for text in case.texts:
        first = _sampled(case, text, 7)
        if first is UNSUPPORTED_HERE:
            return
        assert _sampled(case, text, 7) == first, text


def test_encode_batch_is_encode_of_each(case):
    texts = _batch_texts(case)
    expected = [_encode_all(case, t) for t in texts]
    for threads in THREADS:
        got = case.enc.encode_batch(texts, num_threads=threads, allowed_special="all")
        assert got == expected, f"num_threads={threads}"


def test_encode_ordinary_batch_is_encode_ordinary_of_each(case):
    texts = _batch_texts(case)
    expected = [case.enc.encode_ordinary(t) for t in texts]
    for threads in THREADS:
        assert case.enc.encode_ordinary_batch(texts, num_threads=threads) == expected, threads


def _check_flat(result, expected, what):
    ids, offsets = result
    assert isinstance(ids, array) and isinstance(offsets, array), what
    assert list(ids) == [t for one in expected for t in one], what
    lengths = [0]
    for one in expected:
        lengths.append(lengths[-1] + len(one))
    assert list(offsets) == lengths, what


def test_flat_batches_are_the_concatenated_lists(case):
    texts = _batch_texts(case)
    expected = [_encode_all(case, t) for t in texts]
    ordinary = [case.enc.encode_ordinary(t) for t in texts]
    for threads in THREADS:
        _check_flat(case.enc.encode_batch(texts, num_threads=threads, allowed_special="all",
                                          flat=True), expected, f"encode_batch {threads}")
        _check_flat(case.enc.encode_ordinary_batch(texts, num_threads=threads, flat=True),
                    ordinary, f"encode_ordinary_batch {threads}")


def test_count_is_the_length_of_encode(case):
    for text in case.texts:
        assert case.enc.count(text, allowed_special="all") == len(_encode_all(case, text)), text
        if not _has_special(case, text):
            assert case.enc.count(text) == len(case.enc.encode(text)), text


def test_count_batch_is_count_of_each(case):
    texts = _batch_texts(case)
    expected = [len(_encode_all(case, t)) for t in texts]
    for threads in THREADS:
        assert case.enc.count_batch(texts, num_threads=threads,
                                    allowed_special="all") == expected, threads


def test_encode_to_array_is_encode(case):
    for text in case.texts:
        got = case.enc.encode_to_array(text, allowed_special="all")
        assert isinstance(got, array) and got.typecode == "I"
        assert list(got) == _encode_all(case, text), text


def test_encode_to_numpy_is_encode(case):
    np = pytest.importorskip("numpy")
    for text in case.texts:
        got = case.enc.encode_to_numpy(text, allowed_special="all")
        assert got.dtype == np.uint32
        assert got.tolist() == _encode_all(case, text), text


def test_encode_single_token_finds_each_token(case):
    # tiktoken-style ids and bytes are one-to-one, so the id comes back. Other
    # kinds may hold two ids with the same bytes (a byte-fallback <0x41> and
    # "A", a control token and its text), so only the bytes are promised.
    enc = case.enc
    for token in _id_sample(case):
        try:
            data = enc.decode_single_token_bytes(token)
        except KeyError:
            continue  # a hole in the ids (p50k_base has one)
        found = enc.encode_single_token(data)
        if case.kind == "tiktoken":
            assert found == token, (token, data)
        else:
            assert enc.decode_single_token_bytes(found) == data, (token, data, found)
    with pytest.raises(KeyError):
        enc.encode_single_token("this is surely not one token \u2603\u2603\u2603")


def test_encode_single_piece_round_trips_the_bytes(case):
    # Merging text as one piece skips the pre-tokenizer only: the bytes of
    # the ids are the piece's (for SentencePiece kinds the piece is taken
    # as it is, with no dummy prefix or normalization, so compare the
    # token bytes, which is what the piece was merged from).
    enc = case.enc
    for text in case.texts:
        if _has_special(case, text):
            continue
        ids = enc.encode_single_piece(text)
        joined = b"".join(enc.decode_tokens_bytes(ids))
        if case.kind in ("tiktoken", "gguf_gpt2") and _representable(case, text):
            assert joined == text.encode("utf-8"), (text, ids)
        assert all(0 <= t < enc.n_vocab for t in ids), (text, ids)


def test_encode_as_pieces_gives_one_piece_per_id(case):
    enc = case.enc
    for text in case.texts:
        pieces = case.run("encode_as_pieces", enc.encode_as_pieces, text)
        if pieces is UNSUPPORTED_HERE:
            return
        ids = enc.encode_ordinary(text)
        assert all(isinstance(p, str) for p in pieces), (text, pieces)
        assert len(pieces) == len(ids), (text, pieces, ids)


# --------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------

def _id_lists(case: Case) -> list:
    return [_encode_all(case, t) for t in case.texts]


def test_decode_is_decode_bytes_as_utf8(case):
    for ids in _id_lists(case):
        data = case.enc.decode_bytes(ids)
        assert isinstance(data, bytes)
        assert case.enc.decode(ids) == data.decode("utf-8", "replace"), ids
        assert case.enc.decode(ids, errors="ignore") == data.decode("utf-8", "ignore"), ids


def test_decode_gives_back_the_text(case):
    # Lossless only where the reference is: tiktoken and byte-level BPE from
    # GGUF without llama.cpp's space clean-up. SentencePiece normalizes
    # (NFKC, whitespace) and WordPiece lower-cases and splits punctuation.
    if case.kind not in ("tiktoken", "gguf_gpt2"):
        return
    for text in case.texts:
        ids = _encode_all(case, text)
        if not _representable(case, text):
            continue
        if case.kind == "gguf_gpt2":
            if case.enc.decode_bytes(ids) != b"".join(case.enc.decode_tokens_bytes(ids)):
                continue  # clean-up ran: test_decode_tokens_bytes_join_to_decode_bytes
        assert case.enc.decode(ids) == text.encode("utf-8", "surrogatepass").decode(
            "utf-8", "replace"), (text, ids)


def test_decode_batch_is_decode_of_each(case):
    lists = _id_lists(case)
    assert case.enc.decode_batch(lists) == [case.enc.decode(ids) for ids in lists]
    assert case.enc.decode_batch(lists, num_threads=4) == [case.enc.decode(ids) for ids in lists]


def test_decode_bytes_batch_is_decode_bytes_of_each(case):
    lists = _id_lists(case)
    expected = [case.enc.decode_bytes(ids) for ids in lists]
    assert case.enc.decode_bytes_batch(lists) == expected
    assert case.enc.decode_bytes_batch(lists, num_threads=4) == expected


def test_decode_tokens_bytes_is_decode_single_token_bytes_of_each(case):
    for ids in _id_lists(case):
        assert case.enc.decode_tokens_bytes(ids) == [case.enc.decode_single_token_bytes(t)
                                                     for t in ids], ids


def _deletes_only_spaces(joined: bytes, decoded: bytes) -> bool:
    """Whether ``decoded`` is ``joined`` with some b" " bytes deleted."""
    i = 0
    for byte in joined:
        if i < len(decoded) and decoded[i] == byte:
            i += 1
        elif byte != 0x20:
            return False
    return i == len(decoded)


def test_decode_tokens_bytes_join_to_decode_bytes(case):
    # tiktoken: decode is the concatenation, exactly.
    # gguf_gpt2: the same, unless the file asks for llama.cpp's space
    #   clean-up (" ," -> ","...), which only deletes spaces.
    # SentencePiece kinds: decode drops the one leading space of the dummy
    #   prefix and renders unk its own way; without unk the rest is the
    #   concatenation.
    # gguf_bert: a token's bytes carry a leading space where a word starts
    #   ("##" pieces have none) and decode cleans up spaces around
    #   punctuation, so decode is the concatenation with spaces deleted.
    # Either way GGUF decode renders control tokens as nothing, so lists
    #   holding special ids are left to the other tests.
    enc = case.enc
    unk = _unk(case)
    for text, ids in zip(case.texts, _id_lists(case)):
        joined = b"".join(enc.decode_tokens_bytes(ids))
        decoded = enc.decode_bytes(ids)
        what = (text, ids, joined, decoded)
        if case.kind == "tiktoken":
            assert decoded == joined, what
        elif any(enc.is_special_token(t) for t in ids):
            # GGUF decode renders control tokens as nothing (llama.cpp's
            # unparse_special=False); decode_single_token_bytes gives their text
            continue
        elif case.kind == "gguf_gpt2":
            assert _deletes_only_spaces(joined, decoded), what
        elif case.kind in SENTENCEPIECE_KINDS + ("hf_bpe", "hf_unigram"):
            if unk in ids:
                continue
            assert decoded in (joined, joined[1:] if joined[:1] == b" " else joined), what
        else:
            if unk in ids:
                continue
            assert _deletes_only_spaces(joined, decoded), what


def test_decode_with_offsets_text_is_decode(case):
    for ids in _id_lists(case):
        data = case.enc.decode_bytes(ids)
        if not _valid_utf8(data):
            continue
        text, offsets = case.enc.decode_with_offsets(ids)
        assert text == case.enc.decode(ids), (ids, text)


def _concatenation_offsets(pieces: list) -> list:
    # tiktoken's offsets: each token's start in the concatenated bytes, as a
    # character index (a token starting inside a character gets that one's)
    offsets, before = [], b""
    for piece in pieces:
        started = sum(1 for b in before if not 0x80 <= b < 0xC0)  # characters begun
        inside = 1 if piece and 0x80 <= piece[0] < 0xC0 else 0
        offsets.append(max(0, started - inside))
        before += piece
    return offsets


def test_decode_with_offsets_gives_each_token_its_start(case):
    # offsets[i]: the character of decode(ids) where token i starts (where
    # the text it leaves there starts; a token that leaves nothing gets the
    # index of the next character).
    # tiktoken: decode is the concatenation, so exactly tiktoken's offsets.
    # Other kinds, where decode is the concatenation too, the same; where it
    #   only drops the dummy-prefix space at the start, the same less one
    #   character after the first token. Otherwise (control tokens, unk,
    #   clean-up) each offset is at least as far as the decode of the ids
    #   before it agrees with the text, and at most that decode's length.
    enc = case.enc
    for ids in _id_lists(case):
        pieces = enc.decode_tokens_bytes(ids)
        data = enc.decode_bytes(ids)
        if not _valid_utf8(data):
            continue
        text, offsets = enc.decode_with_offsets(ids)
        assert len(offsets) == len(ids)
        assert offsets == sorted(offsets), (ids, offsets)
        assert all(0 <= o <= len(text) for o in offsets), (ids, offsets)
        joined = b"".join(pieces)
        concatenated = _concatenation_offsets(pieces)
        if case.kind == "tiktoken" or data == joined:
            assert offsets == concatenated, (ids, offsets)
        elif joined[:1] == b" " and data == joined[1:]:
            assert offsets == [max(0, o - 1) for o in concatenated], (ids, offsets)
        else:
            for k in range(len(ids)):
                before = enc.decode(ids[:k])
                agree = len(os.path.commonprefix([before, text]))
                assert agree <= offsets[k] <= max(agree, len(before)), (ids, k, offsets)


def test_decode_stream_adds_up_to_decode(case):
    for ids in _id_lists(case):
        stream = case.enc.decode_stream()
        pieces = [stream.push(t) for t in ids]
        assert all(isinstance(p, str) for p in pieces)
        assert "".join(pieces) + stream.flush() == case.enc.decode(ids), (ids, pieces)


# --------------------------------------------------------------------------
# Facts about the vocabulary
# --------------------------------------------------------------------------

def test_token_byte_values_are_the_sorted_ordinary_tokens(case):
    # "The bytes of every ordinary token, sorted": the bytes
    # decode_single_token_bytes gives for each id that is not special. Every
    # id is looked at for vocabularies under BIG_VOCAB; the bigger ones are
    # checked on a sample of ids (a Python call per id is seconds there).
    enc = case.enc
    values = enc.token_byte_values()
    assert all(isinstance(v, bytes) for v in values)
    assert values == sorted(values)
    full = enc.n_vocab < BIG_VOCAB
    ordinary, special = [], []
    for t in (range(enc.n_vocab) if full else _id_sample(case)):
        try:
            data = enc.decode_single_token_bytes(t)
        except KeyError:
            continue  # a hole in the ids
        (special if enc.is_special_token(t) else ordinary).append(data)
    present = set(values)
    missing = sorted(set(ordinary) - present)
    extra = sorted(set(special) - set(ordinary) & present)
    if full:
        extra = sorted(present - set(ordinary))
    assert not missing and not extra and (not full or len(values) == len(ordinary)), (
        f"{case}: token_byte_values has {len(values)} entries for {len(ordinary)} ordinary "
        f"ids{'' if full else ' sampled'}; not an ordinary token's bytes: {len(extra)} {extra[:4]}; "
        f"ordinary tokens' bytes left out: {len(missing)} {missing[:4]}")


def test_eot_token_is_a_token_of_the_vocabulary(case):
    eot = case.run("eot_token", getattr, case.enc, "eot_token")
    if eot is UNSUPPORTED_HERE:
        return
    assert isinstance(eot, int) and 0 <= eot < case.enc.n_vocab
    case.enc.decode_single_token_bytes(eot)
    if "<|endoftext|>" in case.enc.special_tokens_set:
        assert eot == case.enc.encode_single_token("<|endoftext|>")


def test_special_tokens_set_holds_the_special_ids(case):
    enc = case.enc
    specials = enc.special_tokens_set
    assert isinstance(specials, frozenset) and all(isinstance(s, str) for s in specials)
    special_ids = {_special_id(enc, s) for s in _some_specials(enc)}
    assert all(enc.is_special_token(t) for t in special_ids)
    for t in _id_sample(case):
        if enc.is_special_token(t):
            assert enc.decode_single_token_bytes(t).decode("utf-8", "replace") in specials, t
    if case.kind == "tiktoken":
        for text in case.texts:
            assert not any(enc.is_special_token(t) for t in enc.encode_ordinary(text)), text


def test_n_vocab_is_max_token_value_plus_one(case):
    enc = case.enc
    assert enc.n_vocab == enc.max_token_value + 1
    enc.decode_single_token_bytes(enc.max_token_value)
    with pytest.raises(KeyError):
        enc.decode_single_token_bytes(enc.n_vocab)
    for ids in _id_lists(case):
        assert all(0 <= t <= enc.max_token_value for t in ids), ids


# --------------------------------------------------------------------------
# tiktoken's internals
# --------------------------------------------------------------------------

def test_encode_bytes_is_encode_ordinary_of_utf8(case):
    enc = case.enc
    for text in case.texts:
        ids = case.run("_encode_bytes", enc._encode_bytes, text.encode("utf-8"))
        if ids is UNSUPPORTED_HERE:
            return
        assert ids == enc.encode_ordinary(text), text
    for data in INVALID_UTF8:
        assert enc.decode_bytes(enc._encode_bytes(data)) == data, data


def test_encode_with_unstable_splits_off_the_unstable_end(case):
    # stable + the last piece's ids == encode; that tail is one of the
    # completions, and every completion's bytes start with the unstable bytes.
    enc = case.enc
    texts = [t for t in case.texts if t and not _has_special(case, t)][:UNSTABLE_TEXTS]
    for text in texts:
        got = case.run("encode_with_unstable", enc.encode_with_unstable, text)
        if got is UNSUPPORTED_HERE:
            return
        stable, completions = got
        ids = enc.encode(text)
        assert ids[:len(stable)] == stable, text
        tail = ids[len(stable):]
        if not tail:
            assert completions == [], text
            continue
        assert tail in completions, (text, tail)
        unstable = enc.decode_bytes(tail)
        for c in completions:
            assert enc.decode_bytes(c).startswith(unstable), (text, c)


def test_encode_only_native_bpe_is_encode_ordinary(case):
    for text in case.texts:
        ids = case.run("_encode_only_native_bpe", case.enc._encode_only_native_bpe, text)
        if ids is UNSUPPORTED_HERE:
            return
        assert ids == case.enc.encode_ordinary(text), text
