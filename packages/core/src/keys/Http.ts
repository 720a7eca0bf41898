/**
 * The API key route handlers: a partner's keys, managed with one of them.
 */
import { Effect } from "effect"
import { requestActor } from "../audit/Actor.js"
import { json, type Reply } from "../http/Exchange.js"
import { implement } from "../http/Route.js"
import { idempotentlyWithSecret } from "../idempotency/Http.js"
import type { Partner } from "../identity/Partner.js"
import { CurrentPartner } from "../identity/PartnerAuth.js"
import { parseRfc3339 } from "../shared/Time.js"
import { ApiKeysApi } from "./Api.js"
import { ApiKeys } from "./ApiKeys.js"
import { DEFAULT_ROTATION_OVERLAP_SECONDS, type KeyOwner, type KeyRecord } from "./KeyRecord.js"
import { apiKeyView } from "./KeyView.js"

const createdView = (key: KeyRecord, secret: string) => ({
  id: key.id,
  name: key.name,
  createdAt: key.createdAt.toISOString(),
  expiresAt: key.expiresAt?.toISOString() ?? null,
  scopes: key.scopes,
  secret
})

const ownerOf = (partner: Partner): KeyOwner => ({ kind: "partner", id: partner.id })

/**
 * Stands for the acting key of a partner that came without one (never,
 * through the engine's authenticator): it holds nothing, so it grants nothing.
 */
const noKey = { scopes: [], expiresAt: new Date(0), revokedAt: new Date(0) } as const

export const apiKeyHandlers = Effect.gen(function* () {
  const keys = yield* ApiKeys
  return implement(ApiKeysApi, {
    create: (input) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        const actor = yield* requestActor
        const { name, expiresAt, scopes } = input.payload
        return yield* idempotentlyWithSecret(input, input.headers["idempotency-key"], (keep) =>
          keys
            .create(
              ownerOf(partner),
              // Checked by the schema: a valid timestamp.
              {
                name,
                expiresAt: expiresAt === undefined ? null : parseRfc3339(expiresAt)!,
                scopes
              },
              {
                actor,
                // The key may grant no more than it holds, nor outlive itself.
                by: keys.actingKey(partner) ?? noKey,
                withKey: (key, secret) =>
                  Effect.map(keep(201, createdView(key, secret)), (completion) => ({ completion }))
              }
            )
            .pipe(
              Effect.map(({ key, secret }): Reply => json(201, createdView(key, secret))),
              // Four random lookup ids all taken is not a case to answer: a defect.
              Effect.catchTag("ApiKeyLookupTaken", Effect.die)
            )
        )
      }),

    list: () =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        return json(200, { data: (yield* keys.list(ownerOf(partner))).map(apiKeyView) })
      }),

    revoke: ({ path }) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        const outcome = yield* keys.revoke(ownerOf(partner), path.id, {
          keepOneActive: true,
          actor: yield* requestActor
        })
        return json(200, apiKeyView(outcome.key))
      }),

    rotate: (input) =>
      Effect.gen(function* () {
        const partner = yield* CurrentPartner
        const actor = yield* requestActor
        const overlap = input.payload.overlapSeconds ?? DEFAULT_ROTATION_OVERLAP_SECONDS
        const reply = (old: KeyRecord, key: KeyRecord, secret: string) => ({
          ...createdView(key, secret),
          previousKey: apiKeyView(old)
        })
        return yield* idempotentlyWithSecret(input, input.headers["idempotency-key"], (keep) =>
          keys
            .rotate(ownerOf(partner), input.path.id, overlap, {
              actor,
              by: keys.actingKey(partner) ?? noKey,
              withKey: (key, secret, old) =>
                Effect.map(keep(201, reply(old, key, secret)), (completion) => ({ completion }))
            })
            .pipe(
              Effect.map(({ old, replacement, secret }) =>
                json(201, reply(old, replacement, secret))
              ),
              Effect.catchTag("ApiKeyLookupTaken", Effect.die)
            )
        )
      })
  })
})
