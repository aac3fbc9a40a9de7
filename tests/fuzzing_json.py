"""Seeds and mutations for fuzzing the JSON vocabulary formats: Hugging Face ``tokenizer.json`` and Mistral ``tekken.json``.

The seeds are tiny documents, one per kind of pipeline real files use
(byte-level BPE with a template, SentencePiece-style BPE with byte
fallback, WordPiece behind the BERT stages with truncation and padding,
Unigram behind a precompiled charsmap and Metaspace, WordLevel), each
loadable by ``tokenizers`` and fasttok. A mutation edits the parsed tree
where a hostile file would: a key dropped, a value of another type, an id
out of range or repeated, a list cut or doubled, a component type nobody
knows, a regex that does not compile, nesting deep enough to exhaust a
recursive reader. :func:`json_serialize` records where the structure is,
for the byte-level cuts of :mod:`fuzzing`. Standard library only.
"""

from __future__ import annotations

import base64
import json
import random

# odd values a field may be given instead of its own
ODD_VALUES = (None, True, False, 0, -1, 1, 255, 256, 2**31, 2**32, 2**63, 2**64, -(2**63),
              1.5, float("inf"), "", "x", "\u2581", "<unk>", "(", "\\p{Zz}", [], [0], {},
              {"type": "NoSuchThing"}, "a" * 5000)
ODD_REGEXES = ("(", ")", "[", "\\", "a{2,1}", "(?<", "\\p{NoSuchScript}", "(?i", "*", "a**",
               "(?=a)", "\\k<x>", "[\\d-z]", "\\s+(?!\\S)", "\\p{L}++", "(?:)", "x" * 3000)


def _added(token_id: int, content: str, special: bool = True, **flags) -> dict:
    entry = {"id": token_id, "content": content, "single_word": False, "lstrip": False,
             "rstrip": False, "normalized": not special, "special": special}
    entry.update(flags)
    return entry


def _document(model: dict, *, normalizer=None, pre_tokenizer=None, post_processor=None,
              decoder=None, added=(), truncation=None, padding=None) -> dict:
    return {"version": "1.0", "truncation": truncation, "padding": padding,
            "added_tokens": list(added), "normalizer": normalizer,
            "pre_tokenizer": pre_tokenizer, "post_processor": post_processor,
            "decoder": decoder, "model": model}


def _byte_level_bpe(byte_level: dict) -> dict:
    vocab = {byte_level[b]: b for b in range(256)}
    merges = [["Ġ", "t"], ["h", "e"], ["Ġt", "he"], ["i", "n"], ["Ġ", "a"]]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    bos, eos = len(vocab), len(vocab) + 1
    template = {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "<|begin|>", "type_id": 0}},
                           {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [{"Sequence": {"id": "A", "type_id": 0}},
                         {"SpecialToken": {"id": "<|end|>", "type_id": 1}},
                         {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {"<|begin|>": {"id": "<|begin|>", "ids": [bos],
                                                 "tokens": ["<|begin|>"]},
                                   "<|end|>": {"id": "<|end|>", "ids": [eos],
                                               "tokens": ["<|end|>"]}}}
    return _document(
        {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
         "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
         "ignore_merges": True, "vocab": vocab, "merges": merges},
        pre_tokenizer={"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": "\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
                                                   "|\\s+(?!\\S)|\\s+"},
             "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
             "use_regex": False}]},
        post_processor={"type": "Sequence", "processors": [
            {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
             "use_regex": True}, template]},
        decoder={"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                 "use_regex": True},
        added=[_added(bos, "<|begin|>"), _added(eos, "<|end|>")])


