// The electronic wagering terminal (PA 633c.5(b)–(c), PA 605a): the layout of the table the
// terminal is bound to, drawn from the server's state messages (the engine's terminal view:
// the server decides everything, this page only shows it and sends the player's choices).
// Every word it shows comes from the language catalog (i18n.js); a full-screen overlay
// covers the page while the connection is down or the table or terminal is locked.
import { params, money, el, cents, Socket, clock, signInGate, signOut, enrolledTerminal, refusalText } from "/static/common.js";
import { t, has, chosen, setLanguage, current } from "/static/i18n.js";
import { hand, chip } from "/static/cards.js";
import { cue, effectsOn, setEffects, applyEffects } from "/static/sound.js";

const query = params();
const $ = (id) => document.getElementById(id);
// The decisions in the order their buttons show; those taking an amount; the refusal codes the
// catalog words (any other refusal shows the server's sentence in English, its words in other
// languages, the rule always).
const ACTIONS = ["hit", "stand", "double", "split", "surrender", "insurance", "no-insurance", "even-money", "ez-bust", "no-ez-bust"];
const AMOUNT_ACTIONS = ["double", "insurance", "ez-bust"];
const WORDED_ERRORS = ["confirm", "balance", "limit", "excluded", "tilt", "repeat", "sequence", "rate_limited", "halted", "round", "table", "wagering_closed", "irregularity"];
const TERMINAL_RULE = "terminal lock-out";

let info = null, state = null, offset = 0, me = null;
let offline = false, tableTilt = null, terminalTilt = null;
let cashOutLocks = new Set();  // the terminal locks that still let a player cash out (welcome)
let games = [], game = 0, upto = 0;  // recall mode
const started = Date.now();          // this terminal session (time played, the session's net)
const sessionRounds = new Map();     // round id -> the player's net in it
const playing = new Set();           // the rounds this page saw the player in before they ended

applyEffects();
await setLanguage(chosen(query));
$("language").value = current;
$("language").addEventListener("change", async () => {
  await setLanguage($("language").value, true);
  redraw();
});
drawChipButtons();
drawEffectsButton();

// Signed in at this terminal (the enrolled terminal's form, else the player's token), then the
// table of the terminal's binding (which /api/me names); the terminal's id is the session's.
const signed = await signInGate({ terminal: true });
const enrolled = await enrolledTerminal();
const terminal = signed.terminal || (enrolled ? enrolled.terminal : "");
const tableId = signed.table || (enrolled ? enrolled.table : query.table);
const boundSeat = signed.position || (enrolled ? enrolled.position : null);  // a terminal bound to a seat
$("sign-out").addEventListener("click", signOut);
const socket = new Socket(onMessage);

// -- words ----------------------------------------------------------------------------------

function key(text) { return String(text).toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_|_$/g, ""); }
function kindName(kind) { return t(`kind.${kind}`, {}, kind.replace(/_/g, " ")); }
function signed$(amount) { return amount > 0 ? `+${money(amount)}` : amount < 0 ? `−${money(-amount)}` : money(0); }
function isSeated() { return info && (info.game === "classic" || info.game === "multi-action"); }

// A hand's total as a player reads it: "Blackjack!", "28 — Bust", "Soft 17", "17".
function totalText(h) {
  if (!h || h.total === null || h.total === undefined || (h.cards && !h.cards.length)) return "";
  if (h.blackjack) return t("total.blackjack");
  if (h.bust) return t("total.bust", { total: h.total });
  if (h.soft && h.total < 21) return t("total.soft", { total: h.total });
  return t("total.hard", { total: h.total });
}
function totalClass(h) {
  return h && h.blackjack ? "total blackjack" : h && h.bust ? "total bust" : "total";
}
function showingText(showing) {
  if (!showing) return "";
  return showing.soft ? t("total.showing_ace") : t("total.showing", { total: showing.total });
}

// One settlement in plain words: "You win $25.00", "Push — $10.00 back", "You lose $10.00".
function outcomeText(s) {
  const net = s.returned - s.amount;
  const words = {
    win: () => t("outcome.win", { amount: money(net) }),
    blackjack: () => t("outcome.blackjack", { amount: money(net) }),
    push: () => t("outcome.push", { amount: money(s.returned) }),
    lose: () => t("outcome.lose", { amount: money(s.amount) }),
    surrender: () => t("outcome.surrender", { amount: money(s.returned) }),
    "even money": () => t("outcome.even_money", { amount: money(net) }),
  }[s.result];
  return words ? words() : t(`result.${key(s.result)}`, {}, s.result);
}
// Which wager a settlement is: "Spot 2 · dealer round 2" ("Spot 2 · hand 1 · dealer round 2"
// after a split), "Hand 2", "Buzzer Beater".
function wagerLabel(s, hands) {
  if (s.spot && hands > 1 && s.hand !== null && s.hand !== undefined)
    return t("results.spot_hand_round", { n: s.spot, hand: s.hand + 1, round: s.dealer_round || s.spot });
  if (s.spot) return t("results.spot_round", { n: s.spot, round: s.dealer_round || s.spot });
  if (s.kind !== "blackjack") return kindName(s.kind);
  if (hands > 1 && s.hand !== null && s.hand !== undefined) return t("results.hand", { n: s.hand + 1 });
  return kindName("blackjack");
}
function phaseText(phase) { return t(`phase.${key(phase)}`, {}, phase); }

// -- the socket -------------------------------------------------------------------------------

// Wagers and repeats are remembered by id: one refused for want of the second confirmation
// (code "confirm", PA 605a) is asked again and resent with "confirm": true. Every message
// sent from a control remembers the line beside it, where its refusal is shown.
const sent = new Map();
const origin = new Map();
function send(message, line) {
  $(line).textContent = "";
  const id = socket.send(message);
  origin.set(id, line);
  if (origin.size > 50) origin.delete(origin.keys().next().value);
  return id;
}
function sendWager(message) {
  if (needsPosition()) { $("wager-error").textContent = t(isSeated() ? "wager.pick_seat" : "wager.pick_position"); return; }
  const id = send(message, "wager-error");
  sent.set(id, message);
  if (sent.size > 50) sent.delete(sent.keys().next().value);
}
function needsPosition() {
  return info && info.game !== "hybrid-shared" && !(state && state.position) && !(state && state.view && state.view.you);
}
// The dollars of the amount box as whole positive cents; else the reason beside it and null.
function wagerAmount() {
  const amount = cents($("amount").value);
  if (amount === null) $("wager-error").textContent = t("wager.amount_invalid");
  return amount;
}
// A multi-action double names the spots it doubles (NJ MAB (a), A-27): every backed spot is
// ticked; one left unticked is not doubled.
let doubleSpotsFor = null;
function drawDoubleSpots(you) {
  const box = $("double-spots");
  box.hidden = !you;
  if (!you) { doubleSpotsFor = null; return; }
  const live = (you.hands || []).find((h) => !h.complete) || (you.hands || [])[0];
  const backed = live && live.spots ? live.spots.map((w) => w.spot) : [];
  const id = `${state.round_id}/${live ? live.index : ""}`;
  if (doubleSpotsFor === id) return;  // keep what the player ticked
  doubleSpotsFor = id;
  box.replaceChildren(el("span", {}, t("action.double_spots")), ...backed.map((n) => el("label", { class: "spot-pick" },
    el("input", { type: "checkbox", checked: "", value: n, "data-testid": `double-spot-${n}` }), t("chips.spot", { n }))));
}
function doubleSpots() {
  const boxes = [...$("double-spots").querySelectorAll("input[type=checkbox]")];
  const ticked = boxes.filter((b) => b.checked).map((b) => Number(b.value));
  return ticked.length === boxes.length ? null : ticked;
}

