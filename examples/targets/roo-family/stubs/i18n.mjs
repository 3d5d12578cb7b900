// src/i18n: t(key) gives the key back (the agents' error texts are i18n keys; the harness reads none).
export function t(key, options) {
  return options && typeof options === "object" && Object.keys(options).length ? `${key} ${JSON.stringify(options)}` : key;
}
export function changeLanguage() {}
export function initializeI18n() {}
export function getCurrentLanguage() {
  return "en";
}
export default { t, changeLanguage, initializeI18n, getCurrentLanguage };