def _spm_bpe() -> dict:
    pieces = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    pieces += ["\u2581", "a", "b", "h", "i", "\u2581a", "\u2581h", "\u2581hi", "ab"]
    merges = ["\u2581 a", "\u2581 h", "\u2581h i", "a b"]
    return _document(
        {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
         "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True,
         "ignore_merges": False, "vocab": {p: i for i, p in enumerate(pieces)},
         "merges": merges},
        normalizer={"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "\u2581"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
        post_processor={"type": "TemplateProcessing",
                        "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                   {"Sequence": {"id": "A", "type_id": 0}}],
                        "pair": [{"Sequence": {"id": "A", "type_id": 0}},
                                 {"Sequence": {"id": "B", "type_id": 1}}],
                        "special_tokens": {"<s>": {"id": "<s>", "ids": [1],
                                                   "tokens": ["<s>"]}}},
        decoder={"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        added=[_added(0, "<unk>"), _added(1, "<s>"), _added(2, "</s>")])


def _wordpiece() -> dict:
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c", "h", "e", "l", "o",
             "the", "hello", "##s", "##lo", "##a", ",", ".", "!"]
    return _document(
        {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
         "max_input_chars_per_word": 100, "vocab": {w: i for i, w in enumerate(words)}},
        normalizer={"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                    "strip_accents": None, "lowercase": True},
        pre_tokenizer={"type": "BertPreTokenizer"},
        post_processor={"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]},
        decoder={"type": "WordPiece", "prefix": "##", "cleanup": True},
        added=[_added(i, w) for i, w in enumerate(words[:5])],
        truncation={"direction": "Right", "max_length": 16, "strategy": "LongestFirst",
                    "stride": 0},
        padding={"strategy": {"Fixed": 16}, "direction": "Right", "pad_to_multiple_of": None,
                 "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"})


def _unigram(charsmap: bytes) -> dict:
    pieces = [["<pad>", 0.0], ["</s>", 0.0], ["<unk>", 0.0], ["\u2581", -2.0], ["a", -3.0],
              ["b", -3.5], ["\u2581a", -2.5], ["ab", -4.0], ["\u2581ab", -3.0], ["h", -4.0],
              ["i", -4.0], ["\u2581hi", -3.2]]
    return _document(
        {"type": "Unigram", "unk_id": 2, "vocab": pieces, "byte_fallback": False},
        normalizer={"type": "Sequence", "normalizers": [
            {"type": "Precompiled",
             "precompiled_charsmap": base64.b64encode(charsmap).decode()},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
        pre_tokenizer={"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always",
                       "split": True},
        post_processor={"type": "TemplateProcessing",
                        "single": [{"Sequence": {"id": "A", "type_id": 0}},
                                   {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                        "pair": [{"Sequence": {"id": "A", "type_id": 0}},
                                 {"SpecialToken": {"id": "</s>", "type_id": 0}},
                                 {"Sequence": {"id": "B", "type_id": 0}},
                                 {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                        "special_tokens": {"</s>": {"id": "</s>", "ids": [1],
                                                    "tokens": ["</s>"]}}},
        decoder={"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always",
                 "split": True},
        added=[_added(0, "<pad>"), _added(1, "</s>"), _added(2, "<unk>")])


def _wordlevel() -> dict:
    words = ["<unk>", "hello", "world", ",", "!", "the"]
    return _document(
        {"type": "WordLevel", "unk_token": "<unk>", "vocab": {w: i for i, w in enumerate(words)}},
        normalizer={"type": "Lowercase"},
        pre_tokenizer={"type": "Sequence", "pretokenizers": [
            {"type": "WhitespaceSplit"}, {"type": "Punctuation", "behavior": "Isolated"},
            {"type": "Digits", "individual_digits": True}]},
        decoder={"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|",
                 "cleanup": True},
        added=[_added(0, "<unk>"), _added(6, "<tool>", special=False, single_word=True,
                                          lstrip=True, rstrip=True)])


def tokenizer_json_seeds(charsmap: bytes, byte_level: dict) -> dict:
    """Name -> a tiny ``tokenizer.json`` document of each pipeline kind; the
    Unigram one normalizes with the SentencePiece ``charsmap`` given, the
    byte-level one spells bytes with ``byte_level`` (byte -> character)."""
    return {"byte-level-bpe": _byte_level_bpe(byte_level), "spm-bpe": _spm_bpe(),
            "wordpiece": _wordpiece(), "unigram": _unigram(charsmap), "wordlevel": _wordlevel()}


def tekken_seeds() -> dict:
    """Name -> a tiny ``tekken.json`` document (mistral-common's layout)."""
    vocab = [{"rank": i, "token_bytes": base64.b64encode(bytes([i])).decode(),
              "token_str": chr(i) if i < 128 else None} for i in range(256)]
    for text in ("he", "ll", "hell", "hello", " w", " wo"):
        vocab.append({"rank": len(vocab), "token_bytes": base64.b64encode(text.encode()).decode(),
                      "token_str": text})
    specials = [{"rank": i, "token_str": s, "is_control": True}
                for i, s in enumerate(("<unk>", "<s>", "</s>", "[INST]", "[/INST]"))]
    config = {"pattern": "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*"
                         "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|[^\\r\\n\\p{L}\\p{N}]?"
                         "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*"
                         "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
              "num_vocab_tokens": len(vocab), "default_vocab_size": len(vocab) + 8,
              "default_num_special_tokens": 8, "version": "v7"}
    return {"tekken-v7": {"config": config, "vocab": vocab, "special_tokens": specials}}


# ---------------------------------------------------------------------------
# Mutations of the parsed tree

def _nodes(doc) -> list:
    """``(container, key, path)`` of the values below ``doc``, breadth first,
    at most 20000 and 64 levels down (a deep-nested edit stays reachable at
    its top)."""
    out: list = []
    todo = [(doc, ())]
    while todo and len(out) < 20000:
        node, path = todo.pop(0)
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            out.append((node, key, path + (key,)))
            if isinstance(value, (dict, list)) and len(path) < 64:
                todo.append((value, path + (key,)))
    return out


def _pick(rng: random.Random, doc) -> tuple:
    nodes = _nodes(doc)
    # half the time somewhere in the pipeline's stages, where the variety is
    stages = [n for n in nodes if n[2] and n[2][0] in ("normalizer", "pre_tokenizer",
                                                       "post_processor", "decoder", "config",
                                                       "added_tokens", "truncation",
                                                       "padding", "special_tokens")]
    pool = stages if stages and rng.random() < 0.5 else nodes
    return rng.choice(pool)


def json_semantic_mutation(rng: random.Random, doc) -> str:
    """Edit ``doc`` in place the way a hostile file would; the kind of edit."""
    kind = rng.choice(("drop_key", "odd_value", "odd_value", "odd_id", "unknown_type",
                       "odd_regex", "cut_list", "double_entry", "swap_values", "deep_nesting",
                       "rename_key"))
    container, key, _ = _pick(rng, doc)
    value = container[key]
    if kind == "drop_key" and isinstance(container, dict):
        del container[key]
    elif kind == "odd_id":
        target = rng.choice([n for n in _nodes(doc) if isinstance(n[0][n[1]], int)
                             and not isinstance(n[0][n[1]], bool)] or [(container, key, ())])
        target[0][target[1]] = rng.choice((-1, 2**31 - 1, 2**32, 2**63, 10**6,
                                           rng.randrange(300)))
    elif kind == "unknown_type":
        typed = [n for n in _nodes(doc) if n[1] == "type"]
        if typed:
            c, k, _ = rng.choice(typed)
            c[k] = rng.choice(("NoSuchThing", "", "bpe", "Sequence", "BPE", "Unigram"))
    elif kind == "odd_regex":
        patterns = [n for n in _nodes(doc) if n[1] in ("Regex", "pattern", "String")
                    and isinstance(n[0][n[1]], str)]
        if patterns:
            c, k, _ = rng.choice(patterns)
            c[k] = rng.choice(ODD_REGEXES)
    elif kind == "cut_list" and isinstance(value, list):
        del value[rng.randrange(len(value) + 1):]
    elif kind == "double_entry" and isinstance(value, list) and value:
        # the same object twice: serialized, it is two equal entries
        value.insert(rng.randrange(len(value) + 1), rng.choice(value))
    elif kind == "swap_values" and isinstance(container, dict) and len(container) > 1:
        other = rng.choice([k for k in container if k != key])
        container[key], container[other] = container[other], container[key]
    elif kind == "deep_nesting":
        nested = value
        for _ in range(rng.choice((100, 2000, 100000))):
            nested = [nested]
        container[key] = nested
    elif kind == "rename_key" and isinstance(container, dict):
        container[key + rng.choice(("_", "X", ""))] = container.pop(key)
    else:
        container[key] = rng.choice(ODD_VALUES)
        kind = "odd_value"
    return f"json_{kind}"


def json_serialize(doc) -> tuple:
    """``(bytes, boundaries)``: the document as its writers write it, and the
    offsets where a value or a member ends (for cuts at the structure)."""
    try:
        text = json.dumps(doc, ensure_ascii=False, indent=1)
    except RecursionError:  # too deep for the encoder: write the nesting by hand
        text = _dump_deep(doc)
    data = text.encode("utf-8", "surrogatepass")
    boundaries = [i for i, b in enumerate(data) if b in b",]}"][:5000]
    return data, boundaries


def _dump_deep(value) -> str:
    depth = 0
    while isinstance(value, list) and len(value) == 1:
        value = value[0]
        depth += 1
    if isinstance(value, dict):
        inner = "{" + ",".join(f"{json.dumps(k)}:{_dump_deep(v)}" for k, v in value.items()) + "}"
    elif isinstance(value, list):
        inner = "[" + ",".join(_dump_deep(v) for v in value) + "]"
    else:
        inner = json.dumps(value)
    return "[" * depth + inner + "]" * depth
