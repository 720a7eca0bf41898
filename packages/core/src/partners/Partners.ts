/**
 * Partner accounts: creating one with its key, and turning a presented key
 * into the partner it belongs to.
 */
import { Clock, Effect } from "effect"
import type { AuditActor } from "../audit/AuditEntry.js"
import { Partner, type PartnerId } from "../identity/Partner.js"
import { ApiKeys, keyCreatedAudit } from "../keys/ApiKeys.js"
import { type ApiVersion, DEFAULT_API_VERSION } from "../shared/ApiVersion.js"
import { Unauthenticated } from "../shared/Errors.js"
import { newId } from "../shared/Ids.js"
import { PartnerStore } from "./PartnerStore.js"

export interface NewPartner {
  readonly name: string
  readonly apiVersion?: ApiVersion | undefined
  /** Use this key instead of a generated one (already validated). */
  readonly apiKey?: string | undefined
  /** The first key's name. */
  readonly keyName?: string | undefined
  /** Who creates it, for the audit trail (its first key's creation); default: the embedder. */
  readonly actor?: AuditActor | undefined
}

export class Partners extends Effect.Service<Partners>()("@pay/core/Partners", {
  effect: Effect.gen(function* () {
    const store = yield* PartnerStore
    const keys = yield* ApiKeys

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
        const { key, secret } = yield* keys.mintAndStore(
          { kind: "partner", id: partner.id },
          { name: input.keyName ?? null },
          (key) =>
            Effect.flatMap(
              keyCreatedAudit({ kind: "partner", id: partner.id }, input.actor),
              (log) => store.insert(partner, key, log)
            ),
          input.apiKey
        )
        return { partner, apiKey: secret, key }
      })

    const verify = keys.verifier(
      "partner",
      (id) => store.find(id as PartnerId),
      () => new Unauthenticated({ reason: "invalid" })
    )

    // Not suspended: called once per request, when the request arrives.
    const authenticate = (
      presented: string | undefined
    ): Effect.Effect<Partner, Unauthenticated> =>
      presented === undefined || presented === ""
        ? Effect.fail(new Unauthenticated({ reason: "missing" }))
        : verify(presented)

    /** The partner of a key verified a moment ago, without any work; else undefined. */
    const known = (presented: string | undefined): Partner | undefined =>
      presented === undefined || presented === "" ? undefined : verify.known(presented)

    return { create, authenticate, known, list: store.list, find: store.find } as const
  }),
  dependencies: [ApiKeys.Default]
}) {}
