"""Fault campaign, command line: bad inputs a user types, each run as a real process.

A case is *expected* when precis exits with code 2 and says one line on stderr that starts
with ``precis: error:``; a *bug* is a traceback, another exit code, or several lines. A few
good invocations are run too (they must exit 0), so a campaign that breaks the command line
itself does not pass for one that finds nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["cli_cases", "run_case"]

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "coding_session.json"


def _files(tmp: Path) -> dict[str, Path]:
    """Bad inputs on disk."""
    files = {
        "empty": b"", "blank": b"  \n\t\n", "binary": bytes(range(256)) * 4,
        "latin1": "caf\xe9 user: hi".encode("latin-1"), "bad_json": b'[{"role": "user",',
        "bad_jsonl": b'{"role": "user", "content": "a"}\n{"role": \n',
        "deep": b"[" * 5000 + b"]" * 5000, "number": b"42", "string": b'"hello"',
        "no_format": b'{"weather": "sunny", "temperature": 21}',
        "bad_role": b'[{"role": "wizard", "content": "hi"}]',
        "type_list": b'[{"role":"user","content":"hi","type":[]}]',
        "content_number": b'[{"role": "user", "content": 5}]',
        "collection": b'{"conversations":[{"from":"human","value":"a"}]}\n'
                      b'{"conversations":[{"from":"human","value":"b"}]}\n',
        "huge_int": b'[{"role": "user", "content": "x", "n": ' + b"9" * 5000 + b"}]",
        "lone_surrogate": b'[{"role": "user", "content": "cut \\ud83d here"}]',
        "template": b'{"name": "mine", "sections": 5}',
        "result_bad": b'{"schema_version": "1"}',
        "batch_bad": b'{"query": 5}\nnot json\n',
        "import_bad": b'{"id": "x"}\n',
        "not_a_store": b"\x00garbage" * 512,
    }
    out = {}
    for name, data in files.items():
        path = tmp / name
        path.write_bytes(data)
        out[name] = path
    (tmp / "a_dir").mkdir(exist_ok=True)
    out["a_dir"] = tmp / "a_dir"
    return out


def cli_cases(tmp: Path) -> list[tuple[list[str], str]]:
    """(argv after ``precis``, what is expected: ``"error"`` or ``"ok"``)."""
    f = _files(tmp)
    ex = str(EXAMPLE)
    store = ["memory", "--store", str(tmp / "campaign.sqlite3"), "-e", "none"]
    bad_store = ["memory", "--store", str(f["not_a_store"])]
    errors: list[list[str]] = [
        ["compress", str(tmp / "missing.json")], ["compress", str(f["a_dir"])],
        *[["compress", str(f[name])] for name in (
            "empty", "blank", "binary", "latin1", "bad_json", "bad_jsonl", "deep", "number",
            "string", "no_format", "bad_role", "content_number", "collection", "huge_int")],
        *[["inspect", str(f[name])] for name in (
            "empty", "binary", "latin1", "bad_json", "deep", "no_format", "bad_role")],
        ["compress", ex, "--budget", "0"], ["compress", ex, "--budget", "-5"],
        ["compress", ex, "--budget", "x"], ["compress", ex, "--budget", "10"],
        ["compress", ex, "--keep-last", "-1"], ["compress", ex, "--level", "extreme"],
        ["compress", ex, "--tokenizer", "gpt5"], ["compress", ex, "-t", "hf:/no/such.json"],
        ["compress", ex, "-t", "o200k_base:/no/such.tiktoken"],
        ["compress", ex, "--template", str(f["template"])],
        ["compress", ex, "--template", "nosuch"], ["compress", ex, "--format", "yaml"],
        ["compress", ex, "--format", "sharegpt"], ["compress", ex, "--pick", "3"],
        ["compress", str(f["collection"]), "--pick", "9"],
        ["compress", str(f["collection"]), "--pick", "nope"],
        ["compress", str(f["collection"])],
        ["compress", ex, "-o", str(f["a_dir"])], ["compress", ex, "-O", "yaml"],
        ["compress", ex, "--note-style", "maybe"], ["compress"], ["nosuchcommand"],
        ["explain", str(f["result_bad"]), "S1"], ["explain", str(f["empty"]), "S1"],
        ["explain", str(tmp / "missing.json"), "S1"], ["explain", ex, "S1"],
        ["inspect", ex, "--pick", "-1"], ["inspect", ex, "-t", "nonsense"],
        ["inspect", ex, "--limit", "x"],
        [*store, "search", ""], [*store, "search", "   "], [*store, "search", "x" * 20000],
        [*store, "search", "timeout", "--since", "yesterday-ish"],
        [*store, "search", "timeout", "--until", "2024-13-45"],
        [*store, "search", "timeout", "--type", "weird"], [*store, "search", "timeout", "-k", "0"],
        [*store, "search", "timeout", "-k", "5000"], [*store, "search"],
        [*store, "search", "a", "--batch", str(f["batch_bad"])],
        [*store, "search", "--batch", str(tmp / "missing.jsonl")],
        [*store, "show", "m_nope"], [*store, "show", "m_nope", "--history"],
        [*store, "delete", "m_nope"], [*store, "import", str(f["import_bad"])],
        [*store, "import", str(f["binary"])], [*store, "import", str(tmp / "missing.jsonl")],
        [*store, "ingest", str(f["bad_json"])], [*store, "ingest", str(tmp / "missing.json")],
        [*store, "ingest", ex, ex, "--session", "s"], [*store, "list", "--since", "never"],
        [*store, "export", "-o", str(f["a_dir"])],
        [*bad_store, "stats"], ["memory", "--store", str(tmp / "no" / "dir" / "m.db"), "stats"],
        ["memory", "--store", str(f["a_dir"]), "stats"],
        ["memory", "--store", str(tmp / "x.sqlite3"), "-e", "nosuch", "stats"],
        ["memory", "--store", str(tmp / "x.sqlite3"), "--tenant", "", "stats"],
    ]
    ok: list[list[str]] = [
        ["compress", ex, "-O", "markdown"], ["compress", str(f["type_list"])],
        ["compress", ex, "--format", "anthropic"],
        ["compress", str(f["lone_surrogate"]), "-O", "openai"], ["inspect", ex],
        [*store, "ingest", ex], [*store, "search", "导出接口超时"], [*store, "stats"],
    ]
    return [(argv, "error") for argv in errors] + [(argv, "ok") for argv in ok]


def run_case(argv: list[str], expect: str) -> tuple[str, str]:
    """Run ``precis ARGV`` in a process: ("expected" | "ok" | "bug", detail)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path),
           "PRECIS_HOME": tempfile.mkdtemp(prefix="precis-campaign-")}
    done = subprocess.run([sys.executable, "-m", "precis", *argv], capture_output=True,
                          text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
    err = done.stderr
    shown = " ".join(argv)[:80]
    if "Traceback" in err:
        return "bug", f"`precis {shown}`: traceback: {err.strip().splitlines()[-1][:120]}"
    if expect == "ok":
        if done.returncode != 0:
            return "bug", f"`precis {shown}` exit {done.returncode}: {err.strip()[:120]}"
        return "ok", ""
    lines = [line for line in err.splitlines() if line.strip()]
    if done.returncode != 2:
        return "bug", f"`precis {shown}` exit {done.returncode} (expected 2): {err[:120]}"
    if len(lines) != 1 or not lines[0].startswith("precis: error:"):
        return "bug", f"`precis {shown}`: {len(lines)} stderr lines: {err[:160]!r}"
    return "expected", ""
