"""The web page of ``precis serve``: static HTML, CSS and JavaScript (no build step, no
download at run time) that call the same ``/v1`` API as every other client.

Views: compaction (a conversation in, the compacted context beside the original, every
citation linked to its source fragment and every fragment's fate), memory (search with the
CLI's filters, a card's sources, history, delete) and sessions (a ContextMemory session's
events, working context and offloads). Edit the files in ``static/`` directly.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["STATIC_DIR"]

STATIC_DIR = Path(__file__).resolve().parent / "static"
"""The folder of the page's files, served at ``/``."""
