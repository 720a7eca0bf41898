/**
 * The routes of the API reference: `GET /docs`, the page, and
 * `GET /docs/scalar.js`, Scalar's bundle from its npm package. Both are public
 * routes a server adds beside the engine's own (`makePaymentEngine`'s `routes`);
 * the engine itself serves only the document, `/openapi.json`.
 */
import { htmlReply, publicRoute, type Reply, type Route } from "@pay/core"
import { Effect } from "effect"
import { renderApiReferencePage } from "./ApiReferencePage.js"
import { type ScalarBundle, scalarBundle } from "./ScalarBundle.js"

/**
 * What the page may load, and nothing more (each directive checked in Chromium,
 * api-reference.browser.test.ts):
 * - `default-src 'none'`: whatever is not named below (fonts, frames, workers,
 *   plugins, media) is refused; the fonts are the browser's own;
 * - `script-src 'self'`: the bundle from this server; the page has no inline script;
 * - `style-src 'self' 'unsafe-inline'`: Scalar injects its stylesheet and sets
 *   style attributes at run time, which neither a nonce nor hashes can cover;
 * - `img-src 'self' data:`: images of this server, and `data:` URLs (icons in styles);
 * - `connect-src 'self'`: the OpenAPI document, and "Test Request" calls, to this server only;
 * - `base-uri 'none'`, `form-action 'none'`: no `<base>`, no form posts;
 * - `frame-ancestors 'none'`: no site may frame the page.
 */
export const API_REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

export interface ApiReferenceOptions {
  /**
   * The path the engine is mounted under, if any (`/pay`): the page then loads
   * `/pay/docs/scalar.js` and `/pay/openapi.json`. Default: none.
   */
  readonly basePath?: string
  /** The page's title. Default: "Pay engine API reference". */
  readonly title?: string
  /** Scalar's bundle; default: the installed `@scalar/api-reference`'s. */
  readonly bundle?: ScalarBundle
}

/** The bundle changes only with the package's version, which is in its URL. */
const ONE_YEAR = "public, max-age=31536000, immutable"

const trimBase = (basePath: string): string => {
  const trimmed = basePath.replace(/\/+$/, "")
  if (trimmed !== "" && !trimmed.startsWith("/")) {
    throw new Error(`basePath must start with "/" (got ${JSON.stringify(basePath)})`)
  }
  return trimmed
}

/** `GET /docs` and `GET /docs/scalar.js`, to pass to `createPaymentEngine({ routes })`. */
export const apiReferenceRoutes = (
  options: ApiReferenceOptions = {}
): ReadonlyArray<Route<never>> => {
  const base = trimBase(options.basePath ?? "")
  const bundle = options.bundle ?? scalarBundle()
  // With the headers of every HTML page of the engine: this policy, nosniff, no referrer.
  const page: Reply = htmlReply(
    200,
    renderApiReferencePage({
      title: options.title ?? "Pay engine API reference",
      documentUrl: `${base}/openapi.json`,
      scriptUrl: `${base}/docs/scalar.js?v=${encodeURIComponent(bundle.version)}`
    }),
    API_REFERENCE_CSP
  )
  const script = (): Reply => ({
    status: 200,
    contentType: "text/javascript",
    body: bundle.source(),
    headers: { "cache-control": ONE_YEAR, "x-content-type-options": "nosniff" }
  })
  return [
    publicRoute("GET", "/docs", () => Effect.succeed(page)),
    publicRoute("GET", "/docs/scalar.js", () => Effect.sync(script))
  ]
}