// A decision; a double, insurance or EZ Bust carries the amount typed (in cents), if any.
// An amount that is not whole positive cents is refused beside its box: null, nothing sent.
function actionMessage(verb) {
  const message = { type: "action", verb };
  if (verb === "double" && info.game === "multi-action") {
    const spots = doubleSpots();
    if (spots && !spots.length) { $("action-error").textContent = t("action.double_no_spot"); return null; }
    if (spots) message.spots = spots;
    return message;
  }
  const typed = $("action-amount").value.trim();
  if (AMOUNT_ACTIONS.includes(verb) && typed !== "") {
    message.amount = cents(typed);
    if (message.amount === null) { $("action-error").textContent = t("action.amount_invalid"); return null; }
  }
  return message;
}
function askConfirmation(original, amount) {
  $("confirm-text").textContent = t(original.type === "repeat" ? "confirm.repeat" : "confirm.wager", { amount: money(amount) });
  const dialog = $("confirm");
  dialog.returnValue = "";
  dialog.addEventListener("close", () => {
    if (dialog.returnValue === "yes") sendWager({ ...original, confirm: true });
  }, { once: true });
  dialog.showModal();
}
// A refusal in the player's language with its rule; the server's own sentence in its title.
function refusal(message) {
  const vars = { amount: money(message.amount) };
  const words = WORDED_ERRORS.includes(message.code) && has(`error.${message.code}`)
    ? t(`error.${message.code}`, vars)
    : current === "en" ? message.message : t("error.rule");
  const rule = ruleWords(message.rule);
  return rule && !words.includes(rule) && !words.includes(message.rule) ? `${words} [${rule}]` : words;  // the rule once
}
// The server's rule strings the page words itself; any other rule shows only its clause
// ("PA 633a.6") outside English, never the server's English words after it.
// A rule that names no clause (the server's own protocol: "table lock-out", "message
// sequence", "protocol: hello") is worded from the catalog, or left out: never shown in English.
const RULE_WORDS = {
  "PA 605a repeat last bet": "rule.repeat", "PA 605a double confirmation": "rule.confirm",
  "table lock-out": "rule.lockout", "message sequence": "rule.sequence", "protocol: hello": "rule.hello",
};
function ruleWords(rule) {
  if (!rule || current === "en") return rule;
  if (RULE_WORDS[rule]) return t(RULE_WORDS[rule]);
  const clause = /^[A-Z]{2,3} [0-9][0-9A-Za-z.()]*/.exec(rule);
  return clause ? clause[0] : "";
}
function tiltOf(message) {
  const code = (/\(([a-z_]+)[),]/.exec(message.message || "") || [])[1] || "";
  return { code, message: message.message };
}

function onMessage(message) {
  if (message.type === "welcome") {
    offline = false;
    tableTilt = null; terminalTilt = null;  // the server tells a joining terminal its tilts again
    cashOutLocks = new Set(message.cash_out_locks || []);
    me = message.subject;
    $("who").textContent = terminal ? `${message.subject} · ${terminal}` : message.subject;
    $("balance").textContent = money(message.balance);
    socket.send({ type: "join", table: tableId || (message.tables[0] || {}).id });
    drawLock();
  } else if (message.type === "table") {
    info = message; drawLayout(); if (state) render();
  } else if (message.type === "state") {
    const wasHalted = state && state.status === "halted";
    state = message;
    if (message.countdown) offset = message.countdown.now_ms - Date.now();
    if (message.status !== "halted") tableTilt = null;
    if (wasHalted && message.status !== "halted") {  // the table is open again: no stale "halted"
      for (const line of ["error", "wager-error", "action-error"]) $(line).textContent = "";
    }
    render();
  } else if (message.type === "error") {
    if (message.code === "tilt") {  // PA 605a lock-out: the table's or this terminal's
      if (message.rule === TERMINAL_RULE) terminalTilt = tiltOf(message); else tableTilt = tiltOf(message);
      cue("alarm");
      drawLock();
    }
    if (message.code === "tilt_cleared") { terminalTilt = null; drawLock(); $("notice").textContent = t("lock.cleared"); return; }
    const original = sent.get(message.id);
    if (message.code === "confirm" && original) { askConfirmation(original, message.amount); return; }
    if (message.code === "tilt" && !message.id) return;  // shown on the overlay
    const text = refusal(message);
    // once: beside the control that sent it, else in the action bar's error line
    const beside = origin.has(message.id);
    $("error").textContent = beside ? "" : text;
    $("error").title = beside ? "" : message.message || "";
    if (beside) $(origin.get(message.id)).textContent = text;
    $("notice").textContent = "";
  } else if (message.type === "ack") {
    $("error").textContent = "";
    if (origin.has(message.id)) $(origin.get(message.id)).textContent = "";
    $("notice").textContent = message.placed
      ? t("repeat.placed", { wagers: message.placed.map((w) => `${kindName(w.kind)} ${money(w.amount)}`).join(", ") })
      : "";
  } else if (message.type === "voided") {  // PA 633a.14: the round is void, every wager back
    $("notice").textContent = t(message.refunded ? "terminal.voided_refunded" : "terminal.voided", {
      round: message.round_id, reason: message.reason, amount: money(message.refunded) });
  } else if (message.type === "closed") {  // the socket opens again by itself
    $("who").textContent = t("header.disconnected", { code: message.code });
    offline = true;
    drawLock();
  }
}

// -- overlays: a lost connection, a halted table, a locked terminal --------------------------

function drawLock() {
  const halted = state && state.status === "halted";
  const locked = !offline && (halted || terminalTilt !== null);
  $("offline").hidden = !offline;
  $("halted").hidden = !locked;
  const tilt = terminalTilt || tableTilt;
  $("halted-title").textContent = locked ? t(terminalTilt ? "lock.terminal" : "lock.table") : "";
  $("lock").textContent = !locked ? "" : tilt && tilt.code
    ? t(`tilt.${tilt.code}`, {}, t("lock.halted"))
    : t("lock.halted");
  $("lock").title = tilt ? `${tilt.code}: ${tilt.message}` : "";  // the code and the server's words for the attendant
  $("lock").dataset.code = tilt ? tilt.code : "";
  // a table stopped, or a lock that lets the player leave: he still cashes out (PA 605a)
  $("lock-cashout").hidden = !locked || (terminalTilt !== null && !cashOutLocks.has(terminalTilt.code));
  const blocked = offline || locked;
  const wasBlocked = document.body.classList.contains("blocked");
  for (const part of [document.querySelector("header"), $("felt"), $("action-bar")]) part.inert = blocked;
  document.body.classList.toggle("blocked", blocked);
  if (blocked && !wasBlocked) for (const dialog of document.querySelectorAll("dialog[open]")) dialog.close();
  drawBar();
}

