/**
 * How long one webhook delivery claim takes on SQLite with many endpoints:
 * `ENDPOINTS` enabled endpoints (default 10,000, ten a partner), `DUE` of them
 * with one due delivery each, a claim of up to 32 (the default concurrency),
 * then the claimed ones let go, `ROUNDS` times. Prints the median and p95.
 *
 *   npx tsx --conditions=@pay/source bench/webhook-claim.ts
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { makeGroupCommit } from "../packages/storage-sqlite/src/GroupCommit.js"
import { applyMigrations } from "../packages/storage-sqlite/src/Migrations.js"
import { openConnection } from "../packages/storage-sqlite/src/node.js"
import { makeSqliteWebhookDeliveryStore } from "../packages/storage-sqlite/src/SqliteWebhookDeliveryStore.js"

const ENDPOINTS = Number(process.env.ENDPOINTS ?? 10_000)
const DUE = Number(process.env.DUE ?? 100)
const ROUNDS = Number(process.env.ROUNDS ?? 200)

/** Ids as the engine's pattern takes them: 8 or more letters and digits. */
const pad = (n: number) => String(n).padStart(10, "0")

const dir = mkdtempSync(join(tmpdir(), "pay-claim-"))
const db = openConnection(join(dir, "claim.sqlite"))
applyMigrations(db)
const now = Date.now()
db.transaction(() => {
  const endpoint = db.prepare(`INSERT INTO webhook_endpoints (id, partner_id, url, events,
    merchant_id, description, api_version, status, secret, created_at, updated_at)
    VALUES (?, ?, ?, NULL, NULL, NULL, '2026-02-18', 'enabled', 'whsec_x', ?, ?)`)
  const event = db.prepare(`INSERT INTO events (id, partner_id, type, payment_id, merchant_id,
    data, created_at) VALUES (?, ?, 'payment.succeeded', ?, NULL, '{}', ?)`)
  const delivery = db.prepare(`INSERT INTO webhook_deliveries (endpoint_id, event_id, event_seq,
    payment_id, state, attempts, next_attempt_at, created_at)
    SELECT ?, id, seq, payment_id, 'pending', 0, ?, ? FROM events WHERE id = ?`)
  for (let i = 0; i < ENDPOINTS; i++) {
    const partner = `ptnr_${pad(Math.floor(i / 10))}`
    endpoint.run(`whep_${pad(i)}`, partner, `https://hooks.example/${i}`, now, now)
    if (i % Math.max(1, Math.floor(ENDPOINTS / DUE)) === 0) {
      event.run(`evt_${pad(i)}`, partner, `pay_${pad(i)}`, now - 1000)
      delivery.run(`whep_${pad(i)}`, now - 1000, now - 1000, `evt_${pad(i)}`)
    }
  }
})

// No WAL fsync: the figure is the claim's statements and its commit, as before.
const store = makeSqliteWebhookDeliveryStore(db, makeGroupCommit(db), () => {})
const times: Array<number> = []
let claimedEach = 0
for (let round = 0; round < ROUNDS; round++) {
  const at = new Date(now + round)
  const started = performance.now()
  const claimed = await Effect.runPromise(store.claimDue(at, 32, 60_000, 8))
  times.push(performance.now() - started)
  claimedEach = claimed.length
  for (const c of claimed) Effect.runSync(store.release(c.lease, at))
}
times.sort((a, b) => a - b)
const pick = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!
console.log(
  `claimDue: ${ENDPOINTS} endpoints, ${DUE} due, ${claimedEach} claimed a round, ${ROUNDS} rounds: ` +
    `median ${pick(0.5).toFixed(2)} ms, p95 ${pick(0.95).toFixed(2)} ms`
)
db.close()
rmSync(dir, { recursive: true, force: true })
