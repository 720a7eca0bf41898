/**
 * The engine's rate limits (PayConfig.rateLimits): a limiter per partner API
 * key, per partner (its keys together), per wallet app and per payment, each
 * undefined when off. The partner and wallet authenticators check theirs once
 * a caller is known (partners/Authenticate.ts: the key's and its partner's,
 * both or neither taken, `admitAll`; apps/Authenticate.ts); the gateway checks the
 * payment's once its path is read (gateway/Http.ts), and any other route
 * under a payment may do the same with `admitPayment`. When a limit is on,
 * the instance syncs its buckets with the others' (RateLimitSync.ts) for as
 * long as the layer lives; with every limit off nothing runs.
 */
import { Context, Effect, Layer } from "effect"
import { bucketSettings, partnerBucketSettings, RateLimitsConfig } from "./RateLimitConfig.js"
import { RateLimited } from "./RateLimited.js"
import { makeRateLimiter, type RateLimiter, type RateLimitScope } from "./RateLimiter.js"
import { RateLimitStore } from "./RateLimitStore.js"
import { syncForever } from "./RateLimitSync.js"
import type { TokenBucketSettings } from "./TokenBucket.js"

export interface RateLimitsShape {
  readonly perApiKey: RateLimiter | undefined
  readonly perPartner: RateLimiter | undefined
  readonly perWalletApp: RateLimiter | undefined
  readonly perPayment: RateLimiter | undefined
}

export class RateLimits extends Context.Tag("@pay/core/RateLimits")<RateLimits, RateLimitsShape>() {
  /** The limits RateLimitsConfig sets, synced through the RateLimitStore while the layer lives. */
  static readonly layer = Layer.scoped(
    RateLimits,
    Effect.gen(function* () {
      const rateLimits = yield* RateLimitsConfig
      const store = yield* RateLimitStore
      const clock = yield* Effect.clock
      const now = () => clock.unsafeCurrentTimeMillis()
      const limiter = (scope: RateLimitScope, settings: TokenBucketSettings | undefined) =>
        settings === undefined ? undefined : makeRateLimiter(scope, settings, { now })
      const limits: RateLimitsShape = {
        perApiKey: limiter("api_key", bucketSettings(rateLimits.perApiKey)),
        perPartner: limiter("partner", partnerBucketSettings(rateLimits)),
        perWalletApp: limiter("wallet_app", bucketSettings(rateLimits.perWalletApp)),
        perPayment: limiter("payment", bucketSettings(rateLimits.perPayment))
      }
      // The partner's buckets sync like the others: instances share them under `partner:<id>`.
      const on = [
        limits.perApiKey,
        limits.perPartner,
        limits.perWalletApp,
        limits.perPayment
      ].filter((l): l is RateLimiter => l !== undefined)
      if (on.length > 0) yield* Effect.forkScoped(syncForever(store, on))
      return limits
    })
  )
}

/** One request under `key`: undefined when admitted, else its refusal. */
export const admit = (limiter: RateLimiter, key: string): RateLimited | undefined => {
  const wait = limiter.take(key)
  return wait === undefined
    ? undefined
    : new RateLimited({ scope: limiter.scope, retryAfterSeconds: wait })
}

/**
 * One request that must pass several limits (a key's and its partner's):
 * admitted, a token taken from each, only when every one has a token; else
 * nothing is taken and the refusal is the longest wait's. Taking from none
 * on a refusal keeps a partner's spent bucket from draining the buckets of
 * its other keys, which would then refuse them after the partner's refills.
 * Synchronous, so nothing runs between the checks and the takes.
 */
export const admitAll = (
  checks: ReadonlyArray<readonly [RateLimiter | undefined, string]>
): RateLimited | undefined => {
  let refused: RateLimited | undefined
  for (const [limiter, key] of checks) {
    if (limiter === undefined) continue
    const wait = limiter.wait(key)
    if (wait !== undefined && (refused === undefined || wait > refused.retryAfterSeconds)) {
      refused = new RateLimited({ scope: limiter.scope, retryAfterSeconds: wait })
    }
  }
  if (refused !== undefined) return refused
  for (const [limiter, key] of checks) limiter?.take(key)
  return undefined
}

/**
 * A request about `paymentId` (a gateway route, or any page under the
 * payment's link): succeeds when admitted, or at once when the limit is off.
 */
export const admitPayment = (
  limits: RateLimitsShape,
  paymentId: string
): Effect.Effect<void, RateLimited> => {
  if (limits.perPayment === undefined) return Effect.void
  const refused = admit(limits.perPayment, paymentId)
  return refused === undefined ? Effect.void : Effect.fail(refused)
}
