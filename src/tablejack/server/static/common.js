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

export class Socket {
  constructor(token, terminal, onMessage) {
    this.token = token; this.terminal = terminal; this.onMessage = onMessage; this.counter = 0;
    this.open();
  }
  open() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    this.ws = new WebSocket(`${scheme}://${location.host}/ws`);
    this.ws.addEventListener("open", () => this.raw({ type: "hello", protocol: PROTOCOL, token: this.token, terminal: this.terminal }));
    this.ws.addEventListener("message", (event) => this.onMessage(JSON.parse(event.data)));
    this.ws.addEventListener("close", (event) => this.onMessage({ type: "closed", code: event.code, reason: event.reason }));
  }
  raw(message) { this.ws.send(JSON.stringify(message)); }
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
