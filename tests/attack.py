"""Hostile inputs into every public method of every vocabulary kind, each case in a child process.

Where :mod:`fuzzing` attacks the vocabulary *files*, this attacks the
*calls*: the vocabularies are the real ones (tiktoken's encodings by name,
every GGUF, ``.model`` and ``tokenizer.json`` under ``$FASTTOK_DATA``, the
``tekken.json`` files mistral_common ships, and each ``tokenizer.json``
again through ``fasttok.hf.Tokenizer``), and the inputs are hostile: lone
surrogates, NUL, 1 MiB runs of one character, every special string and its
full-width, compatibility and case variants, combining-mark storms, invalid
UTF-8 where bytes are taken, ids out of range, negative, past 2**32 and
2**64, bools, floats, numpy scalars and arrays, huge lists, wrong types and
``None``; absurd parameters (``num_threads``, ``allowed_special``, NaN and
infinite ``alpha``, huge ``nbest_size``, truncation and padding, a stride
past ``max_length``); and one Encoding used from several threads at once.

Case ``N`` is target ``N % len(targets())`` and, on it, attack number
``(N // len(targets()) + N) % len(attacks)`` of the target's API (so that any
run of ``4 * len(targets())`` consecutive ids meets every attack), its
values drawn from ``random.Random(N)``. Cases run in worker processes of the
fuzz runner (:func:`fuzzing.run_cases`: address-space limit, CPU and stall
timers from the case's start, peak RSS).

The contract a case checks (from the README's *Use* and ``fasttok.hf``
sections): every call returns, or raises

* ``fasttok.FasttokError`` (any subclass): fasttok's own refusals;
* ``KeyError``: an id or token string the vocabulary does not have,
  however large the id;
* ``TypeError``: an argument of the wrong type (``fasttok.hf`` also refuses
  text with lone surrogates so, as ``tokenizers`` does);
* a plain ``ValueError`` (not a subclass such as ``UnicodeEncodeError``):
  Python's and the drop-in's own value checks;
* for ``fasttok.hf`` only, ``OverflowError`` where ``tokenizers`` raises it
  (an int that does not fit its unsigned machine integer);
* from ``decode_with_offsets`` only, ``UnicodeDecodeError`` for ids that
  are no UTF-8 (it decodes strictly, as tiktoken's does);
* from ``encode_with_unstable`` only, ``UnicodeEncodeError`` for text with a
  lone surrogate (its documented tiktoken behaviour: tiktoken's core refuses
  such text rather than repairing it).

Anything else is a finding (``exception``: a stray ``IndexError``,
``AttributeError``, ``UnicodeEncodeError``, ``OverflowError`` from
``fasttok.Encoding``, ``SystemError``...; ``memory_error``), and so are a
crash, a hang, a case over :data:`LIMITS` (``slow``; ``rss``, whose bound
scales with the case's largest call: its inputs and, at
1/:data:`ANSWER_SHARE`, its answer), and a broken
invariant (``invariant``): ids outside ``0..max_token_value``; with default
arguments, an id of a special or control token (the Encoding's special
tokens, SentencePiece and GGUF control pieces; the unknown id is the
model's own answer for unknown text and is allowed); ``count`` unequal to
``len(encode)``; ``decode(encode(t)) != t`` where the format is lossless
(tiktoken's encodings and tekken; text with lone surrogates is compared
after tiktoken's repair); threaded results unequal to serial ones.

Reproduce one case in-process (prints the calls and the traceback)::

    python tests/attack.py case 1234

Run a range: ``python tests/attack.py run 0:1000 [WORKERS]``.
"""

from __future__ import annotations

import array
import copy
import dataclasses
import importlib.util
import math
import os
import pickle
import random
import sys
import threading
import traceback
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import fuzzing
from fuzzing import Limits, Suite, run_cases, serve

# A 1 MiB run through the Python pipeline of fasttok.hf takes a few CPU
# seconds and a few hundred bytes of RSS per token; the bounds flag what
# grows faster than that. A shared vocabulary is loaded before the case's
# clock starts (see prepare), so it counts in neither.
LIMITS = Limits(cpu_seconds=10.0, rss_factor=400, rss_allowance=64 << 20,
                hang_seconds=30.0, stall_seconds=20.0)
# An answer is held too: the RSS bound also grows by rss_factor / ANSWER_SHARE
# per unit of its _size, 50 bytes an id (a pointer and an int object are ~40).
# encode_with_unstable of 2,000 spaces in p50k answers 33,145 completions of
# 4.2M ids, 172 MB of Python lists (case 8064): the content, not a leak.
ANSWER_SHARE = 64
# Address space a worker may add after its imports: the largest vocabulary
# (Gemma 3's tokenizer.json) takes some 300 MB of it.
ADDRESS_SPACE_HEADROOM = 2 << 30
MIB = 1 << 20

TIKTOKEN_NAMES = ("gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base",
                  "o200k_harmony")
PICKLED_VOCAB = 60_000
# SentencePiece and GGUF token types: CONTROL pieces never come from text.
CONTROL = 3


@dataclasses.dataclass(frozen=True)
class Target:
    """One vocabulary under attack: its kind and where it comes from."""

    kind: str  # tiktoken, gguf, model, tokenizer.json, tekken, hf.Tokenizer
    name: str  # an encoding name or a path

    @property
    def api(self) -> str:
        return "hf" if self.kind == "hf.Tokenizer" else "encoding"