// -- the layout -------------------------------------------------------------------------------

function drawLayout() {
  $("table-name").textContent = info.title; $("table-name").title = info.title;  // whole, where the bar cuts it
  document.body.dataset.game = info.game;
  const row = $("positions");
  row.replaceChildren();
  for (let n = 1; n <= info.positions; n++) {
    row.append(el("div", { class: "box seat", id: `position-${n}`, "data-testid": `position-${n}`, "data-position": n,
      onclick: () => { if (info.game !== "hybrid-shared" && !seatLocked()) socket.send({ type: "position", position: n }); } },
      el("h3", {}, ""), el("div", { class: "hands" }), el("div", { class: "who" })));
  }
  $("community-zone").hidden = !(info.game === "hybrid" || info.game === "hybrid-shared");
  $("dealer-rounds").hidden = info.game !== "multi-action";
  // each side wager with its own amount box, beside its button
  const sideAmount = (kind) => {
    const amount = cents($(`side-amount-${kind}`).value);
    if (amount === null) $("wager-error").textContent = t("wager.amount_invalid");
    return amount;
  };
  const typed = Object.fromEntries([...document.querySelectorAll("[data-side-amount]")].map((i) => [i.dataset.sideAmount, i.value]));
  $("side-wagers").replaceChildren(...info.side_wagers.map((kind) => el("span", { class: "side-item" },
    el("label", { class: "amount side-amount" }, el("span", { class: "dollar", "aria-hidden": "true" }, "$"),
      el("input", { id: `side-amount-${kind}`, "data-side-amount": kind, "data-testid": `side-amount-${kind}`, type: "text", inputmode: "decimal", autocomplete: "off",
        value: typed[kind] ?? "5", "aria-label": t("wager.side_amount_label", { kind: kindName(kind) }) })),
    el("button", { type: "button", class: "side", "data-testid": `side-${kind}`, "data-kind": kind,
      onclick: () => { const amount = sideAmount(kind); if (amount !== null) sendWager({ type: "wager", kind, amount }); } }, kindName(kind)))));
  const multi = info.game === "multi-action";  // three betting spots in one wager (NJ MAB (f)(1))
  $("spots").hidden = !multi;
  $("single").hidden = multi;
  drawRules();
  drawSeatLabels();
}
function seatLocked() { return boundSeat || (state && state.view && state.view.you); }
function drawSeatLabels() {
  if (!info) return;
  for (let n = 1; n <= info.positions; n++) {
    const heading = $(`position-${n}`).querySelector("h3");
    heading.textContent = info.game === "hybrid-shared" ? t("box.shared_start") : isSeated() ? t("box.seat", { n }) : t("box.player", { n });
  }
  $("position-word").textContent = t(isSeated() ? "wager.seat" : "wager.position");
  $("position-word").dataset.i18n = isSeated() ? "wager.seat" : "wager.position";
}

// Cards that just arrived slide in (and click) — those not drawn in the same place before.
let drawn = new Set(), drawing = new Set(), drawnRound = null, primed = false, dealtNow = 0;
function fresh(zone) {
  return (i, code) => {
    const id = `${zone}/${i}/${code}`;
    drawing.add(id);
    const isNew = primed && !drawn.has(id) && code !== "back";
    if (isNew) dealtNow += 1;
    return isNew;
  };
}

function hands(list, zone, { mine = false, settlements = [], chips = true } = {}) {
  // the hand being played: the first one not complete (after a split, the others wait)
  const active = mine ? list.findIndex((h) => h.complete === false) : -1;
  const labelled = mine && list.length > 1;
  return list.map((h, i) => {
    const codes = h.cards || h;
    const outcome = mine ? handOutcome(settlements, h.index ?? i) : null;
    const playing = i === active;
    const label = labelled ? el("div", { class: `hand-label${playing ? " playing" : ""}`, "data-testid": `hand-label-${i + 1}` },
      playing ? t("hand.playing", { n: i + 1 }) : t("hand.label", { n: i + 1 })) : null;
    const box = el("div", { class: `hand${playing ? " live" : ""}${labelled ? " labelled" : ""}`, "data-testid": mine ? `hand-${i + 1}` : null, "aria-current": playing && labelled ? "true" : null },
      label,
      hand(codes, { fresh: fresh(`${zone}/${i}`) }),
      el("div", { class: totalClass(h), "data-testid": mine ? `hand-total-${i + 1}` : null }, totalText(h)),
      outcome ? el("div", { class: `badge ${outcome.result}`, "data-testid": `hand-outcome-${i + 1}` }, outcome.text) : null,
      mine && chips ? handChips(h) : null);
    return box;
  });
}
function handOutcome(settlements, index) {
  const mine = settlements.filter((s) => s.kind === "blackjack" && (s.hand === index || s.hand === null) && !s.spot);
  if (!mine.length) return null;
  const net = mine.reduce((sum, s) => sum + s.returned - s.amount, 0);
  const result = mine[0].result;
  return { result: key(result), text: `${t(`badge.${key(result)}`, {}, result)} ${net ? signed$(net) : ""}`.trim() };
}
// The stakes on a hand as chips: the wager, a double beside it; a multi-action hand's spots.
function handChips(h) {
  const stack = el("div", { class: "stakes" });
  if (h.spots) {  // per spot: its wager and, beside it, its double
    for (const s of h.spots) {
      const base = s.amount - (s.doubled || 0);
      const caption = s.doubled ? t("chips.spot_doubled", { n: s.spot }) : t("chips.spot", { n: s.spot });
      stack.append(el("span", { class: "spot-stake", "data-testid": `stake-spot-${s.spot}`, "data-amount": s.amount },
        el("span", { class: "pair" }, chip(base), s.doubled ? chip(s.doubled, "", { "data-testid": `stake-double-${s.spot}` }) : null),
        el("span", { class: "chip-caption" }, caption)));
    }
    return stack;
  }
  const doubled = h.doubled || 0;
  if (h.wager) stack.append(chip(h.wager - doubled, t("chips.wager"), { "data-testid": `stake-hand-${(h.index ?? 0) + 1}`, "data-amount": h.wager }));
  if (doubled) stack.append(chip(doubled, t("chips.double"), { "data-testid": `stake-double-${(h.index ?? 0) + 1}` }));
  return stack;
}
// Wagers not on a hand: side wagers, insurance, EZ Bust; before the deal, the Blackjack wager.
function sideChips(you) {
  const row = el("div", { class: "stakes side", "data-testid": "side-stakes" });
  const wagers = you.wagers || [];
  const onHands = (you.hands || []).some((h) => h.wager || (h.spots && h.spots.length));  // drawn with its hand
  for (const w of wagers) {
    if (w.kind === "blackjack" && (onHands || w.spot)) continue;
    const caption = w.kind === "blackjack" ? t("chips.wager") : kindName(w.kind);
    row.append(chip(w.amount, caption, { "data-testid": `stake-${w.kind}`, "data-amount": w.amount }));
  }
  if (!onHands && you.spots) you.spots.forEach((amount, i) => { if (amount) row.append(chip(amount, t("chips.spot", { n: i + 1 }), { "data-testid": `stake-spot-${i + 1}`, "data-amount": amount })); });
  return row.childElementCount ? row : null;
}

