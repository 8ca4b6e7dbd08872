"""Consolidation: duplicates, requirement version chains, folded confirmations."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from precis.analysis.consolidate import (
    ConsolidationConfig,
    consolidate,
    find_chains,
    find_duplicates,
    is_confirmation,
)
from precis.analysis.model import Consolidation, DuplicateGroup
from precis.errors import ConfigError, InputError
from precis.segment.model import Fragment, Provenance

_PROV = Provenance(round=0, message=0, part=0, start=0, end=0)


def frags(
    texts: Sequence[str], kinds: Sequence[str] | None = None, role: str = "user",
    messages: Sequence[int] | None = None,
) -> list[Fragment]:
    """Fragments of the given texts, each in a message of its own unless ``messages`` says
    which message each is in."""
    return [
        Fragment(
            id=f"S{i + 1}",
            kind=kinds[i] if kinds else "sentence",  # type: ignore[arg-type]
            text=text,
            role=role,
            language="en",
            provenance=_PROV._replace(message=messages[i] if messages else i),
        )
        for i, text in enumerate(texts)
    ]


# -- duplicates ------------------------------------------------------------------------------


def test_restated_requirement_is_one_group_with_the_latest_kept() -> None:
    fragments = frags([
        "The export must finish before 6 am every day.",
        "Which bucket holds the raw files?",
        "The export must finish before 6 AM every day!",  # same text up to case / punctuation
        "It lives in s3://acme-raw/orders/.",
        "As I said, the export must finish before 6 am each day.",
    ])
    groups = find_duplicates(fragments)
    assert groups == [
        DuplicateGroup(kept="S5", members=("S1", "S3", "S5"), most_complete="S5")
    ]
    assert groups[0].count == 3


def test_restated_chinese_requirement_is_grouped() -> None:
    fragments = frags([
        "预算不超过 5000 元，必须在本月内完成采购。",
        "显卡选 4090 还是 4060 Ti？",
        "预算不超过5000元，必须在本月内完成采购！",
        "我再强调一下，预算不能超过 5000 元，本月内必须完成采购。",
    ])
    [group] = find_duplicates(fragments)
    assert group.members == ("S1", "S3", "S4")
    assert group.kept == "S4"


def test_repetition_far_apart_is_found() -> None:
    filler = [f"Step {i}: migrate shard {i} and check its row count." for i in range(40)]
    fragments = frags([
        "Never drop the audit table in production.",
        *filler,
        "Never drop the audit table in production, whatever happens.",
    ])
    groups = find_duplicates(fragments)
    assert [g.members for g in groups] == [("S1", "S42")]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The retention limit is 31 days for audit logs.",
         "The retention limit is 92 days for audit logs."),
        ("Please close ticket PAY-1287 before the release.",
         "Please close ticket PAY-1278 before the release."),
        ("Write the report to data/out/2024Q1.csv every night.",
         "Write the report to data/out/2024Q2.csv every night."),
        ("Pin the service to version 3.9 of the runtime.",
         "Pin the service to version 3.10 of the runtime."),
        ("Use MySQL for the orders database.", "Use Postgres for the orders database."),
        ("订单号是 DD202406030117，请帮我查一下物流。",
         "订单号是 DD202406030118，请帮我查一下物流。"),
        ("Should we use Redis for the session cache?",
         "We should use Redis for the session cache."),
    ],
)
def test_a_different_number_id_path_version_or_name_is_not_a_duplicate(a: str, b: str) -> None:
    assert find_duplicates(frags([a, b])) == []
    # the same sentence said twice is, so the pair above differs only by what it names
    assert len(find_duplicates(frags([a, a.replace(".", "!")]))) == 1


def test_a_restatement_cue_does_not_swallow_a_short_fragment() -> None:
    fragments = frags([
        "Orders table.",  # two shingles, both inside the restatement below
        "Again, the deploy failed because the migration on the orders table timed out.",
    ])
    assert find_duplicates(fragments) == []


def test_most_complete_member_is_the_fullest_wording() -> None:
    fragments = frags(
        [
            "Team: 3 mobile engineers (React Native), 1 backend engineer and a designer.",
            "- Team: 3 mobile engineers, 1 backend engineer and a designer.",
        ],
        kinds=["sentence", "list_item"],
    )
    [group] = find_duplicates(fragments)
    assert group.kept == "S2"
    assert group.most_complete == "S1"  # names React Native; the summary line does not


def test_structured_fragments_group_only_when_identical() -> None:
    listing = "```\nsrc/\n  main.py\n  util.py\n```"
    q1 = "SELECT region, SUM(amount) FROM orders WHERE status = 'paid' GROUP BY region"
    q2 = "SELECT region, SUM(amount) FROM orders WHERE status = 'refunded' GROUP BY region"
    fragments = frags(
        [listing, q1, listing, q2], kinds=["tool_result", "sql", "tool_result", "sql"]
    )
    assert [g.members for g in find_duplicates(fragments)] == [("S1", "S3")]


def test_threshold_argument_overrides_the_config() -> None:
    a = "Deploy the billing service to the staging cluster tonight."
    b = "Deploy the billing service to the staging cluster tomorrow."
    # shingles: deploy billing service staging cluster + tonight / tomorrow: Jaccard 5/7
    assert len(find_duplicates(frags([a, b]), threshold=0.7)) == 1
    assert find_duplicates(frags([a, b]), threshold=0.75) == []


# -- chains ----------------------------------------------------------------------------------


def test_chain_of_three_versions_in_order_with_the_last_current() -> None:
    fragments = frags([
        "数据库用 MySQL。",
        "MySQL 8.0 已经装好了。",
        "数据库改成 Postgres。",
        "索引要不要重建？",
        "数据库定为 Postgres 16，部署在 RDS 上。",
    ])
    types = ["decision", "fact", "decision", "background", "decision"]
    [chain] = find_chains(fragments, types)
    assert chain.fragments == ("S1", "S3", "S5")
    assert chain.current == "S5"
    assert "数据库" in chain.topic
    result = consolidate(fragments, types)
    assert result.superseded_by == {"S1": "S3", "S3": "S5"}


def test_english_chain_with_change_cues() -> None:
    fragments = frags([
        "Let's use MySQL for the orders database.",
        "The orders table has 12M rows.",
        "Actually, switch the orders database to Postgres.",
        "How big is the index?",
        "Make it Postgres 16 on RDS for the orders database.",
    ])
    types = ["decision", "fact", "decision", "background", "decision"]
    [chain] = find_chains(fragments, types)
    assert chain.fragments == ("S1", "S3", "S5")
    assert chain.id == "C1"


def test_a_changed_number_in_the_same_slot_is_a_new_version() -> None:
    fragments = frags([
        "Keep support for Python 3.9 for now.",
        "Add a CHANGELOG entry for the fix.",
        "So we can drop 3.9; the minimum is now Python 3.10.",
    ])
    [chain] = find_chains(fragments, ["constraint", "goal", "constraint"])
    assert chain.fragments == ("S1", "S3")
    assert chain.topic == "python"


def test_unrelated_goals_are_not_chained() -> None:
    fragments = frags([
        "Please set up the CI pipeline on GitHub Actions.",
        "Translate the README into Chinese instead.",
        "Change the logo color to blue.",
        "Actually, write the changelog in Markdown.",
    ])
    assert find_chains(fragments, ["goal"] * 4) == []


def test_points_of_one_message_are_not_versions_of_each_other() -> None:
    texts = ["保留时间改一下，order 的要留 15 天，对账要用。",
             "gateway 和 nginx 的保留时间还是 7 天。"]
    types = ["constraint", "constraint"]
    # the same two sentences in two turns: the second changes the first
    assert [c.fragments for c in find_chains(frags(texts), types)] == [("S1", "S2")]
    # said together, they are two rules side by side: both hold
    together = consolidate(frags(texts, messages=[0, 0]), types)
    assert together.chains == []
    assert together.superseded_by == {}


def test_only_the_user_changes_what_the_user_asked_for() -> None:
    texts = ["Don't delete anything from the RAW tables; they are our audit trail.",
             "Then the fix is a dedup view on top of the RAW tables instead of deleting rows."]
    types = ["constraint", "decision"]
    user_then_assistant = [frags(texts)[0], frags(texts, role="assistant")[1]]
    result = consolidate(user_then_assistant, types)
    assert result.chains == []
    assert result.superseded_by == {}  # the user's rule holds
    # the same words from one speaker are a change (the user's own, or the assistant's)
    for role in ("user", "assistant"):
        [chain] = consolidate(frags(texts, role=role), types).chains
        assert chain.fragments == ("S1", "S2")


def test_a_new_version_said_in_two_sentences_leaves_both_current() -> None:
    texts = [
        "帮我写个脚本，把 `orders.csv` 里重复的订单去掉，按 `order_id` 去重就行。",
        "不对，同一个订单可能有多个 SKU，只按 `order_id` 去重会把正常的明细也删掉。",
        "改成按 `order_id` + `sku` 去重，重复的保留 `updated_at` 最新的那条。",
    ]
    types = ["goal", "decision", "goal"]
    apart = consolidate(frags(texts), types)  # three turns: three versions
    assert [c.fragments for c in apart.chains] == [("S1", "S2", "S3")]
    assert apart.superseded_by == {"S1": "S2", "S2": "S3"}
    # the objection and the new rule in one reply: the first version goes, both of theirs hold
    together = consolidate(frags(texts, messages=[0, 1, 1]), types)
    assert [c.fragments for c in together.chains] == [("S1", "S2", "S3")]
    assert together.superseded_by == {"S1": "S2"}


def test_only_goal_constraint_decision_types_form_chains() -> None:
    fragments = frags([
        "The export runs at 2 am.",
        "Actually, the export runs at 3 am.",
    ])
    assert find_chains(fragments, ["fact", "fact"]) == []
    assert len(find_chains(fragments, ["constraint", "constraint"])) == 1


def test_a_restated_version_is_a_duplicate_not_a_new_version() -> None:
    fragments = frags([
        "The API limit is 100 requests per minute.",
        "Actually, raise the API limit to 200 requests per minute.",
        "As I said, raise the API limit to 200 requests per minute.",
    ])
    result = consolidate(fragments, ["constraint"] * 3)
    assert [c.fragments for c in result.chains] == [("S1", "S2")]
    assert [g.members for g in result.duplicates] == [("S2", "S3")]
    assert result.superseded_by == {"S1": "S2", "S2": "S3"}


def test_types_must_match_fragments() -> None:
    with pytest.raises(InputError, match="2 fragment types for 3 fragments"):
        find_chains(frags(["a", "b", "c"]), ["goal", "goal"])


# -- confirmations ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["ok", "Okay.", "好的", "好的，谢谢！", "收到", "thanks!", "Thank you", "got it", "嗯",
     "明白了。", "Sounds good!", "👍", "👍👍", "ok, thanks", "收到～",
     # a prompt to go on with what is under way
     "Go on.", "Please continue.", "continue", "ok, keep going", "继续", "好的，继续吧。"],
)
def test_short_acknowledgements_are_confirmations(text: str) -> None:
    assert is_confirmation(text)


@pytest.mark.parametrize(
    "text",
    ["好的，我先看一下日志", "Thanks! Can you also add tests?", "yes", "可以", "ok " * 30,
     "Got it, the limit is 30 days.", "", "   ", "Continue with the import of orders.csv",
     "继续修复登录问题", "go on to the next file"],
)
def test_content_is_not_a_confirmation(text: str) -> None:
    assert not is_confirmation(text)


def test_confirmations_fold_and_are_not_grouped() -> None:
    fragments = frags(["ok", "Run the tests with make test.", "好的", "ok", "👍"])
    result = consolidate(fragments, ["chitchat", "goal", "chitchat", "chitchat", "chitchat"])
    assert result.folded == {"S1", "S3", "S4", "S5"}
    assert result.duplicates == []


# -- determinism and scale -------------------------------------------------------------------


def _mixed_sample(n: int) -> tuple[list[Fragment], list[str]]:
    rnd = random.Random(7)
    words = ["export", "deadline", "budget", "cluster", "token", "预算", "上线", "数据库",
             "invoice", "retry", "schema", "分钟"]
    texts: list[str] = []
    for _ in range(n):
        if texts and rnd.random() < 0.2:
            texts.append(rnd.choice(texts))
        else:
            body = " ".join(rnd.choice(words) for _ in range(rnd.randint(3, 9)))
            texts.append(f"{body} {rnd.randint(1, 40)}." if rnd.random() < 0.5 else body)
    types = [rnd.choice(["goal", "constraint", "decision", "fact"]) for _ in range(n)]
    return frags(texts), types


def _as_json(result: Consolidation) -> str:
    return json.dumps(
        {
            "duplicates": [[g.kept, list(g.members), g.most_complete] for g in result.duplicates],
            "chains": [[c.id, c.topic, list(c.fragments)] for c in result.chains],
            "folded": sorted(result.folded),
            "superseded_by": sorted(result.superseded_by.items()),
        },
        ensure_ascii=False,
    )


def test_same_input_gives_the_same_output() -> None:
    fragments, types = _mixed_sample(400)
    first = _as_json(consolidate(fragments, types))
    assert _as_json(consolidate(fragments, types)) == first
    assert '"duplicates": []' not in first  # the sample does hold duplicates


def test_output_does_not_depend_on_the_hash_seed() -> None:
    script = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, sys.argv[1])
        from test_consolidate import _as_json, _mixed_sample, consolidate
        fragments, types = _mixed_sample(400)
        print(_as_json(consolidate(fragments, types)))
        """
    )
    here = os.path.dirname(os.path.abspath(__file__))
    outputs = []
    for seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", script, here],
            capture_output=True, text=True, env=env, check=True, timeout=120,
        )
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    assert outputs[0] == _as_json(consolidate(*_mixed_sample(400))) + "\n"


