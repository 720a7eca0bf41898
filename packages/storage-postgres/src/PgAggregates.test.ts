/**
 * The statistics aggregates on PostgreSQL: that `stats` reads them (a tampered
 * aggregate shows in the answer), and that migration 0004 counts in the
 * payments that succeeded before it.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { PaymentStore } from "@pay/core"
import { statisticsFixture } from "@pay/core/contracts"
import { Effect } from "effect"
import { freshStorage } from "../test/TestDatabase.js"
import paymentAggregates from "./migrations/0004_payment_aggregates.js"

describe("PostgreSQL statistics aggregates", () => {
  it.effect("are what stats reads, for every filter the aggregates serve", () =>
    Effect.gen(function* () {
      const fixture = yield* statisticsFixture
      const store = yield* PaymentStore
      const sql = yield* SqlClient.SqlClient
      for (const filter of fixture.filters) {
        expect(yield* store.stats(filter)).toEqual(fixture.expected(filter))
      }
      const { base } = fixture
      const [m0] = fixture.merchants
      yield* sql`UPDATE payment_daily_revenue SET transactions = transactions + 1000`
      yield* sql`INSERT INTO partner_customers (partner_id, customer_key, payments)
        VALUES (${base.partnerId}, 'extra', 1)`
      yield* sql`INSERT INTO merchant_customers (merchant_id, customer_key, partner_id, payments)
        VALUES (${m0!.id}, 'extra', ${base.partnerId}, 1)`
      const [{ n: days } = { n: "0" }] = yield* sql<{ readonly n: string }>`SELECT count(*) AS n
        FROM payment_daily_revenue WHERE partner_id = ${base.partnerId}`
      const all = fixture.expected(base)
      expect(yield* store.stats(base)).toEqual({
        ...all,
        transactions: all.transactions + 1000 * Number(days),
        customers: all.customers + 1
      })
      const merchant = { ...base, merchantIds: [m0!.id] }
      expect((yield* store.stats(merchant)).customers).toBe(
        fixture.expected(merchant).customers + 1
      )
      const byToken = fixture.filters.at(-1)!
      expect(byToken.assets).toBeDefined()
      expect(yield* store.stats(byToken)).toEqual(fixture.expected(byToken))
    }).pipe(Effect.provide(freshStorage()))
  )

  it.effect("are counted in by migration 0004 from the payments already succeeded", () =>
    Effect.gen(function* () {
      const fixture = yield* statisticsFixture
      const store = yield* PaymentStore
      const sql = yield* SqlClient.SqlClient
      const tables = Effect.all([
        sql`SELECT partner_id, merchant_id, day, unit, transactions::text, revenue::text
          FROM payment_daily_revenue ORDER BY 1, 2, 3, 4`,
        sql`SELECT partner_id, customer_key, payments::text FROM partner_customers ORDER BY 1, 2`,
        sql`SELECT merchant_id, customer_key, partner_id, payments::text FROM merchant_customers
          ORDER BY 1, 2`
      ])
      const kept = yield* tables
      // As if the payments had been written before 0004 existed.
      yield* sql`DROP TABLE payment_daily_revenue, partner_customers, merchant_customers`
      yield* sql`DROP INDEX payments_succeeded_by_partner_date, payments_succeeded_by_merchant_date`
      // The migration itself: the Migrator would not run it again below a later one.
      yield* paymentAggregates
      expect(yield* tables).toEqual(kept)
      for (const filter of fixture.filters) {
        expect(yield* store.stats(filter)).toEqual(fixture.expected(filter))
      }
    }).pipe(Effect.provide(freshStorage()))
  )
})