@lru_cache(maxsize=None)
def targets() -> tuple:
    """Every vocabulary attacked, in a fixed order (the files that are there)."""
    out = [Target("tiktoken", name) for name in TIKTOKEN_NAMES]
    data = fuzzing._data_dir()
    if data is not None:
        vocab = data / "vocab"
        out += [Target("gguf", str(p)) for p in sorted(vocab.glob("gguf/*.gguf"))]
        out += [Target("model", str(p)) for p in sorted(vocab.glob("sentencepiece/*.model"))]
        jsons = sorted(vocab.glob("hf/*/tokenizer.json")) + sorted(vocab.glob("hf/unigram/*.json"))
        out += [Target("tokenizer.json", str(p)) for p in jsons]
        out += [Target("hf.Tokenizer", str(p)) for p in jsons]
    spec = importlib.util.find_spec("mistral_common")
    if spec is not None and spec.submodule_search_locations:
        folder = Path(list(spec.submodule_search_locations)[0]) / "data"
        out += [Target("tekken", str(p)) for p in sorted(folder.glob("tekken*.json"))]
    return tuple(out)


@lru_cache(maxsize=1)
def _load(target: Target) -> Any:
    import fasttok
    import fasttok.hf

    if target.kind == "tiktoken":
        return fasttok.get_encoding(target.name)
    if target.kind == "hf.Tokenizer":
        return fasttok.hf.Tokenizer.from_file(target.name)
    return fasttok.load(target.name)


@lru_cache(maxsize=1)
def _warm_up(target: Target, obj: Any) -> None:
    # Tables made on first use (the added-token regex, the decoder's) belong
    # to the vocabulary, not to the first case's RSS.
    if target.api == "hf":
        obj.decode(obj.encode("a <s> b", "c").ids)
        return
    control_ids(obj)  # and the Vocabulary record it reads, made on first use
    some = "a <s> b " + " ".join(sorted(obj.special_tokens_set)[:50])
    for ids in (obj.encode(some, allowed_special="all"), obj.encode_ordinary(some)):
        obj.decode(ids)
    for text in FIXED_TEXTS:
        obj.encode(text, disallowed_special=())
    obj.encode_batch([some] * 4, allowed_special="all")
    obj.count(some, disallowed_special=())
    obj.decode_single_token_bytes(0)


def prepare(target: Target) -> Any:
    """The object to attack: the shared loaded vocabulary, or for
    ``fasttok.hf`` a Tokenizer over a copy of its pipeline, so that the
    truncation and padding a case sets stay in that case."""
    obj = _load(target)
    _warm_up(target, obj)
    if target.api == "hf":
        clone = copy.copy(obj)
        clone._pipeline = copy.copy(obj._pipeline)
        return clone
    return obj


# ---------------------------------------------------------------------------
# Hostile values

FULL_WIDTH = {c: chr(ord(c) - 0x21 + 0xFF01) for c in map(chr, range(0x21, 0x7F))}
# Special strings of other vocabularies, tried on every one.
COMMON_SPECIALS = frozenset(("<s>", "</s>", "<unk>", "<pad>", "<|endoftext|>", "[CLS]", "[SEP]",
                             "[MASK]", "[UNK]", "<mask>", "<|im_start|>", "<|begin_of_text|>"))
# Characters NFKC or a normalizer folds into ASCII punctuation of special strings.
COMPAT = {"<": ("\uff1c", "\ufe64", "\u2039", "\u3008"), ">": ("\uff1e", "\ufe65", "\u203a"),
          "|": ("\uff5c", "\u2223", "\u01c0"), "[": ("\uff3b", "\u27e6"), "]": ("\uff3d",),
          "/": ("\uff0f", "\u2215"), "_": ("\uff3f", "\ufe4d"), "s": ("\U0001d42c", "\u0455")}
# Removed or mapped by normalizers: zero-width, soft hyphen, NBSP, BOM, a combining mark.
INVISIBLE = ("\u200b", "\u00ad", "\u00a0", "\ufeff", "\u200d", "\u0301", "\u2060")

FIXED_TEXTS = (
    "", " ", "\x00", "a\x00b\x00", "\ud800", "x\udfffy", "\ud83d\ude00", "\udbff\udfff" * 3,
    "\ufffd\U0010ffff\ufffe\uffff", "\U000e0001\U000f0000", "\u202e\u202dabc\u200f",
    "\r\n\r\n\t\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029", "e" + "\u0301" * 5000,
    "".join(chr(c) for c in range(0x300, 0x370)) * 40, "\u0e01\u0e34\u0e4a" * 500,
    "日本語のテキスト、東京。", "😀👍🏽‍♂️🇺🇸" * 50, "A\u030a\u212b\u00c5", "ﬁﬂ…™①Ⅻ㎏",
    "1234567890" * 300, " " * 4097, "\n" * 3000, "a" * 10000, "ab" * 5000,
    "\u2581" * 2000, "<0x41><0x00><0xZZ>", "'s 're 've'll'd", "    \n   x",
)


def _text_pool(rng: random.Random, specials: list) -> list:
    pieces = list(FIXED_TEXTS[:24]) + specials
    return [rng.choice(pieces) for _ in range(rng.randrange(1, 6))]


def special_variants(rng: random.Random, special: str) -> str:
    """``special`` full-width, compatibility-folded, case-changed or split by an invisible character."""
    how = rng.randrange(5)
    if how == 0:
        return "".join(FULL_WIDTH.get(c, c) for c in special)
    if how == 1:
        return "".join(rng.choice(COMPAT[c]) if c in COMPAT and rng.random() < 0.7 else c
                       for c in special)
    if how == 2:
        return rng.choice((special.upper(), special.lower(), special.swapcase(), special.title()))
    if how == 3:
        i = rng.randrange(len(special) + 1)
        return special[:i] + rng.choice(INVISIBLE) + special[i:]
    return " " + special + rng.choice(("", " ", "\n", special))


