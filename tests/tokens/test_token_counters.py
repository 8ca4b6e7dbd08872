"""Real tokenizers (tiktoken BPE files, a Hugging Face tokenizer.json) and the registry."""

from __future__ import annotations

import socket
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import precis
from precis.errors import ConfigError, MissingDependencyError, PrecisWarning, TokenizerError
from precis.tokens import (
    EstimatorCounter,
    HFTokenizerCounter,
    TiktokenCounter,
    available_counters,
    counter_names,
    get_counter,
)

QWEN_EXAMPLE = "大型语言模型的分词器会把中文句子切分成若干个词元，然后再映射为整数编号。"


@pytest.fixture
def tokenizer_dir(shared_data: Path) -> Path:
    folder = shared_data / "tokenizers"
    for name in ("cl100k_base.tiktoken", "o200k_base.tiktoken", "qwen3/tokenizer.json"):
        if not (folder / name).is_file():
            pytest.skip(f"{folder / name} not found")
    return folder


@pytest.fixture
def no_tokenizer_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point every place precis looks for a BPE file at one empty directory."""
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PRECIS_TOKENIZER_DIR", str(empty))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(empty))
    monkeypatch.setenv("PRECIS_HOME", str(empty))
    return empty


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("precis tried to open a network connection")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


# --- tiktoken -------------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_tiktoken_known_counts(tokenizer_dir: Path, encoding: str, no_network: None) -> None:
    counter = TiktokenCounter(encoding, path=tokenizer_dir / f"{encoding}.tiktoken")
    assert counter.name == encoding
    assert counter.count("") == 0
    assert counter.count("hello world") == 2  # "hello", " world"
    # digits are split in groups of three, and every 3-digit group is one token
    assert counter.count("1234567") == 3  # "123", "456", "7"
    # special-token text is counted as ordinary text, never as the special token
    assert counter.count("<|endoftext|>") > 1


def test_tiktoken_finds_the_file_in_precis_tokenizer_dir(
    tokenizer_dir: Path, monkeypatch: pytest.MonkeyPatch, no_network: None
) -> None:
    monkeypatch.setenv("PRECIS_TOKENIZER_DIR", str(tokenizer_dir))
    counter = get_counter("cl100k_base")
    assert counter.count("hello world") == 2
    assert get_counter("cl100k_base") is counter  # cached
    assert isinstance(counter, TiktokenCounter)
    assert counter.path == tokenizer_dir / "cl100k_base.tiktoken"


def test_tiktoken_finds_the_file_in_tiktokens_cache(
    tokenizer_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_network: None
) -> None:
    # tiktoken names cached files by the SHA-1 of the download URL (see the data README)
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    (cache / "9b5ad71b2ce5302211f9c61530b329a4922fc6a4").symlink_to(
        tokenizer_dir / "cl100k_base.tiktoken"
    )
    monkeypatch.delenv("PRECIS_TOKENIZER_DIR", raising=False)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    assert get_counter("cl100k_base").count("hello world") == 2


def test_tiktoken_path_forms(tokenizer_dir: Path, no_tokenizer_files: Path) -> None:
    file = tokenizer_dir / "o200k_base.tiktoken"
    assert get_counter("o200k_base", path=file).count("hello world") == 2
    assert get_counter("o200k_base", path=tokenizer_dir).count("hello world") == 2
    assert get_counter(f"o200k_base:{file}").count("hello world") == 2
    with pytest.raises(ConfigError, match="not both"):
        get_counter(f"o200k_base:{file}", path=file)


def test_missing_bpe_file_explains_where_it_looked(
    no_tokenizer_files: Path, no_network: None
) -> None:
    with pytest.raises(TokenizerError) as info:
        get_counter("o200k_base")
    message = str(info.value)
    assert "could not download it" in message and "\n" not in message
    assert str(no_tokenizer_files / "o200k_base.tiktoken") in message
    assert "PRECIS_TOKENIZER_DIR" in message
    assert "tiktoken's cache" in message
    assert "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken" in message
    assert "estimate:o200k" in message


def test_missing_explicit_path(tmp_path: Path, no_network: None) -> None:
    with pytest.raises(TokenizerError, match="given path: no such file"):
        TiktokenCounter("cl100k_base", path=tmp_path / "nope.tiktoken")


def test_wrong_bpe_file_is_refused(tokenizer_dir: Path) -> None:
    with pytest.raises(TokenizerError, match="not the cl100k_base BPE file"):
        TiktokenCounter("cl100k_base", path=tokenizer_dir / "o200k_base.tiktoken")


def test_unsupported_encoding() -> None:
    with pytest.raises(ConfigError, match="cl100k_base, o200k_base"):
        TiktokenCounter("p50k_base")


def test_missing_tiktoken_module(
    tokenizer_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    with pytest.raises(MissingDependencyError) as info:
        TiktokenCounter("cl100k_base", path=tokenizer_dir / "cl100k_base.tiktoken")
    assert info.value.package == "tiktoken"
    assert info.value.extra == "tiktoken"
    assert "pip install 'precis[tiktoken]'" in str(info.value)
    # through the registry too (a path never used before, so nothing is cached)
    (tmp_path / "cl100k_base.tiktoken").symlink_to(tokenizer_dir / "cl100k_base.tiktoken")
    with pytest.raises(MissingDependencyError):
        get_counter("cl100k_base", path=tmp_path)
    monkeypatch.setenv("PRECIS_TOKENIZER_DIR", str(tokenizer_dir))
    assert "cl100k_base" not in available_counters()


# --- Hugging Face tokenizer.json ------------------------------------------------------------


def test_qwen_readme_example(tokenizer_dir: Path) -> None:
    counter = get_counter(f"hf:{tokenizer_dir / 'qwen3' / 'tokenizer.json'}")
    # the data README calls it "the 37-character sentence"; it has 36 code points
    assert len(QWEN_EXAMPLE) == 36
    assert counter.count(QWEN_EXAMPLE) == 26
    assert counter.count("") == 0
    # a directory holding tokenizer.json works too, and gives the same counter name
    by_dir = HFTokenizerCounter(tokenizer_dir / "qwen3")
    assert by_dir.name == counter.name
    # special-token text counts as text ("<|", "im", "_end", "|>"), not as one special token
    assert counter.count("<|im_end|>") > 1


def test_batches_agree_with_single_counts(tokenizer_dir: Path) -> None:
    texts = [f"第{i}条消息 message number {i} 🙂" * (i % 5 + 1) for i in range(80)]
    for counter in (
        TiktokenCounter("o200k_base", path=tokenizer_dir),
        HFTokenizerCounter(tokenizer_dir / "qwen3" / "tokenizer.json"),
        EstimatorCounter("qwen"),
    ):
        assert counter.count_batch(texts) == [counter.count(t) for t in texts], counter.name


def test_hf_bad_inputs(tmp_path: Path) -> None:
    with pytest.raises(TokenizerError, match="no such file"):
        HFTokenizerCounter(tmp_path / "missing.json")
    bad = tmp_path / "tokenizer.json"
    bad.write_text('{"not": "a tokenizer"}', encoding="utf-8")
    with pytest.raises(TokenizerError, match=r"not a Hugging Face tokenizer\.json"):
        HFTokenizerCounter(bad)
    with pytest.raises(ConfigError, match=r"hf:/path/to/tokenizer\.json"):
        get_counter("hf")


def test_missing_tokenizers_module(
    tokenizer_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    with pytest.raises(MissingDependencyError) as info:
        HFTokenizerCounter(tokenizer_dir / "qwen3" / "tokenizer.json")
    assert info.value.package == "tokenizers"
    assert "pip install 'precis[hf]'" in str(info.value)


def test_lone_surrogates_do_not_crash(tokenizer_dir: Path) -> None:
    text = "abc\ud800def"
    for counter in (
        TiktokenCounter("cl100k_base", path=tokenizer_dir),
        HFTokenizerCounter(tokenizer_dir / "qwen3"),
        EstimatorCounter(),
    ):
        assert counter.count(text) >= 2, counter.name


# --- registry ------------------------------------------------------------------------------


def test_default_is_the_estimator_even_when_real_tokenizers_exist(
    tokenizer_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRECIS_TOKENIZER_DIR", str(tokenizer_dir))
    counter = get_counter()
    assert isinstance(counter, EstimatorCounter)
    assert counter.name == "estimate:o200k"
    assert get_counter("estimate") is counter
    assert precis.get_counter is get_counter


def test_estimator_specs() -> None:
    assert get_counter("estimate:cl100k").name == "estimate:cl100k"
    assert get_counter("estimate:qwen").name == "estimate:qwen"
    with pytest.raises(ConfigError, match="cl100k, o200k, qwen"):
        get_counter("estimate:llama")
    with pytest.raises(ConfigError, match="reads no file"):
        get_counter("estimate", path="/tmp/x")


@pytest.mark.parametrize("spec", ["gpt-4", "", "  ", "tokenizer.json"])
def test_unknown_spec_lists_valid_names(spec: str) -> None:
    with pytest.raises(ConfigError) as info:
        get_counter(spec)
    for name in ("estimate", "estimate:qwen", "cl100k_base", "o200k_base", "hf:PATH"):
        assert name in str(info.value)


def test_tokenizer_json_spec_gets_a_hint() -> None:
    with pytest.raises(ConfigError, match="hf:PATH"):
        get_counter("/models/qwen/tokenizer.json")


def test_counter_names() -> None:
    assert counter_names() == [
        "estimate", "estimate:cl100k", "estimate:o200k", "estimate:qwen",
        "cl100k_base", "o200k_base", "hf:PATH", "auto", "auto:cl100k_base",
    ]


def test_auto_counts_exactly_when_tiktoken_can(tokenizer_dir: Path, no_network: None,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRECIS_TOKENIZER_DIR", str(tokenizer_dir))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning when the real tokenizer loads
        counter = get_counter("auto")
    assert counter.name == "o200k_base" and counter.count("hello world") == 2
    assert get_counter("auto:cl100k_base").name == "cl100k_base"


def test_auto_falls_back_to_the_estimator_with_a_warning_offline(
    no_tokenizer_files: Path, no_network: None
) -> None:
    """issue 18: README's snippet failed on a plain install; "auto" works everywhere."""
    with pytest.warns(PrecisWarning, match="could not download it; counting with the "
                                           r"calibrated estimator \(estimate:o200k"):
        counter = get_counter("auto")
    assert counter.name == "estimate:o200k"
    with pytest.raises(ConfigError, match="auto takes a tiktoken encoding"):
        get_counter("auto:qwen")


