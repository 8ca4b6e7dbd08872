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

export function init() {
  $("compact-file").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    fileText = file ? await file.text() : null;
    if (file) $("compact-text").value = "";
    $("compact-pick-label").hidden = true;
    $("compact-pick").value = "";
  });
  $("compact-text").addEventListener("input", () => {
    if ($("compact-text").value) {
      fileText = null;
      $("compact-file").value = "";
    }
  });
  $("compact-budget").addEventListener("input", () => {
    $("compact-level").disabled = Boolean($("compact-budget").value);
  });
  $("compact-form").addEventListener("submit", (event) => {
    event.preventDefault();
    run();
  });
}

function request() {
  const text = fileText ?? $("compact-text").value;
  if (!text.trim()) throw new Error("Choose a conversation file or paste one first.");
  const body = {
    conversation: text,
    template: $("compact-template").value,
    tokenizer: $("compact-tokenizer").value,
    output: "json",
    explain: true,
  };
  const format = $("compact-format").value;
  if (format) body.format = format;
  if (!$("compact-pick-label").hidden && $("compact-pick").value.trim()) {
    const pick = $("compact-pick").value.trim();
    body.pick = /^\d+$/.test(pick) ? Number(pick) : pick;
  }
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
    const result = await call("POST", "/v1/compress", request());
    render(result);
  } catch (exc) {
    // a file of several conversations: say which one (its 0-based index or its id)
    if (exc.type === "SelectionError") $("compact-pick-label").hidden = false;
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
  clear($("compact-stats"),
    el("div", { class: "figures" },
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
