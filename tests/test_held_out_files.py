"""Vocabulary files outside the shared test data that fasttok refused or got wrong.

Each finding is pinned on a minimal synthetic file with the shape of the real
one, against the reference library:

* Cohere Command-R+ ``tokenizer.json``: a ``TemplateProcessing`` that also
  carries ByteLevel's ``add_prefix_space``/``trim_offsets``/``use_regex`` is a
  template (tokenizers reads ByteLevel only under its own ``type``).
* MiniCPM-V 4.5 ``tokenizer.json``: a byte-level merge whose result is an
  added token's vocabulary entry (``<unk`` + ``>``) loads, and the drop-in
  gives tokenizers' ids.
* Whisper's ``multilingual.tiktoken``: the line ``= 50256`` (padding alone,
  the empty token) is read as tiktoken reads it, ``b"" -> 50256``.
"""

from __future__ import annotations

import base64
import itertools
import json

import pytest

import fasttok
import fasttok.hf
from fasttok.loaders.hf_stage_json import post_processor_from_json
from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
from fasttok.loaders.tiktoken_file import load_tiktoken_ranks
from fasttok.loaders.tiktoken_writer import write_tiktoken
from fasttok.shared._bytemap import bytes_to_unicode

tokenizers = pytest.importorskip("tokenizers")

ALPHABET = bytes_to_unicode()
TEXTS = ["hi", "hi hi", "<unk>", "a<unk>b", "<unk<unk>>", " <unk >", "<s>", "e\u0301<unk>"]


def _byte_level_document(merges: list, extra: dict, added: list, normalizer=None) -> dict:
    # GPT-2's alphabet, then the merged tokens in merge order
    vocab = {ALPHABET[b]: b for b in range(256)}
    for left, right in merges:
        vocab.setdefault(left + right, len(vocab))
    vocab.update(extra)
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": c, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}
                         for c, i in added],
        "normalizer": normalizer,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                          "use_regex": True},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": "", "end_of_word_suffix": "", "fuse_unk": False,
                  "byte_fallback": False, "ignore_merges": False, "vocab": vocab,
                  "merges": [list(m) for m in merges]},
    }


def _both(doc: dict) -> tuple:
    text = json.dumps(doc)
    return fasttok.hf.Tokenizer.from_str(text), tokenizers.Tokenizer.from_str(text)


def _ids_differ(doc: dict, add_special_tokens: bool) -> list:
    ours, theirs = _both(doc)
    return [(t, ours.encode(t, add_special_tokens=add_special_tokens).ids,
             theirs.encode(t, add_special_tokens=add_special_tokens).ids)
            for t in TEXTS
            if ours.encode(t, add_special_tokens=add_special_tokens).ids
            != theirs.encode(t, add_special_tokens=add_special_tokens).ids]


# -------------------------------------------------- Cohere Command-R+

def _command_r_document() -> dict:
    bos, eos, turn = 256, 257, 258
    doc = _byte_level_document([("h", "i")], {}, [("<BOS_TOKEN>", bos), ("<EOS_TOKEN>", eos),
                                                  ("<|END_OF_TURN_TOKEN|>", turn)])
    for i, (_, token_id) in enumerate([("<BOS_TOKEN>", bos), ("<EOS_TOKEN>", eos),
                                       ("<|END_OF_TURN_TOKEN|>", turn)]):
        doc["model"]["vocab"][f"<special{i}>"] = token_id
    doc["model"]["vocab"]["hi"] = 259
    # Command-R's post-processor: a template with ByteLevel's flags beside it
    doc["post_processor"] = {
        "type": "TemplateProcessing", "add_prefix_space": False, "trim_offsets": True,
        "use_regex": True,
        "single": [{"SpecialToken": {"id": "<BOS_TOKEN>", "type_id": 0}},
                   {"Sequence": {"id": "A", "type_id": 0}},
                   {"SpecialToken": {"id": "<|END_OF_TURN_TOKEN|>", "type_id": 0}},
                   {"SpecialToken": {"id": "<EOS_TOKEN>", "type_id": 0}}],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {name: {"id": name, "ids": [i], "tokens": [name]}
                           for name, i in (("<BOS_TOKEN>", bos), ("<EOS_TOKEN>", eos),
                                           ("<|END_OF_TURN_TOKEN|>", turn))},
    }
    return doc


