/**
 * For test files: the run's PostgreSQL database (handed over by the
 * globalSetup, see TestServer.ts), and schemas of their own in it, so tests
 * never see each other's rows and can run in parallel. Each schema is dropped
 * when the scope that made it closes.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { clientLayer, type PgStorageOptions } from "../src/layer.js"
import { migrate } from "../src/Migrations.js"
import { PgStores } from "../src/PgStores.js"
import { DATABASE_URL_KEY } from "./Provided.js"
import { withAdmin } from "./TestServer.js"

export { withAdmin }

export const testDatabaseUrl = (): string => inject(DATABASE_URL_KEY)

/** `url` whose connections look up (and create) unqualified tables in `schema`. */
export const withSearchPath = (url: string, schema: string) => {
  const u = new URL(url)
  u.searchParams.set("options", `-c search_path=${schema}`)
  return u.toString()
}

const newSchemaName = () => `t_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`

/**
 * A URL on a new, empty schema, for as long as the scope lives: for suites
 * that hand the database to other processes (servers under test).
 */
export const freshSchema = (url: string = testDatabaseUrl()) =>
  Effect.gen(function* () {
    const schema = newSchemaName()
    yield* Effect.acquireRelease(
      withAdmin(url, (sql) => sql`CREATE SCHEMA ${sql(schema)}`),
      () => Effect.orDie(withAdmin(url, (sql) => sql`DROP SCHEMA ${sql(schema)} CASCADE`))
    )
    return withSearchPath(url, schema)
  })

/**
 * Every storage port, migrated, in a new schema; a fresh one per build. The
 * schema is made and dropped through the stores' own pool, before it closes.
 */
export const freshStorage = (options: Omit<PgStorageOptions, "url"> = {}) =>
  Layer.suspend(() => {
    const schema = newSchemaName()
    const client = clientLayer({ ...options, url: withSearchPath(testDatabaseUrl(), schema) })
    const ownSchema = Layer.scopedDiscard(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.acquireRelease(sql`CREATE SCHEMA ${sql(schema)}`, () =>
          Effect.orDie(sql`DROP SCHEMA ${sql(schema)} CASCADE`)
        )
      )
    )
    const ready = Layer.effectDiscard(migrate).pipe(
      Layer.provide(ownSchema),
      Layer.provideMerge(client)
    )
    return PgStores.pipe(Layer.provideMerge(ready))
  })
