// Helpers of the staff pages (the dealer console and the supervisor page) and the landing page:
// the page's language, the catalog's labels (meters, wager kinds, tilt and clear codes, games,
// phases, roles, statuses), what the signed-in role may do, times, and actions whose refusal is
// shown beside the control that sent them. Every word a page writes comes from the catalog
// (i18n.js); what the server wrote (its refusals, audit messages) is shown as the server wrote
// it, but for the dealer console's banner and transcript (console_words.js).
import { el } from "/static/common.js";
import { chosen, current, setLanguage, t } from "/static/i18n.js";

// The page's language, as on the terminal: ?lang=, else the one last chosen in this browser,
// else English; `select` (the header's language selector) changes it, remembers it and calls
// `redraw` to write the page's words again.
export async function startLanguage(query, select, redraw = () => {}) {
  await setLanguage(chosen(query));
  select.value = current;
  select.addEventListener("change", async () => {
    await setLanguage(select.value, true);
    if (new URLSearchParams(location.search).has("lang")) {  // a reload keeps the choice
      const url = new URL(location.href);
      url.searchParams.set("lang", current);
      history.replaceState(history.state, "", url.pathname + url.search + url.hash);
    }
    redraw();
  });
}

const spaced = (name) => String(name ?? "").replaceAll("_", " ");
// A word of the engine or the server as a catalog key part ("ez bust" → "ez_bust").
export const keyOf = (text) => String(text ?? "").toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_|_$/g, "");
export const meterLabel = (name) => t(`meter.${name}`, {}, spaced(name));
export const kindLabel = (kind) => t(`meter.kind.${kind}`, {}, spaced(kind));
export const tiltLabel = (code) => t(`staff.tilt.${code}`, {}, spaced(code));
export const clearLabel = (code) => t(`staff.clear.${code}`, {}, spaced(code));
export const gameLabel = (game) => t(`staff.game.${game}`, {}, game);
export const gameShortLabel = (game) => t(`staff.game_short.${game}`, {}, game);
export const roleLabel = (role) => t(`staff.role.${role}`, {}, role);
export const phaseLabel = (phase) => (phase ? t(`staff.phase.${keyOf(phase)}`, {}, phase) : "");
export const tableStatusLabel = (status) => t(`staff.table_status.${status}`, {}, status);
export const terminalStatusLabel = (status) => t(`staff.terminal_status.${status}`, {}, status);
export const resultLabel = (result) => t(`result.${keyOf(result)}`, {}, result);
export const roundStatusLabel = (status) => t(`recall.status.${status}`, {}, status);
// "dana (dealer)": who is signed in on a staff page.
export const whoText = (me) => t("staff.who", { subject: me.subject, role: roleLabel(me.role) });

export const TILT_CODES = ["door_open", "bill_validator", "printer", "connection_lost", "reader_fault",
  "card_not_requested", "card_inventory", "storage_error", "other", "host_disabled", "host_link_lost",
  "handpay_pending"];
export const CLEAR_CODES = ["fault_repaired", "checked_no_fault", "replaced", "other"];

// What the signed-in person may do: /api/me's `may` (the server's permission table).
export function permits(me) {
  const may = new Set(me.may || []);
  return (operation) => may.has(operation);
}

export function when(us) {
  return us ? new Date(us / 1000).toISOString().replace("T", " ").slice(0, 19) : "";
}

// A count in words: the catalog's `one` text for 1, its `other` text else, {n} the count.
export function plural(count, one, other) {
  return t(count === 1 ? one : other, { n: count.toLocaleString("en-US") });
}

// An error line that belongs to one control (role=alert: read out when it changes).
export function errorLine(testid) {
  return el("p", { class: "error inline-error", role: "alert", "data-testid": testid });
}

// A refusal in words: a request the server could not read (422) lists its fields.
function readable(message) {
  if (!String(message).startsWith("[{")) return message;
  try {
    return JSON.parse(message).map((e) => `${(e.loc || []).slice(1).join(".") || t("staff.request")}: ${e.msg}`).join("; ");
  } catch { return message; }
}

// Run `fn` for `button`: the button is disabled meanwhile, and a refusal (the server's
// sentence) is shown in `line`, beside the button, until the next try. Resolves with fn's
// answer, or undefined when refused. A session that has ended brings the sign-in form back.
export async function act(button, line, fn) {
  line.textContent = "";
  if (button) button.disabled = true;
  try {
    return await fn();
  } catch (error) {
    if (error.status === 401) location.reload();
    line.textContent = readable(error.message);
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}

// A <select> of codes with their labels.
// A lock's or a clear's code is chosen by the person: the list starts on no code ("— choose —"),
// and a form sent without one is refused by the page (`chosenCode`).
export function codeSelect(codes, label, attrs = {}) {
  return el("select", attrs, [el("option", { value: "" }, t("supervisor.choose_code")), ...codes.map((code) => el("option", { value: code }, label(code)))]);
}
export function chosenCode(values) {
  if (!values.code) throw new Error(t("supervisor.code_needed"));
  return values.code;
}
