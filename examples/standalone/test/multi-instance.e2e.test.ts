/**
 * Many instances on one PostgreSQL database (issue 4): three standalone
 * server processes on a fresh schema, reached over HTTP on loopback. A
 * long-poll held on one instance wakes on a change made through another;
 * concurrent identical idempotent requests spread over the three create one
 * merchant; expiry is swept once (one payment.expired event per payment, each
 * instance sweeping every 0.5 s);
 * killing an instance mid-work loses nothing;
 * a merchant's status changed by the CLI, or its deletion through one
 * instance, is honoured by every instance's payment creation within a second;
 * an API key revoked through one instance or the CLI, by every instance
 * within five seconds.
 */
import { type ChildProcess, execFile } from "node:child_process"
import { promisify } from "node:util"
import { freshSchema } from "@pay/storage-postgres/testing"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type ApiResponse,
  eventually,
  exactlyAfterQuiet,
  type Json,
  newKey,
  PARTNER_KEY,
  uniqueToken
} from "./e2e-support.js"
import {
  bundle,
  type Instance,
  nodeBinary,
  requireBundles,
  startInstance,
  stopAll
} from "./instances-support.js"
import { cancel, createPaymentRequest, getStatus, sleep, usd } from "./payments-support.js"

const spawned: Array<ChildProcess> = []
const scope = Effect.runSync(Scope.make())
let A: Instance
let B: Instance
let C: Instance
let all: ReadonlyArray<Instance>
let merchantId: string
let database: string

/**
 * Every instance's expiry sweep interval (PAY_EXPIRY_SWEEP_SECONDS; the default is 5 s): short,
 * so that a quiet period of several sweeps of each instance is short too.
 */
const SWEEP_MS = 500
/** The quiet period of the exactly-once expiry check: five sweeps of every instance. */
const SWEEP_QUIET_MS = 5 * SWEEP_MS

beforeAll(async () => {
  requireBundles("main", "cli")
  database = await Effect.runPromise(Scope.extend(freshSchema(), scope))
  const env = {
    PAY_DATABASE: database,
    PAY_BOOTSTRAP_API_KEY: PARTNER_KEY,
    PAY_EXPIRY_SWEEP_SECONDS: String(SWEEP_MS / 1000)
  }
  // The first alone: it migrates the schema and creates the partner with the key.
  A = await startInstance("A", env, spawned)
  expect(A.output()).toContain("First start: created partner")
  // The others find the partner there, and take the same key.
  ;[B, C] = await Promise.all([startInstance("B", env, spawned), startInstance("C", env, spawned)])
  all = [A, B, C]
  for (const instance of [B, C]) expect(instance.output()).not.toContain("First start")
  const created = await A.api.request("POST", "/v1/merchants", {
    idempotencyKey: newKey(),
    body: { merchantName: `Multi ${uniqueToken()}`, merchantEmail: "multi@shop.example" }
  })
  expect(created.status, created.text).toBe(201)
  merchantId = created.body.merchant.id
}, 60_000)

afterAll(async () => {
  await stopAll(spawned)
  // Only once every server let go of its connections.
  await Effect.runPromise(Scope.close(scope, Exit.void))
}, 20_000)

const paymentBody = (referenceId: string, expiresAt?: Date) => ({
  referenceId,
  amount: usd("1050"),
  ...(expiresAt === undefined ? {} : { expiresAt: expiresAt.toISOString() })
})

/** POST /v1/payments on `instance` with its own key; 201 expected. */
const createOn = async (instance: Instance, body: Json): Promise<Json> => {
  const response = await createPaymentRequest(instance.api, body, {
    merchantId,
    idempotencyKey: newKey()
  })
  expect(response.status, `${instance.name}: ${response.text}`).toBe(201)
  return response.body
}

/** How long a retried request keeps getting `idempotency_conflict` before the test gives up. */
const RETRY_FOR_MS = 12_000

const isIdempotencyConflict = (r: ApiResponse) =>
  r.status === 409 && r.body?.code === "idempotency_conflict"

/** How many long-polls `instance` holds now: `pay_long_polls_held` on its /metrics. */
const heldPolls = async (instance: Instance): Promise<number> => {
  const response = await instance.api.get("/metrics", { key: null })
  expect(response.status, `${instance.name} /metrics`).toBe(200)
  const line = response.text.split("\n").find((l) => l.startsWith("pay_long_polls_held "))
  return line === undefined ? 0 : Number(line.slice("pay_long_polls_held ".length))
}

