"""How long ``decode_stream()`` holds text back, on every shared vocabulary.

    python bench/stream_holdback.py [VOCABS] [CHARS]
    python bench/stream_holdback.py llama-bpe,bert-bge 4000

VOCABS: substrings of the vocabulary names (default: all of them: the
``.tiktoken`` files, every GGUF, every ``.model``, every ``tokenizer.json``,
tekken); CHARS: how much of each corpus file (default 1,500 characters).
Each corpus file's ids are pushed one at a time. After push ``k`` the text
given so far is compared with the text no later id can change, which is at
most the common prefix ``S_k`` of ``decode(ids[:k] + c)`` over continuations
``c``: none, the rest of the real ids, and the ids of each probe text (punctuation,
quotes, contractions, spaces, a word and a word's continuation, characters
split into bytes), and each of those ids alone. ``S_k`` is at least the true stable text (fewer
continuations agree on more), so a measured lag of 0 proves no needless
holdback; a lag above 0 is held text no probe changes. Printed per
vocabulary: the worst lag in characters and in ids (how many pushes ago that
text was already settled) and where, the worst raw holdback (``decode`` of
the ids so far against the text given), and any text given too early (a push
gave text a probe continuation changes: a wrong stream).
"""

from __future__ import annotations

import importlib.resources
import os
import sys
from pathlib import Path

import fasttok
from fasttok.decoders.hf_starts import common_prefix

DATA = Path(os.environ.get("FASTTOK_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
CORPORA = ("en", "code", "multi", "zh")
PROBE_TEXTS = (",", ".", "?", "!", "'s", "'m", "'re", "'ve", "'t", "'", " '", "' ", "' s", " ' s", "s", "m",
               "re", "ve", " ", "  ", "\n", "a", " a", "xs", "Kennedys", "é", "你", "曖", "🎉", "\u2581")


def vocabularies() -> dict:
    vocab = DATA / "vocab"
    found = {p.stem: p for p in sorted((vocab / "tiktoken").glob("*.tiktoken"))}
    found |= {p.name[len("ggml-vocab-"):-len(".gguf")]: p
              for p in sorted((vocab / "gguf").glob("ggml-vocab-*.gguf"))}
    found |= {p.stem: p for p in sorted((vocab / "sentencepiece").glob("*.model"))}
    found |= {f"hf-{p.parent.name}": p for p in sorted((vocab / "hf").glob("*/tokenizer.json"))}
    found |= {f"hf-{p.stem}": p for p in sorted((vocab / "hf" / "unigram").glob("*.json"))}
    try:
        found["tekken"] = Path(str(importlib.resources.files("mistral_common") / "data"
                                   / "tekken_240911.json"))
    except ModuleNotFoundError:
        pass
    return found


def probe_ids(enc: fasttok.Encoding) -> list:
    """The continuations tried: each probe text's ids, and each of its ids alone."""
    probes = set()
    for text in PROBE_TEXTS:
        ids = enc.encode_ordinary(text)
        probes.add(tuple(ids))
        probes.update((i,) for i in ids)
    return sorted(probes)


def measure(enc: fasttok.Encoding, ids: list, probes: list) -> dict:
    """The worst lag, raw holdback and early text of streaming ``ids``."""
    final = enc.decode(ids)
    stream = enc.decode_stream()
    given, settled = "", [0]
    worst = {"lag": (0, 0, 0), "lag_ids": (0, 0), "held": (0, 0), "early": []}
    for k, token in enumerate(ids, 1):
        given += stream.push(token)
        prefix = ids[:k]
        so_far = enc.decode(prefix)
        endings = [final] + [enc.decode(prefix + list(probe)) for probe in probes]
        stable = min(common_prefix(so_far, e) for e in endings)
        # given text must start every ending (the stream may stop here too)
        for probe, ending in zip([None] + probes, [so_far] + endings):
            if not ending.startswith(given):
                worst["early"].append((k, probe, given[-20:]))
                break
        settled.append(stable)
        lag = stable - len(given)
        lag_ids = k - max(i for i in range(k + 1) if settled[i] <= len(given))
        if lag > worst["lag"][0]:
            worst["lag"] = (lag, k, stable)
        if lag_ids > worst["lag_ids"][0]:
            worst["lag_ids"] = (lag_ids, k)
        held = len(so_far) - len(given)
        if held > worst["held"][0]:
            worst["held"] = (held, k)
    given += stream.flush()
    worst["equal"] = given == final
    worst["final"] = final
    return worst


def main(argv: list) -> int:
    wanted = argv[1].split(",") if len(argv) > 1 and argv[1] else None
    chars = int(argv[2]) if len(argv) > 2 else 1500
    texts = {name: (DATA / "corpus" / f"{name}.txt").read_text(encoding="utf-8")[:chars]
             for name in CORPORA}
    failed, worst = 0, (0, "")
    print(f"{'vocabulary':48} {'ids':>6} {'lag ch':>7} {'lag ids':>7} {'held ch':>7} "
          f"{'early':>5}  worst lag at")
    for name, path in vocabularies().items():
        if wanted and not any(w in name for w in wanted):
            continue
        try:
            enc = fasttok.load(str(path))
        except Exception as e:  # a file this build does not load is reported, not fatal
            print(f"{name:48} not loaded: {e}")
            continue
        probes = probe_ids(enc)
        row = {"lag": (0, 0, 0, ""), "lag_ids": (0, ""), "held": 0, "early": 0, "ids": 0}
        for corpus, text in texts.items():
            ids = enc.encode_ordinary(text)
            row["ids"] += len(ids)
            r = measure(enc, ids, probes)
            if not r["equal"]:
                print(f"{name}: {corpus}: the stream's text differs from decode")
                failed += 1
            if r["lag"][0] > row["lag"][0]:
                lag, k, stable = r["lag"]
                row["lag"] = (lag, k, stable, f"{corpus} id {k}: {r['final'][max(0, stable - 30):stable]!r}")
            if r["lag_ids"][0] > row["lag_ids"][0]:
                row["lag_ids"] = (r["lag_ids"][0], f"{corpus} id {r['lag_ids'][1]}")
            row["held"] = max(row["held"], r["held"][0])
            row["early"] += len(r["early"])
            if r["early"]:
                k, probe, tail = r["early"][0]
                print(f"{name}: {corpus}: id {k} gave {tail!r} which probe id {probe} changes")
                failed += 1
        where = row["lag"][3] if row["lag"][0] else ""
        if row["lag"][0] >= worst[0]:
            worst = (row["lag"][0], f"{name}, {where}" if where else name)
        print(f"{name:48} {row['ids']:6} {row['lag'][0]:7} {row['lag_ids'][0]:7} {row['held']:7} "
              f"{row['early']:5}  {where}", flush=True)
    print(f"worst lag: {worst[0]} characters ({worst[1]}); streams that differ from decode "
          f"or gave text early: {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
