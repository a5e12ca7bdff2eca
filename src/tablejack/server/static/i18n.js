// The terminal's language catalog (PA 605a): /static/i18n/<lang>.json, English the fallback.
// The language comes from ?lang=, else the one last chosen on this terminal (localStorage),
// else English. Fixed text in the page carries data-i18n (text), data-i18n-title,
// data-i18n-aria-label or data-i18n-placeholder with a catalog key.
export const LANGUAGES = ["en", "es"];
const STORED = "tablejack.lang";
let catalog = {}, fallback = {};
export let current = "en";

async function fetchCatalog(lang) {
  const response = await fetch(`/static/i18n/${lang}.json`);
  return response.ok ? response.json() : {};
}

export function chosen(query) {
  let stored = null;
  try { stored = localStorage.getItem(STORED); } catch { stored = null; }
  for (const lang of [query.lang, stored]) if (LANGUAGES.includes(lang)) return lang;
  return "en";
}

export async function setLanguage(lang, remember = false) {
  if (!LANGUAGES.includes(lang)) lang = "en";
  if (!Object.keys(fallback).length) fallback = await fetchCatalog("en");
  catalog = lang === "en" ? fallback : await fetchCatalog(lang);
  current = lang;
  if (remember) { try { localStorage.setItem(STORED, lang); } catch { /* private mode */ } }
  document.documentElement.lang = lang;
  translatePage();
}

export function has(key) { return key in catalog || key in fallback; }

// The text of `key` with {name} placeholders filled; `otherwise` (or the key) when missing.
export function t(key, vars = {}, otherwise = undefined) {
  const text = catalog[key] ?? fallback[key] ?? otherwise ?? key;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in vars ? String(vars[name]) : whole));
}

export function translatePage(root = document) {
  for (const node of root.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  for (const [attr, data] of [["title", "i18nTitle"], ["aria-label", "i18nAriaLabel"], ["placeholder", "i18nPlaceholder"]]) {
    const selector = `[data-i18n-${attr}]`;
    for (const node of root.querySelectorAll(selector)) node.setAttribute(attr, t(node.dataset[data]));
  }
  const title = document.querySelector("title[data-i18n]");
  if (title) document.title = title.textContent;
}
