/**
 * The storage layer an application provides: every storage port of the core
 * on a pooled PostgreSQL connection, migrated before the first use. The
 * PgClient (and the shared SqlClient tag) stay available, e.g. for
 * LISTEN/NOTIFY between instances.
 */
import { PgClient } from "@effect/sql-pg"
import { type Duration, Layer, Redacted } from "effect"
import { migrate } from "./Migrations.js"
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

/** The pooled client, and the shared SqlClient tag, without the stores. */
export const clientLayer = (options: PgStorageOptions) =>
  PgClient.layer({
    url: typeof options.url === "string" ? Redacted.make(options.url) : options.url,
    maxConnections: options.maxConnections ?? 10,
    connectTimeout: options.connectTimeout,
    applicationName: options.applicationName ?? "pay-engine"
  })

/** The client, with every pending migration applied. */
export const migratedClientLayer = (options: PgStorageOptions) =>
  Layer.effectDiscard(migrate).pipe(Layer.provideMerge(clientLayer(options)))

/** Every storage port of the core on PostgreSQL. */
export const layer = (options: PgStorageOptions) =>
  PgStores.pipe(Layer.provideMerge(migratedClientLayer(options)))
