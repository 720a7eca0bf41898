/**
 * The gateway store on PostgreSQL: payment options and the data buyers enter.
 * The authorization's uint256 numbers are `numeric(78,0)`, read back as text
 * and so exact; a batch of options is one multi-row INSERT, so a duplicate id
 * or a missing payment leaves none of it stored (and is a defect: the port
 * has no error for it). A second save of collected data replaces the first in
 * one upsert.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import {
  type Caip10,
  type CollectedDataRecord,
  GatewayStore,
  type OptionsCap,
  type PaymentId,
  type PaymentOption,
  type PaymentOptionColumns,
  paymentOptionFromColumns,
  paymentOptionTextColumns
} from "@pay/core"
import { Effect, Option } from "effect"
import { orDieSql } from "./PgErrors.js"
import { batchLimit } from "./PgRetentionStore.js"

/** The columns both drivers return alike, and PostgreSQL's own: times as Date, flags boolean. */
interface OptionRow extends PaymentOptionColumns {
  readonly expires_at: Date
  readonly quoted: boolean
  readonly collect_data: boolean
  readonly created_at: Date
}

interface CollectedRow {
  readonly payment_id: string
  readonly account: string
  /** jsonb comes back parsed. */
  readonly data: CollectedDataRecord["data"]
  readonly collected_at: Date
}

const toOption = (r: OptionRow): PaymentOption =>
  paymentOptionFromColumns(r, {
    expiresAt: r.expires_at,
    quoted: r.quoted,
    collectData: r.collect_data,
    createdAt: r.created_at
  })

/**
 * PostgreSQL's own (SqliteGatewayStore has its twin): the data is parsed jsonb and
 * the time a Date here, JSON text and ms there, and nothing else is left to share.
 */
const toCollected = (r: CollectedRow): CollectedDataRecord => ({
  paymentId: r.payment_id as PaymentId,
  account: r.account as Caip10,
  data: r.data,
  collectedAt: r.collected_at
})

export const makePgGatewayStore = (sql: SqlClient) => {
  const insert = (options: ReadonlyArray<PaymentOption>) =>
    sql`INSERT INTO payment_options ${sql.insert(
      options.map((o) => ({
        id: o.id,
        payment_id: o.paymentId,
        account: o.account,
        asset: o.asset,
        value: o.authorization.value.toString(),
        auth_from: o.authorization.from,
        auth_to: o.authorization.to,
        valid_after: o.authorization.validAfter.toString(),
        valid_before: o.authorization.validBefore.toString(),
        nonce: o.authorization.nonce,
        expires_at: o.expiresAt,
        quoted: o.quoted,
        collect_data: o.collectData,
        created_at: o.createdAt,
        client_id: o.clientId,
        ...paymentOptionTextColumns(o)
      }))
    )}`

  /**
   * The batch within the payment's cap, in one transaction: batches for the same payment take
   * its advisory lock in turn (on any instance), so two cannot both count the same room.
   */
  const insertCapped = (
    options: ReadonlyArray<PaymentOption>,
    cap: OptionsCap,
    paymentId: string
  ) =>
    sql.withTransaction(
      Effect.gen(function* () {
        yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${`options:${paymentId}`}, 0))`
        const [counts] = yield* sql<{ readonly held: string; readonly expired: string }>`
          SELECT count(*) AS held, count(*) FILTER (WHERE expires_at <= ${cap.now}) AS expired
          FROM payment_options WHERE payment_id = ${paymentId}`
        const over = Number(counts?.held ?? 0) + options.length - cap.max
        if (over > Number(counts?.expired ?? 0)) return "full" as const
        if (over > 0) {
          yield* sql`DELETE FROM payment_options WHERE id IN (
            SELECT id FROM payment_options WHERE payment_id = ${paymentId}
              AND expires_at <= ${cap.now} ORDER BY expires_at, id LIMIT ${over})`
        }
        yield* insert(options)
        return "inserted" as const
      })
    )

  return GatewayStore.of({
    insertOptions: (options, cap) => {
      const paymentId = options[0]?.paymentId
      if (paymentId === undefined) return Effect.succeed("inserted" as const)
      return (
        cap === undefined
          ? Effect.as(insert(options), "inserted" as const)
          : insertCapped(options, cap, paymentId)
      ).pipe(orDieSql)
    },

    findOption: (id) =>
      sql<OptionRow>`SELECT * FROM payment_options WHERE id = ${id}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toOption)),
        orDieSql
      ),

    saveCollectedData: (record) =>
      sql`INSERT INTO collected_data (payment_id, account, data, collected_at)
        VALUES (${record.paymentId}, ${record.account}, ${JSON.stringify(record.data)}::jsonb,
          ${record.collectedAt})
        ON CONFLICT (payment_id, account)
        DO UPDATE SET data = excluded.data, collected_at = excluded.collected_at`.pipe(
        Effect.asVoid,
        orDieSql
      ),

    findCollectedData: (paymentId, account) =>
      sql<CollectedRow>`SELECT * FROM collected_data
        WHERE payment_id = ${paymentId} AND account = ${account}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toCollected)),
        orDieSql
      ),

    // The purge's batches (core retention/Purge.ts), each through a range of migration 0030's
    // indexes in their order, its batch size a literal (PgRetentionStore.ts); a row another
    // instance deleted or locked first is simply left.
    // Expired options not yet kept, oldest first (the index leaves the kept out), each
    // deleted, or kept when its payment was paid with it (its collect or deploy job names it):
    // one statement.
    purgeOptions: (expiredBefore, limit) =>
      sql<{ readonly deleted: string; readonly kept: string }>`WITH found AS (
          SELECT o.id, EXISTS (
              SELECT 1 FROM chain_jobs j WHERE j.payment_id = o.payment_id
                AND j.kind IN ('collect', 'deploy') AND j.payload ->> 'optionId' = o.id
            ) AS paid
          FROM payment_options o JOIN payments p ON p.id = o.payment_id
          WHERE NOT o.kept AND o.expires_at < ${expiredBefore} AND p.status <> 'processing'
          ORDER BY o.expires_at LIMIT ${batchLimit(sql, limit)} FOR UPDATE OF o SKIP LOCKED
        ), deleted AS (
          DELETE FROM payment_options WHERE id = ANY (ARRAY(SELECT id FROM found WHERE NOT paid))
          RETURNING 1
        ), kept AS (
          UPDATE payment_options SET kept = true WHERE id = ANY (ARRAY(SELECT id FROM found WHERE paid))
          RETURNING 1
        ) SELECT (SELECT count(*) FROM deleted) AS deleted, (SELECT count(*) FROM kept) AS kept`.pipe(
        Effect.map(([row]) => ({
          deleted: Number(row?.deleted ?? 0),
          kept: Number(row?.kept ?? 0)
        })),
        orDieSql
      ),

    purgeCollectedData: (finalBefore, limit) =>
      sql<{ readonly purged: string }>`WITH purged AS (
          DELETE FROM collected_data WHERE ctid = ANY (ARRAY(
            SELECT c.ctid FROM collected_data c JOIN payments p ON p.id = c.payment_id
            WHERE c.collected_at < ${finalBefore}
              AND (p.final_at < ${finalBefore}
                OR (p.status = 'requires_action' AND p.expires_at < ${finalBefore}))
            ORDER BY c.collected_at LIMIT ${batchLimit(sql, limit)} FOR UPDATE OF c SKIP LOCKED))
          RETURNING 1
        ) SELECT count(*) AS purged FROM purged`.pipe(
        Effect.map(([row]) => Number(row?.purged ?? 0)),
        orDieSql
      )
  })
}
