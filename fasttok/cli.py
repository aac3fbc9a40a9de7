"""The ``fasttok`` command (also ``python -m fasttok``).

    fasttok encode -e cl100k_base "hello world"      ids
    fasttok encode -e cl100k_base --show "hello"      the text coloured token by token
    fasttok decode -e cl100k_base 15339 1917          (or 15339,1917 or "[15339, 1917]")
    fasttok count  -e o200k_base notes.txt            a file's tokens (--text: the words)
    fasttok count  -f a.txt -f - < b.txt              files and stdin (-), read in order
    fasttok inspect cl100k_base | path/to/file
    fasttok bench  -e cl100k_base -f corpus.txt       side by side with tiktoken when installed
    fasttok train  --vocab-size 8192 --out v.tiktoken corpus.txt   (or tokenizer.json, v.gguf)
    fasttok train  --model unigram --vocab-size 8000 --out x.model corpus.txt
    fasttok train  --model wordpiece --vocab-size 8192 --out vocab.txt corpus.txt
    fasttok cache  info | clear                       the table cache's folder, size and bound

``-e`` takes an encoding name or a vocabulary file path.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import os
import re
import sys
import time
import traceback
import warnings
from typing import Optional, Sequence

from fasttok import __version__, get_encoding, list_encoding_names, load
from fasttok.errors import UnknownEncodingError
from fasttok.core import Encoding
from fasttok.errors import FasttokError
from fasttok.registry import cache_enabled, user_cache_dir
from fasttok.trainers import check_sizes
from fasttok.vocab import Vocabulary

_COLOURS = ["\x1b[48;5;153m", "\x1b[48;5;223m", "\x1b[48;5;194m", "\x1b[48;5;225m", "\x1b[48;5;230m"]
_RESET = "\x1b[0m"


# The library's messages name its Python arguments; the command line's user
# knows the options.
_OPTIONS = {"vocab_size": "--vocab-size", "max_pretokens": "--max-pretokens",
            "min_frequency": "--min-frequency", "limit_alphabet": "--limit-alphabet",
            "initial_alphabet": "--initial-alphabet", "character_coverage": "--character-coverage",
            "num_threads": "--threads", "continuing_subword_prefix": "--continuing-subword-prefix",
            "format=": "--format"}
_PYTHON_NAME = re.compile(r"(?<![\w-])(?:%s)(?!\w)" % "|".join(map(re.escape, _OPTIONS)))


@contextlib.contextmanager
def _option_names():
    try:
        yield
    except FasttokError as exc:
        raise FasttokError(_option_words(str(exc))) from None


def _option_words(message: str) -> str:
    return _PYTHON_NAME.sub(lambda m: _OPTIONS[m.group()], message)


def _encoding(spec: str, format: Optional[str]) -> Encoding:
    if os.path.exists(spec):
        with _option_names():
            return load(spec, format=format)
    if format is not None:
        raise FasttokError(f"--format {format}: {spec} is no file (an encoding name has none)")
    if (os.sep in spec or os.path.splitext(spec)[1]) and spec not in list_encoding_names():
        # a path, not an encoding name: say the file is missing
        raise UnknownEncodingError(f"{spec}: no such file (and not an encoding name; "
                                   f"known: {', '.join(list_encoding_names())})")
    return get_encoding(spec)


def _utf8(data: bytes, label: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FasttokError(f"{label}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None


def _read_utf8(path: str) -> str:
    """A text file's contents, or a FasttokError naming the file when it is not UTF-8."""
    with open(path, "rb") as f:
        return _utf8(f.read(), path)


def _stdin_text() -> str:
    # the bytes, decoded here: the same check and message as for -f, whatever
    # the locale's encoding and error handler for sys.stdin
    return _utf8(sys.stdin.buffer.read(), "standard input")


def _read_input(path: str) -> str:
    # -f's argument: a file, or standard input for "-"
    return _stdin_text() if path == "-" else _read_utf8(path)


def _refuse_terminal(args: argparse.Namespace) -> None:
    # reading a terminal would sit waiting for text nobody means to type
    if sys.stdin.isatty():
        raise _Usage(args.usage)


class _Usage(Exception):
    """No input given: print the command's usage and exit with status 2."""


def _colour() -> bool:
    # https://no-color.org: any non-empty NO_COLOR turns colour off
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _piece(token: bytes) -> str:
    # A token that splits a character is shown as its bytes (\xe4\xbd), not as U+FFFD.
    return token.decode("utf-8", errors="backslashreplace")


