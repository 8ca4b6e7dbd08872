"""The precis command: real invocations, exit codes and messages."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from precis import InputNotFoundError, load
from precis.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "coding_session.json"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import precis

    code, out, _ = run(["--version"], capsys)
    assert code == 0
    assert precis.__version__ in out


@pytest.mark.parametrize("command", [[], ["inspect"], ["formats"]])
def test_help_on_every_command(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([*command, "--help"], capsys)
    assert code == 0
    assert "Usage:" in out


def test_inspect_json_report(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["inspect", str(EXAMPLE), "--json"], capsys)
    assert code == 0
    report = json.loads(out)
    assert report["format"] == "openai"
    assert report["counts"]["messages"] == 18
    assert report["tokens"]["estimate"] > 0
    ids = [f["id"] for f in report["fragments"]]
    assert ids == [f"S{i}" for i in range(1, len(ids) + 1)]
    kinds = {f["kind"] for f in report["fragments"]}
    assert {"tool_call", "tool_result", "sentence"} <= kinds
    # provenance points back into the original text
    conv = json.loads(EXAMPLE.read_text(encoding="utf-8"))["messages"]
    for frag in report["fragments"]:
        if frag["kind"] in ("sentence", "paragraph", "list_item") and frag["part"] == 0:
            original = conv[frag["message"]]["content"]
            assert original[frag["start"]:frag["end"]] == frag["text"]


def test_inspect_human_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["inspect", str(EXAMPLE)], capsys)
    assert code == 0
    assert "openai" in out
    assert "S1" in out and "fragments" in out


def test_inspect_with_two_tokenizers(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["inspect", str(EXAMPLE), "--json", "-t", "estimate",
                        "-t", "estimate:cl100k"], capsys)
    assert code == 0
    assert set(json.loads(out)["tokens"]) == {"estimate", "estimate:cl100k"}


def test_inspect_lists_a_collection(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "many.jsonl"
    path.write_text("\n".join(json.dumps({"id": f"t{i}", "messages": [
        {"role": "user", "content": f"q{i}"}]}) for i in range(4)), encoding="utf-8")
    code, out, _ = run(["inspect", str(path), "--json"], capsys)
    assert code == 0
    assert [c["id"] for c in json.loads(out)["conversations"]] == ["t0", "t1", "t2", "t3"]
    code, out, _ = run(["inspect", str(path), "--json", "--pick", "t2"], capsys)
    assert json.loads(out)["messages"][0]["preview"] == "q2"


def test_bad_json_exits_2_with_location(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.json"
    path.write_text('[{"role": "user", "content": "x"},\n {"role": }]', encoding="utf-8")
    code, _, err = run(["inspect", str(path)], capsys)
    assert code == 2
    assert f"{path}:2:11" in err
    assert "Traceback" not in err


def test_unknown_role_exits_2_naming_message(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "roles.json"
    path.write_text(json.dumps([{"role": "user", "content": "a"},
                                {"role": "robot", "content": "b"}]), encoding="utf-8")
    code, _, err = run(["inspect", str(path), "--format", "openai"], capsys)
    assert code == 2
    assert "message 1" in err and "robot" in err


def test_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["inspect", str(tmp_path / "nope.json")], capsys)
    assert code == 2
    assert "nope.json" in err


def test_a_path_the_system_cannot_take_exits_2(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A name too long for the file system raised OSError (a traceback, exit 1)."""
    for path in ("x" * 5000, "a/" * 3000 + "b.json"):
        code, _, err = run(["compress", path], capsys)
        assert code == 2 and err.startswith("precis: error: ") and len(err.splitlines()) == 1
        assert "cannot read" in err
    with pytest.raises(InputNotFoundError, match="File name too long"):
        load(Path(tmp_path / ("y" * 5000)))


