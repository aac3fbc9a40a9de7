"""Reader of BERT's ``vocab.txt`` as ``tokenizers.BertWordPieceTokenizer(vocab)`` reads it.

The file is one WordPiece token per line, line *n* (from 0) the token of id
*n*, each line's trailing whitespace trimmed; a token on two lines keeps the
later id (``WordPiece.from_file``'s rule). Everything else is the reader's
setting, and these are ``BertWordPieceTokenizer``'s defaults: BERT's
normalizer (``clean_text``, ``handle_chinese_chars``, accents stripped where
``lowercase``), BERT's pre-tokenizer, the ``##`` prefix, words of more than
100 characters read as ``[UNK]``, and ``[UNK]``, ``[SEP]``, ``[CLS]``,
``[PAD]``, ``[MASK]`` special where the file holds them. The record is that
of the equivalent ``tokenizer.json`` (no post-processor: ``encode`` adds no
``[CLS]``/``[SEP]``, as ``encode(text, add_special_tokens=False)``).

>>> doc = vocab_txt_document("[UNK]\\nhello\\n##s\\n", "vocab.txt")
>>> doc["model"]["vocab"], [t["content"] for t in doc["added_tokens"]]
({'[UNK]': 0, 'hello': 1, '##s': 2}, ['[UNK]'])
"""

from __future__ import annotations

import os
from typing import Union

from fasttok.errors import VocabularyFileError
from fasttok.loaders.hf_tokenizer_json import tokenizer_json_record
from fasttok.loaders.hf_tokenizer_json_writer import wordpiece_tokenizer_json
from fasttok.vocab import Vocabulary

__all__ = ["load_vocab_txt_file", "vocab_txt_document"]

# the tokens BertWordPieceTokenizer makes special when the file holds them
BERT_SPECIAL_TOKENS = ("[UNK]", "[SEP]", "[CLS]", "[PAD]", "[MASK]")
# Rust's char::is_whitespace (the White_Space property), which tokenizers
# trims each line's end by: Python's str.isspace adds U+001C to U+001F
_WHITE_SPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def vocab_txt_document(text: str, source: str, *, lowercase: bool = True,
                       unk_token: str = "[UNK]") -> dict:
    """The ``tokenizer.json`` document ``BertWordPieceTokenizer`` builds from
    a ``vocab.txt`` holding ``text``; ``source`` names it in errors.

    >>> vocab_txt_document("hello\\n", "v.txt")
    Traceback (most recent call last):
    fasttok.errors.VocabularyFileError: v.txt: '[UNK]' is not in the file: WordPiece reads every character no token spells as it; pass unk_token= naming the file's unknown token
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    vocab = {line.rstrip(_WHITE_SPACE): number for number, line in enumerate(lines)}
    if unk_token not in vocab:
        raise VocabularyFileError(source, f"{unk_token!r} is not in the file: WordPiece reads "
                                  "every character no token spells as it; pass unk_token= "
                                  "naming the file's unknown token")
    normalizer = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                  "strip_accents": None, "lowercase": lowercase}
    doc = wordpiece_tokenizer_json(vocab, 0, normalizer, {"type": "BertPreTokenizer"},
                                   unk_token)
    specials = sorted({vocab[t] for t in (unk_token, *BERT_SPECIAL_TOKENS) if t in vocab})
    by_id = {i: t for t, i in vocab.items()}
    doc["added_tokens"] = [{"id": i, "content": by_id[i], "single_word": False, "lstrip": False,
                            "rstrip": False, "normalized": False, "special": True}
                           for i in specials]
    return doc


def load_vocab_txt_file(path: Union[str, "os.PathLike[str]"], *, lowercase: bool = True,
                        unk_token: str = "[UNK]") -> Vocabulary:
    """The record of the ``vocab.txt`` at ``path`` as
    ``BertWordPieceTokenizer(path, lowercase=lowercase, unk_token=unk_token)``
    encodes (what ``fasttok train --model wordpiece --out vocab.txt`` writes).

    >>> import os, tempfile; p = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(p, "w").write("[UNK]\\nhi\\n")
    >>> load_vocab_txt_file(p).model
    'hf_pipeline'
    """
    source = os.fspath(path)
    with open(source, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise VocabularyFileError(source, f"not UTF-8 text ({exc.reason})",
                                  offset=exc.start) from None
    name = os.path.basename(source)
    return tokenizer_json_record(vocab_txt_document(text, source, lowercase=lowercase,
                                                    unk_token=unk_token), source, name=name)
