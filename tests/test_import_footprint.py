"""What `import fasttok`, a first `fasttok.load` and its first encode import: only what they use.

A load imports the modules that read and check its file's stages and those
of the ids face, and no stage's own module (its first encode imports those it walks);
the drop-in's `Encoding` side (`fasttok.formats.hf_pipeline`, the
`Encoding` modules, post-processing) is imported by `fasttok.hf` alone, and
a walk's module by the first encode. Each file's checks read one fresh
interpreter. The interpreter's own start-up may have
imported some of the named modules already (a `.pth` file can import certifi,
and with it pathlib and tempfile), so the child first drops them from
`sys.modules`: a module that comes back was imported again by fasttok.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys

import pytest

from conftest import DATA, REPO_ROOT, missing_data_reason

T5 = DATA / "vocab" / "hf" / "unigram" / "botchan_unigram_5000.v5.24.0.T5Tokenizer.json"
# BERT's shape, with truncation, padding and a tokenizer_config.json beside it
MINILM = DATA / "vocab" / "hf" / "all-MiniLM-L6-v2" / "tokenizer.json"

# the drop-in's modules: the Encoding side of a tokenizer.json
DROP_IN = {"fasttok.hf", "fasttok.formats.hf_pipeline", "fasttok.post_processors.encoding",
           "fasttok.post_processors._encoding_lists", "fasttok.post_processors.pipeline",
           "fasttok.decoders.hf_stream"}

# the standard modules a program that only encodes never needs (each costs
# from a few tenths of a ms to several ms to import)
HEAVY = ("dataclasses", "inspect", "ast", "dis", "hashlib", "json", "base64", "secrets", "hmac",
         "numbers", "random", "tempfile", "zipfile", "pathlib", "certifi", "importlib.resources",
         "urllib")

_CHILD = r"""
import json, sys
heavy = json.loads(sys.argv[1])
for name in list(sys.modules):
    if any(name == h or name.startswith(h + ".") for h in heavy):
        del sys.modules[name]
before = set(sys.modules)
import fasttok
after_import = set(sys.modules)
path = sys.argv[2]
if path:
    enc = fasttok.load(path)
after_load = set(sys.modules)
if path:
    enc.encode("Hello world")
print(json.dumps({"import": sorted(after_import - before),
                  "load": sorted(after_load - after_import),
                  "encode": sorted(set(sys.modules) - after_load)}))
if path:
    # the drop-in, built after the ids face in the same process
    import fasttok.hf
    enc = fasttok.hf.Tokenizer.from_file(path).encode("Hello world, it's a test.")
    print(json.dumps({"ids": enc.ids, "tokens": enc.tokens, "offsets": enc.offsets}))
