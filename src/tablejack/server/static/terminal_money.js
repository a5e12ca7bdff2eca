// The terminal's money (PA 605a.2(d), 605a.5(c)): the bill validator and the voucher reader,
// modelled as buttons that insert a bill and a box a voucher's number is scanned or typed
// into, each crediting the game account (POST /api/floor/bill-in, /api/floor/voucher-in,
// under the money policy); and the cash-out, confirmed with its amount, whose voucher is
// printed as a ticket with its barcode (POST /api/floor/vouchers/ticket).
//
// The simulated validator signs as a real controller does (docs/floor.md): its Ed25519 key is
// made once in this browser (IndexedDB, the private key not extractable) and registered with
// the terminal's device credential (POST /api/floor/validator, the terminal's cookie); every
// bill and voucher carries a new event id and the signature of
// "tablejack-validator-v1\n<terminal>\n<event>\n<kind>\n<amount or code>". A request
// that got no answer is sent again with the same event id: it is answered once.
import { money, el, refusalText } from "/static/common.js";
import { t } from "/static/i18n.js";

const $ = (id) => document.getElementById(id);
const BILLS = [500, 1000, 2000, 5000, 10000];

async function send(path, body = {}) {
  const r = await fetch(path, { method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const answer = r.headers.get("content-type")?.startsWith("text/html") ? await r.text() : await r.json().catch(() => null);
  return { ok: r.ok, status: r.status, answer, refusal: r.ok ? "" : refusalText(answer, `${r.status}`) };
}
// The validation number as the ticket prints it: two digits, then groups of four.
const grouped = (code) => [code.slice(0, 2), ...code.slice(2).match(/\d{1,4}/g)].join("-");
async function balance() {
  const r = await fetch("/api/me", { credentials: "same-origin" });
  return r.ok ? (await r.json()).balance : null;
}

// -- the simulated bill validator's controller
function keyStore(mode, use) {
  return new Promise((ok, fail) => {
    const open = indexedDB.open("tablejack-validator", 1);
    open.onupgradeneeded = () => open.result.createObjectStore("keys");
    open.onerror = () => fail(open.error);
    open.onsuccess = () => {
      const done = open.result.transaction("keys", mode);
      const asked = use(done.objectStore("keys"));
      done.oncomplete = () => ok(asked.result);
      done.onerror = () => fail(done.error);
    };
  });
}
const base64 = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes)));
let controller = null; // { keys, terminal }
async function validator() {
  if (controller) return controller;
  let keys = await keyStore("readonly", (s) => s.get("controller"));
  if (!keys) {
    keys = await crypto.subtle.generateKey({ name: "Ed25519" }, false, ["sign", "verify"]);
    await keyStore("readwrite", (s) => s.put(keys, "controller"));
  }
  const me = await fetch("/api/me", { credentials: "same-origin" }).then((r) => r.json());
  const publicKey = base64(await crypto.subtle.exportKey("raw", keys.publicKey));
  const registered = await send("/api/floor/validator", { public_key: publicKey });
  if (!registered.ok) throw new Error(registered.refusal);
  controller = { keys, terminal: me.terminal };
  return controller;
}
// A bill or a voucher as the validator reports it: a new event id and the controller's proof;
// sent again with the same id when no answer came.
async function inserted(path, kind, value, body) {
  let signer;
  try { signer = await validator(); } catch (error) { return { ok: false, refusal: String(error.message || error) }; }
  const event = crypto.randomUUID();
  const text = ["tablejack-validator-v1", signer.terminal, event, kind, String(value)].join("\n");
  const proof = base64(await crypto.subtle.sign({ name: "Ed25519" }, signer.keys.privateKey, new TextEncoder().encode(text)));
  const request = { ...body, event, proof };
  try { return await send(path, request); } catch { return send(path, request); }
}

// -- buy-in: bills and vouchers in
function drawBills() {
  $("bill-buttons").replaceChildren(...BILLS.map((amount) => el("button", {
    type: "button", class: "chip-button", "data-testid": `bill-${amount}`,
    "aria-label": t("buyin.bill", { amount: money(amount) }),
    onclick: async (event) => {
      const button = event.currentTarget;
      button.disabled = true;
      const done = await inserted("/api/floor/bill-in", "bill", amount, { amount });
      button.disabled = false;
      $("buyin-text").textContent = done.ok ? t("buyin.credited", { amount: money(amount), balance: money(done.answer.balance) }) : done.refusal;
    },
  }, money(amount))));
}
$("buyin-button").addEventListener("click", () => { drawBills(); $("buyin-text").textContent = ""; $("buyin").showModal(); });
$("voucher-in-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const code = $("voucher-in-code").value.replace(/\D/g, "");
  if (!code) { $("voucher-in-code").focus(); return; }
  const done = await inserted("/api/floor/voucher-in", "voucher", code, { code });
  $("buyin-text").textContent = done.ok ? t("buyin.credited", { amount: money(done.answer.amount), balance: money(done.answer.balance) }) : done.refusal;
  if (done.ok) $("voucher-in-code").value = "";
});

// -- cash-out: confirmed with the amount; the voucher printed as a ticket
// (also from the lock's notice, under a lock that still lets the player leave: PA 605a)
async function askCashOut() {
  const cents = await balance();
  const none = !cents;
  $("cashout-confirm-text").textContent = none ? t("cashout.nothing") : t("cashout.confirm", { amount: money(cents) });
  $("cashout-yes").hidden = none;
  $("cashout-yes").textContent = t("cashout.yes", { amount: money(cents || 0) });
  $("cashout-confirm").showModal();
}
$("cashout-button").addEventListener("click", askCashOut);
$("lock-cashout").addEventListener("click", askCashOut);
$("cashout-confirm").addEventListener("close", async () => {
  if ($("cashout-confirm").returnValue !== "yes") return;
  $("cashout-confirm").returnValue = "";
  const done = await send("/api/floor/cash-out");
  const frame = $("ticket-frame");
  frame.hidden = true; $("ticket-print").hidden = true;
  if (!done.ok) { $("voucher-text").textContent = done.refusal; $("voucher").showModal(); return; }
  const v = done.answer;
  $("voucher-text").textContent = t("voucher.text", { number: v.voucher_number, amount: money(v.amount), code: grouped(v.validation_code) });
  $("voucher").showModal();
  const ticket = await send("/api/floor/vouchers/ticket", { code: v.validation_code });
  if (ticket.ok) { frame.srcdoc = ticket.answer; frame.hidden = false; $("ticket-print").hidden = false; }
});
$("ticket-print").addEventListener("click", () => $("ticket-frame").contentWindow.print());
