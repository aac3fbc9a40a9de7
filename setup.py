"""Build the compiled core.

Every extension gets the same compiler directives, set here and nowhere else.
``FASTTOK_DEBUG=1`` turns bounds, wraparound and initialisation checks back on
and compiles without optimisation, for chasing a crash.

The rank files shipped in ``fasttok/ranks`` must decompress to OpenAI's
sha256 (the pins in ``fasttok/embedded.py``) or the build stops.
"""

import os
import runpy

from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("FASTTOK_DEBUG") == "1"

DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": not DEBUG,
    "embedsignature": True,
}

COMPILE_ARGS = ["-O0", "-g"] if DEBUG else ["-O3"]

# the compiled modules, by stage (see the README's "How it is built")
MODULES = ["shared._unicode", "shared._bytemap", "shared._tables", "shared._json_reader", "shared._charsmap",
           "shared._piece_cache", "shared._literal_cut", "shared._linear_regex", "shared._document_blocks",
           "post_processors._encoding_lists",
           "normalizers._spm_normalizer", "pre_tokenizers._pretokenize",
           "models._model_base", "models._bpe", "models._unigram", "models._wordpiece",
           "models._hf_bpe",
           "formats._byte_bpe", "formats._sentencepiece", "trainers._bpe_trainer",
           "trainers._unigram_trainer", "_encode_entry"]

extensions = [
    Extension(
        f"fasttok.{name}",
        [f"fasttok/{name.replace('.', '/')}.pyx"],
        include_dirs=["fasttok/shared"],
        extra_compile_args=COMPILE_ARGS,
    )
    for name in MODULES
]

runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fasttok", "embedded.py"))["check"]()

setup(ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES, annotate=False,
                                include_path=["."]))
