// Shared helpers of the tablejack pages: cards, money, the WebSocket protocol (version 2), the
// REST API and signing in. A page never carries a credential in its URL: it signs in with a
// form (POST /api/session, the token in the body) and the server keeps the session in an
// HttpOnly, SameSite=Strict cookie the page's scripts cannot read; every request of the page
// and its WebSocket's hello go with that cookie.
import { t } from "/static/i18n.js";

export const PROTOCOL = 2;
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

// The WebSocket of a page, signed in by the page's session cookie (the hello carries no
// credential). It says hello on every (re)connection; when the socket closes it reports
// {type: "closed", code, reason, retry_ms} and opens a new one after 1 s, 2 s, 4 s … (at most
// 30 s; back to 1 s once a hello is welcomed), so a page is never left dead. Each wait is drawn
// between half of it and all of it: the hundreds of terminals of tables that moved to another
// process (or of a process that drained) come back spread over that time, not all at once. The page re-joins
// its table when it gets the new "welcome". When the server refuses the socket because the
// session is gone (expired, revoked, signed out in another tab), the socket stops and the page
// reloads, which shows its sign-in form.
const SESSION_GONE = ["auth", "credential"];
export class Socket {
  constructor(onMessage) {
    this.onMessage = onMessage; this.counter = 0; this.label = "page"; this.stopped = false;
    this.delay = 1000;
    this.open();
  }
  open() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${scheme}://${location.host}/ws`);
    this.ws = ws;
    ws.addEventListener("open", () => this.raw({ type: "hello", protocol: PROTOCOL }));
    ws.addEventListener("message", (event) => {
      let message;
      try { message = JSON.parse(event.data); } catch { return; }
      if (message.type === "welcome") { this.delay = 1000; this.label = message.terminal || this.label; }
      if (message.type === "error" && !message.id && SESSION_GONE.includes(message.code)) this.checkSession();
      this.onMessage(message);
    });
    ws.addEventListener("close", (event) => {
      if (ws !== this.ws || this.stopped) return;
      const wait = Math.round(this.delay * (0.5 + Math.random() / 2));
      this.delay = Math.min(this.delay * 2, 30000);
      setTimeout(() => { if (!this.stopped) this.open(); }, wait);
      this.onMessage({ type: "closed", code: event.code, reason: event.reason, retry_ms: wait });
    });
  }
  async checkSession() {
    const me = await signedIn().catch(() => undefined);
    if (me !== null || this.stopped) return;  // still signed in (or the server is away)
    this.stop();
    location.reload();
  }
  stop() { this.stopped = true; this.ws.close(); }
  get connected() { return this.ws.readyState === WebSocket.OPEN; }
  raw(message) {
    if (this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }
  send(message) {
    const id = `${this.label}-${Date.now()}-${++this.counter}`;
    this.raw({ ...message, id });
    return id;
  }
}

// The server's refusal as one line: its sentence and rule, or whatever detail it gave.
export function refusalText(body, otherwise = "") {
  const detail = body && body.detail;
  if (detail && typeof detail === "object" && !Array.isArray(detail) && detail.message)
    // the rule once: a sentence that already cites it is not followed by it again
    return detail.rule && !detail.message.includes(detail.rule) ? `${detail.message} [${detail.rule}]` : detail.message;
  if (typeof detail === "string") return detail;
  return detail ? JSON.stringify(detail) : otherwise;
}

// A same-origin request of the REST API with the page's session cookie: the JSON answer, or
// an Error carrying the server's detail (and the status).
export async function api(path, options = {}) {
  const response = await fetch(path, {
    ...options,
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", ...(options.headers || {}) },
  });
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    const error = new Error(refusalText(body, response.statusText));
    error.status = response.status;
    throw error;
  }
  return body;
}

// Who this browser is signed in as — GET /api/me: {role, subject, terminal, expires_us,
// balance} — or null when it is not signed in (401).
export async function signedIn() {
  const response = await fetch("/api/me", { credentials: "same-origin" });
  if (response.status === 401) return null;
  if (!response.ok) throw new Error(`GET /api/me: ${response.status} ${response.statusText}`);
  return response.json();
}

// The terminal this browser is enrolled as — {terminal, table, position} — or null.
export async function enrolledTerminal() {
  const response = await fetch("/api/terminal", { credentials: "same-origin" });
  return response.ok ? response.json() : null;
}

// Sign out (the server revokes the session and clears its cookie); the page then shows its
// sign-in form.
export async function signOut() {
  await fetch("/api/session", { method: "DELETE", credentials: "same-origin" }).catch(() => null);
  location.reload();
}

async function postJSON(path, body) {
  const response = await fetch(path, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => null);
  return { ok: response.ok, answer, refusal: refusalText(answer, `${response.status} ${response.statusText}`) };
}

// Fixed text of the sign-in form, marked data-i18n: every page shows it in the page's language
// (the page loads its catalog first; the English is what shows without one).
function words(tag, key, english, attrs = {}) {
  return el(tag, { ...attrs, "data-i18n": key }, t(key, {}, english));
}
function field(key, english, input) {
  return el("label", { class: "field" }, words("span", key, english), input);
}

