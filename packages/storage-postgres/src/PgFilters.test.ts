/**
 * The list filters' indexes on PostgreSQL (migration 0016): the reference
 * search finds payments written before the migration and after it, pg_trgm is
 * used from the schema it lives in (not this schema's search_path), and the
 * planner, with statistics of a realistic table, picks the indexes for the
 * store's own statements.
 */
import { SqlClient } from "@effect/sql"
import type { Statement } from "@effect/sql/Statement"
import { describe, expect, it } from "@effect/vitest"
import type { Caip2, Caip19, Payment, PaymentFilter, PaymentId } from "@pay/core"
import { PaymentStore } from "@pay/core"
import { expectListingAgrees, statisticsFixture } from "@pay/core/contracts"
import { Effect } from "effect"
import { freshStorage } from "../test/TestDatabase.js"
import paymentFilters from "./migrations/0016_payment_filters.js"
import { containing, makePgPaymentQueries } from "./PgPaymentQueries.js"

const NEEDLES = ["stat-1", "STAT-1", "TAT-4", "-2", "t-3", "new", "zzz", "st", "%", "_", ""]

/** Every node of a JSON plan, depth first. */
const nodesOf = (plan: unknown): Array<Record<string, unknown>> => {
  const node = plan as Record<string, unknown>
  const children = (node.Plans as Array<unknown> | undefined) ?? []
  return [node, ...children.flatMap(nodesOf)]
}