def hostile_text(rng: random.Random, specials: list, big: bool) -> str:
    """A hostile text; ``big`` allows the 1 MiB runs."""
    how = rng.randrange(8 if big else 7)
    if how == 0:
        return rng.choice(FIXED_TEXTS)
    if how in (1, 2):
        return "".join(special_variants(rng, rng.choice(specials)) for _ in range(rng.randrange(1, 6)))
    if how == 3:
        return "".join(_text_pool(rng, specials))
    if how == 4:  # a combining-mark storm on a few bases
        return "".join(rng.choice("ae<|[s ") + "".join(chr(rng.randrange(0x300, 0x370))
                                                     for _ in range(rng.randrange(1, 300)))
                       for _ in range(rng.randrange(1, 20)))
    if how == 5:
        return "".join(chr(rng.choice((rng.randrange(0x20, 0x80), rng.randrange(0, 0x110000),
                                       rng.randrange(0xD800, 0xE000), 0)))
                       for _ in range(rng.randrange(1, 400)))
    if how == 6:
        return (rng.choice(specials) * rng.randrange(1, 300))[:rng.randrange(1, 5000)]
    return rng.choice("a \n日😀\u0301<0") * MIB


BYTES = (b"", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf",
         b"a\xffb", b"\x00", b"hello", "日本".encode()[:-1], bytes(range(256)), b"\x80" * 1000)


def hostile_bytes(rng: random.Random, specials: list) -> bytes:
    if specials and rng.random() < 0.3:
        return rng.choice(specials).encode("utf-8") + rng.choice(BYTES)
    return rng.choice(BYTES) + rng.choice(BYTES)


def hostile_id(rng: random.Random, top: int) -> Any:
    """An id: in range, at the edges, past every integer width, or not an int at all."""
    import numpy as np

    choices = (
        lambda: rng.randrange(top + 1), lambda: top, lambda: top + 1, lambda: -1,
        lambda: -2**63, lambda: 2**31, lambda: 2**32 - 1, lambda: 2**32, lambda: 2**63,
        lambda: 2**64 - 1, lambda: 2**64, lambda: 10**100, lambda: rng.choice((True, False)),
        lambda: 1.0, lambda: float("nan"), lambda: "1", lambda: None, lambda: b"\x01",
        lambda: np.int64(rng.randrange(top + 1)), lambda: np.uint64(2**64 - 1),
        lambda: np.int32(-1), lambda: np.uint32(rng.randrange(top + 1)), lambda: np.float64(3.0),
        lambda: np.int8(5), lambda: rng.randrange(-top, 2 * top),
    )
    return rng.choice(choices)()


def hostile_ids(rng: random.Random, top: int) -> Any:
    """A sequence of ids of some container type, hostile or not."""
    import numpy as np

    how = rng.randrange(9)
    ids = [rng.randrange(top + 1) for _ in range(rng.randrange(0, 50))]
    if how == 0:
        return ids + [hostile_id(rng, top)] + ids
    if how == 1:
        return [rng.randrange(top + 1)] * rng.choice((10**4, 10**5, 10**5, 10**6))
    if how == 2:
        # astype wraps what does not fit (int8), as a caller's careless cast would
        return np.array(ids, dtype=np.int64).astype(
            rng.choice((np.int64, np.uint32, np.int32, np.uint64, np.int8)))
    if how == 3:
        return array.array(rng.choice("qIl"), ids)
    if how == 4:
        return tuple(ids)
    if how == 5:
        return iter(ids)
    if how == 6:
        return rng.choice((None, 5, "1 2", b"\x01\x02", [[1, 2]], {1: 2}, 1.5))
    if how == 7:
        return [hostile_id(rng, top) for _ in range(rng.randrange(1, 4))]
    return ids


def hostile_type(rng: random.Random) -> Any:
    """A value of the wrong type where text is expected."""
    import numpy as np

    return rng.choice((None, 1, -1, 2**64, 1.5, float("nan"), b"bytes", bytearray(b"ab"),
                       memoryview(b"ab"), ["list"], ("tu", "ple"), {"a"}, object(),
                       np.int64(3), np.array(["a"]), np.str_("numpy str"), type("S", (str,), {})("sub")))


def hostile_threads(rng: random.Random) -> Any:
    import numpy as np

    return rng.choice((0, -1, 1, 2, 10**9, 2**64, None, 1.5, True, "2", np.int64(3), 64))


def hostile_allowed(rng: random.Random, specials: list) -> Any:
    some = rng.sample(specials, min(len(specials), rng.randrange(0, 4))) if specials else []
    return rng.choice(("all", "none", "", set(), frozenset(some), set(some), list(some),
                       tuple(some), dict.fromkeys(some), {"<|not a special|>"}, None, 1,
                       some[0] if some else "<s>", {1, 2}, b"all", "ALL", ["all"], iter(some)))


def hostile_float(rng: random.Random) -> Any:
    return rng.choice((float("nan"), float("inf"), float("-inf"), -1.0, 0.0, 1.0, 2.0, 1e308,
                       5e-324, -0.0, 10**400, None, "0.1", 0, True))


def hostile_size(rng: random.Random) -> Any:
    return rng.choice((-1, 0, 1, 2, 7, 2**31, 2**63, -2**63, 10**100, None, 1.5, float("nan"),
                       True, "5"))


# ---------------------------------------------------------------------------
# One case


class Finding(AssertionError):
    """A broken invariant."""


