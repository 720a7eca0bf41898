/**
 * PgPaymentEvents between two engine instances (two pools, two listeners) on
 * the test PostgreSQL, in real time. NOTIFY reaches the whole database, so
 * each test has a channel and listener names of its own, beside its own schema.
 */

import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { PaymentEvents, type PaymentId } from "@pay/core"
import { Context, Effect, Fiber, Layer, Option, Redacted } from "effect"
import { freshSchema } from "../test/TestDatabase.js"
import { withAdmin } from "../test/TestServer.js"
import * as PgPaymentEvents from "./PgPaymentEvents.js"

type Events = Context.Tag.Service<PaymentEvents>

const unique = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`
const paymentId = () => `pay_${unique()}` as PaymentId

/** Two instances on one fresh schema and channel; their listener connections' names. */
const twoInstances = Effect.gen(function* () {
  const url = yield* freshSchema()
  const run = unique()
  const instance = (name: string) =>
    Effect.map(
      Layer.build(
        PgPaymentEvents.layer({
          channel: `pay_events_${run}`,
          applicationName: `pay-events-${run}-${name}`,
          heartbeat: "200 millis",
          maxBackoff: "400 millis"
        }).pipe(
          Layer.provide(
            PgClient.layer({ url: Redacted.make(url), applicationName: `pay-${run}-${name}` })
          )
        )
      ),
      Context.get(PaymentEvents)
    )
  return {
    url,
    a: yield* instance("a"),
    b: yield* instance("b"),
    listenerOfA: `pay-events-${run}-a`
  }
})

/**
 * How soon a woken wait must end: far below the waits' own timeouts (5 s), so
 * only a wake-up can meet it, and generous for a loaded 2-core machine.
 */
const PROMPT_MS = 2_000

/** Waits for `id`'s next change on `events`; the fiber's result is how long it waited. */
const waitFor = (events: Events, id: PaymentId, timeoutMs: number) =>
  Effect.gen(function* () {
    const since = yield* events.position
    const start = Date.now()
    return yield* Effect.fork(
      Effect.map(events.awaitChange(id, since, timeoutMs), () => Date.now() - start)
    )
  })

const published = (events: Events, id: PaymentId) =>
  events.publish({ paymentId: id, status: "succeeded" })

describe("PgPaymentEvents", () => {
  it.scopedLive(
    "wakes a waiter on one instance when another publishes its payment, and only that waiter",
    () =>
      Effect.gen(function* () {
        const { a, b } = yield* twoInstances
        const changed = paymentId()
        const other = paymentId()
        const waiter = yield* waitFor(a, changed, 5_000)
        const bystander = yield* waitFor(a, other, 1_500)
        yield* Effect.sleep("50 millis")
        yield* published(b, changed)
        const waited = yield* Fiber.join(waiter)
        expect(waited).toBeLessThan(PROMPT_MS)
        expect(yield* Fiber.poll(bystander)).toEqual(Option.none())
        expect(yield* Fiber.join(bystander)).toBeGreaterThanOrEqual(1_450)
      }),
    10_000
  )

  it.scopedLive(
    "ends at once a wait from a position before a change already received",
    () =>
      Effect.gen(function* () {
        const { a, b } = yield* twoInstances
        const id = paymentId()
        const since = yield* a.position
        yield* published(b, id)
        // Received while the long-poll was reading the payment, before it began to wait.
        yield* Effect.sleep("300 millis")
        const start = Date.now()
        yield* a.awaitChange(id, since, 5_000)
        expect(Date.now() - start).toBeLessThan(PROMPT_MS)
      }),
    10_000
  )

  it.scopedLive(
    "wakes a wait held without a fiber (waitChange) on another instance's change",
    () =>
      Effect.gen(function* () {
        const { a, b } = yield* twoInstances
        const id = paymentId()
        const start = Date.now()
        const woken = new Promise<number>((resolve) => {
          a.waitChange(id, a.positionNow(), 5_000, () => resolve(Date.now() - start))
        })
        expect(yield* a.held).toBe(1)
        yield* published(b, id)
        expect(yield* Effect.promise(() => woken)).toBeLessThan(1_000)
        expect(yield* a.held).toBe(0)
      }),
    10_000
  )

  it.scopedLive(
    "ends a wait at its timeout when nothing is published",
    () =>
      Effect.gen(function* () {
        const { a } = yield* twoInstances
        const waited = yield* Fiber.join(yield* waitFor(a, paymentId(), 700))
        expect(waited).toBeGreaterThanOrEqual(650)
        expect(waited).toBeLessThan(700 + PROMPT_MS)
      }),
    10_000
  )

  it.scopedLive(
    "wakes the publisher's own waiters at once, and not again on the echo",
    () =>
      Effect.gen(function* () {
        const { a } = yield* twoInstances
        const id = paymentId()
        const first = yield* waitFor(a, id, 5_000)
        yield* Effect.sleep("20 millis")
        yield* published(a, id)
        expect(yield* Fiber.join(first)).toBeLessThan(PROMPT_MS)
        // A long-poll started after the change: the notification coming back must not end it.
        const next = yield* waitFor(a, id, 600)
        expect(yield* Fiber.join(next)).toBeGreaterThanOrEqual(550)
      }),
    10_000
  )

  it.scopedLive(
    "listens again after its connection is killed: earlier waiters wake once, later changes arrive",
    () =>
      Effect.gen(function* () {
        const { url, a, b, listenerOfA } = yield* twoInstances
        const id = paymentId()
        const before = yield* waitFor(a, id, 8_000)
        const quiet = yield* waitFor(a, paymentId(), 8_000)
        const killed = yield* withAdmin(
          url,
          (sql) => sql<{ readonly pid: number }>`SELECT pid, pg_terminate_backend(pid)
            FROM pg_stat_activity WHERE application_name = ${listenerOfA}
            AND query ILIKE 'LISTEN%'`
        )
        expect(killed).toHaveLength(1)
        // Sent while A cannot hear it: A must not stay asleep because of that.
        yield* published(b, id)
        expect(yield* Fiber.join(before)).toBeLessThan(3_000)
        // Nothing was published for this one: only the reconnection wakes it.
        expect(yield* Fiber.join(quiet)).toBeLessThan(3_000)

        const relistened = yield* withAdmin(
          url,
          (sql) => sql<{ readonly pid: number }>`SELECT pid FROM pg_stat_activity
            WHERE application_name = ${listenerOfA} AND query ILIKE 'LISTEN%'`
        )
        expect(relistened).toHaveLength(1)
        expect(relistened[0]?.pid).not.toBe(killed[0]?.pid)

        const after = yield* waitFor(a, id, 5_000)
        yield* Effect.sleep("50 millis")
        yield* published(b, id)
        expect(yield* Fiber.join(after)).toBeLessThan(PROMPT_MS)
      }),
    10_000
  )
})
