/**
 * What one attempt's response means, as a plain function: delivered on any
 * 2xx; otherwise retried on the schedule (with jitter, or after the
 * receiver's `Retry-After`, at most an hour), failed for good once the
 * schedule is used up; a 410 disables the endpoint at once, and a run of
 * failures as long as `disableAfterMs` disables it too.
 */

import { type AttemptOutcome, WebhookAttempt } from "./WebhookDelivery.js"
import type { WebhookResponse } from "./WebhookSender.js"
import { MAX_RETRY_AFTER_MS } from "./WebhookWorkConfig.js"

export interface OutcomeSettings {
  readonly retryScheduleMs: ReadonlyArray<number>
  readonly disableAfterMs: number
}

/**
 * `Retry-After` in milliseconds from `now` (delay-seconds or an HTTP date),
 * or undefined when absent or unreadable.
 */
export const retryAfterMs = (value: string | null, now: Date): number | undefined => {
  if (value === null) return undefined
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text) * 1000
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime())
}

const statusText = (status: number) => `HTTP ${status}`

const days = (ms: number) => {
  const d = ms / 86_400_000
  return Number.isInteger(d) ? `${d} days` : `${Math.round(ms / 3_600_000)} hours`
}

/**
 * The outcome of the attempt numbered `attemptsBefore + 1`, which started at
 * `at`. `jitter` is a number in [0, 1) that varies the scheduled wait by ±20%.
 */
export const attemptOutcome = (
  response: WebhookResponse,
  attemptsBefore: number,
  at: Date,
  settings: OutcomeSettings,
  jitter: number
): AttemptOutcome => {
  const status = response.status
  const succeeded = status !== null && status >= 200 && status <= 299
  const attempt = new WebhookAttempt({
    attemptedAt: at,
    durationMs: response.durationMs,
    responseStatus: status,
    responseBody: status === null ? null : response.body,
    error: succeeded
      ? null
      : status === null
        ? (response.error ?? "no response")
        : `${statusText(status)}: only a 2xx answer counts as delivered${status >= 300 && status <= 399 ? " (redirects are not followed)" : ""}`
  })
  if (succeeded) {
    return { attempt, state: "delivered", nextAttemptAt: at, endpoint: { _tag: "Succeeded" } }
  }
  if (status === 410) {
    return {
      attempt,
      state: "failed",
      nextAttemptAt: at,
      endpoint: {
        _tag: "Gone",
        reason: `the endpoint answered 410 Gone at ${at.toISOString()}: re-enable it to receive events again`
      }
    }
  }
  const endpoint = {
    _tag: "Failed",
    disableIfFailingSince: new Date(at.getTime() - settings.disableAfterMs),
    reason: `every delivery failed for ${days(settings.disableAfterMs)} (last: ${attempt.error}): re-enable it to receive events again`
  } as const
  const scheduled = settings.retryScheduleMs[attemptsBefore]
  if (scheduled === undefined) {
    return { attempt, state: "failed", nextAttemptAt: at, endpoint }
  }
  const asked = retryAfterMs(response.retryAfter, at)
  const waitMs =
    asked !== undefined
      ? Math.min(asked, MAX_RETRY_AFTER_MS)
      : Math.round(scheduled * (0.8 + 0.4 * jitter))
  return {
    attempt,
    state: "pending",
    nextAttemptAt: new Date(at.getTime() + waitMs),
    endpoint
  }
}
