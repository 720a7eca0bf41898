/**
 * Partner accounts: creating one with its key, and turning a presented key
 * into the partner it belongs to.
 */
import { Clock, Effect, Option } from "effect"
import { type ApiVersion, DEFAULT_API_VERSION } from "../shared/ApiVersion.js"
import { Unauthenticated } from "../shared/Errors.js"
import { newId } from "../shared/Ids.js"
import {
  constantTimeEqual,
  generateApiKey,
  hashApiKey,
  keyPrefix,
  looksLikeApiKey
} from "./ApiKey.js"
import { Partner, type PartnerId } from "./Partner.js"
import { PartnerStore } from "./PartnerStore.js"

const VERIFIED_KEY_TTL_MS = 60_000
const VERIFIED_KEYS_MAX = 10_000

export interface NewPartner {
  readonly name: string
  readonly apiVersion?: ApiVersion | undefined
  /** Use this key instead of a generated one (already validated). */
  readonly apiKey?: string | undefined
}

export class Partners extends Effect.Service<Partners>()("@pay/core/Partners", {
  effect: Effect.gen(function* () {
    const store = yield* PartnerStore
    // Resolved once: a per-request service lookup costs more than the check itself.
    const clock = yield* Effect.clock

    /** Returns the key in clear: the only time it is ever seen. */
    const create = (input: NewPartner) =>
      Effect.gen(function* () {
        const now = new Date(yield* Clock.currentTimeMillis)
        const partner = new Partner({
          id: yield* newId<PartnerId>("ptnr"),
          name: input.name,
          apiVersion: input.apiVersion ?? DEFAULT_API_VERSION,
          createdAt: now
        })
        // A generated key's prefix is random: a clash is astronomically unlikely, but retry anyway.
        const attempt = Effect.suspend(() => {
          const apiKey = input.apiKey ?? generateApiKey()
          return store
            .insert(partner, {
              prefix: keyPrefix(apiKey),
              hash: hashApiKey(apiKey),
              partnerId: partner.id,
              createdAt: now
            })
            .pipe(Effect.as(apiKey))
        })
        const apiKey = yield* input.apiKey === undefined
          ? Effect.retry(attempt, { times: 3 })
          : attempt
        return { partner, apiKey }
      })

    // Verified keys, so a request need not read and hash its key every time. Keys are never
    // changed or revoked yet; the TTL bounds how long a future revocation could lag.
    const verified = new Map<string, { readonly partner: Partner; readonly until: number }>()

    // Not suspended: called once per request, when the request arrives.
    const authenticate = (
      presented: string | undefined
    ): Effect.Effect<Partner, Unauthenticated> => {
      const now = clock.unsafeCurrentTimeMillis()
      if (presented === undefined || presented === "") {
        return Effect.fail(new Unauthenticated({ reason: "missing" }))
      }
      const cached = verified.get(presented)
      if (cached !== undefined && cached.until > now) return Effect.succeed(cached.partner)
      if (!looksLikeApiKey(presented))
        return Effect.fail(new Unauthenticated({ reason: "invalid" }))
      return Effect.flatMap(store.findByKeyPrefix(keyPrefix(presented)), (found) => {
        if (
          Option.isNone(found) ||
          !constantTimeEqual(found.value.key.hash, hashApiKey(presented))
        ) {
          return Effect.fail(new Unauthenticated({ reason: "invalid" }))
        }
        if (verified.size >= VERIFIED_KEYS_MAX) verified.clear()
        verified.set(presented, {
          partner: found.value.partner,
          until: now + VERIFIED_KEY_TTL_MS
        })
        return Effect.succeed(found.value.partner)
      })
    }

    return { create, authenticate, list: store.list, find: store.find } as const
  })
}) {}
