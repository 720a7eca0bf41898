/**
 * Webhook delivery across processes: the server as its own process (`npm
 * start`'s bundle) killed with SIGKILL while a delivery is on its way, then
 * started again on the same SQLite file; and two instances on one PostgreSQL
 * schema sharing the deliveries, one of them killed mid-send. The receiver
 * is real, on loopback, and counts what it was sent and what it answered:
 * every event is answered 2xx exactly once, nothing is lost.
 */
import type { ChildProcess } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freshSchema } from "@pay/storage-postgres/testing"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { exactlyAfterQuiet, type Json, newKey, PARTNER_KEY } from "./e2e-support.js"
import { type Instance, requireServer, startInstance, stopAll } from "./instances-support.js"
import { startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js"

const spawned: Array<ChildProcess> = []
const receivers: Array<WebhookReceiver> = []

const ENV = {
  PAY_BOOTSTRAP_API_KEY: PARTNER_KEY,
  PAY_FETCH_ALLOW_PRIVATE: "1",
  PAY_WEBHOOK_RETRY_SCHEDULE: "1,1,1,1,1",
  PAY_WEBHOOK_LEASE_SECONDS: "2"
}

beforeAll(() => requireServer(), 60_000)

afterAll(async () => {
  await stopAll(spawned)
  await Promise.all(receivers.map((r) => r.close()))
}, 20_000)

const kill = async (instance: Instance) => {
  instance.child.kill("SIGKILL")
  await instance.exited
}

const register = async (instance: Instance, receiver: WebhookReceiver) => {
  const created = await instance.api.request("POST", "/v1/webhook-endpoints", {
    idempotencyKey: newKey(),
    body: { url: receiver.url }
  })
  expect(created.status, created.text).toBe(201)
  receiver.secrets.push(created.body.secret)
  return created.body as Json
}

const createMerchant = async (instance: Instance, name: string) => {
  const created = await instance.api.request("POST", "/v1/merchants", {
    idempotencyKey: newKey(),
    body: { merchantName: name, merchantEmail: "hooks@shop.example" }
  })
  expect(created.status, `${instance.name}: ${created.text}`).toBe(201)
  return created.body.merchant as Json
}

/** Event ids the receiver answered 2xx, each with how many times. */
const answeredOk = (receiver: WebhookReceiver) => {
  const counts = new Map<string, number>()
  for (const r of receiver.received) {
    if (r.answered !== null && r.answered >= 200 && r.answered < 300) {
      counts.set(r.id, (counts.get(r.id) ?? 0) + 1)
    }
  }
  return counts
}

describe("webhook delivery survives SIGKILL (SQLite file)", () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "pay-webhook-kill-"))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it("a delivery on its way when the server is killed is sent after the restart, and answered once", async () => {
    const env = { ...ENV, PAY_DATABASE: join(dir, "pay.sqlite") }
    const receiver = await startWebhookReceiver()
    receivers.push(receiver)
    // The very first request (the first event's first attempt) is held: the server is killed
    // with it in flight. Every other request, the second event's first attempt too, is answered.
    receiver.answer = (r) => (r === receiver.received[0] ? { hang: true } : { status: 200 })
    const first = await startInstance("first", env, spawned)
    const endpoint = await register(first, receiver)
    const merchant = await createMerchant(first, "Killed mid-send")
    await receiver.until((r) => r.length === 1)
    const eventId = receiver.received[0]!.id
    await kill(first)
    // A change committed, its delivery not yet made, when the next one is killed too.
    await receiver.goAway()
    const second = await startInstance("second", env, spawned)
    const other = await createMerchant(second, "Killed before sending")
    await kill(second)
    await receiver.reopen()

    const third = await startInstance("third", env, spawned)
    // Each event answered once, and still once through the quiet period after the last: the
    // first event's held attempt, then its retry; the second event's first attempt.
    await exactlyAfterQuiet(
      () =>
        [merchant.id, other.id].map((id) => [
          id,
          receiver.received.filter((r) => r.event.data.object.id === id).map((r) => r.answered)
        ]),
      [
        [merchant.id, [null, 200]],
        [other.id, [200]]
      ],
      { timeoutMs: 20_000, what: "the attempts of each event (object id, answers)" }
    )
    const ok = answeredOk(receiver)
    expect([...ok.values()]).toEqual([1, 1])
    const types = receiver.received
      .filter((r) => r.answered === 200)
      .map((r) => r.event.data.object.id)
      .sort()
    expect(types).toEqual([merchant.id, other.id].sort())
    expect(receiver.received.every((r) => r.verifiedBy.length === 1)).toBe(true)
    const listed = await third.api.get(`/v1/webhook-endpoints/${endpoint.id}/deliveries`)
    const record = listed.body.data.find((d: Json) => d.eventId === eventId)
    expect(record.status).toBe("delivered")
    await kill(third)
  }, 60_000)
})

