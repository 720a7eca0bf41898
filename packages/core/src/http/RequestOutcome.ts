/**
 * What the engine's handler reports of each request once it is answered: the
 * one record the request log line and the request metrics are both made from,
 * so the two never disagree. Observers run synchronously on the request path:
 * they must be cheap and must not throw.
 */
import type { Cause } from "effect"

/** Who made an authenticated request, by id only: never a key, never a buyer's data. */
export interface RequestCaller {
  readonly partnerId?: string | undefined
  readonly walletAppId?: string | undefined
}

export interface RequestOutcome {
  /** The request's id: its `X-Request-Id` when it sent a usable one, else generated. */
  readonly requestId: string
  readonly method: string
  /**
   * The route's template (`/v1/payments/:paymentId`), never the path as sent
   * (ids in it would make every path its own series); undefined when no route
   * matched (404, 405).
   */
  readonly route: string | undefined
  /** As answered; 499 when the client went away first (nginx's "client closed request"). */
  readonly status: number
  /** From the request's arrival to its answer, in milliseconds (fractions kept). */
  readonly durationMs: number
  readonly caller: RequestCaller | undefined
  /** Why a request was answered 500 (a defect, an interruption): for the log line, never the client. */
  readonly cause?: Cause.Cause<unknown> | undefined
}

export type RequestObserver = (outcome: RequestOutcome) => void
