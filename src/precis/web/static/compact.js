// The compaction view: a conversation in, the compacted context beside the original, every
// citation linked to its source fragment, every fragment's fate (from POST /v1/compress with
// "explain": true: the CompressionResult JSON plus its "explain" part).

import { call } from "./api.js";
import { $, clear, el, fmt, messageText, showError, tokenBar } from "./dom.js";

const STATUS = {
  kept: "kept verbatim",
  shortened: "kept, shortened",
  summarized: "summarized",
  dropped: "dropped",
  system: "system prompt",
  omitted: "not in the output",
};

// why a fragment was dropped, in words (the reasons of CompressionResult.dropped)
const REASONS = {
  budget: "no room in the budget",
  chitchat: "small talk",
  confirmation: "a confirmation",
  duplicate: "a repeat of another fragment",
  superseded: "replaced by a later version",
  below_level: "below the level's importance",
  no_section: "no section of the template takes it",
};

let fileText = null;
// the conversations of the current input (POST /v1/inspect/conversations), and the one chosen
let listing = null; // { key, conversations }
let chosen = null; // the chosen conversation's index, when the input holds several

export function init() {
  $("compact-file").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    fileText = file ? await file.text() : null;
    if (file) $("compact-text").value = "";
    forget();
    if (file) listConversations().catch((exc) => showError("compact-error", exc));
  });
  $("compact-text").addEventListener("input", () => {
    if ($("compact-text").value) {
      fileText = null;
      $("compact-file").value = "";
    }
    forget();
  });
  $("compact-format").addEventListener("change", () => {
    forget();
    if (fileText) listConversations().catch((exc) => showError("compact-error", exc));
  });
  $("compact-tokenizer").addEventListener("change", () => {
    // the list's token counts are by the chosen tokenizer
    if (listing && listing.conversations.length > 1) {
      listConversations().catch((exc) => showError("compact-error", exc));
    }
  });
  $("compact-pick-filter").addEventListener("input", filterRows);
  $("compact-budget").addEventListener("input", () => {
    $("compact-level").disabled = Boolean($("compact-budget").value);
  });
  $("compact-form").addEventListener("submit", (event) => {
    event.preventDefault();
    run();
  });
}

function inputText() {
  return fileText ?? $("compact-text").value;
}

function forget() {
  listing = null;
  chosen = null;
  $("compact-picker").hidden = true;
  $("compact-pick-filter").value = "";
  clear($("compact-pick-list"));
  showError("compact-error", null);
}

function listingKey(text) {
  return [$("compact-format").value, $("compact-tokenizer").value, text.length, text].join("\u0000");
}

/** List the input's conversations; a picker when it holds several (none for one). */
async function listConversations() {
  const text = inputText();
  if (!text.trim()) return null;
  showError("compact-error", null);
  const body = { conversation: text, tokenizers: [$("compact-tokenizer").value] };
  const format = $("compact-format").value;
  if (format) body.format = format;
  const key = listingKey(text);
  const answer = await call("POST", "/v1/inspect/conversations", body);
  if (text !== inputText()) return null; // the input changed meanwhile
  listing = { key, conversations: answer.conversations, format: answer.format };
  if (chosen !== null && chosen >= answer.conversations.length) chosen = null;
  renderPicker();
  return listing;
}

function renderPicker() {
  const convs = listing.conversations;
  $("compact-picker").hidden = convs.length < 2;
  if (convs.length < 2) return clear($("compact-pick-list"));
  $("compact-picker-title").textContent = chosen === null
    ? `This file holds ${fmt.format(convs.length)} conversations (${listing.format}): choose one to compact it`
    : `${fmt.format(convs.length)} conversations (${listing.format}): compacting #${chosen}; choose another to compact it`;
  const spec = $("compact-tokenizer").value;
  $("compact-pick-tokens").textContent = `tokens (${spec})`;
  clear($("compact-pick-list"), convs.map((c) => {
    const words = c.title || c.preview;
    return el("li", { dataset: { index: c.index, find: [c.index, c.id, c.title, c.preview].join(" ").toLowerCase() } },
      el("button", {
        type: "button", class: "conv-grid", "aria-current": c.index === chosen ? "true" : "false",
        title: words || "", onclick: () => choose(c.index),
      },
      el("span", { class: "conv-index muted" }, `#${c.index}`),
      el("span", { class: "conv-id" }, c.id || "—"),
      el("span", { class: `conv-title${c.title ? "" : " preview"}` }, words || "(no user message)"),
      el("span", { class: "num conv-msgs" }, fmt.format(c.messages)),
      el("span", { class: "num conv-tokens" }, fmt.format(c.tokens[spec] ?? Object.values(c.tokens)[0]))));
  }));
  filterRows();
}

