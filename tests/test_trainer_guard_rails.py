"""The trainers' guard rails (issue 27): a vocabulary not of the size asked
is warned about, WordPiece always spells its unknown token, every file the
trainers write reads back through ``fasttok.load`` with the trained ids
(``vocab.txt`` as tokenizers' ``BertWordPieceTokenizer`` reads it), and an
empty special token is refused."""

from __future__ import annotations

import warnings

import pytest

import fasttok
from fasttok.cli import main
from fasttok.loaders.hf_tokenizer_json_writer import write_document
from fasttok.loaders.vocab_txt_writer import write_vocab_txt
from fasttok.trainers.bpe import train_bpe
from fasttok.trainers.wordpiece import train_wordpiece

BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
CORPUS = ["The quick brown fox jumps over the lazy dog.",
          "Élan vital: naïve café owners don't queue; they wait.",
          "Tokenizers split words into pieces, and pieces into merges!",
          "東京は日本の首都です。 数字 12345 and 67.89",
          "lower lowest newer newest wider widest"] * 4
PROBES = ["The quick café of Tokyo 東京 waits: 12,345 pieces!", "Zebra xylophone ÑANDÚ",
          "newest widest lowest", "", "  spaced   out  ", "[CLS] a [MASK] b [SEP]"]


def caught_warnings(call) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


def test_wordpiece_short_of_vocab_size_warns_how_many_tokens_and_why():
    trained = []
    messages = caught_warnings(lambda: trained.append(train_wordpiece(CORPUS, vocab_size=30000)))
    size = len(trained[0].vocab)
    assert size < 30000 and len(messages) == 1
    assert messages[0].startswith(f"learned {size} tokens of the 30000 asked (vocab_size=30000): ")
    assert messages[0].endswith("merges, then the texts had no pair left to merge")


def test_wordpiece_alphabet_past_vocab_size_warns_that_no_merge_was_learned():
    trained = []
    messages = caught_warnings(lambda: trained.append(train_wordpiece(CORPUS, vocab_size=10)))
    assert len(trained[0].vocab) > 10
    assert len(messages) == 1
    assert messages[0].startswith(f"learned {len(trained[0].vocab)} tokens, past the 10 asked")
    assert "no merge" in messages[0] and "limit_alphabet" in messages[0]


def test_bpe_short_of_vocab_size_warns_how_many_tokens_and_why():
    messages = caught_warnings(lambda: train_bpe(["hello"], vocab_size=1000))
    assert messages == ["learned 260 tokens of the 1000 asked (vocab_size=1000): 4 merges, "
                        "then the texts had no pair left to merge"]


def test_bpe_with_min_frequency_says_no_pair_was_frequent_enough():
    messages = caught_warnings(lambda: train_bpe(["hello"], vocab_size=1000, min_frequency=2))
    assert messages == ["learned 256 tokens of the 1000 asked (vocab_size=1000): 0 merges, "
                        "then no pair left occurred min_frequency=2 times or more"]


def test_training_to_the_size_asked_warns_nothing():
    assert caught_warnings(lambda: train_bpe(CORPUS, vocab_size=270)) == []
    assert caught_warnings(lambda: train_bpe(CORPUS, vocab_size=256)) == []
    assert caught_warnings(lambda: train_wordpiece(CORPUS, vocab_size=150)) == []


def test_the_warning_names_the_line_that_called_fasttok():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fasttok.train(["ab ab"], model="wordpiece", vocab_size=30)
    assert [w.filename for w in caught] == [__file__]


def test_cli_prints_the_warning_in_the_options_words(tmp_path, capsys):
    docs = tmp_path / "docs.txt"
    docs.write_text("\n".join(CORPUS), encoding="utf-8")
    assert main(["train", str(docs), "--model", "wordpiece", "--vocab-size", "30000",
                 "--out", str(tmp_path / "vocab.txt")]) == 0
    err = capsys.readouterr().err
    assert "warning: learned " in err and "(--vocab-size=30000)" in err


def test_wordpiece_without_unk_adds_it_after_the_special_tokens():
    assert train_wordpiece(CORPUS, vocab_size=100).vocab["[UNK]"] == 0
    vocab = train_wordpiece(CORPUS, vocab_size=100, special_tokens=["[CLS]", "[SEP]"]).vocab
    assert (vocab["[CLS]"], vocab["[SEP]"], vocab["[UNK]"]) == (0, 1, 2)
    assert train_wordpiece(CORPUS, vocab_size=100, special_tokens=BERT_SPECIALS).vocab["[UNK]"] == 1


