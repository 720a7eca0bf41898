/**
 * Migration 0022 on SQLite: settlements held before it (`pending`, their
 * settle job done or never queued) read `held` after it; one under way (an
 * active settle job) stays `pending`, and a settled one `settled`.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import {
  ChainJobStore,
  chainOfCaip19,
  newChainJob,
  type Payment,
  type PaymentId,
  PaymentStore,
  type SettlementStatus
} from "@pay/core"
import { statisticsFixture } from "@pay/core/testing"
import { Effect, Option } from "effect"
import { afterAll } from "vitest"
import settlementHeld from "./migrations/0022_settlement_held.js"
import { runtimeDriver, runtimeDriverName } from "./RuntimeDriver.testing.js"
import { SqliteDatabase } from "./SqliteDatabase.js"

const { layer } = runtimeDriver

const dir = mkdtempSync(join(tmpdir(), "pay-sqlite-held-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe(`SQLite held settlements, migration 0022 (${runtimeDriverName})`, () => {
  it.effect("marks pending settlements with no active settle job held, and only those", () =>
    Effect.gen(function* () {
      const fixture = yield* statisticsFixture
      const payments = yield* PaymentStore
      const jobs = yield* ChainJobStore
      const db = yield* SqliteDatabase
      const first = fixture.data.find((p) => p.status === "succeeded" && p.tokenAmount !== null)!
      const asset = first.tokenAmount!.asset
      const stored = (suffix: string, status: SettlementStatus): Payment => ({
        ...first,
        id: `${first.id.slice(0, -4)}${suffix}` as PaymentId,
        settlement: {
          amount: 1_000n,
          status,
          destination: null,
          txHash: null,
          settledAt: status === "settled" ? first.createdAt : null
        }
      })
      const never = stored("hld0", "pending")
      const done = stored("hld1", "pending")
      const underWay = stored("hld2", "pending")
      const settled = stored("hld3", "settled")
      const settleJob = (p: Payment) =>
        newChainJob(
          p.id,
          chainOfCaip19(asset),
          { kind: "settle", asset, amount: 1_000n },
          first.createdAt
        )
      for (const p of [never, done, underWay, settled]) yield* payments.insert(p)
      yield* jobs.requeue(settleJob(done), "settle")
      db.exec(`UPDATE chain_jobs SET state = 'done' WHERE payment_id = '${done.id}'`)
      yield* jobs.requeue(settleJob(underWay), "settle")

      // As if the payments had been written before 0022 existed.
      db.exec("ALTER TABLE payments DROP COLUMN settlement_held")
      // The migration itself: the migrator would not run it again below a later one.
      db.transaction(() => settlementHeld(db))
      const statusOf = (p: Payment) =>
        Effect.map(payments.find(p.id), (found) => Option.getOrThrow(found).settlement?.status)
      expect(yield* statusOf(never)).toBe("held")
      expect(yield* statusOf(done)).toBe("held")
      expect(yield* statusOf(underWay)).toBe("pending")
      expect(yield* statusOf(settled)).toBe("settled")
      expect(yield* statusOf(first)).toBe(first.settlement?.status)
      expect(() =>
        db.exec(`UPDATE payments SET settlement_held = 2 WHERE id = '${first.id}'`)
      ).toThrow(/CHECK constraint failed/)
    }).pipe(Effect.provide(layer({ filename: join(dir, "held.sqlite") })))
  )
})
