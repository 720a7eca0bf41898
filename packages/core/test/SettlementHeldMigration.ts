/**
 * Migration 0022 on either store: settlements held before it (`pending`, their
 * settle job done or never queued) read `held` after it; one under way (an
 * active settle job) stays `pending`, and a settled one `settled`. The store
 * says how to end a job and how to undo and rerun the migration.
 */
import { expect } from "@effect/vitest"
import { Effect, Option } from "effect"
import { ChainJobStore } from "../src/chainwork/ChainJobStore.js"
import { newChainJob } from "../src/payments/ChainJob.js"
import type { Payment, PaymentId, SettlementStatus } from "../src/payments/Payment.js"
import { PaymentStore } from "../src/payments/PaymentStore.js"
import { chainOfCaip19 } from "../src/shared/Caip.js"
import { statisticsFixture } from "./PaymentContract.js"

export interface SettlementHeldMigration<R> {
  /** Ends the payment's settle job (state `done`) behind the store's back. */
  readonly endSettleJob: (paymentId: PaymentId) => Effect.Effect<void, unknown, R>
  /** Drops the migration's column, as before it, then runs the migration itself again. */
  readonly migrateAgain: Effect.Effect<void, unknown, R>
}

export const settlementHeldMigrationCase = <R>(store: SettlementHeldMigration<R>) =>
  Effect.gen(function* () {
    const fixture = yield* statisticsFixture
    const payments = yield* PaymentStore
    const jobs = yield* ChainJobStore
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
    yield* store.endSettleJob(done.id)
    yield* jobs.requeue(settleJob(underWay), "settle")

    yield* store.migrateAgain
    const statusOf = (p: Payment) =>
      Effect.map(payments.find(p.id), (found) => Option.getOrThrow(found).settlement?.status)
    expect(yield* statusOf(never)).toBe("held")
    expect(yield* statusOf(done)).toBe("held")
    expect(yield* statusOf(underWay)).toBe("pending")
    expect(yield* statusOf(settled)).toBe("settled")
    expect(yield* statusOf(first)).toBe(first.settlement?.status)
  })