def test_twenty_thousand_fragments_with_ten_thousand_identical() -> None:
    same = "The nightly export must finish before 6 am."
    texts = []
    for i in range(10_000):
        texts.append(same)
        texts.append(f"Shard {i} finished with {i * 7 + 3} rows in batch {i % 97}.")
    fragments = frags(texts)
    result = consolidate(fragments, ["constraint", "fact"] * 10_000)
    [group] = result.duplicates
    assert group.count == 10_000
    assert group.members[0] == "S1"
    assert group.kept == "S19999"
    assert len(result.superseded_by) == 9_999


# -- robustness ------------------------------------------------------------------------------


_KINDS = ["sentence", "paragraph", "list_item", "heading", "code", "tool_result", "thinking"]
_TYPES = ["goal", "constraint", "decision", "fact", "chitchat", "code"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.one_of(
                st.text(max_size=80),
                st.sampled_from(["ok", "好的", "👍", "\x00\x1b[31m", "", " \n\t", "改成 3 万",
                                 "Actually use 5 days", "PAY-1287", "预算 3 万"]),
            ),
            st.sampled_from(_KINDS),
            st.sampled_from(_TYPES),
        ),
        max_size=25,
    )
)
def test_never_raises_and_keeps_its_invariants(items: list[tuple[str, str, str]]) -> None:
    fragments = frags([t for t, _, _ in items], kinds=[k for _, k, _ in items])
    result = consolidate(fragments, [ty for _, _, ty in items])
    ids = [f.id for f in fragments]
    for group in result.duplicates:
        assert len(group.members) >= 2
        assert list(group.members) == sorted(group.members, key=ids.index)
        assert group.kept == group.members[-1]
        assert group.most_complete in group.members
    for chain in result.chains:
        assert len(chain.fragments) >= 2
        assert list(chain.fragments) == sorted(chain.fragments, key=ids.index)
    assert result.folded <= set(ids)
    for old, new in result.superseded_by.items():
        assert ids.index(old) < ids.index(new)


