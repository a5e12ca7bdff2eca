// Helpers of the staff pages (the dealer console and the supervisor page): the labels of the
// catalog (meters, wager kinds, tilt and clear codes), what the signed-in role may do, times,
// and actions whose refusal is shown beside the control that sent them.
import { el } from "/static/common.js";
import { setLanguage, t } from "/static/i18n.js";

// The catalog the labels come from: English unless the page's ?lang= names another language
// (a staff page does not remember one; the terminal's choice is the terminal's).
export async function loadLabels(query = {}) {
  await setLanguage(query.lang || "en");
}

const words = (prefix, name) => t(`${prefix}.${name}`, {}, String(name).replaceAll("_", " "));
export const meterLabel = (name) => words("meter", name);
export const kindLabel = (kind) => words("meter.kind", kind);
export const tiltLabel = (code) => words("staff.tilt", code);
export const clearLabel = (code) => words("staff.clear", code);

export const TILT_CODES = ["door_open", "bill_validator", "printer", "connection_lost", "reader_fault",
  "card_not_requested", "card_inventory", "storage_error", "other"];
export const CLEAR_CODES = ["fault_repaired", "checked_no_fault", "replaced", "other"];

// What the signed-in person may do: /api/me's `may` (the server's permission table).
export function permits(me) {
  const may = new Set(me.may || []);
  return (operation) => may.has(operation);
}

export function when(us) {
  return us ? new Date(us / 1000).toISOString().replace("T", " ").slice(0, 19) : "";
}

export function plural(count, one, many = `${one}s`) {
  return `${count.toLocaleString("en-US")} ${count === 1 ? one : many}`;
}

// An error line that belongs to one control (role=alert: read out when it changes).
export function errorLine(testid) {
  return el("p", { class: "error inline-error", role: "alert", "data-testid": testid });
}

// A refusal in words: a request the server could not read (422) lists its fields.
function readable(message) {
  if (!String(message).startsWith("[{")) return message;
  try {
    return JSON.parse(message).map((e) => `${(e.loc || []).slice(1).join(".") || "request"}: ${e.msg}`).join("; ");
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
export function codeSelect(codes, label, attrs = {}) {
  return el("select", attrs, codes.map((code) => el("option", { value: code }, label(code))));
}