def test_template_with_byte_level_flags_adds_its_special_tokens():
    ours, theirs = _both(_command_r_document())
    assert theirs.encode("hi").ids == [256, 259, 258, 257]
    assert ours.encode("hi").ids == [256, 259, 258, 257]


def test_template_with_byte_level_flags_matches_tokenizers_on_every_text():
    assert _ids_differ(_command_r_document(), add_special_tokens=True) == []


PROCESSOR_FIELDS = {
    "roberta": {"sep": ["[SEP]", 2], "cls": ["[CLS]", 1], "trim_offsets": True,
                "add_prefix_space": True},
    "bert": {"sep": ["[SEP]", 2], "cls": ["[CLS]", 1]},
    "byte level": {"add_prefix_space": True, "trim_offsets": True, "use_regex": True},
    "template": {"single": [{"Sequence": {"id": "A", "type_id": 0}}], "pair": [],
                 "special_tokens": {}},
    "sequence": {"processors": []},
}
PROCESSOR_TYPES = ("RobertaProcessing", "BertProcessing", "ByteLevel", "TemplateProcessing",
                   "Sequence")
SPELLINGS = [(kind, combo) for r in (1, 2) for combo in itertools.combinations(PROCESSOR_FIELDS, r)
             for kind in PROCESSOR_TYPES]


def _processor_type(spec: dict) -> str:
    doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
           "normalizer": None, "pre_tokenizer": None, "decoder": None, "post_processor": spec,
           "model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}}
    try:
        return json.loads(tokenizers.Tokenizer.from_str(json.dumps(doc)).to_str())[
            "post_processor"]["type"]
    except Exception:
        return "refused"


@pytest.mark.parametrize("kind,combo", SPELLINGS, ids=[f"{k} with {'+'.join(c)}" for k, c in SPELLINGS])
def test_post_processor_fields_under_any_type_read_as_tokenizers_reads_them(kind, combo):
    spec = {"type": kind}
    for name in combo:
        spec.update(PROCESSOR_FIELDS[name])
    try:
        ours = type(post_processor_from_json(spec, "$", lambda w, p: ValueError(f"{w}: {p}"))).__name__
    except ValueError:
        ours = "refused"
    assert ours == _processor_type(spec)


# -------------------------------------------------- MiniCPM-V 4.5

def _minicpm_document(normalizer=None, token: str = "<unk>") -> dict:
    # the last merge makes the vocabulary entry of an added token, same id
    merges = [(token[0], token[1])]
    for ch in token[2:]:
        merges.append((merges[-1][0] + merges[-1][1], ch))
    merges.append(("h", "i"))
    doc = _byte_level_document(merges, {}, [], normalizer)
    unk_id = doc["model"]["vocab"][token]
    doc["added_tokens"] = _byte_level_document([], {}, [(token, unk_id)])["added_tokens"]
    return doc


def test_merge_making_an_added_tokens_entry_loads():
    record = tokenizer_json_record(json.dumps(_minicpm_document()), "t.json")
    assert record.merges is not None  # the fused byte-level path, not only the pipeline
    assert record.special_tokens == {"<unk>": 259}


def test_merge_making_an_added_tokens_entry_matches_tokenizers():
    assert _ids_differ(_minicpm_document(), add_special_tokens=False) == []


def test_merge_making_an_added_tokens_entry_under_nfc_matches_tokenizers():
    assert _ids_differ(_minicpm_document({"type": "NFC"}), add_special_tokens=False) == []


