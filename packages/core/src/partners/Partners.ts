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

export interface NewPartner {
  readonly name: string
  readonly apiVersion?: ApiVersion | undefined
  /** Use this key instead of a generated one (already validated). */
  readonly apiKey?: string | undefined
}

export class Partners extends Effect.Service<Partners>()("@pay/core/Partners", {
  effect: Effect.gen(function* () {
    const store = yield* PartnerStore

    /** Returns the key in clear: the only time it is ever seen. */
    const create = Effect.fn("Partners.create")(function* (input: NewPartner) {
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

    const authenticate = (presented: string | undefined) =>
      Effect.gen(function* () {
        if (presented === undefined || presented === "") {
          return yield* new Unauthenticated({ reason: "missing" })
        }
        if (!looksLikeApiKey(presented)) return yield* new Unauthenticated({ reason: "invalid" })
        const found = yield* store.findByKeyPrefix(keyPrefix(presented))
        if (
          Option.isNone(found) ||
          !constantTimeEqual(found.value.key.hash, hashApiKey(presented))
        ) {
          return yield* new Unauthenticated({ reason: "invalid" })
        }
        return found.value.partner
      })

    return { create, authenticate, list: store.list, find: store.find } as const
  })
}) {}
