/**
 * The embedding API on real SQLite files: options checked at once, the fetch
 * handler under a path prefix, two engines in one process, and a client that
 * goes away letting go of its long-poll (over real HTTP, on Node).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { createServer, request as httpRequest } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { toNodeHandler } from "@pay/adapter-node"
import {
  createPaymentEngine,
  type EmbeddedPaymentEngine,
  EngineSecret,
  makePaymentEngine,
  Partners,
  PaymentEngine,
  PaymentEngineOptionsError,
  PaymentEvents
} from "@pay/core"
import { logoCaptureLayer } from "@pay/logos"
import { plainImage, startLogoServer } from "@pay/logos/testing"
import * as SqliteStorage from "@pay/storage-sqlite/node"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { afterAll, describe, expect, it } from "vitest"

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
type Json = any

const dir = mkdtempSync(join(tmpdir(), "pay-embed-engine-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const file = (name: string) => join(dir, `${name}.sqlite`)

const send = (
  engine: Pick<EmbeddedPaymentEngine, "fetch">,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}
) =>
  engine
    .fetch(
      new Request(url, {
        method: init.method ?? (init.body === undefined ? "GET" : "POST"),
        headers: {
          ...(init.body === undefined ? {} : { "content-type": "application/json" }),
          ...init.headers
        },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
      })
    )
    .then(async (response) => ({
      status: response.status,
      body: (response.status === 204 ? undefined : await response.json()) as Json
    }))

describe("options", () => {
  it("are checked at start: one error names every wrong option, and nothing is opened", async () => {
    const database = file("never")
    const started = createPaymentEngine({
      storage: SqliteStorage.layer({ filename: database }),
      publicUrl: "ftp://shop.example/pay",
      maxBodyBytes: 5,
      maxLongPollMs: -1,
      maxHeldLongPolls: 0,
      workers: "no",
      chainWork: { leaseMs: 1.5 },
      gateway: { buyerDataRetentionMs: 1000 },
      fees: { default: { percentage: "lots" } },
      secret: "c2hvcnQ=",
      previousSecrets: [btoa("p".repeat(32)), "c2hvcnQ="],
      publicURL: "https://shop.example"
    } as never)
    const error = await started.then(
      () => undefined,
      (e: unknown) => e
    )
    expect(error).toBeInstanceOf(PaymentEngineOptionsError)
    const options = (error as PaymentEngineOptionsError).issues.map((i) => i.option).sort()
    expect(options).toEqual([
      "chainWork.leaseMs",
      "fees.default.percentage",
      "gateway.buyerDataRetentionMs",
      "maxBodyBytes",
      "maxHeldLongPolls",
      "maxLongPollMs",
      "previousSecrets.1",
      "publicURL",
      "publicUrl",
      "secret",
      "workers"
    ])
    const message = (error as Error).message
    expect(message).toContain("publicUrl: must be an absolute http:// or https:// URL")
    expect(message).toContain("publicURL: is not a known option")
    expect(message).toContain("maxBodyBytes: must be a whole number of bytes from 1024")
    expect(message).toContain(
      "maxHeldLongPolls: must be a whole number of long-polls from 1 to 10000000"
    )
    expect(message).toContain(
      "gateway.buyerDataRetentionMs: must be a whole number of milliseconds from 86400000"
    )
    expect(message).toContain("secret: must be at least 32 random bytes (it holds 5)")
    expect(message).toContain("previousSecrets.1: must be at least 32 random bytes (it holds 5)")
    expect(existsSync(database)).toBe(false)
  })

  it("check the rate limits: whole requests in range, known limits, no burst without a rate", async () => {
    const refusal = async (rateLimits: unknown) => {
      const error = await createPaymentEngine({
        storage: SqliteStorage.layer({ filename: file("never-limits") }),
        publicUrl: "https://shop.example",
        rateLimits
      } as never).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(PaymentEngineOptionsError)
      return (error as PaymentEngineOptionsError).issues
    }
    const ranges = await refusal({
      perApiKey: { perSecond: -1 },
      perWalletApp: { perSecond: 1.5, burst: 2_000_000 },
      perClient: { perSecond: 1 }
    })
    expect(ranges.map((i) => i.option).sort()).toEqual([
      "rateLimits.perApiKey.perSecond",
      "rateLimits.perClient",
      "rateLimits.perWalletApp.burst",
      "rateLimits.perWalletApp.perSecond"
    ])
    expect(ranges.find((i) => i.option === "rateLimits.perApiKey.perSecond")?.message).toBe(
      "must be a whole number of requests a second from 0 to 1000000"
    )
    expect(await refusal({ perPayment: { perSecond: 0, burst: 5 } })).toEqual([
      {
        option: "rateLimits.perPayment.burst",
        message: "is set but perSecond is 0 (off): give perSecond too"
      }
    ])
    expect(existsSync(file("never-limits"))).toBe(false)
  })

  it("check metrics and telemetry: a boolean, and a collector's http(s) URL with sane fields", async () => {
    const error = await createPaymentEngine({
      storage: SqliteStorage.layer({ filename: file("never-telemetry") }),
      publicUrl: "https://shop.example",
      metrics: "yes",
      telemetry: {
        otlpEndpoint: "grpc://collector:4317",
        serviceName: " ",
        headers: { "x-key": 1 },
        exportIntervalMs: 10,
        protocol: "grpc"
      }
    } as never).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PaymentEngineOptionsError)
    const issues = (error as PaymentEngineOptionsError).issues
    expect(issues.map((i) => i.option).sort()).toEqual([
      "metrics",
      "telemetry.exportIntervalMs",
      "telemetry.headers.x-key",
      "telemetry.otlpEndpoint",
      "telemetry.protocol",
      "telemetry.serviceName"
    ])
    const messageOf = (option: string) => issues.find((i) => i.option === option)?.message
    expect(messageOf("metrics")).toBe("must be true or false")
    expect(messageOf("telemetry.otlpEndpoint")).toBe(
      "must be the collector's http:// or https:// OTLP base URL, e.g. http://127.0.0.1:4318"
    )
    expect(messageOf("telemetry.exportIntervalMs")).toBe(
      "must be a whole number of milliseconds from 100 to 600000"
    )
    expect(messageOf("telemetry.protocol")).toBe("is not a known option")
    expect(existsSync(file("never-telemetry"))).toBe(false)
  })

  it("check logging: a known level and format, or false", async () => {
    const refusal = async (logging: unknown) => {
      const error = await createPaymentEngine({
        storage: SqliteStorage.layer({ filename: file("never-logging") }),
        publicUrl: "https://shop.example",
        logging
      } as never).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(PaymentEngineOptionsError)
      return (error as PaymentEngineOptionsError).issues
    }
    const wrong = await refusal({ level: "warn", format: "text", colour: true })
    expect(wrong.map((i) => i.option).sort()).toEqual([
      "logging.colour",
      "logging.format",
      "logging.level"
    ])
    expect(wrong.find((i) => i.option === "logging.level")?.message).toBe(
      "must be one of trace, debug, info, warning, error, none"
    )
    expect(wrong.find((i) => i.option === "logging.format")?.message).toBe(
      "must be one of json, pretty"
    )
    expect((await refusal(true)).map((i) => i.option)).toEqual(["logging"])
    expect(existsSync(file("never-logging"))).toBe(false)
  })

  it("name a missing storage and publicUrl", async () => {
    const error = await createPaymentEngine({} as never).catch((e: unknown) => e)
    expect((error as PaymentEngineOptionsError).issues).toEqual([
      { option: "publicUrl", message: "is required" },
      { option: "storage", message: "is required" }
    ])
  })
})

describe("rate limits for an embedder", () => {
  it("answer a key past its burst 429 rate_limited with Retry-After; another key is not held", async () => {
    const engine = await createPaymentEngine({
      storage: SqliteStorage.layer({ filename: file("limits") }),
      publicUrl: "https://shop.example",
      rateLimits: { perApiKey: { perSecond: 1, burst: 2 } }
    })
    try {
      const first = await engine.partners.create({ name: "First" })
      const second = await engine.partners.create({ name: "Second" })
      const list = (apiKey: string) =>
        engine.fetch(
          new Request("https://shop.example/v1/merchants", { headers: { "api-key": apiKey } })
        )
      expect((await list(first.apiKey)).status).toBe(200)
      expect((await list(first.apiKey)).status).toBe(200)
      const refused = await list(first.apiKey)
      expect(refused.status).toBe(429)
      expect(refused.headers.get("retry-after")).toBe("1")
      const body = (await refused.json()) as Json
      expect(body.code).toBe("rate_limited")
      expect(body.message).toBe("Too many requests with this API key; retry in 1 second")
      expect((await list(second.apiKey)).status).toBe(200)
      // A wrong key is still 401: the limit is checked after the key.
      expect((await list("pk_wrong_0123456789abcdef0123456789")).status).toBe(401)
    } finally {
      await engine.close()
    }
  })
})

describe("the fetch handler under a path prefix", () => {
  it("serves every route under the prefix, and links, documents and pages follow it", async () => {
    const engine = await createPaymentEngine({
      storage: SqliteStorage.layer({ filename: file("prefix") }),
      publicUrl: "https://shop.example/pay/",
      maxBodyBytes: 2048
    })
    try {
      expect(engine.basePath).toBe("/pay")
      expect(engine.publicUrl).toBe("https://shop.example/pay")
      const { apiKey } = await engine.partners.create({ name: "Shop" })
      const partner = { "api-key": apiKey }

      expect((await send(engine, "https://shop.example/pay/health")).status).toBe(200)
      // Outside the prefix nothing answers but 404, even for the engine's own paths.
      const outside = await send(engine, "https://shop.example/health")
      expect(outside.status).toBe(404)
      expect(outside.body.code).toBe("not_found")
      expect((await send(engine, "https://shop.example/payments/v1/merchants")).status).toBe(404)

      const document = await send(engine, "https://shop.example/pay/openapi.json")
      expect(document.body.servers).toEqual([{ url: "/pay" }])

      const merchant = await send(engine, "https://shop.example/pay/v1/merchants", {
        headers: { ...partner, "idempotency-key": "m-1" },
        body: { merchantName: "Coffee", merchantEmail: "owner@coffee.example" }
      })
      expect(merchant.status).toBe(201)
      const merchantId: string = merchant.body.merchant.id
      const payment = await send(engine, "https://shop.example/pay/v1/payments", {
        headers: { ...partner, "merchant-id": merchantId },
        body: { referenceId: "ORDER-1", amount: { unit: "iso4217/USD", value: "450" } }
      })
      expect(payment.status).toBe(201)
      expect(payment.body.gatewayUrl).toBe(`https://shop.example/pay/${payment.body.paymentId}`)
      // No networks at all: nothing claims to be a test.
      expect(payment.body.livemode).toBe(true)

      const status = await send(
        engine,
        `https://shop.example/pay/v1/payments/${payment.body.paymentId}/status?maxPollMs=0`,
        { headers: { ...partner, "merchant-id": merchantId } }
      )
      expect(status.status).toBe(200)
      expect(status.body.status).toBe("requires_action")

      // A streamed body past the limit is refused (413) without being read to the end.
      let pulled = 0
      const endless = new ReadableStream<Uint8Array>({
        pull(controller) {
          pulled++
          controller.enqueue(new Uint8Array(1024).fill(32))
          if (pulled > 10_000) controller.close()
        }
      })
      const tooLarge = await engine.fetch(
        new Request("https://shop.example/pay/v1/merchants", {
          method: "POST",
          headers: { ...partner, "idempotency-key": "m-2", "content-type": "application/json" },
          body: endless,
          duplex: "half"
        } as RequestInit)
      )
      expect(tooLarge.status).toBe(413)
      expect(pulled).toBeLessThan(10)
    } finally {
      await engine.close()
    }
  })
})

describe("the engine's secret", () => {
  const secretOf = async (options: {
    secret?: string
    previousSecrets?: ReadonlyArray<string>
  }) => {
    const own = await Effect.runPromise(Scope.make())
    try {
      const started = await Effect.runPromise(
        Scope.extend(
          makePaymentEngine({
            storage: SqliteStorage.layer({ filename: file("secret") }),
            publicUrl: "https://shop.example/pay",
            workers: false,
            ...options
          }),
          own
        )
      )
      return Context.get(started.context, EngineSecret)
    } finally {
      await Effect.runPromise(Scope.close(own, Exit.void))
    }
  }

  it("is generated at the first start and kept: a later engine on the database opens what the first sealed; a given secret is used instead", async () => {
    const first = await secretOf({})
    const sealed = await Effect.runPromise(first.seal("test", "kept"))
    const second = await secretOf({})
    expect(await Effect.runPromise(second.open("test", sealed))).toBe("kept")
    // A given secret seals; the kept one still opens what it sealed (until `secret reseal`).
    const given = await secretOf({ secret: btoa("g".repeat(32)) })
    expect(await Effect.runPromise(given.open("test", sealed))).toBe("kept")
    const sealedGiven = await Effect.runPromise(given.seal("test", "given"))
    const refused = await Effect.runPromise(Effect.either(second.open("test", sealedGiven)))
    expect(refused._tag).toBe("Left")
    // A previous secret opens too.
    const rotated = await secretOf({
      secret: btoa("h".repeat(32)),
      previousSecrets: [btoa("g".repeat(32))]
    })
    expect(await Effect.runPromise(rotated.open("test", sealedGiven))).toBe("given")
  })

  it("rotates: secrets.reseal() moves a webhook endpoint's secret under the new secret, which alone opens it then", async () => {
    const [A, B] = [btoa("a".repeat(32)), btoa("b".repeat(32))]
    const engineWith = (secrets: { secret: string; previousSecrets?: ReadonlyArray<string> }) =>
      createPaymentEngine({
        storage: SqliteStorage.layer({ filename: file("rotation") }),
        publicUrl: "https://shop.example/pay",
        workers: false,
        ...secrets
      })
    const first = await engineWith({ secret: A })
    const { apiKey } = await first.partners.create({ name: "Rotating" })
    const created = await send(first, "https://shop.example/pay/v1/webhook-endpoints", {
      headers: { "api-key": apiKey, "idempotency-key": "rotation-1" },
      body: { url: "https://hooks.shop.example/pay" }
    })
    expect(created.status).toBe(201)
    await first.close()

    const rotating = await engineWith({ secret: B, previousSecrets: [A] })
    expect(await rotating.secrets.reseal()).toMatchObject({ resealed: 1, current: 0 })
    await rotating.close()
    // B alone (no secret is kept in this database: it was always given) opens it.
    const after = await engineWith({ secret: B })
    expect(await after.secrets.reseal()).toMatchObject({ resealed: 0, current: 1, unopenable: 0 })
    await after.close()
  })
})

describe("merchant logos", () => {
  it("with @pay/logos as the logos option, a merchant's logo is fetched, frozen and served under the prefix", async () => {
    const logos = await startLogoServer()
    logos.set("/logo.png", await plainImage(640, "png"), "image/png")
    const engine = await createPaymentEngine({
      storage: SqliteStorage.layer({ filename: file("logos") }),
      publicUrl: "https://shop.example/pay",
      logos: logoCaptureLayer({ allowPrivate: true, ca: logos.ca })
    })
    try {
      const { apiKey } = await engine.partners.create({ name: "Logo shop" })
      const merchant = await send(engine, "https://shop.example/pay/v1/merchants", {
        headers: { "api-key": apiKey, "idempotency-key": "logo-1" },
        body: {
          merchantName: "Logo Coffee",
          merchantEmail: "owner@coffee.example",
          iconUrl: `${logos.origin}/logo.png`
        }
      })
      expect(merchant.status, JSON.stringify(merchant.body)).toBe(201)
      const iconUrl: string = merchant.body.merchant.iconUrl
      expect(iconUrl).toMatch(/^https:\/\/shop\.example\/pay\/logos\/[0-9a-f]{64}\.webp$/)
      const image = await engine.fetch(new Request(`${iconUrl}?size=128`))
      expect([image.status, image.headers.get("content-type")]).toEqual([200, "image/webp"])
      expect((await image.arrayBuffer()).byteLength).toBeGreaterThan(0)
    } finally {
      await engine.close()
      await logos.close()
    }
  })
})

describe("the Effect forms", () => {
  it("PaymentEngine.layer gives the engine and its services, released with the layer", async () => {
    const answered = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const context = yield* Layer.build(
            PaymentEngine.layer({
              storage: SqliteStorage.layer({ filename: file("layer") }),
              publicUrl: "https://shop.example/pay"
            })
          )
          const engine = Context.get(context, PaymentEngine)
          const partners = Context.get(context, Partners)
          const { apiKey } = yield* partners.create({ name: "Layered" })
          const listed = yield* Effect.promise(() =>
            engine.fetch(
              new Request("https://shop.example/pay/v1/merchants", {
                headers: { "api-key": apiKey }
              })
            )
          )
          return listed.status
        })
      )
    )
    expect(answered).toBe(200)
  })

  it("makePaymentEngine fails with the options error, typed", async () => {
    const failure = await Effect.runPromise(
      Effect.scoped(
        Effect.flip(
          makePaymentEngine({
            storage: SqliteStorage.layer({ filename: file("x") }),
            publicUrl: "nope"
          })
        )
      )
    )
    expect(failure).toBeInstanceOf(PaymentEngineOptionsError)
  })
})

describe("two engines in one process", () => {
  it("on two databases see nothing of each other", async () => {
    const key = "pk_test_same_key_on_both_engines_0001"
    const a = await createPaymentEngine({
      storage: SqliteStorage.layer({ filename: file("a") }),
      publicUrl: "https://a.example"
    })
    const b = await createPaymentEngine({
      storage: SqliteStorage.layer({ filename: file("b") }),
      publicUrl: "https://b.example"
    })
    try {
      // A partner's name follows the rule of every display name.
      await expect(a.partners.create({ name: "   " })).rejects.toThrow(
        "name must be 1 to 256 characters long"
      )
      await expect(a.partners.create({ name: "x".repeat(257) })).rejects.toThrow(
        "name must be 1 to 256 characters long"
      )
      const onA = await a.partners.create({ name: "A", apiKey: key })
      const onB = await b.partners.create({ name: "B" })
      const other = await b.partners.create({ name: "B2", apiKey: `${key}x` })
      expect(onA.partnerId).not.toBe(onB.partnerId)

      const created = await send(a, "https://a.example/v1/merchants", {
        headers: { "api-key": key, "idempotency-key": "same" },
        body: { merchantName: "Only on A", merchantEmail: "a@a.example" }
      })
      expect(created.status).toBe(201)
      // A's key means nothing to B (its verified-key cache is its own), nor A's merchant.
      expect(
        (await send(b, "https://b.example/v1/merchants", { headers: { "api-key": key } })).status
      ).toBe(401)
      const listedOnB = await send(b, "https://b.example/v1/merchants", {
        headers: { "api-key": onB.apiKey }
      })
      expect(listedOnB.status).toBe(200)
      expect(JSON.stringify(listedOnB.body)).not.toContain("Only on A")
      // The same idempotency key on B is a new request there.
      const sameKeyOnB = await send(b, "https://b.example/v1/merchants", {
        headers: { "api-key": other.apiKey, "idempotency-key": "same" },
        body: { merchantName: "On B", merchantEmail: "b@b.example" }
      })
      expect(sameKeyOnB.status).toBe(201)
      expect(sameKeyOnB.body.merchant.id).not.toBe(created.body.merchant.id)
      expect((await a.partners.list()).map((p) => p.name)).toEqual(["A"])
      expect((await b.partners.list()).map((p) => p.name).sort()).toEqual(["B", "B2"])
    } finally {
      await a.close()
      await b.close()
    }
    // Closing one left the other's file whole, and both close cleanly twice.
    await a.close()
  })
})

/** An engine on a SQLite file of its own, in `scope`, and how many long-polls it holds. */
const engineHolding = async (scope: Scope.CloseableScope, name: string, publicUrl: string) => {
  const engine = await Effect.runPromise(
    Scope.extend(
      makePaymentEngine({ storage: SqliteStorage.layer({ filename: file(name) }), publicUrl }),
      scope
    )
  )
  const held = () =>
    Effect.runPromise(
      Effect.provide(
        Effect.flatMap(PaymentEvents, (e) => e.held),
        engine.context
      )
    )
  return { engine, held }
}

