/**
 * The HTML of the API reference page: no inline script at all. Scalar reads
 * its configuration from the `data-configuration` attribute of the
 * `#api-reference` element (a JSON data block the browser never runs), then
 * the bundle, loaded from this server, fetches the OpenAPI document from this
 * server too. Everything Scalar could reach beyond that is turned off here.
 */
import { escapeHtml } from "@pay/core"

/** Scalar's settings for a page that reaches nothing but its own server. */
export const scalarConfiguration = (documentUrl: string) => ({
  url: documentUrl,
  // Inter and JetBrains Mono come from Scalar's font host: the browser's own fonts instead.
  withDefaultFonts: false,
  telemetry: false,
  // The AI agent and MCP panels talk to Scalar's services (the agent turns itself on at localhost).
  agent: { disabled: true },
  mcp: { disabled: true },
  // The developer tools bar (shown at localhost) links to Scalar's hosted products.
  showDeveloperTools: "never",
  // The header button that opens the full API client; "Test Request" stays, same origin only.
  hideClientButton: true,
  // Every tag open: the whole API on one page, found with the browser's own search too.
  defaultOpenAllTags: true
})

export interface ApiReferencePageOptions {
  /** The page's title. */
  readonly title: string
  /** Where the OpenAPI document is (`/openapi.json`, behind a base path if any). */
  readonly documentUrl: string
  /** Where Scalar's bundle is (`/docs/scalar.js?v=…`). */
  readonly scriptUrl: string
}

export const renderApiReferencePage = (options: ApiReferencePageOptions): string => {
  const configuration = JSON.stringify(scalarConfiguration(options.documentUrl))
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(options.title)}</title>`,
    "</head>",
    "<body>",
    `<noscript><p>The API reference needs JavaScript. The OpenAPI document itself is at <a href="${escapeHtml(options.documentUrl)}">${escapeHtml(options.documentUrl)}</a>.</p></noscript>`,
    `<script id="api-reference" type="application/json" data-configuration="${escapeHtml(configuration)}"></script>`,
    `<script src="${escapeHtml(options.scriptUrl)}"></script>`,
    "</body>",
    "</html>",
    ""
  ].join("\n")
}