function render() {
  if (!info || !state) return;
  const view = state.view;
  if (state.round_id !== drawnRound) { drawn = new Set(); drawnRound = state.round_id; }
  drawing = new Set(); dealtNow = 0;
  $("balance").textContent = money(state.balance);
  const you = view ? view.you : null;
  drawMeters(you);
  // the last round's cards stay on the layout, dimmed, until the next round's first card
  if (view && hasCards(view)) lastDealt = { round: state.round_id, view };
  const previous = lastDealt && !(view && hasCards(view)) && (!view || lastDealt.round !== state.round_id) ? lastDealt.view : null;
  $("felt").classList.toggle("previous-round", !!previous);
  if (previous) primed = false;  // cards already seen: no deal animation or sound for them
  const shown = previous || view;
  const shownYou = previous ? previousYou(previous.you, you) : you;
  drawDealer(shown, shownYou);
  drawCommunity(shown, shownYou);
  drawSeats(previous ? { ...view, ...previousSeats(previous, view) } : view, shownYou);
  drawBar();
  drawResults();
  drawLock();
  for (const id of drawing) drawn.add(id);
  if (dealtNow) cue("card");
  if (primed && you && you.awaiting_decision && !wasAwaiting) cue("turn");
  wasAwaiting = !!(you && you.awaiting_decision);
  primed = true;
}
let wasAwaiting = false;
let lastDealt = null;  // {round, view}: the last view with cards on the layout
function hasCards(view) {
  const d = view.dealer || {};
  return !!((d.cards && d.cards.length) || d.first_card || (view.community_cards && view.community_cards.length)
    || (view.players_cards && view.players_cards.length));
}
// The player as shown while the last round's cards stay: its hands and outcomes, with this
// round's wagers (no stake of the last round is shown as if it were in play).
function previousYou(old, now) {
  if (!old) return now;
  const hands = (old.hands || []).map((h) => ({ ...h, wager: 0, spots: [], complete: true }));
  return { ...old, hands, wagers: now ? now.wagers || [] : [], spots: now ? now.spots : null,
    legal_actions: [], awaiting_decision: false };
}
function previousSeats(old, now) {
  return { players: old.players || [], positions: old.positions || (now || {}).positions,
    players_cards: old.players_cards, you: undefined };
}
// The Bet and Win meters, as on the terminals players know: what is wagered this round, and
// what the last settled round paid back (kept until the next round's first wager).
let winMeter = 0;
function drawMeters(you) {
  const wagered = you ? (you.wagers || []).reduce((sum, w) => sum + (w.amount || 0), 0) : 0;
  const settled = you && (you.settlements || []).length ? you.settlements : null;
  if (settled) winMeter = settled.reduce((sum, s) => sum + (s.returned || 0), 0);
  else if (wagered) winMeter = 0;
  $("bet-meter").textContent = money(wagered);
  $("win-meter").textContent = money(winMeter);
  $("win-meter").parentElement.classList.toggle("won", winMeter > 0);
}
function redraw() { if (info) { drawLayout(); primed = false; if (state) render(); primed = true; } if (games.length) drawRecall(); drawEffectsButton(); }

function drawDealer(view, you) {
  const box = $("dealer-box");
  const heading = box.querySelector("h3");
  const dealer = view ? view.dealer : null;
  let codes = [], totals = null, label = "box.dealer";
  if (dealer && info.game === "hybrid-shared") {  // version B: the player's own dealer hand (633c.5(y))
    if (you && you.dealer_hand && you.dealer_hand.cards.length) {
      codes = you.dealer_hand.cards; totals = you.dealer_hand; label = "box.your_dealer";
    } else codes = dealer.first_card ? [dealer.first_card] : [];
  } else if (dealer && info.game === "multi-action") {
    codes = dealer.first_card ? [dealer.first_card] : []; label = "box.first_card";
  } else if (dealer) {
    codes = [...(dealer.cards || [])];
    if (dealer.hole_card_dealt && (dealer.total === null || dealer.total === undefined) && codes.length === 1) codes.push("back");
    if (dealer.total !== null && dealer.total !== undefined) totals = dealer;
  }
  heading.textContent = t(label);
  heading.dataset.i18n = label;
  box.classList.toggle("yours", label === "box.your_dealer");
  box.querySelector(".cards").replaceWith(hand(codes, { fresh: fresh("dealer") }));
  const total = box.querySelector(".total");
  total.className = totalClass(totals);
  total.textContent = totals ? totalText(totals) : dealer && info.game !== "multi-action" ? showingText(dealer.showing) : "";
  if (info.game === "multi-action") drawDealerRounds(dealer);
}
// Multi-action: the dealer's first card played out three times (NJ MAB (f)(4)–(7)).
function drawDealerRounds(dealer) {
  const rounds = dealer ? dealer.rounds || {} : {};
  const skipped = dealer ? dealer.skipped_rounds || [] : [];
  const slots = [1, 2, 3].map((n) => {
    const played = rounds[String(n)];
    const codes = played ? played.cards : dealer && dealer.first_card ? [dealer.first_card] : [];
    const now = dealer && dealer.round === n;
    return el("div", { class: `box dealer-round${now ? " now" : ""}`, "data-testid": `dealer-round-${n}` },
      el("h3", {}, t("box.dealer_round", { n })),
      hand(codes, { fresh: fresh(`round${n}`) }),
      el("div", { class: totalClass(played), "data-testid": `dealer-round-total-${n}` },
        played ? totalText(played) : skipped.includes(n) ? t("total.not_played") : ""));
  });
  $("dealer-rounds").replaceChildren(...slots);
}

function drawCommunity(view, you) {
  const box = $("community-box");
  const codes = view && view.community_cards ? view.community_cards : [];
  const row = hand(codes, { fresh: fresh("community") });
  if (you && info.game === "hybrid-shared" && you.designations) {  // where each card went for this player
    [...row.children].forEach((card, i) => {
      const to = you.designations[i];
      if (!to) return;
      const mineHand = /^hand (\d+)$/.exec(to);
      const text = to === "dealer" ? t("community.to_dealer") : mineHand && (you.hands || []).length > 1 ? t("community.to_hand_n", { n: mineHand[1] }) : t("community.to_hand");
      card.classList.add(to === "dealer" ? "to-dealer" : "to-hand");
      card.append(el("span", { class: "went", "data-testid": `community-went-${i + 1}` }, text));
    });
  } else if (you && info.game === "hybrid" && you.community_cards_used) {
    [...row.children].slice(0, you.community_cards_used).forEach((card) => card.classList.add("used"));
  }
  box.querySelector(".cards").replaceWith(row);
  let next = "";
  if (you && info.game === "hybrid-shared" && you.next_card && you.next_card !== "decision") {
    next = you.next_card === "dealer" ? t("community.next_dealer") : t("community.next_hand");
  }
  $("next-card").textContent = next;
}