def _input_files(args: argparse.Namespace) -> list:
    # the rule --help states: -f's files, else the arguments when every one
    # names an existing file and --text is not given
    if args.file:
        if args.text:
            raise FasttokError("give the text as arguments or with -f, not both")
        return args.file
    if args.text and not args.as_text and all(os.path.isfile(t) for t in args.text):
        return args.text
    return []


def _text(args: argparse.Namespace) -> str:
    files = _input_files(args)
    if files:
        # one after another, as `cat a b |` gives them
        return "".join(map(_read_input, files))
    if args.text:
        return " ".join(args.text)
    _refuse_terminal(args)
    return _stdin_text()


def _cmd_encode(args: argparse.Namespace) -> int:
    enc = _encoding(args.encoding, args.format)
    text = _text(args)
    ids = enc.encode(text, allowed_special="all" if args.allow_special else frozenset(),
                     disallowed_special=())
    if args.show or (args.show is None and sys.stdout.isatty()):
        tokens = enc.decode_tokens_bytes(ids)
        if _colour():
            print("".join(f"{_COLOURS[i % len(_COLOURS)]}\x1b[30m{_piece(t)}{_RESET}"
                          for i, t in enumerate(tokens)))
        else:
            # no colour to mark where tokens end: a bar between them
            print("|".join(_piece(t) for t in tokens))
        print(" ".join(map(str, ids)))
        print(f"{len(ids)} tokens (--ids prints the ids alone)")
    else:
        print(" ".join(map(str, ids)))
    return 0


def _ids(text: str) -> list:
    # what people paste: "1 2", "1,2", "1, 2" or a list as Python and JSON print it
    inner = text.strip()
    if inner.startswith("[") and inner.endswith("]"):
        inner = inner[1:-1]
    try:
        return [int(x) for x in inner.replace(",", " ").split()]
    except ValueError as exc:
        raise FasttokError(f"token ids must be integers: {exc}") from None


def _cmd_decode(args: argparse.Namespace) -> int:
    if not args.ids:
        _refuse_terminal(args)
    enc = _encoding(args.encoding, args.format)
    ids = _ids(" ".join(args.ids) if args.ids else _stdin_text())
    try:
        sys.stdout.write(enc.decode(ids))
    except KeyError as exc:
        raise FasttokError(f"id {exc.args[0]} is not in {enc.name}'s vocabulary") from None
    sys.stdout.write("\n")
    return 0


def _cmd_count(args: argparse.Namespace) -> int:
    enc = _encoding(args.encoding, args.format)
    print(enc.count(_text(args), disallowed_special=()))
    return 0


_PIECE_TYPES = ("undefined", "normal", "unknown", "control", "user-defined", "unused", "byte")
_SPECIAL_PIECE_TYPES = (2, 3, 4)  # unknown, control, user-defined: llama.cpp's special tokens


def _sentencepiece_rows(v: Vocabulary) -> list:
    # What decides SentencePiece tokenization: the normalizer and its flags,
    # how many pieces of each type, the role ids.
    counts: dict = {}
    for t in v.token_types or ():
        name = _PIECE_TYPES[t] if 0 <= t < len(_PIECE_TYPES) else f"type {t}"
        counts[name] = counts.get(name, 0) + 1
    flags = [f for f, on in (("add_dummy_prefix", v.add_dummy_prefix),
                             ("remove_extra_whitespaces", v.remove_extra_whitespaces),
                             ("escape_whitespaces", v.escape_whitespaces),
                             ("byte_fallback", v.byte_fallback),
                             ("treat_whitespace_as_suffix",
                              v.metadata.get("treat_whitespace_as_suffix"))) if on]
    charsmap = v.precompiled_charsmap
    rows = [("normalizer", (v.normalizer or "-")
             + (f" (charsmap {len(charsmap)} bytes)" if charsmap else " (no charsmap)")),
            ("pieces by type", ", ".join(f"{k} {n}" for k, n in counts.items()) or "-"),
            ("flags", ", ".join(flags) or "-")]
    if "tokenizer.ggml.model" not in v.metadata:
        roles = [(r, getattr(v, f"{r}_id")) for r in ("unk", "bos", "eos", "pad")]
        rows.append(("role ids", ", ".join(f"{r}={i}" for r, i in roles if i is not None)))
    return rows


