/**
 * The engine's own request and response: the small surface every server
 * adapter (node:http, Bun, a fetch handler) translates to and from, so the
 * engine knows no server framework.
 */

export interface EngineRequest {
  readonly method: string
  /** Path and query string as received, e.g. `/v1/merchants?limit=5`. */
  readonly url: string
  /** Header lookup by lower-case name; repeated headers joined with ", ". */
  readonly header: (name: string) => string | undefined
  /**
   * Reads the whole body, or answers "too_large" as soon as it passes `limit`
   * bytes without buffering the rest. Called at most once.
   */
  readonly readBody: (limit: number) => Promise<Uint8Array | "too_large">
  /** Aborted when the client goes away: the request's work is interrupted (a long-poll lets go). */
  readonly signal?: AbortSignal
  /**
   * Calls `listener` once if the client goes away before the answer: what a
   * long-poll held without a fiber lets go with. Cheaper than `signal` (no
   * AbortController per request); an adapter without it is read through
   * `signal` (whenAbandoned).
   */
  readonly onAbandon?: (listener: () => void) => void
}

/** Calls `listener` once if the client goes away before the answer, by `onAbandon` or `signal`. */
export const whenAbandoned = (request: EngineRequest, listener: () => void): void => {
  if (request.onAbandon !== undefined) {
    request.onAbandon(listener)
    return
  }
  const signal = request.signal
  if (signal?.aborted) listener()
  else signal?.addEventListener("abort", listener, { once: true })
}

export interface EngineResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  /** Text (JSON, HTML), or bytes (a logo). */
  readonly body: string | Uint8Array
}

/** What a route answers before the engine adds the common headers. */
export interface Reply {
  readonly status: number
  /** Text, sent as UTF-8 (its content type gets `charset=utf-8`). */
  readonly body: string
  /** Bytes sent instead of `body`, as they are (a logo). */
  readonly bytes?: Uint8Array
  /** Defaults to JSON. */
  readonly contentType?: string
  readonly headers?: Readonly<Record<string, string>>
}

export const json = (status: number, value: unknown): Reply => ({
  status,
  body: JSON.stringify(value)
})
