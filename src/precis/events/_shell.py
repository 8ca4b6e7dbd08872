"""Shell commands: what kind of work a command line does, and what its output says.

Shared by every vocabulary whose tool runs a shell (Claude Code ``Bash``, SWE-agent
``bash``, OpenHands ``execute_bash``, Codex ``shell``, a plain ``run_command``).
A command line is cut into its simple commands (``&&``, ``;``, ``||``, ``|``); the kind is
the weightiest of theirs (a commit outranks the ``git add`` before it, a test run the
``cd`` before it).
"""

from __future__ import annotations

import re
import shlex

from precis.events.model import ActionKind, TestCounts

__all__ = [
    "classify_command",
    "commit_of",
    "error_line",
    "exit_code_of",
    "program_of",
    "split_command",
    "test_counts",
]

# The weight of each kind when a command line holds several (higher wins).
_WEIGHT: dict[str, int] = {
    "commit": 14, "push": 13, "test": 12, "lint": 11, "build": 10, "install": 9,
    "tracker": 8, "delete": 7, "move": 6, "create": 5, "vcs": 4, "command": 3, "search": 2,
    "read": 1,
}
_TEST_SUB = {
    "mix": {"test", "coveralls"}, "cargo": {"test", "nextest", "llvm-cov", "tarpaulin"},
    "npm": {"test", "t"}, "yarn": {"test"}, "pnpm": {"test"}, "bun": {"test"},
    "go": {"test"}, "dotnet": {"test"}, "mvn": {"test", "verify"}, "gradle": {"test"},
    "make": {"test", "check"}, "just": {"test", "check"}, "deno": {"test"},
    "uv": set(), "poetry": set(),
}
_TEST_PROGRAMS = frozenset({
    "pytest", "py.test", "jest", "vitest", "rspec", "phpunit", "ctest", "tox", "nox",
    "mocha", "ava", "karma", "behave", "nosetests", "trial",
})
_BUILD_SUB = {
    "mix": {"compile", "deps.compile", "release", "escript.build", "assets.build"},
    "cargo": {"build", "check", "run"}, "npm": {"build"}, "yarn": {"build"},
    "pnpm": {"build"}, "go": {"build", "vet"}, "dotnet": {"build"},
    "mvn": {"package", "compile", "install"}, "gradle": {"build", "assemble"},
}
_BUILD_PROGRAMS = frozenset({"make", "cmake", "tsc", "gcc", "g++", "clang", "javac", "esbuild",
                             "webpack", "vite", "rollup", "ninja", "bazel"})
_LINT_SUB = {
    "mix": {"credo", "format", "dialyzer", "quality", "sobelow"},
    "cargo": {"clippy", "fmt"}, "npm": {"lint"}, "yarn": {"lint"}, "pnpm": {"lint"},
    "go": {"fmt"}, "just": {"lint"},
}
_LINT_PROGRAMS = frozenset({
    "ruff", "flake8", "mypy", "pyright", "pylint", "black", "isort", "eslint", "prettier",
    "rubocop", "shellcheck", "golangci-lint", "gofmt", "rustfmt", "clippy", "stylelint",
    "tslint", "biome",
})
_INSTALL_SUB = {
    "pip": {"install"}, "pip3": {"install"}, "npm": {"install", "i", "ci", "add"},
    "yarn": {"add", "install"}, "pnpm": {"add", "install"}, "cargo": {"install", "add"},
    "mix": {"deps.get"}, "apt-get": {"install"}, "apt": {"install"}, "brew": {"install"},
    "uv": {"add", "pip", "sync"}, "poetry": {"add", "install"}, "go": {"get", "install"},
    "gem": {"install"}, "bundle": {"install"}, "conda": {"install"},
}
_TRACKERS = frozenset({"bd", "beads", "jira", "linear", "tea"})
_SEARCH = frozenset({"grep", "rg", "ag", "ack", "find", "fd", "locate", "git-grep"})
_READ = frozenset({"cat", "head", "tail", "less", "more", "ls", "tree", "wc", "nl", "file",
                   "stat", "du", "bat", "pwd", "which", "echo", "printf", "diff"})
