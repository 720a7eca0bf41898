/**
 * The delivery runner on the in-memory stores with a scripted sender and the
 * TestClock: the schedule and the clock are the engine's own settings and
 * Effect's Clock, so three days of retries and five days of failures pass in
 * no time. What the wire looks like, and every store, are the end-to-end
 * suites' (examples/standalone/test/webhook-delivery.e2e.test.ts).
 */
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { makeMemoryStorage } from "@pay/testing"
import { Effect, Fiber, Layer, Logger, LogLevel, TestClock } from "effect"
import { payEngineLayer } from "../Engine.js"
import { type EngineConfig, engineConfig } from "../EngineOptions.js"
import { Merchants } from "../merchants/Merchants.js"
import { Partners } from "../partners/Partners.js"
import { verifyWebhook } from "./Signature.js"
import { WebhookDeliveryStore } from "./WebhookDelivery.js"
import { WebhookEndpointStore } from "./WebhookEndpoint.js"
import { WebhookEndpoints } from "./WebhookEndpoints.js"
import { type WebhookRequest, type WebhookResponse, WebhookSender } from "./WebhookSender.js"
import { WebhookWork } from "./WebhookWork.js"
import { DEFAULT_RETRY_SCHEDULE_MS } from "./WebhookWorkConfig.js"

const DAY = 86_400_000

/** A sender that records every request and answers with `status(nth request)`. */
const scriptedSender = (status: (nth: number) => number | null) => {
  const requests: Array<WebhookRequest & { readonly at: number }> = []
  const layer = Layer.effect(
    WebhookSender,
    Effect.map(Effect.clock, (clock) =>
      WebhookSender.of({
        send: (request) =>
          Effect.sync((): WebhookResponse => {
            requests.push({ ...request, at: clock.unsafeCurrentTimeMillis() })
            const answer = status(requests.length)
            return answer === null
              ? { status: null, body: "", retryAfter: null, error: "refused", durationMs: 1 }
              : { status: answer, body: "", retryAfter: null, error: null, durationMs: 1 }
          })
      })
    )
  )
  return { requests, layer }
}

/** A poll past what an option may say (an hour): only the commit's signal can send at once. */
const withPollMs = (config: EngineConfig, pollMs: number | undefined): EngineConfig =>
  pollMs === undefined
    ? config
    : { ...config, webhookDelivery: { ...config.webhookDelivery, pollMs } }

const engine = (sender: Layer.Layer<WebhookSender>, pollMs?: number) =>
  Layer.merge(
    payEngineLayer({
      storage: makeMemoryStorage(),
      config: withPollMs(
        engineConfig({ publicUrl: "http://pay.test", maxBodyBytes: 1024 }),
        pollMs
      ),
      webhookSender: sender
    }),
    Logger.minimumLogLevel(LogLevel.Error)
  )

/** A partner with one endpoint, and a merchant change that makes an event. */
const world = Effect.gen(function* () {
  const { partner } = yield* (yield* Partners).create({ name: "Hooks" })
  const { endpoint, secret } = yield* (yield* WebhookEndpoints).create(partner, {
    url: "https://hooks.test/pay"
  })
  const merchants = yield* Merchants
  const change = (name: string) =>
    merchants.create(partner, { name, email: "till@shop.test", iconUrl: null })
  return { partner, endpoint, secret, change }
})

const drain = WebhookWork.use((w) => w.drain)

/** Real time passing (the TestClock stands still meanwhile). */
const realPause = (ms: number) =>
  Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