describe("three instances on one PostgreSQL database", () => {
  it("a long-poll held on one instance answers a cancel made through another within a second", async () => {
    const { paymentId } = await createOn(A, paymentBody("multi-poll"))
    const before = new Map([
      [A, await heldPolls(A)],
      [C, await heldPolls(C)]
    ])
    // Held on A and on C; the change is made through B.
    const polls = [A, C].map((instance) => {
      const start = performance.now()
      const poll = getStatus(instance.api, paymentId, merchantId, "?maxPollMs=10000").then(
        (response) => ({ response, at: performance.now(), start })
      )
      return { instance, poll, answered: false }
    })
    for (const p of polls) {
      const seen = () => {
        p.answered = true
      }
      p.poll.then(seen, seen)
    }
    // Each instance holds its poll (its held long-polls counter), not a fixed wait: the cancel
    // then reaches them only by waking them, never as a plain status read made after it.
    await eventually(
      async () => {
        for (const instance of [A, C]) {
          const held = await heldPolls(instance)
          expect(held, `long-polls held on ${instance.name}`).toBe(before.get(instance)! + 1)
        }
      },
      { timeoutMs: 5_000, intervalMs: 20 }
    )
    for (const p of polls)
      expect(p.answered, `${p.instance.name} answered before the change`).toBe(false)

    const cancelledAt = performance.now()
    const cancelled = await cancel(B.api, paymentId, merchantId)
    expect(cancelled.status, cancelled.text).toBe(200)
    expect(cancelled.body.status).toBe("cancelled")

    for (const p of polls) {
      const { response, at } = await p.poll
      expect(response.status, response.text).toBe(200)
      expect(response.body.status, p.instance.name).toBe("cancelled")
      expect(response.body.isFinal).toBe(true)
      const delay = at - cancelledAt
      console.info(
        `long-poll on ${p.instance.name} answered ${delay.toFixed(0)} ms after the cancel on B`
      )
      expect(delay, `delay on ${p.instance.name}`).toBeLessThan(2000)
    }
    // A plain status read (on PostgreSQL, one prepared query without a fiber) on each, twice:
    // the first request with a key checks it, the next finds it verified. Asked with another
    // merchant, the payment is not found.
    for (const instance of all) {
      for (let i = 0; i < 2; i++) {
        const read = await getStatus(instance.api, paymentId, merchantId)
        expect(`${instance.name} ${read.status} ${read.body?.status}`).toBe(
          `${instance.name} 200 cancelled`
        )
      }
      const elsewhere = await getStatus(instance.api, paymentId, "mrch_00000000000000000000")
      expect(`${instance.name} ${elsewhere.status} ${elsewhere.body?.code}`).toBe(
        `${instance.name} 404 payment_not_found`
      )
    }
  }, 15_000)

  it("a merchant suspended by the CLI, or deleted through one instance, is refused by every instance within a second", async () => {
    const created = await B.api.request("POST", "/v1/merchants", {
      idempotencyKey: newKey(),
      body: { merchantName: `Switched ${uniqueToken()}`, merchantEmail: "switch@shop.example" }
    })
    expect(created.status, created.text).toBe(201)
    const shop: string = created.body.merchant.id
    const createFor = (instance: Instance) =>
      createPaymentRequest(instance.api, paymentBody("multi-switch"), {
        merchantId: shop,
        idempotencyKey: newKey()
      })
    /** Each instance's answer to a new payment, once a second has passed since `changedAt`. */
    const answersAfterASecond = async (changedAt: number) => {
      await sleep(Math.max(0, 1000 - (performance.now() - changedAt)))
      return Promise.all(
        all.map(async (i) => {
          const r = await createFor(i)
          return `${i.name} ${r.status} ${r.body?.code ?? ""}`.trim()
        })
      )
    }
    // Every instance has just read the merchant, active.
    for (const r of await Promise.all(all.map(createFor))) expect(r.status, r.text).toBe(201)
    // The CLI is another process: no instance is told.
    const cli = promisify(execFile)(
      nodeBinary,
      [bundle("cli"), "merchants", "set-status", shop, "suspended"],
      {
        env: { ...process.env, PAY_DATABASE: database }
      }
    )
    await cli
    expect(await answersAfterASecond(performance.now())).toEqual([
      "A 409 merchant_inactive",
      "B 409 merchant_inactive",
      "C 409 merchant_inactive"
    ])
    await promisify(execFile)(
      nodeBinary,
      [bundle("cli"), "merchants", "set-status", shop, "active"],
      {
        env: { ...process.env, PAY_DATABASE: database }
      }
    )
    expect(await answersAfterASecond(performance.now())).toEqual(["A 201", "B 201", "C 201"])
    // Deleted through B: B refuses at once, the others within the second.
    const deleted = await B.api.request("DELETE", `/v1/merchants/${shop}`)
    expect(deleted.status, deleted.text).toBe(200)
    const deletedAt = performance.now()
    const onB = await createFor(B)
    expect(`${onB.status} ${onB.body?.code}`).toBe("404 merchant_not_found")
    expect(await answersAfterASecond(deletedAt)).toEqual([
      "A 404 merchant_not_found",
      "B 404 merchant_not_found",
      "C 404 merchant_not_found"
    ])
  })

  it("concurrent identical idempotent requests over the three create exactly one merchant", async () => {
    const name = `Idem ${uniqueToken()}`
    const key = newKey()
    const body = { merchantName: name, merchantEmail: "idem@shop.example" }
    const send = (instance: Instance) =>
      instance.api.request("POST", "/v1/merchants", { idempotencyKey: key, body })
    const answers = await Promise.all(Array.from({ length: 15 }, (_, i) => send(all[i % 3]!)))

    const statuses = answers.map((r) => r.status)
    for (const r of answers) {
      expect(r.status === 201 || isIdempotencyConflict(r), `${r.status} ${r.text}`).toBe(true)
    }
    const created = answers.filter((r) => r.status === 201)
    console.info(`15 identical creates: ${created.length} x 201, ${15 - created.length} x 409`)
    expect(created.length, String(statuses)).toBeGreaterThan(0)
    const first = created[0]!.body
    for (const r of created) expect(r.body).toEqual(first)
    expect(first.merchant.name).toBe(name)

    // Every instance now replays the one answer, and lists the one merchant.
    for (const instance of all) {
      const replay = await send(instance)
      expect(replay.status, `${instance.name}: ${replay.text}`).toBe(201)
      expect(replay.body).toEqual(first)
      const listed = await instance.api.get(`/v1/merchants?search=${encodeURIComponent(name)}`)
      expect(listed.status, listed.text).toBe(200)
      expect(
        listed.body.merchants.map((m: Json) => m.id),
        instance.name
      ).toEqual([first.merchant.id])
    }
  }, 20_000)

  it("an API key revoked through one instance, or by the CLI, is refused by every instance within 5 seconds", async () => {
    const run = promisify(execFile)
    const cli = (...args: ReadonlyArray<string>) =>
      run(nodeBinary, [bundle("cli"), ...args], { env: { ...process.env, PAY_DATABASE: database } })
    const [partner] = JSON.parse((await cli("partners", "list", "--json")).stdout)
    const newApiKey = async (instance: Instance) => {
      const created = await instance.api.request("POST", "/v1/api-keys", {
        idempotencyKey: newKey(),
        body: { name: `shared ${uniqueToken()}` }
      })
      expect(created.status, created.text).toBe(201)
      return { id: created.body.id as string, secret: created.body.secret as string }
    }
    const statuses = (secret: string) =>
      Promise.all(
        all.map(
          async (i) => `${i.name} ${(await i.api.get("/v1/api-keys", { key: secret })).status}`
        )
      )

    // Every instance has just verified (and may remember) the key.
    const viaApi = await newApiKey(A)
    expect(await statuses(viaApi.secret)).toEqual(["A 200", "B 200", "C 200"])
    const revoked = await A.api.request("POST", `/v1/api-keys/${viaApi.id}/revoke`)
    expect(revoked.status, revoked.text).toBe(200)
    const revokedAt = performance.now()
    // The instance that revoked it refuses it at once.
    expect((await A.api.get("/v1/api-keys", { key: viaApi.secret })).status).toBe(401)
    await sleep(Math.max(0, 5000 - (performance.now() - revokedAt)))
    expect(await statuses(viaApi.secret)).toEqual(["A 401", "B 401", "C 401"])

    // The CLI is another process: no instance is told.
    const viaCli = await newApiKey(B)
    expect(await statuses(viaCli.secret)).toEqual(["A 200", "B 200", "C 200"])
    await cli("keys", "revoke", viaCli.id, "--partner", partner.id)
    const cliRevokedAt = performance.now()
    await sleep(Math.max(0, 5000 - (performance.now() - cliRevokedAt)))
    expect(await statuses(viaCli.secret)).toEqual(["A 401", "B 401", "C 401"])
    // The bootstrap key was never touched.
    expect(await statuses(PARTNER_KEY)).toEqual(["A 200", "B 200", "C 200"])
  }, 30_000)

  it("the sweepers of the three record each expiry once", async () => {
    const ref = `sweep-${uniqueToken()}`
    // Far enough ahead for twenty creations at once to arrive before it on a loaded machine
    // (at 2 s, one was refused: "expiresAt must be in the future").
    const expiresAt = new Date(Date.now() + 6000)
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        createOn(all[i % 3]!, paymentBody(`${ref}-${i}`, expiresAt))
      )
    )
    const ids = created.map((p) => p.paymentId as string)
    expect(new Set(ids).size).toBe(20)

    // Each expiry recorded by some sweep (not only seen as overdue), however loaded the machine.
    const recordedAfterMs: Array<number> = []
    await eventually(
      async () => {
        recordedAfterMs.length = 0
        for (const id of ids) {
          const view = await A.api.get(`/v1/payments/${id}`)
          expect(view.body?.status, id).toBe("expired")
          const recordedAt = Date.parse(view.body.lastUpdatedAt)
          expect(recordedAt, id).toBeGreaterThanOrEqual(expiresAt.getTime())
          recordedAfterMs.push(recordedAt - expiresAt.getTime())
        }
      },
      { timeoutMs: 30_000, intervalMs: 100 }
    )
    console.info(
      `expiries recorded ${Math.max(...recordedAfterMs)} ms after their time at most (each instance sweeps every ${SWEEP_MS} ms)`
    )
    // Each expiry once: one payment.expired event per payment, the same on every instance, and
    // still so through a quiet period in which every instance's sweeper (every SWEEP_MS, from
    // PAY_EXPIRY_SWEEP_SECONDS) has had five more turns: none may expire one again.
    const expiredEvents = () =>
      Promise.all(
        all.map(async (instance) => {
          const listed = await instance.api.get("/v1/events?type=payment.expired&limit=100")
          expect(listed.status, `${instance.name}: ${listed.text}`).toBe(200)
          return (listed.body.data as Array<Json>)
            .filter((e) => ids.includes(e.data.object.paymentId))
            .map((e) => `${e.data.object.paymentId} ${e.id}`)
            .sort()
        })
      )
    const [once] = await expiredEvents()
    expect(once!.map((line) => line.split(" ")[0]).sort()).toEqual([...ids].sort())
    await exactlyAfterQuiet(expiredEvents, [once, once, once], {
      quietMs: SWEEP_QUIET_MS,
      what: "the payment.expired events (payment, event) listed by A, B and C"
    })

    for (const id of ids) {
      const seen = await Promise.all(all.map((instance) => instance.api.get(`/v1/payments/${id}`)))
      for (const [i, r] of seen.entries()) {
        expect(r.status, `${all[i]!.name}: ${r.text}`).toBe(200)
        expect(r.body.status, `${id} on ${all[i]!.name}`).toBe("expired")
      }
      // Recorded by a sweep (not only seen as overdue), and the same record everywhere.
      const updated = seen.map((r) => r.body.lastUpdatedAt as string)
      expect(Date.parse(updated[0]!), id).toBeGreaterThanOrEqual(expiresAt.getTime())
      expect(new Set(updated).size, `${id}: ${updated}`).toBe(1)
      // Exactly one expiry transition: one payment.expired event, the same one on every instance.
      const events = await Promise.all(
        all.map(async (instance) => {
          const listed = await instance.api.get(`/v1/events?paymentId=${id}&limit=100`)
          expect(listed.status, `${instance.name}: ${listed.text}`).toBe(200)
          expect(listed.body.nextCursor).toBeNull()
          return (listed.body.data as Array<Json>).filter((e) => e.type === "payment.expired")
        })
      )
      for (const [i, expired] of events.entries()) {
        expect(
          expired.map((e) => e.data.object.status),
          `${id}: payment.expired events listed by ${all[i]!.name}`
        ).toEqual(["expired"])
        expect(expired[0]!.id).toBe(events[0]![0]!.id)
      }
    }

    for (const instance of all) {
      const listed = await instance.api.get(
        `/v1/payments?status=expired&referenceId=${encodeURIComponent(ref)}&limit=200`
      )
      expect(listed.status, listed.text).toBe(200)
      const listedIds: Array<string> = listed.body.data.map((p: Json) => p.paymentId)
      expect(listedIds.length, instance.name).toBe(20)
      expect(new Set(listedIds)).toEqual(new Set(ids))
      expect(listed.body.nextCursor).toBeNull()
    }
  }, 60_000)

  it("killing an instance mid-work loses nothing: retries on another give every key one payment", async () => {
    const prefix = `kill-${uniqueToken()}`
    const requests = Array.from({ length: 30 }, (_, i) => ({
      key: newKey(),
      body: paymentBody(`${prefix}-${i}`)
    }))
    type Outcome = { readonly response?: ApiResponse; readonly error?: unknown }
    const send = (instance: Instance, r: (typeof requests)[number]) =>
      createPaymentRequest(instance.api, r.body, { merchantId, idempotencyKey: r.key })

    let killed = false
    const kill = () => {
      if (killed) return
      killed = true
      C.child.kill("SIGKILL")
    }
    const inFlight = requests.map((r) =>
      send(C, r).then(
        (response): Outcome => {
          // The first answer means the others are being worked on: kill C now.
          kill()
          return { response }
        },
        (error): Outcome => ({ error })
      )
    )
    // Should no answer come at all, C dies anyway.
    const fallback = setTimeout(kill, 2000)
    const outcomes = await Promise.all(inFlight)
    clearTimeout(fallback)
    await C.exited
    expect(C.child.signalCode).toBe("SIGKILL")

    const answered = outcomes.map((o) => o.response?.status === 201)
    const lost = answered.filter((ok) => !ok).length
    console.info(`C killed: ${30 - lost} of 30 answered 201, ${lost} to retry`)
    expect(lost, "requests in flight when C was killed").toBeGreaterThan(0)
    // What did arrive is a whole answer.
    for (const o of outcomes) {
      if (o.response !== undefined) {
        expect(o.response.status, o.response.text).toBe(201)
      }
    }

    // Retried on A with the same key and body; a key still held by C's request is waited out.
    const paymentIds = new Map<string, string>()
    for (const [i, o] of outcomes.entries()) {
      if (o.response?.status === 201) paymentIds.set(requests[i]!.key, o.response.body.paymentId)
    }
    const retryStart = performance.now()
    let conflicts = 0
    const unanswered: Array<string> = []
    await Promise.all(
      requests.map(async (r, i) => {
        if (answered[i]) return
        for (;;) {
          const response = await send(A, r)
          if (response.status === 201) {
            paymentIds.set(r.key, response.body.paymentId)
            return
          }
          const waited = performance.now() - retryStart
          expect(isIdempotencyConflict(response), `${response.status} ${response.text}`).toBe(true)
          if (waited > RETRY_FOR_MS) {
            unanswered.push(
              `${r.body.referenceId}: ${response.status} after ${waited.toFixed(0)} ms`
            )
            return
          }
          conflicts++
          await sleep(250)
        }
      })
    )
    console.info(
      `retries on A done in ${(performance.now() - retryStart).toFixed(0)} ms, ${conflicts} x 409 on the way`
    )
    expect(unanswered, `${unanswered.length} of ${lost} retried keys still refused`).toEqual([])
    expect(paymentIds.size).toBe(30)
    expect(new Set(paymentIds.values()).size).toBe(30)

    // Exactly one payment per key: 30 listed under the prefix, the ones the answers named.
    for (const instance of [A, B]) {
      const listed = await instance.api.get(
        `/v1/payments?referenceId=${encodeURIComponent(prefix)}&limit=200`
      )
      expect(listed.status, listed.text).toBe(200)
      const listedIds: Array<string> = listed.body.data.map((p: Json) => p.paymentId)
      expect(listedIds.length, instance.name).toBe(30)
      expect(new Set(listedIds)).toEqual(new Set(paymentIds.values()))
    }

    // And every key replays its payment on B.
    const replays = await Promise.all(requests.map((r) => send(B, r)))
    for (const [i, replay] of replays.entries()) {
      expect(replay.status, replay.text).toBe(201)
      expect(replay.body.paymentId).toBe(paymentIds.get(requests[i]!.key))
    }
  }, 30_000)
})