_WRAPPERS = frozenset({"sudo", "time", "timeout", "env", "nohup", "exec", "command",
                       "xargs", "npx", "bunx", "uvx"})
_RUNNERS = {"python": "-m", "python3": "-m", "uv": "run", "poetry": "run", "bundle": "exec"}
_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\n|(?<![|>])\|(?!\|))\s*")
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def split_command(command: str) -> list[list[str]]:
    """The simple commands of a command line, each as its words (quotes removed where the
    line can be parsed; a heredoc's body is not a command)."""
    text = re.sub(r"<<-?\s*['\"]?(\w+)['\"]?.*?^\s*\1\s*$", "", command,
                  flags=re.DOTALL | re.MULTILINE)
    out: list[list[str]] = []
    for piece in _SPLIT.split(text):
        piece = piece.strip().lstrip("(").rstrip(")").strip()
        if not piece:
            continue
        try:
            words = shlex.split(piece, comments=True)
        except ValueError:
            words = piece.split()
        if words:
            out.append(words)
    return out


def program_of(words: list[str]) -> list[str]:
    """The words from the program on: environment settings, ``sudo`` / ``timeout N`` /
    ``npx`` and ``python -m`` / ``uv run`` prefixes removed."""
    i = 0
    while i < len(words):
        w = words[i]
        if _ENV_ASSIGN.match(w):
            i += 1
        elif w in _WRAPPERS:
            i += 1
            while i < len(words) and (words[i].startswith("-") or words[i].isdigit()
                                      or re.fullmatch(r"\d+[smh]?", words[i])):
                i += 1
        elif w in _RUNNERS and i + 1 < len(words) and words[i + 1] == _RUNNERS[w]:
            i += 2
        else:
            break
    rest = words[i:]
    if rest:
        rest = [rest[0].rsplit("/", 1)[-1], *rest[1:]]  # ./node_modules/.bin/jest -> jest
    return rest


def _sub(words: list[str]) -> str:
    for w in words[1:]:
        if not w.startswith("-"):
            return w
    return ""


def _kind_of(words: list[str]) -> ActionKind:
    if not words:
        return "command"
    prog, sub = words[0], _sub(words)
    if prog == "git":
        if sub == "commit":
            return "commit"
        if sub == "push":
            return "push"
        if sub == "rm":
            return "delete"
        if sub == "mv":
            return "move"
        if sub == "grep":
            return "search"
        return "vcs"
    if prog in ("gh", "glab") and sub in ("issue", "pr"):
        return "tracker"
    if prog in _TRACKERS:
        return "tracker"
    if prog in _TEST_PROGRAMS or sub in _TEST_SUB.get(prog, ()) or (
            prog in ("python", "python3") and "unittest" in words):
        return "test"
    if sub in _LINT_SUB.get(prog, ()) or prog in _LINT_PROGRAMS:
        return "lint"
    if sub in _INSTALL_SUB.get(prog, ()):
        return "install"
    if sub in _BUILD_SUB.get(prog, ()) or prog in _BUILD_PROGRAMS:
        return "build"
    if prog == "npm" and sub == "run" and len(words) > 2:
        script = words[2]
        if "test" in script:
            return "test"
        if "lint" in script:
            return "lint"
        if "build" in script:
            return "build"
    if prog == "rm":
        return "delete"
    if prog == "mv":
        return "move"
    if prog in ("mkdir", "touch", "cp"):
        return "create"
    if prog in _SEARCH:
        return "search"
    if prog in _READ or (prog == "sed" and "-n" in words):
        return "read"
    return "command"


def classify_command(command: str) -> tuple[ActionKind, list[list[str]]]:
    """The kind of ``command`` and its simple commands (each from its program on)."""
    simple = [program_of(w) for w in split_command(command)]
    simple = [w for w in simple if w and w[0] not in ("cd", "pushd", "popd", "source", ".",
                                                       "set", "export")]
    if not simple:
        return "command", []
    kinds = [_kind_of(w) for w in simple]
    best = max(range(len(kinds)), key=lambda k: _WEIGHT.get(kinds[k], 0))
    return kinds[best], simple


