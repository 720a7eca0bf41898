/**
 * The purge on PostgreSQL: the retention contract, a pass over thousands of
 * rows counted before and after (core's PurgeFixture), and the purge's lease
 * raced for by several instances, each with its own pool, on one database.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { RetentionStore } from "@pay/core"
import {
  PURGE_NOW,
  type PurgeDatabase,
  purgeFixture,
  retentionStorageContract
} from "@pay/core/contracts"
import { Context, Effect, Layer, TestClock } from "effect"
import { freshSchema, freshStorage } from "../test/TestDatabase.js"
import { layer } from "./layer.js"

retentionStorageContract("PostgreSQL", freshStorage)

/** Bulk rows as multi-row inserts of 500, every value a parameter. */
const database = Effect.map(
  SqlClient.SqlClient,
  (sql): PurgeDatabase => ({
    insert: (table, columns, rows) =>
      Effect.gen(function* () {
        for (let from = 0; from < rows.length; from += 500) {
          const chunk = rows.slice(from, from + 500)
          const values = chunk
            .map(
              (_, r) => `(${columns.map((_, c) => `$${r * columns.length + c + 1}`).join(", ")})`
            )
            .join(", ")
          yield* sql.unsafe(
            `INSERT INTO ${table} (${columns.join(", ")}) VALUES ${values}`,
            chunk.flat()
          )
        }
      }).pipe(Effect.orDie),
    count: (table) =>
      sql.unsafe<{ readonly n: string }>(`SELECT count(*) AS n FROM ${table}`).pipe(
        Effect.map(([row]) => Number(row?.n ?? 0)),
        Effect.orDie
      )
  })
)

describe("the purge on PostgreSQL", () => {
  it.effect(
    "deletes exactly the rows past their retention, in batches; keeps the audit trail by default",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(PURGE_NOW)
        yield* purgeFixture(yield* database, {})
      }).pipe(Effect.provide(freshStorage())),
    60_000
  )

  it.effect(
    "deletes the audit trail past its retention once one is set",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(PURGE_NOW)
        yield* purgeFixture(yield* database, { auditTrailDays: 365 })
      }).pipe(Effect.provide(freshStorage())),
    60_000
  )

  it.scoped(
    "gives the purge's lease to one of several instances at a time, each racing on its own pool",
    () =>
      Effect.gen(function* () {
        const url = yield* freshSchema()
        const instances = yield* Effect.forEach(
          Array.from({ length: 4 }),
          () => Layer.build(layer({ url, maxConnections: 2 })),
          { concurrency: "unbounded" }
        )
        const stores = instances.map((c) => Context.get(c, RetentionStore))
        const at = (ms: number) => new Date(PURGE_NOW + ms)
        for (const [round, now] of [0, 10_000, 20_000, 30_000, 40_000].entries()) {
          // Several tries each at the same moment, from every instance.
          const taken = yield* Effect.all(
            stores.flatMap((s, i) =>
              [0, 1, 2].map((k) =>
                s.takeLease("purge", `instance-${i}-${k}`, at(now), at(now + 5_000))
              )
            ),
            { concurrency: "unbounded" }
          )
          expect(taken.filter(Boolean), `round ${round}`).toHaveLength(1)
          const again = yield* Effect.all(
            stores.map((s, i) =>
              s.takeLease("purge", `late-${i}`, at(now + 4_999), at(now + 9_000))
            ),
            { concurrency: "unbounded" }
          )
          expect(again.filter(Boolean)).toHaveLength(0)
        }
      }),
    60_000
  )
})
