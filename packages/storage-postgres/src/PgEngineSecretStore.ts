/**
 * The engine's generated secret on PostgreSQL: the first writer's row wins,
 * whichever instance it is.
 */
import type { SqlClient } from "@effect/sql"
import { EngineSecretStore } from "@pay/core"
import { Effect, Option } from "effect"
import { orDieSql } from "./PgErrors.js"

export const makePgEngineSecretStore = (sql: SqlClient.SqlClient) =>
  EngineSecretStore.of({
    getOrCreate: (candidate, at) =>
      Effect.gen(function* () {
        yield* sql`INSERT INTO engine_secrets (name, value, created_at)
          VALUES ('engine', ${candidate}, ${at}) ON CONFLICT (name) DO NOTHING`
        const [row] = yield* sql<{ readonly value: string }>`SELECT value FROM engine_secrets
          WHERE name = 'engine'`
        return row!.value
      }).pipe(orDieSql),
    find: sql<{ readonly value: string }>`SELECT value FROM engine_secrets
      WHERE name = 'engine'`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => row.value)),
      orDieSql
    )
  })
