// The /v1 API, as the page calls it: every request goes through `call`, which adds the
// API key (kept in this tab's sessionStorage) and asks for one when the server answers 401.

const KEY = "precis.key";

export class ApiError extends Error {
  constructor(status, type, message, where) {
    super(message);
    this.status = status;
    this.type = type;
    this.where = where;
  }
  get text() {
    return this.where ? `${this.message} (${this.where})` : this.message;
  }
}

export function key() {
  return sessionStorage.getItem(KEY) || "";
}

export function setKey(value) {
  if (value) sessionStorage.setItem(KEY, value);
  else sessionStorage.removeItem(KEY);
}

let asking = null; // one key dialog at a time

function askKey(reason) {
  if (!asking) {
    asking = new Promise((resolve) => {
      const dialog = document.getElementById("key-dialog");
      const input = document.getElementById("key-input");
      const error = document.getElementById("key-error");
      error.hidden = !reason;
      error.textContent = reason || "";
      input.value = "";
      dialog.addEventListener("close", () => {
        asking = null;
        const value = dialog.returnValue === "ok" ? input.value.trim() : "";
        if (value) setKey(value);
        resolve(Boolean(value));
      }, { once: true });
      dialog.showModal();
    });
  }
  return asking;
}

/** Call `method path` with a JSON body (or none); the parsed JSON answer, or ApiError. */
export async function call(method, path, body) {
  for (;;) {
    const headers = { Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (key()) headers.Authorization = `Bearer ${key()}`;
    let response;
    try {
      response = await fetch(path, {
        method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (exc) {
      throw new ApiError(0, "network", `the server did not answer: ${exc.message}`);
    }
    const text = await response.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch { data = null; }
    if (response.status === 401) {
      document.getElementById("key-button").hidden = false;
      const had = key();
      if (await askKey(had ? "That key was refused: give another." : "")) continue;
    }
    if (!response.ok) {
      const err = (data && data.error) || {};
      throw new ApiError(response.status, err.type || "http",
        err.message || `${method} ${path}: HTTP ${response.status}`, err.where);
    }
    return data;
  }
}

export function changeKey() {
  return askKey("");
}

/** A query string from an object, leaving out empty values. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}
