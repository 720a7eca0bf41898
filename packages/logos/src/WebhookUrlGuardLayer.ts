/**
 * The engine's `WebhookUrlGuard` on this package's address rules: an https://
 * URL whose host is, and resolves only to, public internet addresses. With
 * `allowPrivate` (PAY_FETCH_ALLOW_PRIVATE=1), private and loopback hosts pass
 * too, and plain http:// to a loopback host, for tests and private deployments.
 */
import { httpsUrlProblem, WebhookUrlGuard, WebhookUrlRefused } from "@pay/core"
import { Effect, Layer } from "effect"
import { classifyAddress } from "./AddressPolicy.js"
import type { LookupGate } from "./LookupGate.js"
import { type ResolvedAddress, resolvedLogFields, resolveTarget } from "./SafeFetch.js"

export interface WebhookUrlGuardOptions {
  readonly allowPrivate?: boolean
  /** Default: the system resolver. */
  readonly resolve?: (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>
  /**
   * The gate lookups go through; default the process's (LookupGate.ts): a
   * host whose DNS does not answer within 5 s is refused, and a burst of
   * registrations runs at most 2 lookups at once.
   */
  readonly lookups?: LookupGate
}

/** Whether `address` is loopback: the only place plain http:// may go (with `allowPrivate`). */
export const isLoopback = (address: string) => {
  const verdict = classifyAddress(address)
  return !verdict.allowed && verdict.range === "loopback"
}

export const makeWebhookUrlGuard = (options: WebhookUrlGuardOptions = {}) => {
  const allowPrivate = options.allowPrivate === true
  return WebhookUrlGuard.of({
    check: (url) =>
      Effect.gen(function* () {
        const parsed = URL.canParse(url) ? new URL(url) : undefined
        const problem = httpsUrlProblem(url)
        const plainLoopback =
          allowPrivate && parsed?.protocol === "http:" && problem === "must be an https:// URL"
        if (problem !== undefined && !plainLoopback) {
          return yield* new WebhookUrlRefused({ reason: problem })
        }
        // Interrupting the check (a client gone) stops waiting for the lookup.
        const target = yield* Effect.promise((signal) =>
          resolveTarget(parsed!, {
            allowPrivate,
            resolve: options.resolve,
            signal,
            lookups: options.lookups
          })
        )
        if ("ok" in target) {
          // The partner's reason names no address a host resolved to; the operator's log does.
          if (target.kind === "address_not_allowed" && target.resolved !== undefined)
            yield* Effect.logWarning("webhook URL refused", {
              reason: target.message,
              ...resolvedLogFields(target.resolved)
            })
          return yield* new WebhookUrlRefused({ reason: target.message })
        }
        if (plainLoopback && !target.addresses.every((a) => isLoopback(a.address))) {
          return yield* new WebhookUrlRefused({
            reason:
              "must be an https:// URL (plain http:// only to a loopback address, with PAY_FETCH_ALLOW_PRIVATE=1)"
          })
        }
      })
  })
}

/** `WebhookUrlGuard` for an engine: `PAY_FETCH_ALLOW_PRIVATE=1` maps to `allowPrivate`. */
export const webhookUrlGuardLayer = (options: WebhookUrlGuardOptions = {}) =>
  Layer.succeed(WebhookUrlGuard, makeWebhookUrlGuard(options))