def _pattern_label(pattern: Optional[str]) -> str:
    # a known tiktoken pattern runs in a compiled scanner; say which
    from fasttok.pre_tokenizers.patterns import scanner_for

    if not pattern:
        return "-"
    scanner = scanner_for(pattern)
    if scanner:
        return f"{scanner} scanner (compiled) for {pattern!r}"
    return f"pattern {pattern!r} (through Python's re)"


def _cmd_inspect(args: argparse.Namespace) -> int:
    enc = _encoding(args.encoding, args.format)
    v = enc.vocabulary
    specials = dict(v.special_tokens)
    if v.model in ("unigram", "sentencepiece_bpe") and not specials:
        # A .model file's control, user-defined and unknown pieces are special
        # to sentencepiece too; count them as the GGUF view (llama.cpp) does.
        specials = {_piece(v.tokens[i]) if isinstance(v.tokens[i], bytes) else v.tokens[i]: i
                    for i, t in enumerate(v.token_types or ()) if t in _SPECIAL_PIECE_TYPES}
    special_ids = set(specials.values())
    mergeable = sum(1 for i, _ in v.ordinary_tokens() if i not in special_ids)
    rows = [
        ("name", v.name),
        ("source", v.source or "(built in)"),
        ("model", v.model),
        ("pre-tokenizer", v.pre_tokenizer or _pattern_label(v.pattern)),
        ("mergeable tokens", mergeable),
        ("special tokens", len(specials)),
        ("len (mergeable + special)", mergeable + len(specials)),
        ("n_vocab (max id + 1)", enc.n_vocab),
    ]
    if specials:
        shown = sorted(specials.items(), key=lambda kv: kv[1])[:12]
        rows.append(("special ids", ", ".join(f"{t}={i}" for t, i in shown)
                     + (" ..." if len(specials) > 12 else "")))
    gguf_model = v.metadata.get("tokenizer.ggml.model")
    if gguf_model is not None:
        # GGUF files: the tokenizer as llama.cpp names it, and its role ids
        rows[2:3] = [("model", f"{v.model} (tokenizer.ggml.model {gguf_model})")]
        rows.insert(5, ("merges", len(v.merges) if v.merges is not None else "-"))
        roles = [(r, getattr(v, f"{r}_id")) for r in ("bos", "eos", "unk", "sep", "pad", "mask")]
        rows.append(("role ids", ", ".join(f"{r}={i}" for r, i in roles if i is not None) or "-"))
        rows.append(("adds", ", ".join(f for f in ("bos", "eos", "sep") if getattr(v, f"add_{f}"))
                     or "nothing"))
    if v.model in ("unigram", "sentencepiece_bpe"):
        rows.extend(_sentencepiece_rows(v))
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    return 0


def _best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _cmd_bench(args: argparse.Namespace) -> int:
    if args.repeat < 1:
        raise FasttokError(f"--repeat must be at least 1, not {args.repeat}")
    files = args.file_list or []
    if not files:
        _refuse_terminal(args)
    enc = _encoding(args.encoding, args.format)
    texts = ([("stdin" if f == "-" else f, _read_input(f)) for f in files]
             or [("stdin", _stdin_text())])
    empty = [label for label, text in texts if not text]
    if empty:
        raise FasttokError(f"nothing to time: {', '.join(empty)} is empty")
    try:
        import tiktoken
    except ImportError:
        tiktoken = None
    peer = None
    if tiktoken is not None and enc.vocabulary.model == "byte_bpe" and enc.pattern:
        peer = tiktoken.Encoding(enc.name, pat_str=enc.pattern,
                                 mergeable_ranks=enc.vocabulary.mergeable_ranks,
                                 special_tokens=dict(enc.vocabulary.special_tokens))
    print(f"{'input':<30} {'MB':>7} {'fasttok MB/s':>13} {'tiktoken MB/s':>14} {'ratio':>6}")
    for label, text in texts:
        size = len(text.encode("utf-8")) / 1e6
        ours = _best_of(lambda: enc.encode_ordinary(text), args.repeat)
        line = f"{os.path.basename(label):<30} {size:7.2f} {size / ours:13.1f}"
        if peer is not None:
            if peer.encode_ordinary(text) != enc.encode_ordinary(text):
                raise FasttokError(f"{label}: fasttok and tiktoken disagree; not timing it")
            theirs = _best_of(lambda: peer.encode_ordinary(text), args.repeat)
            line += f" {size / theirs:14.1f} {theirs / ours:5.2f}x"
        else:
            line += f" {'-':>14} {'-':>6}"
        print(line)
    return 0


