/**
 * The payments' mode on PostgreSQL (migration 0018): payments written before
 * the migration read back with no mode (their views show the engine's), and
 * payments written after it keep the one they were created with, on the
 * prepared path of a payment just created and on the general insert.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { type Payment, type PaymentId, PaymentStore } from "@pay/core"
import { statisticsFixture } from "@pay/core/contracts"
import { Effect, Option } from "effect"
import { freshStorage } from "../test/TestDatabase.js"
import paymentLivemode from "./migrations/0018_payment_livemode.js"

describe("PostgreSQL payment mode", () => {
  it.effect(
    "reads payments written before migration 0018 with no mode, later ones with theirs",
    () =>
      Effect.gen(function* () {
        const fixture = yield* statisticsFixture
        const store = yield* PaymentStore
        const sql = yield* SqlClient.SqlClient
        // As if the payments had been written before 0018 existed.
        yield* sql`ALTER TABLE payments DROP COLUMN livemode`
        // The migration itself: the Migrator would not run it again below a later one.
        yield* sql.withTransaction(paymentLivemode)
        for (const p of fixture.data) {
          expect(Option.getOrThrow(yield* store.find(p.id)).livemode).toBeNull()
        }
        const first = fixture.data[0]!
        const later = (
          livemode: boolean,
          suffix: string,
          fields: Partial<Payment> = {}
        ): Payment => ({
          ...first,
          id: `${first.id.slice(0, -4)}${suffix}` as PaymentId,
          livemode,
          ...fields
        })
        // Just created (the prepared statement), and not.
        const justCreated = {
          status: "requires_action",
          updatedAt: first.createdAt,
          failureCode: null,
          cancelledReason: null,
          finalAt: null,
          buyer: null,
          transaction: null,
          txId: null,
          fees: null,
          settlement: null
        } as const
        for (const p of [
          later(false, "zzz0", justCreated),
          later(true, "zzz1", justCreated),
          later(false, "zzz2"),
          later(true, "zzz3")
        ]) {
          yield* store.insert(p)
          expect(Option.getOrThrow(yield* store.find(p.id)).livemode).toBe(p.livemode)
        }
      }).pipe(Effect.provide(freshStorage()))
  )
})
