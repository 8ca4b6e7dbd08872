"""The adapters' examples run offline, quickly, and exit 0."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(("script", "framework", "expect"), [
    ("openai_agents_session.py", "agents", "tool pairs valid and under budget: True"),
    ("langchain_history.py", "langchain_core", "under budget with every tool call answered: True"),
])
def test_example_runs(script: str, framework: str, expect: str) -> None:
    pytest.importorskip(framework)
    env = {**os.environ, "OPENAI_API_KEY": "", "OPENAI_BASE_URL": "http://127.0.0.1:9"}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, str(EXAMPLES / script)], capture_output=True,
                          text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert expect in done.stdout
    assert "compaction:" in done.stdout
    assert time.perf_counter() - started < 10


@pytest.mark.parametrize(("script", "hidden", "hint"), [
    ("openai_agents_session.py", ("agents", "openai"), "pip install 'precis[openai-agents]'"),
    ("langchain_history.py", ("langchain_core",), "pip install 'precis[langchain]'"),
])
def test_example_without_its_extra_says_what_to_install(
    script: str, hidden: tuple[str, ...], hint: str
) -> None:
    """issue 18: the examples crashed with a bare ModuleNotFoundError."""
    hide = "; ".join(f"sys.modules[{name!r}] = None" for name in hidden)
    code = f"import runpy, sys; {hide}; runpy.run_path({str(EXAMPLES / script)!r}, " \
           "run_name='__main__')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 1
    assert done.stderr.startswith("this example needs ") and done.stderr.count("\n") == 1
    assert hint in done.stderr and "Traceback" not in done.stderr