describe("webhook delivery runner", () => {
  it.effect(
    "sends at once when a change of this process commits events, without waiting for the poll",
    () => {
      const sender = scriptedSender(() => 204)
      return Effect.gen(function* () {
        const { change } = yield* world
        // The poll is an hour, and the TestClock never moves: only the signal can wake the loop.
        const loop = yield* Effect.fork(WebhookWork.use((w) => w.runForever))
        yield* realPause(20)
        expect(sender.requests).toHaveLength(0)
        yield* change("Woken")
        for (let i = 0; i < 100 && sender.requests.length === 0; i++) yield* realPause(10)
        expect(sender.requests).toHaveLength(1)
        yield* change("Woken again")
        for (let i = 0; i < 100 && sender.requests.length === 1; i++) yield* realPause(10)
        expect(sender.requests).toHaveLength(2)
        yield* Fiber.interrupt(loop)
      }).pipe(Effect.provide(engine(sender.layer, 3_600_000)))
    }
  )

  it.effect("retries on the schedule by the engine's clock, then fails for good", () => {
    const sender = scriptedSender(() => 500)
    return Effect.gen(function* () {
      const { endpoint, secret, change } = yield* world
      yield* change("Retried")
      yield* drain
      expect(sender.requests).toHaveLength(1)
      // Every wait of the schedule (±20%): nothing before 0.8 of it, one attempt by 1.2 of it.
      for (const [i, wait] of DEFAULT_RETRY_SCHEDULE_MS.entries()) {
        yield* TestClock.adjust(wait * 0.8 - 1)
        yield* drain
        expect(sender.requests).toHaveLength(i + 1)
        yield* TestClock.adjust(wait * 0.4 + 1)
        yield* drain
        expect(sender.requests).toHaveLength(i + 2)
      }
      const [record] = yield* (yield* WebhookDeliveryStore).list({
        endpointId: endpoint.id,
        limit: 10
      })
      expect(record!.delivery.state).toBe("failed")
      expect(record!.attempts).toHaveLength(DEFAULT_RETRY_SCHEDULE_MS.length + 1)
      // Nothing more, ever.
      yield* TestClock.adjust(30 * DAY)
      yield* drain
      expect(sender.requests).toHaveLength(DEFAULT_RETRY_SCHEDULE_MS.length + 1)
      // Each attempt signed with the endpoint's secret, at that attempt's time, the same body.
      const bodies = new Set(sender.requests.map((r) => r.body))
      expect(bodies.size).toBe(1)
      for (const r of sender.requests) {
        expect(Number(r.headers["webhook-timestamp"])).toBe(Math.floor(r.at / 1000))
        yield* Effect.promise(() =>
          verifyWebhook(r.body, r.headers, secret, { now: new Date(r.at) })
        )
      }
    }).pipe(Effect.provide(engine(sender.layer)))
  })

  it.effect("disables an endpoint after five days of nothing but failures, and not before", () => {
    const sender = scriptedSender(() => null)
    return Effect.gen(function* () {
      const { endpoint, change } = yield* world
      const status = Effect.map(
        (yield* WebhookEndpointStore).find(endpoint.id),
        (e) => e._tag === "Some" && e.value.status
      )
      // A new event each day: each fails (its retries too) for four days and 23 hours.
      for (let day = 0; day < 5; day++) {
        yield* change(`Day ${day}`)
        yield* drain
        yield* TestClock.adjust(day === 4 ? DAY - 3_600_000 : DAY)
        yield* drain
      }
      expect(yield* status).toBe("enabled")
      yield* TestClock.adjust(2 * 3_600_000)
      yield* change("Day 5")
      yield* drain
      expect(yield* status).toBe("disabled")
      const found = yield* (yield* WebhookEndpointStore).find(endpoint.id)
      expect(found._tag === "Some" && found.value.disabledReason).toContain(
        "every delivery failed for 5 days"
      )
      // Disabled: the next change's delivery is not even queued.
      const before = sender.requests.length
      yield* change("After")
      yield* TestClock.adjust(DAY)
      yield* drain
      expect(sender.requests).toHaveLength(before)
    }).pipe(Effect.provide(engine(sender.layer)))
  })

  it.effect(
    "one partner's hanging endpoints hold at most perPartner slots: another partner's deliveries keep flowing",
    () => {
      // Loopback receivers: /hang/… never answers until released, /ok answers at once.
      const hanging: Array<ServerResponse> = []
      const delivered: Array<string> = []
      const seen = { hang: 0, ok: 0 }
      let onRequest = () => {}
      const server = createServer((req, res) => {
        req.resume()
        if (req.url?.startsWith("/hang")) {
          seen.hang++
          hanging.push(res)
        } else {
          seen.ok++
          delivered.push(req.url ?? "")
          res.writeHead(204).end()
        }
        onRequest()
      })
      const until = (done: () => boolean) =>
        Effect.async<void>((resume) => {
          const check = () => {
            if (done()) resume(Effect.void)
          }
          onRequest = check
          check()
        })
      const sender = Layer.succeed(
        WebhookSender,
        WebhookSender.of({
          // The endpoints' hosts are names; each is sent to the loopback receiver, path kept.
          send: (request) =>
            Effect.promise(async (): Promise<WebhookResponse> => {
              const { port } = server.address() as AddressInfo
              const url = new URL(request.url)
              const response = await fetch(`http://127.0.0.1:${port}${url.pathname}`, {
                method: "POST",
                headers: request.headers,
                body: request.body
              }).catch(() => undefined)
              await response?.arrayBuffer().catch(() => undefined)
              return {
                status: response?.status ?? null,
                body: "",
                retryAfter: null,
                error: response === undefined ? "released" : null,
                durationMs: 1
              }
            })
        })
      )
      return Effect.gen(function* () {
        yield* Effect.promise(() => new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok)))
        const partners = yield* Partners
        const endpoints = yield* WebhookEndpoints
        const merchants = yield* Merchants
        const { partner: slow } = yield* partners.create({ name: "Slow" })
        const { partner: quick } = yield* partners.create({ name: "Quick" })
        for (const n of [1, 2, 3, 4]) {
          yield* endpoints.create(slow, { url: `https://slow${n}.hooks.test/hang/${n}` })
        }
        yield* endpoints.create(quick, { url: "https://quick.hooks.test/ok" })
        const loop = yield* Effect.fork(WebhookWork.use((w) => w.runForever))
        // 10 events to each of the slow partner's 4 endpoints: 40 deliveries that hang.
        for (let i = 0; i < 10; i++) {
          yield* merchants.create(slow, { name: `Slow ${i}`, email: "a@shop.test", iconUrl: null })
        }
        // Its in-flight cap (16, below the 32 slots and its endpoints' 4 × 8) fills.
        yield* until(() => seen.hang >= 16)
        // The quick partner's deliveries still go, one after another.
        for (let i = 0; i < 3; i++) {
          yield* merchants.create(quick, {
            name: `Quick ${i}`,
            email: "b@shop.test",
            iconUrl: null
          })
          yield* until(() => seen.ok >= i + 1)
        }
        expect(delivered).toEqual(["/ok", "/ok", "/ok"])
        expect(seen.hang).toBe(16)
        yield* Fiber.interrupt(loop)
      }).pipe(
        Effect.ensuring(
          Effect.promise(
            () =>
              new Promise<void>((ok) => {
                for (const res of hanging) res.destroy()
                server.closeAllConnections()
                server.close(() => ok())
              })
          )
        ),
        Effect.provide(engine(sender, 3_600_000))
      )
    },
    30_000
  )

  it.effect("caps one partner's live endpoints (maxEndpointsPerPartner), naming the cap", () => {
    const config = engineConfig({ publicUrl: "http://pay.test", maxBodyBytes: 1024 })
    return Effect.gen(function* () {
      const { partner } = yield* (yield* Partners).create({ name: "Many" })
      const { partner: other } = yield* (yield* Partners).create({ name: "Other" })
      const endpoints = yield* WebhookEndpoints
      const first = yield* endpoints.create(partner, { url: "https://one.hooks.test/" })
      yield* endpoints.create(partner, { url: "https://two.hooks.test/" })
      const refused = yield* Effect.flip(
        endpoints.create(partner, { url: "https://three.hooks.test/" })
      )
      expect(refused).toMatchObject({ _tag: "InvalidInput", issues: [{ field: "url" }] })
      expect(refused.message).toContain("maxEndpointsPerPartner, 2")
      // Another partner has its own; a deleted endpoint frees its place.
      yield* endpoints.create(other, { url: "https://other.hooks.test/" })
      yield* endpoints.remove(partner, first.endpoint.id)
      yield* endpoints.create(partner, { url: "https://three.hooks.test/" })
    }).pipe(
      Effect.provide(
        Layer.merge(
          payEngineLayer({
            storage: makeMemoryStorage(),
            config: {
              ...config,
              webhookDelivery: { ...config.webhookDelivery, maxEndpointsPerPartner: 2 }
            },
            webhookSender: scriptedSender(() => 204).layer
          }),
          Logger.minimumLogLevel(LogLevel.Error)
        )
      )
    )
  })
})
