"""The API's docs page, made from its OpenAPI document on the server: plain HTML with no
script or style from elsewhere, so it works offline."""

from __future__ import annotations

import json
from html import escape
from typing import Any

__all__ = ["docs_page"]

_STYLE = """
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;
color:#222}h1{margin-bottom:.2rem}code,pre{font:13px ui-monospace,monospace}
pre{background:#f5f5f5;padding:.6rem;overflow:auto;max-height:24rem}
.op{border:1px solid #ddd;border-radius:6px;margin:.6rem 0;padding:.2rem .8rem}
.m{display:inline-block;min-width:4.2rem;font-weight:bold}.GET{color:#0a6}.POST{color:#05c}
.PATCH{color:#a60}.DELETE{color:#c22}summary{cursor:pointer}table{border-collapse:collapse}
td,th{border-bottom:1px solid #eee;padding:.2rem .6rem;text-align:left;vertical-align:top}
"""


def docs_page(spec: dict[str, Any]) -> str:
    info = spec.get("info", {})
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width,initial-scale=1'>",
        f"<title>{escape(info.get('title', 'API'))} API</title><style>{_STYLE}</style></head>",
        f"<body><h1>{escape(info.get('title', 'API'))} {escape(str(info.get('version', '')))}"
        "</h1>",
        f"<p>{escape(info.get('description', ''))}</p>",
        "<p>The machine-readable spec: <a href='/openapi.json'>/openapi.json</a>. MCP "
        "(streamable HTTP): <code>/mcp</code>.</p>",
    ]
    schemas = spec.get("components", {}).get("schemas", {})
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, methods in spec.get("paths", {}).items():
        for method, op in methods.items():
            by_tag.setdefault((op.get("tags") or ["other"])[0], []).append(
                (method.upper(), path, op))
    for tag, ops in by_tag.items():
        parts.append(f"<h2>{escape(tag)}</h2>")
        for method, path, op in ops:
            parts.append(_operation(method, path, op, schemas))
    parts.append("</body></html>")
    return "".join(parts)


def _operation(method: str, path: str, op: dict[str, Any], schemas: dict[str, Any]) -> str:
    rows = []
    for p in op.get("parameters", []):
        schema = p.get("schema", {})
        rows.append(f"<tr><td><code>{escape(p['name'])}</code></td><td>{escape(p['in'])}</td>"
                    f"<td>{escape(_type(schema))}</td>"
                    f"<td>{escape(p.get('description') or schema.get('description', ''))}</td>"
                    "</tr>")
    body = op.get("requestBody", {}).get("content", {}).get("application/json", {})
    if body:
        schema = _resolve(body.get("schema", {}), schemas)
        required = set(schema.get("required", []))
        for name, field in schema.get("properties", {}).items():
            field = _resolve(field, schemas)
            rows.append(f"<tr><td><code>{escape(name)}</code>{' *' if name in required else ''}"
                        f"</td><td>body</td><td>{escape(_type(field))}</td>"
                        f"<td>{escape(field.get('description', ''))}</td></tr>")
    table = ("<table><tr><th>name</th><th>in</th><th>type</th><th>description</th></tr>"
             + "".join(rows) + "</table>") if rows else "<p>No arguments.</p>"
    example = ""
    if body:
        example = ("<details><summary>request schema</summary><pre>"
                   + escape(json.dumps(_resolve(body.get("schema", {}), schemas), indent=2))
                   + "</pre></details>")
    return (f"<div class='op'><p><span class='m {method}'>{method}</span> <code>"
            f"{escape(path)}</code> — {escape(op.get('summary', ''))}</p>"
            f"<p>{escape(op.get('description', ''))}</p>{table}{example}</div>")


def _resolve(schema: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
        return dict(schemas.get(ref.rsplit("/", 1)[1], {}))
    return schema


def _type(schema: dict[str, Any]) -> str:
    if "anyOf" in schema:
        return " | ".join(_type(s) for s in schema["anyOf"])
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    if schema.get("type") == "array":
        return f"list of {_type(schema.get('items', {}))}"
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[1]
    return str(schema.get("type", "any"))