function seatEntries(view) {
  // Every layout box as { cards, hands (with totals), names }.
  const out = {};
  if (!view) return out;
  if (view.players_cards) {  // version B: one shared start
    const names = (view.players || []).map((p) => p.player).concat(view.you ? [view.you.player] : []);
    out[1] = { hands: view.players_cards.length ? [{ cards: view.players_cards }] : [], names };
  } else if (Array.isArray(view.positions)) {  // classic, multi-action: one player per seat
    for (const seat of view.positions) out[seat.position] = { hands: seat.hands, names: [seat.player] };
  } else {  // version A: the position's own cards and every player backing it (A-1)
    for (const [n, codes] of Object.entries(view.positions || {})) out[n] = { hands: codes.length ? [{ cards: codes }] : [], names: [] };
    for (const p of view.players || []) (out[p.position] ||= { hands: [], names: [] }).names.push(p.player);
    if (view.you) (out[view.you.position] ||= { hands: [], names: [] }).names.push(view.you.player);
  }
  return out;
}

function drawSeats(view, you) {
  const boxes = seatEntries(view);
  const myPosition = info.game === "hybrid-shared" ? (you ? 1 : null) : you ? you.position : state.position;
  for (let n = 1; n <= info.positions; n++) {
    const box = $(`position-${n}`);
    const entry = boxes[n] || { hands: [], names: [] };
    const mine = myPosition === n;
    box.classList.toggle("mine", !!mine);
    box.classList.toggle("empty", !mine && !entry.names.length && !entry.hands.length);
    box.classList.toggle("selectable", info.game !== "hybrid-shared" && !seatLocked());
    let content;
    if (mine && you) {
      const ownHands = you.hands && you.hands.length ? you.hands : [];
      content = [...hands(ownHands, `seat${n}`, { mine: true, settlements: you.settlements || [] }), sideChips(you)];
    } else {
      content = hands(entry.hands, `seat${n}`);
    }
    box.querySelector(".hands").replaceChildren(...content.filter(Boolean));
    box.querySelector(".who").textContent = entry.names.join(", ");
  }
}

// -- the action bar -------------------------------------------------------------------------

function drawBar() {
  if (!info || !state) return;
  const view = state.view;
  const you = view ? view.you : null;
  const legal = you ? (you.legal_actions || []).filter((a) => ACTIONS.includes(a)) : [];
  const blocked = offline || state.status === "halted" || terminalTilt !== null;
  const wagering = !!view && view.phase === "wagering" && state.status === "open" && !blocked;
  // the status line: the phase in words and what the player is waiting for
  let status;
  if (!view) status = state.status === "open" ? t("status.waiting_round") : t(`status.table_${key(state.status)}`, {}, state.status);
  else {
    let detail = "";
    if (view.phase === "wagering") detail = you ? t("status.wagers_in") : "";
    else if (you && you.awaiting_decision) detail = t("status.your_turn");
    else if (["playing", "insurance", "ez bust"].includes(view.phase)) detail = t("status.others");
    status = detail ? `${phaseText(view.phase)} — ${detail}` : phaseText(view.phase);
  }
  $("status").textContent = status;
  $("status").dataset.phase = view ? key(view.phase) : "";
  const noPosition = info.game === "hybrid-shared";
  document.querySelector(".seat-label").hidden = noPosition;
  $("position").textContent = state.position ? `${state.position}` : t(isSeated() ? "wager.no_seat" : "wager.no_position");
  // the wager controls, or the decisions the engine allows now
  const deciding = legal.length > 0;  // (disabled below while the page is blocked)
  $("action-panel").hidden = !deciding;
  $("wager-panel").hidden = deciding;
  $("actions").replaceChildren(...legal.map((a) =>
    el("button", { type: "button", class: a === "hit" || a === "stand" ? "primary action" : "action", "data-action": a, "data-testid": `action-${a}`,
      onclick: () => { const message = actionMessage(a); if (message) send(message, "action-error"); } }, t(`action.${a}`, {}, a.replace("-", " ")))));
  const multi = info.game === "multi-action";
  $("action-amount-box").hidden = multi || !legal.some((a) => AMOUNT_ACTIONS.includes(a));
  drawAmountLabel(legal);
  drawDoubleSpots(multi && legal.includes("double") ? you : null);
  for (const control of $("wager-panel").querySelectorAll("button")) control.disabled = !wagering;
  const placed = wagering && !!you && (you.wagers || []).some((w) => w.kind === "blackjack" && w.amount > 0);
  $("wager-change").disabled = !placed || multi;  // a multi-action table keeps its spots' wager
  $("wager-withdraw").disabled = !placed || multi;
  for (const control of $("action-panel").querySelectorAll("button")) control.disabled = blocked;
  const countdown = state.countdown;
  let then = "";
  if (countdown) {
    if (view && view.phase === "insurance") then = t("countdown.default.no_insurance");
    else if (view && view.phase === "ez bust") then = t("countdown.default.no_ez_bust");
    else if (countdown.default === "close wagering") then = t("countdown.default.close_wagering");
    else then = defaultFor(you);
  }
  $("countdown-default").textContent = then ? t("countdown.then", { action: then }) : "";
  document.querySelector(".clock").classList.toggle("idle", !countdown);
}

// -- results --------------------------------------------------------------------------------

// The result of a round stays on screen until the player presses OK or the table's
// result_hold_seconds pass, even when the next round opens meanwhile (PA 605a).
let held = null;
const seen = new Set();
function drawResults() {
  const view = state && state.view;
  const you = view ? view.you : null;
  const current = you && you.settlements ? you.settlements : [];
  const complete = view && view.phase === "complete";
  const now = Date.now();
  if (current.length && !seen.has(state.round_id)) {
    const since = held && held.round === state.round_id ? held.since : now;
    const fresh = !held || held.round !== state.round_id || held.settlements.length !== current.length;
    held = { round: state.round_id, settlements: current, since, hands: (you.hands || []).length, complete };
    if (fresh && complete && primed) {
      const net = current.reduce((sum, s) => sum + s.returned - s.amount, 0);
      cue(net > 0 ? "win" : net < 0 ? "lose" : "push");
    }
  }
  // a round counts in this session when this page saw it before it ended (not the round an
  // earlier sign-in played, held on screen when the player comes back)
  if (you && state.round_id && !complete) playing.add(state.round_id);
  if (complete && you && playing.delete(state.round_id)) sessionRounds.set(state.round_id, you.net || 0);
  const hold = info && info.result_hold_seconds !== undefined ? info.result_hold_seconds : 30;
  if (held && (seen.has(held.round) || (held.round !== state.round_id && now >= held.since + hold * 1000))) held = null;
  const shown = held ? held.settlements : [];
  const panel = $("results-panel");
  panel.dataset.held = held && held.round !== state.round_id ? "true" : "false";
  panel.classList.toggle("shown", shown.length > 0);
  $("result-hold").hidden = !held;
  $("result-hold-text").textContent = held ? t("results.held", { round: held.round, seconds: hold }) : "";
  // in hand order (a split's hands 1, 2, 3 as on the layout, whatever order they settled in);
  // a side wager, of no hand, before the hands; the sort is stable
  const handKey = (s) => (s.hand === null || s.hand === undefined ? -1 : s.hand);
  const ordered = [...shown].sort((a, b) => ((a.spot || 0) - (b.spot || 0)) || (handKey(a) - handKey(b)));
  $("results").replaceChildren(...ordered.map((s) => {
    const net = s.returned - s.amount;
    return el("li", { "data-result": s.result, class: net > 0 ? "won" : net < 0 ? "lost" : "even", title: s.clause },
      el("span", { class: "what" }, wagerLabel(s, held.hands)), " ", el("b", {}, outcomeText(s)));
  }));
  if (shown.length) {
    const wagered = shown.reduce((sum, s) => sum + s.amount, 0);
    const back = shown.reduce((sum, s) => sum + s.returned, 0);
    const done = held.complete || held.round !== (state && state.round_id);
    $("round-summary").textContent = t(done ? "results.summary" : "results.so_far", { wagered: money(wagered), back: money(back), net: signed$(back - wagered) });
  } else $("round-summary").textContent = "";
}
$("result-ok").addEventListener("click", () => { if (held) seen.add(held.round); held = null; drawResults(); });
setInterval(() => { if (held && state && held.round !== state.round_id) drawResults(); }, 500);

