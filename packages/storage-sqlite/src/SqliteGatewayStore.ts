/**
 * The gateway store on SQLite: payment options and the data buyers enter.
 * The authorization's uint256 numbers are decimal TEXT (exact up to
 * 2^256 - 1); a batch of options is inserted in one transaction, so a
 * duplicate id or a missing payment leaves none of it stored.
 */
import {
  type Caip10,
  type CollectedDataRecord,
  GatewayStore,
  type OptionsInserted,
  type PaymentId,
  type PaymentOption,
  type PaymentOptionColumns,
  paymentOptionFromColumns,
  paymentOptionTextColumns
} from "@pay/core"
import { Effect, Option } from "effect"
import type { GroupCommit } from "./GroupCommit.js"
import type { SqliteConnection } from "./SqliteDatabase.js"
import type { SqlitePurges } from "./SqlitePurge.js"

/** The columns both drivers return alike, and SQLite's own: times in ms, flags 0 or 1. */
interface OptionRow extends PaymentOptionColumns {
  expires_at: number
  quoted: number
  collect_data: number
  created_at: number
}

interface CollectedRow {
  payment_id: string
  account: string
  data: string
  collected_at: number
}

const toOption = (r: OptionRow): PaymentOption =>
  paymentOptionFromColumns(r, {
    expiresAt: new Date(r.expires_at),
    quoted: r.quoted === 1,
    collectData: r.collect_data === 1,
    createdAt: new Date(r.created_at)
  })

/**
 * SQLite's own (PgGatewayStore has its twin): the data is JSON text and the time
 * ms here, parsed jsonb and a Date there, and nothing else is left to share.
 */
const toCollected = (r: CollectedRow): CollectedDataRecord => ({
  paymentId: r.payment_id as PaymentId,
  account: r.account as Caip10,
  data: JSON.parse(r.data) as CollectedDataRecord["data"],
  collectedAt: new Date(r.collected_at)
})

export const makeSqliteGatewayStore = (
  db: SqliteConnection,
  /** Where option inserts go: one per wallet's options request, sharing commits. */
  writes: GroupCommit,
  /** Its purges (SqlitePurge.ts). */
  purges: SqlitePurges
) => {
  const insertSql = db.prepare(`INSERT INTO payment_options (id, payment_id, account, asset, value,
      auth_from, auth_to, valid_after, valid_before, nonce, expires_at, quoted, collect_data,
      created_at, client_id, method, approvals, rate)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
  const findSql = db.prepare("SELECT * FROM payment_options WHERE id = ?")
  const saveSql = db.prepare(`INSERT INTO collected_data (payment_id, account, data, collected_at)
    VALUES (?, ?, ?, ?)
    ON CONFLICT (payment_id, account)
    DO UPDATE SET data = excluded.data, collected_at = excluded.collected_at`)
  const findCollectedSql = db.prepare(
    "SELECT * FROM collected_data WHERE payment_id = ? AND account = ?"
  )
  const heldSql = db.prepare("SELECT count(*) AS n FROM payment_options WHERE payment_id = ?")
  // The payment's expired options, oldest first (migration 0020's index by payment and expiry).
  const makeRoomSql = db.prepare(`DELETE FROM payment_options WHERE id IN (
      SELECT id FROM payment_options WHERE payment_id = ? AND expires_at <= ?
      ORDER BY expires_at, id LIMIT ?)`)
  const expiredSql = db.prepare(
    "SELECT count(*) AS n FROM payment_options WHERE payment_id = ? AND expires_at <= ?"
  )
  return GatewayStore.of({
    // A constraint violation throws out of the write (rolled back to its savepoint): a
    // defect, as the port has no error for it.
    insertOptions: (options, cap) =>
      writes.write(() =>
        db.transaction((): OptionsInserted => {
          const paymentId = options[0]?.paymentId
          if (cap !== undefined && paymentId !== undefined) {
            const held = (heldSql.get(paymentId) as { n: number }).n
            const over = held + options.length - cap.max
            if (over > 0) {
              const expired = (expiredSql.get(paymentId, cap.now.getTime()) as { n: number }).n
              if (over > expired) return "full"
              makeRoomSql.run(paymentId, cap.now.getTime(), over)
            }
          }
          for (const o of options) {
            const a = o.authorization
            const text = paymentOptionTextColumns(o)
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
              o.clientId,
              text.method,
              text.approvals,
              text.rate
            )
          }
          return "inserted"
        })
      ),
    findOption: (id) =>
      Effect.sync(() => {
        const row = findSql.get(id) as OptionRow | undefined
        return row === undefined ? Option.none() : Option.some(toOption(row))
      }),
    saveCollectedData: (record) =>
      writes.write(() => {
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
      }),
    purgeOptions: (expiredBefore, limit) => purges.run("options", expiredBefore.getTime(), limit),
    purgeCollectedData: (finalBefore, limit) =>
      purges.run("collectedData", finalBefore.getTime(), limit)
  })
}