describe("two instances on one PostgreSQL database share webhook delivery", () => {
  const scope = Effect.runSync(Scope.make())
  let A: Instance
  let B: Instance
  let env: NodeJS.ProcessEnv

  beforeAll(async () => {
    const database = await Effect.runPromise(Scope.extend(freshSchema(), scope))
    // A lease of 10 s, not ENV's 2: a claim's sends on a loaded two-core machine have been seen
    // to outlast 2 s, and the other instance then rightly took the lapsed deliveries over and
    // sent them again (49 requests for 40 events), which is not what this test is about.
    env = { ...ENV, PAY_WEBHOOK_LEASE_SECONDS: "10", PAY_DATABASE: database }
    A = await startInstance("A", env, spawned)
    B = await startInstance("B", env, spawned)
  }, 60_000)

  afterAll(async () => {
    await stopAll(spawned)
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 20_000)

  it("each of 40 events made through both is delivered exactly once; the deliveries of an instance killed mid-send are taken over", async () => {
    const receiver = await startWebhookReceiver()
    receivers.push(receiver)
    receiver.answer = () => ({ status: 200, delayMs: 20 })
    await register(A, receiver)
    const made = await Promise.all(
      Array.from({ length: 40 }, (_, i) => createMerchant(i % 2 === 0 ? A : B, `Shared ${i}`))
    )
    // Both instances poll every 250 ms: a double send would show within the quiet period.
    await exactlyAfterQuiet(
      () => ({
        requests: receiver.received.length,
        answeredOk: answeredOk(receiver).size,
        answeredOnce: [...answeredOk(receiver).values()].every((n) => n === 1)
      }),
      { requests: 40, answeredOk: 40, answeredOnce: true },
      { timeoutMs: 30_000, what: "the requests, the events answered 2xx, each once" }
    )
    expect(receiver.received).toHaveLength(40)
    expect([...answeredOk(receiver).values()].every((n) => n === 1)).toBe(true)
    expect(new Set(receiver.received.map((r) => r.event.data.object.id))).toEqual(
      new Set(made.map((m) => m.id))
    )

    // A alone holds the next one in flight when it is killed: B, started again, takes it over
    // once A's lease (10 s) has run out, and it is answered once.
    await kill(B)
    const before = receiver.received.length
    // Only the next request (the held event's first attempt) hangs.
    receiver.answer = (r) => (r === receiver.received[before] ? { hang: true } : { status: 200 })
    const held = await createMerchant(A, "Held")
    await receiver.until((r) => r.length === before + 1)
    const heldId = receiver.received[before]!.id
    await kill(A)
    B = await startInstance("B again", env, spawned)
    // Sent again once, answered once, and nothing more through the quiet period after it.
    await exactlyAfterQuiet(() => receiver.of(heldId).map((r) => r.answered), [null, 200], {
      timeoutMs: 30_000,
      what: "the held event's attempts"
    })
    expect(receiver.received).toHaveLength(before + 2)
    expect(receiver.of(heldId)[1]!.event.data.object.id).toBe(held.id)
  }, 120_000)
})