let lastTick = null;
function tick() {
  const c = state ? clock(state.countdown, offset) : null;
  const seconds = c ? Math.ceil(c.left / 1000) : null;
  $("countdown").textContent = c ? seconds : "–";
  $("countdown-bar").style.width = c ? `${(c.fraction * 100).toFixed(1)}%` : "0%";
  $("countdown").classList.toggle("hurry", c !== null && seconds <= 5);
  const you = state && state.view ? state.view.you : null;
  if (c && seconds <= 5 && seconds > 0 && seconds !== lastTick && you && you.awaiting_decision) cue("tick");
  lastTick = seconds;
  requestAnimationFrame(tick);
}
requestAnimationFrame(tick);

// -- wagers ---------------------------------------------------------------------------------

function drawChipButtons() {
  for (const button of document.querySelectorAll("[data-chip]")) {
    const amount = Number(button.dataset.chip);
    button.replaceChildren(chip(amount));
    button.setAttribute("aria-label", t("wager.chip", { amount: money(amount) }));
    button.title = money(amount);
  }
}
// A chip adds its value to the amount box (and to the backed spot boxes of a multi-action
// table), as chips pile up on a layout; Clear empties them.
const dollarsOf = (amount) => (amount % 100 ? (amount / 100).toFixed(2) : String(amount / 100));
document.querySelectorAll("[data-chip]").forEach((b) => b.addEventListener("click", () => {
  const value = Number(b.dataset.chip);
  $("amount").value = dollarsOf((cents($("amount").value) || 0) + value);
  for (const k of [1, 2, 3]) if ($(`spot-${k}`).value.trim() !== "0") $(`spot-${k}`).value = dollarsOf((cents($(`spot-${k}`).value) || 0) + value);
  $("wager-error").textContent = "";
}));
$("chip-clear").addEventListener("click", () => {
  $("amount").value = "";
  for (const k of [1, 2, 3]) if ($(`spot-${k}`).value.trim() !== "0") $(`spot-${k}`).value = "";
  $("wager-error").textContent = "";
  $("amount").focus();
});
$("wager").addEventListener("click", () => {
  const amount = wagerAmount();  // empty, 0, negative or a fraction of a cent: nothing is sent
  if (amount !== null) sendWager({ type: "wager", kind: "blackjack", amount });
});
// while wagering is open a placed Blackjack wager may be changed or taken back (PA 633c.5(k));
// taking it back takes its side wagers with it
$("wager-change").addEventListener("click", () => {
  const amount = wagerAmount();
  if (amount !== null) sendWager({ type: "change", kind: "blackjack", amount });
});
$("wager-withdraw").addEventListener("click", () => send({ type: "withdraw", kind: "blackjack" }, "wager-error"));
$("repeat").addEventListener("click", () => sendWager({ type: "repeat" }));  // repeat last bet (PA 605a)
$("spot-wager").addEventListener("click", () => {
  const spots = [1, 2, 3].map((k) => cents($(`spot-${k}`).value, 0));
  const amount = spots.reduce((a, b) => a + (b || 0), 0);
  if (spots.includes(null) || amount === 0) { $("wager-error").textContent = t("wager.spots_invalid"); return; }
  sendWager({ type: "wager", kind: "blackjack", amount, spots });
});

// -- the menu, sounds ---------------------------------------------------------------------

$("menu-button").addEventListener("click", () => {
  const open = !$("tools").classList.contains("open");
  $("tools").classList.toggle("open", open);
  $("menu-button").setAttribute("aria-expanded", String(open));
});
$("tools").addEventListener("click", (event) => {
  if (event.target.closest("button")) { $("tools").classList.remove("open"); $("menu-button").setAttribute("aria-expanded", "false"); }
});
// The switch's icon: a speaker with sound waves, or crossed out.
function speaker(on) {
  const NS = "http://www.w3.org/2000/svg";
  const icon = document.createElementNS(NS, "svg");
  icon.setAttribute("viewBox", "0 0 24 24");
  for (const d of ["M3 9v6h4l5 4V5L7 9H3z", on ? "M15.5 8.5a5 5 0 0 1 0 7M18 6a8.5 8.5 0 0 1 0 12" : "M16 9l6 6M22 9l-6 6"]) {
    const path = document.createElementNS(NS, "path");
    path.setAttribute("d", d);
    icon.append(path);
  }
  return icon;
}
function drawEffectsButton() {
  const on = effectsOn();
  $("sound-button").setAttribute("aria-pressed", String(on));
  $("sound-icon").replaceChildren(speaker(on));
}
$("sound-button").addEventListener("click", () => { setEffects(!effectsOn()); drawEffectsButton(); });

// -- the game rules icon (633c.5(c)(2)–(3)) -------------------------------------------------