def test_a_one_megabyte_line_is_handled() -> None:
    rnd = random.Random(3)
    vocab = [f"w{i}" for i in range(5000)]
    big = " ".join(rnd.choice(vocab) for _ in range(200_000))  # ~1.1 MB
    fragments = frags([big, "a" * 1_000_000, big, "x" * 10 + "。" * 1000])
    result = consolidate(fragments, ["goal"] * 4)  # goals: chain detection reads them too
    assert [g.members for g in result.duplicates] == [("S1", "S3")]


# -- config ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "where"),
    [
        ({"threshold": 0}, "consolidation.threshold"),
        ({"threshold": 1.5}, "consolidation.threshold"),
        ({"num_perm": 30, "bands": 16}, "consolidation.bands"),
        ({"bands": 0}, "consolidation.bands"),
        ({"min_band_hits": 40}, "consolidation.min_band_hits"),
        ({"cjk_ngram": True}, "consolidation.cjk_ngram"),
        ({"chain_types": ("goal", "wish")}, "consolidation.chain_types"),
        ({"slot_bonus": -1}, "consolidation.slot_bonus"),
    ],
)
def test_config_is_checked_on_construction(kwargs: dict[str, object], where: str) -> None:
    with pytest.raises(ConfigError) as err:
        ConsolidationConfig(**kwargs)  # type: ignore[arg-type]
    assert err.value.where == where


def test_config_from_dict_rejects_unknown_keys() -> None:
    assert ConsolidationConfig.from_dict({"threshold": 0.6}).threshold == 0.6
    assert ConsolidationConfig.from_dict({"chain_types": ["goal"]}).chain_types == ("goal",)
    with pytest.raises(ConfigError, match=r"unknown setting.*'treshold'"):
        ConsolidationConfig.from_dict({"treshold": 0.6})
