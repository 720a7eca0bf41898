/**
 * The re-seal beside running servers, on the in-memory stores: a value
 * rewritten between the re-seal's read and its write (a rotation of the
 * endpoint's secret by a server) is read again, never overwritten. The rest
 * of the re-seal, on every store: test/ResealContract.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { makeMemoryStorage } from "@pay/testing"
import { Context, Effect, Layer, Logger, LogLevel, Option } from "effect"
import { payEngineLayer } from "../Engine.js"
import { engineConfig } from "../EngineOptions.js"
import { Partners } from "../partners/Partners.js"
import type { PayStorage } from "../Storage.js"
import { WebhookEndpointStore } from "../webhooks/WebhookEndpoint.js"
import { WebhookEndpoints } from "../webhooks/WebhookEndpoints.js"
import { makeEngineSecret, WEBHOOK_SECRET_PURPOSE } from "./EngineSecret.js"
import { resealStoredValues } from "./Reseal.js"
import { SealedValueStore } from "./SealedValueStore.js"

const b64 = (fill: number) => btoa(String.fromCharCode(...new Uint8Array(32).fill(fill)))

const engine = (
  storage: Layer.Layer<PayStorage>,
  secrets: { readonly secret: string; readonly previousSecrets?: ReadonlyArray<string> }
) =>
  Layer.merge(
    payEngineLayer({
      storage,
      config: engineConfig({ publicUrl: "http://pay.test", maxBodyBytes: 4096 }),
      ...secrets
    }),
    Logger.minimumLogLevel(LogLevel.Error)
  )

describe("resealStoredValues", () => {
  it.scoped(
    "a secret rotated between the read and the write is read again; the rotation's previous secret is re-sealed too",
    () =>
      Effect.gen(function* () {
        const stores = yield* Layer.build(makeMemoryStorage())
        const created = yield* Effect.gen(function* () {
          const { partner } = yield* (yield* Partners).create({ name: "Hooks" })
          return {
            partner,
            ...(yield* (yield* WebhookEndpoints).create(partner, { url: "https://hooks.test/a" }))
          }
        }).pipe(Effect.provide(engine(Layer.succeedContext(stores), { secret: b64(1) })))

        // A server rotates the endpoint's secret just before the re-seal's first write.
        let interfere: Effect.Effect<void> = Effect.void
        const inner = Context.get(stores, SealedValueStore)
        const racing = Context.add(stores, SealedValueStore, {
          ...inner,
          replace: (field, id, expected, replacement) =>
            Effect.suspend(() => {
              const before = interfere
              interfere = Effect.void
              return Effect.zipRight(before, inner.replace(field, id, expected, replacement))
            })
        })
        const { report, rotated } = yield* Effect.gen(function* () {
          const endpoints = yield* WebhookEndpoints
          let rotated = ""
          interfere = Effect.gen(function* () {
            const r = yield* endpoints.rotateSecret(created.partner, created.endpoint.id, 3600)
            rotated = r.secret
          }).pipe(Effect.orDie)
          const report = yield* resealStoredValues
          return { report, rotated }
        }).pipe(
          Effect.provide(
            engine(Layer.succeedContext(racing), { secret: b64(2), previousSecrets: [b64(1)] })
          )
        )

        expect(report).toMatchObject({
          resealed: 1,
          current: 1,
          unopenable: 0,
          fields: {
            "webhookEndpoints.secret": { resealed: 0, current: 1, unopenable: 0 },
            "webhookEndpoints.previousSecret": { resealed: 1, current: 0, unopenable: 0 }
          },
          changing: []
        })
        const stored = Option.getOrThrow(
          yield* Context.get(stores, WebhookEndpointStore).find(created.endpoint.id)
        )
        const onlyNew = makeEngineSecret(new Uint8Array(32).fill(2))
        expect(yield* onlyNew.open(WEBHOOK_SECRET_PURPOSE, stored.secret)).toBe(rotated)
        expect(yield* onlyNew.open(WEBHOOK_SECRET_PURPOSE, stored.previousSecret!)).toBe(
          created.secret
        )
      })
  )
})