def test_a_usage_error_is_one_line_naming_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    """click printed three lines (Usage:, Try ..., Error: ...); precis's own errors are one."""
    for argv, says in ((["compress", str(EXAMPLE), "--budget", "x"], "'x' is not a valid"),
                       (["compress", str(EXAMPLE), "-O", "yaml"], "'yaml' is not one of"),
                       (["compress"], "Missing argument 'FILE'"),
                       (["nosuchcommand"], "No such command 'nosuchcommand'"),
                       (["memory", "search", "x", "-k", "many"], "'many' is not a valid")):
        code, _, err = run(argv, capsys)
        assert code == 2, argv
        assert len(err.splitlines()) == 1 and err.startswith("precis: error: "), err
        assert says in err and "--help`" in err, err


def test_bad_pick_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["inspect", str(EXAMPLE), "--pick", "7"], capsys)
    assert code == 2
    assert "out of range" in err


def test_unknown_tokenizer_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["inspect", str(EXAMPLE), "-t", "gpt-17"], capsys)
    assert code == 2
    assert "gpt-17" in err


def test_stdin_and_console_script(tmp_path: Path) -> None:
    # The installed entry point, reading standard input, in a real subprocess.
    data = EXAMPLE.read_bytes()
    proc = subprocess.run([sys.executable, "-m", "precis.cli", "inspect", "-", "--json"],
                          input=data, capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    assert json.loads(proc.stdout)["source"] == "<stdin>"
    bad = subprocess.run([sys.executable, "-m", "precis.cli", "inspect", "-"],
                         input=b"\x00\x01binary", capture_output=True, check=False)
    assert bad.returncode == 2
    assert b"binary" in bad.stderr and b"Traceback" not in bad.stderr


def test_inspect_reports_the_picked_index_of_identical_conversations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two runs of the same task are equal as data; the report must name the one picked.
    line = json.dumps({"messages": [{"role": "user", "content": "same"}]})
    path = tmp_path / "twice.jsonl"
    path.write_text(f"{line}\n{line}\n", encoding="utf-8")
    code, out, _ = run(["inspect", str(path), "--json", "--pick", "1"], capsys)
    assert code == 0
    assert json.loads(out)["conversation"] == {"id": None, "title": None, "index": 1, "of": 2}


def test_python_dash_m_precis_runs_the_command() -> None:
    """issue 18: `python -m precis` failed (no precis.__main__)."""
    done = subprocess.run([sys.executable, "-m", "precis", "--version"], capture_output=True,
                          text=True, timeout=60)
    import precis

    assert done.returncode == 0 and precis.__version__ in done.stdout


@pytest.mark.parametrize("group", [[], ["memory"], ["keys"]])
def test_help_lists_whole_sentences(group: list[str]) -> None:
    """issue 18: `precis --help` cut command descriptions mid-sentence ("(e.g.", "+...")."""
    env = {**__import__("os").environ, "COLUMNS": "80"}
    done = subprocess.run([sys.executable, "-m", "precis", *group, "--help"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0
    listing = done.stdout.split("Commands:\n", 1)[1]
    entries = [e for e in re.split(r"\n  (?=\S)", "\n" + listing) if e.strip()]
    assert len(entries) >= 3
    for entry in entries:
        text = " ".join(entry.split()[1:])
        assert not text.endswith("...") and text.endswith((".", ")")), entry


def test_a_collection_without_ids_or_titles_lists_the_first_user_message(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """issue 18: ShareGPT collections were listed with empty id and title columns."""
    path = tmp_path / "chats.jsonl"
    path.write_text("\n".join(json.dumps({"conversations": [
        {"from": "human", "value": question}, {"from": "gpt", "value": "answer"}]})
        for question in ("什么是二分查找？", "How do I sort a list in Python?")) + "\n",
        encoding="utf-8")
    code, out, _ = run(["inspect", str(path)], capsys)
    assert code == 0 and "--pick N\n" in out and "--pick N|ID" not in out
    header = next(line for line in out.splitlines() if line.lstrip().startswith("#"))
    assert header.split() == ["#", "messages", "estimate", "first", "user", "message"]
    assert "什么是二分查找？" in out and "How do I sort a list in Python?" in out
    code, out, _ = run(["inspect", str(path), "--json"], capsys)
    assert [c["preview"] for c in json.loads(out)["conversations"]] == [
        "什么是二分查找？", "How do I sort a list in Python?"]
