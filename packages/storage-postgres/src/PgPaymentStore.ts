/**
 * The payment store on PostgreSQL: its writes and its reads of one payment.
 * Transitions and expiries are single compare-and-set statements (the WHERE
 * clause holds the expected status), so with any number of instances each
 * change applies once; the expiry sweep skips rows another instance has
 * locked. A payment that succeeds is counted into the statistics aggregates by
 * the very statement that makes it so (see PaymentStatsPlan); listings and
 * statistics are PgPaymentQueries.ts.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import {
  buyerKey,
  chainOfCaip19,
  formatUnit,
  type Payment,
  type PaymentId,
  PaymentStore,
  RefundExists,
  settlementStatusToColumns
} from "@pay/core"
import { Effect, Option } from "effect"
import { DAY_OF_CREATED_AT } from "./migrations/0004_payment_aggregates.js"
import {
  completeHeldJob,
  insertHeldJob,
  JOB_COLUMNS,
  jobValues,
  onTransactionClaimed
} from "./PgChainJobStore.js"
import { onUniqueViolation, orDieSql } from "./PgErrors.js"
import { writeEvents } from "./PgEventStore.js"
import { withCompletion, writeCompletion } from "./PgIdempotencyStore.js"
import { makePgPaymentQueries } from "./PgPaymentQueries.js"
import {
  type PaymentRow,
  type StatusRow,
  toPayment,
  toStatusRecord,
  withRefund
} from "./PgPaymentRow.js"
import type { PreparedStatements } from "./PgPrepared.js"

/**
 * The columns a payment has from its creation on, by name (their order is the one
 * `pay_payment_created` lists them in).
 */
const createdColumns = (p: Payment) => ({
  id: p.id,
  partner_id: p.partnerId,
  merchant_id: p.merchantId,
  reference_id: p.referenceId,
  reference_folded: p.referenceId.toLowerCase(),
  amount_unit: formatUnit(p.amount.unit),
  amount_value: p.amount.value.toString(),
  checkout: p.checkout === null ? null : JSON.stringify(p.checkout),
  token_asset: p.tokenAmount?.asset ?? null,
  token_chain: p.tokenAmount ? chainOfCaip19(p.tokenAmount.asset) : null,
  token_value: p.tokenAmount?.value.toString() ?? null,
  livemode: p.livemode
})

/** A payment as Payments.create makes it: the columns insertCreatedPrepared leaves out are null. */
const isJustCreated = (p: Payment) =>
  p.status === "requires_action" &&
  p.updatedAt.getTime() === p.createdAt.getTime() &&
  p.failureCode === null &&
  p.cancelledReason === null &&
  p.finalAt === null &&
  p.buyer === null &&
  p.transaction === null &&
  p.txId === null &&
  p.fees === null &&
  p.settlement === null

