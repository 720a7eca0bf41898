/**
 * The webhook limit "at most 8 deliveries in flight to one endpoint at once, across every
 * instance" (docs/webhooks.md, `perEndpoint`), with two real server processes (`npm start`'s
 * bundle) on one PostgreSQL schema, counted where it matters: at the receiving end, a loopback
 * server counting the requests it has open. The receiver holds every request open, so what is
 * claimed stays in flight: each instance is made to claim some of the first eight (a test
 * event through its own API wakes it at once), 24 more events fall due through both, and
 * through a quiet period in which both instances poll (every 250 ms) with deliveries due and
 * room under their own concurrency (32 each), the receiver still has exactly 8 open. Then it
 * answers: every event is delivered, each once, and never more than 8 were open at once.
 */
import type { ChildProcess } from "node:child_process"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { freshSchema } from "@pay/storage-postgres/testing"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually, exactlyAfterQuiet, type Json, newKey, PARTNER_KEY } from "./e2e-support.js"
import { type Instance, requireServer, startInstance, stopAll } from "./instances-support.js"

/** The engine's default `perEndpoint` (core webhooks/WebhookWorkConfig.ts), as docs/webhooks.md says. */
const LIMIT = 8
/** Events made through the two instances once the first eight are held. */
const MORE = 24

const ENV = { PAY_BOOTSTRAP_API_KEY: PARTNER_KEY, PAY_FETCH_ALLOW_PRIVATE: "1" }

/**
 * A receiver that counts the requests it has open and the most there ever were, records the
 * event id of each, and while `holding` answers none of them until `release`; once released it
 * answers each at once with 200.
 */
