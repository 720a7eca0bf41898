/**
 * The engine's generated secret on SQLite: the first writer's row wins.
 */
import { EngineSecretStore } from "@pay/core"
import { Effect, Option } from "effect"
import type { SqliteConnection } from "./SqliteDatabase.js"

export const makeSqliteEngineSecretStore = (db: SqliteConnection) => {
  const insert = db.prepare(
    "INSERT INTO engine_secrets (name, value, created_at) VALUES ('engine', ?, ?) ON CONFLICT (name) DO NOTHING"
  )
  const read = db.prepare("SELECT value FROM engine_secrets WHERE name = 'engine'")
  return EngineSecretStore.of({
    getOrCreate: (candidate, at) =>
      Effect.sync(() => {
        insert.run(candidate, at.getTime())
        return (read.get() as { readonly value: string }).value
      }),
    find: Effect.sync(() =>
      Option.map(
        Option.fromNullable(read.get() as { readonly value: string } | undefined),
        (row) => row.value
      )
    )
  })
}
