/**
 * The list filters' indexes on SQLite (migration 0016): the reference search
 * finds payments written before the migration (its backfill) and after it (its
 * triggers), follows any change to a reference, answers alike through the
 * trigram index and through the payments, and the store's own statements use
 * the indexes, with and without planner statistics.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { Caip2, Caip19, MerchantId, Payment, PaymentFilter, PaymentId } from "@pay/core"
import { PaymentStore } from "@pay/core"
import { expectListingAgrees, statisticsFixture } from "@pay/core/contracts"
import { Effect } from "effect"
import { afterAll } from "vitest"
import paymentFilters from "./migrations/0016_payment_filters.js"
import { runtimeDriver, runtimeDriverName } from "./RuntimeDriver.testing.js"
import { type SqliteConnection, SqliteDatabase } from "./SqliteDatabase.js"
import { makeSqlitePaymentQueries } from "./SqlitePaymentQueries.js"

const { layer } = runtimeDriver

const dir = mkdtempSync(join(tmpdir(), "pay-sqlite-filters-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let n = 0
const freshFile = () => join(dir, `filters-${n++}.sqlite`)

const USDC_BASE = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19
const NEEDLES = ["stat-1", "STAT-1", "TAT-4", "-2", "t-3", "stat", "new", "zzz", "st", ""]

/** FTS5's own check that the index holds exactly what its content table does. */
const integrityCheck = (db: SqliteConnection) =>
  db.exec("INSERT INTO payment_references_fts (payment_references_fts) VALUES ('integrity-check')")

const searchIds = (db: SqliteConnection, needle: string) =>
  (
    db
      .prepare(`SELECT s.payment_id AS id FROM payment_references_fts f
        JOIN payment_references s ON s.id = f.rowid WHERE f.payment_references_fts MATCH ?`)
      .all(`"${needle.replaceAll('"', '""')}"`) as Array<{ id: string }>
  )
    .map((r) => r.id)
    .sort()