class Context:
    """The object under attack, the case's random draws, and the calls made so far."""

    def __init__(self, target: Target, obj: Any, rng: random.Random) -> None:
        self.target, self.obj, self.rng = target, obj, rng
        self.calls: list = []
        self.size = 0  # of the largest call (inputs and answer), which the RSS bound scales with
        # specials: the strings hostile texts are made of, the control pieces' too
        if target.api == "encoding":
            self.top = obj.max_token_value
            tokens = obj.vocabulary.tokens
            controls = [tokens[i].decode("utf-8", "replace") for i in control_ids(obj)
                        if i < len(tokens) and tokens[i] and not obj.vocabulary.ids]
            self.specials = sorted(set(obj.special_tokens_set) | set(controls) | COMMON_SPECIALS)
        else:
            self.top = max(obj.get_vocab_size(True) - 1, 0)
            added = {t.content for t in obj.get_added_tokens_decoder().values()}
            self.specials = sorted(added | COMMON_SPECIALS)

    def text(self, big: bool = False) -> str:
        return hostile_text(self.rng, self.specials, big)

    def call(self, fn: Callable, *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)``, or ``None`` when it raises a documented error."""
        shown = ", ".join([_show(a) for a in args] + [f"{k}={_show(v)}" for k, v in kwargs.items()])
        self.calls.append(f"{getattr(fn, '__qualname__', fn)}({shown})")
        inputs = max([0] + [_size(v) for v in (*args, *kwargs.values())])
        self.size = max(self.size, inputs)
        try:
            answer = fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - sorted into documented or a finding
            if documented(exc, self.target.api):
                return None
            raise
        self.size = max(self.size, inputs + _size(answer) // ANSWER_SHARE)
        return answer

    def call_allowing(self, extra: tuple, fn: Callable, *args: Any, **kwargs: Any) -> Any:
        """:meth:`call`, with the exceptions ``extra`` documented for this call too."""
        try:
            return self.call(fn, *args, **kwargs)
        except extra:
            return None

    def check(self, ok: bool, what: str) -> None:
        if not ok:
            raise Finding(what)


def documented(exc: BaseException, api: str) -> bool:
    """Whether ``exc`` is an error the contract (the module notes) allows."""
    from fasttok.errors import FasttokError

    if isinstance(exc, (FasttokError, KeyError, TypeError)) or type(exc) is ValueError:
        return True
    return api == "hf" and type(exc) is OverflowError


def _size(value: Any) -> int:
    """Bytes ``value`` stands for: 4 a character, 8 an id, a batch's items
    too (whatever its first item is: a batch led by a dict hid its 10^6 ids,
    cases 5811 and 6396), a numpy array's ``nbytes``.

    >>> _size(["ab", [1, 2]]), _size([{1: 2}, [0] * 100]), _size(([1], [[1, 2]] * 100))
    (40, 816, 2424)
    """
    if isinstance(value, str):
        return 4 * len(value)
    if isinstance(value, (bytes, bytearray)):
        return len(value)
    if isinstance(value, (list, tuple)):
        size = 8 * len(value)
        # a batch, a pair or a list of sequences (completions): each item counts
        if value and (len(value) <= 64 or isinstance(value[0], (list, tuple, str, bytes))):
            size += sum(map(_size, value))
        return size
    if isinstance(value, array.array):
        return 8 * len(value)
    nbytes = getattr(value, "nbytes", None)  # numpy arrays
    return nbytes if isinstance(nbytes, int) else 0


def _show(value: Any) -> str:
    text = repr(value)
    if len(text) > 80:
        size = len(value) if hasattr(value, "__len__") else "?"
        return f"{text[:60]}...<{type(value).__name__} of {size}>"
    return text


@lru_cache(maxsize=4)
def control_ids(enc: Any) -> frozenset:
    """Ids no text may give with default arguments: the special tokens
    (of a ``tokenizer.json``, its ``"special": true`` added tokens: the others
    are ordinary pieces) and the control pieces, less the unknown id (the
    model's answer for unknown text)."""
    from fasttok.formats import hf

    vocab = enc.vocabulary
    added = "added_tokens" in vocab.metadata
    ids = set(hf.control_ids(vocab) if added else enc._special_ids)
    if vocab.token_types:
        numbered = vocab.ids or range(len(vocab.tokens))
        ids.update(i for i, kind in zip(numbered, vocab.token_types) if kind == CONTROL)
    ids.discard(vocab.unk_id)
    return frozenset(ids)


def lossless(target: Target) -> bool:
    return target.kind in ("tiktoken", "tekken")


def repaired(text: str) -> str:
    """The text tiktoken encodes for ``text``: a surrogate pair becomes its
    character, a lone surrogate U+FFFD (through UTF-16, as tiktoken does)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _check_ids(ctx: Context, ids: Any, text: Any, default: bool) -> None:
    if ids is None:
        return
    ctx.check(isinstance(ids, list), f"encode gave a {type(ids).__name__}, not a list")
    bad = [i for i in ids if type(i) is not int or not 0 <= i <= ctx.top]
    ctx.check(not bad, f"ids outside 0..{ctx.top}: {bad[:5]}")
    if default:
        leaked = sorted(set(ids) & control_ids(ctx.obj))
        ctx.check(not leaked, f"special/control ids {leaked[:5]} from plain text {_show(text)} "
                              f"with default arguments")


# Attacks on fasttok.Encoding: each makes a few calls with drawn values.

def a_encode_text(ctx: Context) -> None:
    enc, text = ctx.obj, ctx.text(big=ctx.rng.random() < 0.2)
    _check_ids(ctx, ctx.call(enc.encode_ordinary, text), text, True)
    ids = ctx.call(enc.encode, text, disallowed_special=())
    _check_ids(ctx, ids, text, True)
    _check_ids(ctx, ctx.call(enc.encode, text), text, True)
    if ids is not None and lossless(ctx.target) and len(text) < MIB:
        back = ctx.call(enc.decode, ids)
        ctx.check(back == repaired(text), f"decode(encode({_show(text)})) gave {_show(back)}")


def a_encode_big(ctx: Context) -> None:
    enc, text = ctx.obj, ctx.rng.choice("a \n日😀\u0301<") * MIB
    ids = ctx.call(enc.encode_ordinary, text)
    _check_ids(ctx, ids, text, True)
    n = ctx.call(enc.count, text, disallowed_special=())
    if ids is not None and n is not None:
        ctx.check(n == len(ids), f"count {n} != len(encode_ordinary) {len(ids)}")


def a_encode_specials(ctx: Context) -> None:
    enc = ctx.obj
    text = "".join(special_variants(ctx.rng, s) for s in ctx.rng.sample(
        ctx.specials, min(len(ctx.specials), 8))) if ctx.specials else ctx.text()
    for kwargs in ({}, {"disallowed_special": ()}, {"allowed_special": set()}):
        _check_ids(ctx, ctx.call(enc.encode, text, **kwargs), text, True)
    _check_ids(ctx, ctx.call(enc.encode_ordinary, text), text, True)
    _check_ids(ctx, ctx.call(enc.encode, text, allowed_special="all"), text, False)


def a_encode_params(ctx: Context) -> None:
    enc, r = ctx.obj, ctx.rng
    text = ctx.text()
    ids = ctx.call(enc.encode, text, allowed_special=hostile_allowed(r, ctx.specials),
                   disallowed_special=r.choice(("all", (), hostile_allowed(r, ctx.specials))),
                   add_special_tokens=r.choice((True, False, None, "yes", 1)))
    _check_ids(ctx, ids, text, False)


def a_count(ctx: Context) -> None:
    enc, text = ctx.obj, ctx.text()
    n = ctx.call(enc.count, text, disallowed_special=())
    ids = ctx.call(enc.encode, text, disallowed_special=())
    if n is not None and ids is not None:
        ctx.check(n == len(ids), f"count {n} != len(encode) {len(ids)}")
    ctx.call(enc.count, text, allowed_special=hostile_allowed(ctx.rng, ctx.specials))


def a_wrong_type_text(ctx: Context) -> None:
    enc, value = ctx.obj, hostile_type(ctx.rng)
    for fn in (enc.encode, enc.encode_ordinary, enc.count, enc.encode_to_array,
               enc.encode_as_pieces):
        result = ctx.call(fn, value)
        if isinstance(result, list) and result and isinstance(result[0], int):
            _check_ids(ctx, result, value, True)


def a_batch(ctx: Context) -> None:
    enc, r = ctx.obj, ctx.rng
    texts = [ctx.text() for _ in range(r.randrange(0, 12))]
    if r.random() < 0.3:
        texts.insert(r.randrange(len(texts) + 1), hostile_type(r))
    if r.random() < 0.2:
        texts = r.choice((tuple(texts), iter(texts), "a string, not a list", None, {"a": 1}))
    threads = hostile_threads(r)
    serial = ctx.call(enc.encode_ordinary_batch, texts, num_threads=1) \
        if isinstance(texts, list) else None
    for fn in (enc.encode_batch, enc.encode_ordinary_batch, enc.count_batch):
        got = ctx.call(fn, texts, num_threads=threads)
        if got is not None and serial is not None and fn is enc.encode_ordinary_batch:
            ctx.check(got == serial, f"encode_ordinary_batch(num_threads={threads!r}) differs "
                                     f"from num_threads=1")
    ctx.call(enc.encode_batch, texts, num_threads=threads,
             allowed_special=hostile_allowed(r, ctx.specials))


def a_to_array(ctx: Context) -> None:
    enc, text = ctx.obj, ctx.text(big=ctx.rng.random() < 0.1)
    got = ctx.call(enc.encode_to_array, text, disallowed_special=())
    ids = ctx.call(enc.encode, text, disallowed_special=())
    if got is not None and ids is not None:
        ctx.check(list(got) == ids, "encode_to_array differs from encode")
    got = ctx.call(enc.encode_to_numpy, text, allowed_special=hostile_allowed(ctx.rng, ctx.specials))
    if got is not None:
        ctx.check(all(0 <= int(i) <= ctx.top for i in got), "encode_to_numpy: id out of range")


def a_single_token(ctx: Context) -> None:
    enc, r = ctx.obj, ctx.rng
    for value in (hostile_bytes(r, ctx.specials), ctx.text(), r.choice(ctx.specials or ["<s>"]),
                  special_variants(r, r.choice(ctx.specials or ["<s>"])), hostile_type(r)):
        token = ctx.call(enc.encode_single_token, value)
        if token is not None:
            ctx.check(type(token) is int and 0 <= token <= ctx.top, f"token {token!r}")
        ctx.call(enc.encode_single_piece, value)


def a_unstable(ctx: Context) -> None:
    enc, text = ctx.obj, ctx.text()
    ctx.call_allowing((UnicodeEncodeError,), enc.encode_with_unstable, text[:2000],
             allowed_special=hostile_allowed(ctx.rng, ctx.specials),
             disallowed_special=ctx.rng.choice(("all", ())))
    ctx.call(enc.encode_as_pieces, text)


def a_decode(ctx: Context) -> None:
    enc, r = ctx.obj, ctx.rng
    ids = hostile_ids(r, ctx.top)
    if isinstance(ids, type(iter([]))):
        ids = list(ids)
    for fn in (enc.decode, enc.decode_bytes, enc.decode_tokens_bytes):
        ctx.call(fn, ids)
    # as tiktoken's, it decodes strictly: ids that are no UTF-8 raise UnicodeDecodeError
    ctx.call_allowing((UnicodeDecodeError,), enc.decode_with_offsets, ids)
    ctx.call(enc.decode, ids, errors=r.choice(("replace", "ignore", "surrogateescape",
                                               "backslashreplace")))


def a_decode_single(ctx: Context) -> None:
    enc, r = ctx.obj, ctx.rng
    for _ in range(20):
        token = hostile_id(r, ctx.top)
        got = ctx.call(enc.decode_single_token_bytes, token)
        ctx.check(got is None or isinstance(got, bytes), f"decode_single_token_bytes gave {got!r}")
        ctx.call(enc.is_special_token, token)


def a_decode_batch(ctx: Context) -> None:
    enc, r = ctx.obj, ctx.rng
    batch = [hostile_ids(r, ctx.top) for _ in range(r.randrange(0, 6))]
    batch = [list(b) if isinstance(b, type(iter([]))) else b for b in batch]
    threads = hostile_threads(r)
    ctx.call(enc.decode_batch, batch, num_threads=threads)
    ctx.call(enc.decode_bytes_batch, batch, num_threads=threads)
    ctx.call(enc.decode_batch, r.choice((None, 5, "12", [5], iter(batch))))


def a_stream(ctx: Context) -> None:
    enc, r = ctx.obj, ctx.rng
    stream = ctx.call(enc.decode_stream, errors=r.choice(("replace", "ignore")))
    if stream is None:
        return
    ids = [r.randrange(ctx.top + 1) for _ in range(50)]
    ids.insert(r.randrange(len(ids) + 1), hostile_id(r, ctx.top))
    for token in ids:
        ctx.call(stream.push, token)
    ctx.call(stream.flush)
    ctx.call(stream.flush)
    ctx.call(stream.push, hostile_id(r, ctx.top))


def a_sample(ctx: Context) -> None:
    enc, r = ctx.obj, ctx.rng
    text = ctx.text()
    ids = ctx.call(enc.encode, text, disallowed_special=(), sample=True, alpha=hostile_float(r),
                   nbest_size=hostile_size(r), seed=r.choice((None, -1, 2**64, 7, "x", 1.5)))
    _check_ids(ctx, ids, text, True)
    if ctx.target.kind in ("model", "gguf") and enc.vocabulary.model == "unigram":
        from fasttok.formats.sentencepiece import nbest_encode

        ctx.call(nbest_encode, enc._core, text[:300], r.choice((-1, 0, 1, 5, 2**31, 10**100)))


def a_properties(ctx: Context) -> None:
    enc = ctx.obj
    for name in ("eot_token", "special_tokens_set", "pattern", "n_vocab", "max_token_value",
                 "name", "vocabulary"):
        ctx.call(getattr, enc, name)
    values = ctx.call(enc.token_byte_values)
    ctx.check(values is None or all(isinstance(v, bytes) for v in values), "token_byte_values")
    # pickling costs as much as the vocabulary: only where that is small
    data = ctx.call(pickle.dumps, enc) if enc.n_vocab <= PICKLED_VOCAB else None
    clone = ctx.call(pickle.loads, data) if data is not None else None
    if clone is not None:
        text = ctx.text()
        ctx.check(ctx.call(clone.encode_ordinary, text) == ctx.call(enc.encode_ordinary, text),
                  "a pickled copy encodes differently")


def _same_answers_on_threads(ctx: Context, texts: list, answer: Callable, threads: int,
                             rounds: int) -> None:
    """Each of ``threads`` threads gives ``answer(text)`` for every text, ``rounds``
    times in its own order: every answer must be the serial one."""
    serial = [repr(answer(t)) for t in texts]
    results: dict = {}

    def work(k: int) -> None:
        try:
            order = random.Random(k).sample(range(len(texts)), len(texts))
            for _ in range(rounds):
                for i in order:
                    results.setdefault(i, set()).add(repr(answer(texts[i])))
        except BaseException as exc:  # noqa: BLE001 - raised again in the main thread
            results[-1] = exc

    workers = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    if -1 in results:
        raise results.pop(-1)
    for i, seen in results.items():
        ctx.check(seen == {serial[i]}, f"threads gave another answer for {_show(texts[i])}")


def a_threads(ctx: Context) -> None:
    enc = ctx.obj

    def answer(text: str) -> tuple:
        ids = ctx.call(enc.encode_ordinary, text)
        return ids, ctx.call(enc.decode, ids) if ids is not None else None

    _same_answers_on_threads(ctx, [ctx.text() for _ in range(8)], answer,
                             threads=ctx.rng.choice((2, 4, 8)), rounds=3)


ENCODING_ATTACKS = (a_encode_text, a_encode_big, a_encode_specials, a_encode_params, a_count,
                    a_wrong_type_text, a_batch, a_to_array, a_single_token, a_unstable, a_decode,
                    a_decode_single, a_decode_batch, a_stream, a_sample, a_properties, a_threads)


# Attacks on fasttok.hf.Tokenizer and its Encoding.

def _hf_input(ctx: Context) -> tuple:
    """``(sequence, pair, is_pretokenized)``, hostile."""
    r = ctx.rng
    how = r.randrange(5)
    if how == 0:
        return ctx.text(), None, False
    if how == 1:
        return ctx.text(), ctx.text(), False
    if how == 2:
        words = [r.choice(("", " ", ctx.text()[:50], "\ud800", "a")) for _ in range(r.randrange(0, 8))]
        return words, r.choice((None, words[::-1], tuple(words))), True
    if how == 3:
        return hostile_type(r), r.choice((None, hostile_type(r))), r.choice((True, False))
    return ctx.text(), None, r.choice((None, 1, "yes"))


def h_encode(ctx: Context) -> None:
    tok, r = ctx.obj, ctx.rng
    seq, pair, pre = _hf_input(ctx)
    enc = ctx.call(tok.encode, seq, pair, is_pretokenized=pre,
                   add_special_tokens=r.choice((True, False)))
    if enc is not None:
        _check_hf_encoding(ctx, enc)


def h_encode_big(ctx: Context) -> None:
    tok = ctx.obj
    text = ctx.rng.choice("a \n日😀\u0301<") * (MIB // ctx.rng.choice((1, 16, 64)))
    enc = ctx.call(tok.encode, text)
    if enc is not None:
        _check_hf_encoding(ctx, enc)


def _check_hf_encoding(ctx: Context, enc: Any) -> None:
    n = len(enc.ids)
    for field in ("tokens", "offsets", "type_ids", "attention_mask", "special_tokens_mask",
                  "word_ids", "sequence_ids"):
        ctx.check(len(getattr(enc, field)) == n, f"Encoding.{field} has not {n} entries")
    ctx.check(all(type(i) is int and 0 <= i < 2**32 for i in enc.ids), "hf ids out of u32")


def h_encoding_lookups(ctx: Context) -> None:
    tok, r = ctx.obj, ctx.rng
    seq, pair, pre = _hf_input(ctx)
    enc = ctx.call(tok.encode, seq, pair, is_pretokenized=pre)
    if enc is None:
        return
    n = len(enc.ids)
    for _ in range(12):
        where = r.choice((-1, 0, n - 1, n, n + 1, 2**32, 2**64, -2**63, 10**100, None, 1.5,
                          True, "1", r.randrange(-n - 2, 2 * n + 2)))
        name = r.choice(("char_to_token", "char_to_word", "token_to_chars", "token_to_word",
                         "token_to_sequence", "word_to_tokens", "word_to_chars"))
        args = (where,) if name == "token_to_sequence" or r.random() < 0.5 else \
            (where, r.choice((0, 1, 2, -1, 2**64, None)))
        ctx.call(getattr(enc, name), *args)
    ctx.call(enc.truncate, hostile_size(r), stride=r.choice((0, 1, 5, 10**6, -1, 2**64)),
             direction=r.choice(("right", "left", "middle", None)))
    ctx.call(enc.pad, r.choice((0, 5, n + 3, 10**4, -1, 2**64, None, 1.5)),
             direction=r.choice(("right", "left", "up")), pad_id=r.choice((0, -1, 2**64)),
             pad_type_id=r.choice((0, -1, 2**64)), pad_token=r.choice(("[PAD]", "\ud800", None)))
    ctx.call(enc.set_sequence_id, r.choice((0, 1, -1, 2**64, None)))
    ctx.call(type(enc).merge, r.choice(([enc, enc], [], [enc, None], enc)),
             growing_offsets=r.choice((True, False)))
    if n:
        _check_hf_encoding(ctx, enc)


def h_truncation_padding(ctx: Context) -> None:
    tok, r = ctx.obj, ctx.rng
    max_length = r.choice((0, 1, 2, 3, 8, 512, 2**32, 2**64, -1, 10**100, None, 1.5, True))
    ctx.call(tok.enable_truncation, max_length,
             stride=r.choice((0, 1, 7, 2**31, -1, max_length if isinstance(max_length, int) else 3)),
             strategy=r.choice(("longest_first", "only_first", "only_second", "bogus", None)),
             direction=r.choice(("right", "left", "up", None)))
    ctx.call(tok.enable_padding, direction=r.choice(("right", "left", "middle")),
             pad_id=r.choice((0, ctx.top, ctx.top + 1, -1, 2**32, 2**64)),
             pad_type_id=r.choice((0, 1, -1, 2**64)),
             pad_token=r.choice(("[PAD]", "", "\ud800", None, 5)),
             length=r.choice((None, 0, 1, 9, 700, -1, 2**64, 1.5)),
             pad_to_multiple_of=r.choice((None, 0, 1, 3, 64, -1, 2**64, 10**9)))
    ctx.call(getattr, tok, "truncation")
    ctx.call(getattr, tok, "padding")
    seq, pair, pre = _hf_input(ctx)
    enc = ctx.call(tok.encode, seq, pair, is_pretokenized=pre)
    if enc is not None:
        _check_hf_encoding(ctx, enc)
        for extra in enc.overflowing[:50]:
            _check_hf_encoding(ctx, extra)
    batch = [ctx.text() for _ in range(r.randrange(0, 4))] + [(ctx.text(), ctx.text())]
    ctx.call(tok.encode_batch, batch)
    ctx.call(tok.no_truncation)
    ctx.call(tok.no_padding)


def h_batch(ctx: Context) -> None:
    tok, r = ctx.obj, ctx.rng
    items = [r.choice((ctx.text(), (ctx.text(), ctx.text()), hostile_type(r), ("a",), ("a", "b", "c"),
                       ["w", "o"])) for _ in range(r.randrange(0, 8))]
    pre = r.choice((False, True))
    source = r.choice((items, tuple(items), iter(items), None, "a string"))
    for enc in ctx.call(tok.encode_batch, source, is_pretokenized=pre) or ():
        _check_hf_encoding(ctx, enc)
    ctx.call(tok.encode_batch_fast, items, add_special_tokens=r.choice((True, False)))


def h_decode(ctx: Context) -> None:
    tok, r = ctx.obj, ctx.rng
    ids = hostile_ids(r, ctx.top)
    skip = r.choice((True, False, None, 1))
    got = ctx.call(tok.decode, ids, skip_special_tokens=skip)
    ctx.check(got is None or isinstance(got, str), f"decode gave {type(got).__name__}")
    ctx.call(tok.decode_batch, [hostile_ids(r, ctx.top) for _ in range(r.randrange(0, 4))],
             skip_special_tokens=skip)
    ctx.call(tok.decode_batch, r.choice((None, 5, [5], "ab")))


def h_vocabulary(ctx: Context) -> None:
    tok, r = ctx.obj, ctx.rng
    for _ in range(10):
        ctx.call(tok.id_to_token, hostile_id(r, ctx.top))
        value = r.choice((ctx.text()[:100], r.choice(ctx.specials or ["<s>"]), hostile_type(r),
                          special_variants(r, r.choice(ctx.specials or ["<s>"]))))
        got = ctx.call(tok.token_to_id, value)
        ctx.check(got is None or type(got) is int, f"token_to_id gave {got!r}")
    flag = r.choice((True, False, None, "no"))
    ctx.call(tok.get_vocab, flag)
    ctx.call(tok.get_vocab_size, flag)
    ctx.call(tok.get_added_tokens_decoder)
    ctx.call(tok.num_special_tokens_to_add, r.choice((True, False, None, 2, "yes")))


def h_post_process(ctx: Context) -> None:
    tok, r = ctx.obj, ctx.rng
    first = ctx.call(tok.encode, ctx.text(), add_special_tokens=False)
    second = ctx.call(tok.encode, ctx.text(), add_special_tokens=False)
    pair = r.choice((None, second, first, "text", 5))
    enc = ctx.call(tok.post_process, r.choice((first, first, None, "text")), pair,
                   add_special_tokens=r.choice((True, False)))
    if enc is not None:
        _check_hf_encoding(ctx, enc)


def h_threads(ctx: Context) -> None:
    tok = ctx.obj
    _same_answers_on_threads(ctx, [ctx.text() for _ in range(6)],
                             lambda t: ctx.call(lambda text: tok.encode(text).ids, t),
                             threads=ctx.rng.choice((2, 4)), rounds=1)


HF_ATTACKS = (h_encode, h_encode_big, h_encoding_lookups, h_truncation_padding, h_batch,
              h_decode, h_vocabulary, h_post_process, h_threads)
ATTACKS = {"encoding": ENCODING_ATTACKS, "hf": HF_ATTACKS}


def case(case_id: int) -> tuple:
    """``(target, attack, rng)`` of case ``case_id``: the same in every process.

    >>> target, attack, _ = case(0)
    >>> target.kind, attack.__name__
    ('tiktoken', 'a_encode_text')
    """
    every = targets()
    target = every[case_id % len(every)]
    attacks = ATTACKS[target.api]
    attack = attacks[(case_id // len(every) + case_id) % len(attacks)]
    return target, attack, random.Random(f"fasttok-attack/{case_id}")


def kinds(case_id: int) -> tuple:
    """The labels failures are grouped by: the attack, the kind and the file."""
    target, attack, _ = case(case_id)
    return attack.__name__, target.kind, Path(target.name).name


def run_case(case_id: int, obj: Any) -> dict:
    """The result fields of case ``case_id`` on ``obj`` (its prepared target)."""
    target, attack, rng = case(case_id)
    ctx = Context(target, obj, rng)
    try:
        attack(ctx)
        outcome, detail = "ok", ""
    except Finding as exc:
        outcome, detail = "invariant", f"{exc}"
    except MemoryError:
        outcome, detail = "memory_error", traceback.format_exc()[-2000:]
    except Exception:  # noqa: BLE001 - a stray exception is what the suite looks for
        outcome, detail = "exception", traceback.format_exc()[-2000:]
    if outcome != "ok":
        detail = f"after {ctx.calls[-1] if ctx.calls else 'no call'}: {detail}"
    return {"outcome": outcome, "detail": detail, "size": ctx.size, "kinds": kinds(case_id)}


def case_ids(start: int, stop: int) -> list:
    """``range(start, stop)`` ordered by target, so that a worker's batch loads few vocabularies."""
    n = len(targets())
    return sorted(range(start, stop), key=lambda i: (i % n, i))


def _show_case(case_id: int, folder: Path) -> list:
    target, attack, _ = case(case_id)
    return [f"{attack.__name__} on {target.kind} {target.name}",
            f"rerun: python tests/attack.py case {case_id}"]


SUITE = Suite("attack", (os.path.abspath(__file__), "worker"), kinds, _show_case, LIMITS)


def worker_main() -> None:
    """Run the cases the runner sends (see :func:`fuzzing.serve`)."""
    import numpy  # noqa: F401 - imported before the address-space limit is set

    import fasttok  # noqa: F401
    import fasttok.hf  # noqa: F401
    import fasttok.formats.sentencepiece  # noqa: F401

    serve(run_case, prepare=lambda case_id: prepare(case(case_id)[0]),
          headroom=ADDRESS_SPACE_HEADROOM)


def _main(argv: list) -> int:
    command = argv[1] if len(argv) > 1 else ""
    if command == "worker":
        worker_main()
        return 0
    if command == "case" and len(argv) == 3:
        case_id = int(argv[2])
        target, attack, _ = case(case_id)
        print(f"case {case_id}: {attack.__name__} on {target.kind} {target.name}")
        obj = prepare(target)
        fuzzing._limit_address_space(ADDRESS_SPACE_HEADROOM)
        fields = run_case(case_id, obj)
        print(fields["outcome"], fields["detail"], sep="\n")
        return 0 if fields["outcome"] == "ok" else 1
    if command == "run" and len(argv) in (3, 4):
        start, _, stop = argv[2].partition(":")
        report = run_cases(SUITE, case_ids(int(start), int(stop)),
                           workers=int(argv[3]) if len(argv) == 4 else 2)
        print(report.describe(limit=40))
        return 0 if not report.failures() else 1
    print(__doc__.split("Reproduce")[0].strip(), "\n\nusage: attack.py case N | run START:STOP "
          "[WORKERS]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
