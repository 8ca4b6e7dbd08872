"""Pluggable embedders for the long-term memory.

::

    from precis.memory.embed import get_embedder

    get_embedder("none")                   # None: lexical search only, no vectors
    get_embedder("use")                    # multilingual Universal Sentence Encoder, offline
    get_embedder("minilm")                 # all-MiniLM-L6-v2 in numpy, offline (English)
    get_embedder("openai:bge-m3", base_url="http://localhost:8080/v1")

An embedder has ``name`` (stored with each vector), ``dim`` and ``embed(texts)`` (unit float32
rows). :class:`CachedEmbedder` puts an :class:`EmbeddingCache` in front of one. Importing this
package loads neither numpy, tokenizers nor httpx.
"""

from __future__ import annotations

from precis.memory.embed._cache import CachedEmbedder, InMemoryEmbeddingCache
from precis.memory.embed._minilm import MINILM_DIR_ENV, MINILM_NAME, MiniLMEmbedder
from precis.memory.embed._openai import EMBED_KEY_ENV, EMBED_URL_ENV, OpenAIEmbedder
from precis.memory.embed._registry import embedder_names, get_embedder, register_embedder
from precis.memory.embed._use import USE_NAME, USEEmbedder
from precis.memory.embed.base import Embedder, EmbeddingCache, content_key

__all__ = [
    "EMBED_KEY_ENV",
    "EMBED_URL_ENV",
    "MINILM_DIR_ENV",
    "MINILM_NAME",
    "USE_NAME",
    "CachedEmbedder",
    "Embedder",
    "EmbeddingCache",
    "InMemoryEmbeddingCache",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "USEEmbedder",
    "content_key",
    "embedder_names",
    "get_embedder",
    "register_embedder",
]
