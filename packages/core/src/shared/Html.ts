/**
 * HTML escaping for the pages the engine and its companions render (the
 * data-collection page, the API reference page): one implementation, so every
 * page escapes the same characters.
 */

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;"
}

/** Escapes text for HTML; quotes too, so the result is safe in attribute values as well as text. */
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c)
