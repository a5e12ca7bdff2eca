// The dealer console's server-written text in the page's language (PA 605a): the banner (the
// next instruction, views.py next_instruction), the automated table's note (views.py
// automation) and the round's transcript (each game's transcript(), games/*.py). The server
// writes them in English; each is matched against the sentences and phrases it writes and
// written again from the catalog, the cards, amounts, names and clauses kept as they are. A
// sentence the tables do not know stays as the server wrote it.
import { t } from "/static/i18n.js";
import { tableStatusLabel, tiltLabel } from "/static/staff.js";

// The next instruction: [pattern, key, names of the groups].
const NEXT = [
  [/^Open the next round\.$/, "console.next.open"],
  [/^Next round soon\.$/, "console.next.soon"],
  [/^Wagering is open; close wagering to deal\.$/, "console.next.close_to_deal"],
  [/^Wagering is open; waiting for the first wager\.$/, "console.next.auto_waiting"],
  [/^Wagering is open; the server closes it ([\d.]+) s after the first wager\.$/, "console.next.auto_closes", ["s"]],
  [/^Deal the hole card face down and insert it into the card reader\.$/, "console.next.hole"],
  [/^Draw community card (\d+) face up into the community box\.$/, "console.next.community", ["n"]],
  [/^Turn the hole card; draw a card for the dealer\.$/, "console.next.dealer_draw"],
  [/^Turn the hole card\.$/, "console.next.turn_hole"],
  [/^Deal a card to position (\d+)\.$/, "console.next.position", ["n"]],
  [/^Deal a card to seat (\d+)\.$/, "console.next.seat", ["n"]],
  [/^Deal a card to dealer up card\.$/, "console.next.up_card"],
  [/^Deal a card to (.+)\.$/, "console.next.deal_to", ["target"]],
  [/^Wait: (.+)\.$/, "console.next.wait", ["step"]],
  [/^The card reader device has not been inspected this gaming day; the floorperson must inspect it before the first round \((.+)\)\.$/, "console.next.reader_not_inspected", ["clause"]],
  [/^The decks in use are 24 hours old or more \(or none are registered\); register new decks before dealing \((.+)\)\.$/, "console.next.decks_old", ["clause"]],
  [/^The decks have not been inspected by the dealer and verified by the floorperson \((.+)\)\.$/, "console.next.decks_not_inspected", ["clause"]],
];

// The parts of a sentence that are the engine's phrases (the others are numbers and clauses).
const PHRASED = new Set(["step", "target"]);

function matched(table, text) {
  for (const [pattern, key, names = []] of table) {
    const m = pattern.exec(text || "");
    if (m) return t(key, Object.fromEntries(names.map((name, n) => [name, PHRASED.has(name) ? phrases(m[n + 1]) : m[n + 1]])));
  }
  return null;
}

export function nextWords(text) {
  const table = /^Table (\w+)\.$/.exec(text || "");
  if (table) return t("console.next.table_status", { status: tableStatusLabel(table[1]) });
  const stop = /^STOP — irregularity: (.+)\. Call the floorperson\.$/.exec(text || "");
  if (stop) return t("console.next.stop", { reason: haltWords(stop[1]) });
  return matched(NEXT, text) ?? text;
}

// Why a table is halted (server/table/dealer.py): its tilts, an irregular round, a void that
// failed; a reason the table does not know stays as written.
const HALT = [
  [/^irregularity in round (\S+); a supervisor must void the round$/, "console.halt.irregular", ["round"]],
  [/^irregularity before the restart; a supervisor must void the round$/, "console.halt.restart"],
  [/^round (\S+) was not voided \((.*)\); a supervisor must void it again$/, "console.halt.not_voided", ["round", "why"]],
];
export function haltWords(reason) {
  const tilts = String(reason ?? "").split("; ").map((part) => /^tilt (\w+): (.*)$/.exec(part));
  if (tilts.every(Boolean)) return tilts.map((m) => tiltWords(m[1], m[2])).join("; ");
  return matched(HALT, reason) ?? reason;
}

// A tilt in words: its label, and the reason given unless it is only the code again (a tilt
// raised with no reason carries its code as its message).
export const tiltWords = (code, message) =>
  !message || message === code ? tiltLabel(code) : t("console.halt.tilt", { tilt: tiltLabel(code), message });

// What a halted table waits for (views.py waiting_for): a supervisor to clear each tilt and
// to void the round; else the halt's reason.
export function waitingWords(text) {
  const m = /^a supervisor to (.+)$/.exec(text || "");
  if (!m) return haltWords(text);
  const needs = m[1].split(" and to ").map((need) => {
    const tilt = /^clear the tilt (\w+)$/.exec(need);
    if (tilt) return t("console.wait.clear_tilt", { tilt: tiltLabel(tilt[1]) });
    const failed = /^void round (\S+) \((.*)\)$/.exec(need);
    if (failed) return t("console.wait.void_failed", { round: failed[1], why: failed[2] });
    const round = /^void round (\S+)$/.exec(need);
    return round ? t("console.wait.void", { round: round[1] }) : need;
  });
  return t("console.wait.supervisor", { needs: needs.join(t("console.wait.and")) });
}

// An automated table's note: what the server does by itself.
const AUTOMATION = /^The server opens a round ([\d.]+) s after the last one ends, closes wagering ([\d.]+) s after the first wager and runs the ([\d.]+)-second countdown; (cards come from the virtual shoe|the dealer deals the cards the table asks for)\.$/;
export function automationWords(text) {
  const m = AUTOMATION.exec(text || "");
  if (!m) return text;
  return t("console.automation", {
    between: m[1], wagering: m[2], countdown: m[3],
    cards: t(m[4].startsWith("cards") ? "console.automation_virtual" : "console.automation_dealer"),
  });
}

