"""The shared BPE merge loop (compiled). It has no Python-level API: other
compiled modules use it through ``_bpe.pxd``; Python code reaches it through
:class:`fasttok.Encoding`."""
