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
           "shared._offset_units",
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

# Performance notes
#
# - Cython's shared utility module (cythonize(..., shared_utility_qualified_name=
#   "fasttok._cyutility") and Extension("fasttok._cyutility", sources=[])),
#   tried in session 9: the memoryview machinery and CyFunction code of every
#   module move into one more compiled module. The CyFunction and other
#   common types were already shared through Cython's ABI module, so only
#   modules with typed memoryviews init less, and importing the shared
#   module costs more than that saves. Callgrind, fresh process, HEAD
#   971e3d1 built both ways: `import fasttok` 164.65M -> 165.53M
#   instructions, `import fasttok; fasttok.load(T5 conversion)` 209.39M ->
#   209.74M; CPU time, 12 alternating fresh processes at load 6-8 (min /
#   median ms): import 4.13 / 4.27 -> 4.43 / 4.52, load 9.87 / 10.41 ->
#   9.59 / 9.98, both 14.04 / 14.75 -> 14.09 / 14.61. Not kept. What a
#   load's modules save instead is not to use typed memoryviews (a
#   module without one carries none of that machinery): _json_reader and
#   _unigram read buffers through PyObject_GetBuffer and cpython.array.
#   It also needs structmember.h for _encoding_lists' PyMemberDef (the
#   shared build no longer includes it in each module).
