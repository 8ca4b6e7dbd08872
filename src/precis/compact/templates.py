"""Summary templates: which sections a summary has, their titles, and what feeds them.

A template is data (``templates.json`` holds the built-in ``claude`` for agent sessions,
``service`` for service dialogues, ``sections`` for chats and ``log`` for small talk); a user
adds their own with a JSON file of the same shape::

    {"name": "mine", "sections": [
        {"key": "asked", "source": "requests", "title": {"en": "Asked", "zh": "请求"}},
        {"key": "files", "source": "files", "title": "Files"},
        {"key": "facts", "types": ["fact", "decision"], "title": {"en": "Facts", "zh": "事实"}}
    ]}

``source`` says how a section is filled (default ``types``); the builders are in
:mod:`precis.compact.handover`:

``requests`` (also ``user_messages``)
    every message the user wrote, in order, and which request is in force;
``goal``
    the user's first request and the one in force;
``concepts``
    the stack, the components worked on, the terms the conversation keeps using;
``files``
    one line per file changed (created / edited / moved / deleted, names, why);
``errors``
    each failure, its cause and the fix;
``decisions``
    the decisions and reasoning stated, the plan, sub-agent tasks;
``done`` / ``pending``
    commits, closed items, passing test runs / the todo and tracker items not done;
``current_work`` / ``next_step``
    what the agent did last and what came of it / what comes next;
``identifiers`` / ``replies`` / ``actions`` / ``policy``
    a service dialogue's values the user gave and lookups / what the agent told the user /
    changes made / rules stated;
``qa`` / ``background`` / ``delivered`` / ``open``
    a chat's questions with their answers / the user's background and rules / code and
    commands given / the user's last message when unanswered;
``spec`` / ``runs``
    what the issue tracker says the items of the work must do / the commands run and what
    they printed;
``types``
    the fragments whose type is in ``types`` (a goal, rule or background only from the
    user);
``log``
    a timeline: who said what, in time order, one line per message and date (a template
    made only of ``log`` sections is the timeline layout).

``title`` has an ``en`` and a ``zh`` text; the summary uses the conversation's language.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from precis.analysis.model import FRAGMENT_TYPES
from precis.errors import ConfigError, InputNotFoundError

__all__ = [
    "SOURCES",
    "SectionSpec",
    "Template",
    "builtin_templates",
    "get_template",
    "load_template",
    "template_from_dict",
]

SOURCES = ("types", "goal", "requests", "user_messages", "concepts", "files", "errors",
           "decisions", "done", "pending", "current_work", "next_step", "identifiers", "actions",
           "policy", "replies", "qa", "background", "delivered", "open", "spec", "runs",
           "log")


@dataclass(frozen=True)
class SectionSpec:
    key: str
    title: dict[str, str]
    types: tuple[str, ...] = ()
    source: str = "types"

    def title_in(self, language: str) -> str:
        return self.title.get(language) or self.title["en"]


@dataclass(frozen=True)
class Template:
    name: str
    sections: tuple[SectionSpec, ...]
    description: str = ""

    @property
    def timeline(self) -> bool:
        """Every section is the timeline (``log``): the summary is what was said when."""
        return all(spec.source == "log" for spec in self.sections)


def _section(data: object, where: str) -> SectionSpec:
    if not isinstance(data, dict):
        raise ConfigError("a section must be an object", where=where)
    unknown = set(data) - {"key", "title", "types", "source"}
    if unknown:
        raise ConfigError(f"unknown section field(s): {', '.join(sorted(unknown))}", where=where)
    key = data.get("key")
    if not isinstance(key, str) or not key:
        raise ConfigError("a section needs a non-empty string 'key'", where=where)
    title = data.get("title")
    if isinstance(title, str):
        title = {"en": title, "zh": title}
    if (
        not isinstance(title, dict)
        or "en" not in title
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in title.items())
    ):
        raise ConfigError(
            "'title' must be a string or an object with an 'en' (and 'zh') text",
            where=f"{where}.{key}",
        )
    source = data.get("source", "types")
    if source not in SOURCES:
        raise ConfigError(
            f"unknown source {source!r} (expected one of {', '.join(SOURCES)})",
            where=f"{where}.{key}",
        )
    types = data.get("types", [])
    if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
        raise ConfigError("'types' must be a list of fragment types", where=f"{where}.{key}")
    bad = [t for t in types if t not in FRAGMENT_TYPES]
    if bad:
        raise ConfigError(
            f"unknown fragment type(s) {', '.join(bad)} (expected {', '.join(FRAGMENT_TYPES)})",
            where=f"{where}.{key}",
        )
    if source == "types" and not types:
        raise ConfigError(f"source {source!r} needs a non-empty 'types'", where=f"{where}.{key}")
    return SectionSpec(key=key, title=dict(title), types=tuple(types), source=source)


def template_from_dict(name: str, data: object, where: str | None = None) -> Template:
    """A template from its JSON form; errors are :class:`ConfigError` naming the field."""
    where = where or f"template {name!r}"
    if not isinstance(data, dict):
        raise ConfigError("a template must be an object with 'sections'", where=where)
    unknown = set(data) - {"name", "description", "sections"}
    if unknown:
        raise ConfigError(f"unknown template field(s): {', '.join(sorted(unknown))}", where=where)
    sections = data.get("sections")
    if not isinstance(sections, list) or not sections:
        raise ConfigError("'sections' must be a non-empty list", where=where)
    specs = tuple(_section(s, f"{where}: sections[{i}]") for i, s in enumerate(sections))
    keys = [s.key for s in specs]
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    if dupes:
        raise ConfigError(f"duplicate section key(s): {', '.join(dupes)}", where=where)
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ConfigError("'description' must be a string", where=where)
    return Template(name=str(data.get("name", name)), sections=specs, description=description)


@cache
def builtin_templates() -> dict[str, Template]:
    raw: dict[str, Any] = json.loads(
        resources.files("precis.compact").joinpath("templates.json").read_text("utf-8")
    )
    return {name: template_from_dict(name, data) for name, data in raw.items()}


def load_template(path: str | Path) -> Template:
    """A user template from a JSON file."""
    p = Path(path)
    try:
        text = p.read_text("utf-8")
    except FileNotFoundError:
        raise InputNotFoundError("no such template file", where=str(p)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the template: {exc}", where=str(p)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"invalid JSON: {exc.msg}", where=f"{p}:{exc.lineno}:{exc.colno}"
        ) from None
    return template_from_dict(p.stem, data, where=str(p))


def get_template(template: str | Template) -> Template:
    """A built-in template by name, a user template by path (``*.json``), or a Template."""
    if isinstance(template, Template):
        return template
    builtin = builtin_templates()
    if template in builtin:
        return builtin[template]
    if template.endswith(".json") or Path(template).is_file():
        return load_template(template)
    raise ConfigError(
        f"unknown template {template!r} (built-in: {', '.join(builtin)}; "
        "or give the path of a JSON template file)"
    )
