// The memory browser: search with the CLI's filters (POST /v1/memories/search), list
// (GET /v1/memories), a card with its sources and neighbouring messages
// (GET /v1/memories/{id}?context=2), its history (GET /v1/memories/{id}/history), delete.
// The card types to filter by are the API's own (its OpenAPI schema, from the library's list).

import { call, query } from "./api.js";
import { $, clear, el, showError } from "./dom.js";

export function init() {
  $("memory-form").addEventListener("submit", (event) => {
    event.preventDefault();
    search();
  });
  $("memory-list").addEventListener("click", () => list());
}

export async function load() {
  try {
    const answer = await fetch("/openapi.json", { headers: { Accept: "application/json" } });
    const spec = await answer.json();
    const types = spec.components.schemas.SearchFilters.properties.types.items.enum;
    $("memory-type").append(...types.map((t) => el("option", { value: t }, t)));
  } catch (exc) {
    showError("memory-error", new Error(`could not read the card types: ${exc.message}`));
  }
}

function filters() {
  const f = {
    user_id: $("memory-user").value.trim(),
    agent_id: $("memory-agent").value.trim(),
    session_id: $("memory-session").value.trim(),
    since: $("memory-since").value,
    until: $("memory-until").value,
  };
  return Object.fromEntries(Object.entries(f).filter(([, v]) => v));
}

function type() {
  return $("memory-type").value;
}

async function search() {
  showError("memory-error", null);
  const text = $("memory-query").value.trim();
  if (!text) return list();
  try {
    const answer = await call("POST", "/v1/memories/search", {
      query: text, filters: { ...filters(), types: type() ? [type()] : [] },
      k: Number($("memory-k").value) || 10,
    });
    const hits = answer.hits;
    $("memory-hits-title").textContent = `${hits.length} hit${hits.length === 1 ? "" : "s"} for “${text}”`;
    renderHits(hits.map((h) => ({ card: h.card, score: h.score, why: h.why, sources: h.sources })));
  } catch (exc) {
    showError("memory-error", exc);
  }
}

async function list() {
  showError("memory-error", null);
  try {
    const answer = await call("GET", `/v1/memories${query({ ...filters(), type: type(), limit: $("memory-k").value })}`);
    const cards = answer.memories;
    $("memory-hits-title").textContent = `${cards.length} of ${answer.total} card${answer.total === 1 ? "" : "s"}, oldest first`;
    renderHits(cards.map((card) => ({ card })));
  } catch (exc) {
    showError("memory-error", exc);
  }
}

function why(w) {
  if (!w) return null;
  return el("span", { class: "why-line" }, Object.entries(w).map(([k, v]) =>
    el("span", { class: "tag" }, typeof v === "number" ? `${k} ${+v.toFixed(3)}` : `${k}: ${v}`)));
}

function cardMeta(card) {
  return el("div", { class: "meta" },
    el("span", { class: "chip" }, card.type),
    card.user_id ? el("span", { class: "tag" }, `user ${card.user_id}`) : null,
    card.agent_id ? el("span", { class: "tag" }, `agent ${card.agent_id}`) : null,
    el("span", { class: "tag" }, `session ${card.session_id}`),
    card.event_time ? el("span", { class: "tag" }, card.event_time) : null,
    card.superseded_by ? el("span", { class: "tag warn" }, `superseded by ${card.superseded_by}`) : null);
}

function renderHits(hits) {
  const box = clear($("memory-hits"));
  clear($("memory-card"), el("p", { class: "muted" }, "Choose a hit to see its sources and history."));
  if (!hits.length) box.append(el("li", { class: "muted" }, "Nothing found."));
  for (const hit of hits) {
    box.append(el("li", { class: "hit", dataset: { id: hit.card.id } },
      el("button", { type: "button", class: "hit-open", onclick: () => open(hit.card.id) },
        hit.score !== undefined ? el("span", { class: "score" }, hit.score.toFixed(3)) : null,
        el("span", { class: "content" }, hit.card.content)),
      cardMeta(hit.card), why(hit.why)));
  }
}

async function open(id) {
  showError("memory-error", null);
  const pane = $("memory-card");
  try {
    const [detail, history] = await Promise.all([
      call("GET", `/v1/memories/${encodeURIComponent(id)}?context=2`),
      call("GET", `/v1/memories/${encodeURIComponent(id)}/history`),
    ]);
    const card = detail.memory;
    const around = [...detail.sources.map((s) => ({ ...s, own: true })),
      ...detail.neighbours.map((s) => ({ ...s, own: false }))].sort((a, b) => a.index - b.index);
    const versions = history.history;
    clear(pane,
      el("h2", {}, "Card ", el("code", {}, card.id)),
      el("p", { class: "card-content" }, card.content),
      cardMeta(card),
      el("p", { class: "muted" }, `fragments ${card.fragment_ids.join(", ")}; topics ${card.topics.join(", ") || "-"}; entities ${card.entities.join(", ") || "-"}`),
      el("h3", {}, "Sources"),
      el("div", { class: "sources" }, around.map((s) =>
        el("div", { class: `msg ${s.own ? "source" : "neighbour"}` },
          el("div", { class: "msg-head" }, el("b", {}, s.speaker || s.role),
            el("span", { class: "muted" }, ` — message ${s.index}${s.own ? " (source)" : " (neighbour)"}${s.timestamp ? `, ${s.timestamp}` : ""}`)),
          el("pre", { class: "text" }, s.text)))),
      el("h3", {}, "History"),
      el("ol", { class: "history" }, versions.map((v) =>
        el("li", {}, el("b", {}, v.action), ` ${v.at || ""} `,
          v.memory ? el("span", { class: "muted" }, v.memory.content) : null))),
      el("button", { type: "button", class: "danger", onclick: () => remove(card.id) }, "Delete this card"));
  } catch (exc) {
    showError("memory-error", exc);
  }
}

async function remove(id) {
  if (!window.confirm(`Delete card ${id}? This cannot be undone.`)) return;
  try {
    await call("DELETE", `/v1/memories/${encodeURIComponent(id)}`);
    clear($("memory-card"), el("p", { class: "muted" }, `Card ${id} deleted.`));
    document.querySelector(`.hit[data-id="${CSS.escape(id)}"]`)?.remove();
  } catch (exc) {
    showError("memory-error", exc);
  }
}
