/**
 * The storage layer an application provides: every storage port of the core
 * on a pooled PostgreSQL connection, migrated before the first use. The
 * PgClient (and the shared SqlClient tag) stay available, e.g. for
 * LISTEN/NOTIFY between instances.
 */
import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Redacted } from "effect"
import Pg from "pg"
import { migrate } from "./Migrations.js"
import { PgPool } from "./PgPrepared.js"
import { PgStores } from "./PgStores.js"

export interface PgStorageOptions {
  /**
   * A `postgres://` URL. Its `options` parameter reaches the server, e.g.
   * `?options=-c%20search_path%3Dpay` to keep the tables in their own schema.
   */
  readonly url: string | Redacted.Redacted<string>
  /** The pool's size; the default suits a handful of instances on one server. */
  readonly maxConnections?: number | undefined
  readonly connectTimeout?: Duration.DurationInput | undefined
  /** Shown in `pg_stat_activity`, to tell instances apart. */
  readonly applicationName?: string | undefined
}

const DEFAULT_CONNECT_TIMEOUT = Duration.seconds(5)

/**
 * The `pg` pool, checked with one query at start (a wrong URL or a server that
 * is down stops the start, within the connect timeout), ended with the scope.
 */
const poolLayer = (options: PgStorageOptions) =>
  Layer.scoped(
    PgPool,
    Effect.gen(function* () {
      const timeout = Duration.decode(options.connectTimeout ?? DEFAULT_CONNECT_TIMEOUT)
      const pool = yield* Effect.acquireRelease(
        Effect.sync(
          () =>
            new Pg.Pool({
              connectionString: Redacted.value(
                typeof options.url === "string" ? Redacted.make(options.url) : options.url
              ),
              max: options.maxConnections ?? 10,
              // Given, it also bounds a wait for a free pooled connection (pg-pool's rule);
              // not given, a request waits for one as long as it takes, as before.
              ...(options.connectTimeout === undefined
                ? {}
                : { connectionTimeoutMillis: Duration.toMillis(timeout) }),
              application_name: options.applicationName ?? "pay-engine"
            })
        ),
        // Interruptible: a finalizer is not, and the time limit must be able to cut the wait.
        (pool) =>
          Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
      )
      // An idle connection's error (the server restarting) must not end the process: the pool
      // drops that connection and opens another on the next checkout.
      pool.on("error", () => {})
      yield* Effect.tryPromise({
        try: () => pool.query("SELECT 1"),
        catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
      }).pipe(
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () =>
            new SqlError({
              cause: new Error("Connection timed out"),
              message: "PgClient: Connection timed out"
            })
        })
      )
      return pool
    })
  )

/**
 * The pooled client, and the shared SqlClient tag, without the stores; and the
 * pool under it (PgPool), on which the stores' hot statements run prepared.
 */
export const clientLayer = (options: PgStorageOptions) =>
  Layer.unwrapEffect(
    Effect.map(PgPool, (pool) => PgClient.layerFromPool({ acquire: Effect.succeed(pool) }))
  ).pipe(Layer.provideMerge(poolLayer(options)))

/** The client, with every pending migration applied. */
export const migratedClientLayer = (options: PgStorageOptions) =>
  Layer.effectDiscard(migrate).pipe(Layer.provideMerge(clientLayer(options)))

/** Every storage port of the core on PostgreSQL. */
export const layer = (options: PgStorageOptions) =>
  PgStores.pipe(Layer.provideMerge(migratedClientLayer(options)))
