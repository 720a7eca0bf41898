/**
 * The sealed values on PostgreSQL, for the re-seal after a rotation of the
 * engine's secret (core secrets/SealedValueStore.ts): each field is a column,
 * rewritten only where it still holds what the re-seal read, whichever
 * instance wrote it meanwhile.
 */
import type { SqlClient } from "@effect/sql"
import { type SealedField, SealedValueStore } from "@pay/core"
import { Effect, Option } from "effect"
import { orDieSql } from "./PgErrors.js"

/** Where each field is kept: fixed names, never input. */
const COLUMNS: Record<SealedField, { readonly table: string; readonly column: string }> = {
  "webhookEndpoints.secret": { table: "webhook_endpoints", column: "secret" },
  "webhookEndpoints.previousSecret": { table: "webhook_endpoints", column: "previous_secret" }
}

export const makePgSealedValueStore = (sql: SqlClient.SqlClient) => {
  const at = (field: SealedField) => {
    const { table, column } = COLUMNS[field]
    return { table: sql(table), column: sql(column) }
  }
  return SealedValueStore.of({
    page: (field, after, limit) => {
      const { table, column } = at(field)
      // "" sorts before every id: the first page. COLLATE "C": by bytes, as SQLite and the
      // in-memory store order ids, whatever the database's collation.
      return sql<{ readonly id: string; readonly sealed: string }>`SELECT id, ${column} AS sealed
        FROM ${table} WHERE id > ${after ?? ""} COLLATE "C" AND ${column} IS NOT NULL
        ORDER BY id COLLATE "C" LIMIT ${limit}`.pipe(orDieSql)
    },
    read: (field, id) => {
      const { table, column } = at(field)
      return sql<{ readonly sealed: string | null }>`SELECT ${column} AS sealed FROM ${table}
        WHERE id = ${id}`.pipe(
        Effect.map((rows) => Option.flatMapNullable(Option.fromNullable(rows[0]), (r) => r.sealed)),
        orDieSql
      )
    },
    replace: (field, id, expected, replacement) => {
      const { table, column } = at(field)
      return sql`UPDATE ${table} SET ${column} = ${replacement}
        WHERE id = ${id} AND ${column} = ${expected} RETURNING id`.pipe(
        Effect.map((rows) => rows.length === 1),
        orDieSql
      )
    }
  })
}