// The amount box's label names the decision it is for (EZ Bust with its pay), never a
// decision the table does not offer.
function drawAmountLabel(legal) {
  const pays = ezBustPays();
  const label = legal.includes("ez-bust") ? t("action.amount_label_ez_bust", { pays: pays || "" })
    : legal.includes("insurance") ? t("action.amount_label_insurance")
      : t("action.amount_label_double");
  $("action-amount-box").querySelector(".label").textContent = label;
  $("action-amount").setAttribute("aria-label", label);
}
// The best pay of the table's EZ Bust paytable ("up to 10 to 1"), or null.
function ezBustPays() {
  const table = ((info && info.rules_icon && info.rules_icon.paytables) || []).find((p) => p.kind === "ez_bust");
  const rows = table ? table.rows.filter((r) => r.odds) : [];
  if (!rows.length) return null;
  const best = rows.reduce((a, b) => (b.odds[0] / b.odds[1] > a.odds[0] / a.odds[1] ? b : a));
  return odds(best.odds);
}
function odds([a, b]) { return t("rules.odds", { a: a.toLocaleString(current), b: b.toLocaleString(current) }); }
function drawRules() {
  const icon = info.rules_icon;
  const facts = icon.facts;
  let lines;
  if (facts) {
    lines = [
      t("rules.blackjack", { odds: odds(facts.blackjack_pays) }),
      t(facts.dealer_hits_soft_17 ? "rules.h17" : "rules.s17"),
      t("rules.insurance", { odds: odds(facts.insurance_pays) }),
      t("rules.countdown", { seconds: facts.countdown_seconds, action: countdownWords(facts) }),
      t((icon.paytables || []).some((p) => p.kind === "ez_bust") ? "rules.countdown_insurance_ez" : "rules.countdown_insurance"),
      t("rules.limits", { min: money(facts.table_minimum), max: money(facts.table_maximum) }),
    ];
    if (facts.decks) lines.push(t("rules.decks", { decks: facts.decks }));
    if (facts.side_wager_minimum) lines.push(t("rules.side_limits", { min: money(facts.side_wager_minimum), max: money(facts.side_wager_maximum) }));
    if (info.game === "multi-action") lines.push(t("rules.multi_action"));
    if (info.game === "hybrid-shared") lines.push(t("rules.version_b"));
  } else lines = icon.lines;
  $("rules-lines").replaceChildren(...lines.map((line) => el("li", {}, line)));
  // the placard printed on the felt: the game, its limits and its main rules
  const offered = (info.side_wagers || []).map(kindName);
  $("placard").replaceChildren(el("h2", {}, info.title),
    el("ul", {}, lines.slice(0, 3).map((line) => el("li", {}, line)),
      facts ? el("li", {}, t("rules.limits", { min: money(facts.table_minimum), max: money(facts.table_maximum) })) : null,
      offered.length ? el("li", {}, t("placard.side_wagers", { wagers: offered.join(", ") })) : null,
      ezBustPays() ? el("li", { "data-testid": "placard-ez-bust" }, t("placard.ez_bust", { pays: ezBustPays() })) : null),
    el("p", { class: "muted" }, t("placard.more")));
  const tables = icon.paytables || [];
  $("paytables").replaceChildren(...tables.map((table) => el("section", { class: "paytable", "data-testid": `paytable-${table.kind}` },
    el("h3", {}, t(`paytable.title.${table.kind}`, {}, kindName(table.kind))),
    el("p", { class: "muted" }, t(`paytable.about.${table.kind}`, {}, "")),
    el("table", { class: "data" },
      el("tr", {}, el("th", {}, t("paytable.hand")), el("th", {}, t("paytable.pays"))),
      table.rows.map((row) => el("tr", { "data-line": row.hand }, el("td", {}, lineText(table.kind, row)), el("td", {}, row.odds ? odds(row.odds) : t("paytable.push"))))),
    (table.notes || []).map((note) => el("p", { class: "muted" }, t(`paytable.note.${key(note)}`, {}, note))),
    el("p", { class: "muted clause" }, table.clause))));
}
// What the countdown does for a player who has not acted ((p)(2), (z)): the totals it hits.
function totalWord(label) {
  const [kind, n] = label.split("-");
  return t(kind === "soft" ? "rules.soft_total" : "rules.hard_total", { n });
}
function countdownWords(facts) {
  const hits = facts.countdown_hits || [];
  if (!hits.length) return t("rules.default.stand");
  if (facts.countdown_default === "hit-hard-11-or-less") return t("rules.default.hit_hard_11_or_less");
  return t("rules.default.hits", { totals: hits.map(totalWord).join(", ") });
}
// The countdown default for the hand now awaiting the player: hit or stand by its total.
function defaultFor(you) {
  const facts = info && info.rules_icon.facts;
  const live = you && (you.hands || []).find((h) => !h.complete && h.cards && h.cards.length);
  if (!facts || !live || !(facts.countdown_hits || []).length) return t("countdown.default.stand");
  const label = `${live.soft ? "soft" : "hard"}-${live.total}`;
  return facts.countdown_hits.includes(label) ? t("countdown.default.hit") : t("countdown.default.stand");
}
function handWord(label) { return label === "blackjack" ? t("paytable.bb.blackjack") : label; }
function lineText(kind, row) {
  if (kind === "buzzer_beater") return t("paytable.bb.row", { player: handWord(row.hand), dealer: row.against.map(handWord).join(t("paytable.bb.or")) });
  return t(`paytable.line.${key(row.hand)}`, {}, row.label);
}
$("rules-button").addEventListener("click", () => $("rules").showModal());

// -- recall, history, responsible gaming ------------------------------------------------------

// Recall mode (PA 605a): the last game and the 9 before it, step by step, from the log.
function resultWord(result) { return t(`result.${key(result)}`, {}, result); }
function stepText(s) {
  if (s.kind === "wager") return t("recall.wager", { player: s.player, amount: money(s.amount), kind: kindName(s.wager_kind) });
  if (s.kind === "command") return `${s.text} (${t(`recall.source.${key(s.source)}`, {}, s.source)})`;
  if (s.kind === "card") return t("recall.card", { card: s.card });
  if (s.kind === "complete") return s.settlements.map((x) => t("recall.settlement", { player: x.player, kind: kindName(x.kind), amount: money(x.amount), result: resultWord(x.result), returned: money(x.wager_returned), winnings: money(x.winnings), clause: x.clause })).join("; ") || t("recall.complete");
  if (s.kind === "void") return t("recall.voided", { reason: s.reason });
  return s.text || s.kind;
}
function drawRecall() {
  const g = games[game];
  if (!g) { $("recall-title").textContent = t("recall.none"); $("recall-steps").replaceChildren(); return; }
  upto = Math.max(1, Math.min(upto, g.steps.length));
  $("recall-title").textContent = t("recall.game", { n: game + 1, count: games.length, round: g.round_id, status: t(`recall.status.${key(g.status)}`, {}, g.status) });
  $("recall-step").textContent = t("recall.step", { n: upto, count: g.steps.length });
  const shown = g.steps.slice(0, upto);
  const credits = shown.filter((s) => s.credits_after !== undefined).map((s) => s.credits_after);
  $("recall-before").textContent = money(g.credits_before);
  $("recall-credits").textContent = money(credits.length ? credits[credits.length - 1] : g.credits_before);
  $("recall-after").textContent = upto === g.steps.length ? money(g.credits_after) : "…";
  $("recall-cards").replaceChildren(hand(shown.filter((s) => s.kind === "card").map((s) => s.card), { className: "small" }));
  $("recall-steps").replaceChildren(...shown.map((s) => el("li", { "data-kind": s.kind, "data-source": s.source || "" }, stepText(s))));
}
async function lastGames() {
  const r = await fetch(`/api/floor/terminals/${encodeURIComponent(terminal)}/recall?n=10`, { credentials: "same-origin" });
  return r.ok ? r.json() : [];
}
$("recall-button").addEventListener("click", async () => {
  games = await lastGames(); game = 0; upto = 1;
  drawRecall(); $("recall").showModal();
});
$("recall-older").addEventListener("click", () => { if (game < games.length - 1) { game += 1; upto = 1; drawRecall(); } });
$("recall-newer").addEventListener("click", () => { if (game > 0) { game -= 1; upto = 1; drawRecall(); } });
$("recall-prev").addEventListener("click", () => { upto -= 1; drawRecall(); });
$("recall-next").addEventListener("click", () => { upto += 1; drawRecall(); });
$("recall-all").addEventListener("click", () => { upto = Infinity; drawRecall(); });

