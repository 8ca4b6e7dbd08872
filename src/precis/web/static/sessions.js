// Sessions: ContextMemory sessions kept in the store (GET /v1/sessions), each one's
// compaction events as a chart (GET /v1/sessions/{id}/events), its working context
// (GET /v1/sessions/{id}/context) and its offloads, reloaded on demand
// (GET /v1/sessions/{id}/offloads/{oid}: what the context_reload tool returns).

import { call } from "./api.js";
import { $, clear, el, fmt, messageText as text, showError } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const COLORS = ["#2f6fdf", "#d9822b", "#29a36a", "#b0413e", "#7d5ba6", "#6b7d8c", "#c7a000", "#159ab3"];

export function init() {
  $("session-select").addEventListener("change", () => open($("session-select").value));
  $("session-refresh").addEventListener("click", () => load());
}

export async function load() {
  showError("session-error", null);
  try {
    const { sessions } = await call("GET", "/v1/sessions");
    const select = clear($("session-select"),
      el("option", { value: "" }, sessions.length ? "choose a session" : "no session in the store"),
      sessions.map((id) => el("option", { value: id }, id)));
    const wanted = new URLSearchParams(location.hash.split("?")[1] || "").get("id");
    if (wanted) {
      select.value = wanted;
      open(wanted);
    }
  } catch (exc) {
    showError("session-error", exc);
  }
}

async function open(id) {
  if (!id) return;
  showError("session-error", null);
  try {
    const path = `/v1/sessions/${encodeURIComponent(id)}`;
    const [info, events, context] = await Promise.all([
      call("GET", path), call("GET", `${path}/events`),
      call("GET", `${path}/context?format=openai&compact=false`),
    ]);
    const list = events.events;
    $("session-out").hidden = false;
    clear($("session-info"), `${info.messages} messages in the working context (${fmt.format(info.tokens)} tokens of ${fmt.format(info.budget)}), ${info.original_messages} in all; ${info.events} compaction events; ${info.offloads.length} offloads`);
    clear($("session-chart"), chart(list));
    clear($("session-events"), table(list));
    const messages = context.context;
    clear($("session-context"), messages.map((m, i) => el("div", { class: "msg out" },
      el("div", { class: "msg-head" }, el("b", {}, m.role), el("span", { class: "muted" }, ` — ${i}`)),
      el("pre", { class: "text" }, text(m)))));
    renderOffloads(path, list, messages);
  } catch (exc) {
    showError("session-error", exc);
  }
}

function renderOffloads(path, events, messages) {
  const ids = [...new Set(events.flatMap((e) => e.offload_ids || []))];
  const box = clear($("session-offloads"));
  if (!ids.length) return box.append(el("p", { class: "muted" }, "Nothing offloaded."));
  for (const oid of ids) {
    const holder = messages.find((m) => text(m).includes(oid));
    const body = el("div", { class: "offload-body" });
    box.append(el("div", { class: "offload", id: `offload-${oid}` },
      el("div", { class: "msg-head" }, el("code", {}, oid),
        el("button", { type: "button", class: "quiet", onclick: async (event) => {
          event.target.disabled = true;
          try {
            const got = await call("GET", `${path}/offloads/${encodeURIComponent(oid)}`);
            const msgs = got.messages || [];
            clear(body, msgs.length ? msgs.map((m) => el("div", { class: "msg" },
              el("div", { class: "msg-head" }, el("b", {}, m.role)), el("pre", { class: "text" }, text(m))))
              : el("pre", { class: "text" }, got.text ?? JSON.stringify(got, null, 2)));
          } catch (exc) {
            showError("session-error", exc);
          } finally {
            event.target.disabled = false;
          }
        } }, "Reload")),
      el("pre", { class: "text preview" }, holder
        ? text(holder).split("\n").filter((line) => line.includes(oid)).join("\n")
        : "(its note is no longer in the working context)"),
      body));
  }
}

function table(events) {
  if (!events.length) return el("p", { class: "muted" }, "No compaction yet.");
  return el("div", { class: "scroll" }, el("table", { class: "events" },
    el("thead", {}, el("tr", {}, ["#", "time", "strategy", "messages", "tokens before → after", "saved", "ms", "offloads"]
      .map((h) => el("th", {}, h)))),
    el("tbody", {}, events.map((e, i) => el("tr", {},
      el("td", {}, i + 1), el("td", {}, e.at), el("td", {}, e.strategy),
      el("td", {}, `${e.messages_before} → ${e.messages_after}`),
      el("td", {}, `${fmt.format(e.tokens_before)} → ${fmt.format(e.tokens_after)}`),
      el("td", {}, fmt.format(e.tokens_before - e.tokens_after)),
      el("td", {}, (e.elapsed_ms ?? 0).toFixed(1)),
      el("td", {}, (e.offload_ids || []).join(", ")))))));
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  node.append(...children);
  return node;
}

/** Tokens before (light) and after (dark) each event, in order, coloured by strategy. */
function chart(events) {
  if (!events.length) return el("span");
  const strategies = [...new Set(events.map((e) => e.strategy))];
  const color = (s) => COLORS[strategies.indexOf(s) % COLORS.length];
  const max = Math.max(...events.map((e) => e.tokens_before));
  const W = 720, H = 220, left = 64, bottom = 28, top = 14;
  const step = (W - left - 8) / events.length;
  const y = (v) => top + (H - top - bottom) * (1 - v / max);
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img",
    "aria-label": "tokens before and after each compaction event" });
  for (const t of [0, 0.5, 1]) {
    root.append(svg("line", { x1: left, x2: W, y1: y(max * t), y2: y(max * t), class: "grid" }));
    root.append(svg("text", { x: left - 6, y: y(max * t) + 4, "text-anchor": "end" }, fmt.format(Math.round(max * t))));
  }
  events.forEach((e, i) => {
    const x = left + i * step + step * 0.15, w = Math.max(1, step * 0.7);
    const g = svg("g", { class: "event" },
      svg("title", {}, `#${i + 1} ${e.strategy} at ${e.at}: ${e.tokens_before} → ${e.tokens_after} tokens, ${(e.elapsed_ms ?? 0).toFixed(1)} ms`),
      svg("rect", { x, width: w, y: y(e.tokens_before), height: y(0) - y(e.tokens_before), fill: color(e.strategy), opacity: 0.3 }),
      svg("rect", { x, width: w, y: y(e.tokens_after), height: y(0) - y(e.tokens_after), fill: color(e.strategy) }));
    root.append(g);
  });
  root.append(svg("text", { x: 4, y: top + 4, transform: `rotate(-90 4 ${top + 4})`, "text-anchor": "end", dy: "0.8em" }, "tokens"));
  root.append(svg("text", { x: left, y: H - 6 }, "event 1"));
  root.append(svg("text", { x: W - 4, y: H - 6, "text-anchor": "end" }, `event ${events.length}`));
  const legend = el("div", { class: "legend" }, strategies.map((s) =>
    el("span", { class: "legend-item" }, el("span", { class: "swatch", style: `background:${color(s)}` }), s)),
  el("span", { class: "muted" }, " light: tokens before, dark: after"));
  return el("div", {}, root, legend);
}
