// The page's entry point: one view per hash (#compact, #memory, #sessions).

import { changeKey, setKey } from "./api.js";
import * as compact from "./compact.js";
import * as memory from "./memory.js";
import * as sessions from "./sessions.js";

const VIEWS = { compact, memory, sessions };
const loaded = new Set();

function route() {
  const name = (location.hash.slice(1).split("?")[0] || "compact");
  const view = VIEWS[name] ? name : "compact";
  for (const key of Object.keys(VIEWS)) {
    document.getElementById(`view-${key}`).hidden = key !== view;
    document.querySelector(`nav a[data-view="${key}"]`).classList.toggle("active", key === view);
  }
  if (!loaded.has(view)) {
    loaded.add(view);
    VIEWS[view].load?.();
  }
}

for (const view of Object.values(VIEWS)) view.init();
document.getElementById("key-button").addEventListener("click", () => changeKey());
document.getElementById("key-forget").addEventListener("click", () => {
  setKey("");
  document.getElementById("key-dialog").close("forget");
});
window.addEventListener("hashchange", route);
route();
document.body.dataset.ready = "1";
