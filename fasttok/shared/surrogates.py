"""Text with lone surrogates, repaired as tiktoken repairs it before encoding.

A Python ``str`` may hold surrogate code points that pair into nothing;
such text has no UTF-8. tiktoken's ``encode`` joins the pairs that do pair
and turns the rest into U+FFFD, and so does fasttok's ``Encoding`` for every
format whose core does not do it already.

>>> repair_surrogates("x\\ud800y"), repair_surrogates("\\ud83d\\ude00")
('x\ufffdy', '😀')
"""

from __future__ import annotations

__all__ = ["has_utf8", "repair_surrogates", "repaired_starts"]


def has_utf8(text: str) -> bool:
    """Whether ``text`` has UTF-8: it holds no lone surrogate.

    >>> has_utf8("\\u00e9\\U0001f600"), has_utf8("x\\ud800")
    (True, False)
    """
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def repair_surrogates(text: str) -> str:
    """``text`` itself when it has UTF-8, else with its lone surrogates replaced.

    >>> repair_surrogates("plain") == "plain"
    True
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    if not has_utf8(text):
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def repaired_starts(text: str) -> list:
    """Where in ``text`` each character of :func:`repair_surrogates` of it
    begins (a surrogate pair is one character there), and its end: an index
    counted in the repaired text, mapped back.

    >>> repaired_starts("a\\ud83d\\ude00b\\ud800")
    [0, 1, 3, 4, 5]
    """
    starts = []
    i, n = 0, len(text)
    while i < n:
        starts.append(i)
        pair = "\ud800" <= text[i] < "\udc00" and i + 1 < n and "\udc00" <= text[i + 1] < "\ue000"
        i += 2 if pair else 1
    starts.append(n)
    return starts