function filterRows() {
  const words = $("compact-pick-filter").value.trim().toLowerCase().split(/\s+/).filter(Boolean);
  for (const li of $("compact-pick-list").children) {
    li.hidden = !words.every((w) => li.dataset.find.includes(w));
  }
}

function choose(index) {
  chosen = index;
  renderPicker();
  run();
}

function request(text) {
  const body = {
    conversation: text,
    template: $("compact-template").value,
    tokenizer: $("compact-tokenizer").value,
    output: "json",
    explain: true,
  };
  const format = $("compact-format").value;
  if (format) body.format = format;
  if (chosen !== null) body.pick = chosen;
  const budget = $("compact-budget").value;
  if (budget) body.budget = Number(budget);
  else body.level = $("compact-level").value;
  const keep = $("compact-keep-last").value;
  if (keep !== "") body.keep_last = Number(keep);
  return body;
}

async function run() {
  showError("compact-error", null);
  const button = $("compact-run");
  button.disabled = true;
  button.textContent = "Compacting…";
  try {
    const text = inputText();
    if (!text.trim()) throw new Error("Choose a conversation file or paste one first.");
    if (!listing || listing.key !== listingKey(text)) await listConversations();
    if (listing && listing.conversations.length > 1 && chosen === null) {
      // a file of several conversations: the user chooses one from the list
      $("compact-out").hidden = true;
      $("compact-picker").scrollIntoView({ block: "nearest" });
      return;
    }
    const result = await call("POST", "/v1/compress", request(text));
    render(result);
    if (chosen !== null) $("compact-stats").scrollIntoView({ block: "start" });
  } catch (exc) {
    showError("compact-error", exc);
  } finally {
    button.disabled = false;
    button.textContent = "Compact";
  }
}

function render(result) {
  $("compact-out").hidden = false;
  const explain = result.explain || { fragments: [], flow: null };
  const byId = new Map(explain.fragments.map((f) => [f.id, f]));
  renderStats(result);
  renderBars(explain.flow);
  renderResult(result, byId);
  renderOriginal(explain.fragments);
}

function renderStats(r) {
  const counts = {};
  for (const f of (r.explain?.fragments || [])) counts[f.status] = (counts[f.status] || 0) + 1;
  const convs = listing ? listing.conversations : [];
  const picked = convs.length > 1 ? convs[r.source?.pick ?? 0] : null;
  clear($("compact-stats"),
    el("div", { class: "figures" },
      picked ? figure("conversation", `#${picked.index} of ${fmt.format(convs.length)}`
        + (picked.id && picked.id !== String(picked.index) ? ` (${picked.id})` : "")) : null,
      figure("tokens", `${fmt.format(r.original_tokens)} → ${fmt.format(r.compressed_tokens)}`),
      figure("ratio", `${r.ratio}×`),
      figure("level", r.compression_level + (r.budget ? `, budget ${fmt.format(r.budget)}` : "")),
      figure("tokenizer", r.tokenizer),
      figure("messages", `${r.input_messages} in, ${r.kept_messages} kept verbatim`),
      figure("fragments", Object.entries(counts).map(([s, n]) => `${n} ${STATUS[s] || s}`).join(", ")),
      r.retention ? figure("exact facts kept",
        `${r.retention.facts_kept}/${r.retention.facts_total} (${Math.round(100 * r.retention.facts)}%)`) : null));
}

function figure(label, value) {
  return el("div", { class: "figure" }, el("span", { class: "muted" }, label), el("b", {}, value));
}

function renderBars(flow) {
  const box = $("compact-bars");
  if (!flow) return clear(box, el("p", { class: "muted" }, "No token flow in this answer."));
  const rows = flow.sections.map((s) => [s.key === "short" ? "In short" : s.title, s.before, s.after,
    `${s.items} item${s.items === 1 ? "" : "s"}`]);
  rows.push(["Recent messages (verbatim)", flow.tail.before, flow.tail.after, `${flow.tail.messages} messages`]);
  rows.push(["Dropped", flow.dropped.before, 0, `${flow.dropped.fragments} fragments`]);
  const scale = Math.max(1, ...rows.map((r) => Math.max(r[1], r[2])));
  clear(box,
    el("div", { class: "bar-key" }, el("span", { class: "swatch before" }), "before ",
      el("span", { class: "swatch after" }), "after"),
    rows.map(([label, before, after, note]) => tokenBar(label, before, after, scale, note)));
}

// ----------------------------------------------------------- the compacted context

