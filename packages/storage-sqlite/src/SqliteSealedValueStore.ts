/**
 * The sealed values on SQLite, for the re-seal after a rotation of the
 * engine's secret (core secrets/SealedValueStore.ts): each field is a column,
 * rewritten only where it still holds what the re-seal read.
 */
import { type SealedField, SealedValueStore } from "@pay/core"
import { Effect, Option } from "effect"
import type { SqliteConnection } from "./SqliteDatabase.js"

/** Where each field is kept: fixed names, never input. */
const COLUMNS: Record<SealedField, { readonly table: string; readonly column: string }> = {
  "webhookEndpoints.secret": { table: "webhook_endpoints", column: "secret" },
  "webhookEndpoints.previousSecret": { table: "webhook_endpoints", column: "previous_secret" }
}

export const makeSqliteSealedValueStore = (db: SqliteConnection) => {
  const statements = (field: SealedField) => {
    const { table, column } = COLUMNS[field]
    return {
      page: db.prepare(`SELECT id, ${column} AS sealed FROM ${table}
        WHERE id > ? AND ${column} IS NOT NULL ORDER BY id LIMIT ?`),
      read: db.prepare(`SELECT ${column} AS sealed FROM ${table} WHERE id = ?`),
      replace: db.prepare(`UPDATE ${table} SET ${column} = ? WHERE id = ? AND ${column} = ?`)
    }
  }
  const by = Object.fromEntries(
    Object.keys(COLUMNS).map((field) => [field, statements(field as SealedField)])
  ) as Record<SealedField, ReturnType<typeof statements>>
  return SealedValueStore.of({
    // "" sorts before every id: the first page.
    page: (field, after, limit) =>
      Effect.sync(
        () =>
          by[field].page.all(after ?? "", limit) as Array<{
            readonly id: string
            readonly sealed: string
          }>
      ),
    read: (field, id) =>
      Effect.sync(() =>
        Option.flatMapNullable(
          Option.fromNullable(by[field].read.get(id) as { sealed: string | null } | undefined),
          (row) => row.sealed
        )
      ),
    replace: (field, id, expected, replacement) =>
      Effect.sync(() => Number(by[field].replace.run(replacement, id, expected).changes) === 1)
  })
}
