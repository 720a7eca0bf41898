/**
 * The gateway store on SQLite: payment options and the data buyers enter.
 * The authorization's uint256 numbers are decimal TEXT (exact up to
 * 2^256 - 1); a batch of options is inserted in one transaction, so a
 * duplicate id or a missing payment leaves none of it stored.
 */
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
import type { SqliteConnection } from "./SqliteDatabase.js"

interface OptionRow {
  id: string
  payment_id: string
  account: string
  asset: string
  value: string
  auth_from: string
  auth_to: string
  valid_after: string
  valid_before: string
  nonce: string
  expires_at: number
  quoted: number
  collect_data: number
  created_at: number
  client_id: string | null
}

interface CollectedRow {
  payment_id: string
  account: string
  data: string
  collected_at: number
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
  expiresAt: new Date(r.expires_at),
  quoted: r.quoted === 1,
  collectData: r.collect_data === 1,
  clientId: r.client_id,
  createdAt: new Date(r.created_at)
})

const toCollected = (r: CollectedRow): CollectedDataRecord => ({
  paymentId: r.payment_id as PaymentId,
  account: r.account as Caip10,
  data: JSON.parse(r.data) as CollectedDataRecord["data"],
  collectedAt: new Date(r.collected_at)
})

export const makeSqliteGatewayStore = (db: SqliteConnection) => {
  const insertSql = db.prepare(`INSERT INTO payment_options (id, payment_id, account, asset, value,
      auth_from, auth_to, valid_after, valid_before, nonce, expires_at, quoted, collect_data,
      created_at, client_id)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
  const findSql = db.prepare("SELECT * FROM payment_options WHERE id = ?")
  const saveSql = db.prepare(`INSERT INTO collected_data (payment_id, account, data, collected_at)
    VALUES (?, ?, ?, ?)
    ON CONFLICT (payment_id, account)
    DO UPDATE SET data = excluded.data, collected_at = excluded.collected_at`)
  const findCollectedSql = db.prepare(
    "SELECT * FROM collected_data WHERE payment_id = ? AND account = ?"
  )

  return GatewayStore.of({
    // A constraint violation throws out of the transaction (rolled back) and out of
    // Effect.sync: a defect, as the port has no error for it.
    insertOptions: (options) =>
      Effect.sync(() =>
        db.transaction(() => {
          for (const o of options) {
            const a = o.authorization
            insertSql.run(
              o.id,
              o.paymentId,
              o.account,
              o.asset,
              a.value.toString(),
              a.from,
              a.to,
              a.validAfter.toString(),
              a.validBefore.toString(),
              a.nonce,
              o.expiresAt.getTime(),
              o.quoted ? 1 : 0,
              o.collectData ? 1 : 0,
              o.createdAt.getTime(),
              o.clientId
            )
          }
        })
      ),
    findOption: (id) =>
      Effect.sync(() => {
        const row = findSql.get(id) as OptionRow | undefined
        return row === undefined ? Option.none() : Option.some(toOption(row))
      }),
    saveCollectedData: (record) =>
      Effect.sync(() => {
        saveSql.run(
          record.paymentId,
          record.account,
          JSON.stringify(record.data),
          record.collectedAt.getTime()
        )
      }),
    findCollectedData: (paymentId, account) =>
      Effect.sync(() => {
        const row = findCollectedSql.get(paymentId, account) as CollectedRow | undefined
        return row === undefined ? Option.none() : Option.some(toCollected(row))
      })
  })
}
