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

export const makePreparedStatements = (
  sql: SqlClient.SqlClient,
  pool: Pg.Pool | undefined
): PreparedStatements => ({
  promised: <Row extends object>(name: string, text: string) =>
    pool === undefined
      ? undefined
      : (values: ReadonlyArray<unknown>) =>
          pool
            .query<Row>({ name, text, values: values as Array<unknown> })
            .then((result) => result.rows),
  prepare: <Row extends object>(name: string, text: string): Prepared<Row> => {
    const unprepared = (values: ReadonlyArray<unknown>) =>
      sql.unsafe<Row>(text, values) as Statement.Statement<Row>
    if (pool === undefined) return unprepared
    const onPool = (values: ReadonlyArray<unknown>) =>
      Effect.async<ReadonlyArray<Row>, SqlError>((resume) => {
        pool.query<Row>({ name, text, values: values as Array<unknown> }, (error, result) => {
          resume(error ? Effect.fail(sqlError(error)) : Effect.succeed(result.rows))
        })
      })
    return (values) =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) =>
        Option.isSome(transaction) ? unprepared(values) : onPool(values)
      )
  }
})
