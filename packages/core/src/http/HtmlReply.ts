/**
 * An HTML answer with the headers every HTML page of the engine carries: its
 * Content-Security-Policy as a header (a `<meta>` policy cannot say
 * `frame-ancestors`, and is read only once the page is parsed), `nosniff` so
 * nothing served as another type is ever run as a page, and `no-referrer` so a
 * page's URL (the data-collection page's holds its token) never leaves in a
 * `Referer` header.
 */
import type { Reply } from "./Exchange.js"

/** The headers of every HTML page, given its policy. */
export const htmlSecurityHeaders = (contentSecurityPolicy: string) =>
  ({
    "content-security-policy": contentSecurityPolicy,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer"
  }) as const

/** An HTML page with {@link htmlSecurityHeaders}, plus any other headers given. */
export const htmlReply = (
  status: number,
  body: string,
  contentSecurityPolicy: string,
  headers: Readonly<Record<string, string>> = {}
): Reply => ({
  status,
  body,
  contentType: "text/html",
  headers: { ...htmlSecurityHeaders(contentSecurityPolicy), ...headers }
})
