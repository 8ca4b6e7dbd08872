// Small helpers to build the page's elements (text always goes in as text, never as HTML).

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function $(id) {
  return document.getElementById(id);
}

export function clear(node, ...children) {
  node.replaceChildren(...children.flat(Infinity).filter((c) => c !== undefined && c !== null));
  return node;
}

export function showError(id, exc) {
  const node = $(id);
  if (!exc) {
    node.hidden = true;
    node.textContent = "";
    return;
  }
  node.hidden = false;
  node.textContent = exc.text || exc.message || String(exc);
}

export const fmt = new Intl.NumberFormat("en");

/** A bar pair "before → after" for one row of a token table. */
export function tokenBar(label, before, after, scale, note) {
  const pct = (v) => `${scale ? Math.max(0.5, (100 * v) / scale) : 0}%`;
  return el("div", { class: "bar-row" },
    el("div", { class: "bar-label", title: label }, label),
    el("div", { class: "bar-track" },
      el("div", { class: "bar before", style: `width:${pct(before)}` }),
      el("div", { class: "bar after", style: `width:${after ? pct(after) : "0%"}` })),
    el("div", { class: "bar-figures" },
      `${fmt.format(before)} → ${fmt.format(after)}`, note ? el("span", { class: "muted" }, ` ${note}`) : null));
}

/** The text of a message in the OpenAI shape: its content and its tool calls. */
export function messageText(m) {
  const parts = [];
  if (typeof m.content === "string") parts.push(m.content);
  else if (Array.isArray(m.content)) parts.push(...m.content.map((p) => p.text || `[${p.type}]`));
  for (const c of m.tool_calls || []) parts.push(`→ ${c.function?.name}(${c.function?.arguments})`);
  return parts.join("\n");
}
