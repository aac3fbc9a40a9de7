"""The options of ``tokenizers``' ByteLevel, one object in its three roles.

``tokenizer.json`` writes the same three fields for the ByteLevel
pre-tokenizer, post-processor and decoder, and ``tokenizers`` keeps them in
one struct; each role reads the ones it needs (the pre-tokenizer the prefix
space and the regex, the post-processor ``trim_offsets`` and the prefix
space, the decoder none).

>>> ByteLevelOptions(trim_offsets=False)
ByteLevelOptions(add_prefix_space=True, trim_offsets=False, use_regex=True)
"""

from __future__ import annotations

__all__ = ["ByteLevelOptions"]


class ByteLevelOptions:
    """``add_prefix_space``, ``trim_offsets`` and ``use_regex``, with ``tokenizers``' defaults.

    >>> ByteLevelOptions().use_regex
    True
    """

    __slots__ = ("add_prefix_space", "trim_offsets", "use_regex")

    def __init__(self, add_prefix_space: bool = True, trim_offsets: bool = True,
                 use_regex: bool = True) -> None:
        self.add_prefix_space = add_prefix_space
        self.trim_offsets = trim_offsets
        self.use_regex = use_regex

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(add_prefix_space={self.add_prefix_space}, "
                f"trim_offsets={self.trim_offsets}, use_regex={self.use_regex})")