/**
 * Resolves once `check` holds; fails after 15 s (generous on a loaded
 * machine, and below the long-polls' own 20 s).
 */
const until = async (check: () => Promise<boolean>, what: string) => {
  const deadline = Date.now() + 15_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe("a client that goes away", () => {
  it("lets go of its long-poll's waiter at once (Node)", async () => {
    const scope = Effect.runSync(Scope.make())
    try {
      const { engine, held } = await engineHolding(scope, "disconnect", "http://127.0.0.1")
      const server = createServer(toNodeHandler(engine))
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      await Effect.runPromise(
        Scope.addFinalizer(
          scope,
          Effect.promise(() => new Promise((r) => server.close(r)))
        )
      )
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

      const { apiKey } = await Effect.runPromise(
        Effect.provide(
          Effect.flatMap(Partners, (p) => p.create({ name: "P" })),
          engine.context
        )
      )
      const post = (path: string, headers: Record<string, string>, body: unknown) =>
        fetch(`${base}${path}`, {
          method: "POST",
          headers: { "api-key": apiKey, "content-type": "application/json", ...headers },
          body: JSON.stringify(body)
        }).then((r) => r.json() as Promise<Json>)
      const merchant = await post(
        "/v1/merchants",
        { "idempotency-key": "m" },
        {
          merchantName: "M",
          merchantEmail: "m@m.example"
        }
      )
      const payment = await post(
        "/v1/payments",
        { "merchant-id": merchant.merchant.id },
        {
          referenceId: "R",
          amount: { unit: "iso4217/USD", value: "100" }
        }
      )

      // A long-poll of up to 20 s, held...
      const polling = httpRequest(
        `${base}/v1/payments/${payment.paymentId}/status?maxPollMs=20000`,
        {
          headers: { "api-key": apiKey, "merchant-id": merchant.merchant.id }
        }
      )
      polling.on("error", () => {})
      polling.end()
      await until(async () => (await held()) === 1, "the long-poll is held")
      // ...then the client goes away: the waiter is gone well before the 20 s.
      const goneAt = Date.now()
      polling.destroy()
      await until(async () => (await held()) === 0, "the waiter is let go")
      expect(Date.now() - goneAt).toBeLessThan(5_000)
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})

describe("a long-poll on the fetch handler", () => {
  it("lets go of its waiter when the request's signal aborts, and is answered when the engine closes", async () => {
    const scope = Effect.runSync(Scope.make())
    let closed = false
    try {
      const { engine, held } = await engineHolding(scope, "fetch-long-poll", "http://pay.test")
      const { apiKey } = await Effect.runPromise(
        Effect.provide(
          Effect.flatMap(Partners, (p) => p.create({ name: "P" })),
          engine.context
        )
      )
      const merchant = await send(engine, "http://pay.test/v1/merchants", {
        headers: { "api-key": apiKey, "idempotency-key": "m" },
        body: { merchantName: "M", merchantEmail: "m@m.example" }
      })
      const merchantId = merchant.body.merchant.id
      const payment = await send(engine, "http://pay.test/v1/payments", {
        headers: { "api-key": apiKey, "merchant-id": merchantId },
        body: { referenceId: "R", amount: { unit: "iso4217/USD", value: "100" } }
      })
      const poll = (signal?: AbortSignal) =>
        engine.fetch(
          new Request(
            `http://pay.test/v1/payments/${payment.body.paymentId}/status?maxPollMs=20000`,
            {
              headers: { "api-key": apiKey, "merchant-id": merchantId },
              ...(signal === undefined ? {} : { signal })
            }
          )
        )

      // Held, then the client goes away: its waiter goes at once.
      const controller = new AbortController()
      void poll(controller.signal).catch(() => {})
      await until(async () => (await held()) === 1, "the long-poll is held")
      controller.abort()
      await until(async () => (await held()) === 0, "the waiter is let go")

      // Held when the engine closes: answered with the status as last read, not left hanging.
      const answered = poll()
      await until(async () => (await held()) === 1, "the second long-poll is held")
      const startedAt = Date.now()
      await Effect.runPromise(Scope.close(scope, Exit.void))
      closed = true
      const response = await answered
      expect(Date.now() - startedAt).toBeLessThan(5_000)
      expect(response.status).toBe(200)
      expect(((await response.json()) as Json).status).toBe("requires_action")
    } finally {
      if (!closed) await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})
