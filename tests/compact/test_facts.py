"""Exact facts: the fast reading (token hint, per-token and per-text memory) finds exactly
what running the fact pattern over every token that is not a plain word finds."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from precis.compact import _facts
from precis.compact._facts import _COMMAND_SPAN, _PATTERN, _TOKEN, _WORD_EDGES, Fact

# Characters every alternative of the fact pattern cares about, with Chinese text, box
# drawing and a few look-alikes (full-width digits are digits to the pattern).
_ALPHABET = (
    "abcdefxyzABEFXYZ0123456789 \n\t./-_:~@+`'\"()[]{},;!?%#=*$<>|\\"
    "端口改成的是，。：（）├─→"
    "\uff11\u0663"
)
_PIECES = [
    "https://example.com/a", "file:///tmp/x", "src/app/db.py", "/etc/nginx/nginx.conf",
    "../up/one.txt", "~/.config/x/y", "README.md", "ValueError", "KeyboardInterrupt",
    "ImportWarning", "3eb6f2c", "deadbeefcafe", "defaced", "PAY-1287", "AB12CD", "max_retries",
    "retryCount", "k8s-prod-eu", "us-east-1", "--dry-run", "3.10.2", "25%", "8080", "1,024",
    "2024-05-08T13:56:00Z", "12:30", '"key":', "`make test`", "`pytest -q tests/`", "\\n2",
    "Error", "HTTP", "Hello", "ok", "v2", "x.y", "a/b", "deadbeefcafe=", "Exception", "OSError",
    "IOException", "XWarning",
]


def reference_facts(text: str) -> list[Fact]:
    """The fact pattern run over every token that is not a plain word (the definition)."""
    out: list[Fact] = []

    def scan(start: int, end: int) -> None:
        for token_match in _TOKEN.finditer(text, start, end):
            token = token_match.group()
            core = token.strip(_WORD_EDGES)
            if core.isalpha() and (core.islower() or core.isupper()
                                   or (core[0].isupper() and core[1:].islower())):
                continue
            base = token_match.start()
            for m in _PATTERN.finditer(token):
                group = m.lastgroup or "identifier"
                value = m.group(group)
                kind = "number" if group == "date" else group
                if kind == "identifier" and token.startswith('":', m.end()):
                    continue
                if kind == "url":
                    value = value.rstrip(".,;:!?")
                elif kind == "path" and value.endswith("."):
                    value = value.rstrip(".")
                    if not value:
                        continue
                elif kind == "number" and value.endswith((",", ".", ":")):
                    value = value[:-1]
                at = base + m.start(group)
                out.append(Fact(kind, value, at, at + len(value)))

    pos = 0
    if "`" in text:
        for span in _COMMAND_SPAN.finditer(text):
            scan(pos, span.start())
            out.append(Fact("command", span.group(1), span.start(1), span.end(1)))
            pos = span.end()
    scan(pos, len(text))
    return out


def forget() -> None:
    _facts._TOKEN_CACHE.clear()
    _facts._memo_facts.cache_clear()
    _facts._memo_exact_facts.cache_clear()


texts = st.lists(
    st.one_of(st.text(alphabet=_ALPHABET, max_size=12), st.sampled_from(_PIECES)),
    max_size=12,
).map("".join)


@pytest.mark.parametrize("piece", _PIECES)
@pytest.mark.parametrize("frame", ["{}", "see {} now", "({}).", "x{}=", "端口{}。"])
def test_each_kind_of_fact_matches_the_reference(piece: str, frame: str) -> None:
    forget()
    text = frame.format(piece)
    assert _facts.facts(text) == reference_facts(text)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_facts_match_the_reference(text: str) -> None:
    assert _facts.facts(text) == reference_facts(text)
    assert _facts.facts(text) == reference_facts(text)  # read again, from memory


@settings(max_examples=400, deadline=None)
@given(st.one_of(
    st.text(alphabet=_ALPHABET, min_size=1, max_size=16),
    st.tuples(st.text(alphabet=_ALPHABET, max_size=3), st.sampled_from(_PIECES),
              st.text(alphabet=_ALPHABET, max_size=3)).map("".join),
).map(lambda t: "".join(t.split()) or "x"))
def test_a_token_without_a_hint_holds_no_fact(token: str) -> None:
    # the pre-check may only skip tokens in which the pattern finds nothing
    if _facts._HINT.search(token) is None:
        assert list(_PATTERN.finditer(token)) == []


def test_plain_words_made_of_hex_letters_are_no_identifiers() -> None:
    # "defaced" is all hex letters: a plain word, skipped before the pattern is tried
    forget()
    assert _facts.facts("the defaced wall") == []
    # in a token that is no plain word the same letters are an id, as the pattern says
    assert [f.text for f in _facts.facts("the x/defaced wall")] == ["defaced"]
    assert [f.text for f in _facts.facts("hash deadbee7 here")] == ["deadbee7"]


@pytest.mark.parametrize("text", [
    "Edit src/precis/cli.py then run `make test` on port 8080",
    "端口改成 8443，地址是 https://a.example.cn/x。",
])
def test_the_same_text_gives_the_same_facts_from_memory(text: str) -> None:
    forget()
    first = _facts.facts(text)
    again = _facts.facts(text)
    assert first == again == reference_facts(text)
    again.append(Fact("number", "1", 0, 1))  # a caller may change its list ...
    assert _facts.facts(text) == first  # ... without changing what is remembered
    exact = _facts.exact_facts(text)
    exact.clear()
    assert _facts.exact_facts(text) == _facts._exact_facts(text) != []


def test_long_texts_are_read_without_memory() -> None:
    forget()
    text = "see src/app/db.py:120 and 3.10.2 " * 200
    assert len(text) > _facts._MEMO_CHARS
    assert _facts.facts(text) == reference_facts(text)
    assert _facts._memo_facts.cache_info().currsize == 0
    offsets = [(f.start, f.end) for f in _facts.facts(text)]
    assert all(text[s:e] == f.text for (s, e), f in zip(offsets, _facts.facts(text)))


def test_a_repeated_token_is_placed_at_each_of_its_offsets() -> None:
    forget()
    text = "a/b.py x a/b.py y a/b.py"
    assert [(f.text, f.start) for f in _facts.facts(text)] == [
        ("a/b.py", 0), ("a/b.py", 9), ("a/b.py", 18)]


def test_json_arguments_and_commands_are_unchanged() -> None:
    text = '{"command": "cd /repo && pytest -q tests/test_x.py", "timeout": 120}'
    found = [(f.kind, f.text) for f in _facts.exact_facts(text)]
    assert ("command", "cd /repo && pytest -q tests/test_x.py") in found
    assert ("path", "tests/test_x.py") in found
    assert ("number", "120") in found