function minutes(ms) {
  const total = Math.max(0, Math.floor(ms / 60000));
  return total < 60 ? t("time.minutes", { m: total }) : t("time.hours", { h: Math.floor(total / 60), m: total % 60 });
}
function clockTime(us) { return new Date(us / 1000).toLocaleTimeString(current, { hour: "2-digit", minute: "2-digit" }); }

// The session's history: the last rounds at this terminal, their net and their settlements
// with the clause that decided each (citations live here and in Recall, not on the layout).
async function drawHistory() {
  const rounds = await lastGames();
  const net = [...sessionRounds.values()].reduce((a, b) => a + b, 0);
  $("history-session").textContent = t("history.session", { rounds: sessionRounds.size, net: signed$(net), time: minutes(Date.now() - started) });
  $("history-balance").textContent = state ? t("history.balance", { balance: money(state.balance) }) : "";
  const head = el("tr", {}, ["history.round", "history.when", "history.result", "history.net"].map((k) => el("th", {}, t(k))));
  // the rounds before this session (an earlier sign-in) under a heading of their own, so this
  // session's count and net never read as if they covered them
  const earlier = (g) => !sessionRounds.has(g.round_id) && g.closed_us && g.closed_us / 1000 < started + offset;
  const rows = rounds.flatMap((g, i) => earlier(g) && !(i > 0 && earlier(rounds[i - 1]))
    ? [el("tr", { class: "earlier", "data-testid": "history-earlier" }, el("th", { colspan: 4 }, t("history.earlier"))), historyRow(g)]
    : [historyRow(g)]);
  $("history-table").replaceChildren(head, ...(rows.length ? rows : [el("tr", {}, el("td", { colspan: 4 }, t("recall.none")))]));
}
function historyRow(g) {
  const done = g.steps.find((s) => s.kind === "complete");
  const lines = done ? done.settlements.filter((x) => x.player === me).map((x) => el("li", {},
    t("history.settlement", { wager: x.spot ? `${kindName(x.kind)} · ${t("chips.spot", { n: x.spot })}` : kindName(x.kind),
      amount: money(x.amount), result: resultWord(x.result), net: signed$(x.returned - x.amount) }),
    " ", el("span", { class: "clause" }, x.clause))) : [];
  const roundNet = g.credits_after !== null && g.credits_after !== undefined ? g.credits_after - g.credits_before : null;
  return el("tr", { "data-round": g.round_id },
    el("td", {}, g.round_id), el("td", {}, g.closed_us ? clockTime(g.closed_us) : "—"),
    el("td", {}, lines.length ? el("ul", { class: "settled" }, lines) : t(`recall.status.${key(g.status)}`, {}, g.status)),
    el("td", { class: "num" }, roundNet === null ? "—" : signed$(roundNet)));
}
$("history-button").addEventListener("click", async () => { await drawHistory(); $("history").showModal(); });

// Responsible gaming: the player's own limits, today's play and time played, where to get help.
async function drawLimits() {
  const r = me ? await fetch(`/api/floor/players/${encodeURIComponent(me)}/limits`, { credentials: "same-origin" }) : null;
  const limits = r && r.ok ? await r.json() : null;
  const today = limits ? limits.today : null;
  const first = today && today.first_wager_us;
  $("rg-time").textContent = [
    t("rg.session_time", { time: minutes(Date.now() - started) }),
    first ? t("rg.first_wager", { at: clockTime(first), time: minutes(Date.now() - first / 1000) }) : t("rg.no_wager_today"),
  ].join(" ");
  const row = (label, limit, used) => el("tr", {}, el("th", {}, t(label)), el("td", {}, limit), el("td", { class: "muted" }, used));
  const none = t("rg.none");
  const rows = limits ? [
    el("tr", {}, el("th", {}, ""), el("th", {}, t("rg.limit")), el("th", {}, t("rg.today"))),
    row("rg.wager_limit", limits.wager_limit ? money(limits.wager_limit) : none, money(today.wagered)),
    row("rg.loss_limit", limits.loss_limit ? money(limits.loss_limit) : none, money(Math.max(0, today.loss))),
    row("rg.time_limit", limits.time_limit_s ? minutes(limits.time_limit_s * 1000) : none, first ? minutes(Date.now() - first / 1000) : "—"),
    limits.excluded_until_us ? row("rg.excluded", new Date(limits.excluded_until_us / 1000).toLocaleString(current), "") : null,
  ] : [el("tr", {}, el("td", {}, t("rg.unavailable")))];
  $("rg-limits").replaceChildren(...rows.filter(Boolean));
}
$("rg-button").addEventListener("click", async () => { await drawLimits(); $("rg").showModal(); });

// -- cash out and tips ------------------------------------------------------------------------

// (the cash-out, confirmed with its amount, and its ticket: terminal_money.js)

// Tips to the dealer (PA 605a.5(d)): the button shows only while the floor enables tips; the
// dollars typed become whole cents without a float ("5", "5.5", "5.25").
let tipMaximum = 0;
async function tipSettings() {
  const r = await fetch("/api/floor/tip", { credentials: "same-origin" });
  const s = r.ok ? await r.json() : { enabled: false, maximum: 0 };
  $("tip-button").hidden = !s.enabled;
  tipMaximum = s.maximum;
  return s;
}
tipSettings(); setInterval(tipSettings, 30000);
$("tip-button").addEventListener("click", async () => {
  const s = await tipSettings();
  $("tip-text").textContent = s.enabled ? t("tip.maximum", { amount: money(s.maximum) }) : t("tip.disabled");
  $("tip").showModal();
});
$("tip-give").addEventListener("click", async () => {
  const amount = cents($("tip-amount").value);
  if (amount === null) { $("tip-text").textContent = t("tip.invalid"); return; }
  const r = await fetch("/api/floor/tip", { method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ table: info ? info.id : tableId, amount }) });
  const body = await r.json();
  $("tip-text").textContent = r.ok ? t("tip.given", { amount: money(body.amount), balance: money(body.balance) }) : tipRefusal(body && body.detail);
});
// A refused tip in the page's language: the tip's own words for its codes, a wager's words for
// the protections it shares with them, the rule's clause once (the server's sentence in English).
const TIP_WORDS = {
  tips_disabled: "tip.disabled", tip_maximum: "tip.above_maximum", balance: "tip.balance", invalid: "tip.refused",
  limit: "tip.limit", excluded: "tip.excluded", tilt: "error.tilt",
};
function tipRefusal(detail) {
  const d = detail && typeof detail === "object" && !Array.isArray(detail) ? detail : { code: "", message: "", rule: "" };
  const words = t(TIP_WORDS[d.code] || "tip.refused", { amount: money(tipMaximum) });
  const rule = ruleWords(d.rule || "");
  return rule && !words.includes(rule) ? `${words} [${rule}]` : words;
}
