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
  type Caip19,
  type CollectedDataRecord,
  GatewayStore,
  type OptionId,
  type PaymentId,
  type PaymentOption
} from "@pay/core"
import { Effect, Option } from "effect"
import { orDieSql } from "./PgErrors.js"

interface OptionRow {
  readonly id: string
  readonly payment_id: string
  readonly account: string
  readonly asset: string
  /** numeric comes back as text: exact at any size. */
  readonly value: string
  readonly auth_from: string
  readonly auth_to: string
  readonly valid_after: string
  readonly valid_before: string
  readonly nonce: string
  readonly expires_at: Date
  readonly quoted: boolean
  readonly collect_data: boolean
  readonly created_at: Date
  readonly client_id: string | null
}

interface CollectedRow {
  readonly payment_id: string
  readonly account: string
  /** jsonb comes back parsed. */
  readonly data: CollectedDataRecord["data"]
  readonly collected_at: Date
}

type Authorization = PaymentOption["authorization"]

const toOption = (r: OptionRow): PaymentOption => ({
  id: r.id as OptionId,
  paymentId: r.payment_id as PaymentId,
  account: r.account as Caip10,
  asset: r.asset as Caip19,
  authorization: {
    from: r.auth_from as Authorization["from"],
    to: r.auth_to as Authorization["to"],
    value: BigInt(r.value),
    validAfter: BigInt(r.valid_after),
    validBefore: BigInt(r.valid_before),
    nonce: r.nonce as Authorization["nonce"]
  },
  expiresAt: r.expires_at,
  quoted: r.quoted,
  collectData: r.collect_data,
  clientId: r.client_id,
  createdAt: r.created_at
})

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