const startCountingReceiver = async () => {
  let open = 0
  let max = 0
  let holding = true
  const held: Array<() => void> = []
  const received: Array<string> = []
  /** Event id → how many times it was answered 200. */
  const answered = new Map<string, number>()
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    open++
    max = Math.max(max, open)
    response.on("close", () => {
      open--
    })
    const chunks: Array<Buffer> = []
    request.on("data", (c: Buffer) => chunks.push(c))
    request.on("end", () => {
      const id = String(request.headers["webhook-id"] ?? "")
      received.push(id)
      const answer = () => {
        response.on("finish", () => answered.set(id, (answered.get(id) ?? 0) + 1))
        response.writeHead(200).end()
      }
      if (holding) held.push(answer)
      else answer()
    })
  })
  // Its connections, to end at close (as webhook-receiver.ts does, on Node and Bun alike).
  const sockets = new Set<Socket>()
  server.on("connection", (socket: Socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    counts: () => ({ open, max, received: received.length }),
    received: () => [...received],
    answered,
    release: () => {
      holding = false
      for (const answer of held.splice(0)) answer()
    },
    close: () =>
      new Promise<void>((resolve) => {
        holding = false
        for (const answer of held.splice(0)) answer()
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}

/** The events an instance's log says it delivered ("webhook attempt", state delivered). */
const deliveredBy = (instance: Instance): ReadonlySet<string> => {
  const ids = new Set<string>()
  for (const line of instance.output().split("\n")) {
    if (!line.startsWith("{")) continue
    try {
      const entry = JSON.parse(line)
      if (entry.message === "webhook attempt" && entry.state === "delivered") ids.add(entry.eventId)
    } catch {
      // Not a log line of the engine's.
    }
  }
  return ids
}

describe("two instances on one PostgreSQL schema: never more than the limit in flight to one endpoint", () => {
  const spawned: Array<ChildProcess> = []
  const scope = Effect.runSync(Scope.make())
  let A: Instance
  let B: Instance
  let receiver: Awaited<ReturnType<typeof startCountingReceiver>>

  beforeAll(async () => {
    requireServer()
    const database = await Effect.runPromise(Scope.extend(freshSchema(), scope))
    const env = { ...ENV, PAY_DATABASE: database }
    // One at a time: the first start migrates the schema and makes the partner both use.
    A = await startInstance("A", env, spawned)
    B = await startInstance("B", env, spawned)
    receiver = await startCountingReceiver()
  }, 60_000)

  afterAll(async () => {
    await receiver?.close()
    await stopAll(spawned)
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 30_000)

  it(`holds ${LIMIT} open at the receiver, no more, while both have deliveries due; then delivers every one, once`, async () => {
    const created = await A.api.request("POST", "/v1/webhook-endpoints", {
      idempotencyKey: newKey(),
      body: { url: receiver.url }
    })
    expect(created.status, created.text).toBe(201)
    const endpointId: string = created.body.id

    // The first eight: a test event through each instance in turn, each held at the receiver
    // before the next is made. The test route wakes the instance it is called on, which claims
    // it at once (the other finds it at its next poll, up to 250 ms later, if at all first).
    const pings: Array<string> = []
    for (let i = 0; i < LIMIT; i++) {
      const via = i % 2 === 0 ? A : B
      const ping = await via.api.request("POST", `/v1/webhook-endpoints/${endpointId}/test`)
      expect(ping.status, ping.text).toBe(202)
      pings.push(ping.body.event.id)
      await eventually(async () => expect(receiver.counts().open).toBe(i + 1))
    }

    // More events through both: due now, with room under each instance's own concurrency.
    const merchants = await Promise.all(
      Array.from({ length: MORE }, async (_, i) => {
        const made = await (i % 2 === 0 ? A : B).api.request("POST", "/v1/merchants", {
          idempotencyKey: newKey(),
          body: { merchantName: `In flight ${i}`, merchantEmail: "limit@shop.example" }
        })
        expect(made.status, made.text).toBe(201)
        return made.body.merchant as Json
      })
    )
    expect(merchants).toHaveLength(MORE)
    // Queued: the eight pings and a merchant.created for each merchant.
    const listed = await A.api.get(`/v1/webhook-endpoints/${endpointId}/deliveries?limit=100`)
    expect(listed.status, listed.text).toBe(200)
    expect(listed.body.data.map((d: Json) => d.eventType).sort()).toEqual([
      ...Array.from({ length: MORE }, () => "merchant.created"),
      ...Array.from({ length: LIMIT }, () => "ping")
    ])
    const events: ReadonlyArray<string> = listed.body.data.map((d: Json) => d.eventId)

    // Both instances poll with deliveries due: the receiver still has the limit open, not one
    // more, through the quiet period.
    await exactlyAfterQuiet(
      () => receiver.counts(),
      { open: LIMIT, max: LIMIT, received: LIMIT },
      { what: "requests open at the receiver, the most at once, received" }
    )

    // Answered: the rest go, never more than the limit at once, and each event is delivered
    // once (still once through the quiet period after the last).
    receiver.release()
    await exactlyAfterQuiet(
      () => ({
        delivered: [...receiver.answered.keys()].sort(),
        eachOnce: [...receiver.answered.values()].every((n) => n === 1),
        received: receiver.counts().received
      }),
      { delivered: [...events].sort(), eachOnce: true, received: LIMIT + MORE },
      { timeoutMs: 30_000, what: "the events answered 200, each once; the requests received" }
    )
    expect(receiver.counts().max).toBe(LIMIT)

    // Both took part, as the engines' logs say (each logs a delivery once it has recorded it):
    // the eight held at once came from both, and every event was delivered by one of them, none
    // by both; none is left pending.
    const firstEight = receiver.received().slice(0, LIMIT)
    expect(new Set(firstEight)).toEqual(new Set(pings))
    await eventually(async () => {
      const byA = deliveredBy(A)
      const byB = deliveredBy(B)
      expect(new Set([...byA, ...byB])).toEqual(new Set(events))
      expect([...byA].filter((id) => byB.has(id))).toEqual([])
      expect(
        firstEight.filter((id) => byA.has(id)).length,
        "of the first eight, sent by A"
      ).toBeGreaterThan(0)
      expect(
        firstEight.filter((id) => byB.has(id)).length,
        "of the first eight, sent by B"
      ).toBeGreaterThan(0)
      const pending = await B.api.get(
        `/v1/webhook-endpoints/${endpointId}/deliveries?status=pending&limit=100`
      )
      expect(pending.body.data).toEqual([])
    })
  }, 90_000)
})
