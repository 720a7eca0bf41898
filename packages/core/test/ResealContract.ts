/**
 * The re-seal's contract on a real store (run by each storage package): the
 * sealed-value port lists, reads and compare-and-sets every sealed field; a
 * rotation keeps the stored secret as the previous one; and end to end on one
 * database, engines started one after another as an operator rotates the
 * engine's secret (A; then B with A as previous, and the re-seal; then B
 * alone): webhook signing secrets keep their plaintext, and deliveries sign
 * with them. Also the move from the secret kept in the database to a given one.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Option } from "effect"
import { payEngineLayer } from "../src/Engine.js"
import { engineConfig } from "../src/EngineOptions.js"
import type { Partner } from "../src/identity/Partner.js"
import { Merchants } from "../src/merchants/Merchants.js"
import { Partners } from "../src/partners/Partners.js"
import type { PayStorage } from "../src/Storage.js"
import {
  EngineSecret,
  makeEngineSecret,
  WEBHOOK_SECRET_PURPOSE
} from "../src/secrets/EngineSecret.js"
import { resealStoredValues } from "../src/secrets/Reseal.js"
import { SealedValueStore } from "../src/secrets/SealedValueStore.js"
import { makeIdBody } from "../src/shared/Ids.js"
import { verifyWebhook } from "../src/webhooks/Signature.js"
import {
  WebhookEndpoint,
  type WebhookEndpointId,
  WebhookEndpointStore
} from "../src/webhooks/WebhookEndpoint.js"
import { WebhookEndpoints } from "../src/webhooks/WebhookEndpoints.js"
import { type WebhookRequest, WebhookSender } from "../src/webhooks/WebhookSender.js"
import { WebhookWork } from "../src/webhooks/WebhookWork.js"

const bytes = (fill: number) => new Uint8Array(32).fill(fill)
const b64 = (b: Uint8Array) => btoa(String.fromCharCode(...b))
const [A, B, C] = [bytes(0xa1), bytes(0xb2), bytes(0xc3)]

/** A sender that records every request and answers 204. */
const recordingSender = () => {
  const requests: Array<WebhookRequest & { readonly at: Date }> = []
  const layer = Layer.succeed(
    WebhookSender,
    WebhookSender.of({
      send: (request) =>
        Effect.sync(() => {
          requests.push({ ...request, at: new Date() })
          return { status: 204, body: "", retryAfter: null, error: null, durationMs: 1 }
        })
    })
  )
  return { requests, layer }
}

let n = 0
const endpointRow = (partner: Partner, fields: Partial<WebhookEndpoint> = {}) => {
  const at = new Date(Date.UTC(2026, 0, 15) + ++n * 1000)
  return new WebhookEndpoint({
    id: `whep_${makeIdBody(at.getTime())}` as WebhookEndpointId,
    partnerId: partner.id,
    url: "https://hooks.shop.example/pay",
    events: null,
    merchantId: null,
    description: null,
    apiVersion: "2026-02-18",
    status: "enabled",
    disabledReason: null,
    secret: `v1.secret-${n}`,
    previousSecret: null,
    previousSecretExpiresAt: null,
    createdAt: at,
    updatedAt: at,
    deletedAt: null,
    ...fields
  })
}

