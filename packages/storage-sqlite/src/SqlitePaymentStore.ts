/**
 * The payment store on SQLite: its writes (inserts, compare-and-set
 * transitions, expiries, refunds), each in one transaction with the
 * idempotency record and the chain job that go with it, and its reads of one
 * payment. A payment that succeeds is counted into the statistics aggregates
 * in the same transaction (see PaymentStatsPlan); listings and statistics are
 * SqlitePaymentQueries.ts.
 */
import {
  buyerKey,
  type ChainJobLease,
  chainOfCaip19,
  formatUnit,
  type IdempotencyCompletion,
  type NewChainJob,
  type Outbox,
  type Payment,
  type PaymentFees,
  type PaymentId,
  PaymentStore,
  RefundExists,
  utcDay
} from "@pay/core"
import { Effect, Option } from "effect"
import type { GroupCommit } from "./GroupCommit.js"
import { paymentChangeRefusal, settlementToStorage } from "./SqliteChainJobStore.js"
import type { SqliteConnection, SqliteValue } from "./SqliteDatabase.js"
import { isUniqueViolation } from "./SqliteErrors.js"
import { makeSqlitePaymentQueries } from "./SqlitePaymentQueries.js"
import {
  livemodeColumn,
  type PaymentRow,
  placeholders,
  SELECT,
  type StatusRow,
  sortable,
  toPayment,
  toStatusRecord
} from "./SqlitePaymentRow.js"

const MAX_I63 = 2n ** 63n - 1n

/** The payment's fee columns: fixed, percentage, total, network (null for a token's). */
const feesToStorage = (f: PaymentFees | null): Array<SqliteValue> => [
  f?.fixed.toString() ?? null,
  f?.percentage ?? null,
  f?.total.toString() ?? null,
  f?.network?.toString() ?? null
]

/** `CASE WHEN ? = 1 THEN ? …` pairs: each column's new value, when one is given. */
const replacing = <A>(
  value: A | undefined,
  columns: (value: A | null) => Array<SqliteValue>
): Array<SqliteValue> =>
  columns(value ?? null).flatMap((column) => [value === undefined ? 0 : 1, column])

