"""Which encoding each OpenAI model uses: tiktoken 0.14.0's two tables, as data.

A name is looked up whole in :data:`MODEL_TO_ENCODING` first, then by the
first prefix of :data:`MODEL_PREFIX_TO_ENCODING` (in table order) it starts
with, so new dated releases (``gpt-4o-2024-05-13``) need no update.

>>> encoding_name_for_model("gpt-4o-2024-05-13")
'o200k_base'
"""

from __future__ import annotations

__all__ = ["MODEL_TO_ENCODING", "MODEL_PREFIX_TO_ENCODING", "encoding_name_for_model",
           "encoding_for_model"]

_O200K, _CL100K, _P50K, _R50K = "o200k_base", "cl100k_base", "p50k_base", "r50k_base"

MODEL_PREFIX_TO_ENCODING: dict = {
    "o1-": _O200K, "o3-": _O200K, "o4-mini-": _O200K,
    "gpt-5": _O200K, "gpt-4.5-": _O200K, "gpt-4.1-": _O200K, "chatgpt-4o-": _O200K,
    "gpt-4o-": _O200K, "gpt-4-": _CL100K, "gpt-3.5-turbo-": _CL100K, "gpt-35-turbo-": _CL100K,
    "gpt-oss-": "o200k_harmony",
    "ft:gpt-4o": _O200K, "ft:gpt-4": _CL100K, "ft:gpt-3.5-turbo": _CL100K,
    "ft:davinci-002": _CL100K, "ft:babbage-002": _CL100K,
}

MODEL_TO_ENCODING: dict = {
    "o1": _O200K, "o3": _O200K, "o4-mini": _O200K,
    "gpt-5": _O200K, "gpt-4.1": _O200K, "gpt-4o": _O200K,
    "gpt-4": _CL100K, "gpt-3.5-turbo": _CL100K, "gpt-3.5": _CL100K, "gpt-35-turbo": _CL100K,
    "davinci-002": _CL100K, "babbage-002": _CL100K,
    "text-embedding-ada-002": _CL100K, "text-embedding-3-small": _CL100K,
    "text-embedding-3-large": _CL100K,
    # deprecated: text, code, edit and the old embeddings
    "text-davinci-003": _P50K, "text-davinci-002": _P50K,
    "text-davinci-001": _R50K, "text-curie-001": _R50K, "text-babbage-001": _R50K,
    "text-ada-001": _R50K, "davinci": _R50K, "curie": _R50K, "babbage": _R50K, "ada": _R50K,
    "code-davinci-002": _P50K, "code-davinci-001": _P50K, "code-cushman-002": _P50K,
    "code-cushman-001": _P50K, "davinci-codex": _P50K, "cushman-codex": _P50K,
    "text-davinci-edit-001": "p50k_edit", "code-davinci-edit-001": "p50k_edit",
    "text-similarity-davinci-001": _R50K, "text-similarity-curie-001": _R50K,
    "text-similarity-babbage-001": _R50K, "text-similarity-ada-001": _R50K,
    "text-search-davinci-doc-001": _R50K, "text-search-curie-doc-001": _R50K,
    "text-search-babbage-doc-001": _R50K, "text-search-ada-doc-001": _R50K,
    "code-search-babbage-code-001": _R50K, "code-search-ada-code-001": _R50K,
    # open source
    "gpt2": "gpt2", "gpt-2": "gpt2",
}


def encoding_name_for_model(model_name: str) -> str:
    """The name of the encoding ``model_name`` uses; ``KeyError`` (as in
    tiktoken) for a model neither table knows.

    >>> encoding_name_for_model("gpt-4"), encoding_name_for_model("gpt-oss-120b")
    ('cl100k_base', 'o200k_harmony')
    """
    if not isinstance(model_name, str):
        raise TypeError(f"a model name is a str, not {type(model_name).__name__}")
    found = MODEL_TO_ENCODING.get(model_name)
    if found is not None:
        return found
    for prefix, name in MODEL_PREFIX_TO_ENCODING.items():
        if model_name.startswith(prefix):
            return name
    raise KeyError(f"Could not automatically map {model_name} to a tokeniser. Use "
                   "fasttok.get_encoding to name the encoding you expect.")


def encoding_for_model(model_name: str):
    """The :class:`~fasttok.Encoding` ``model_name`` uses (see :func:`encoding_name_for_model`).

    >>> encoding_for_model("gpt-4o").name                  # doctest: +SKIP
    'o200k_base'
    """
    from fasttok import registry

    return registry.resolve("fasttok:get_encoding")(encoding_name_for_model(model_name))