export const makePgPaymentStore = (sql: SqlClient, prepared: PreparedStatements) => {
  const queries = makePgPaymentQueries(sql)
  const insertCreatedPrepared = prepared.prepare(
    "pay_payment_created",
    `INSERT INTO payments (id, partner_id, merchant_id, reference_id, reference_folded,
      amount_unit, amount_value, checkout, token_asset, token_chain, token_value, livemode,
      status, expires_at, created_at, updated_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'requires_action', $13, $14, $14)`
  )
  const FIND_STATUS = `SELECT id, partner_id, merchant_id, status, expires_at, failure_code,
      token_asset, token_value, tx_id FROM payments WHERE id = $1`
  const findStatusPrepared = prepared.prepare<StatusRow>("pay_payment_status", FIND_STATUS)
  // The same statement (same name: one preparation per connection), as a promise.
  const findStatusPromised = prepared.promised<StatusRow>("pay_payment_status", FIND_STATUS)

  /**
   * Data-modifying CTEs that count the rows of `source` (a CTE of one written payment) into
   * the aggregates when that row is succeeded, in the statement that wrote it: atomic with the
   * change, and each increment is one row-locked `ON CONFLICT DO UPDATE`, so concurrent
   * successes add up. Their locks come in the same order in every statement.
   */
  const countSucceeded = (source: string) => {
    const rows = sql.literal(source)
    return sql`, counted_revenue AS (
        INSERT INTO payment_daily_revenue AS d
          (partner_id, merchant_id, day, unit, transactions, revenue)
        SELECT partner_id, merchant_id, ${sql.literal(DAY_OF_CREATED_AT)}, amount_unit, 1,
          amount_value
        FROM ${rows} WHERE status = 'succeeded'
        ON CONFLICT (partner_id, merchant_id, day, unit) DO UPDATE SET
          transactions = d.transactions + excluded.transactions,
          revenue = d.revenue + excluded.revenue
      ), counted_partner_customer AS (
        INSERT INTO partner_customers AS c (partner_id, customer_key, payments)
        SELECT partner_id, buyer_key, 1 FROM ${rows}
        WHERE status = 'succeeded' AND buyer_key IS NOT NULL
        ON CONFLICT (partner_id, customer_key) DO UPDATE SET payments = c.payments + 1
      ), counted_merchant_customer AS (
        INSERT INTO merchant_customers AS c (merchant_id, customer_key, partner_id, payments)
        SELECT merchant_id, buyer_key, partner_id, 1 FROM ${rows}
        WHERE status = 'succeeded' AND buyer_key IS NOT NULL
        ON CONFLICT (merchant_id, customer_key) DO UPDATE SET payments = c.payments + 1
      )`
  }

  const findRows = (id: string) =>
    sql<PaymentRow>`${withRefund(sql, sql.literal("payments"))} WHERE p.id = ${id}`

  return PaymentStore.of({
    insert: (p, completion) => {
      // The common case, a payment just created (waiting for its buyer, nothing else known
      // yet) without an idempotency key, is one prepared statement of the columns it has.
      if (completion === undefined && isJustCreated(p)) {
        return insertCreatedPrepared([
          ...Object.values(createdColumns(p)),
          p.expiresAt.toISOString(),
          p.createdAt.toISOString()
        ]).pipe(Effect.asVoid, orDieSql)
      }
      // One stored already succeeded is counted as one that succeeds later, in its statement;
      // a completion needs the transaction.
      const row = sql`INSERT INTO payments ${sql.insert({
        ...createdColumns(p),
        status: p.status,
        failure_code: p.failureCode,
        cancelled_reason: p.cancelledReason,
        expires_at: p.expiresAt,
        created_at: p.createdAt,
        updated_at: p.updatedAt,
        final_at: p.finalAt,
        buyer_account: p.buyer?.account ?? null,
        buyer_key: p.buyer ? buyerKey(p.buyer.account) : null,
        buyer_provider_name: p.buyer?.providerName ?? null,
        buyer_provider_icon: p.buyer?.providerIcon ?? null,
        tx_network: p.transaction?.networkId ?? null,
        tx_hash: p.transaction?.hash ?? null,
        tx_nonce: p.transaction?.nonce ?? null,
        tx_id: p.txId,
        fee_fixed: p.fees?.fixed.toString() ?? null,
        fee_percentage: p.fees?.percentage ?? null,
        fee_total: p.fees?.total.toString() ?? null,
        fee_network: p.fees?.network?.toString() ?? null,
        settlement_amount: p.settlement?.amount.toString() ?? null,
        settlement_status: settlementStatusToColumns(p.settlement?.status ?? null).status,
        settlement_held: settlementStatusToColumns(p.settlement?.status ?? null).held,
        settlement_destination: p.settlement?.destination ?? null,
        settlement_tx_hash: p.settlement?.txHash ?? null,
        settled_at: p.settlement?.settledAt ?? null
      })}`
      const statement =
        p.status === "succeeded"
          ? sql`WITH inserted AS (${row} RETURNING *)${countSucceeded("inserted")} SELECT 1`
          : row
      return withCompletion(sql, statement, completion).pipe(Effect.asVoid, orDieSql)
    },

    find: (id) =>
      findRows(id).pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toPayment)),
        orDieSql
      ),

    findStatusNow:
      findStatusPromised === undefined
        ? undefined
        : (id) =>
            findStatusPromised([id]).then((rows) =>
              Option.map(Option.fromNullable(rows[0]), toStatusRecord)
            ),

    findStatus: (id) =>
      findStatusPrepared([id]).pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toStatusRecord)),
        orDieSql
      ),

    transition: (id, from, c, completion, outbox) => {
      // A given buyer or transaction replaces the stored one whole (applyChange's meaning).
      const buyer = c.buyer ?? null
      const tx = c.transaction ?? null
      // Given fees or a given settlement replace the stored ones whole, too.
      const fees = c.fees ?? null
      const settlement = c.settlement ?? null
      const settlementStatus = settlementStatusToColumns(settlement?.status ?? null)
      const updated = sql`(UPDATE payments SET
          status = ${c.status},
          updated_at = ${c.at},
          final_at = coalesce(${c.finalAt}::timestamptz, final_at),
          failure_code = coalesce(${c.failureCode ?? null}::text, failure_code),
          cancelled_reason = coalesce(${c.cancelledReason ?? null}::text, cancelled_reason),
          token_asset = coalesce(${c.tokenAmount?.asset ?? null}::text, token_asset),
          token_chain = coalesce(${c.tokenAmount ? chainOfCaip19(c.tokenAmount.asset) : null}::text,
            token_chain),
          token_value = coalesce(${c.tokenAmount?.value.toString() ?? null}::numeric, token_value),
          buyer_account = coalesce(${buyer?.account ?? null}::text, buyer_account),
          buyer_key = coalesce(${buyer ? buyerKey(buyer.account) : null}::text, buyer_key),
          buyer_provider_name = CASE WHEN ${buyer !== null}::boolean
            THEN ${buyer?.providerName ?? null}::text ELSE buyer_provider_name END,
          buyer_provider_icon = CASE WHEN ${buyer !== null}::boolean
            THEN ${buyer?.providerIcon ?? null}::text ELSE buyer_provider_icon END,
          tx_network = CASE WHEN ${tx !== null}::boolean
            THEN ${tx?.networkId ?? null}::text ELSE tx_network END,
          tx_hash = CASE WHEN ${tx !== null}::boolean THEN ${tx?.hash ?? null}::text ELSE tx_hash END,
          tx_nonce = CASE WHEN ${tx !== null}::boolean
            THEN ${tx?.nonce ?? null}::bigint ELSE tx_nonce END,
          tx_id = coalesce(${c.txId ?? null}::text, tx_id),
          fee_fixed = CASE WHEN ${fees !== null}::boolean
            THEN ${fees?.fixed.toString() ?? null}::numeric ELSE fee_fixed END,
          fee_percentage = CASE WHEN ${fees !== null}::boolean
            THEN ${fees?.percentage ?? null}::text ELSE fee_percentage END,
          fee_total = CASE WHEN ${fees !== null}::boolean
            THEN ${fees?.total.toString() ?? null}::numeric ELSE fee_total END,
          fee_network = CASE WHEN ${fees !== null}::boolean
            THEN ${fees?.network?.toString() ?? null}::numeric ELSE fee_network END,
          settlement_amount = CASE WHEN ${settlement !== null}::boolean
            THEN ${settlement?.amount.toString() ?? null}::numeric ELSE settlement_amount END,
          settlement_status = CASE WHEN ${settlement !== null}::boolean
            THEN ${settlementStatus.status}::text ELSE settlement_status END,
          settlement_held = CASE WHEN ${settlement !== null}::boolean
            THEN ${settlementStatus.held}::boolean ELSE settlement_held END,
          settlement_destination = CASE WHEN ${settlement !== null}::boolean
            THEN ${settlement?.destination ?? null}::text ELSE settlement_destination END,
          settlement_tx_hash = CASE WHEN ${settlement !== null}::boolean
            THEN ${settlement?.txHash ?? null}::text ELSE settlement_tx_hash END,
          settled_at = CASE WHEN ${settlement !== null}::boolean
            THEN ${settlement?.settledAt ?? null}::timestamptz ELSE settled_at END
        WHERE id = ${id} AND status = ${from}
        RETURNING *)`
      const succeeds = c.status === "succeeded" && from !== "succeeded"
      // The job goes in with the change, in its statement, only when the change applied; one
      // the payment has already of its kind is kept.
      const queue = c.enqueue
      const heldQueue = queue?.held === undefined ? undefined : { ...queue, held: queue.held }
      const queued =
        queue === undefined || heldQueue !== undefined
          ? sql``
          : sql`, queued AS (
              INSERT INTO chain_jobs ${sql.literal(JOB_COLUMNS)}
              SELECT ${jobValues(sql, queue)} FROM updated
              ON CONFLICT (payment_id, kind) DO NOTHING
            )`
      const apply =
        sql<PaymentRow>`WITH updated AS ${updated}${succeeds ? countSucceeded("updated") : sql``}${queued}
        ${withRefund(sql, sql.literal("updated"))}`.pipe(
          Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toPayment))
        )
      // The chain work a change carries (the job it ends, a held job with its first transfer),
      // the completion and the events are written only when the change applied, in its
      // transaction (a lost lease, a taken nonce or a buyer's transfer another payment claimed
      // rolls it all back); without any of them, the one statement is the whole write.
      const alone =
        completion === undefined &&
        outbox === undefined &&
        c.completes === undefined &&
        heldQueue === undefined
      return (
        alone
          ? apply
          : sql.withTransaction(
              Effect.tap(apply, (result) =>
                Option.isNone(result)
                  ? Effect.void
                  : Effect.gen(function* () {
                      if (c.completes !== undefined) {
                        yield* completeHeldJob(sql, c.completes, c.at)
                      }
                      if (heldQueue !== undefined) yield* insertHeldJob(sql, heldQueue)
                      if (completion !== undefined) yield* writeCompletion(sql, completion)
                      yield* writeEvents(sql, outbox, result.value)
                    })
              )
            )
      ).pipe(onTransactionClaimed(queue), orDieSql)
    },

    dueForExpiry: (now, limit) =>
      sql<{ readonly id: string }>`SELECT id FROM payments
        WHERE status = 'requires_action' AND expires_at <= ${now}
        ORDER BY expires_at, id LIMIT ${limit}`.pipe(
        Effect.map((rows) => rows.map((r) => r.id as PaymentId)),
        orDieSql
      ),

    addRefund: (id, refund, completion, outbox) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            yield* sql`INSERT INTO refunds (id, payment_id, created_at)
              VALUES (${refund.id}, ${id}, ${refund.createdAt})`
            if (completion !== undefined) yield* writeCompletion(sql, completion)
            yield* writeEvents(sql, outbox, refund)
          })
        )
        .pipe(
          Effect.asVoid,
          onUniqueViolation("refunds_one_per_payment", () =>
            sql<{ readonly id: string }>`SELECT id FROM refunds WHERE payment_id = ${id}`.pipe(
              Effect.flatMap(([existing]) =>
                Effect.fail(new RefundExists({ paymentId: id, refundId: existing?.id ?? "" }))
              )
            )
          ),
          orDieSql
        ),

    list: queries.list,

    stats: queries.stats
  })
}
