/**
 * Migration 0024 on SQLite: `chain_jobs` (and `chain_transfers`, whose foreign
 * key names it) rebuilt to take `deploy` jobs, every row, index and trigger
 * kept, the foreign key still enforced and still naming `chain_jobs`.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import {
  ChainJobStore,
  engineConfig,
  findCurrency,
  Merchants,
  Partners,
  PaymentStore,
  Payments,
  payEngineLayer
} from "@pay/core"
import { Effect } from "effect"
import { afterAll } from "vitest"
import deployJobs from "./migrations/0024_deploy_jobs.js"
import { runtimeDriver, runtimeDriverName } from "./RuntimeDriver.testing.js"

const { layer, openConnection } = runtimeDriver

const dir = mkdtempSync(join(tmpdir(), "pay-sqlite-deploy-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const DEPLOYER = "0x0000000000000000000000000000000000000De0" as const
const at = (ms: number) => new Date(Date.UTC(2026, 10, 1) + ms)

describe(`SQLite deploy jobs, migration 0024 (${runtimeDriverName})`, () => {
  it.effect(
    "rebuilds chain_jobs and chain_transfers keeping rows, indexes and the foreign key",
    () =>
      Effect.gen(function* () {
        const filename = join(dir, "deploy.sqlite")
        // A payment with a deploy job and its transfer, written by the stores.
        const { paymentId, jobId } = yield* Effect.gen(function* () {
          const { partner } = yield* (yield* Partners).create({ name: "Deploy Co" })
          const merchant = yield* (yield* Merchants).create(partner, {
            name: "Shop",
            email: "a@b.co",
            iconUrl: null
          })
          const payment = yield* (yield* Payments).create(partner, merchant.id, {
            referenceId: "r1",
            amount: { unit: { kind: "fiat", currency: findCurrency("USD")! }, value: 100n }
          })
          const jobId = `cjob_${"0".repeat(20)}1`
          yield* (yield* PaymentStore).transition(payment.id, "requires_action", {
            status: "processing",
            at: at(1),
            finalAt: null,
            enqueue: {
              id: jobId as never,
              paymentId: payment.id,
              chainId: "eip155:8453" as never,
              payload: { kind: "deploy", optionId: "opt_1", signature: "0x6492" },
              runAt: at(1),
              createdAt: at(1)
            }
          })
          const jobs = yield* ChainJobStore
          const [claimed] = yield* jobs.claimDue(at(2), 1, 60_000)
          yield* jobs.recordTransfer(claimed!.lease, {
            hash: `0x${"ab".repeat(32)}`,
            jobId: claimed!.job.id,
            chainId: "eip155:8453" as never,
            sender: DEPLOYER,
            nonce: 0,
            purpose: "call",
            to: DEPLOYER,
            data: "0x01",
            gas: 250_000n,
            value: 0n,
            maxFeePerGas: 2n,
            maxPriorityFeePerGas: 1n,
            raw: "0x02",
            createdAt: at(3)
          })
          return { paymentId: payment.id, jobId }
        }).pipe(
          Effect.provide(
            payEngineLayer({
              storage: layer({ filename }),
              config: engineConfig({ publicUrl: "http://x", maxBodyBytes: 1024 })
            })
          )
        )

        const db = openConnection(filename)
        // Back to the columns 0024 knew: migration 0026 added chain_transfers.value after it.
        db.exec("ALTER TABLE chain_transfers DROP COLUMN value")
        const snapshot = () => ({
          jobs: db.prepare("SELECT * FROM chain_jobs ORDER BY id").all(),
          transfers: db.prepare("SELECT * FROM chain_transfers ORDER BY hash").all(),
          indexes: db
            .prepare(
              `SELECT type, name, tbl_name, sql FROM sqlite_schema
              WHERE type IN ('index', 'trigger') AND tbl_name IN ('chain_jobs', 'chain_transfers')
              ORDER BY name`
            )
            .all()
        })
        const before = snapshot()
        expect(before.jobs).toHaveLength(1)
        expect(before.transfers).toHaveLength(1)
        expect(before.indexes.map((i) => (i as { name: string }).name)).toEqual(
          expect.arrayContaining(["chain_jobs_due", "chain_jobs_stuck", "chain_transfers_by_nonce"])
        )

        // Run again over the migrated tables, with rows in them: what an upgrade does.
        db.transaction(() => deployJobs(db))
        expect(snapshot()).toEqual(before)
        expect(db.prepare("PRAGMA foreign_key_check").all()).toEqual([])
        const references = db.prepare("PRAGMA foreign_key_list(chain_transfers)").all() as Array<{
          table: string
        }>
        expect(references.map((r) => r.table)).toEqual(["chain_jobs"])
        expect(db.prepare("SELECT name FROM sqlite_schema WHERE name LIKE '%_new'").all()).toEqual(
          []
        )

        // Enforced as before: the kind's CHECK takes `deploy` only beside the others,
        // and a transfer needs its job.
        expect(() =>
          db.exec(`UPDATE chain_jobs SET kind = 'refund' WHERE id = '${jobId}'`)
        ).toThrow(/CHECK constraint failed/)
        expect(() =>
          db.exec(`INSERT INTO chain_transfers SELECT '0x01', 'cjob_missing', chain_id, sender,
          nonce, purpose, to_address, data, gas, max_fee_per_gas, max_priority_fee_per_gas, raw,
          created_at FROM chain_transfers`)
        ).toThrow(/FOREIGN KEY constraint failed/)
        expect(() => db.exec(`DELETE FROM chain_jobs WHERE id = '${jobId}'`)).toThrow(
          /FOREIGN KEY constraint failed/
        )
        db.close()
        expect(paymentId).toMatch(/^pay_/)
      })
  )
})