def test_auto_says_when_tiktoken_is_not_installed(monkeypatch: pytest.MonkeyPatch,
                                                  no_tokenizer_files: Path) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # hides the module: import fails
    with pytest.warns(PrecisWarning, match=r"pip install 'precis\[tiktoken\]'"):
        assert get_counter("auto").name == "estimate:o200k"
    with pytest.raises(MissingDependencyError, match=r"precis\[tiktoken\]"):
        get_counter("o200k_base")


def test_available_counters(
    tokenizer_dir: Path, no_tokenizer_files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare = available_counters()
    assert {"estimate", "estimate:cl100k", "estimate:o200k", "estimate:qwen"} <= set(bare)
    assert "cl100k_base" not in bare and "o200k_base" not in bare
    monkeypatch.setenv("PRECIS_TOKENIZER_DIR", str(tokenizer_dir))
    found = available_counters()
    assert "cl100k_base" in found and "o200k_base" in found
    qwen = f"hf:{tokenizer_dir / 'qwen3' / 'tokenizer.json'}"
    assert qwen in found
    for spec in found:  # everything listed really works
        assert get_counter(spec).count("hello world") >= 1


def test_importing_precis_loads_no_tokenizer_backend() -> None:
    code = (
        "import sys, precis, precis.tokens; "
        "print(sorted(m for m in ('tiktoken', 'tokenizers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