describe("PostgreSQL list filter indexes", () => {
  it("escape LIKE's own characters, so a needle is taken literally", () => {
    expect(containing("100%_off\\x")).toBe("%100\\%\\_off\\\\x%")
    expect(containing("")).toBe("%%")
  })

  it.effect("find payments written before migration 0016 and after it", () =>
    Effect.gen(function* () {
      const fixture = yield* statisticsFixture
      const store = yield* PaymentStore
      const sql = yield* SqlClient.SqlClient
      // As if the payments had been written before 0016 existed.
      yield* sql`DROP INDEX payments_reference_trigrams, payments_by_partner_chain_date,
        payments_succeeded_by_partner_token`
      // The migration itself: the Migrator would not run it again below a later one.
      yield* sql.withTransaction(paymentFilters)
      const first = fixture.data[0]!
      const after: Payment = {
        ...first,
        id: `${first.id.slice(0, -4)}zzzz` as PaymentId,
        referenceId: "STAT-1-new"
      }
      yield* store.insert(after)
      const data = [...fixture.data, after]
      for (const referenceId of NEEDLES) {
        yield* expectListingAgrees(data, { ...fixture.base, referenceId }, 10)
      }
    }).pipe(Effect.provide(freshStorage()))
  )

  it.effect("use pg_trgm from the schema it is installed in, outside the search_path", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const [where] = yield* sql<{ readonly schema: string; readonly current: string }>`
        SELECT n.nspname AS schema, current_schema() AS current FROM pg_extension e
        JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`
      expect(where).toBeDefined()
      // Each test's schema is its own search_path: the extension is elsewhere (public).
      expect(where!.schema).not.toBe(where!.current)
      const [index] = yield* sql<{ readonly definition: string }>`
        SELECT pg_get_indexdef('payments_reference_trigrams'::regclass) AS definition`
      expect(index!.definition).toContain(`${where!.schema}.gin_trgm_ops`)
    }).pipe(Effect.provide(freshStorage()))
  )

  it.effect("migrate several schemas at once, each finding or installing pg_trgm once", () =>
    Effect.gen(function* () {
      const migrated = yield* Effect.all(
        Array.from({ length: 4 }, () =>
          Effect.flatMap(
            SqlClient.SqlClient,
            (sql) =>
              sql<{ readonly n: string }>`SELECT count(*)::text AS n FROM pg_indexes
              WHERE schemaname = current_schema() AND indexname = 'payments_reference_trigrams'`
          ).pipe(Effect.provide(freshStorage()))
        ),
        { concurrency: "unbounded" }
      )
      expect(migrated.map(([row]) => row?.n)).toEqual(["1", "1", "1", "1"])
    })
  )

  it.effect("are chosen by the planner for the store's statements, with planner statistics", () =>
    Effect.gen(function* () {
      const fixture = yield* statisticsFixture
      const sql = yield* SqlClient.SqlClient
      const { partnerId } = fixture.base
      const [m0, m1] = fixture.merchants.map((m) => m.id)
      // 60,000 payments over a year: two merchants, 60% succeeded; three chains, one of them
      // rare (1%), as the networks of a real account are.
      yield* sql`INSERT INTO payments (id, partner_id, merchant_id, reference_id,
          reference_folded, amount_unit, amount_value, status, expires_at, created_at,
          updated_at, token_asset, token_chain, buyer_key)
        SELECT 'pay_plan' || lpad(i::text, 12, '0'), ${partnerId},
          CASE WHEN i % 2 = 0 THEN ${m0!} ELSE ${m1!} END,
          'ORDER-' || i, 'order-' || i, 'iso4217/USD', 100 + i % 1000,
          CASE WHEN i % 10 < 6 THEN 'succeeded' ELSE 'expired' END,
          to_timestamp(i * 525.6 + 300), to_timestamp(i * 525.6), to_timestamp(i * 525.6),
          CASE WHEN i % 100 = 0 THEN 'eip155:42161/erc20:0xa'
            WHEN i % 2 = 0 THEN 'eip155:8453/erc20:0xa' ELSE 'eip155:1/erc20:0xa' END,
          CASE WHEN i % 100 = 0 THEN 'eip155:42161'
            WHEN i % 2 = 0 THEN 'eip155:8453' ELSE 'eip155:1' END,
          'buyer-' || (i % 5000)
        FROM generate_series(0, 59999) AS i`
      // What autovacuum does on a table this size: statistics and the visibility map. A
      // transaction of another test file still open in this database (files run in parallel)
      // keeps VACUUM from marking the new rows visible to all, and the planner then reads the
      // table rather than the covering index: VACUUM again until the pages are marked (99 %: a
      // few holding the fixture's own updated rows stay unmarked even on a quiet server).
      for (let round = 1; ; round++) {
        yield* sql`VACUUM ANALYZE payments`
        const [map] = yield* sql<{ readonly pages: number; readonly visible: number }>`
          SELECT relpages AS pages, relallvisible AS visible FROM pg_class
          WHERE oid = 'payments'::regclass`
        if (map!.visible >= map!.pages * 0.99) break
        if (round === 300) throw new Error(`${map!.visible} of ${map!.pages} pages all-visible`)
        // On the wall clock: it.effect's own clock is a TestClock, which a sleep would wait on forever.
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
      }
      const queries = makePgPaymentQueries(sql)
      const plan = (statement: Statement<unknown>) =>
        Effect.gen(function* () {
          const [text, params] = statement.compile()
          const [row] = yield* sql.unsafe<{ readonly "QUERY PLAN": ReadonlyArray<unknown> }>(
            `EXPLAIN (FORMAT JSON) ${text}`,
            params as Array<unknown>
          )
          const top = (row!["QUERY PLAN"][0] as { Plan: unknown }).Plan
          return nodesOf(top)
        })
      const indexes = (nodes: ReadonlyArray<Record<string, unknown>>) =>
        nodes.flatMap((node) =>
          typeof node["Index Name"] === "string"
            ? [`${node["Node Type"]} ${node["Index Name"]}`]
            : []
        )
      const seqScans = (nodes: ReadonlyArray<Record<string, unknown>>) =>
        nodes.filter(
          (node) => node["Node Type"] === "Seq Scan" && node["Relation Name"] === "payments"
        )
      const base = fixture.base
      const rare = ["eip155:42161" as Caip2]
      const cases: ReadonlyArray<readonly [PaymentFilter, string, string]> = [
        // One payment, and about a hundred: the trigram index.
        [
          { ...base, referenceId: "ORDER-12345" },
          "payments_reference_trigrams",
          "payments_reference_trigrams"
        ],
        [
          { ...base, referenceId: "4321" },
          "payments_reference_trigrams",
          "payments_reference_trigrams"
        ],
        [
          { ...base, networks: rare },
          "payments_by_partner_chain_date",
          "Index Only Scan payments_succeeded_by_partner_token"
        ],
        [
          { ...base, assets: ["eip155:42161/erc20:0xa" as Caip19] },
          "payments_by_partner_chain_date",
          "Index Only Scan payments_succeeded_by_partner_token"
        ],
        // A common network: its page walks an index in date order (the network's or the
        // partner's); its statistics come from the covering index alone.
        [
          { ...base, networks: ["eip155:1" as Caip2] },
          "payments_by_partner",
          "Index Only Scan payments_succeeded_by_partner_token"
        ]
      ]
      // A reference within a merchant's week (about 500 payments): those are read, not the
      // trigram index, whose entries for `ord`, `rde`, … cover every payment.
      const week = { from: new Date(100 * 86_400_000), before: new Date(107 * 86_400_000) }
      const inWeek: PaymentFilter = { ...base, referenceId: "order-1", merchantIds: [m0!], ...week }
      expect(yield* queries.statements.searchOf(inWeek)).toBe("scan")
      expect(yield* queries.statements.searchOf({ ...base, referenceId: "order-1" })).toBe("index")
      const weekPage = yield* plan(
        queries.statements.page(
          { filter: inWeek, sortBy: "date", direction: "desc", limit: 51 },
          "scan"
        )
      )
      // Bounded by the week on the merchant's index or the partner's (here half the payments
      // are the merchant's, so the planner may take either).
      expect(indexes(weekPage).join("; ")).toMatch(/payments_by_(merchant|partner)_date/)
      expect(indexes(weekPage).join("; ")).not.toContain("payments_reference_trigrams")
      const weekStats = yield* plan(queries.statements.stats(inWeek, "scan")!)
      expect(indexes(weekStats).join("; ")).toMatch(/_by_(merchant|partner)_date/)
      expect(indexes(weekStats).join("; ")).not.toContain("payments_reference_trigrams")
      expect(seqScans([...weekPage, ...weekStats])).toEqual([])
      for (const [filter, pageIndex, statsIndex] of cases) {
        const label = JSON.stringify(filter)
        const page = yield* plan(
          queries.statements.page({ filter, sortBy: "date", direction: "desc", limit: 51 })
        )
        expect(indexes(page).join("; "), label).toContain(pageIndex)
        expect(seqScans(page), label).toEqual([])
        const stats = yield* plan(queries.statements.stats(filter)!)
        expect(indexes(stats).join("; "), label).toContain(statsIndex)
        expect(seqScans(stats), label).toEqual([])
      }
    }).pipe(Effect.provide(freshStorage()))
  )
})