"""


@functools.cache
def _run(path: str = "", heavy: tuple = HEAVY) -> list:
    out = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(heavy), path],
                         capture_output=True, text=True, check=True, cwd=REPO_ROOT.parent,
                         env={"FASTTOK_CACHE": "0", "PATH": "", "PYTHONPATH": str(REPO_ROOT)})
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_import_fasttok_imports_none_of_the_heavy_standard_modules():
    imported = set(_run()[0]["import"])
    assert not {m for m in imported if m.partition(".")[0] in HEAVY
                or m.startswith("importlib.resources")}


def _t5() -> list:
    if not T5.is_file():
        pytest.skip(missing_data_reason(T5))
    return _run(str(T5))


def test_loading_a_unigram_file_imports_its_model_and_no_stage_its_first_encode_those_it_names():
    # T5's: Precompiled (its charsmap read and checked at load), WhitespaceSplit
    # then Metaspace; the stages are built, their modules imported, by the
    # first encode, which walks them; the Unicode classes wait for it too
    first = _t5()[0]
    loaded = set(first["load"])
    stages = {"fasttok.normalizers.precompiled", "fasttok.pre_tokenizers.split",
              "fasttok.pre_tokenizers.metaspace", "fasttok.pre_tokenizers.sequence"}
    assert {"fasttok.models.hf_unigram", "fasttok.shared._charsmap"} <= loaded
    assert not loaded & (stages | {"fasttok.shared.normalized", "fasttok.shared.surrogates"})
    assert stages <= set(first["encode"])
    others = {f"fasttok.decoders.{m}" for m in ("hf_bpe", "hf_byte_fallback", "hf_byte_level",
                                                "hf_replace", "hf_simple", "hf_wordpiece",
                                                "hf_starts")}
    others |= {f"fasttok.pre_tokenizers.{m}" for m in ("byte_level", "unicode_scripts")}
    others |= {f"fasttok.post_processors.{m}" for m in ("bert", "roberta", "byte_level",
                                                        "sequence", "padding", "truncation")}
    others |= {"fasttok.shared._bytemap", "fasttok.shared.regex_translate",
               "fasttok.shared._unicode", "fasttok.formats.hf_unigram_path"}
    # no stage package, and no table cache: only a byte-level file has tables to keep
    others |= {"fasttok.decoders", "fasttok.normalizers", "fasttok.post_processors",
               "fasttok.table_cache"}
    assert not loaded & (others | DROP_IN)
    assert not loaded & {"json", "hashlib", "secrets", "numbers", "dataclasses"}


def test_a_unigram_files_load_and_first_encode_leave_its_decoder_and_post_processor_unbuilt():
    # read and checked at load, built (their modules imported) by a decode
    # or add_special_tokens
    first = _t5()[0]
    imported = set(first["load"]) | set(first["encode"])
    assert not imported & {"fasttok.post_processors.template", "fasttok.post_processors.processor",
                           "fasttok.post_processors.special_ids",
                           "fasttok.decoders.hf_metaspace"}


def test_a_unigram_files_load_leaves_its_compiled_model_to_the_first_encode():
    # the model's compiled core (and the modules it cimports) is built, and
    # imported, by the first call that needs it
    first = _t5()[0]
    compiled = {"fasttok.models._unigram", "fasttok.shared._piece_cache",
                "fasttok.shared._literal_cut"}
    assert not set(first["load"]) & compiled
    assert compiled <= set(first["encode"])


def test_loading_a_file_with_added_tokens_leaves_them_and_their_search_to_the_first_encode():
    # the added tokens are read and checked at the load (the loader); their
    # objects (and their module) and their matcher (and its module) are made
    # when a text is first searched
    first = _t5()[0]
    loaded = set(first["load"])
    assert not loaded & {"fasttok.added_tokens.hf_added", "fasttok.shared.literal_match"}
    assert "fasttok.added_tokens.hf_added" in first["encode"]


def test_the_first_encode_of_a_unigram_file_imports_its_walk_and_no_other_model_types():
    first = _t5()[0]
    imported = set(first["load"]) | set(first["encode"])
    assert "fasttok.formats.hf_unigram_path" in imported
    assert not imported & {"fasttok.formats.hf_byte_level", "fasttok.formats.hf_bert",
                           "fasttok.formats.hf_bpe_path", "fasttok.models.hf_bpe",
                           "fasttok.models.hf_wordpiece", "fasttok.normalizers.bert",
                           "fasttok.models.unigram_sampling"}
    assert not imported & DROP_IN


def test_the_first_encode_of_a_walked_unigram_file_imports_no_python_strings_module():
    # the stages are built for the walk, which asks them for their rules:
    # NormalizedString is for the stages run on Python strings
    first = _t5()[0]
    assert "fasttok.shared.normalized" not in set(first["load"]) | set(first["encode"])


def _minilm() -> list:
    if not MINILM.is_file():
        pytest.skip(missing_data_reason(MINILM))
    return _run(str(MINILM))


def test_loading_a_bert_file_with_settings_and_a_config_imports_no_drop_in_module_nor_json():
    # its truncation and padding are checked at the load, its tokenizer_config.json
    # read by the compiled JSON reader
    first = _minilm()[0]
    assert "fasttok.models.hf_wordpiece" in first["load"]
    imported = set(first["load"]) | set(first["encode"])
    assert not imported & (DROP_IN | {"json"})


def test_a_bert_files_load_imports_no_charsmap_reader():
    # the charsmap's module serves Precompiled normalizers, which BERT's has not
    first = _minilm()[0]
    assert "fasttok.shared._charsmap" not in set(first["load"]) | set(first["encode"])


def test_a_bert_files_load_leaves_the_special_tokens_search_to_the_first_encode():
    # the search (and its compiled module) is made when a text is first encoded
    first = _minilm()[0]
    assert "fasttok.shared._literal_cut" not in first["load"]
    assert "fasttok.shared._literal_cut" in first["encode"]


def test_a_bert_files_load_and_first_encode_leave_the_decoder_to_a_decode():
    # the WordPiece decoder is read and checked at load; its module and the
    # clean-up's (which holds llama.cpp's passes too) wait for the first decode
    first = _minilm()[0]
    assert "fasttok.loaders.hf_stage_json" in first["load"]
    imported = set(first["load"]) | set(first["encode"])
    assert not imported & {"fasttok.decoders.hf_wordpiece", "fasttok.decoders.cleanup",
                           "fasttok.decoders.joined"}


def test_the_drop_in_built_after_the_ids_face_in_one_process_gives_tokenizers_encoding():
    tokenizers = pytest.importorskip("tokenizers")
    drop_in = _t5()[1]
    expected = tokenizers.Tokenizer.from_file(str(T5)).encode("Hello world, it's a test.")
    assert drop_in == {"ids": expected.ids, "tokens": expected.tokens,
                       "offsets": [list(o) for o in expected.offsets]}
