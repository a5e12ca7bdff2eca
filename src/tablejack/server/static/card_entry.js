// The dealer console's entry by hand at a card-reader table (PA 633c.5(j): cards are dealt from
// a shoe that reads them; a supervisor allows entry by hand for a round the shoe cannot read):
// besides the card box (a keyboard-wedge reader types into it, and so can the dealer), a card is
// entered by clicking it. Every card goes through the card form, so the same check and the same
// dealer command as a typed one. The console's simulated card-reading shoe is the server's
// (the `shoe-draw` command): the page never learns a card before the table shows it.
import { el } from "/static/common.js";
import { t } from "/static/i18n.js";

const $ = (id) => document.getElementById(id);
const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };

function enter(code) {
  $("card").value = code;
  $("card-form").requestSubmit();
}

function draw() {
  const wasDisabled = $("card").disabled;
  const grid = el("div", { class: "card-picker", role: "group", "aria-label": t("console.pick_card"), "data-testid": "card-picker" },
    Object.entries(SUITS).map(([suit, symbol]) => el("div", { class: "picker-row" },
      RANKS.map((rank) => el("button", {
        type: "button", class: `pick${suit === "H" || suit === "D" ? " red" : ""}`,
        "data-testid": `pick-${rank}${suit}`, "aria-label": `${rank}${suit}`,
        disabled: wasDisabled ? "" : null,
        onclick: () => enter(`${rank}${suit}`),
      }, `${rank}${symbol}`)))));
  $("card-picker").replaceChildren(el("p", { class: "muted" }, t("console.pick_hint")), grid);
}

draw();
document.addEventListener("tablejack:language", draw);
