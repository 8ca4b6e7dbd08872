"""Real (tiny) embedders for the memory tests: deterministic, no model files."""

from __future__ import annotations

__all__ = ["WordHashEmbedder"]


class WordHashEmbedder:
    """A real (tiny) embedder for tests: hashed bag of words, so similar texts are close."""

    name = "test-bow"
    dim = 64

    def embed(self, texts):  # type: ignore[no-untyped-def]
        import numpy as np

        from precis.memory.text import words

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in words(text):
                out[row, sum(map(ord, word)) % self.dim] += 1.0
            norm = float(np.linalg.norm(out[row])) or 1.0
            out[row] /= norm
        return out
