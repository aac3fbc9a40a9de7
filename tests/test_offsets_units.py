"""``Encoding.encode_with_offsets``: each token's span of the original text in
UTF-8 bytes, code points or UTF-16 units, on every vocabulary kind.

The rule (``fasttok.shared._offset_units``): spans cover whole characters;
a token holding part of a character spans all of it (``tokenizers``'
``ByteLevel`` rule), SentencePiece's byte pieces of one character give the
last of them the character and the others an empty span at its start. The
spans equal ``tokenizers``' offsets on every shared ``tokenizer.json`` and
``sentencepiece``'s ``begin``/``end`` on every shared ``.model``; the three
units are one set of spans counted three ways; each span holds its token's
text; and where decoding gives the text back, ``decode_with_offsets``
starts each token where its span starts.
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fasttok
from conftest import (DATA, DATA_MISSING, HF_BYTE_LEVEL, HF_OTHER, MISSING_DATA_REASON,
                      ONE_FILE_PER_KIND, Mismatches, proto_fields, read_jsonl, read_varint,
                      spm_model_path, spm_pair, without_truncation_or_padding)

pytestmark = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)

HF_FILES = [f"{name}/tokenizer.json" for name in HF_BYTE_LEVEL + HF_OTHER] + [
    "unigram/botchan_unigram_5000.v5.24.0.T5Tokenizer.json",
    "unigram/botchan_unigram_5000.v4.57.6.AlbertTokenizer.json",
    "unigram/kyoto_ja_unigram_8000.v4.57.6.XLNetTokenizer.json",
    "unigram/botchan_unigram_4000_bytefallback.v5.24.0.from_spm_proto.json"]
SPM_MODELS = ("botchan_unigram_4000_bytefallback", "botchan_bpe_8000_bytefallback",
              "botchan_unigram_2000_userdef_cf", "botchan_en_unigram_1000", "botchan_en_bpe_1000",
              "kyoto_ja_unigram_8000")
# every kind, and o200k (another scanner) beside r50k
KINDS = dict(ONE_FILE_PER_KIND, o200k=DATA / "vocab" / "tiktoken" / "o200k_base.tiktoken")
# kinds whose decode is the tokens' bytes joined: the text itself
SPELLING_KINDS = ("tiktoken", "o200k", "gguf_gpt2", "hf_byte_bpe")

# emoji (non-BMP), combining marks, CJK, compatibility characters, spaces
MIXED = ["héllo wörld 😀👍🏽 e\u0301 ﬁ Ａ ① 龍の カ 한국어\n\t  end",
         "\U0001f600\U0001f600x", "a\u0301\u0302b", "  leading and trailing  ", ""]
_ALPHABET = st.sampled_from(list("abcXYZ019 ,.!?-'\"()") + [
    " ", "  ", "\n", "\t", "\u3000", "\xa0", "\u2581", "é", "e\u0301", "\u0301", "ﬁ", "①", "Ａ",
    "龍", "の", "한", "😀", "👍🏽", "\u200d", "ß", "İ", "<s>", "</s>", "[CLS]", "<|endoftext|>"])
_TEXT = st.lists(_ALPHABET, max_size=20).map("".join)
_LOADED: dict = {}


def _load(path) -> fasttok.Encoding:
    if path not in _LOADED:
        _LOADED[path] = fasttok.load(str(path))
    return _LOADED[path]


def lines() -> list:
    return [rec["text"] for rec in read_jsonl(DATA / "testcases" / "lines.jsonl")]


def in_units(text: str, char_spans: list) -> tuple:
    """Character spans counted in UTF-8 bytes and in UTF-16 units, by slicing."""
    def count(i: int, unit: str) -> int:
        return len(text[:i].encode("utf-8", "surrogatepass")) if unit == "bytes" else \
            len(text[:i].encode("utf-16-le", "surrogatepass")) // 2
    return tuple([(count(a, unit), count(b, unit)) for a, b in char_spans]
                 for unit in ("bytes", "utf16"))


# ------------------------------------------------------------ against the references

@pytest.mark.parametrize("name", HF_FILES)
def test_char_spans_equal_tokenizers_offsets_on_every_shared_tokenizer_json(name):
    import tokenizers

    path = DATA / "vocab" / "hf" / name
    enc = _load(path)
    tk = without_truncation_or_padding(tokenizers.Tokenizer.from_file(str(path)))
    bad = Mismatches(f"{name} offsets")
    for k, text in enumerate(lines() + MIXED):
        theirs = tk.encode(text, add_special_tokens=False)
        ids, spans = enc.encode_with_offsets(text, allowed_special="all")
        bad.check(None if (ids, spans) == (theirs.ids, theirs.offsets) else
                  f"{list(zip(ids, spans))[:12]} != {list(zip(theirs.ids, theirs.offsets))[:12]} "
                  f"for {text[:80]!r}", label=str(k))
    bad.assert_none()


@pytest.mark.parametrize("name", [f"{name}/tokenizer.json" for name in HF_BYTE_LEVEL + HF_OTHER])
def test_the_tokens_add_special_tokens_adds_span_nothing_as_in_tokenizers(name):
    import tokenizers

    path = DATA / "vocab" / "hf" / name
    enc = _load(path)
    tk = without_truncation_or_padding(tokenizers.Tokenizer.from_file(str(path)))
    for text in MIXED + lines()[:40]:
        theirs = tk.encode(text)
        assert enc.encode_with_offsets(text, allowed_special="all", add_special_tokens=True) \
            == (theirs.ids, theirs.offsets)


def test_a_byte_level_post_processor_trims_spans_as_in_tokenizers(tmp_path):
    # tokenizers trims a token's offsets of its spaces (ByteLevel's
    # trim_offsets) with or without special tokens; llama3 with it on
    import json

    import tokenizers

    doc = json.loads((DATA / "vocab" / "hf" / "llama3" / "tokenizer.json").read_text("utf-8"))
    doc["post_processor"] = {"type": "ByteLevel", "add_prefix_space": True,
                             "trim_offsets": True, "use_regex": True}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), "utf-8")
    enc = fasttok.load(str(path))
    tk = without_truncation_or_padding(tokenizers.Tokenizer.from_file(str(path)))
    assert enc.encode_with_offsets("Hello world  x")[1] == [(0, 5), (6, 11), (12, 12), (13, 14)]
    for text in lines() + MIXED:
        theirs = tk.encode(text, add_special_tokens=False)
        assert enc.encode_with_offsets(text, allowed_special="all") == (theirs.ids, theirs.offsets)


@pytest.mark.parametrize("name", ["llama3/tokenizer.json", "gemma3/tokenizer.json",
                                  "all-MiniLM-L6-v2/tokenizer.json", HF_FILES[-1]])
def test_char_spans_equal_tokenizers_offsets_on_hypothesis_text(name):
    import tokenizers

    path = DATA / "vocab" / "hf" / name
    enc = _load(path)
    tk = without_truncation_or_padding(tokenizers.Tokenizer.from_file(str(path)))

    @settings(max_examples=150, derandomize=True, deadline=None)
    @given(_TEXT)
    def check(text):
        theirs = tk.encode(text, add_special_tokens=False)
        assert enc.encode_with_offsets(text, allowed_special="all") == (theirs.ids, theirs.offsets)

    check()


def _proto_spans(sp, text: str) -> tuple:
    # the pieces of sentencepiece's SentencePieceText (field 2), each one's
    # id (2), begin (4) and end (5), read from its serialized proto (what
    # encode_as_immutable_proto gave; its proto return type needs protobuf)
    ids, spans = [], []
    for tag, _, body in proto_fields(sp.encode(text, return_type="serialized_proto")):
        if tag == 0x12:
            fields = {t: read_varint(raw, 1)[0] for t, raw, _ in proto_fields(body) if t & 7 == 0}
            ids.append(fields.get(0x10, 0))
            spans.append((fields.get(0x20, 0), fields.get(0x28, 0)))
    return ids, spans


@pytest.mark.parametrize("name", SPM_MODELS)
def test_byte_spans_equal_sentencepiece_begin_end_on_every_shared_model(name):
    enc, sp = spm_pair(spm_model_path(name))
    bad = Mismatches(f"{name} byte spans")
    for k, text in enumerate(lines() + MIXED):
        ours = enc.encode_with_offsets(text, unit="bytes")
        theirs = _proto_spans(sp, text)
        bad.check(None if ours == theirs else
                  f"{list(zip(*ours))[:10]} != {list(zip(*theirs))[:10]} for {text[:80]!r}",
                  label=str(k))
    bad.assert_none()


@pytest.mark.parametrize("name", ["botchan_unigram_4000_bytefallback",
                                  "botchan_bpe_8000_bytefallback"])
def test_byte_spans_equal_sentencepiece_begin_end_on_hypothesis_text(name):
    enc, sp = spm_pair(spm_model_path(name))

    @settings(max_examples=200, derandomize=True, deadline=None)
    @given(_TEXT)
    def check(text):
        assert enc.encode_with_offsets(text, unit="bytes") == _proto_spans(sp, text)

    check()


# ------------------------------------------------------------ the unit conversion

def _reference_spans(text: str, offsets: list, source: str, unit: str) -> list:
    # each offset moved to a character edge (a start back, an end on), by slicing
    def width(c: str, u: str) -> int:
        return 1 if u == "chars" else len(c.encode("utf-16-le", "surrogatepass")) // 2 \
            if u == "utf16" else len(c.encode("utf-8", "surrogatepass"))
    edges = [(0, 0)]   # (position in source, position in unit) at each character edge
    for c in text:
        edges.append((edges[-1][0] + width(c, source), edges[-1][1] + width(c, unit)))
    out = []
    for k, offset in enumerate(offsets):
        at = [u for s, u in edges if s <= offset] if k % 2 == 0 else \
            [u for s, u in edges if s >= offset] or [edges[-1][1]]
        out.append(at[-1] if k % 2 == 0 else at[0])
    return list(zip(out[::2], out[1::2]))


@settings(max_examples=400, derandomize=True, deadline=None)
@given(_TEXT, st.lists(st.integers(0, 80), max_size=16), st.sampled_from(["bytes", "chars"]),
       st.sampled_from(["bytes", "chars", "utf16"]))
def test_spans_convert_to_each_unit_at_character_edges(text, offsets, source, unit):
    from array import array

    from fasttok.shared._offset_units import spans_in_unit

    offsets = offsets[:len(offsets) // 2 * 2]
    expected = _reference_spans(text, offsets, source, unit)
    assert spans_in_unit(text, array("q", offsets), source, unit) == expected
    assert list(spans_in_unit(text, array("i", offsets), source, unit, flat=True)) == \
        [x for span in expected for x in span]


# ------------------------------------------------------------ every kind

@pytest.fixture(scope="module", params=sorted(KINDS))
def kind(request):
    return request.param


def test_ids_are_encodes_and_spans_lie_in_the_text_in_order(kind):
    enc = _load(KINDS[kind])
    for text in lines() + MIXED:
        ids, spans = enc.encode_with_offsets(text, disallowed_special=())
        assert ids == enc.encode(text, disallowed_special=())
        assert len(spans) == len(ids)
        assert all(0 <= a <= b <= len(text) for a, b in spans)
        assert [a for a, _ in spans] == sorted(a for a, _ in spans)


def test_the_three_units_are_one_set_of_spans(kind):
    enc = _load(KINDS[kind])
    for text in MIXED + [t for t in lines() if not t.isascii()]:
        _, chars = enc.encode_with_offsets(text, disallowed_special=())
        assert (enc.encode_with_offsets(text, unit="bytes", disallowed_special=())[1],
                enc.encode_with_offsets(text, unit="utf16", disallowed_special=())[1]) \
            == in_units(text, chars)


def test_flat_spans_are_the_spans_in_two_arrays(kind):
    enc = _load(KINDS[kind])
    for text in MIXED:
        for add in (False, True):
            ids, spans = enc.encode_with_offsets(text, unit="utf16", add_special_tokens=add)
            flat_ids, flat = enc.encode_with_offsets(text, unit="utf16", add_special_tokens=add,
                                                     flat=True)
            assert (flat_ids.typecode, flat.typecode) == ("I", "q")
            assert (list(flat_ids), list(flat)) == (ids, [x for span in spans for x in span])


def _comparable(text: str) -> str:
    # what normalization leaves comparable: compatibility forms, case,
    # accents, whitespace and the space mark
    text = unicodedata.normalize("NFKD", text.replace("\u2581", " ")).casefold()
    return "".join(c for c in text if unicodedata.category(c) not in ("Mn", "Me", "Cc", "Cf")
                   and not c.isspace())


def test_each_span_holds_its_tokens_text(kind):
    # A token that spells whole characters spells its span, compared as
    # the kind normalizes; where a character's normal form is cut (NFC
    # composing jamo, whose first one the span keeps as tokenizers does;
    # llama.cpp's BERT keeping a decomposition's first code point; the last
    # of NFKC's 1, / and 2 of ½, which spans ½) one holds the other. A token
    # of part of a character (a byte piece) lies in its span's UTF-8 (NFC's
    # behind an NFC normalizer; a mark NFC moved keeps the place of the one
    # it replaced, as in tokenizers); a character's tokens before its last
    # (byte pieces, NFKC's 1 and / of ½) end at its start.
    # An unknown token stands for any text.
    enc = _load(KINDS[kind])
    unknown = enc.vocabulary.unk_id
    bad = Mismatches(f"{kind} spans")
    for k, text in enumerate(lines() + MIXED):
        ids, spans = enc.encode_with_offsets(text, disallowed_special=())
        for i, (token, (a, b)) in enumerate(zip(ids, spans)):
            piece = enc.decode_single_token_bytes(token)
            if any(c == b < d for c, d in spans[i + 1:]) and not _comparable(text[a:b]):
                continue   # (a space and) a part of the next nonempty span's character
            try:
                whole = _comparable(piece.decode("utf-8"))
            except UnicodeDecodeError:
                ok = piece in text[a:b].encode("utf-8") or \
                    piece in unicodedata.normalize("NFC", text[a:b]).encode("utf-8") or \
                    all(unicodedata.category(c) == "Mn" for c in text[a:b])
            else:
                span = _comparable(text[a:b])
                ok = token == unknown or whole == span or not text[a:b].isascii() and (
                    whole in span or span in whole) and whole and span
            bad.check(None if ok else f"id {token} {piece!r} spans {text[a:b]!r} in {text[:80]!r}",
                      label=str(k))
    bad.assert_none()


@pytest.mark.parametrize("spelling", SPELLING_KINDS)
def test_decode_with_offsets_starts_each_token_where_its_span_starts(spelling):
    # where decoding gives the text back (no normalizer changed it), both
    # are the start of the character the token's first byte is in
    enc = _load(KINDS[spelling])
    given_back = 0
    for text in lines() + MIXED:
        ids, spans = enc.encode_with_offsets(text, disallowed_special=())
        decoded, starts = enc.decode_with_offsets(ids)
        if decoded == text:
            given_back += 1
            assert starts == [a for a, _ in spans]
    assert given_back > 300


def test_tekken_spans_are_its_walks_as_on_tiktoken_vocabularies():
    # a tekken.json is a byte-level BPE vocabulary (mistral_common ships them)
    pytest.importorskip("mistral_common")
    import importlib.resources

    shipped = sorted(p for p in (importlib.resources.files("mistral_common") / "data").iterdir()
                     if p.name.startswith("tekken_") and p.name.endswith(".json"))
    if not shipped:
        pytest.skip("mistral_common ships no tekken.json")
    enc = _load(shipped[-1])
    for text in lines() + MIXED:
        ids, spans = enc.encode_with_offsets(text, disallowed_special=())
        assert ids == enc.encode(text, disallowed_special=())
        assert enc.decode_with_offsets(ids)[1] == [a for a, _ in spans]
        bytes_spans = enc.encode_with_offsets(text, unit="bytes", disallowed_special=())[1]
        for token, (a, b) in zip(ids, bytes_spans):
            assert enc.decode_single_token_bytes(token) in text.encode("utf-8")[a:b]


def test_a_byte_level_token_of_half_an_emoji_spans_the_emoji():
    enc = _load(KINDS["tiktoken"])
    ids, spans = enc.encode_with_offsets("\U0001f600")
    assert len(ids) > 1 and set(spans) == {(0, 1)}
    assert set(enc.encode_with_offsets("\U0001f600", unit="bytes")[1]) == {(0, 4)}
    assert set(enc.encode_with_offsets("\U0001f600", unit="utf16")[1]) == {(0, 2)}


def test_a_special_token_spans_its_text():
    enc = _load(KINDS["tiktoken"])
    ids, spans = enc.encode_with_offsets("a<|endoftext|>b", allowed_special="all")
    assert ids == [64, 50256, 65] and spans == [(0, 1), (1, 14), (14, 15)]


def test_a_dummy_prefix_of_its_own_gets_an_empty_span_where_it_stands():
    enc, sp = spm_pair(spm_model_path("botchan_unigram_4000_bytefallback"))
    ids, spans = enc.encode_with_offsets("\u9f8d")
    assert enc.decode_single_token_bytes(ids[0]) == b" " and spans[0] == (0, 0)


def test_an_unknown_unit_is_a_value_error_naming_the_units():
    with pytest.raises(ValueError, match="'bytes', 'chars', 'utf16'"):
        _load(KINDS["tiktoken"]).encode_with_offsets("a", unit="codepoints")


# the kinds whose vocabularies have special tokens (a .model's control
# pieces are not matched in text: sentencepiece reads "<s>" as characters)
SPECIAL_KINDS = tuple(k for k in sorted(KINDS) if not k.startswith("spm_"))


@pytest.mark.parametrize("special_kind", SPECIAL_KINDS)
def test_a_disallowed_special_token_is_refused_as_encode_refuses_it(special_kind):
    enc = _load(KINDS[special_kind])
    special = sorted(enc.special_tokens_set)[0]
    with pytest.raises(ValueError, match="disallowed special token"):
        enc.encode_with_offsets(f"a {special}")


@pytest.mark.parametrize("spm_kind", [k for k in sorted(KINDS) if k.startswith("spm_")])
def test_a_control_piece_written_in_text_is_text_as_sentencepiece_reads_it(spm_kind):
    enc, sp = spm_pair(str(KINDS[spm_kind]))
    ids, spans = enc.encode_with_offsets("a <s> </s>")
    assert ids == sp.encode("a <s> </s>") and len(spans) == len(ids)