export const resealStorageContract = (
  name: string,
  layer: () => Layer.Layer<PayStorage, unknown>
) =>
  describe(`re-seal storage contract: ${name}`, () => {
    /** One database for the whole test; engines come and go on it, as processes would. */
    const database = Effect.suspend(() =>
      Effect.map(Layer.build(layer()), (context) => Layer.succeedContext(context))
    )

    const engine = (
      storage: Layer.Layer<PayStorage>,
      secrets: { readonly secret?: string; readonly previousSecrets?: ReadonlyArray<string> },
      sender = recordingSender().layer
    ) =>
      Layer.merge(
        payEngineLayer({
          storage,
          config: engineConfig({ publicUrl: "http://pay.test", maxBodyBytes: 4096 }),
          webhookSender: sender,
          ...secrets
        }),
        Logger.minimumLogLevel(LogLevel.Error)
      )

    const partnerOn = Effect.map(
      Effect.flatMap(Partners, (p) => p.create({ name: "Hooks" })),
      (created) => created.partner
    )

    it.scopedLive(
      "the port: pages every sealed field by id, reads one, and rewrites only what still holds what was read",
      () =>
        Effect.gen(function* () {
          const storage = yield* database
          yield* Effect.gen(function* () {
            const partner = yield* partnerOn
            const endpoints = yield* WebhookEndpointStore
            const rows = [
              endpointRow(partner),
              endpointRow(partner, { previousSecret: "v1.before", deletedAt: new Date() }),
              endpointRow(partner)
            ]
            for (const row of rows) yield* endpoints.insert(row)
            const sealed = yield* SealedValueStore
            const page1 = yield* sealed.page("webhookEndpoints.secret", null, 2)
            const page2 = yield* sealed.page("webhookEndpoints.secret", page1[1]!.id, 2)
            expect([...page1, ...page2]).toEqual(rows.map((r) => ({ id: r.id, sealed: r.secret })))
            expect(yield* sealed.page("webhookEndpoints.previousSecret", null, 10)).toEqual([
              { id: rows[1]!.id, sealed: "v1.before" }
            ])
            expect(yield* sealed.read("webhookEndpoints.secret", rows[0]!.id)).toEqual(
              Option.some(rows[0]!.secret)
            )
            expect(yield* sealed.read("webhookEndpoints.previousSecret", rows[0]!.id)).toEqual(
              Option.none()
            )
            expect(yield* sealed.read("webhookEndpoints.secret", "whep_none")).toEqual(
              Option.none()
            )

            // Compare-and-set: a stale expectation writes nothing.
            const id = rows[0]!.id
            expect(yield* sealed.replace("webhookEndpoints.secret", id, "v1.stale", "v1.x")).toBe(
              false
            )
            expect(
              yield* sealed.replace("webhookEndpoints.secret", id, rows[0]!.secret, "v1.resealed")
            ).toBe(true)
            expect(yield* sealed.read("webhookEndpoints.secret", id)).toEqual(
              Option.some("v1.resealed")
            )
            expect(
              yield* sealed.replace(
                "webhookEndpoints.previousSecret",
                rows[1]!.id,
                "v1.before",
                "v1.before-resealed"
              )
            ).toBe(true)
            const second = Option.getOrThrow(yield* endpoints.find(rows[1]!.id))
            expect([second.secret, second.previousSecret]).toEqual([
              rows[1]!.secret,
              "v1.before-resealed"
            ])

            // A rotation read the secret before the re-seal rewrote it: the previous secret it
            // keeps is the stored one, so the re-seal's work is not undone.
            const rotated = Option.getOrThrow(
              yield* endpoints.rotateSecret(
                id,
                {
                  secret: "v1.rotated",
                  previousSecret: rows[0]!.secret,
                  previousSecretExpiresAt: new Date(Date.now() + 3_600_000)
                },
                new Date()
              )
            )
            expect([rotated.secret, rotated.previousSecret]).toEqual(["v1.rotated", "v1.resealed"])
          }).pipe(Effect.provide(engine(storage, { secret: b64(A) })))
        }),
      30_000
    )

    it.scopedLive(
      "rotating the engine's secret: after the re-seal under B, deliveries sign with the same webhook secrets under B alone",
      () =>
        Effect.gen(function* () {
          const storage = yield* database

          // 1. Secret A: an endpoint rotated (its previous secret still signing), one deleted.
          const before = yield* Effect.gen(function* () {
            const partner = yield* partnerOn
            const endpoints = yield* WebhookEndpoints
            const first = yield* endpoints.create(partner, { url: "https://hooks.test/first" })
            const rotated = yield* endpoints.rotateSecret(partner, first.endpoint.id, 3600)
            const gone = yield* endpoints.create(partner, { url: "https://hooks.test/gone" })
            yield* endpoints.remove(partner, gone.endpoint.id)
            // One sealed under a secret nobody configures: reported, never destroyed.
            const lost = endpointRow(partner, {
              url: "https://hooks.test/lost",
              secret: yield* makeEngineSecret(C).seal(WEBHOOK_SECRET_PURPOSE, "whsec_lost")
            })
            yield* (yield* WebhookEndpointStore).insert(lost)
            return { partner, first, rotated, lost }
          }).pipe(Effect.provide(engine(storage, { secret: b64(A) })))
          const stored = (id: WebhookEndpointId) =>
            Effect.map(
              Effect.flatMap(WebhookEndpointStore, (s) => s.find(id)),
              Option.getOrThrow
            ).pipe(Effect.provide(storage))
          const sealedUnderA = yield* stored(before.first.endpoint.id)

          // 2. Secret B, A as previous: the re-seal, twice.
          const [report, again] = yield* Effect.all([resealStoredValues, resealStoredValues]).pipe(
            Effect.provide(engine(storage, { secret: b64(B), previousSecrets: [b64(A)] }))
          )
          expect(report).toMatchObject({
            resealed: 3,
            current: 0,
            unopenable: 1,
            fields: {
              "webhookEndpoints.secret": { resealed: 2, current: 0, unopenable: 1 },
              "webhookEndpoints.previousSecret": { resealed: 1, current: 0, unopenable: 0 }
            },
            unopenableValues: [{ field: "webhookEndpoints.secret", id: before.lost.id }],
            changing: []
          })
          expect(again).toMatchObject({ resealed: 0, current: 3, unopenable: 1 })

          // Stored under B now: the same plaintexts, which A no longer opens.
          const resealed = yield* stored(before.first.endpoint.id)
          expect(resealed.secret).not.toBe(sealedUnderA.secret)
          expect(resealed.previousSecret).not.toBe(sealedUnderA.previousSecret)
          const onlyB = makeEngineSecret(B)
          expect(yield* onlyB.open(WEBHOOK_SECRET_PURPOSE, resealed.secret)).toBe(
            before.rotated.secret
          )
          expect(yield* onlyB.open(WEBHOOK_SECRET_PURPOSE, resealed.previousSecret!)).toBe(
            before.first.secret
          )
          const underA = yield* Effect.either(
            makeEngineSecret(A).open(WEBHOOK_SECRET_PURPOSE, resealed.secret)
          )
          expect(underA._tag).toBe("Left")
          expect((yield* stored(before.lost.id)).secret).toBe(before.lost.secret)

          // 3. B alone: a delivery carries both signatures, the current and the previous secret's.
          const sender = recordingSender()
          yield* Effect.gen(function* () {
            yield* (yield* Merchants).create(before.partner, {
              name: "After the rotation",
              email: "till@shop.test",
              iconUrl: null
            })
            yield* WebhookWork.use((w) => w.drain)
          }).pipe(Effect.provide(engine(storage, { secret: b64(B) }, sender.layer)))
          const sent = sender.requests.filter((r) => r.url === "https://hooks.test/first")
          expect(sent).toHaveLength(1)
          for (const secret of [before.rotated.secret, before.first.secret]) {
            yield* Effect.promise(() =>
              verifyWebhook(sent[0]!.body, sent[0]!.headers, secret, { now: sent[0]!.at })
            )
          }
        }),
      30_000
    )

    it.scopedLive(
      "moving from the secret kept in the database to a given one: it still opens, and the re-seal moves every value to the given one",
      () =>
        Effect.gen(function* () {
          const storage = yield* database
          const created = yield* Effect.gen(function* () {
            const partner = yield* partnerOn
            return yield* (yield* WebhookEndpoints).create(partner, {
              url: "https://hooks.test/kept"
            })
          }).pipe(Effect.provide(engine(storage, {})))
          const report = yield* Effect.gen(function* () {
            const endpoint = Option.getOrThrow(
              yield* (yield* WebhookEndpointStore).find(created.endpoint.id)
            )
            // Before the re-seal: the kept secret opens it, with no PAY_SECRET_PREVIOUS.
            expect(yield* (yield* EngineSecret).open(WEBHOOK_SECRET_PURPOSE, endpoint.secret)).toBe(
              created.secret
            )
            return yield* resealStoredValues
          }).pipe(Effect.provide(engine(storage, { secret: b64(B) })))
          expect(report).toMatchObject({ resealed: 1, current: 0, unopenable: 0 })
          const endpoint = Option.getOrThrow(
            yield* Effect.provide(
              Effect.flatMap(WebhookEndpointStore, (s) => s.find(created.endpoint.id)),
              storage
            )
          )
          expect(yield* makeEngineSecret(B).open(WEBHOOK_SECRET_PURPOSE, endpoint.secret)).toBe(
            created.secret
          )
        }),
      30_000
    )
  })