_EXIT = re.compile(r"^(?:Exit code|exit code|Exit status)[: ]\s*(-?\d+)\b", re.MULTILINE)
_EXIT_TAIL = re.compile(r"\[Command finished with exit code (-?\d+)\]|\bexit(?:ed)? (?:with )?"
                        r"(?:code|status) (-?\d+)\b")


def exit_code_of(output: str) -> int | None:
    """The exit code a tool printed with the output (Claude Code's ``Exit code 1`` first line,
    OpenHands' ``[Command finished with exit code 1]``), else None."""
    m = _EXIT.match(output.lstrip()[:40])
    if m:
        return int(m.group(1))
    m = _EXIT_TAIL.search(output[-300:])
    if m:
        return int(m.group(1) or m.group(2))
    return None


_COUNT_PATTERNS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    # mix / ExUnit: "49 tests, 0 failures" / "1 doctest, 49 tests, 2 failures, 1 skipped"
    (re.compile(r"(?:(\d+) doctests?, )?(\d+) tests?, (\d+) failures?(?:, (\d+) (?:skipped|"
                r"excluded))?"), ("doctests", "total", "failed", "skipped")),
    # cargo: "test result: ok. 12 passed; 0 failed; 1 ignored"
    (re.compile(r"test result: \w+\. (\d+) passed; (\d+) failed(?:; (\d+) ignored)?"),
     ("passed", "failed", "skipped")),
    # jest / vitest: "Tests:       1 failed, 5 passed, 6 total"
    (re.compile(r"Tests?:\s+(?:(\d+) failed, )?(?:(\d+) skipped, )?(?:(\d+) passed, )?"
                r"(\d+) total"), ("failed", "skipped", "passed", "total")),
    # unittest: "Ran 12 tests", then "OK" or "FAILED (failures=1)"
    (re.compile(r"Ran (\d+) tests?"), ("total",)),
)
_PYTEST = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected)\b")
# pytest's summary line, with its "=" frame or bare (-q): "1 failed, 1 passed in 0.42s"
_PYTEST_LINE = re.compile(r"^(?:=+ .*\b(?:passed|failed|error|skipped)\b.* in [\d.]+s.*=+|"
                          r"\d+ (?:passed|failed|errors?|skipped|deselected|xfailed|xpassed|"
                          r"warnings?)(?:, \d+ \w+)* in [\d.]+s(?: \([^)\n]*\))?)$",
                          re.MULTILINE)


def test_counts(output: str) -> TestCounts | None:
    """The counts of the last summary line a test runner printed, or None."""
    lines = _PYTEST_LINE.findall(output)
    if lines:
        found = dict.fromkeys(("passed", "failed", "errors", "skipped"), 0)
        for n, word in _PYTEST.findall(lines[-1]):
            key = "errors" if word.startswith("error") else word
            if key in found:
                found[key] += int(n)
        return TestCounts(passed=found["passed"], failed=found["failed"],
                          errors=found["errors"] or None, skipped=found["skipped"] or None,
                          said=lines[-1].strip("= ") or None)
    best: TestCounts | None = None
    for pattern, names in _COUNT_PATTERNS:
        matches = list(pattern.finditer(output))
        if not matches:
            continue
        m = matches[-1]
        values = {n: int(v) for n, v in zip(names, m.groups()) if v is not None}
        if "doctests" in values:
            values["total"] = values.get("total", 0) + values.pop("doctests")
        if names == ("total",):
            failed = re.search(r"FAILED \((?:failures=(\d+))?(?:, )?(?:errors=(\d+))?", output)
            values["failed"] = int(failed.group(1) or 0) if failed else 0
            if failed and failed.group(2):
                values["errors"] = int(failed.group(2))
        if "total" in values and "passed" not in values and "failed" in values:
            values["passed"] = values["total"] - values["failed"] - values.get("skipped", 0)
        if names[0] == "passed" and best is not None:  # cargo prints one line per target
            continue
        said = " ".join(m.group(0).split())
        if names == ("total",):  # unittest: "Ran 12 tests" and then OK or FAILED (…)
            verdict = re.search(r"^(OK\b.*|FAILED \(.*\))$", output[m.end():], re.MULTILINE)
            said += f", {verdict.group(1)}" if verdict else ""
        best = TestCounts(**values, said=said)
    cargo = re.findall(r"test result: \w+\. (\d+) passed; (\d+) failed", output)
    if len(cargo) > 1:  # several test binaries: add them up
        best = TestCounts(passed=sum(int(p) for p, _ in cargo),
                          failed=sum(int(f) for _, f in cargo))
    return best


