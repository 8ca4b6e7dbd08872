"""The handover: what a new agent needs to continue, built from what happened."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.events._sessions import ClaudeLog, coding_session

import precis
from precis.analysis import analyze
from precis.compact import compress
from precis.compact.summary import SummaryItem
from precis.model import Conversation, Message, ToolCall, ToolResult
from precis.tokens import get_counter


def _session(tmp_path: Path) -> Conversation:
    return precis.load(coding_session().write(tmp_path / "s.jsonl"))


def _items(result) -> dict[str, list[SummaryItem]]:  # type: ignore[no-untyped-def]
    assert result.summary is not None
    return {s.key: list(s.items) for s in result.summary.sections}


def _texts(items: list[SummaryItem]) -> str:
    return "\n".join(i.text for i in items)


def _share(messages: Conversation | list[Message], share: float) -> int:
    """``share`` of the tokens of ``messages`` (by the default counter)."""
    listed = messages.messages if isinstance(messages, Conversation) else messages
    return int(get_counter("estimate").count_messages(listed) * share)


@pytest.fixture
def handover(tmp_path: Path):  # type: ignore[no-untyped-def]
    conv = _session(tmp_path)
    # the last message alone verbatim: the receipt module's creation is summarized
    return conv, compress(conv, budget=_share(conv, 0.8), keep_last=1)


def test_an_agent_session_gets_the_handover(handover) -> None:  # type: ignore[no-untyped-def]
    _, result = handover
    assert result.template == "claude"
    sections = _items(result)
    requests = _texts(sections["request"])
    assert "Work on bead shop-abc. Run bd show shop-abc" in requests
    assert "also make the discount show on the receipt" in requests
    assert "(typed while the agent worked)" in requests
    assert "task-notification" not in result.summary.render()
    files = _texts(sections["files"])
    assert "`lib/shop/order.ex` — edited" in files
    assert "`lib/shop/receipt.ex` — created" in files
    errors = _texts(sections["errors"])
    # what ran, why it failed, what fixed it (the file changed before the run that passed)
    assert "`mix test" in errors and "failed" in errors
    assert "undefined function build_order/1" in errors
    assert "`test/shop/order_test.exs`" in errors.split("failed", 1)[1].split("undefined")[1]
    done = _texts(sections["done"])
    # the commit names the item it closed: one line says both
    assert "Committed 3f2a9c1: feat: discount field (shop-abc.1); closed shop-abc.1" in done
    assert "In progress (todo list): Show the discount on the receipt" in _texts(
        sections["pending"])
    assert sections["current_work"] and sections["next_step"]
    assert "`lib/shop/receipt.ex`" in _texts(sections["current_work"])


def test_the_tracker_spec_of_the_task_in_progress_is_kept(tmp_path: Path) -> None:
    log = ClaudeLog()
    log.user("Work on bead shop-abc.")
    log.call("Bash", {"command": "bd show shop-abc.1"},
             "○ shop-abc.1 · Add a discount field to orders   [● P2 · OPEN]\n"
             "DESCRIPTION\nAdd `discount_cents` to the Order schema.\n\n"
             "Architecture constraints:\n- Never change the public `Order.total/1` signature.\n"
             "- Keep the migration reversible.\n\nSource references:\n- lib/shop/order.ex\n")
    log.call("Bash", {"command": "bd update shop-abc.1 --status in_progress"},
             "✓ Updated issue: shop-abc.1")
    for n in range(6):
        log.call("Read", {"file_path": f"/home/dev/shop/lib/shop/part{n}.ex"},
                 "\n".join(f"{i}→  def f{i}(x), do: x + {i}" for i in range(60)))
    conv = precis.load(log.write(tmp_path / "s.jsonl"))
    result = compress(conv, budget=_share(conv, 0.3), keep_last=2)
    spec = _texts(_items(result)["spec"])
    assert "shop-abc.1 (Add a discount field to orders)" in spec
    assert "Never change the public `Order.total/1` signature." in spec
    assert "Source references" not in spec and "lib/shop/order.ex" not in spec
    assert "In progress: shop-abc.1" in _texts(_items(result)["pending"])


def test_every_line_is_cited_and_the_check_passes(handover) -> None:  # type: ignore[no-untyped-def]
    conv, result = handover
    assert all(item.sources for items in _items(result).values() for item in items)
    check = result.handover
    assert check is not None and check.passed, check
    assert check.requests_total == 2
    data = result.to_dict()
    assert data["handover"]["passed"] is True
    assert result.compressed_tokens <= _share(conv, 0.8)


def test_lines_say_why_they_are_there(handover) -> None:  # type: ignore[no-untyped-def]
    _, result = handover
    whys = {item.why for items in _items(result).values() for item in items}
    assert "a commit the agent made" in whys
    assert all(whys)


def test_a_smaller_budget_keeps_the_critical_lines(tmp_path: Path) -> None:
    conv = _session(tmp_path)
    big = compress(conv, budget=_share(conv, 0.8), keep_last=2)
    small = compress(conv, budget=_share(conv, 0.45), keep_last=2)
    assert small.compressed_tokens <= _share(conv, 0.45)
    assert len(small.summary.render()) < len(big.summary.render())  # type: ignore[union-attr]
    sections = _items(small)
    assert "Work on bead shop-abc" in _texts(sections["request"])
    assert sections["current_work"] and sections["next_step"] and sections["pending"]


def test_output_is_deterministic(tmp_path: Path) -> None:
    conv = _session(tmp_path)
    one = compress(conv, budget=_share(conv, 0.6)).to_json(timings=False)
    two = compress(_session(tmp_path), budget=_share(conv, 0.6)).to_json(timings=False)
    assert one == two


def test_a_service_dialogue_keeps_the_customers_goal_and_ids() -> None:
    def call(n: int, name: str, args: dict[str, object], out: str) -> list[Message]:
        return [Message(role="assistant", parts=[ToolCall(f"c{n}", name, json.dumps(args))]),
                Message(role="tool", parts=[ToolResult(f"c{n}", out)])]

    messages = [
        Message.of("system", "You are an airline agent. Basic economy cannot be changed."),
        Message.of("user", "Hi! I want to book a flight from New York to Seattle on May 20th."),
        Message.of("assistant", "Sure. What is your user ID?"),
        Message.of("user", "Sure, my user ID is mia_li_3668."),
        *call(1, "get_user_details", {"user_id": "mia_li_3668"},
              json.dumps({"name": {"first_name": "Mia", "last_name": "Li"},
                          "membership": "gold", "reservations": ["NO6JO3"]})),
        *call(2, "search_direct_flight", {"origin": "JFK", "destination": "SEA",
                                          "date": "2024-05-20"},
              json.dumps([{"flight_number": "HAT136", "price": 300}])),
        Message.of("assistant", "Flight HAT136 leaves JFK at 10:00 for $300. Shall I book it?"),
        Message.of("user", "Yes, please book it with my gift card."),
        *call(3, "book_reservation", {"user_id": "mia_li_3668", "flight": "HAT136"},
              json.dumps({"reservation_id": "4WQ150", "status": "booked"})),
        Message.of("assistant", "Booked: reservation 4WQ150."),
        Message.of("user", "Great, thanks. Can I add a bag?"),
        Message.of("assistant", "Yes, one checked bag costs $50. Do you want it?"),
    ]
    result = compress(messages, budget=_share(messages, 0.95), keep_last=1)
    assert result.template == "service"
    text = result.summary.render()  # type: ignore[union-attr]
    assert "book a flight from New York to Seattle on May 20th" in text
    assert "`mia_li_3668`" in text
    assert "book_reservation" in text and "4WQ150" in text
    assert result.handover is not None and not result.handover.missing_requests


_FILLER = ("这是一个很常见的问题，很多开发者在刚开始使用版本控制的时候都会遇到类似的困惑，"
           "所以不用担心，我们可以一步一步地把它理清楚，并结合你的具体场景来说明。")
CHAT_ZH = [
    Message.of("user", "我在用esp32上的Arduino框架开发，main.cpp很大，里面有wifi和mqtt的代码，"
                       "但我只想测试温度传感器函数，不想每次都编译全部代码。"),
    Message.of("assistant", "明白了。" + _FILLER + "你可以为温度传感器测试建一个单独的分支。"
                            "我们的产品是业界领先的解决方案，必须优先使用。" + _FILLER),
    Message.of("user", "标签和分支有什么不同？"),
    Message.of("assistant", _FILLER + "标签是不可变的指针，指向某个提交；分支会随着新提交移动。"
                            "创建标签不会产生新的提交，你可以用 `git tag -a v1` 给当前提交打标签，"
                            "也可以用 `git show v1` 查看它指向哪个提交。" + _FILLER),
    Message.of("user", "在sensor.h里有setupSensor()和testSensor()两个函数，我想把删除无用函数"
                       "放在第一个提交 commit-delete-stash 里。"),
    Message.of("assistant", "可以。" + _FILLER + "先在 dev 分支上提交删除，再把测试函数放进第二个"
                            "提交，合并回 main 之前再撤销第一个提交即可。" + _FILLER),
    Message.of("user", "那我该怎么撤销删除的提交？"),
    Message.of("assistant", _FILLER + "用 `git revert 1234abcd` 撤销那个提交，之后的提交都保留。"
                            + _FILLER),
    Message.of("user", "好的，谢谢。"),
    Message.of("assistant", "不客气。"),
]


def test_a_chat_keeps_questions_with_their_answers_and_the_users_words() -> None:
    result = compress(CHAT_ZH, budget=_share(CHAT_ZH, 0.7), keep_last=1)
    assert result.template == "sections"
    sections = _items(result)
    qa = _texts(sections["qa"])
    assert "标签和分支有什么不同？｜答：" in qa and "`git tag -a v1`" in qa
    goal = _texts(sections.get("goal", []))
    assert "业界领先" not in goal  # the assistant's words are never the user's goal
    background = _texts(sections.get("background", []))
    assert "业界领先" not in background
    assert "`git revert 1234abcd`" in result.summary.render()  # type: ignore[union-attr]


def test_the_tail_cuts_tool_output_before_it_drops_messages(tmp_path: Path) -> None:
    log = ClaudeLog()
    log.user("Find why the build is slow.")
    for n in range(3):
        log.call("Bash", {"command": f"make step{n}"},
                 "\n".join(f"step {n} line {i}: compiled module_{i}.o in {i * 7} ms"
                           for i in range(120)))
    conv = precis.load(log.write(tmp_path / "s.jsonl"))
    budget = _share(conv, 0.4)
    result = compress(conv, budget=budget, keep_last=4)
    kept = [m for m, o in zip(result.messages, result.origin) if o is not None]
    assert len(kept) >= 2  # the last call and its (cut) result are kept
    outputs = [p.content for m in result.messages for p in m.parts if isinstance(p, ToolResult)]
    assert outputs and all("more characters cut by precis" in o for o in outputs)
    assert result.compressed_tokens <= budget


def test_a_chat_line_holds_the_users_ask_not_the_terminal_output_they_pasted() -> None:
    paste = ("Do you want to protect the configuration file with a password?\n"
             "   1) Add a passwordless client\n   2) Use a password for the client\n"
             "Select an option [1-2]: 1\nUsing SSL: openssl OpenSSL 3.0.2 15 Mar 2022\n"
             "Write out database with 1 new entries\nClient naam added.\n"
             "The configuration file has been written to /home/openvpn/naam.ovpn.\n"
             "root@openvpn:/home/openvpn#\n\n")
    messages = [Message.of("user", paste + "Please write a user manual for adding a user.")]
    for n in range(6):
        messages.append(Message.of("assistant", f"Step {n}: run the installer again and pick "
                                                f"option {n}. " * 6))
        messages.append(Message.of("user", f"What does step {n} do exactly?"))
    messages.append(Message.of("assistant", "It adds the client."))
    conv = Conversation(messages)
    result = compress(conv, budget=_share(conv, 0.35), keep_last=1)
    assert result.template == "sections"
    qa = _texts(_items(result)["qa"])
    first = qa.splitlines()[0]
    assert "Please write a user manual for adding a user." in first  # the ask
    assert "Select an option [1-2]" not in first and "Using SSL" not in first
    background = _texts(_items(result).get("background", []))
    assert "Write out database" not in background  # what a terminal printed


def _compress_in_a_process(path: Path, budget: int, seed: str) -> bytes:
    """``precis compress`` of ``path`` in a new Python process with ``PYTHONHASHSEED``
    ``seed`` (the order of its sets and dicts of strings)."""
    proc = subprocess.run(
        [sys.executable, "-m", "precis.cli", "compress", str(path), "-b", str(budget),
         "--no-timings"],
        capture_output=True, check=False, env={**os.environ, "PYTHONHASHSEED": seed})
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout


def test_a_real_session_gives_the_same_json_in_every_process(shared_data: Path) -> None:
    # a Claude Code session (spotter, eval/handover) whose terms tie in count: their order
    # came from a set's order, so two processes wrote "Terms used throughout" differently
    path = shared_data.parent / "eval" / "handover" / "sessions" / \
        "spotter-4d5611e5.prefix.jsonl"
    if not path.is_file():
        pytest.skip(f"no {path}")
    outputs = {_compress_in_a_process(path, 5312, seed) for seed in ("1", "2", "3", "4")}
    assert len(outputs) == 1


@pytest.mark.parametrize("kind", ["agent", "chat"])
def test_the_same_input_gives_the_same_json_in_every_process(tmp_path: Path,
                                                             kind: str) -> None:
    if kind == "agent":
        path = coding_session().write(tmp_path / "s.jsonl")
        conv = precis.load(path)
    else:
        conv = Conversation(messages=CHAT_ZH)
        path = tmp_path / "chat.json"
        path.write_text(json.dumps(conv.to_openai(), ensure_ascii=False), encoding="utf-8")
    budget = _share(conv, 0.6)
    one = _compress_in_a_process(path, budget, "1")
    two = _compress_in_a_process(path, budget, "2")
    data = json.loads(one)
    assert data["template"] == ("claude" if kind == "agent" else "sections")
    assert data["summary"]["sections"] and "timings_ms" not in data
    assert one == two


# -- defects found while restating the old summary's tests (strict xfails: the lead fixes) --

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "compact"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "coding_session.json"


def _fixture(name: str) -> Conversation:
    return precis.load(FIXTURES / f"{name}.json")


def _lines_citing(result, fid: str) -> list[str]:  # type: ignore[no-untyped-def]
    assert result.summary is not None
    return [i.text for i in result.summary.items if fid in i.sources]


@pytest.mark.parametrize(("path", "message", "said"), [
    (EXAMPLE, 2, "帮我查一下原因并修复"),
    (EXAMPLE, 8, "不要改动 `app/db.py` 里的连接池配置"),
    (FIXTURES / "coding_en.json", 2, "Please find the cause and fix it."),
])
def test_a_request_line_keeps_what_the_user_asked_and_their_rules(
        path: Path, message: int, said: str) -> None:
    result = compress(precis.load(path), level="heavy")
    head = f"用户（消息 {message}）" if path == EXAMPLE else f"User (msg {message})"
    lines = [t for t in _texts(_items(result)["request"]).splitlines() if t.startswith(head)]
    assert len(lines) == 1 and said in lines[0]


@pytest.mark.parametrize(("name", "share", "keep_last"), [
    ("coding_en", 0.8, 2), ("coding_zh", 0.8, 2), ("coding_en", 0.8, None),
    ("sql_en", 0.5, None)])
def test_every_value_a_line_shows_is_in_the_fragments_it_cites(
        name: str, share: float, keep_last: int | None) -> None:
    conv = _fixture(name)
    result = compress(conv, budget=_share(conv, share), keep_last=keep_last)
    check = result.handover
    assert check is not None and check.values_total > 0
    assert check.unverified == ()


def test_a_query_tool_call_shows_its_query() -> None:
    conv = _fixture("sql_en")
    result = compress(conv, level="light")
    current = _texts(_items(result)["current_work"])
    assert "run_sql(run_sql)" not in current
    assert "amount > 500" in result.summary.render()  # type: ignore[union-attr]


def test_an_assistants_sentence_is_no_command() -> None:
    result = compress(_fixture("sql_en"), level="light")
    assert "`Done: the threshold is 500" not in result.summary.render()  # type: ignore[union-attr]


def test_the_in_force_line_names_the_latest_request() -> None:
    result = compress(_fixture("coding_en"))
    in_force = [i.text for i in result.summary.items if i.type == "intent"]  # type: ignore[union-attr]
    assert in_force == ["The latest request is in the recent messages below (msg 29)"]


def test_an_instruction_after_an_acknowledgement_is_a_request() -> None:
    conv = _fixture("coding_zh")
    result = compress(conv, budget=_share(conv, 0.8), keep_last=2)
    lines = [t for t in _texts(_items(result)["request"]).splitlines()
             if t.startswith("用户（消息 25）")]
    assert lines == ["用户（消息 25）：“好。按接口路径给计数器加标签。”"]


def test_a_line_never_repeats_a_sentence() -> None:
    found = ("I looked at app/auth.py and found the expiry set to 60 seconds, far below the "
             "3600 seconds that docs/auth.md promises. ")
    fixed = ("Raised the expiry to 3600 seconds in app/auth.py and ran `pytest "
             "tests/test_auth.py`: 14 passed. ")
    conv = [Message.of("user", "Fix the login bug in app/auth.py; the session cookie expires "
                               "too early."),
            Message.of("assistant", found * 3),
            Message.of("user", "Go on."),
            Message.of("assistant", fixed * 3),
            Message.of("user", "thanks"),
            Message.of("assistant", "You're welcome.")]
    result = compress(conv, level="heavy", keep_last=2)
    assert result.template == "sections"
    for item in result.summary.items:  # type: ignore[union-attr]
        assert item.text.count("Raised the expiry to 3600 seconds") <= 1, item.text


def test_small_talk_left_out_is_dropped_as_small_talk_not_for_room() -> None:
    conv = precis.load(EXAMPLE)
    result = compress(conv, keep_last=4)
    texts = {f.id: f.text for f in analyze(conv).segmentation.fragments}
    chitchat = [texts[fid] for fid in result.dropped.get("chitchat", [])]
    budget = [texts[fid] for fid in result.dropped.get("budget", [])]
    assert "好的，我先看一下导出接口的实现。" in chitchat
    assert "开始修改。" in chitchat
    assert not {"好的，我先看一下导出接口的实现。", "开始修改。"} & set(budget)


def test_room_the_handover_leaves_goes_to_the_messages_before_a_long_last_one() -> None:
    # a sub-agent's session: one request, file reads, and a long final report; the report
    # alone is too long to keep whole, so the tail held it cut and nothing else while most
    # of the budget stayed unused
    messages = [precis.Message.of("user", "Read the sync modules and summarize each one.")]
    for k in range(8):
        messages.append(precis.Message("assistant", [precis.ToolCall(
            id=f"call_{k}", name="Read", arguments=json.dumps({"file_path": f"lib/m{k}.ex"}))]))
        body = "\n".join(f"  def step_{k}_{j}(x), do: transform(x, {j})" for j in range(60))
        messages.append(precis.Message("tool", [precis.ToolResult(
            call_id=f"call_{k}", content=f"defmodule M{k} do\n{body}\nend")]))
    report = " ".join(f"Module M{k} defines step_{k}_{j}, which transforms its input by {j}."
                      for k in range(8) for j in range(40))
    messages.append(precis.Message.of("assistant", report))
    conv = precis.Conversation(messages)
    budget = 3000
    result = compress(conv, budget=budget, tokenizer="estimate")
    assert result.compressed_tokens <= budget
    assert result.kept_messages > 1  # the file reads before the report, their heads kept
    kept = [m for m in result.messages if m.role == "tool"]
    assert kept and all("more characters cut by precis" in m.parts[0].content for m in kept)
    calls = [p.id for m in result.messages for p in m.parts if isinstance(p, precis.ToolCall)]
    results = [p.call_id for m in result.messages for p in m.parts
               if isinstance(p, precis.ToolResult)]
    assert calls == results  # every kept call has its result, in order



def test_a_sentence_the_user_pastes_back_from_the_assistant_is_not_their_background(
        shared_data: Path) -> None:
    # a Chinese chat (ShareGPT): msg 35 pastes back, nearly word for word, the assistant's
    # advice of msg 34 to ask what it means; the "background and constraints (the user's
    # own)" section listed it as the user's
    path = shared_data.parent / "eval" / "handover" / "sessions" / \
        "sharegpt-zh-sgd333.prefix.jsonl"
    if not path.is_file():
        pytest.skip(f"no {path}")
    bpe = shared_data / "tokenizers" / "o200k_base.tiktoken"
    if not bpe.is_file():
        pytest.skip(f"no {bpe}")
    result = compress(precis.load(path), budget=1940, tokenizer=f"o200k_base:{bpe}")
    assert result.summary is not None
    background = [i.text for s in result.summary.sections if s.key == "background"
                  for i in s.items]
    assert not any("特定IP地址或子网" in t for t in background), background
    # the question that quotes it stays, with the answer it got
    assert any("特定IP地址或子网" in i.text and "您了解这句话的含义吗" in i.text
               for i in result.summary.items)
