/**
 * The hot statements (a payment's status, a payment created, a merchant read)
 * as named prepared statements on the `pg` pool under the PgClient: each pooled
 * connection parses and plans one once, then only binds and executes it. The
 * PgClient sends every statement unnamed, so the server parses and plans it on
 * every call, and the client compiles its fragments, opens a span and checks a
 * connection out per call; on the routes that run one short statement, that
 * was most of their cost (docs/benchmarks.md).
 *
 * A statement run inside a transaction goes through the PgClient instead, on
 * the transaction's connection; so does every statement when the client was
 * provided without this pool (an application's own PgClient layer).
 */
import { SqlClient, type Statement } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { type LruCache, makeLruCache } from "@pay/core"
import { Context, Effect, Option } from "effect"
import type Pg from "pg"

/** The pool the PgClient runs on, when this package made both (see layer.ts). */
export class PgPool extends Context.Tag("@pay/storage-postgres/PgPool")<PgPool, Pg.Pool>() {}

export type Prepared<Row> = (
  values: ReadonlyArray<unknown>
) => Effect.Effect<ReadonlyArray<Row>, SqlError>

export interface PreparedStatements {
  /** `text` with `$1`… placeholders, named `name` on every connection (names are unique). */
  readonly prepare: <Row extends object>(name: string, text: string) => Prepared<Row>
  /**
   * The same statement as a plain promise on the pool, for a read answered without a fiber
   * (PaymentStore.findStatusNow); undefined without the pool. Never for a transaction's work.
   */
  readonly promised: <Row extends object>(
    name: string,
    text: string
  ) => ((values: ReadonlyArray<unknown>) => Promise<ReadonlyArray<Row>>) | undefined
}

/** What pg rejects a query with, as the PgClient reports it, so the stores read both alike. */
const sqlError = (cause: unknown) => new SqlError({ cause, message: "Failed to execute statement" })

/**
 * How many named statements one connection keeps prepared. The stores name a handful, each
 * fixed in code; the bound is there so no name made from input could grow the server's memory
 * per connection (PostgreSQL keeps a prepared statement until it is deallocated or the
 * connection closes).
 */
export const PREPARED_PER_CONNECTION = 100

/**
 * Runs the named statement on a connection of the pool, keeping at most `capacity` statements
 * prepared on each connection: past it, the least recently used one is deallocated on the
 * server (and forgotten by pg, so its next use prepares it again) before the statement runs.
 */
const makeRunner = (pool: Pg.Pool, capacity: number) => {
  const preparedOn = new WeakMap<Pg.PoolClient, LruCache<string, true>>()
  return <Row extends object>(
    name: string,
    text: string,
    values: ReadonlyArray<unknown>,
    done: (error: Error | undefined, rows: ReadonlyArray<Row>) => void
  ) =>
    pool.connect((connectError, client, release) => {
      if (connectError || client === undefined) {
        return done(connectError ?? new Error("no connection"), [])
      }
      let names = preparedOn.get(client)
      if (names === undefined) {
        names = makeLruCache<string, true>(capacity, (evicted) => {
          // pg's record of what this connection has parsed: without it, the next use parses.
          const parsed = (
            client as unknown as { connection?: { parsedStatements?: Record<string, string> } }
          ).connection?.parsedStatements
          if (parsed !== undefined) delete parsed[evicted]
          // Queued before the statement below: the connection is this call's alone meanwhile.
          client.query(`DEALLOCATE ${client.escapeIdentifier(evicted)}`, () => {})
        })
        preparedOn.set(client, names)
      }
      // As pool.query does: a connection that fails while checked out, or whose query failed,
      // is released once with its error (and so closed, not reused).
      let released = false
      const finish = (error: Error | undefined, rows: ReadonlyArray<Row>) => {
        if (released) return
        released = true
        client.removeListener("error", onError)
        release(error)
        done(error, rows)
      }
      const onError = (error: Error) => finish(error, [])
      client.once("error", onError)
      try {
        if (names.get(name) === undefined) names.set(name, true)
        client.query<Row>({ name, text, values: values as Array<unknown> }, (error, result) =>
          finish(error ?? undefined, error ? [] : result.rows)
        )
      } catch (error) {
        finish(error instanceof Error ? error : new Error(String(error)), [])
      }
    })
}

export const makePreparedStatements = (
  sql: SqlClient.SqlClient,
  pool: Pg.Pool | undefined,
  capacity: number = PREPARED_PER_CONNECTION
): PreparedStatements => {
  const run = pool === undefined ? undefined : makeRunner(pool, capacity)
  return {
    promised: <Row extends object>(name: string, text: string) =>
      run === undefined
        ? undefined
        : (values: ReadonlyArray<unknown>) =>
            new Promise<ReadonlyArray<Row>>((resolve, reject) =>
              run<Row>(name, text, values, (error, rows) => (error ? reject(error) : resolve(rows)))
            ),
    prepare: <Row extends object>(name: string, text: string): Prepared<Row> => {
      const unprepared = (values: ReadonlyArray<unknown>) =>
        sql.unsafe<Row>(text, values) as Statement.Statement<Row>
      if (run === undefined) return unprepared
      const onPool = (values: ReadonlyArray<unknown>) =>
        Effect.async<ReadonlyArray<Row>, SqlError>((resume) => {
          run<Row>(name, text, values, (error, rows) => {
            resume(error ? Effect.fail(sqlError(error)) : Effect.succeed(rows))
          })
        })
      return (values) =>
        Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) =>
          Option.isSome(transaction) ? unprepared(values) : onPool(values)
        )
    }
  }
}