def test_wordpiece_trained_without_unk_writes_a_tokenizer_json_fasttok_loads_with_tokenizers_ids(
        tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    trained = train_wordpiece(CORPUS, vocab_size=120)
    path = tmp_path / "tokenizer.json"
    write_document(path, trained.document())
    theirs = tokenizers.Tokenizer.from_file(str(path))
    ours = fasttok.load(path)
    for text in PROBES:
        assert ours.encode(text) == theirs.encode(text, add_special_tokens=False).ids, text


def test_vocab_txt_loads_with_bert_wordpiece_tokenizers_ids(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    trained = train_wordpiece(CORPUS, vocab_size=120, special_tokens=BERT_SPECIALS)
    path = tmp_path / "vocab.txt"
    write_vocab_txt(path, trained.vocab)
    theirs = tokenizers.BertWordPieceTokenizer(str(path))
    ours = fasttok.load(path)
    for text in PROBES:
        assert ours.encode(text, allowed_special="all") == \
            theirs.encode(text, add_special_tokens=False).ids, text


def test_vocab_txt_of_another_name_loads_with_format_and_is_not_claimed_without(tmp_path):
    path = tmp_path / "wp.txt"
    trained = train_wordpiece(CORPUS, vocab_size=120)
    write_vocab_txt(path, trained.vocab)
    with pytest.raises(fasttok.UnknownEncodingError, match="vocab_txt"):
        fasttok.load(path)
    ours = fasttok.Encoding.from_vocabulary(trained.vocabulary())
    assert fasttok.load(path, format="vocab_txt").encode("The Fox") == ours.encode("The Fox")
    assert fasttok.load(path, format="vocab_txt", lowercase=False).encode("The Fox") == \
        [trained.vocab["[UNK]"]] * 2


def test_vocab_txt_without_its_unknown_token_is_refused_naming_unk_token(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("<unk>\nthe\n##s\n", encoding="utf-8")
    with pytest.raises(fasttok.FasttokError, match=r"'\[UNK\]' is not in the file.*unk_token="):
        fasttok.load(path)
    assert fasttok.load(path, unk_token="<unk>").encode("the thes") == [1, 1, 2]


# every file `fasttok train` writes: model, --out name, the trainer's options
WRITTEN = [("bpe", "v.tiktoken", ["--special-token", "<|end|>"]),
           ("bpe", "tokenizer.json", ["--special-token", "<|end|>"]),
           ("bpe", "v.gguf", ["--special-token", "<|end|>"]),
           ("bpe", "hf.json", ["--flavour", "hf", "--special-token", "<|end|>"]),
           ("wordpiece", "vocab.txt", ["--special-token", "[UNK]"]),
           ("wordpiece", "tokenizer.json", []),
           ("unigram", "v.model", [])]


@pytest.mark.parametrize("model,out,options", WRITTEN, ids=[f"{m}-{o}" for m, o, _ in WRITTEN])
def test_every_written_format_reads_back_with_the_trained_ids(tmp_path, model, out, options):
    docs = tmp_path / "docs.txt"
    docs.write_text("\n".join(CORPUS), encoding="utf-8")
    size = {"bpe": 300, "wordpiece": 120, "unigram": 80}[model]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["train", str(docs), "--model", model, "--vocab-size", str(size),
                     "--out", str(tmp_path / out), "--quiet", *options]) == 0
        flavour = options[options.index("--flavour") + 1] if "--flavour" in options else "rustbpe"
        specials = [options[i + 1] for i, o in enumerate(options) if o == "--special-token"]
        trained = fasttok.train(CORPUS, model=model, vocab_size=size, flavour=flavour,
                                special_tokens=specials)
    if out.endswith(".tiktoken"):
        loaded = fasttok.load(tmp_path / out, pat_str=trained.vocabulary.pattern,
                              special_tokens=dict(trained.vocabulary.special_tokens))
    else:
        loaded = fasttok.load(tmp_path / out)
    for text in PROBES:
        assert loaded.encode(text, allowed_special="all") == \
            trained.encode(text, allowed_special="all"), text


@pytest.mark.parametrize("call", [
    lambda: train_bpe(CORPUS, vocab_size=300, special_tokens=["<|end|>", ""]),
    lambda: train_bpe(CORPUS, vocab_size=300, special_tokens=[""], flavour="hf"),
    lambda: train_wordpiece(CORPUS, vocab_size=100, special_tokens=[""]),
], ids=["bpe", "bpe-hf", "wordpiece"])
def test_an_empty_special_token_is_refused(call):
    with pytest.raises(fasttok.FasttokError, match="special token .* is empty"):
        call()


@pytest.mark.parametrize("model,out", [("bpe", "v.tiktoken"), ("wordpiece", "vocab.txt")])
def test_cli_refuses_an_empty_special_token_before_writing(tmp_path, capsys, model, out):
    docs = tmp_path / "docs.txt"
    docs.write_text("\n".join(CORPUS), encoding="utf-8")
    assert main(["train", str(docs), "--model", model, "--vocab-size", "300",
                 "--special-token", "", "--out", str(tmp_path / out)]) != 0
    assert "special token 1 of 1 is empty" in capsys.readouterr().err
    assert not (tmp_path / out).exists()
