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
  type PaymentId,
  type PaymentOption,
  type PaymentOptionColumns,
  paymentOptionFromColumns
} from "@pay/core"
import { Effect, Option } from "effect"
import { orDieSql } from "./PgErrors.js"

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

export const makePgGatewayStore = (sql: SqlClient) =>
  GatewayStore.of({
    insertOptions: (options) =>
      options.length === 0
        ? Effect.void
        : sql`INSERT INTO payment_options ${sql.insert(
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
              client_id: o.clientId
            }))
          )}`.pipe(Effect.asVoid, orDieSql),

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
      )
  })
