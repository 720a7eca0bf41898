/**
 * The purge in the real server, on both stores: rows past their retention are
 * written straight into its database while it runs (as years of use would have
 * left them), and its next pass (every second here, `PAY_PURGE_INTERVAL_SECONDS`)
 * deletes exactly those, counted row by row before and after, keeps what is
 * inside its retention or still needed (a pending delivery and its event), and
 * counts what it deleted on /metrics. The retention settings' own checks are in
 * core's retention/Purge.test.ts and the stores' retention tests.
 */
import { withAdmin } from "@pay/storage-postgres/testing"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type E2eServer, eventually, runtimeHost, STORES, startServer } from "./e2e-support.js"

const DAY = 86_400_000
type Value = string | number | Date | null

/** Runs one statement (`?` placeholders) on the server's database, from outside the server. */
const execOn =
  (database: string) =>
  async (text: string, params: ReadonlyArray<Value> = []) => {
    if (database.startsWith("postgres")) {
      let n = 0
      return Effect.runPromise(
        withAdmin(database, (sql) =>
          sql.unsafe<Record<string, unknown>>(
            text.replace(/\?/g, () => `$${++n}`),
            params as Array<Value>
          )
        )
      )
    }
    const db = runtimeHost.sqlite.openConnection(database)
    try {
      const statement = db.prepare(text)
      const values = params.map((v) => (v instanceof Date ? v.getTime() : v))
      if (/^\s*select/i.test(text)) {
        return statement.all(...values) as Array<Record<string, unknown>>
      }
      statement.run(...values)
      return []
    } finally {
      db.close()
    }
  }

/** One sample's value in Prometheus text; 0 when absent. */
const sampleOf = (text: string, series: string): number => {
  for (const line of text.split("\n")) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1))
  }
  return 0
}

describe.each(STORES)("the purge in the server on %s", (store) => {
  let server: E2eServer

  beforeAll(async () => {
    server = await startServer(store, { retention: { purgeEveryMs: 1000 } })
  }, 60_000)
  afterAll(() => server?.stop())

  it("deletes what is past its retention at its next pass, and keeps the rest", async () => {
    const exec = execOn(server.config.database)
    const now = Date.now()
    const old = new Date(now - 400 * DAY)
    const recent = new Date(now - DAY)
    const purged = async (table: string) => {
      const text = await (await fetch(`${server.baseUrl}/metrics`)).text()
      return sampleOf(text, `pay_purged_rows_total{table="${table}"}`)
    }
    // The registry is the test process's: the counts before, to compare with after.
    const countersBefore = {
      events: await purged("events"),
      webhook_deliveries: await purged("webhook_deliveries"),
      webhook_attempts: await purged("webhook_attempts"),
      idempotency_keys: await purged("idempotency_keys")
    }
    const event = (id: string, at: Date) =>
      exec(
        `INSERT INTO events (id, partner_id, type, payment_id, merchant_id, data, created_at)
        VALUES (?, 'ptnr_e2e_purge', 'merchant.updated', NULL, NULL, '{}', ?)`,
        [id, at]
      )
    const delivery = (eventId: string, state: string, next: Date) =>
      exec(
        `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_seq, payment_id, state,
          attempts, next_attempt_at, created_at) VALUES ('whep_e2e_purge', ?, 0, NULL, ?, 1, ?, ?)`,
        [eventId, state, next, old]
      )
    const attempt = (eventId: string) =>
      exec(
        `INSERT INTO webhook_attempts (endpoint_id, event_id, attempted_at, duration_ms,
          response_status, response_body, error) VALUES ('whep_e2e_purge', ?, ?, 10, 500, '', 'x')`,
        [eventId, old]
      )
    const key = (name: string, at: Date) =>
      exec(
        `INSERT INTO idempotency_keys (partner_id, route, key, fingerprint, claim_token,
          locked_at, created_at, response_status, response_body)
        VALUES ('ptnr_e2e_purge', 'POST /v1/merchants', ?, 'fp', 't', ?, ?, 201, '{}')`,
        [name, at, at]
      )
    // Past their retentions: three events, one delivered (two attempts) with its event, two
    // finished keys. Kept: an old event a pending delivery waits to send, a recent event, a
    // recent key.
    for (const id of ["evt_e2e_old_1", "evt_e2e_old_2", "evt_e2e_old_3"]) await event(id, old)
    await event("evt_e2e_delivered", old)
    await delivery("evt_e2e_delivered", "delivered", old)
    await attempt("evt_e2e_delivered")
    await attempt("evt_e2e_delivered")
    await event("evt_e2e_waiting", old)
    await delivery("evt_e2e_waiting", "pending", new Date(now + DAY))
    await attempt("evt_e2e_waiting")
    await event("evt_e2e_recent", recent)
    await key("e2e-old-1", old)
    await key("e2e-old-2", old)
    await key("e2e-recent", recent)

    const left = async () => ({
      events: (
        await exec("SELECT id FROM events WHERE partner_id = 'ptnr_e2e_purge' ORDER BY id")
      ).map((r) => r.id),
      deliveries: (
        await exec("SELECT event_id FROM webhook_deliveries WHERE endpoint_id = 'whep_e2e_purge'")
      ).map((r) => r.event_id),
      attempts: (
        await exec("SELECT event_id FROM webhook_attempts WHERE endpoint_id = 'whep_e2e_purge'")
      ).map((r) => r.event_id),
      keys: (
        await exec("SELECT key FROM idempotency_keys WHERE partner_id = 'ptnr_e2e_purge'")
      ).map((r) => r.key)
    })
    await eventually(
      async () =>
        expect(await left()).toEqual({
          events: ["evt_e2e_recent", "evt_e2e_waiting"],
          deliveries: ["evt_e2e_waiting"],
          attempts: ["evt_e2e_waiting"],
          keys: ["e2e-recent"]
        }),
      { timeoutMs: 30_000, intervalMs: 200 }
    )
    // Counted as they went, by table (at least these: another server of this process may purge).
    expect((await purged("events")) - countersBefore.events).toBeGreaterThanOrEqual(4)
    expect(
      (await purged("webhook_deliveries")) - countersBefore.webhook_deliveries
    ).toBeGreaterThanOrEqual(1)
    expect(
      (await purged("webhook_attempts")) - countersBefore.webhook_attempts
    ).toBeGreaterThanOrEqual(2)
    expect(
      (await purged("idempotency_keys")) - countersBefore.idempotency_keys
    ).toBeGreaterThanOrEqual(2)
    // One lease row: the server's, held for the interval.
    const leases = await exec("SELECT name, holder FROM leases")
    expect(leases.map((l) => l.name)).toEqual(["purge"])
  }, 60_000)
})