export const makeSqlitePaymentStore = (
  db: SqliteConnection,
  complete: (completion: IdempotencyCompletion | undefined) => void,
  /** The chain job store's writes in the caller's transaction: a job queued, a held one ended. */
  chainJobs: {
    readonly enqueue: (job: NewChainJob) => void
    readonly completeHeld: (lease: ChainJobLease, now: Date) => void
  },
  /** Writes an outbox's events in the caller's transaction. */
  publish: <A>(outbox: Outbox<A> | undefined, written: A) => void,
  /** Where the hot writes go: concurrent ones share a commit (GroupCommit.ts). */
  writes: GroupCommit
) => {
  const queries = makeSqlitePaymentQueries(db)

  const insertSql = db.prepare(`INSERT INTO payments (id, partner_id, merchant_id, reference_id,
    reference_folded, amount_unit, amount_value, amount_minor, amount_sort, status, failure_code,
    cancelled_reason, expires_at, created_at, updated_at, final_at, checkout, token_asset,
    token_chain, token_value, buyer_account, buyer_key, buyer_provider_name, buyer_provider_icon,
    tx_network, tx_hash, tx_nonce, tx_id, fee_fixed, fee_percentage, fee_total, fee_network,
    settlement_amount, settlement_status, settlement_held, settlement_destination,
    settlement_tx_hash, settled_at, livemode)
    VALUES (${placeholders(39)})`)
  const findSql = db.prepare(`${SELECT} WHERE p.id = ?`)
  const findStatusSql = db.prepare(`SELECT id, partner_id, merchant_id, status, expires_at,
    failure_code, token_asset, token_value, tx_id FROM payments WHERE id = ?`)
  const findStatusNow = (id: PaymentId) => {
    const r = findStatusSql.get(id) as StatusRow | undefined
    return r === undefined ? Option.none() : Option.some(toStatusRecord(r))
  }
  const transitionSql = db.prepare(`UPDATE payments SET
      status = ?, updated_at = ?,
      final_at = coalesce(?, final_at),
      failure_code = coalesce(?, failure_code),
      cancelled_reason = coalesce(?, cancelled_reason),
      token_asset = coalesce(?, token_asset),
      token_chain = coalesce(?, token_chain),
      token_value = coalesce(?, token_value),
      buyer_account = coalesce(?, buyer_account),
      buyer_key = coalesce(?, buyer_key),
      buyer_provider_name = CASE WHEN ? = 1 THEN ? ELSE buyer_provider_name END,
      buyer_provider_icon = CASE WHEN ? = 1 THEN ? ELSE buyer_provider_icon END,
      tx_network = CASE WHEN ? = 1 THEN ? ELSE tx_network END,
      tx_hash = CASE WHEN ? = 1 THEN ? ELSE tx_hash END,
      tx_nonce = CASE WHEN ? = 1 THEN ? ELSE tx_nonce END,
      tx_id = coalesce(?, tx_id),
      fee_fixed = CASE WHEN ? = 1 THEN ? ELSE fee_fixed END,
      fee_percentage = CASE WHEN ? = 1 THEN ? ELSE fee_percentage END,
      fee_total = CASE WHEN ? = 1 THEN ? ELSE fee_total END,
      fee_network = CASE WHEN ? = 1 THEN ? ELSE fee_network END,
      settlement_amount = CASE WHEN ? = 1 THEN ? ELSE settlement_amount END,
      settlement_status = CASE WHEN ? = 1 THEN ? ELSE settlement_status END,
      settlement_held = CASE WHEN ? = 1 THEN ? ELSE settlement_held END,
      settlement_destination = CASE WHEN ? = 1 THEN ? ELSE settlement_destination END,
      settlement_tx_hash = CASE WHEN ? = 1 THEN ? ELSE settlement_tx_hash END,
      settled_at = CASE WHEN ? = 1 THEN ? ELSE settled_at END
    WHERE id = ? AND status = ?`)
  const dueSql = db.prepare(`SELECT id FROM payments
    WHERE status = 'requires_action' AND expires_at <= ? ORDER BY expires_at LIMIT ?`)
  const refundSql = db.prepare("INSERT INTO refunds (id, payment_id, created_at) VALUES (?, ?, ?)")
  const refundOfSql = db.prepare("SELECT id FROM refunds WHERE payment_id = ?")
  const dailyRevenueSql = db.prepare(`SELECT revenue FROM payment_daily_revenue
    WHERE partner_id = ? AND merchant_id = ? AND day = ? AND unit = ?`)
  const dailyPutSql = db.prepare(`INSERT INTO payment_daily_revenue
      (partner_id, merchant_id, day, unit, transactions, revenue, revenue_i63)
    VALUES (?, ?, ?, ?, 1, ?, ?)
    ON CONFLICT (partner_id, merchant_id, day, unit) DO UPDATE SET
      transactions = transactions + 1, revenue = excluded.revenue, revenue_i63 = excluded.revenue_i63`)
  const partnerCustomerSql = db.prepare(`INSERT INTO partner_customers
      (partner_id, customer_key, payments) VALUES (?, ?, 1)
    ON CONFLICT (partner_id, customer_key) DO UPDATE SET payments = payments + 1`)
  const merchantCustomerSql = db.prepare(`INSERT INTO merchant_customers
      (merchant_id, customer_key, partner_id, payments) VALUES (?, ?, ?, 1)
    ON CONFLICT (merchant_id, customer_key) DO UPDATE SET payments = payments + 1`)

  const find = (id: string) => {
    const row = findSql.get(id) as PaymentRow | undefined
    return row === undefined ? Option.none() : Option.some(toPayment(row))
  }

  /**
   * Counts a payment that has just become succeeded into the aggregates; called inside the
   * write transaction that made it so. The revenue is read, added to and written back: safe,
   * as that transaction began with its write to the payment, so it holds SQLite's one write
   * lock and reads the latest total, which nobody else can change before it commits.
   */
  const countSucceeded = (p: Payment) => {
    const unit = formatUnit(p.amount.unit)
    const day = utcDay(p.createdAt)
    const stored = dailyRevenueSql.get(p.partnerId, p.merchantId, day, unit) as
      | { revenue: string }
      | undefined
    const total = (stored === undefined ? 0n : BigInt(stored.revenue)) + p.amount.value
    dailyPutSql.run(
      p.partnerId,
      p.merchantId,
      day,
      unit,
      total.toString(),
      total <= MAX_I63 ? total : null
    )
    if (p.buyer !== null) {
      const customer = buyerKey(p.buyer.account)
      partnerCustomerSql.run(p.partnerId, customer)
      merchantCustomerSql.run(p.merchantId, customer, p.partnerId)
    }
  }

  return PaymentStore.of({
    // A write's own savepoint in its batch is its transaction (GroupCommit.ts).
    insert: (p, completion) =>
      writes.write(() => {
        const value = p.amount.value
        insertSql.run(
          p.id,
          p.partnerId,
          p.merchantId,
          p.referenceId,
          p.referenceId.toLowerCase(),
          formatUnit(p.amount.unit),
          value.toString(),
          value <= MAX_I63 ? value : null,
          sortable(value),
          p.status,
          p.failureCode,
          p.cancelledReason,
          p.expiresAt.getTime(),
          p.createdAt.getTime(),
          p.updatedAt.getTime(),
          p.finalAt?.getTime() ?? null,
          p.checkout === null ? null : JSON.stringify(p.checkout),
          p.tokenAmount?.asset ?? null,
          p.tokenAmount ? chainOfCaip19(p.tokenAmount.asset) : null,
          p.tokenAmount?.value.toString() ?? null,
          p.buyer?.account ?? null,
          p.buyer ? buyerKey(p.buyer.account) : null,
          p.buyer?.providerName ?? null,
          p.buyer?.providerIcon ?? null,
          p.transaction?.networkId ?? null,
          p.transaction?.hash ?? null,
          p.transaction?.nonce ?? null,
          p.txId,
          ...feesToStorage(p.fees),
          ...settlementToStorage(p.settlement),
          livemodeColumn(p.livemode)
        )
        if (p.status === "succeeded") countSucceeded(p)
        complete(completion)
      }),

    find: (id) => Effect.sync(() => find(id)),

    findStatus: (id) => Effect.sync(() => findStatusNow(id)),
    findStatusNow,

    transition: (id, from, c, completion, outbox) =>
      writes
        .write(() => {
          const { changes } = transitionSql.run(
            c.status,
            c.at.getTime(),
            c.finalAt?.getTime() ?? null,
            c.failureCode ?? null,
            c.cancelledReason ?? null,
            c.tokenAmount?.asset ?? null,
            c.tokenAmount ? chainOfCaip19(c.tokenAmount.asset) : null,
            c.tokenAmount?.value.toString() ?? null,
            c.buyer?.account ?? null,
            c.buyer ? buyerKey(c.buyer.account) : null,
            c.buyer ? 1 : 0,
            c.buyer?.providerName ?? null,
            c.buyer ? 1 : 0,
            c.buyer?.providerIcon ?? null,
            // A new transaction replaces the old one whole (a null nonce included).
            c.transaction ? 1 : 0,
            c.transaction?.networkId ?? null,
            c.transaction ? 1 : 0,
            c.transaction?.hash ?? null,
            c.transaction ? 1 : 0,
            c.transaction?.nonce ?? null,
            c.txId ?? null,
            // Given fees or a given settlement replace the stored ones whole.
            ...replacing(c.fees, feesToStorage),
            ...replacing(c.settlement, settlementToStorage),
            id,
            from
          )
          if (Number(changes) !== 1) return Option.none()
          const updated = find(id)
          if (c.status === "succeeded" && from !== "succeeded" && Option.isSome(updated)) {
            countSucceeded(updated.value)
          }
          // Only with the change that applied; a job of the kind already queued is kept. A lost
          // lease, a taken nonce or a buyer's transfer another payment claimed throws: the write
          // is rolled back to its savepoint.
          if (c.completes !== undefined) chainJobs.completeHeld(c.completes, c.at)
          if (c.enqueue !== undefined) chainJobs.enqueue(c.enqueue)
          complete(completion)
          if (Option.isSome(updated)) publish(outbox, updated.value)
          return updated
        })
        .pipe(Effect.catchSomeDefect(paymentChangeRefusal)),

    dueForExpiry: (now, limit) =>
      Effect.sync(() =>
        (dueSql.all(now.getTime(), limit) as Array<{ id: string }>).map((r) => r.id as PaymentId)
      ),

    addRefund: (id, refund, completion, outbox) =>
      Effect.flatMap(
        writes.write(() => {
          try {
            // A transaction of its own inside the write's savepoint: a unique violation caught
            // here must leave nothing of the refund behind.
            db.transaction(() => {
              refundSql.run(refund.id, id, refund.createdAt.getTime())
              complete(completion)
              publish(outbox, refund)
            })
            return undefined
          } catch (error) {
            if (!isUniqueViolation(error)) throw error
            const existing = refundOfSql.get(id) as { id: string } | undefined
            return new RefundExists({ paymentId: id, refundId: existing?.id ?? "" })
          }
        }),
        (refused) => (refused === undefined ? Effect.void : Effect.fail(refused))
      ),

    list: queries.list,

    stats: queries.stats
  })
}
