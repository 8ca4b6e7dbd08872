"""A BERT encoder in plain numpy (float32), for sentence-embedding models such as MiniLM.

:func:`encode` runs the embeddings, the transformer layers and mean pooling over a padded
batch of token ids; matrix products go to BLAS, everything else is whole-array numpy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from precis.errors import EmbeddingError

__all__ = ["BertConfig", "BertWeights", "encode"]

F32 = npt.NDArray[np.float32]

# Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7), rewritten for Phi(x) = (1 + erf(x/sqrt2)) / 2.
_P = np.float32(0.3275911 / np.sqrt(2.0))
_GELU_ROWS = 256
_A = [np.float32(a) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)]


@dataclass(frozen=True)
class BertConfig:
    """The shape of the encoder (from the model's ``config.json``)."""

    hidden: int = 384
    heads: int = 12
    layers: int = 6
    intermediate: int = 1536
    eps: float = 1e-12
    max_positions: int = 512

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str) -> BertConfig:
        act = data.get("hidden_act", "gelu")
        if act != "gelu":
            raise EmbeddingError(f"hidden_act {act!r} is not supported (only 'gelu')", where=where)
        try:
            config = cls(
                hidden=int(data.get("hidden_size", cls.hidden)),
                heads=int(data.get("num_attention_heads", cls.heads)),
                layers=int(data.get("num_hidden_layers", cls.layers)),
                intermediate=int(data.get("intermediate_size", cls.intermediate)),
                eps=float(data.get("layer_norm_eps", cls.eps)),
                max_positions=int(data.get("max_position_embeddings", cls.max_positions)),
            )
        except (TypeError, ValueError):
            raise EmbeddingError("config.json has a non-numeric size", where=where) from None
        if min(config.hidden, config.heads, config.layers) < 1 or config.hidden % config.heads:
            raise EmbeddingError("config.json: hidden_size must divide by heads", where=where)
        return config


@dataclass(frozen=True)
class _Layer:
    qkv: F32  # (hidden, 3*hidden), the query part pre-scaled by 1/sqrt(head size)
    qkv_b: F32
    out: F32
    out_b: F32
    ln1: tuple[F32, F32]
    up: F32
    up_b: F32
    down: F32
    down_b: F32
    ln2: tuple[F32, F32]