// The transcript's phrases, the longest first: [pattern, key, names of the groups]. Each
// match is written from the catalog once (a written phrase is not matched again).
const PHRASES = [
  [/Dealer: up card (\S+)/g, "transcript.dealer_up", ["card"]],
  [/Dealer: first card (\S+), kept for all three rounds/g, "transcript.dealer_first", ["card"]],
  [/Shared start: every player ([^;]*); dealer's first card (\S+)/g, "transcript.shared_start", ["cards", "card"]],
  [/Community cards: none/g, "transcript.community_none"],
  [/Community cards:/g, "transcript.community"],
  [/Round (\d+) \(square (\d+)\):/g, "transcript.dealer_round", ["n", "square"]],
  [/Position (\d+):/g, "transcript.position", ["n"]],
  [/Seat (\d+) \(([^)]*)\)/g, "transcript.seat", ["n", "player"]],
  [/\(position (\d+)\)/g, "transcript.at_position", ["n"]],
  [/side wagers:/g, "transcript.side_wagers"],
  [/split from hand (\d+):/g, "transcript.split_from", ["n"]],
  [/\bhand (\d+)\b/g, "transcript.hand", ["n"]],
  [/\bcommunity card (\d+)\b/g, "transcript.community_card", ["n"]],
  [/\bdealer hole card\b/g, "transcript.dealer_hole_card"],
  [/\bdealer up card\b/g, "transcript.dealer_up_card"],
  [/\bhole card face down\b/g, "transcript.hole_down"],
  [/\bhole card\b/g, "transcript.hole_card"],
  [/\bcard reader:/g, "transcript.card_reader"],
  [/\(countdown default\)/g, "transcript.countdown_default"],
  [/\btakes even money, wins\b/g, "transcript.even_money_wins"],
  [/\btakes even money\b/g, "transcript.even_money"],
  [/\bplaces EZ Bust\b/g, "transcript.places_ez_bust"],
  [/\bBlackjack Wager\b/g, "transcript.blackjack_wager"],
  [/\bsoft (\d+)\b/g, "transcript.soft", ["n"]],
  [/\b(\d+) bust\b/g, "transcript.bust", ["n"]],
  [/\bspot (\d+)\b/g, "transcript.spot", ["n"]],
  [/\bseat (\d+)\b/g, "transcript.seat_word", ["n"]],
  [/\bdecision from\b/g, "transcript.decision_from"],
  [/\bno Blackjack\b/g, "transcript.no_blackjack"],
  [/\bevery wager already settled\b/g, "transcript.all_settled"],
  [/\bno wager\b/g, "transcript.no_wager"],
  [/\bdecisions in decision round (\d+) from\b/g, "transcript.decisions_from", ["n"]],
  [/\bdecisions in decision round (\d+)\b/g, "transcript.decisions", ["n"]],
  [/\(or countdown-expired\)|\(or the countdown clock\)/g, "transcript.or_countdown"],
  [/\binsurance decisions from seats\b/g, "transcript.insurance_decisions_seats"],
  [/\bEZ Bust decisions from seats\b/g, "transcript.ez_bust_decisions_seats"],
  [/\binsurance decisions from\b/g, "transcript.insurance_decisions_from"],
  [/\binsurance decisions\b/g, "transcript.insurance_decisions"],
  [/\bdecisions from\b/g, "transcript.decisions_from_players"],
  [/\bplace wagers, then close wagering\b/g, "transcript.place_wagers"],
  [/\bdeal a card to\b/g, "transcript.deal_to"],
  [/\bround complete\b/g, "transcript.round_complete"],
  [/\bposition (\d+)\b/g, "transcript.position_word", ["n"]],
  [/\breturned\b/g, "transcript.returned"],
  [/\bturns\b/g, "transcript.turns"],
  [/\bdraws\b/g, "transcript.draws"],
  [/\bhits\b/g, "transcript.hits"],
  [/\bstands\b/g, "transcript.stands"],
  [/\bdoubles\b/g, "transcript.doubles"],
  [/\bsplits\b/g, "transcript.splits"],
  [/\bsurrenders\b/g, "transcript.surrenders"],
  [/\binsures\b/g, "transcript.insures"],
  [/\btakes\b/g, "transcript.takes"],
  [/\bwins\b/g, "transcript.wins"],
  [/\bloses\b/g, "transcript.loses"],
  [/\bpushes\b/g, "transcript.pushes"],
  [/\bforfeits\b/g, "transcript.forfeits"],
  [/\bskipped\b/g, "transcript.skipped"],
  [/\binsurance\b/g, "transcript.insurance"],
  [/\bdealer\b/g, "transcript.dealer"],
  [/\bnone\b/g, "transcript.none"],
  [/\bfor\b/g, "transcript.for"],
  [/\bto\b/g, "transcript.to"],
];

// A text of the engine's phrases in the page's language (written phrases are held aside as
// numbered marks until every pattern has run, so none is translated twice).
export function phrases(text) {
  if (!text) return text ?? "";
  const held = [];
  let out = String(text);
  for (const [pattern, key, names = []] of PHRASES) {
    out = out.replace(pattern, (...m) => {
      held.push(t(key, Object.fromEntries(names.map((name, n) => [name, m[n + 1]]))));
      return `\u0000${held.length - 1}\u0000`;
    });
  }
  return out.replace(/\u0000(\d+)\u0000/g, (_, n) => held[Number(n)]);
}

// The round's transcript, one line per entry.
export const transcriptWords = (lines) => (lines || []).map(phrases).join("\n");