class _Progress:
    """A one-line progress bar on stderr, drawn only when stderr is a
    terminal (and not ``--quiet``); redrawn at most each 1%."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.shown = -1

    def __call__(self, label: str, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        percent = min(100, done * 100 // total)
        if percent == self.shown:
            return
        self.shown = percent
        bar = "#" * (percent * 30 // 100)
        sys.stderr.write(f"\r{label:<10} [{bar:<30}] {percent:3d}%")
        if percent == 100:
            sys.stderr.write("\n")
            self.shown = -1
        sys.stderr.flush()


def _documents(paths: Sequence[str], field: Optional[str], progress: _Progress):
    # one document per line (or the str at --field of each JSON line), read
    # streaming; the bar follows the bytes read of all the files
    import json

    total = sum(os.path.getsize(p) for p in paths)
    done = 0
    for path in paths:
        with open(path, "rb") as f:
            for number, line in enumerate(f, 1):
                done += len(line)
                progress("counting", done, total)
                text = _utf8(line[:-1] if line.endswith(b"\n") else line, f"{path}: line {number}")
                if field is None:
                    yield text
                    continue
                if not text.strip():
                    continue
                try:
                    value = json.loads(text)[field]
                except (ValueError, KeyError, TypeError):
                    raise FasttokError(f"{path}: line {number}: not a JSON object with a "
                                       f"{field!r} field") from None
                if not isinstance(value, str):
                    raise FasttokError(f"{path}: line {number}: field {field!r} is "
                                       f"{type(value).__name__}, not a string")
                yield value


def _summary(args: argparse.Namespace, what: str, seconds: float, corpus_bytes: int,
             unique: int) -> None:
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"trained {what} in {seconds:.2f} s: {corpus_bytes / 1e6:.1f} MB of text, {unique} "
          f"unique pre-tokens, peak memory {peak:.0f} MiB",
          file=sys.stderr if args.quiet else sys.stdout)


def _cmd_train_wordpiece(args: argparse.Namespace) -> int:
    from fasttok.loaders.hf_tokenizer_json_writer import write_document
    from fasttok.loaders.vocab_txt_writer import write_vocab_txt
    from fasttok.trainers.wordpiece import train_wordpiece

    suffix = os.path.basename(args.out).lower()
    if not (suffix.endswith(".txt") or suffix.endswith(".json")):
        raise FasttokError(f"--out {args.out}: give a vocab.txt or a tokenizer.json path")
    if args.pattern is not None or args.flavour != "rustbpe":
        raise FasttokError("--model wordpiece cuts words as BERT does (tokenizers' "
                           "WordPieceTrainer): drop --pattern and --flavour")
    progress = _Progress(sys.stderr.isatty() and not args.quiet)
    start = time.perf_counter()
    trained = train_wordpiece(_documents(args.files, args.field, progress),
                              vocab_size=args.vocab_size,
                              special_tokens=args.special_token or (),
                              min_frequency=args.min_frequency,
                              limit_alphabet=args.limit_alphabet,
                              initial_alphabet=list(args.initial_alphabet or ""),
                              continuing_subword_prefix=args.continuing_subword_prefix,
                              max_pretokens=args.max_pretokens,
                              progress=lambda done, total: progress("merging", done, total))
    seconds = time.perf_counter() - start
    if suffix.endswith(".json"):
        write_document(args.out, trained.document())
        print(f"wrote {args.out}: load it with fasttok.load({args.out!r}) or "
              f"tokenizers.Tokenizer.from_file({args.out!r})")
    else:
        write_vocab_txt(args.out, trained.vocab)
        named = "" if suffix.endswith("vocab.txt") else ", format='vocab_txt'"
        print(f"wrote {args.out}: load it with fasttok.load({args.out!r}{named}) or "
              f"tokenizers.models.WordPiece.from_file({args.out!r}, "
              f"unk_token={trained.unk_token!r}) behind BERT's normalizer and pre-tokenizer")
    _summary(args, f"{len(trained.vocab)} tokens", seconds, trained.corpus_bytes,
             trained.unique_words)
    _dropped_note(trained.dropped_words)
    return 0


def _dropped_note(dropped: int) -> None:
    if dropped:
        print(f"--max-pretokens dropped {dropped} rare pre-tokens: the vocabulary may "
              "differ from an unbounded run's", file=sys.stderr)


def _check_out(out: str) -> None:
    # Before training, which may take hours: the file is written (through a
    # temporary file beside it) into a folder that must exist and take it.
    folder = os.path.dirname(os.path.abspath(out))
    if os.path.isdir(out):
        raise FasttokError(f"--out {out}: is a folder; give a file path")
    if not os.path.isdir(folder):
        raise FasttokError(f"--out {out}: the folder {folder} does not exist; make it first")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise FasttokError(f"--out {out}: the folder {folder} is not writable; choose another")


def _cmd_train(args: argparse.Namespace) -> int:
    check_sizes(args.vocab_size, args.threads, names=("--vocab-size", "--threads"))
    _check_out(args.out)
    train = {"unigram": _cmd_train_unigram, "wordpiece": _cmd_train_wordpiece}
    # the trainers' warnings (a vocabulary not of the size asked) in the
    # options' words, after the summary rather than as Python's source lines
    with _option_names(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        status = train.get(args.model, _cmd_train_bpe)(args)
    for warning in caught:
        print(f"warning: {_option_words(str(warning.message))}", file=sys.stderr)
    return status


def _cmd_train_bpe(args: argparse.Namespace) -> int:
    from fasttok.loaders.gguf_writer import write_gguf
    from fasttok.loaders.hf_tokenizer_json_writer import write_tokenizer_json
    from fasttok.loaders.tiktoken_writer import load_call, write_tiktoken
    from fasttok.trainers.bpe import train_bpe

    if args.continuing_subword_prefix != "##":
        raise FasttokError("--continuing-subword-prefix is --model wordpiece's")
    if args.flavour == "rustbpe" and (args.limit_alphabet, args.initial_alphabet) != (None, None):
        raise FasttokError("--limit-alphabet and --initial-alphabet are tokenizers' options: "
                           "add --flavour hf")
    # with a limit, the bytes seen compete for it (all 256 would be kept first)
    initial = (list(args.initial_alphabet) if args.initial_alphabet is not None
               else [] if args.limit_alphabet is not None else None)
    suffix = os.path.basename(args.out).lower()
    if not suffix.endswith((".tiktoken", ".json", ".gguf")):
        raise FasttokError(f"--out {args.out}: give a .tiktoken, a tokenizer.json or a .gguf path")
    progress = _Progress(sys.stderr.isatty() and not args.quiet)
    start = time.perf_counter()
    trained = train_bpe(_documents(args.files, args.field, progress), vocab_size=args.vocab_size,
                        pattern=args.pattern, special_tokens=args.special_token or (),
                        min_frequency=args.min_frequency, flavour=args.flavour,
                        num_threads=args.threads, limit_alphabet=args.limit_alphabet,
                        initial_alphabet=initial, max_pretokens=args.max_pretokens,
                        progress=lambda done, total: progress("merging", done, total))
    seconds = time.perf_counter() - start
    vocab = trained.vocabulary
    ranks = dict(trained.ranks)
    if suffix.endswith(".gguf"):
        write_gguf(args.out, vocab)
        print(f"wrote {args.out}: load it with fasttok.load({args.out!r}) or llama.cpp")
    elif suffix.endswith(".json"):
        write_tokenizer_json(args.out, ranks, trained.merges, trained.pattern,
                             vocab.special_tokens)
        print(f"wrote {args.out}: load it with fasttok.load({args.out!r}) or "
              f"tokenizers.Tokenizer.from_file({args.out!r})")
    else:
        write_tiktoken(args.out, ranks)
        print(f"wrote {args.out}: load it with")
        print(f"  {load_call(args.out, trained.pattern, vocab.special_tokens)}")
    _summary(args, f"{len(trained.merges)} merges", seconds, trained.corpus_bytes,
             trained.unique_pretokens)
    _dropped_note(trained.dropped_pretokens)
    return 0


def _cmd_train_unigram(args: argparse.Namespace) -> int:
    from fasttok.trainers.unigram import train_unigram

    if not os.path.basename(args.out).lower().endswith(".model"):
        raise FasttokError(f"--out {args.out}: a Unigram model is written as a .model file")
    if args.pattern is not None or args.min_frequency or args.flavour != "rustbpe":
        raise FasttokError("--pattern, --min-frequency and --flavour are options of --model bpe")
    if args.max_pretokens is not None:
        raise FasttokError("--max-pretokens bounds BPE and WordPiece counting; the Unigram "
                           "trainer's word count has no bound yet")
    progress = _Progress(sys.stderr.isatty() and not args.quiet)
    start = time.perf_counter()
    trained = train_unigram(_documents(args.files, args.field, progress),
                            vocab_size=args.vocab_size,
                            user_defined_symbols=args.special_token or (),
                            character_coverage=args.character_coverage,
                            byte_fallback=args.byte_fallback, num_threads=args.threads,
                            progress=lambda done, total: progress("pruning", total, done))
    seconds = time.perf_counter() - start
    trained.save(args.out)
    print(f"wrote {args.out}: load it with fasttok.load({args.out!r}) or "
          f"sentencepiece.SentencePieceProcessor(model_file={args.out!r})")
    _summary(args, f"{len(trained.proto.pieces)} pieces", seconds, trained.corpus_bytes,
             trained.unique_words)
    return 0


def _mib(size: int) -> str:
    return f"{size / (1 << 20):.1f} MiB ({size} bytes)"


def _cmd_cache(args: argparse.Namespace) -> int:
    from fasttok import table_cache

    folder = user_cache_dir()
    if args.action == "clear":
        entries, size = table_cache.clear_cache(folder)
        print(f"removed {entries} entries, {_mib(size)}, from {folder}")
        return 0
    info = table_cache.cache_info(folder)
    print(f"folder   {folder}\n"
          f"cache    {'on' if cache_enabled() else 'off (FASTTOK_CACHE=0)'}\n"
          f"entries  {info.entries}\n"
          f"size     {_mib(info.bytes)}\n"
          f"bound    {_mib(info.max_bytes)}: FASTTOK_CACHE_MAX_BYTES; a write beyond it "
          "removes the least recently used entries")
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fasttok", description="Exact, fast tokenization.")
    p.add_argument("--version", action="version", version=f"fasttok {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    def with_encoding(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("-e", "--encoding", default="cl100k_base",
                        help=f"encoding name ({', '.join(list_encoding_names())}) or vocabulary file")
        with_format(sp)

    def with_format(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--format", help="the vocabulary file's format when neither its first "
                                         "bytes nor its name tell (tiktoken, gguf, ...)")

    def with_text(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("text", nargs="*",
                        help="the text; arguments that all name existing files are read as "
                             "those files (unless --text); none: -f or standard input")
        sp.add_argument("--text", dest="as_text", action="store_true",
                        help="read the arguments as text even when they name files")
        sp.add_argument("-f", "--file", action="append",
                        help="a file to read ('-': standard input); repeat it to read "
                             "several, in order")

    enc = sub.add_parser("encode", help="text -> token ids")
    with_encoding(enc)
    with_text(enc)
    enc.add_argument("--show", action="store_true", default=None, help="colour the text token by token")
    enc.add_argument("--ids", dest="show", action="store_false", help="print ids even on a terminal")
    enc.add_argument("--allow-special", action="store_true", help="encode special token strings as specials")
    enc.set_defaults(run=_cmd_encode, usage=enc.format_usage())

    dec = sub.add_parser("decode", help="token ids -> text")
    with_encoding(dec)
    dec.add_argument("ids", nargs="*", help="token ids, apart by spaces or commas, or a list "
                                            "as [1, 2] (none: standard input)")
    dec.set_defaults(run=_cmd_decode, usage=dec.format_usage())

    cnt = sub.add_parser("count", help="number of tokens")
    with_encoding(cnt)
    with_text(cnt)
    cnt.set_defaults(run=_cmd_count, usage=cnt.format_usage())

    ins = sub.add_parser("inspect", help="what a vocabulary holds")
    ins.add_argument("encoding", help="encoding name or vocabulary file")
    with_format(ins)
    ins.set_defaults(run=_cmd_inspect)

    ben = sub.add_parser("bench", help="encode speed, side by side with tiktoken when installed")
    with_encoding(ben)
    ben.add_argument("-f", "--file", dest="file_list", action="append",
                     help="a file to time ('-': standard input); repeat it for several")
    ben.add_argument("--repeat", type=int, default=3)
    ben.set_defaults(run=_cmd_bench, usage=ben.format_usage())

    tr = sub.add_parser("train", help="train a BPE, WordPiece or Unigram vocabulary on text files")
    tr.add_argument("files", nargs="+", help="text files, one document per line (JSONL with --field)")
    tr.add_argument("--field", help="read JSON lines and train on this field of each")
    tr.add_argument("--vocab-size", type=int, required=True,
                    help="tokens in all: the 256 bytes, the merges and the special tokens")
    tr.add_argument("--pattern", help="pre-tokenizer regex (default: GPT-4's, cl100k_base's)")
    tr.add_argument("--special-token", action="append", help="a special token (repeatable)")
    tr.add_argument("--min-frequency", type=int, default=0,
                    help="stop when the best pair occurs fewer times than this")
    tr.add_argument("--flavour", choices=("rustbpe", "hf"), default="rustbpe",
                    help="whose rules to follow exactly: rustbpe's or Hugging Face tokenizers'")
    tr.add_argument("--threads", type=int, help="threads counting pre-tokens (default: the CPUs)")
    tr.add_argument("--max-pretokens", type=int,
                    help="bpe, wordpiece: hold at most this many distinct pre-tokens (words) "
                         "while counting, "
                         "dropping the rarest (bounded memory; exact while none are dropped)")
    tr.add_argument("--model", choices=("bpe", "wordpiece", "unigram"), default="bpe",
                    help="byte-level BPE; WordPiece as tokenizers' WordPieceTrainer (BERT's "
                         "normalizer and pre-tokenizer); SentencePiece Unigram (a .model file)")
    tr.add_argument("--limit-alphabet", type=int,
                    help="keep this many characters (bytes) at most, the most frequent "
                         "(tokenizers' limit_alphabet; --flavour hf or --model wordpiece)")
    tr.add_argument("--initial-alphabet",
                    help="characters always in the alphabet (byte-level characters for "
                         "--flavour hf; with --limit-alphabet and none given, only the bytes "
                         "seen count)")
    tr.add_argument("--continuing-subword-prefix", default="##",
                    help="WordPiece's prefix of a piece inside a word (default ##)")
    tr.add_argument("--character-coverage", type=float, default=0.9995,
                    help="unigram: the share of the text's characters the pieces must cover")
    tr.add_argument("--byte-fallback", action="store_true",
                    help="unigram: <0xXX> pieces for the characters no piece covers")
    tr.add_argument("--out", required=True,
                    help="a .tiktoken file, a tokenizer.json or a vocabulary-only .gguf (bpe); "
                         "a vocab.txt or a tokenizer.json (wordpiece); a .model file (unigram)")
    tr.add_argument("-q", "--quiet", action="store_true", help="no progress bar; summary on stderr")
    tr.set_defaults(run=_cmd_train)

    ca = sub.add_parser("cache", help="the table cache: where it is and its size, or empty it")
    ca.add_argument("action", choices=("info", "clear"),
                    help="info: folder, entries, bytes and bound; clear: remove the entries")
    ca.set_defaults(run=_cmd_cache)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit status.

    >>> main(["count", "-e", "cl100k_base", "hello world"])   # doctest: +SKIP
    2
    0
    """
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except _Usage as usage:
        print(f"{usage}fasttok: no input: give it as arguments, -f FILE or a pipe", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader went away (| head): nothing more to say, and the exit's
        # flush of what is left must not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130
    except UnicodeEncodeError as exc:
        if _stdout_cannot_write(exc):
            print(f"fasttok: standard output's encoding ({sys.stdout.encoding}) cannot write "
                  f"{exc.object[exc.start:exc.end]!r}: set PYTHONIOENCODING=utf-8 or a UTF-8 "
                  "locale", file=sys.stderr)
            return 2
        return _internal_error(exc)
    except (FasttokError, OSError) as exc:
        print(f"fasttok: {exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print("fasttok: out of memory", file=sys.stderr)
        return 2
    except Exception as exc:  # a command line prints one line, not a traceback
        return _internal_error(exc)


def _stdout_cannot_write(exc: UnicodeEncodeError) -> bool:
    try:
        return codecs.lookup(exc.encoding).name == codecs.lookup(sys.stdout.encoding or "").name
    except LookupError:
        return False


def _internal_error(exc: BaseException) -> int:
    # A failure no check foresaw: one line, and the traceback for a report
    # when FASTTOK_TRACEBACK=1.
    if os.environ.get("FASTTOK_TRACEBACK") == "1":
        traceback.print_exc()
    print(f"fasttok: internal error: {type(exc).__name__}: {exc} (please report it; "
          "FASTTOK_TRACEBACK=1 shows where)", file=sys.stderr)
    return 3
