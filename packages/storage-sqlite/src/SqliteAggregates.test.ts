/**
 * The statistics aggregates on SQLite: that `stats` reads them (a tampered
 * aggregate shows in the answer), that migration 0004 counts in the payments
 * that succeeded before it, and that the queries behind a listing use indexes.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { PaymentStore } from "@pay/core"
import { statisticsFixture } from "@pay/core/contracts"
import { Effect } from "effect"
import { afterAll } from "vitest"
import paymentAggregates from "./migrations/0004_payment_aggregates.js"
import { runtimeDriver, runtimeDriverName } from "./RuntimeDriver.testing.js"
import { SqliteDatabase } from "./SqliteDatabase.js"

const { layer } = runtimeDriver

const dir = mkdtempSync(join(tmpdir(), "pay-sqlite-aggregates-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let n = 0
const freshFile = () => join(dir, `aggregates-${n++}.sqlite`)

describe(`SQLite statistics aggregates (${runtimeDriverName})`, () => {
  it.effect("are what stats reads, for every filter the aggregates serve", () => {
    const filename = freshFile()
    return Effect.gen(function* () {
      const fixture = yield* statisticsFixture
      const store = yield* PaymentStore
      const db = yield* SqliteDatabase
      for (const filter of fixture.filters) {
        expect(yield* store.stats(filter)).toEqual(fixture.expected(filter))
      }
      const { base } = fixture
      const [m0] = fixture.merchants
      db.exec("UPDATE payment_daily_revenue SET transactions = transactions + 1000")
      db.prepare(
        "INSERT INTO partner_customers (partner_id, customer_key, payments) VALUES (?, 'extra', 1)"
      ).run(base.partnerId)
      db.prepare(
        `INSERT INTO merchant_customers (merchant_id, customer_key, partner_id, payments)
          VALUES (?, 'extra', ?, 1)`
      ).run(m0!.id, base.partnerId)
      const days = (
        db
          .prepare("SELECT count(*) AS n FROM payment_daily_revenue WHERE partner_id = ?")
          .get(base.partnerId) as { n: number }
      ).n
      const all = fixture.expected(base)
      expect(yield* store.stats(base)).toEqual({
        ...all,
        transactions: all.transactions + 1000 * days,
        customers: all.customers + 1
      })
      const merchant = { ...base, merchantIds: [m0!.id] }
      expect((yield* store.stats(merchant)).customers).toBe(
        fixture.expected(merchant).customers + 1
      )
      // Filters the aggregates do not break down by still read the payments.
      const byToken = fixture.filters.at(-1)!
      expect(byToken.assets).toBeDefined()
      expect(yield* store.stats(byToken)).toEqual(fixture.expected(byToken))
    }).pipe(Effect.provide(layer({ filename })))
  })

  it.effect("are counted in by migration 0004 from the payments already succeeded", () => {
    const filename = freshFile()
    return Effect.gen(function* () {
      const fixture = yield* statisticsFixture
      const store = yield* PaymentStore
      const db = yield* SqliteDatabase
      const tables = () =>
        [
          "payment_daily_revenue ORDER BY 1, 2, 3, 4",
          "partner_customers ORDER BY 1, 2",
          "merchant_customers ORDER BY 1, 2"
        ].map((table) => db.prepare(`SELECT * FROM ${table}`).all())
      const kept = tables()
      // As if the payments had been written before 0004 existed.
      db.exec(`DROP TABLE payment_daily_revenue; DROP TABLE partner_customers;
        DROP TABLE merchant_customers; DROP INDEX payments_succeeded_by_partner_date;
        DROP INDEX payments_succeeded_by_merchant_date`)
      // The migration itself: the migrator would not run it again below a later one.
      db.transaction(() => paymentAggregates(db))
      expect(tables()).toEqual(kept)
      for (const filter of fixture.filters) {
        expect(yield* store.stats(filter)).toEqual(fixture.expected(filter))
      }
    }).pipe(Effect.provide(layer({ filename })))
  })

  it.effect("serve listings and statistics from indexes, without scanning payments", () =>
    Effect.gen(function* () {
      const db = yield* SqliteDatabase
      const plan = (sql: string, ...params: ReadonlyArray<string | number>) =>
        (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>)
          .map((r) => r.detail)
          .join("; ")
      const page = (where: string, order: string) =>
        `SELECT p.*, r.id AS refund_id FROM payments p LEFT JOIN refunds r ON r.payment_id = p.id
          WHERE ${where} ORDER BY ${order} LIMIT 51`
      const cases: ReadonlyArray<readonly [string, string]> = [
        [
          plan(page("p.partner_id = ?", "p.created_at DESC, p.id DESC"), "ptnr"),
          "payments_by_partner_date"
        ],
        [
          plan(
            page(
              "p.partner_id = ? AND p.merchant_id IN (?) AND p.created_at >= ? AND p.created_at < ?",
              "p.created_at DESC, p.id DESC"
            ),
            "ptnr",
            "mrch",
            0,
            1
          ),
          "payments_by_merchant_date"
        ],
        [
          plan(page("p.partner_id = ?", "p.amount_sort DESC, p.id DESC"), "ptnr"),
          "payments_by_partner_amount"
        ],
        [
          plan(
            `SELECT count(DISTINCT p.buyer_key) FROM payments p WHERE p.partner_id = ?
              AND p.merchant_id IN (?) AND p.created_at >= ? AND p.created_at < ?
              AND p.status = 'succeeded'`,
            "ptnr",
            "mrch",
            0,
            1
          ),
          "COVERING INDEX payments_succeeded_by_merchant_date"
        ],
        [
          plan(
            `SELECT count(DISTINCT p.buyer_key) FROM payments p WHERE p.partner_id = ?
              AND p.created_at >= ? AND p.created_at < ? AND p.status = 'succeeded'`,
            "ptnr",
            0,
            1
          ),
          "COVERING INDEX payments_succeeded_by_partner_date"
        ],
        [
          plan(
            `SELECT unit, sum(transactions), sum(revenue_i63 / 1000000000),
                group_concat(CASE WHEN revenue_i63 IS NULL THEN revenue END)
              FROM payment_daily_revenue WHERE partner_id = ? AND day >= ? AND day < ?
              GROUP BY unit`,
            "ptnr",
            0,
            1
          ),
          "COVERING INDEX payment_daily_revenue_by_partner_day"
        ]
      ]
      for (const [detail, index] of cases) {
        expect(detail).toContain(index)
        expect(detail).not.toMatch(/SCAN p\b|USE TEMP B-TREE FOR ORDER BY/)
      }
    }).pipe(Effect.provide(layer({ filename: freshFile() })))
  )
})
