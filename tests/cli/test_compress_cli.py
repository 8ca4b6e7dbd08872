"""``precis compress`` and ``precis explain``: real invocations, outputs, exit codes."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from precis.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "compact"
CODING = FIXTURES / "coding_en.json"
SQL_ZH = FIXTURES / "sql_zh.json"


def _rules() -> ModuleType:
    """The independent API validators of tests/compact/_api_rules.py."""
    path = Path(__file__).resolve().parents[1] / "compact" / "_api_rules.py"
    spec = importlib.util.spec_from_file_location("_api_rules_cli", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RULES = _rules()


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def run_process(args: list[str], *, stdin: bytes | None = None,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "precis.cli", *args], input=stdin,
                          capture_output=True, check=False, env={**os.environ, **(env or {})})


def assert_one_line_error(err: str, *needles: str) -> None:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("precis: error: ")
    for needle in needles:
        assert needle in lines[0]


# -- compress: outputs -----------------------------------------------------------------------


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["compress", str(CODING), "--keep-last", "4"], capsys)
    assert code == 0, err
    data = json.loads(out)
    for key in ("compressed_prompt", "original_tokens", "compressed_tokens", "ratio",
                "kept_messages", "summarized_count", "dropped_count", "compression_level",
                "system_prompt_preserved", "timestamp", "messages", "summary", "retention",
                "dropped", "timings_ms"):
        assert key in data, key
    assert data["compression_level"] == "normal"
    assert data["kept_messages"] == 4
    assert data["system_prompt_preserved"] is True
    assert data["compressed_tokens"] < data["original_tokens"]
    assert data["ratio"] == round(data["original_tokens"] / data["compressed_tokens"], 2)
    assert data["messages"][0]["role"] == "system"
    assert RULES.openai_errors(data["messages"]) == []
    assert data["summary"]["detailed"] in data["compressed_prompt"]
    assert data["source"] == {
        "path": str(CODING.resolve()),
        "sha256": hashlib.sha256(CODING.read_bytes()).hexdigest(),
        "format": "openai", "pick": 0}


def test_markdown_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["compress", str(CODING), "--keep-last", "4", "-O", "markdown"], capsys)
    assert code == 0
    assert out.startswith("# precis compaction\n")
    assert "- level: normal" in out
    assert "[precis summary of messages" in out
    # issue 18: "4 kept verbatim" then "Recent messages (5)" (the system prompt counted)
    assert "4 kept verbatim" in out and "## Recent messages (4)" in out
    assert "- system prompt: kept (1 message)" in out and "\n## System prompt\n" in out
    assert "Thanks, that is all for today." in out


def test_markdown_says_when_there_is_no_system_prompt_and_speaks_chinese(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """issue 18: "system prompt preserved: no" when there was none; a Chinese summary got
    an English "Recent messages" heading."""
    data = json.loads(SQL_ZH.read_text(encoding="utf-8"))
    messages = [m for m in (data["messages"] if isinstance(data, dict) else data)
                if m["role"] != "system"]
    path = tmp_path / "zh.json"
    path.write_text(json.dumps(messages, ensure_ascii=False), encoding="utf-8")
    code, out, _ = run(["compress", str(path), "--keep-last", "2", "-O", "markdown"], capsys)
    assert code == 0
    assert "- system prompt: none in the input" in out and "System prompt" not in out
    assert "## 最近消息（2 条）" in out and "Recent messages" not in out


def test_openai_output_is_a_valid_message_list(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["compress", str(CODING), "-O", "openai", "--level", "heavy"], capsys)
    assert code == 0
    messages = json.loads(out)
    assert isinstance(messages, list)
    assert RULES.openai_errors(messages) == []
    assert [m["role"] for m in messages[:2]] == ["system", "user"]
    assert len(messages) == 1 + 1 + 5


def test_anthropic_output_is_a_valid_payload(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["compress", str(SQL_ZH), "-O", "anthropic", "-b", "300"], capsys)
    assert code == 0
    payload = json.loads(out)
    assert RULES.anthropic_errors(payload) == []
    assert payload["system"].startswith("你是数据分析助手")
    assert payload["messages"][0]["role"] == "user"


def test_output_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out.json"
    code, out, err = run(["compress", str(CODING), "-b", "500", "-o", str(target)], capsys)
    assert code == 0
    assert out == ""
    data = json.loads(target.read_text(encoding="utf-8"))
    assert data["budget"] == 500 and data["compressed_tokens"] <= 500
    assert f"wrote {target}" in err
    assert f"{data['original_tokens']} -> {data['compressed_tokens']} tokens" in err


def test_output_file_in_a_missing_folder_exits_2(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "no" / "such" / "out.json"
    code, _, err = run(["compress", str(CODING), "-o", str(target)], capsys)
    assert code == 2
    assert_one_line_error(err, "cannot write the output", str(target))


def test_template_level_and_tokenizer_options(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["compress", str(CODING), "-T", "claude", "-l", "emergency",
                        "-t", "estimate:cl100k", "--no-timings"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["template"] == "claude"
    assert data["compression_level"] == "emergency"
    assert data["tokenizer"] == "estimate:cl100k"
    assert data["kept_messages"] == 3
    assert "timings_ms" not in data


def test_stdin(tmp_path: Path) -> None:
    proc = run_process(["compress", "-", "--no-timings", "--keep-last", "2"],
                       stdin=SQL_ZH.read_bytes())
    assert proc.returncode == 0, proc.stderr.decode()
    data = json.loads(proc.stdout)
    assert data["kept_messages"] == 2
    assert data["language"] == "zh"
    assert data["source"] == {"path": None, "sha256": None, "format": "openai", "pick": 0}


def test_pick_and_format_from_a_collection(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "two.jsonl"
    lines = [json.dumps(json.loads(f.read_text(encoding="utf-8")), ensure_ascii=False)
             for f in (CODING, SQL_ZH)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run(["compress", str(path), "--pick", "1", "-f", "openai", "--keep-last",
                          "3", "--no-timings"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["language"] == "zh"
    assert data["source"]["pick"] == 1
    assert data["messages"][-1]["content"] == "好的，需要时随时叫我。"
    code, _, err = run(["compress", str(path)], capsys)
    assert code == 2
    assert_one_line_error(err, "holds 2 conversations", "choose one with --pick N")


def test_no_timings_output_is_identical_across_processes() -> None:
    args = ["compress", str(CODING), "--no-timings", "-b", "450", "-T", "claude"]
    first = run_process(args, env={"PYTHONHASHSEED": "1"})
    second = run_process(args, env={"PYTHONHASHSEED": "4242"})
    assert first.returncode == second.returncode == 0
    assert first.stdout == second.stdout
    assert b'"timings_ms"' not in first.stdout
    md = [run_process(["compress", str(SQL_ZH), "-O", "markdown"],
                      env={"PYTHONHASHSEED": seed}).stdout for seed in ("7", "99")]
    assert md[0] == md[1]


# -- compress: errors ------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["0", "-1", "abc", "1.5"])
def test_bad_budget_exits_2_with_a_usage_message(value: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["compress", str(CODING), "--budget", value], capsys)
    assert code == 2
    assert out == ""
    assert "Traceback" not in err
    assert "Invalid value for '--budget'" in err


@pytest.mark.parametrize("args", [["--keep-last", "-2"], ["--level", "extreme"],
                                  ["-O", "yaml"], ["--note-style", "sometimes"]])
def test_bad_options_exit_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["compress", str(CODING), *args], capsys)
    assert code == 2
    assert "Invalid value" in err and "Traceback" not in err


def test_note_style_on_and_off(capsys: pytest.CaptureFixture[str]) -> None:
    chat = str(FIXTURES / "chat_en.json")
    texts = {}
    for style in ("on", "off"):
        code, out, _ = run(["compress", chat, "--level", "light", "--note-style", style,
                            "--no-timings"], capsys)
        assert code == 0
        texts[style] = " ".join(i["text"] for s in json.loads(out)["summary"]["sections"]
                                for i in s["items"])
    assert "I adopted a grey cat named Miso" in texts["off"]
    assert "Adopted grey cat named Miso" in texts["on"]


def test_budget_below_the_system_prompt_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["compress", str(CODING), "--budget", "20"], capsys)
    assert code == 2
    assert out == ""
    assert_one_line_error(err, "budget 20 is too small")


def test_unknown_template_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["compress", str(CODING), "--template", "fancy"], capsys)
    assert code == 2
    assert_one_line_error(err, "unknown template 'fancy'")


def test_bad_template_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mine.json"
    path.write_text('{"sections": [{"key": "a", "types": ["wish"], "title": "A"}]}',
                    encoding="utf-8")
    code, _, err = run(["compress", str(CODING), "-T", str(path)], capsys)
    assert code == 2
    assert_one_line_error(err, str(path), "unknown fragment type(s) wish")
    path.write_text('{"sections": [', encoding="utf-8")
    code, _, err = run(["compress", str(CODING), "-T", str(path)], capsys)
    assert code == 2
    assert_one_line_error(err, "invalid JSON", f"{path}:1:")


def test_unknown_tokenizer_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["compress", str(CODING), "-t", "gpt-17"], capsys)
    assert code == 2
    assert_one_line_error(err, "gpt-17")


def test_missing_and_bad_input_files_exit_2(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.json"
    code, _, err = run(["compress", str(missing)], capsys)
    assert code == 2
    assert "nope.json" in err and "Traceback" not in err
    bad = tmp_path / "bad.json"
    bad.write_text('[{"role": "user", "content": "x"},\n {"role": }]', encoding="utf-8")
    code, _, err = run(["compress", str(bad)], capsys)
    assert code == 2
    assert_one_line_error(err, f"{bad}:2:")


# -- explain -------------------------------------------------------------------------------------


@pytest.fixture
def result_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """coding_en.json compressed at the normal level (messages 21-30 kept verbatim)."""
    source = tmp_path / "session.json"
    source.write_bytes(CODING.read_bytes())
    target = tmp_path / "result.json"
    code, _, err = run(["compress", str(source), "-o", str(target)], capsys)
    assert code == 0, err
    return target


def explain(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    return run(["explain", *args], capsys)


def went_to(out: str) -> list[str]:
    lines = out.splitlines()
    return [line.strip() for line in lines[lines.index("went to:") + 1:]]


def test_explain_a_summarized_fragment(result_file: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = explain(capsys, str(result_file), "S6")
    assert code == 0
    assert out.startswith("S6: sentence from user, message 2, part 0, characters 0-78\n")
    assert "  Never touch `app/db.py`: the connection pool there is managed by the ops team.\n" \
        in out
    assert "why: constraint" in out
    # the handover's line that quotes it, its section and why the line is there
    assert went_to(out) == [
        'summarized under "Primary Request and Intent" (a request the user wrote, msg 3): '
        'User (msg 3): "Never touch `app/db.py`: the connection pool there is managed by the '
        'ops team."']


def test_explain_a_kept_fragment(result_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # S45 is the last message ("Thanks, that is all for today.", message 30)
    code, out, _ = explain(capsys, str(result_file), "s45")
    assert code == 0
    assert "Thanks, that is all for today." in out
    data = json.loads(result_file.read_text(encoding="utf-8"))
    assert went_to(out) == [f"kept verbatim: output message {data['origin'].index(30)}"]
    code, out, _ = explain(capsys, str(result_file), "1")  # the system prompt, as a number
    assert code == 0
    assert went_to(out) == ["kept verbatim: output message 0"]


def test_explain_a_dropped_confirmation(result_file: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = explain(capsys, str(result_file), "S16")  # "ok", message 7
    assert code == 0
    assert "\n  ok\n" in out
    assert "folded confirmation" in out  # (why)
    assert went_to(out) == ["dropped: folded"]  # no line reads it with what it accepted


def test_every_summarized_fragment_has_a_fate(result_file: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(result_file.read_text(encoding="utf-8"))
    last = data["summary"]["covers_fragments"][1]
    for number in range(3, int(last[1:]) + 1):
        code, out, _ = explain(capsys, str(result_file), f"S{number}")
        assert code == 0
        fate = went_to(out)
        assert fate and fate != ["not in the output"], (number, fate)
        assert all(line.startswith(("summarized", "dropped: ")) for line in fate), fate


def test_explain_a_fragment_cut_from_a_kept_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    filler = " ".join(f"Step {chr(97 + i % 26)} of the build log has nothing special."
                      for i in range(300))
    source = tmp_path / "log.json"
    source.write_text(json.dumps([
        {"role": "system", "content": "You are a build assistant."},
        {"role": "user", "content": "The deploy failed."},
        {"role": "assistant", "content": "I will look at the log."},
        {"role": "user", "content": "Here is the log. " + filler + " The end."},
    ]), encoding="utf-8")
    target = tmp_path / "result.json"
    assert main(["compress", str(source), "-b", "200", "-o", str(target)]) == 0
    capsys.readouterr()
    kept = json.loads(target.read_text(encoding="utf-8"))["messages"][-1]["content"]
    assert len(kept) < 2000 and "Step k of the build log" not in kept
    # S5 is the sentence "Step a ...", S15 "Step k ..." of message 3, the last one
    code, out, _ = explain(capsys, str(target), "S15")
    assert code == 0
    assert "Step k of the build log" in out
    assert went_to(out) == [
        "kept shortened: output message 3 (this part was cut to fit the budget)"]
    # the room the summary leaves keeps the assistant's message 2 before it verbatim
    code, out, _ = explain(capsys, str(target), "S3")
    assert code == 0
    assert went_to(out) == ["kept verbatim: output message 2"]
    code, out, _ = explain(capsys, str(target), "S2")  # the user's first message
    assert code == 0
    assert went_to(out)[0].startswith("summarized")


def test_explain_unknown_fragment_exits_2(result_file: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = explain(capsys, str(result_file), "S999")
    assert code == 2
    assert out == ""
    assert_one_line_error(err, "no fragment 'S999'", "S1 to S45")


def test_explain_result_with_a_malformed_source_exits_2(
        result_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(result_file.read_text("utf-8"))
    data["source"] = "session.json"  # hand-edited: a string where an object belongs
    bad = result_file.parent / "bad.json"
    bad.write_text(json.dumps(data), "utf-8")
    code, out, err = explain(capsys, str(bad), "S6")
    assert code == 2
    assert out == ""
    assert_one_line_error(err, "not a precis compress result")


def test_explain_changed_source_exits_2(result_file: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    source = result_file.parent / "session.json"
    source.write_bytes(SQL_ZH.read_bytes())
    code, _, err = explain(capsys, str(result_file), "S6")
    assert code == 2
    assert_one_line_error(err, "source file changed")
    # the original given explicitly works
    code, out, _ = explain(capsys, str(result_file), "S6", "--source", str(CODING))
    assert code == 0
    assert "Never touch `app/db.py`" in out
    source.unlink()
    code, _, err = explain(capsys, str(result_file), "S6")
    assert code == 2
    assert_one_line_error(err, "source file changed (or is gone)")


def test_explain_result_from_stdin_needs_source(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    proc = run_process(["compress", "-"], stdin=CODING.read_bytes())
    target = tmp_path / "result.json"
    target.write_bytes(proc.stdout)
    code, _, err = explain(capsys, str(target), "S6")
    assert code == 2
    assert_one_line_error(err, "--source FILE")
    code, out, _ = explain(capsys, str(target), "S6", "--source", str(CODING))
    assert code == 0
    assert went_to(out)[0].startswith('summarized under "Primary Request and Intent" '
                                      "(a request the user wrote, msg 3)")


def test_explain_a_picked_conversation(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "two.jsonl"
    lines = [json.dumps(json.loads(f.read_text(encoding="utf-8")), ensure_ascii=False)
             for f in (CODING, SQL_ZH)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    target = tmp_path / "result.json"
    assert main(["compress", str(path), "--pick", "conv-1", "-o", str(target)]) == 2
    assert main(["compress", str(path), "--pick", "1", "-o", str(target)]) == 0
    capsys.readouterr()
    code, out, _ = explain(capsys, str(target), "S2")
    assert code == 0
    assert "帮我统计一下上个月每个城市的订单数" in out


@pytest.mark.parametrize(("content", "needle"), [
    ("not json at all", "result.json:1:1"),
    ('[{"role": "user", "content": "x"}]', "not a precis compress result"),
])
def test_explain_bad_result_file_exits_2(tmp_path: Path, content: str, needle: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "result.json"
    target.write_text(content, encoding="utf-8")
    code, _, err = explain(capsys, str(target), "S1")
    assert code == 2
    assert_one_line_error(err, needle)


def test_explain_missing_result_file_exits_2(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = explain(capsys, str(tmp_path / "gone.json"), "S1")
    assert code == 2
    assert_one_line_error(err, "no such result file")
