// The dealer console's card entry at a card-reader table (PA 633c.5): besides the card box (a
// keyboard-wedge reader types into it, and so can the dealer), a card is entered by clicking
// it, or read by the console's simulated card-reading shoe, which draws the next card from what
// the loaded shoe still holds (GET /api/tables/{id}/shoe, `remaining_by_code`). Every card goes
// through the card form, so the same check and the same dealer command as a typed one.
import { el } from "/static/common.js";
import { t } from "/static/i18n.js";

const $ = (id) => document.getElementById(id);
const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };

function enter(code) {
  $("card").value = code;
  $("card-form").requestSubmit();
}

// A random index below n, from the browser's cryptographic generator (no modulo bias).
function below(n) {
  const limit = Math.floor(0x100000000 / n) * n;
  const word = new Uint32Array(1);
  do crypto.getRandomValues(word); while (word[0] >= limit);
  return word[0] % n;
}

async function drawFromShoe(button) {
  button.disabled = true;
  $("shoe-draw-text").textContent = "";
  try {
    const r = await fetch(`/api/tables/${encodeURIComponent($("table").value)}/shoe`, { credentials: "same-origin" });
    const shoe = r.ok ? await r.json() : null;
    const left = shoe && shoe.loaded ? shoe.loaded.remaining_by_code || {} : {};
    const codes = Object.entries(left).flatMap(([code, n]) => Array(n).fill(code));
    if (!codes.length) { $("shoe-draw-text").textContent = t("console.shoe_empty"); return; }
    const code = codes[below(codes.length)];
    $("shoe-draw-text").textContent = t("console.shoe_read", { card: code });
    enter(code);
  } finally { button.disabled = false; }
}

function draw() {
  const grid = el("div", { class: "card-picker", role: "group", "aria-label": t("console.pick_card"), "data-testid": "card-picker" },
    Object.entries(SUITS).map(([suit, symbol]) => el("div", { class: "picker-row" },
      RANKS.map((rank) => el("button", {
        type: "button", class: `pick${suit === "H" || suit === "D" ? " red" : ""}`,
        "data-testid": `pick-${rank}${suit}`, "aria-label": `${rank}${suit}`,
        onclick: () => enter(`${rank}${suit}`),
      }, `${rank}${symbol}`)))));
  const shoeButton = el("button", { type: "button", class: "primary", "data-testid": "shoe-draw", onclick: (event) => drawFromShoe(event.currentTarget) }, t("console.shoe_draw"));
  $("card-picker").replaceChildren(
    el("p", { class: "muted" }, t("console.pick_hint")), grid,
    el("div", { class: "controls" }, shoeButton, el("span", { class: "muted", id: "shoe-draw-text", "data-testid": "shoe-draw-text", role: "status" })));
}

draw();
document.addEventListener("tablejack:language", draw);