describe(`SQLite list filter indexes (${runtimeDriverName})`, () => {
  it.effect("find payments written before migration 0016 and after it", () =>
    Effect.gen(function* () {
      const fixture = yield* statisticsFixture
      const store = yield* PaymentStore
      const db = yield* SqliteDatabase
      // As if the payments had been written before 0016 existed.
      db.exec(`DROP TRIGGER payments_reference_inserted; DROP TRIGGER payments_reference_updated;
        DROP TRIGGER payments_reference_deleted; DROP TABLE payment_references_fts;
        DROP TABLE payment_references; DROP INDEX payments_by_partner_chain_date;
        DROP INDEX payments_succeeded_by_partner_token`)
      // The migration itself: the migrator would not run it again below a later one.
      db.transaction(() => paymentFilters(db))
      integrityCheck(db)
      const first = fixture.data[0]!
      const after: Payment = {
        ...first,
        id: `${first.id.slice(0, -4)}zzzz` as PaymentId,
        referenceId: "STAT-1-new"
      }
      yield* store.insert(after)
      integrityCheck(db)
      const data = [...fixture.data, after]
      expect(searchIds(db, "stat-1")).toContain(after.id)
      expect(searchIds(db, "stat-1")).toContain(first.id)
      for (const referenceId of NEEDLES) {
        yield* expectListingAgrees(data, { ...fixture.base, referenceId }, 10)
      }
      yield* expectListingAgrees(data, {
        ...fixture.base,
        referenceId: "1-new",
        networks: [after.tokenAmount === null ? ("eip155:8453" as Caip2) : chainOf(after)]
      })
    }).pipe(Effect.provide(layer({ filename: freshFile() })))
  )

  it.effect("follow a changed or deleted reference, whatever statement changes it", () =>
    Effect.gen(function* () {
      const fixture = yield* statisticsFixture
      const db = yield* SqliteDatabase
      const [a, b] = fixture.data
      db.prepare("UPDATE payments SET reference_id = ?, reference_folded = ? WHERE id = ?").run(
        "Renamed-XYZ",
        "renamed-xyz",
        a!.id
      )
      expect(searchIds(db, "renamed")).toEqual([a!.id])
      expect(searchIds(db, a!.referenceId.toLowerCase())).not.toContain(a!.id)
      // An update that leaves the reference alone changes nothing in the index.
      db.prepare("UPDATE payments SET updated_at = updated_at + 1 WHERE id = ?").run(b!.id)
      expect(searchIds(db, b!.referenceId.toLowerCase())).toContain(b!.id)
      db.prepare("DELETE FROM payments WHERE id = ?").run(a!.id)
      expect(searchIds(db, "renamed")).toEqual([])
      integrityCheck(db)
    }).pipe(Effect.provide(layer({ filename: freshFile() })))
  )

  it.effect("answer alike through the trigram index and through the payments", () =>
    Effect.gen(function* () {
      const fixture = yield* statisticsFixture
      const db = yield* SqliteDatabase
      const viaIndex = makeSqlitePaymentQueries(db, { list: 1_000_000, stats: 1_000_000 })
      const viaPayments = makeSqlitePaymentQueries(db, { list: 0, stats: 0 })
      const filters: ReadonlyArray<PaymentFilter> = NEEDLES.flatMap((referenceId) => [
        { ...fixture.base, referenceId },
        { ...fixture.base, referenceId, merchantIds: [fixture.merchants[1]!.id] },
        { ...fixture.base, referenceId, assets: [USDC_BASE], statuses: ["succeeded"] }
      ])
      for (const filter of filters) {
        for (const sortBy of ["date", "amount"] as const) {
          const q = { filter, sortBy, direction: "desc", limit: 500 } as const
          expect(yield* viaIndex.list(q)).toEqual(yield* viaPayments.list(q))
        }
        expect(yield* viaIndex.stats(filter)).toEqual(yield* viaPayments.stats(filter))
        // On the whole account the partner's payments are more than the matches: the index is
        // read, unless the needle is under three characters, which it cannot answer.
        if (filter.merchantIds === undefined && filter.assets === undefined) {
          expect(
            viaIndex.statements.page({ filter, sortBy: "date", direction: "asc", limit: 5 }).sql
          ).toContain(
            [...(filter.referenceId ?? "")].length >= 3 ? "payment_references_fts" : "payments p"
          )
        }
      }
    }).pipe(Effect.provide(layer({ filename: freshFile() })))
  )

  it.effect("keep a bounded cache of listing statements, finalizing the evicted ones", () =>
    Effect.gen(function* () {
      const fixture = yield* statisticsFixture
      const db = yield* SqliteDatabase
      // The connection, counting the statements prepared and finalized.
      let live = 0
      let finalized = 0
      const counting: SqliteConnection = {
        ...db,
        prepare: (sql) => {
          const statement = db.prepare(sql)
          live++
          return {
            run: statement.run,
            get: statement.get,
            all: statement.all,
            finalize: () => {
              live--
              finalized++
              statement.finalize?.()
            }
          }
        }
      }
      const bounded = makeSqlitePaymentQueries(counting, undefined, 4)
      const unbounded = makeSqlitePaymentQueries(db)
      // Each number of merchants is its own shape of statement: 30 shapes, twice over.
      const merchantIds = (n: number) => [
        ...fixture.merchants.map((m) => m.id),
        ...Array.from({ length: n }, (_, i) => `mrch_${String(i).padStart(20, "0")}` as MerchantId)
      ]
      for (const round of [0, 1]) {
        for (let n = 0; n < 30; n++) {
          const q = {
            filter: { ...fixture.base, merchantIds: merchantIds(n) },
            sortBy: "date",
            direction: round === 0 ? "desc" : "asc",
            limit: 50
          } as const
          // Answers alike after its statement was evicted and prepared again.
          expect(yield* bounded.list(q)).toEqual(yield* unbounded.list(q))
          expect(bounded.cachedStatements()).toBeLessThanOrEqual(4)
          expect(live).toBeLessThanOrEqual(4)
        }
      }
      expect(finalized).toBeGreaterThanOrEqual(2 * 30 - 4)
    }).pipe(Effect.provide(layer({ filename: freshFile() })))
  )

  it.effect("serve each filter's page and statistics from an index, with or without ANALYZE", () =>
    Effect.gen(function* () {
      const fixture = yield* statisticsFixture
      const db = yield* SqliteDatabase
      const { partnerId } = fixture.base
      const [m0, m1] = fixture.merchants.map((m) => m.id)
      // 20,000 more payments over a year: three chains, two merchants, 60% succeeded.
      db.prepare(`WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < 19999)
        INSERT INTO payments (id, partner_id, merchant_id, reference_id, reference_folded,
          amount_unit, amount_value, amount_minor, amount_sort, status, expires_at, created_at,
          updated_at, token_asset, token_chain, buyer_key)
        SELECT printf('pay_plan%012d', i), ?, CASE WHEN i % 2 = 0 THEN ? ELSE ? END,
          'ORDER-' || i, 'order-' || i, 'iso4217/USD', '100', 100, printf('%078d', 100),
          CASE WHEN i % 10 < 6 THEN 'succeeded' ELSE 'expired' END, i * 1577000 + 300000,
          i * 1577000, i * 1577000,
          CASE i % 3 WHEN 0 THEN 'eip155:8453/erc20:0xa' WHEN 1 THEN 'eip155:1/erc20:0xa'
            ELSE 'eip155:42161/erc20:0xa' END,
          CASE i % 3 WHEN 0 THEN 'eip155:8453' WHEN 1 THEN 'eip155:1' ELSE 'eip155:42161' END,
          'buyer-' || (i % 5000)
        FROM k`).run(partnerId, m0!, m1!)
      const queries = makeSqlitePaymentQueries(db)
      const plan = (statement: { sql: string; params: ReadonlyArray<unknown> }) =>
        (
          db
            .prepare(`EXPLAIN QUERY PLAN ${statement.sql}`)
            .all(...(statement.params as Array<string>)) as Array<{ detail: string }>
        )
          .map((r) => r.detail)
          .join("; ")
      const month = { from: new Date(1577000 * 1000), before: new Date(1577000 * 2700) }
      const base = fixture.base
      const cases: ReadonlyArray<readonly [PaymentFilter, string, string]> = [
        // A reference found by the trigram index: one payment, or about a hundred.
        [{ ...base, referenceId: "order-12345" }, "VIRTUAL TABLE", "VIRTUAL TABLE"],
        [{ ...base, referenceId: "123" }, "VIRTUAL TABLE", "VIRTUAL TABLE"],
        [
          { ...base, referenceId: "r-42", merchantIds: [m0!], ...month },
          "VIRTUAL TABLE",
          "VIRTUAL TABLE"
        ],
        [
          { ...base, networks: ["eip155:1" as Caip2] },
          "payments_by_partner_chain_date",
          "COVERING INDEX payments_succeeded_by_partner_token"
        ],
        [
          { ...base, assets: ["eip155:1/erc20:0xa" as Caip19], ...month },
          "payments_by_partner_chain_date",
          "COVERING INDEX payments_succeeded_by_partner_token"
        ],
        [
          { ...base, networks: ["eip155:1" as Caip2, "eip155:8453" as Caip2] },
          "payments_by_partner_date",
          "COVERING INDEX payments_succeeded_by_partner_token"
        ],
        [
          { ...base, networks: ["eip155:1" as Caip2], merchantIds: [m1!], ...month },
          "payments_by_merchant_date",
          // Either of the merchant's indexes bounds the read.
          "_by_merchant_date"
        ]
      ]
      for (const analyzed of [false, true]) {
        if (analyzed) db.exec("ANALYZE")
        for (const [filter, pageIndex, statsIndex] of cases) {
          const label = `${JSON.stringify(filter)}${analyzed ? " after ANALYZE" : ""}`
          const page = plan(
            queries.statements.page({ filter, sortBy: "date", direction: "desc", limit: 51 })
          )
          expect(page, label).toContain(pageIndex)
          expect(page, label).not.toMatch(/SCAN p\b/)
          // A page found by the network index or a merchant's walks it in order; one found by
          // the trigram index sorts its few matches.
          if (pageIndex !== "VIRTUAL TABLE") expect(page, label).not.toContain("TEMP B-TREE")
          // The sums and the buyers from the index alone when it covers them; the amounts past
          // 63 bits (none here) from the rows it finds.
          const [sums, large, customers] = queries.statements.matches(filter).map(plan)
          for (const stats of [sums!, customers!]) expect(stats, label).toContain(statsIndex)
          expect(large, label).toContain(statsIndex.replace("COVERING INDEX ", ""))
          for (const stats of [sums, large, customers]) {
            expect(stats, label).not.toMatch(/SCAN p\b/)
          }
        }
      }
    }).pipe(Effect.provide(layer({ filename: freshFile() })))
  )
})

const chainOf = (p: Payment) => p.tokenAmount!.asset.split("/")[0] as Caip2