_COMMIT_OUT = re.compile(r"^\[([^\s\]]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\] (.+)$",
                         re.MULTILINE)
_COMMIT_MSG = re.compile(r"""-m\s+(?:"\$\(cat <<'?"?(\w+)'?"?\s*\n(.*?)\n\s*\1"""
                         r"""|"((?:[^"\\]|\\.)*)"|'([^']*)')""", re.DOTALL)


_ITEM_START = re.compile(r"^(?:[-*•+]|\d+[.)])\s")
_TRAILER = re.compile(r"^(?:Co-Authored-By|Signed-off-by|Reviewed-by|Generated with)\b.*$",
                      re.IGNORECASE | re.MULTILINE)


def commit_body(command: str) -> str:
    """The body of a commit message given with ``-m`` (the lines after the subject; the
    trailers such as ``Co-Authored-By`` left out): what the author says the commit does."""
    c = _COMMIT_MSG.search(command)
    if not c:
        return ""
    text = (c.group(2) or c.group(3) or c.group(4) or "").replace('\\"', '"')
    lines = _TRAILER.sub("", "\n".join(text.strip().splitlines()[1:])).splitlines()
    # a body is wrapped at about 72 columns: a line that starts no list item and follows a
    # line of text goes on that line
    out: list[str] = []
    for line in lines:
        stripped = line.strip()
        if out and out[-1] and stripped and not _ITEM_START.match(stripped):
            out[-1] += " " + stripped
        else:
            out.append(stripped)
    return "\n".join(x for x in out if x).strip()


def commit_of(command: str, output: str) -> tuple[str | None, str]:
    """``(id, message)`` of a commit: the id from git's ``[branch 3f2a9c1] message`` line,
    the message from there or from the command's ``-m``."""
    m = _COMMIT_OUT.search(output)
    if m:
        return m.group(2), m.group(3).strip()
    c = _COMMIT_MSG.search(command)
    if c:
        text = c.group(2) or c.group(3) or c.group(4) or ""
        return None, text.strip().splitlines()[0] if text.strip() else ""
    return None, ""


_ERROR_LINE = re.compile(
    r"^\s*(?:\*\* \(|error(?:\[E\d+\])?[:\s]|Error[:\s]|ERROR\b|FAILED\b|FAIL\b|fatal:|"
    r"panicked|thread '.*' panicked|[A-Z][A-Za-z]*(?:Error|Exception)\b|E\s{3}|"
    r"\S+:\d+:\d*:? (?:error|warning)|.*\bnot found\b|.*\bNo such file\b|"
    r"\[(?:warning|error|consistency|readability|refactor|design)\]|┃ \[[A-Z]\])", re.IGNORECASE)
_TRACEBACK = re.compile(r"Traceback \(most recent call last\):")
_EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b.*)$", re.MULTILINE)
_NOISE = re.compile(r"^\s*(?:\d+[→:]|\s*at |\s*File \"|\s*\|)")


def error_line(output: str, limit: int = 220) -> str:
    """The line of a failed command's output that says what went wrong: a traceback's
    exception, else the first line that reads as an error, else the first line."""
    text = output.strip()
    if not text:
        return ""
    text = re.sub(r"^(?:Exit code|exit code)[: ]\s*-?\d+\s*\n?", "", text)
    if _TRACEBACK.search(text):
        exc = _EXC_LINE.findall(text)
        if exc:
            return _clip(exc[-1], limit)
    for line in text.splitlines():
        if _ERROR_LINE.match(line) and not _NOISE.match(line):
            line = line.strip()
            if len(line) > 3:
                return _clip(line, limit)
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return _clip(first, limit)


def _clip(text: str, limit: int) -> str:
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)  # terminal colours
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
