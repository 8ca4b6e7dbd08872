"""Key technical concepts: the stack (languages of the files worked on, the build and test
tools run, the packages installed), the components the work defined or changed, and the
technical terms the conversation keeps coming back to."""

from __future__ import annotations

import re
from collections import Counter

from precis.compact.handover._fit import Entry
from precis.compact.handover._story import Story
from precis.compact.handover._words import word
from precis.events._shell import classify_command

__all__ = ["build_concepts"]

_LANGUAGES = {
    ".py": "Python", ".ex": "Elixir", ".exs": "Elixir", ".heex": "Phoenix HEEx templates",
    ".eex": "EEx templates", ".rs": "Rust", ".go": "Go", ".js": "JavaScript",
    ".mjs": "JavaScript", ".jsx": "React (JSX)", ".ts": "TypeScript", ".tsx": "React (TSX)",
    ".rb": "Ruby", ".java": "Java", ".kt": "Kotlin", ".cs": "C#", ".cpp": "C++", ".cc": "C++",
    ".c": "C", ".h": "C/C++ headers", ".swift": "Swift", ".php": "PHP", ".sql": "SQL",
    ".css": "CSS", ".scss": "SCSS", ".html": "HTML", ".vue": "Vue", ".svelte": "Svelte",
    ".sh": "shell scripts", ".md": "Markdown", ".yml": "YAML", ".yaml": "YAML",
    ".toml": "TOML", ".json": "JSON", ".proto": "Protocol Buffers", ".tf": "Terraform",
    ".pony": "Pony", ".zig": "Zig", ".lua": "Lua", ".dart": "Dart", ".scala": "Scala",
}
_MANIFESTS = {
    "mix.exs": "Mix", "Cargo.toml": "Cargo", "package.json": "npm", "pyproject.toml":
    "Python packaging (pyproject)", "setup.py": "setuptools", "go.mod": "Go modules",
    "Gemfile": "Bundler", "pom.xml": "Maven", "build.gradle": "Gradle", "Justfile": "just",
    "Makefile": "make", "Dockerfile": "Docker", "docker-compose.yml": "Docker Compose",
    "CMakeLists.txt": "CMake", "tsconfig.json": "TypeScript config",
}
_PROGRAMS_SKIPPED = frozenset({"cat", "ls", "echo", "grep", "head", "tail", "find", "cd", "rm",
                               "mv", "cp", "mkdir", "sed", "awk", "wc", "tr", "sort", "xargs",
                               "true", "sleep", "pwd", "touch", "which", "test", "[", "printf",
                               "chmod", "diff", "tee", "rg", "nl", "file", "stat", "du", "env"})
_DATA_FORMATS = frozenset({"Markdown", "JSON", "YAML", "TOML"})  # a stack only when changed
_TERM = re.compile(r"`([^`\n]{3,60})`")


def _ext(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return "." + name.rsplit(".", 1)[-1] if "." in name else ""


def build_concepts(story: Story, key: str) -> list[Entry]:
    lang = story.language
    out: list[Entry] = []
    langs: Counter[str] = Counter()
    tools: Counter[str] = Counter()
    manifests: list[str] = []
    cite_stack: list[str] = []
    for rec in story.ledger:
        if rec.path.startswith(("/", "~")):
            continue  # outside the project (a harness's own file)
        name = rec.path.rsplit("/", 1)[-1]
        if name in _MANIFESTS and _MANIFESTS[name] not in manifests:
            manifests.append(_MANIFESTS[name])
        language = _LANGUAGES.get(_ext(rec.path))
        if language and (rec.changed or language not in _DATA_FORMATS):
            langs[language] += 3 if rec.changed else 1
        if rec.changed:
            cite_stack.extend(rec.actions[0].call_fragments[:1])
    installed: list[str] = []
    for a in story.actions:
        if a.kind in ("test", "build", "lint", "install", "command", "tracker", "commit",
                      "push", "vcs"):
            _, simple = classify_command(a.target)
            for words in simple:
                prog = words[0] if words else ""
                if prog and prog not in _PROGRAMS_SKIPPED and re.fullmatch(r"[\w.+-]{2,30}",
                                                                            prog):
                    sub = words[1] if len(words) > 1 and not words[1].startswith("-") else ""
                    label = f"{prog} {sub}" if prog in ("mix", "cargo", "npm", "go") and sub \
                        else prog
                    tools[label] += 1
            if a.kind == "install":
                cite_stack.extend(a.call_fragments[:1])
                for words in simple:
                    installed.extend(w for w in words[2:] if not w.startswith("-")
                                     and re.fullmatch(r"[\w@./-]{2,40}", w))
            if len(cite_stack) < 3:
                cite_stack.extend(a.call_fragments[:1])
    items = [name for name, _ in langs.most_common(6)] + manifests[:4]
    if installed:
        items.append(("已安装 " if story.zh else "installed ") + ", ".join(
            dict.fromkeys(installed[:6])))
    sep = "、" if story.zh else ", "
    if items and cite_stack:
        out.append(Entry(key, 0, 5.0, (word(lang, "stack", items=sep.join(items)),),
                         tuple(dict.fromkeys(cite_stack)), kind="concept",
                         why="languages of the files worked on, manifests, packages installed"))
    if tools and cite_stack:
        named = [t for t, _ in tools.most_common(10)]
        out.append(Entry(key, 1, 3.0, (word(lang, "tools_used", items=sep.join(named)),),
                         tuple(dict.fromkeys(cite_stack[:4])), kind="concept",
                         why="the programs the agent ran"))
    components: Counter[str] = Counter()
    comp_cite: dict[str, str] = {}
    for a in story.actions:
        if a.changes_files:
            for n in a.names:
                if len(n) > 2 and (n[0].isupper() or "." in n) and not n.startswith("."):
                    components[n] += 1
                    if a.call_fragments:
                        comp_cite.setdefault(n, a.call_fragments[0])
    if components:
        names = [n for n, _ in components.most_common(8)]
        variants = (word(lang, "components", items=sep.join(f"`{n}`" for n in names)),
                    word(lang, "components", items=sep.join(f"`{n}`" for n in names[:4])))
        out.append(Entry(key, 2, 4.0, variants,
                         tuple(dict.fromkeys(comp_cite[n] for n in names if n in comp_cite)),
                         kind="concept", why="modules and classes the work defined or changed"))
    terms: Counter[str] = Counter()
    term_cite: dict[str, str] = {}
    frags = story.analysis.segmentation.fragments
    for i in story.range:
        f = frags[i]
        if f.role != "assistant" or f.kind in ("tool_call", "tool_result", "code", "thinking"):
            continue
        for t in dict.fromkeys(_TERM.findall(f.text)):  # (in order: ties keep it)
            if not t.startswith(("/", "http")) and " " not in t.strip():
                terms[t] += 1
                term_cite.setdefault(t, f.id)
    common = [t for t, n in terms.most_common(10) if n >= 2]
    if common:
        label = "反复提到的术语：" if story.zh else "Terms used throughout: "
        variants = (label + sep.join(f"`{t}`" for t in common),
                    label + sep.join(f"`{t}`" for t in common[:5]))
        out.append(Entry(key, 3, 2.0, variants,
                         tuple(dict.fromkeys(term_cite[t] for t in common[:5])),
                         kind="concept", why="terms the assistant named at least twice"))
    return out
