"""User text never becomes a control id, on every kind of vocabulary (issue 30).

With default arguments -- ``encode``, ``encode(disallowed_special=())``,
``encode_ordinary``, batches, flat batches, arrays, sampling -- no text gives
a control id, neither because a normalizer folds it into a control token's
string (NFKC takes ``＜/ｓ＞`` to ``</s>``) nor because the model holds the
control token as a piece, a merge result or a word. Control ids, per format:

* tiktoken ``.tiktoken`` and Mistral ``tekken.json``: the Encoding's specials;
* GGUF: CONTROL and UNKNOWN tokens, as llama.cpp types them (it makes
  end-of-generation texts such as ``</s>`` CONTROL whatever the file says);
* SentencePiece ``.model``: CONTROL and UNKNOWN pieces;
* ``tokenizer.json``: added tokens with ``"special": true``.

The unknown id a model gives for a character or word it has no piece for is
its legitimate output, not injection: from a model that cuts characters
(Unigram, BPE) it may occur at most as often as the text's characters (each
with its combining marks), encoded one at a time, give it -- the text
``<unk>`` matched as the unknown piece is injection; a word model (WordPiece,
WordLevel) gives it for any word it cannot cut, so there it is allowed.

Hostile texts are each control string as it is, in full-width and other
compatibility forms, cut by characters normalizers remove (zero-width
characters, soft hyphen, combining marks that accent stripping drops), with
spaces as NBSP, in case variants, and (hypothesis) spliced together from
pieces of control strings and such characters. ``allowed_special`` still
opts in, and :class:`fasttok.hf.Tokenizer` keeps tokenizers' answers.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.resources
import json
import random
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasttok
from conftest import DATA, DATA_MISSING, MISSING_DATA_REASON
from fasttok.added_tokens.partition import PARSED_ONLY
from fasttok.errors import FasttokError
from fasttok.formats.gguf import token_attributes
from fasttok.loaders.gguf_writer import PRE_FOR_PATTERN, gguf_bytes
from fasttok.vocab import TokenType, Vocabulary

pytestmark = pytest.mark.skipif(DATA_MISSING, reason=MISSING_DATA_REASON)

VOCAB = DATA / "vocab"

# characters normalizers remove, or that vanish once accents are stripped
VANISHING = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u034f", "\u0301",
             "\ufe0f")
SPACES = ("\u00a0", "\u3000", "\u2002")


def _compatibility_form(c: str) -> str:
    # a character NFKC folds to c: mathematical bold for letters and digits,
    # a small or vertical form for punctuation, else the full-width form
    if "a" <= c <= "z":
        return chr(0x1D41A + ord(c) - ord("a"))
    if "A" <= c <= "Z":
        return chr(0x1D400 + ord(c) - ord("A"))
    if "0" <= c <= "9":
        return chr(0x1D7CE + ord(c) - ord("0"))
    small = {"<": "\ufe64", ">": "\ufe65", "_": "\ufe4f", "[": "\ufe47", "]": "\ufe48",
             "(": "\ufe59", ")": "\ufe5a", "-": "\ufe63", "|": "\uffe8"}
    if small.get(c) and unicodedata.normalize("NFKC", small[c]) == c:
        return small[c]
    return _full_width(c)


def _full_width(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def hostile_forms(special: str) -> list:
    """Spellings of ``special`` that a normalizer may take back to it."""
    forms = [special, _full_width(special), "".join(map(_compatibility_form, special)),
             special.upper(), special.lower(), special.swapcase(),
             special.replace("K", "\u212a"), unicodedata.normalize("NFD", special),
             special.replace("\u2581", " "), special.replace("\u2581", ""),
             _full_width(special[: len(special) // 2]) + special[len(special) // 2:]]
    forms += [mark.join(special) for mark in VANISHING]
    forms += [special.replace(" ", space) for space in SPACES if " " in special]
    return list(dict.fromkeys(f for f in forms if f))


STRINGS = 12


@dataclasses.dataclass(eq=False)
class Case:
    """One vocabulary: its Encoding, control ids, unknown ids and control
    strings; ``words``: whether its model gives the unknown id for words."""

    enc: fasttok.Encoding
    control: frozenset
    unknown: frozenset
    strings: tuple
    words: bool = False

    def injected(self, ids: list, text: str) -> list:
        """The control ids of ``ids`` that ``text`` had no business giving."""
        bad = [i for i in ids if i in self.control and i not in self.unknown]
        unknowns = sum(i in self.unknown for i in ids)
        if unknowns and not self.words and unknowns > self._unknown_bound(text):
            bad.append(f"{unknowns} unknown ids where its characters give fewer")
        return bad

    def _unknown_bound(self, text: str) -> int:
        clusters: list = []
        for c in text:
            if clusters and unicodedata.combining(c):
                clusters[-1] += c
            else:
                clusters.append(c)
        return sum(map(self._unknowns_alone, clusters))

    @functools.lru_cache(maxsize=None)
    def _unknowns_alone(self, cluster: str) -> int:
        return sum(i in self.unknown for i in self.enc.encode(cluster, disallowed_special=()))

    def texts(self) -> list:
        """Every hostile form of the shortest control strings (at most
        ``STRINGS`` of them: T5's 100 ``<extra_id_N>`` are alike), alone and
        in words."""
        out = []
        for special in sorted(self.strings, key=lambda s: (len(s), s))[:STRINGS]:
            for form in hostile_forms(special):
                out += [form, f"x {form} y", f"x{form}y"]
        return out


def _typed_case(enc: fasttok.Encoding) -> Case:
    # GGUF and .model: CONTROL and UNKNOWN by the file's types, with the
    # Encoding's specials and (GGUF) the types as llama.cpp amends them
    v = enc.vocabulary
    types = v.token_types
    unknown = {i for i, t in enumerate(types) if t == TokenType.UNKNOWN}
    if v.unk_id is not None:
        unknown.add(v.unk_id)
    control = {i for i, t in enumerate(types) if t in (TokenType.CONTROL, TokenType.UNKNOWN)}
    control |= {enc.encode_single_token(s) for s in enc.special_tokens_set}
    if "tokenizer.ggml.model" in v.metadata:
        control |= {i for i, a in token_attributes(v).items() if a & PARSED_ONLY}
    strings = set(enc.special_tokens_set)
    strings |= {v.tokens[i].decode("utf-8") for i in control if v.tokens[i]}
    return Case(enc, frozenset(control), frozenset(unknown), tuple(sorted(strings)),
                words=v.model == "wordpiece")


def _special_case(enc: fasttok.Encoding, strings=None) -> Case:
    # tiktoken and tekken: the specials, and no unknown id
    control = frozenset(enc.encode_single_token(s) for s in enc.special_tokens_set)
    return Case(enc, control, frozenset(), tuple(sorted(strings or enc.special_tokens_set)))


def _json_case(path) -> Case:
    doc = json.loads(open(path, encoding="utf-8").read())
    specials = [t for t in doc["added_tokens"] if t["special"]]
    model = doc["model"]
    unknown = set()
    if model.get("unk_id") is not None:
        unknown.add(model["unk_id"])
    vocab = model["vocab"] if isinstance(model["vocab"], dict) else {}
    if model.get("unk_token") in vocab:
        unknown.add(vocab[model["unk_token"]])
    return Case(fasttok.load(str(path)), frozenset(t["id"] for t in specials),
                frozenset(unknown), tuple(t["content"] for t in specials),
                words=model["type"] in ("WordPiece", "WordLevel"))


# ------------------------------------------------------------ small files whose model holds a control token

def _byte_level_alphabet() -> list:
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    rest = [b for b in range(256) if b not in printable]
    return [chr(b) for b in printable] + [chr(256 + k) for k in range(len(rest))]


def _added(token_id: int, content: str, **flags) -> dict:
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": False, "special": True, **flags}


def _byte_level_doc(ignore_merges: bool = False, **flags) -> dict:
    # byte-level BPE whose merges make its added "bos" (one pre-tokenizer
    # piece, where "<unk>" would be three) from "bo" and "s"; with
    # ignore_merges a word spelled "bos" is looked up whole
    vocab = {c: i for i, c in enumerate(_byte_level_alphabet())}
    merges = []
    for left, right in (("b", "o"), ("bo", "s")):
        vocab[left + right] = len(vocab)
        merges.append([left, right])
    return {"version": "1.0", "added_tokens": [_added(vocab["bos"], "bos", **flags)],
            "normalizer": {"type": "NFKC"},
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                              "trim_offsets": True, "use_regex": True},
            "post_processor": None,
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                        "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None,
                      "continuing_subword_prefix": None, "end_of_word_suffix": None,
                      "fuse_unk": False, "byte_fallback": False, "ignore_merges": ignore_merges,
                      "vocab": vocab, "merges": merges}}


def _word_doc(kind: str) -> dict:
    # WordPiece / WordLevel split at whitespace only, so "[CLS]" is one word
    words = ["[UNK]", "[CLS]", "<s>", *"abcdefghijklmnopqrstuvwxyz<>[]/|_", "x", "y"]
    vocab = {w: i for i, w in enumerate(dict.fromkeys(words))}
    model = {"type": kind, "vocab": vocab, "unk_token": "[UNK]"}
    if kind == "WordPiece":
        vocab.update({f"##{c}": len(vocab) + k for k, c in enumerate("abcdefghijklmnopqrstuvwxyz<>[]/|_")})
        model.update(continuing_subword_prefix="##", max_input_chars_per_word=100)
    return {"version": "1.0", "added_tokens": [_added(1, "[CLS]"), _added(2, "<s>")],
            "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFKC"},
                                                               {"type": "Lowercase"}]},
            "pre_tokenizer": {"type": "WhitespaceSplit"}, "model": model}


def _unigram_doc() -> dict:
    # a Unigram with its control pieces scored best, under NFKC and Lowercase
    pieces = [["<unk>", 0.0], ["<s>", 0.0], ["</s>", 0.0], ["<mask>", 0.0]]
    pieces += [[c, -5.0] for c in "abcdefghijklmnopqrstuvwxyz<>/_▁"]
    return {"version": "1.0",
            "added_tokens": [_added(0, "<unk>"), _added(1, "<s>"), _added(2, "</s>"),
                             _added(3, "<mask>", normalized=True)],
            "normalizer": {"type": "Sequence", "normalizers": [
                {"type": "NFKC"}, {"type": "Lowercase"}, {"type": "StripAccents"}]},
            "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always",
                              "split": True},
            "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always",
                        "split": True},
            "model": {"type": "Unigram", "unk_id": 0, "vocab": pieces, "byte_fallback": False}}


SYNTHETIC = {
    "byte_level_merge_json": _byte_level_doc,
    "byte_level_merge_pipeline_json": functools.partial(_byte_level_doc, lstrip=True),
    "byte_level_whole_word_pipeline_json": functools.partial(_byte_level_doc, True, lstrip=True),
    "wordpiece_word_json": functools.partial(_word_doc, "WordPiece"),
    "wordlevel_word_json": functools.partial(_word_doc, "WordLevel"),
    "unigram_piece_json": _unigram_doc,
}


def _gguf_merge_case(folder) -> Case:
    # a GGUF gpt2 vocabulary whose merges make its CONTROL token "hello"
    ranks = {bytes([i]): i for i in range(256)}
    merges = []
    for left, right in ((b"h", b"e"), (b"he", b"l"), (b"hel", b"l")):
        ranks[left + right] = len(ranks)
        merges.append((left, right))
    gpt2 = next(p for p, pre in PRE_FOR_PATTERN.items() if pre == "gpt-2")
    vocab = Vocabulary.from_ranks("merges_into_control", ranks, pat_str=gpt2,
                                  special_tokens={"hello": len(ranks)})
    path = folder / "merges_into_control.gguf"
    path.write_bytes(gguf_bytes(vocab.replace(merges=(*merges, (b"hell", b"o")))))
    return _typed_case(fasttok.load(str(path)))


def _gguf_llama_case(folder) -> Case:
    # a GGUF llama (SentencePiece BPE) vocabulary whose CONTROL piece
    # "hello" is the best merge of its characters, as llama.cpp merges
    from fuzzing import ARR, F32, I32, STR, U32, gguf_serialize

    pieces = [("<unk>", TokenType.UNKNOWN, 0.0), ("<s>", TokenType.CONTROL, 0.0),
              ("</s>", TokenType.CONTROL, 0.0)]
    pieces += [(f"<0x{b:02X}>", TokenType.BYTE, 0.0) for b in range(256)]
    pieces += [(p, TokenType.NORMAL, -2.0) for p in ("\u2581", *"helox")]
    pieces += [("he", TokenType.NORMAL, -3.0), ("hel", TokenType.NORMAL, -4.0),
               ("hell", TokenType.NORMAL, -5.0), ("hello", TokenType.CONTROL, -6.0)]
    kvs = [["general.architecture", STR, "llama"], ["tokenizer.ggml.model", STR, "llama"],
           ["tokenizer.ggml.tokens", ARR, (STR, [p for p, _, _ in pieces])],
           ["tokenizer.ggml.token_type", ARR, (I32, [t for _, t, _ in pieces])],
           ["tokenizer.ggml.scores", ARR, (F32, [s for _, _, s in pieces])],
           ["tokenizer.ggml.unknown_token_id", U32, 0], ["tokenizer.ggml.bos_token_id", U32, 1],
           ["tokenizer.ggml.eos_token_id", U32, 2]]
    path = folder / "llama_merges_into_control.gguf"
    path.write_bytes(gguf_serialize([3, 0, kvs])[0])
    return _typed_case(fasttok.load(str(path)))


def _gguf_t5_case(folder) -> Case:
    # a GGUF t5 (Unigram) vocabulary whose "</s>" the file types NORMAL and
    # llama.cpp makes CONTROL (an end-of-generation text), best scored
    from fuzzing import gguf_serialize, gguf_spm_seed

    doc = gguf_spm_seed("t5")
    fields = {kv[0]: kv[2] for kv in doc[2]}
    tokens = fields["tokenizer.ggml.tokens"][1]
    eos = tokens.index("</s>")
    fields["tokenizer.ggml.token_type"][1][eos] = TokenType.NORMAL
    fields["tokenizer.ggml.scores"][1][eos] = 0.0
    path = folder / "t5_normal_eos.gguf"
    path.write_bytes(gguf_serialize(doc)[0])
    return _typed_case(fasttok.load(str(path)))


def _tekken_case() -> Case:
    package = pytest.importorskip("mistral_common")
    data = importlib.resources.files(package) / "data"
    path = sorted(str(data / p.name) for p in data.iterdir()
                  if p.name.startswith("tekken_") and p.name.endswith(".json"))[0]
    enc = fasttok.load(path)
    named = [s for s in enc.special_tokens_set if not s.startswith("<SPECIAL_")]
    return _special_case(enc, named)


def _file(relative: str):
    path = VOCAB / relative
    if not path.exists():
        pytest.skip(f"{path} not found")
    return path


FILES = {
    "tiktoken_cl100k": lambda _: _special_case(fasttok.get_encoding("cl100k_base")),
    "tekken": lambda _: _tekken_case(),
    "gguf_llama_spm": lambda _: _typed_case(fasttok.load(str(_file("gguf/ggml-vocab-llama-spm.gguf")))),
    "gguf_gpt2_merges_into_control": _gguf_merge_case,
    "gguf_llama_merges_into_control": _gguf_llama_case,
    "gguf_t5_normal_typed_eos": _gguf_t5_case,
    "model_unigram": lambda _: _typed_case(fasttok.load(str(_file("sentencepiece/botchan_unigram_5000.model")))),
    "model_bpe": lambda _: _typed_case(fasttok.load(str(_file("sentencepiece/botchan_en_bpe_1000.model")))),
    "json_t5_unigram": lambda _: _json_case(_file("hf/unigram/botchan_unigram_5000.v5.24.0.T5Tokenizer.json")),
}
SLOW_FILES = {
    "gguf_bert_bge": "gguf/ggml-vocab-bert-bge.gguf",
    "gguf_t5_nomic_bert_moe": "gguf/ggml-vocab-nomic-bert-moe.gguf",
    "gguf_qwen2": "gguf/ggml-vocab-qwen2.gguf",
    "model_user_defined": "sentencepiece/botchan_unigram_2000_userdef_cf.model",
    "json_albert_unigram": "hf/unigram/botchan_unigram_5000.v4.57.6.AlbertTokenizer.json",
    "json_xlnet_unigram": "hf/unigram/kyoto_ja_unigram_8000.v4.57.6.XLNetTokenizer.json",
    "json_minilm_wordpiece": "hf/all-MiniLM-L6-v2/tokenizer.json",
    "json_llama2_bpe": "hf/llama2/tokenizer.json",
    "json_llama3_byte_level": "hf/llama3/tokenizer.json",
    "json_gemma3": "hf/gemma3/tokenizer.json",
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("injection")


@functools.lru_cache(maxsize=None)
def _synthetic_case(name: str, folder) -> Case:
    path = folder / f"{name}.json"
    path.write_text(json.dumps(SYNTHETIC[name]()), encoding="utf-8")
    return _json_case(path)


_CASES: dict = {}


def _case(name: str, folder) -> Case:
    if name not in _CASES:
        if name in SYNTHETIC:
            _CASES[name] = _synthetic_case(name, folder)
        elif name in FILES:
            _CASES[name] = FILES[name](folder)
        else:
            relative = SLOW_FILES[name]
            path = _file(relative)
            _CASES[name] = _json_case(path) if relative.endswith(".json") \
                else _typed_case(fasttok.load(str(path)))
    return _CASES[name]


ALL = [*SYNTHETIC, *FILES, *(pytest.param(n, marks=pytest.mark.slow) for n in SLOW_FILES)]


@pytest.fixture(params=ALL)
def case(request, folder) -> Case:
    return _case(request.param, folder)


def _assert_clean(case: Case, texts: list, id_lists: list, how: str) -> None:
    for text, ids in zip(texts, id_lists):
        bad = case.injected(list(ids), text)
        assert not bad, f"{how}({text!r}) gave control ids {bad}: {list(ids)}"


# ------------------------------------------------------------ the promise, entry by entry

def test_no_control_id_when_specials_are_plain_text(case):
    texts = case.texts()
    _assert_clean(case, texts, [case.enc.encode(t, disallowed_special=()) for t in texts],
                  "encode(disallowed_special=())")


def test_no_control_id_from_encode_ordinary(case):
    texts = case.texts()
    _assert_clean(case, texts, [case.enc.encode_ordinary(t) for t in texts], "encode_ordinary")


def test_default_encode_refuses_or_gives_no_control_id(case):
    # a control string spelled as it is raises (tiktoken's rule); every
    # other spelling encodes to ordinary ids
    for text in case.texts():
        try:
            ids = case.enc.encode(text)
        except ValueError:
            assert any(s in text for s in case.enc.special_tokens_set), text
            continue
        _assert_clean(case, [text], [ids], "encode")


def test_no_control_id_from_batches_and_arrays(case):
    texts = case.texts()
    enc = case.enc
    _assert_clean(case, texts, enc.encode_ordinary_batch(texts, num_threads=2),
                  "encode_ordinary_batch")
    _assert_clean(case, texts, enc.encode_batch(texts, num_threads=1, disallowed_special=()),
                  "encode_batch")
    flat, offsets = enc.encode_batch(texts, disallowed_special=(), flat=True)
    _assert_clean(case, texts, [flat[a:b] for a, b in zip(offsets, offsets[1:])],
                  "flat encode_batch")
    _assert_clean(case, texts, [enc.encode_to_array(t, disallowed_special=()) for t in texts],
                  "encode_to_array")
    assert [enc.count(t, disallowed_special=()) for t in texts] == \
        [len(enc.encode(t, disallowed_special=())) for t in texts]


def test_no_control_id_from_sampling(case):
    texts = case.texts()
    try:
        case.enc.encode("x", sample=True, seed=0)
    except FasttokError:
        pytest.skip("this model does not sample")
    rng = random.Random(30)
    _assert_clean(case, texts, [case.enc.encode(t, disallowed_special=(), sample=True, alpha=0.5,
                                                seed=rng.randrange(1 << 30)) for t in texts],
                  "encode(sample=True)")


def test_allowed_special_still_gives_the_control_id(case):
    allowed = [s for s in case.strings if s in case.enc.special_tokens_set]
    if not allowed:
        pytest.skip("no control string of this vocabulary is an allowed_special")
    special = allowed[0]
    assert case.enc.encode(f"x {special}", allowed_special="all")[-1] == \
        case.enc.encode_single_token(special)


# ------------------------------------------------------------ hypothesis

FRAGILE = VANISHING + SPACES + ("\u212a", "\ufe64", "\ufe65", "\uff1c", "\uff1e", "\uff0f",
                                "\u2581", " ", "x")


@st.composite
def spliced(draw, strings: tuple) -> str:
    # pieces of control strings (as they are, full-width or upper case) and
    # characters normalizers remove or fold, one after another, some words
    # apart (a word model matches whole words)
    parts = []
    for _ in range(draw(st.integers(1, 8))):
        special = draw(st.sampled_from(strings))
        i = draw(st.integers(0, len(special)))
        j = draw(st.integers(i, len(special)))
        piece = special[i:j]
        piece = draw(st.sampled_from([piece, _full_width(piece), piece.upper(),
                                      "".join(map(_compatibility_form, piece))]))
        parts.append(piece)
        parts.append(draw(st.sampled_from(["", " ", *FRAGILE])))
    return "".join(parts)


@pytest.mark.parametrize("name", ["json_t5_unigram", "unigram_piece_json",
                                  "byte_level_merge_pipeline_json", "wordlevel_word_json"])
def test_spliced_control_strings_give_no_control_id(name, folder):
    case = _case(name, folder)

    @settings(max_examples=40, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(spliced(case.strings))
    def check(text):
        _assert_clean(case, [text], [case.enc.encode(text, disallowed_special=())],
                      "encode(disallowed_special=())")

    check()


# ------------------------------------------------------------ the drop-in keeps tokenizers' answers

def test_hf_tokenizer_keeps_tokenizers_control_ids():
    tokenizers = pytest.importorskip("tokenizers")
    from fasttok.hf import Tokenizer

    path = str(_file("hf/unigram/botchan_unigram_5000.v5.24.0.T5Tokenizer.json"))
    text = "x \uff1c/\uff53\uff1e \uff1c\uff53\uff1e"
    theirs = tokenizers.Tokenizer.from_file(path).encode(text, add_special_tokens=False).ids
    assert Tokenizer.from_file(path).encode(text, add_special_tokens=False).ids == theirs
    assert 1 in theirs       # tokenizers makes <s> of the full-width text; the Encoding does not
    assert 1 not in fasttok.load(path).encode(text, disallowed_special=())
