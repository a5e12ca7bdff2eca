// The terminal's money (PA 605a.2(d), 605a.5(c)): the bill validator and the voucher reader,
// modelled as buttons that insert a bill and a box a voucher's number is scanned or typed
// into, each crediting the game account (POST /api/floor/bill-in, /api/floor/voucher-in,
// under the money policy); and the cash-out, confirmed with its amount, whose voucher is
// printed as a ticket with its barcode (POST /api/floor/vouchers/ticket).
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

// -- buy-in: bills and vouchers in
function drawBills() {
  $("bill-buttons").replaceChildren(...BILLS.map((amount) => el("button", {
    type: "button", class: "chip-button", "data-testid": `bill-${amount}`,
    "aria-label": t("buyin.bill", { amount: money(amount) }),
    onclick: async (event) => {
      const button = event.currentTarget;
      button.disabled = true;
      const done = await send("/api/floor/bill-in", { amount });
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
  const done = await send("/api/floor/voucher-in", { code });
  $("buyin-text").textContent = done.ok ? t("buyin.credited", { amount: money(done.answer.amount), balance: money(done.answer.balance) }) : done.refusal;
  if (done.ok) $("voucher-in-code").value = "";
});

// -- cash-out: confirmed with the amount; the voucher printed as a ticket
$("cashout-button").addEventListener("click", async () => {
  const cents = await balance();
  const none = !cents;
  $("cashout-confirm-text").textContent = none ? t("cashout.nothing") : t("cashout.confirm", { amount: money(cents) });
  $("cashout-yes").hidden = none;
  $("cashout-yes").textContent = t("cashout.yes", { amount: money(cents || 0) });
  $("cashout-confirm").showModal();
});
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
