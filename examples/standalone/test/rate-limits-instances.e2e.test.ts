/**
 * Rate limits across instances (issue 20): two standalone servers on one
 * PostgreSQL schema, each keeping its own buckets and syncing them through
 * the `rate_limit_buckets` table. A client hammering one key through both for
 * a few seconds is admitted within the documented bound (docs/operations.md:
 * about (N - 1) × (burst + one second of rate) more than one instance alone);
 * each instance writes the shared table at most once a second (a statement
 * trigger of the test's own logs every write with the writer's
 * `application_name`); and a third instance without limits never writes it.
 */
import { freshSchema, withAdmin } from "@pay/storage-postgres/testing"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  client,
  createPartner,
  type E2eServer,
  eventually,
  exactlyAfterQuiet,
  newKey,
  startServer
} from "./e2e-support.js"

/** 5 a second, 5 at once, per API key. */
const LIMIT = { perSecond: 5, burst: 5 }
const WINDOW_MS = 4000

const scope = Effect.runSync(Scope.make())
const servers: Array<E2eServer> = []
let database: string

/** The schema's URL, its connections named `name` (pg_stat_activity, the trigger's log). */
const named = (name: string) => {
  const url = new URL(database)
  url.searchParams.set("application_name", name)
  return url.toString()
}

const start = async (name: string, limited: boolean) => {
  const server = await startServer("postgres", {
    database: named(name),
    ...(limited ? { rateLimits: { perApiKey: LIMIT } } : {})
  })
  servers.push(server)
  return server
}

/** The writes to the shared table, by the application name of the connection that made them. */
const writes = () =>
  Effect.runPromise(
    withAdmin(
      database,
      (sql) =>
        sql<{ readonly app: string; readonly ms: string }>`
          SELECT app, (extract(epoch FROM at) * 1000)::bigint AS ms FROM rate_limit_write_log
          ORDER BY at`
    )
  ).then((rows) => rows.map((r) => ({ app: r.app, at: Number(r.ms) })))

beforeAll(async () => {
  database = await Effect.runPromise(Scope.extend(freshSchema(), scope))
  // The first alone: it migrates the schema and creates the bootstrap partner.
  await start("pay-a", true)
  await start("pay-b", true)
  await start("pay-c", false)
  await Effect.runPromise(
    withAdmin(database, (sql) =>
      Effect.all([
        sql`CREATE TABLE rate_limit_write_log (app text NOT NULL, at timestamptz NOT NULL)`,
        sql.unsafe(`CREATE FUNCTION log_rate_limit_write() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            INSERT INTO rate_limit_write_log VALUES
              (current_setting('application_name'), clock_timestamp());
            RETURN NULL;
          END $$`),
        sql`CREATE TRIGGER rate_limit_write_log AFTER INSERT
          ON rate_limit_buckets FOR EACH STATEMENT EXECUTE FUNCTION log_rate_limit_write()`
        // An upsert is one INSERT statement (its UPDATE part would fire a second trigger).
      ])
    )
  )
}, 60_000)

afterAll(async () => {
  for (const server of servers) await server.stop()
  await Effect.runPromise(Scope.close(scope, Exit.void))
}, 30_000)

