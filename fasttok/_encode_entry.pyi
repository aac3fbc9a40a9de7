"""``Encoding.encode``, compiled: its two common calls reach the model's compiled entry."""

from typing import Any, Optional

NONE_ALLOWED: frozenset[str]

class EncodeMethod:
    def __get__(self, instance: Any, owner: Any) -> Any: ...

class EncodeEntry:
    encoding: Any
    def __init__(self, encoding: Any) -> None: ...
    def __call__(self, text: str, *, allowed_special: Any = ..., disallowed_special: Any = ...,
                 add_special_tokens: bool = ..., sample: bool = ..., alpha: float = ...,
                 nbest_size: int = ..., seed: Optional[int] = ...) -> list[int]: ...

class BoundEntry:
    call: Any
    def __init__(self, call: Any, encoding: Any, name: str) -> None: ...
    @property
    def compiled(self) -> bool: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

def encode(self: Any, text: str, *, allowed_special: Any = ..., disallowed_special: Any = ...,
           add_special_tokens: bool = ..., sample: bool = ..., alpha: float = ...,
           nbest_size: int = ..., seed: Optional[int] = ...) -> list[int]: ...
