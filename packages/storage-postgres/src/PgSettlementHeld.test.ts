/**
 * Migration 0022 on PostgreSQL: settlements held before it (`pending`, their
 * settle job done or never queued) read `held` after it; one under way (an
 * active settle job) stays `pending`, and a settled one `settled`.
 */
import { SqlClient } from "@effect/sql"
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
import { freshStorage } from "../test/TestDatabase.js"
import settlementHeld from "./migrations/0022_settlement_held.js"

describe("PostgreSQL held settlements, migration 0022", () => {
  it.effect("marks pending settlements with no active settle job held, and only those", () =>
    Effect.gen(function* () {
      const fixture = yield* statisticsFixture
      const payments = yield* PaymentStore
      const jobs = yield* ChainJobStore
      const sql = yield* SqlClient.SqlClient
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
      yield* sql`UPDATE chain_jobs SET state = 'done' WHERE payment_id = ${done.id}`
      yield* jobs.requeue(settleJob(underWay), "settle")

      // As if the payments had been written before 0022 existed.
      yield* sql`ALTER TABLE payments DROP COLUMN settlement_held`
      // The migration itself: the Migrator would not run it again below a later one.
      yield* sql.withTransaction(settlementHeld)
      const statusOf = (p: Payment) =>
        Effect.map(payments.find(p.id), (found) => Option.getOrThrow(found).settlement?.status)
      expect(yield* statusOf(never)).toBe("held")
      expect(yield* statusOf(done)).toBe("held")
      expect(yield* statusOf(underWay)).toBe("pending")
      expect(yield* statusOf(settled)).toBe("settled")
      expect(yield* statusOf(first)).toBe(first.settlement?.status)
    }).pipe(Effect.provide(freshStorage()))
  )
})