@dataclass(frozen=True)
class BertWeights:
    """The tensors of one model, laid out for :func:`encode` (linear weights as ``in x out``)."""

    config: BertConfig
    word: F32
    position: F32
    token_type: F32
    ln: tuple[F32, F32]
    layers: tuple[_Layer, ...]

    @classmethod
    def from_tensors(
        cls, tensors: Mapping[str, np.ndarray[Any, Any]], config: BertConfig, where: str
    ) -> BertWeights:
        """Check shapes and rearrange; ``tensors`` names as in Hugging Face ``BertModel``."""
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in tensors else ""
        h, i = config.hidden, config.intermediate

        def get(name: str, *shape: int) -> F32:
            full = prefix + name
            if full not in tensors:
                raise EmbeddingError(f"tensor {full!r} is missing", where=where)
            array = tensors[full]
            if array.dtype.kind != "f" or (shape and array.shape != shape):
                raise EmbeddingError(
                    f"tensor {full!r} has shape {list(array.shape)} of {array.dtype}, "
                    f"expected {list(shape)} of floats",
                    where=where,
                )
            return array.astype(np.float32, copy=False)

        def linear(name: str, n_in: int, n_out: int) -> tuple[F32, F32]:
            weight = get(f"{name}.weight", n_out, n_in)
            return np.ascontiguousarray(weight.T), get(f"{name}.bias", n_out)

        def norm(name: str) -> tuple[F32, F32]:
            return get(f"{name}.weight", h), get(f"{name}.bias", h)

        scale = np.float32(1.0 / np.sqrt(h // config.heads))
        layers = []
        for n in range(config.layers):
            base = f"encoder.layer.{n}."
            q, q_b = linear(base + "attention.self.query", h, h)
            k, k_b = linear(base + "attention.self.key", h, h)
            v, v_b = linear(base + "attention.self.value", h, h)
            out, out_b = linear(base + "attention.output.dense", h, h)
            up, up_b = linear(base + "intermediate.dense", h, i)
            down, down_b = linear(base + "output.dense", i, h)
            layers.append(
                _Layer(
                    qkv=np.ascontiguousarray(np.concatenate([q * scale, k, v], axis=1)),
                    qkv_b=np.concatenate([q_b * scale, k_b, v_b]),
                    out=out, out_b=out_b, ln1=norm(base + "attention.output.LayerNorm"),
                    up=up, up_b=up_b, down=down, down_b=down_b,
                    ln2=norm(base + "output.LayerNorm"),
                )
            )
        word = get("embeddings.word_embeddings.weight")
        if word.ndim != 2 or word.shape[1] != h:
            raise EmbeddingError(f"word embeddings have shape {list(word.shape)}", where=where)
        return cls(
            config=config,
            word=word,
            position=get("embeddings.position_embeddings.weight", config.max_positions, h),
            token_type=np.array(get("embeddings.token_type_embeddings.weight")[0]),
            ln=norm("embeddings.LayerNorm"),
            layers=tuple(layers),
        )


def encode(weights: BertWeights, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.bool_]) -> F32:
    """Mean-pooled last hidden states, shape ``(batch, hidden)``, of padded ``ids``.

    ``mask`` is True on real tokens; every row needs at least one.
    """
    config = weights.config
    batch, length = ids.shape
    h, heads = config.hidden, config.heads
    x = weights.word[ids.ravel()]
    x3 = x.reshape(batch, length, h)
    x3 += weights.position[:length]
    x += weights.token_type
    _layer_norm(x, weights.ln, config.eps)
    bias = np.where(mask, np.float32(0), np.float32(-1e30)).astype(np.float32)[:, None, None, :]
    for layer in weights.layers:
        qkv = (x @ layer.qkv).reshape(batch, length, 3, heads, h // heads)
        qkv += layer.qkv_b.reshape(3, heads, h // heads)
        q, k, v = (qkv[:, :, j].transpose(0, 2, 1, 3) for j in range(3))
        scores = q @ k.transpose(0, 1, 3, 2)  # (batch, heads, length, length)
        scores += bias
        _softmax(scores)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * length, h)
        attended = context @ layer.out
        attended += layer.out_b
        attended += x
        x = _layer_norm(attended, layer.ln1, config.eps)
        hidden: F32 = x @ layer.up
        hidden += layer.up_b
        _gelu(hidden)
        out: F32 = hidden @ layer.down
        out += layer.down_b
        out += x
        x = _layer_norm(out, layer.ln2, config.eps)
    weight = mask.astype(np.float32)
    pooled: F32 = np.matmul(weight[:, None, :], x.reshape(batch, length, h))[:, 0]
    pooled /= weight.sum(axis=1, keepdims=True)
    return pooled


def _layer_norm(x: F32, params: tuple[F32, F32], eps: float) -> F32:
    """In place over the last axis of the 2-D ``x``."""
    x -= x.mean(axis=1, keepdims=True)
    variance = np.einsum("ij,ij->i", x, x)
    variance /= np.float32(x.shape[1])
    variance += np.float32(eps)
    x *= (1 / np.sqrt(variance))[:, None]
    x *= params[0]
    x += params[1]
    return x


def _softmax(scores: F32) -> None:
    """In place over the last axis."""
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)


def _gelu(x: F32) -> None:
    """Exact (erf) GELU in place, ``x * Phi(x)``, in row blocks that stay in cache."""
    for start in range(0, x.shape[0], _GELU_ROWS):
        _gelu_block(x[start : start + _GELU_ROWS])


def _gelu_block(x: F32) -> None:
    t = np.abs(x)
    t *= _P
    t += np.float32(1)
    np.reciprocal(t, out=t)
    erf = t * _A[0]
    for a in _A[1:]:
        erf += a
        erf *= t
    e = np.square(x)
    e *= np.float32(-0.5)
    np.exp(e, out=e)
    erf *= e
    np.subtract(np.float32(1), erf, out=erf)  # erf(|x| / sqrt2)
    np.copysign(erf, x, out=erf)  # erf(x / sqrt2); copysign beats a masked select
    erf += np.float32(1)
    erf *= np.float32(0.5)
    x *= erf