def test_merge_making_an_entry_nfc_can_spell_is_left_to_the_pipeline():
    # NFC turns U+212A KELVIN SIGN into "K", so the model can meet "Kat"
    # outside the added token and merge it: tokenizers does
    doc = _minicpm_document({"type": "NFC"}, token="Kat")
    assert tokenizer_json_record(json.dumps(doc), "t.json").merges is None
    ours, theirs = _both(doc)
    kat = doc["model"]["vocab"]["Kat"]
    assert theirs.encode("\u212aat").ids == [kat]
    assert ours.encode("\u212aat").ids == [kat]


# -------------------------------------------------- Whisper multilingual.tiktoken

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def _whisper_file(tmp_path, padding: bytes = b"=", blank_line: bool = False):
    # the 256 bytes, one merge, then the empty token ranked as Whisper ranks it
    lines = [base64.b64encode(bytes([b])) + b" %d" % b for b in range(256)]
    lines += [base64.b64encode(b"hi") + b" 256", padding + b" 257"]
    if blank_line:  # not the bulk layout: the line-by-line reader
        lines.insert(3, b"")
    path = tmp_path / "multilingual.tiktoken"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.mark.parametrize("padding", [b"=", b"=="])
@pytest.mark.parametrize("blank_line", [False, True], ids=["bulk", "by line"])
def test_padding_alone_is_the_empty_token_as_tiktoken_reads_it(tmp_path, padding, blank_line):
    load = pytest.importorskip("tiktoken.load")
    path = _whisper_file(tmp_path, padding, blank_line)
    ranks = load_tiktoken_ranks(path)
    assert ranks[b""] == 257
    assert ranks == load.load_tiktoken_bpe(str(path))


def test_empty_token_ranked_twice_is_refused_naming_the_line():
    with pytest.raises(fasttok.errors.VocabularyFileError, match="line 3: token b'' already has rank 1"):
        load_tiktoken_ranks(b"IQ== 0\n= 1\n== 2\n")


def test_a_written_file_ranking_the_empty_token_reads_back_in_both(tmp_path):
    load = pytest.importorskip("tiktoken.load")
    ranks = load_tiktoken_ranks(_whisper_file(tmp_path))
    path = tmp_path / "written.tiktoken"
    write_tiktoken(path, ranks)
    assert load_tiktoken_ranks(path) == load.load_tiktoken_bpe(str(path)) == ranks


def test_a_file_ranking_the_empty_token_encodes_and_decodes_as_tiktoken(tmp_path):
    tiktoken = pytest.importorskip("tiktoken")
    path = _whisper_file(tmp_path)
    specials = {"<|endoftext|>": 258}
    theirs = tiktoken.Encoding("w", pat_str=GPT2_PATTERN, special_tokens=specials,
                               mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)))
    ours = fasttok.load(path, pat_str=GPT2_PATTERN, special_tokens=specials)
    assert ours.n_vocab == theirs.n_vocab == 259
    assert ours.encode_single_token(b"") == theirs.encode_single_token(b"") == 257
    assert ours.decode([104, 257, 105]) == theirs.decode([104, 257, 105]) == "hi"
    for text in ["hi", "hi there", "", "<|endoftext|>hi"]:
        assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")


def test_merge_making_an_added_tokens_entry_outside_the_byte_level_alphabet_loads():
    # "<a b>" (a real space) is no text the byte-level model ever sees
    doc = _byte_level_document([("<", "a")], {"<a b>": 257, " b>": 258}, [], {"type": "NFC"})
    doc["model"]["merges"].append(["<a", " b>"])
    doc["added_tokens"] = _byte_level_document([], {}, [("<a b>", 257), (" b>", 258)])["added_tokens"]
    ours, theirs = _both(doc)
    for text in ["<a b>", "x <a b> b>", "<a"]:
        assert ours.encode(text).ids == theirs.encode(text).ids