describe("rate limits on two instances sharing PostgreSQL", () => {
  it("admit about what one instance would, and each writes the shared buckets at most once a second", async () => {
    const [a, b, c] = servers as [E2eServer, E2eServer, E2eServer]
    const { apiKey } = await createPartner(a, "Shared limits")
    // Two clients on each instance, as fast as they are answered, for the window.
    const statuses: Array<number> = []
    const until = Date.now() + WINDOW_MS
    const hammer = async (server: E2eServer) => {
      const api = client(() => server.baseUrl)
      while (Date.now() < until) {
        statuses.push((await api.get("/v1/merchants", { key: apiKey })).status)
      }
    }
    const started = Date.now()
    await Promise.all([hammer(a), hammer(a), hammer(b), hammer(b)])
    const seconds = (Date.now() - started) / 1000
    const admitted = statuses.filter((s) => s === 200).length
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([])

    // One instance alone: its burst, and the rate for the rest of the window.
    const alone = LIMIT.burst + Math.floor(LIMIT.perSecond * seconds)
    // Two, each unaware of the other, would admit twice that; the bound is one more
    // instance's burst and a second of its rate.
    const bound = alone + (LIMIT.burst + LIMIT.perSecond)
    expect(statuses.length).toBeGreaterThan(4 * alone)
    expect(admitted).toBeLessThanOrEqual(bound)
    expect(admitted).toBeGreaterThanOrEqual(alone - LIMIT.perSecond)

    // Meanwhile an instance without limits serves the key, and never writes the table.
    const unlimited = client(() => c.baseUrl)
    for (let i = 0; i < 20; i++) {
      expect((await unlimited.get("/v1/merchants", { key: apiKey })).status).toBe(200)
    }

    // Let the last takes sync, then read who wrote when: the log has stopped growing, no write
    // through a quiet period of 1.5 s (longer than the 1 s between syncs that have takes to send).
    await eventually(async () => {
      const count = (await writes()).length
      await exactlyAfterQuiet(async () => (await writes()).length, count, {
        timeoutMs: 0,
        quietMs: 1_500,
        what: "writes to the shared buckets, still coming"
      })
    })
    const log = await writes()
    const byApp = (app: string) => log.filter((w) => w.app === app).map((w) => w.at)
    expect(byApp("pay-c")).toEqual([])
    for (const app of ["pay-a", "pay-b"]) {
      const times = byApp(app)
      // Some syncs, never more than one a second (the wait starts once a sync is done).
      expect(times.length, app).toBeGreaterThanOrEqual(1)
      expect(times.length, app).toBeLessThanOrEqual(Math.ceil(seconds) + 2)
      for (let i = 1; i < times.length; i++) {
        expect(times[i]! - times[i - 1]!, `${app} write ${i}`).toBeGreaterThanOrEqual(950)
      }
    }
    expect(log.every((w) => ["pay-a", "pay-b"].includes(w.app))).toBe(true)
  }, 60_000)

  it("keys minted by one partner share its budget across both: four keys admit about what one would", async () => {
    const [a, b] = servers as [E2eServer, E2eServer]
    const { apiKey } = await createPartner(a, "Many keys")
    // The partner's budget defaults to the per-key one (5 a second, 5 at once).
    const keys = [apiKey]
    for (let i = 0; i < 3; i++) {
      const minted = await client(() => a.baseUrl).request("POST", "/v1/api-keys", {
        body: { name: `extra ${i}` },
        idempotencyKey: newKey(),
        key: apiKey
      })
      expect(minted.status, minted.text).toBe(201)
      keys.push(minted.body.secret)
    }
    const statuses: Array<number> = []
    const until = Date.now() + WINDOW_MS
    // Each key its own client, two on each instance: per key alone, four keys would admit 4×.
    const hammer = async (server: E2eServer, key: string) => {
      const api = client(() => server.baseUrl)
      while (Date.now() < until) statuses.push((await api.get("/v1/merchants", { key })).status)
    }
    const started = Date.now()
    await Promise.all([
      hammer(a, keys[0]!),
      hammer(a, keys[1]!),
      hammer(b, keys[2]!),
      hammer(b, keys[3]!)
    ])
    const seconds = (Date.now() - started) / 1000
    const admitted = statuses.filter((s) => s === 200).length
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([])
    const alone = LIMIT.burst + Math.floor(LIMIT.perSecond * seconds)
    expect(statuses.length).toBeGreaterThan(4 * alone)
    // The same bound as one key on two instances; four separate per-key budgets would pass it.
    expect(admitted).toBeLessThanOrEqual(alone + (LIMIT.burst + LIMIT.perSecond))
    expect(admitted).toBeGreaterThanOrEqual(Math.floor(LIMIT.perSecond * (seconds - 1)))
  }, 60_000)
})
