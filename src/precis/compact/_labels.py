"""The words precis itself writes into a summary, in English and Chinese."""

from __future__ import annotations

__all__ = ["label"]

_LABELS: dict[str, dict[str, str]] = {
    "en": {
        "header": "[precis summary of messages {first}-{last}{kept}]",
        "header_kept": "; the {n} most recent messages follow verbatim",
        "header_none": "",
        "short": "In short",
        "who_when": "{who}, {first} to {last}",
        "code": "{lang} code, {n} lines",
        "sql": "SQL, {n} lines",
        "json": "JSON, {n} lines",
        "table": "table, {n} rows",
        "defines": "defines {names}",
        "uses": "uses {names}",
        "keys": "keys {names}",
        "lines": "{n} lines",
        "tool_call": "called {name}",
        "tool_result": "{name} returned",
        "tool_error": "{name} failed",
        "image": "image",
        "more_facts": "also",
        "put_back": "Also, as the handover's rules wrote it:",
        "user": "user",
        "assistant": "assistant",
        "tool": "tool",
        "system": "system",
        "sep": "; ",
    },
    "zh": {
        "header": "[precis 摘要：消息 {first}-{last}{kept}]",
        "header_kept": "；之后是最近 {n} 条原文消息",
        "header_none": "",
        "short": "简要",
        "who_when": "{who}，{first}至{last}",
        "code": "{lang} 代码，{n} 行",
        "sql": "SQL，{n} 行",
        "json": "JSON，{n} 行",
        "table": "表格，{n} 行",
        "defines": "定义 {names}",
        "uses": "涉及 {names}",
        "keys": "字段 {names}",
        "lines": "{n} 行",
        "tool_call": "调用 {name}",
        "tool_result": "{name} 返回",
        "tool_error": "{name} 出错",
        "image": "图片",
        "more_facts": "另有",
        "put_back": "另外（规则摘要原文）：",
        "user": "用户",
        "assistant": "助手",
        "tool": "工具",
        "system": "系统",
        "sep": "；",
    },
}


def label(language: str, key: str, **values: object) -> str:
    table = _LABELS.get(language, _LABELS["en"])
    text = table[key]
    return text.format(**values) if values else text
