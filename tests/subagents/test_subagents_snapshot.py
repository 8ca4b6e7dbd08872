"""ContextSnapshot: anchors from real fixture conversations, prompts within budget,
immutability."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import pytest

import precis
from precis.analysis import analyze
from precis.errors import ConfigError, InputError
from precis.subagents import ANCHOR_KINDS, AnchorItem, ContextSnapshot
from precis.subagents._text import ELLIPSIS, one_line

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "compact"


@pytest.fixture(scope="module")
def en() -> ContextSnapshot:
    return ContextSnapshot.from_conversation(precis.load(FIXTURES / "coding_en.json"),
                                             session_id="billing")


@pytest.fixture(scope="module")
def zh() -> ContextSnapshot:
    return ContextSnapshot.from_conversation(precis.load(FIXTURES / "coding_zh.json"),
                                             session_id="shop")


def _texts(snapshot: ContextSnapshot, kind: str) -> list[str]:
    return [it.text for it in snapshot.of_kind(kind)]


# -- anchors from a real conversation -------------------------------------------------------


def test_english_anchors_by_kind(en: ContextSnapshot) -> None:
    constraints = _texts(en, "C")
    assert ("Never touch `app/db.py`: the connection pool there is managed by the ops team."
            in constraints)
    assert "Label the counter by endpoint." in constraints
    assert "Please find the cause and fix it." in _texts(en, "P")
    assert ("I will add a counter named gateway_retries_total next to the existing request "
            "metrics.") in _texts(en, "D")
    interfaces = _texts(en, "I")
    for name in ("app/db.py", "config/settings.toml", "BillingClient",
                 "https://billing.example.com/healthz"):
        assert name in interfaces  # original spelling, trailing full stop trimmed


def test_repeated_request_is_one_anchor_citing_every_copy(en: ContextSnapshot) -> None:
    # messages 13, 16 and 20 of the fixture say the same sentence
    repeats = [it for it in en.items
               if it.text == "Please keep the public API of the `BillingClient` class unchanged."]
    assert len(repeats) == 1
    assert repeats[0].messages == (13, 16, 20)
    assert len(repeats[0].fragment_ids) == 3 and repeats[0].level == "HIGH"


def test_acknowledgements_are_not_anchors(en: ContextSnapshot, zh: ContextSnapshot) -> None:
    for snap in (en, zh):
        assert not {"ok", "Good.", "好的", "好。", "明白。"} & {it.text for it in snap.items}


def test_a_superseded_limit_and_its_echo_are_no_anchors() -> None:
    conv = precis.Conversation([
        precis.Message.of("user", "Build the export endpoint."),
        precis.Message.of("user", "The export limit must be 31 days."),
        precis.Message.of("assistant", "OK, 31 days it is."),
        precis.Message.of("user", "Change of plan: the export limit must be 92 days instead."),
    ])
    texts = [a.text for a in ContextSnapshot.from_conversation(conv).items]
    assert "Change of plan: the export limit must be 92 days instead." in texts
    assert not any("31 days" in t for t in texts)  # nor the reply that agreed to it


def test_chinese_anchors(zh: ContextSnapshot) -> None:
    assert "注意：绝对不要修改 `app/db.py`，连接池由运维统一管理。" in _texts(zh, "C")
    assert "订单服务在高峰期经常返回 502，帮我查一下原因并修复。" in _texts(zh, "P")
    assert "OrderClient" in _texts(zh, "I")
    assert zh.session_id == "shop"


def test_every_anchor_leads_back_to_its_source_text() -> None:
    conv = precis.load(FIXTURES / "coding_en.json")
    analysis = analyze(conv)
    snap = ContextSnapshot.from_conversation(conv, analysis=analysis)
    assert {it.kind for it in snap.items} == set(ANCHOR_KINDS)
    for it in snap.items:
        assert it.fragment_ids, it
        sources = [analysis.item(f).fragment for f in it.fragment_ids]
        assert sorted({f.provenance.message for f in sources}) == list(it.messages)
        if it.kind == "I":
            assert any(it.text.lower() in f.text.lower() for f in sources)
        elif it.text.endswith(ELLIPSIS):
            assert one_line(sources[-1].text).startswith(it.text[:-1])
        else:
            assert it.text == one_line(sources[-1].text)


def test_min_level_and_item_length() -> None:
    conv = precis.load(FIXTURES / "coding_en.json")
    high = ContextSnapshot.from_conversation(conv, min_level="high", max_item_chars=40)
    assert all(it.level == "HIGH" for it in high.items)
    assert all(len(it.text) <= 40 for it in high.items)


def test_custom_type_mapping() -> None:
    conv = precis.load(FIXTURES / "coding_en.json")
    snap = ContextSnapshot.from_conversation(conv, type_anchors={"constraint": "C"},
                                             max_interfaces=0)
    assert {it.kind for it in snap.items} == {"C"}


# -- explicit items -------------------------------------------------------------------------


def test_seed_style_items() -> None:
    snap = ContextSnapshot.from_items(
        [{"type": "D", "content": "使用 JWT 认证"},
         {"kind": "c", "text": "必须支持 HTTPS", "level": "high", "source": "S4"}],
        session_id="session-abc123", summary="当前正在实现用户认证模块",
    )
    assert snap.of_kind("D")[0].text == "使用 JWT 认证"
    c = snap.of_kind("C")[0]
    assert (c.level, c.fragment_ids, c.source) == ("HIGH", ("S4",), "S4")


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"kind": "X", "text": "a"}, "unknown anchor kind 'X'"),
        ({"kind": "D"}, "missing 'text'"),
        ({"kind": "D", "text": "a", "colour": "red"}, "unknown key 'colour'"),
        ({"kind": "D", "text": "a", "level": "urgent"}, "unknown level 'urgent'"),
        ({"kind": "D", "text": "  "}, "must not be empty"),
        ("D: a", "expected an AnchorItem or a mapping"),
    ],
)
def test_bad_items_name_the_problem(item: object, message: str) -> None:
    with pytest.raises(InputError) as err:
        ContextSnapshot.from_items([{"kind": "P", "text": "ok"}, item])  # type: ignore[list-item]
    assert message in str(err.value)
    assert err.value.where is not None and err.value.where.startswith("items[1]")


# -- prompts --------------------------------------------------------------------------------

TASKS = [
    "Add a retry counter metric gateway_retries_total labelled by endpoint",
    "给重试次数加监控指标并配置告警",
    "Check `config/settings.toml` keepalive_timeout 和负载均衡超时",
]


@pytest.mark.parametrize("budget", [0, 1, 10, 40, 80, 150, 250, 400, 800, 1500, 10_000])
@pytest.mark.parametrize("task", TASKS)
def test_prompt_never_exceeds_the_budget(
    en: ContextSnapshot, zh: ContextSnapshot, task: str, budget: int
) -> None:
    for snap in (en, zh):
        text = snap.prompt_for(task, budget)
        assert len(text) <= budget
        if budget >= 400:
            assert "Task: " in text and "[" in text  # the task and some anchors


def test_prompt_names_the_task_and_cites_sources(en: ContextSnapshot) -> None:
    text = en.prompt_for(TASKS[0], 800, task_id="metrics-1")
    assert f"Task metrics-1: {TASKS[0]}" in text
    # the anchor sharing the identifier with the task is there, with its fragment id
    assert ("[D] I will add a counter named gateway_retries_total next to the existing "
            "request metrics. (S32)") in text
    assert "[C] Label the counter by endpoint. (S39)" in text


def test_prompt_is_deterministic(en: ContextSnapshot) -> None:
    again = ContextSnapshot.from_conversation(precis.load(FIXTURES / "coding_en.json"),
                                              session_id="billing")
    assert again == en and again.fingerprint == en.fingerprint
    for task in TASKS:
        assert again.prompt_for(task, 600) == en.prompt_for(task, 600)


def test_prompt_prefers_relevant_then_high() -> None:
    snap = ContextSnapshot.from_items([
        AnchorItem("M", "retry counter is internal to the client", "MEDIUM"),
        AnchorItem("C", "retry counter must be labelled by endpoint", "HIGH"),
        AnchorItem("M", "the weather is nice today", "MEDIUM"),
        AnchorItem("C", "never touch app/db.py", "HIGH"),
    ])
    task = "add a retry counter"
    # header 20 + task line 25 + "+N more" 27 + legend 23 + one line 46, 5 line breaks: 146
    one = snap.render_for(task, 150)
    assert [it.text for it in one.items] == ["retry counter must be labelled by endpoint"]
    every = snap.render_for(task, 2000)
    texts = [it.text for it in every.items]
    # the irrelevant MEDIUM anchor never comes; the irrelevant HIGH one does, as filler
    assert "the weather is nice today" not in texts
    assert "never touch app/db.py" in texts and every.omitted == 1


def test_prompt_in_chinese_picks_by_shared_words(zh: ContextSnapshot) -> None:
    rendered = zh.render_for("告警规则写在哪里", 300)
    assert len(rendered.text) <= 300
    assert any("告警规则" in it.text for it in rendered.items)


@pytest.mark.parametrize("bad", [-1, 2.5, True])
def test_bad_prompt_budget_is_a_config_error(en: ContextSnapshot, bad: object) -> None:
    with pytest.raises(ConfigError):
        en.prompt_for("task", bad)  # type: ignore[arg-type]


def test_empty_task_is_an_input_error(en: ContextSnapshot) -> None:
    with pytest.raises(InputError) as err:
        en.prompt_for("   ")
    assert err.value.where == "task"


def test_bad_options_of_from_conversation() -> None:
    conv = precis.load(FIXTURES / "coding_en.json")
    with pytest.raises(InputError):
        ContextSnapshot.from_conversation(conv, min_level="URGENT")
    with pytest.raises(ConfigError):
        ContextSnapshot.from_conversation(conv, type_anchors={"gossip": "M"})
    with pytest.raises(InputError):
        ContextSnapshot.from_conversation(conv, type_anchors={"fact": "Z"})
    with pytest.raises(InputError):
        other = precis.load(FIXTURES / "coding_zh.json")
        ContextSnapshot.from_conversation(conv, analysis=analyze(other))
    with pytest.raises(InputError):
        ContextSnapshot.from_conversation([{"role": "user"}])  # type: ignore[arg-type]


# -- immutability -----------------------------------------------------------------------------


def test_snapshot_cannot_be_changed(en: ContextSnapshot) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        en.items = ()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        en.items[0].text = "changed"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        en.items.append(en.items[0])  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        en.anchors["P"] = ()  # type: ignore[index]
    assert isinstance(hash(en), int)


def test_metadata_is_a_frozen_copy() -> None:
    tags = ["auth", "jwt"]
    meta = {"owner": "eye", "tags": tags, "limits": {"files": 3}}
    snap = ContextSnapshot.from_items([{"kind": "D", "text": "use JWT"}], metadata=meta)
    tags.append("changed")
    meta["owner"] = "nose"
    assert snap.metadata["owner"] == "eye" and snap.metadata["tags"] == ("auth", "jwt")
    with pytest.raises(TypeError):
        snap.metadata["owner"] = "x"  # type: ignore[index]
    with pytest.raises(TypeError):
        snap.metadata["limits"]["files"] = 9


def test_metadata_refuses_mutable_objects() -> None:
    with pytest.raises(InputError) as err:
        ContextSnapshot(metadata={"lock": threading.Lock()})
    assert err.value.where == "metadata.lock"


def test_fingerprint_follows_content() -> None:
    a = ContextSnapshot.from_items([{"kind": "D", "text": "use JWT"}])
    b = ContextSnapshot.from_items([{"kind": "D", "text": "use JWT", "level": "HIGH"}])
    assert a.fingerprint != b.fingerprint and len(a.fingerprint) == 12


def test_one_snapshot_shared_by_threads_gives_each_the_same_prompt(
    en: ContextSnapshot,
) -> None:
    expected = {task: en.prompt_for(task, 500) for task in TASKS}
    got: list[tuple[str, str]] = []
    lock = threading.Lock()
    barrier = threading.Barrier(12)

    def worker(n: int) -> None:
        barrier.wait()
        task = TASKS[n % len(TASKS)]
        text = en.prompt_for(task, 500)
        with lock:
            got.append((task, text))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 12 and all(text == expected[task] for task, text in got)


def test_high_constraints_come_with_every_task() -> None:
    snap = ContextSnapshot.from_items([
        AnchorItem("M", "the counter lives in metrics.py", "HIGH"),  # shares "counter"
        AnchorItem("C", "never touch app/db.py", "HIGH"),  # shares nothing
    ])
    # header 20 + task 25 + "+N more" 27 + legend 23 + "[C] never touch app/db.py" 25,
    # 5 line breaks: 125; the M line would need 36 more and 11 for its legend entry
    one = snap.render_for("add a retry counter", 140)
    assert [it.text for it in one.items] == ["never touch app/db.py"]
    assert one.text.endswith("[C] never touch app/db.py\n(+1 more anchors not shown)")
