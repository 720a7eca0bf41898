import { describe, expect, it } from "@effect/vitest"
import { MemoryStorage } from "@pay/testing"
import { Effect, Layer, Tracer } from "effect"
import { makeFakeLogoCapture } from "../../test/FakeLogoCapture.js"
import { HttpConfig } from "../http/HttpConfig.js"
import { Partner, type PartnerId } from "../identity/Partner.js"
import { Merchants } from "../merchants/Merchants.js"

describe("service spans", () => {
  it.effect("name each service call, so a plugged-in tracer sees the flow", () =>
    Effect.gen(function* () {
      const names: Array<string> = []
      const base = yield* Effect.tracer
      const tracer = Tracer.make({
        span: (name, ...rest) => {
          names.push(name)
          return base.span(name, ...rest)
        },
        context: (f, fiber) => base.context(f, fiber)
      })
      const merchants = yield* Merchants
      const partner = new Partner({
        id: "ptnr_0000000000spans0001" as PartnerId,
        name: "Spans",
        apiVersion: "2026-02-18",
        createdAt: new Date(0)
      })
      yield* merchants
        .create(partner, { name: "Shop", email: "shop@spans.example", iconUrl: null })
        .pipe(Effect.withTracer(tracer))
      yield* merchants.list(partner, { limit: 1 }).pipe(Effect.withTracer(tracer))
      expect(names).toEqual(["Merchants.create", "Merchants.list"])
    }).pipe(
      Effect.provide(
        Merchants.Default.pipe(
          Layer.provide(
            Layer.mergeAll(
              MemoryStorage,
              makeFakeLogoCapture().layer,
              Layer.succeed(HttpConfig, {
                publicUrl: "https://pay.example",
                basePath: "",
                maxBodyBytes: 1024
              })
            )
          )
        )
      )
    )
  )
})
