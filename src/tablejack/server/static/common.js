// Shared helpers of the tablejack pages: cards, money, the WebSocket protocol (version 1).
export const PROTOCOL = 1;
const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };

export function params() {
  return Object.fromEntries(new URLSearchParams(location.search));
}

export function money(cents) {
  if (cents === null || cents === undefined) return "—";
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  return `${sign}$${Math.floor(abs / 100).toLocaleString("en-US")}.${String(abs % 100).padStart(2, "0")}`;
}

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value !== null && value !== undefined && value !== false) node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function card(code) {
  if (!code || code === "back") return el("div", { class: "card back", "data-card": "back", title: "face down" });
  const suit = code.slice(-1);
  const rank = code.slice(0, -1);
  const red = suit === "H" || suit === "D";
  return el("div", { class: `card${red ? " red" : ""}`, "data-card": code, title: code },
    el("span", { class: "rank" }, rank), el("span", { class: "suit" }, SUITS[suit] || suit));
}

export function cards(codes) {
  return el("div", { class: "cards" }, (codes || []).map(card));
}

// Dollars typed in a box ("10", "12.5", "12.50") as whole cents, or null: not a number of
// dollars and cents (empty, negative, a fraction of a cent, "1e3") or below `least` cents.
export function cents(text, least = 1) {
  const m = /^\s*(\d{1,9})(?:[.,](\d{1,2}))?\s*$/.exec(String(text ?? ""));
  if (!m) return null;
  const value = Number(m[1]) * 100 + Number((m[2] || "").padEnd(2, "0"));
  return value >= least ? value : null;
}

// The WebSocket of a page. It says hello on every (re)connection; when the socket closes it
// reports {type: "closed", code, reason, retry_ms} and opens a new one after 1 s, 2 s, 4 s …
// (at most 30 s; back to 1 s once a hello is welcomed), so a page is never left dead. The
// page re-joins its table when it gets the new "welcome".
export class Socket {
  constructor(token, terminal, onMessage) {
    this.token = token; this.terminal = terminal; this.onMessage = onMessage; this.counter = 0;
    this.delay = 1000;
    this.open();
  }
  open() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${scheme}://${location.host}/ws`);
    this.ws = ws;
    ws.addEventListener("open", () => this.raw({ type: "hello", protocol: PROTOCOL, token: this.token, terminal: this.terminal }));
    ws.addEventListener("message", (event) => {
      let message;
      try { message = JSON.parse(event.data); } catch { return; }
      if (message.type === "welcome") this.delay = 1000;
      this.onMessage(message);
    });
    ws.addEventListener("close", (event) => {
      if (ws !== this.ws) return;
      const wait = this.delay;
      this.delay = Math.min(this.delay * 2, 30000);
      setTimeout(() => this.open(), wait);
      this.onMessage({ type: "closed", code: event.code, reason: event.reason, retry_ms: wait });
    });
  }
  get connected() { return this.ws.readyState === WebSocket.OPEN; }
  raw(message) {
    if (this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }
  send(message) {
    const id = `${this.terminal}-${Date.now()}-${++this.counter}`;
    this.raw({ ...message, id });
    return id;
  }
}

export async function api(path, token, options = {}) {
  const response = await fetch(path, {
    ...options,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", ...(options.headers || {}) },
  });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new Error(body && body.detail ? JSON.stringify(body.detail) : response.statusText);
  return body;
}

export function clock(countdown, offsetMs) {
  if (!countdown) return null;
  const left = Math.max(0, countdown.ends_at_ms - (Date.now() + offsetMs));
  return { left, fraction: left / (countdown.seconds * 1000) };
}