function citations(sources, byId) {
  if (!sources || !sources.length) return null;
  return el("span", { class: "cites" }, "[",
    sources.map((id, i) => [i ? ", " : "", el("a", {
      href: `#src-${id}`, class: "cite", dataset: { id },
      title: byId.get(id)?.text?.slice(0, 200) || id,
      onclick: (event) => { event.preventDefault(); showSource(id); },
    }, id)]), "]");
}

function renderSummary(summary, byId) {
  const box = el("div", { class: "summary" });
  if (summary.short && summary.short.length) {
    box.append(el("p", { class: "short", id: "line-short" }, el("b", {}, "In short: "),
      summary.short.map((item, i) => el("span", { id: `line-short-${i}`, class: "line" },
        item.text, " ", citations(item.sources, byId), " "))));
  }
  for (const section of summary.sections) {
    box.append(el("h3", {}, section.title));
    box.append(el("ul", {}, section.items.map((item, i) =>
      el("li", { id: `line-${section.key}-${i}`, class: "line" },
        item.date ? el("span", { class: "muted" }, `[${item.date}] `) : null,
        item.text, " ", citations(item.sources, byId)))));
  }
  return box;
}

function renderResult(result, byId) {
  const out = [];
  result.messages.forEach((m, i) => {
    const from = result.origin[i];
    const head = el("div", { class: "msg-head" }, el("b", {}, m.role),
      m.name ? ` (${m.name})` : "",
      el("span", { class: "muted" }, from === null ? " — summary of the older messages"
        : ` — message ${from} verbatim`));
    const body = from === null && result.summary
      ? renderSummary(result.summary, byId)
      : el("pre", { class: "text" }, messageText(m));
    out.push(el("div", { class: `msg out ${from === null ? "is-summary" : ""}`, id: `out-${i}` }, head, body));
  });
  clear($("compact-result"), out);
}

// ----------------------------------------------------------- the original

function fateLine(f) {
  const chip = el("span", { class: `chip ${f.status}` }, STATUS[f.status] || f.status);
  const bits = [chip];
  if (f.status === "summarized") {
    bits.push(" into ", f.into.map((into, i) => [i ? ", " : "", el("a", {
      href: `#line-${into.section}-${into.item}`, class: "into",
      onclick: (event) => { event.preventDefault(); showLine(into.section, into.item); },
    }, into.section === "short" ? "In short" : `${into.title} #${into.item + 1}`)]));
  }
  if (f.reason) {
    const why = REASONS[f.reason] || f.reason.replaceAll("_", " ");
    bits.push(el("span", { class: "reason" }, f.status === "summarized" ? `(also dropped: ${why})` : `— ${why}`));
  }
  if (f.status === "kept" || f.status === "shortened") {
    bits.push(" ", el("a", {
      href: `#out-${f.output_message}`, class: "into",
      onclick: (event) => { event.preventDefault(); flash($(`out-${f.output_message}`)); },
    }, `output message ${f.output_message}`));
  }
  return el("div", { class: "fate" }, bits,
    el("span", { class: "tag" }, f.type), el("span", { class: `tag level-${f.level}` }, f.level),
    el("span", { class: "tag" }, `${f.tokens} tokens`));
}

function renderOriginal(fragments) {
  const messages = new Map();
  for (const f of fragments) {
    if (!messages.has(f.message)) messages.set(f.message, []);
    messages.get(f.message).push(f);
  }
  const out = [];
  for (const [index, frags] of messages) {
    out.push(el("div", { class: "msg original" },
      el("div", { class: "msg-head" }, el("b", {}, frags[0].role), el("span", { class: "muted" }, ` — message ${index}`)),
      frags.map((f) => el("div", { class: `frag ${f.status}`, id: `src-${f.id}`, dataset: { id: f.id } },
        el("div", { class: "frag-head" }, el("code", { class: "fid" }, f.id), fateLine(f)),
        el("pre", { class: "text" }, f.text),
        el("details", { class: "why" }, el("summary", {}, "why"),
          el("p", {}, f.why),
          el("table", {}, Object.entries(f.factors).map(([k, v]) =>
            el("tr", {}, el("td", {}, k), el("td", {}, v >= 0 ? `+${v.toFixed(2)}` : v.toFixed(2))))))))));
  }
  clear($("compact-original"), out);
}

function flash(node) {
  if (!node) return;
  document.querySelectorAll(".highlight").forEach((n) => n.classList.remove("highlight"));
  node.classList.add("highlight");
  node.scrollIntoView({ behavior: "smooth", block: "center" });
}

export function showSource(id) {
  flash($(`src-${id}`));
}

function showLine(section, item) {
  flash($(`line-${section}-${item}`) || $("line-short"));
}
