/**
 * The per-partner cap of webhook deliveries in flight (`perPartner`) holds
 * across instances on PostgreSQL: two claims open at once, each locking
 * different endpoints of one partner, lease no more than the cap between
 * them. The first claim is held open (its lease write waits on a row a third
 * transaction locks) while the second runs, so the overlap is certain, not
 * left to timing.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { WebhookDeliveryStore } from "@pay/core"
import { Deferred, Effect, Fiber, Schedule } from "effect"
import { freshStorage } from "../test/TestDatabase.js"

const PARTNER = "ptnr_claimcap01"
const ENDPOINTS = ["whep_claimcap01", "whep_claimcap02", "whep_claimcap03"] as const
const T0 = new Date("2026-11-01T00:00:00Z")
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000)

/** Three endpoints of one partner, four pending deliveries each; the third's become due later. */
const seed = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const endpoint of ENDPOINTS) {
    yield* sql`INSERT INTO webhook_endpoints (id, partner_id, url, api_version, status, secret,
        created_at, updated_at)
      VALUES (${endpoint}, ${PARTNER}, 'https://hooks.test/', '2026-02-18', 'enabled', 'sealed',
        ${T0}, ${T0})`
  }
  let seq = 0
  for (const [e, endpoint] of ENDPOINTS.entries()) {
    for (let i = 0; i < 4; i++) {
      seq++
      const event = `evt_claimcap${String(seq).padStart(4, "0")}`
      yield* sql`INSERT INTO events (id, partner_id, type, data, created_at)
        VALUES (${event}, ${PARTNER}, 'payment.succeeded', '{}', ${T0})`
      yield* sql`INSERT INTO webhook_deliveries (endpoint_id, event_id, event_seq, state, attempts,
          next_attempt_at, created_at)
        VALUES (${endpoint}, ${event}, ${seq}, 'pending', 0, ${e === 2 ? at(10) : T0}, ${T0})`
    }
  }
})

describe("PostgreSQL webhook claims and the per-partner cap", () => {
  it.live(
    "two claims open at once on different endpoints of one partner lease no more than perPartner together",
    () =>
      Effect.gen(function* () {
        yield* seed
        const sql = yield* SqlClient.SqlClient
        const store = yield* WebhookDeliveryStore
        const holding = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        // A third transaction locks one delivery of the first endpoint: the first claim's
        // lease write waits on it, with its endpoints (and, with the cap, its partner) taken.
        const blocker = yield* Effect.fork(
          sql.withTransaction(
            Effect.gen(function* () {
              yield* sql`SELECT 1 FROM webhook_deliveries
                WHERE endpoint_id = ${ENDPOINTS[0]} AND event_id = 'evt_claimcap0001' FOR UPDATE`
              yield* Deferred.succeed(holding, undefined)
              yield* Deferred.await(release)
            })
          )
        )
        yield* Deferred.await(holding)
        // At T0 + 1 s only the first two endpoints have deliveries due.
        const first = yield* Effect.fork(store.claimDue(at(1), 32, 60_000, 8, 4))
        // Waiting on the row lock: the view shows a query's first kilobyte only, so match its head.
        yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'
              AND query LIKE 'WITH busy AS%'`.pipe(
          Effect.map((rows) => rows[0]?.n ?? 0),
          Effect.repeat({ until: (n) => n > 0, schedule: Schedule.spaced("20 millis") })
        )
        // Later, the third endpoint's are due too; its lock is free, the first two's are not.
        const second = yield* store.claimDue(at(20), 32, 60_000, 8, 4)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(blocker)
        const firstClaims = yield* Fiber.join(first)
        expect(firstClaims.length + second.length).toBeLessThanOrEqual(4)
        expect(firstClaims.length).toBe(4)
        const leased = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries
          WHERE lease_until > ${at(20)}`
        expect(leased[0]?.n).toBe(4)
        // Once the first claim is done, the partner is free again: a claim sees its four in flight.
        expect(yield* store.claimDue(at(20), 32, 60_000, 8, 4)).toEqual([])
      }).pipe(Effect.provide(freshStorage())),
    30_000
  )
})
