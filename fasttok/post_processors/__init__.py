"""Post-processors: what ``add_special_tokens=True`` puts around the ids.

Two faces. The ids-only one of the tiktoken-style API, :mod:`special_ids`
(ids -> ids with BOS/EOS), which every post-processor below also gives
(``ids_only()``). And Hugging Face ``tokenizers``' own: :mod:`encoding` (its
``Encoding``), :mod:`template`, :mod:`bert`, :mod:`roberta`,
:mod:`byte_level`, :mod:`sequence` over :mod:`processor`; :mod:`truncation`,
:mod:`padding`, run in ``tokenizers``' order by :mod:`pipeline`; the
post-processors are read from a ``tokenizer.json`` by
:mod:`fasttok.loaders.hf_stage_json`, truncation and padding by :mod:`hf_json`.

>>> from fasttok.post_processors.special_ids import AddSpecialIds
>>> AddSpecialIds(head=(1,), tail=(2,))([5, 6])
[1, 5, 6, 2]
"""