// The sign-in gate of a page: resolves with the person signed in in this browser (GET /api/me)
// — at once when there is one, else once someone signs in with the compact form shown in place
// of the page. A page's <body class="signed-out"> hides its content until then.
// `title`: the catalog key of the form's heading. `terminal`: the terminal page — a browser that
// is not an enrolled terminal is enrolled first (the terminal's id and device credential,
// POST /api/terminal/enrol), then players sign in.
export async function signInGate({ title = "signin.title", terminal = false } = {}) {
  const panel = el("section", { class: "panel signin", "data-testid": "signin" });
  let me;
  try { me = await signedIn(); } catch (error) {  // the server is away: say so, stay here
    document.body.classList.add("signed-out");
    panel.append(el("p", { class: "error", role: "alert" }, t("signin.server_away", { reason: error.message }, `The server does not answer (${error.message}) — reload the page to try again.`)));
    document.querySelector("header").after(panel);
    return new Promise(() => {});
  }
  if (me) { document.body.classList.remove("signed-out"); return me; }
  document.body.classList.add("signed-out");
  document.querySelector("header").after(panel);
  return new Promise((resolve) => {
    const done = (who) => { panel.remove(); document.body.classList.remove("signed-out"); resolve(who); };

    function tokenForm(enrolled) {
      const token = el("input", { type: "password", autocomplete: "off", required: "", "data-testid": "signin-token" });
      const submit = words("button", "signin.submit", "Sign in", { class: "primary", type: "submit", "data-testid": "signin-submit" });
      const refusal = el("p", { class: "error", role: "alert", "data-testid": "signin-error" });
      const form = el("form", { class: "controls", "data-testid": "signin-form" }, field("signin.token", "Your token", token), submit);
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        if (!token.value) return;
        submit.disabled = true; refusal.textContent = "";
        const sent = await postJSON("/api/session", { token: token.value }).catch((e) => ({ ok: false, refusal: e.message }));
        token.value = "";
        submit.disabled = false;
        if (!sent.ok) { refusal.textContent = sent.refusal; token.focus(); return; }
        const who = await signedIn().catch(() => null);
        if (who) done(who);
        else refusal.textContent = t("signin.no_cookie", {}, "Signed in, but this browser kept no session: are cookies allowed?");
      });
      const where = enrolled && el("p", { "data-testid": "signin-terminal" },
        words("span", "signin.terminal", "Terminal"), " ", el("b", {}, enrolled.terminal),
        " · ", words("span", "signin.table", "table"), " ", el("b", {}, enrolled.table),
        enrolled.position ? [" · ", words("span", "signin.position", "position"), " ", el("b", {}, enrolled.position)] : null);
      const other = enrolled && words("button", "signin.enrol_other", "Enrol as another terminal",
        { type: "button", class: "quiet", "data-testid": "enrol-other", onclick: () => enrolForm() });
      panel.replaceChildren(words("h2", title, "Sign in"), where || "", form, refusal,
        words("p", "signin.hint", "The token goes to the server in this form only; your session is kept in a cookie, never in the address.", { class: "muted" }),
        other || "");
      token.focus();
    }

    function enrolForm() {
      const id = el("input", { type: "text", autocomplete: "off", spellcheck: "false", required: "", "data-testid": "enrol-terminal" });
      const key = el("input", { type: "password", autocomplete: "off", required: "", "data-testid": "enrol-key" });
      const submit = words("button", "enrol.submit", "Enrol this terminal", { class: "primary", type: "submit", "data-testid": "enrol-submit" });
      const refusal = el("p", { class: "error", role: "alert", "data-testid": "enrol-error" });
      const form = el("form", { class: "controls", "data-testid": "enrol-form" },
        field("enrol.terminal", "Terminal id", id), field("enrol.key", "Terminal credential", key), submit);
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        if (!id.value.trim() || !key.value) return;
        submit.disabled = true; refusal.textContent = "";
        const sent = await postJSON("/api/terminal/enrol", { terminal: id.value.trim(), terminal_key: key.value }).catch((e) => ({ ok: false, refusal: e.message }));
        key.value = "";
        submit.disabled = false;
        if (sent.ok) tokenForm(sent.answer); else refusal.textContent = sent.refusal;
      });
      panel.replaceChildren(words("h2", "enrol.title", "Enrol this terminal"),
        words("p", "enrol.hint", "This browser is not an enrolled terminal. An attendant enters the terminal's id and its credential once; players then sign in here.", { class: "muted" }),
        form, refusal);
      id.focus();
    }

    if (!terminal) tokenForm(null);
    else enrolledTerminal().then((enrolled) => (enrolled ? tokenForm(enrolled) : enrolForm()), () => enrolForm());
  });
}

export function clock(countdown, offsetMs) {
  if (!countdown) return null;
  const left = Math.max(0, countdown.ends_at_ms - (Date.now() + offsetMs));
  return { left, fraction: left / (countdown.seconds * 1000) };
}
