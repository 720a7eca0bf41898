/**
 * Durable chain work on PostgreSQL. A claim is one statement: the due jobs
 * picked once (a materialized CTE) and locked, skipping those another
 * instance is claiming, then leased to a new random token each. Every later
 * write is a single statement fenced by that token in its WHERE clause (or a
 * CTE locking the job's row first), so a holder whose lease was taken over
 * changes nothing. Nonces come from a per-chain, per-sender sequence bumped by
 * `INSERT … ON CONFLICT DO UPDATE … RETURNING` in the statement that gives
 * one to the job, under the job's row lock: no nonce is handed out twice.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"
import {
  type Caip2,
  type Caip10,
  type ChainJob,
  type ChainJobId,
  type ChainJobKind,
  type ChainJobLease,
  ChainJobLeaseLost,
  ChainJobStore,
  type ChainTransfer,
  type ChainTransferColumns,
  chainTransferFromColumns,
  type HeldStart,
  type NewChainJob,
  NonceTaken,
  type PaymentId,
  payloadFromJson,
  payloadToJson,
  type ReturnableFunds,
  type ReturnableFundsColumns,
  returnableFromColumns,
  settlementStatusToColumns,
  TransactionClaimed
} from "@pay/core"
import { Effect, Option } from "effect"
import { insertAuditEntries } from "./PgAuditStore.js"
import { onUniqueViolation, orDieSql } from "./PgErrors.js"
import { writeEvents } from "./PgEventStore.js"

interface JobRow {
  readonly id: string
  readonly payment_id: string
  readonly kind: string
  readonly chain_id: string
  /** jsonb comes back parsed; the settle amount is a decimal string in it. */
  readonly payload: Record<string, string>
  readonly state: string
  readonly run_at: Date
  readonly lease_token: string | null
  /** bigint comes back as text. */
  readonly nonce: string | null
  readonly destination: string | null
  readonly attempts: number
  readonly last_error: string | null
  readonly failures: number
  readonly failing_since: Date | null
  readonly stuck_since: Date | null
  readonly created_at: Date
  readonly updated_at: Date
}

/** The columns both drivers return alike, and PostgreSQL's own: bigint as text, the time a Date. */
interface TransferRow extends ChainTransferColumns {
  readonly nonce: string
  readonly created_at: Date
}

/**
 * PostgreSQL's own (SqliteChainJobStore has its twin): times are Date and the
 * nonce bigint-as-text here, ms and a number there; the payload is read by the one
 * payloadFromJson already, and what is left are casts of text columns.
 */
const toJob = (r: JobRow): ChainJob => ({
  id: r.id as ChainJobId,
  paymentId: r.payment_id as PaymentId,
  chainId: r.chain_id as Caip2,
  payload: payloadFromJson(r.payload),
  runAt: r.run_at,
  createdAt: r.created_at,
  kind: r.kind as ChainJobKind,
  state: r.state as ChainJob["state"],
  nonce: r.nonce === null ? null : Number(r.nonce),
  destination: r.destination as Caip10 | null,
  attempts: r.attempts,
  lastError: r.last_error,
  failures: r.failures,
  failingSince: r.failing_since,
  stuckSince: r.stuck_since,
  updatedAt: r.updated_at
})

/** A job row as `to_jsonb` gives it: times as ISO text, bigint as a number. */
const jobFromJson = (j: Record<string, unknown>): JobRow => {
  const at = (v: unknown) => (v === null ? null : new Date(v as string))
  return {
    ...(j as unknown as JobRow),
    run_at: at(j.run_at)!,
    created_at: at(j.created_at)!,
    updated_at: at(j.updated_at)!,
    failing_since: at(j.failing_since),
    stuck_since: at(j.stuck_since),
    nonce: j.nonce === null ? null : String(j.nonce)
  }
}

const toTransfer = (r: TransferRow): ChainTransfer =>
  chainTransferFromColumns(r, { nonce: Number(r.nonce), createdAt: r.created_at })

interface ReturnableRow extends ReturnableFundsColumns {
  readonly recorded_at: Date
}

const toReturnable = (r: ReturnableRow): ReturnableFunds => returnableFromColumns(r, r.recorded_at)

/** Migration 0027's unique index: a buyer's transfer named by one collect job per chain. */
const CLAIMED_TRANSFER = "chain_jobs_claimed_transfer"

/**
 * A job's insert refused by that index, as the port's `TransactionClaimed`:
 * another payment's collect job names the same buyer's transfer on its chain.
 */
export const onTransactionClaimed = (job: NewChainJob | undefined) =>
  onUniqueViolation(CLAIMED_TRANSFER, () => {
    const paid = job?.payload.kind === "collect" ? job.payload.paid : undefined
    return job === undefined || paid === undefined
      ? Effect.dieMessage(`${CLAIMED_TRANSFER} refused a job that names no buyer's transfer`)
      : Effect.fail(new TransactionClaimed({ chainId: job.chainId, hash: paid.hash }))
  })

/** The columns a queued job is inserted with, in the order of `jobValues`. */
export const JOB_COLUMNS = `(id, payment_id, kind, chain_id, payload, state, run_at, attempts,
  created_at, updated_at)`

/** A queued job's values, typed, for `INSERT … SELECT` (as in a CTE of the payment change). */
export const jobValues = (sql: SqlClient, job: NewChainJob): Fragment =>
  sql`${job.id}::text, ${job.paymentId}::text, ${job.payload.kind}::text, ${job.chainId}::text,
    ${payloadToJson(job.payload)}::jsonb, 'active', ${job.runAt}::timestamptz, 0,
    ${job.createdAt}::timestamptz, ${job.createdAt}::timestamptz`

const leaseLost = (lease: ChainJobLease) =>
  Effect.fail(new ChainJobLeaseLost({ jobId: lease.jobId }))

const insertTransfer = (sql: SqlClient, t: ChainTransfer) =>
  sql`INSERT INTO chain_transfers (hash, job_id, chain_id, sender, nonce, purpose, to_address,
      data, gas, value, max_fee_per_gas, max_priority_fee_per_gas, raw, created_at)
    VALUES (${t.hash}, ${t.jobId}, ${t.chainId}, ${t.sender}, ${t.nonce}, ${t.purpose}, ${t.to},
      ${t.data}, ${t.gas.toString()}::numeric, ${t.value.toString()}::numeric,
      ${t.maxFeePerGas.toString()}::numeric, ${t.maxPriorityFeePerGas.toString()}::numeric,
      ${t.raw}, ${t.createdAt})
    ON CONFLICT (hash) DO NOTHING`

/**
 * Takes exactly the transfer's nonce from its sender's sequence (the row lock
 * orders concurrent takers), or fails with `NonceTaken` once the sequence has
 * passed it.
 */
const takeNonce = (sql: SqlClient, t: ChainTransfer) =>
  sql`INSERT INTO chain_nonces AS n (chain_id, sender, next_nonce)
    VALUES (${t.chainId}, ${t.sender}, ${t.nonce + 1})
    ON CONFLICT (chain_id, sender) DO UPDATE SET next_nonce = excluded.next_nonce
      WHERE n.next_nonce < excluded.next_nonce
    RETURNING 1 AS taken`.pipe(
    Effect.flatMap((rows) =>
      rows.length === 1
        ? Effect.void
        : Effect.fail(new NonceTaken({ jobId: t.jobId, nonce: t.nonce }))
    )
  )

/**
 * A held job's insert (`NewChainJob.held`), its lease and first transfer
 * with it, for the caller's transaction: the payment's job of its kind, or a
 * unique violation (its holder runs it at once, so it must be the one queued).
 */
export const insertHeldJob = (sql: SqlClient, job: NewChainJob & { readonly held: HeldStart }) =>
  Effect.gen(function* () {
    const { lease, leaseUntil, destination, transfer } = job.held
    if (transfer !== undefined) yield* takeNonce(sql, transfer)
    yield* sql`INSERT INTO chain_jobs (id, payment_id, kind, chain_id, payload, state, run_at,
        lease_token, lease_until, nonce, destination, attempts, created_at, updated_at)
      VALUES (${job.id}, ${job.paymentId}, ${job.payload.kind}, ${job.chainId},
        ${payloadToJson(job.payload)}::jsonb, 'active', ${job.runAt}, ${lease.token}, ${leaseUntil},
        ${transfer?.nonce ?? null}::bigint, ${destination ?? null}::text, 1, ${job.createdAt},
        ${job.createdAt})`
    if (transfer !== undefined) yield* insertTransfer(sql, transfer)
  })

/** Ends a held job in the caller's transaction, or fails with `ChainJobLeaseLost`. */
export const completeHeldJob = (sql: SqlClient, lease: ChainJobLease, now: Date) =>
  sql`UPDATE chain_jobs SET state = 'done', lease_token = NULL, lease_until = NULL,
      updated_at = ${now}
    WHERE id = ${lease.jobId} AND lease_token = ${lease.token} RETURNING 1 AS completed`.pipe(
    Effect.flatMap((rows) => (rows.length === 1 ? Effect.void : leaseLost(lease)))
  )

/** One row changed, or the lease is lost. */
const fenced =
  (lease: ChainJobLease) =>
  <E, R>(statement: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    statement.pipe(
      Effect.flatMap((rows) => (rows.length === 1 ? Effect.void : leaseLost(lease))),
      orDieSql
    )

export const makePgChainJobStore = (sql: SqlClient) => {
  /** Queues the job again when its previous run is done (one statement); whether it did. */
  const requeued = (job: NewChainJob) =>
    sql`WITH queued AS (INSERT INTO chain_jobs AS j ${sql.literal(JOB_COLUMNS)}
              SELECT ${jobValues(sql, job)}
              ON CONFLICT (payment_id, kind) DO UPDATE SET
                chain_id = excluded.chain_id, payload = excluded.payload, state = 'active',
                run_at = excluded.run_at, lease_token = NULL, lease_until = NULL, nonce = NULL,
                destination = NULL, last_error = NULL, failures = 0, failing_since = NULL,
                stuck_since = NULL, updated_at = excluded.updated_at
              WHERE j.state = 'done'
              RETURNING id, payment_id),
            unheld AS (UPDATE payments p SET settlement_held = false
              FROM queued WHERE p.id = queued.payment_id AND p.settlement_held)
            SELECT id FROM queued`.pipe(Effect.map((rows) => rows.length === 1))
  const held = (lease: ChainJobLease) => sql`id = ${lease.jobId} AND lease_token = ${lease.token}`

  return ChainJobStore.of({
    claimDue: (now, limit, leaseMs) =>
      Effect.gen(function* () {
        // The due rows are picked once (materialized, so LIMIT cannot pick others on a rerun)
        // and locked; rows another instance is claiming right now are skipped, not waited for.
        const jobs = yield* sql<JobRow>`WITH due AS MATERIALIZED (
            SELECT id FROM chain_jobs
            WHERE state = 'active' AND run_at <= ${now}
              AND (lease_until IS NULL OR lease_until <= ${now})
            ORDER BY run_at, id LIMIT ${Math.max(0, limit)}
            FOR UPDATE SKIP LOCKED
          ), claimed AS (
            UPDATE chain_jobs j SET lease_token = gen_random_uuid()::text,
              lease_until = ${new Date(now.getTime() + leaseMs)}, attempts = j.attempts + 1,
              updated_at = ${now}
            FROM due WHERE j.id = due.id AND j.state = 'active'
            RETURNING j.*
          ) SELECT * FROM claimed ORDER BY run_at, id`
        const withNonce = jobs.filter((j) => j.nonce !== null)
        // Only the lease holder records transfers: read after the claim, they are all there.
        const transfers =
          withNonce.length === 0
            ? []
            : yield* sql<TransferRow>`SELECT t.* FROM chain_transfers t
                JOIN chain_jobs j ON j.id = t.job_id AND j.nonce = t.nonce
                WHERE t.job_id = ANY(${withNonce.map((j) => j.id)}::text[])
                ORDER BY t.created_at, t.hash`
        return jobs.map((r) => ({
          job: toJob(r),
          lease: { jobId: r.id as ChainJobId, token: r.lease_token! },
          transfers: transfers
            .filter((t) => t.job_id === r.id && t.nonce === r.nonce)
            .map(toTransfer)
        }))
      }).pipe(orDieSql),

    renew: (lease, now, leaseMs) =>
      fenced(lease)(sql`UPDATE chain_jobs SET lease_until = ${new Date(now.getTime() + leaseMs)}
        WHERE ${held(lease)} RETURNING 1 AS renewed`),

    release: (lease, runAt, lastError, now, failing) =>
      fenced(lease)(sql`UPDATE chain_jobs SET lease_token = NULL, lease_until = NULL,
          run_at = ${runAt}, last_error = ${lastError}::text, failures = ${failing.failures},
          failing_since = ${failing.failingSince}::timestamptz,
          stuck_since = ${failing.stuckSince}::timestamptz, updated_at = ${now}
        WHERE ${held(lease)} RETURNING 1 AS released`),

    nextNonce: (chainId, sender, chainNext) =>
      sql<{ readonly next_nonce: string }>`SELECT next_nonce FROM chain_nonces
        WHERE chain_id = ${chainId} AND sender = ${sender}`.pipe(
        Effect.map(([row]) => Math.max(row === undefined ? 0 : Number(row.next_nonce), chainNext)),
        orDieSql
      ),

    dropNonce: (lease, now) =>
      fenced(lease)(sql`UPDATE chain_jobs SET nonce = NULL, updated_at = ${now}
        WHERE ${held(lease)} RETURNING 1 AS dropped`),

    setDestination: (lease, destination, now) =>
      fenced(lease)(sql`UPDATE chain_jobs SET destination = ${destination}, updated_at = ${now}
        WHERE ${held(lease)} RETURNING 1 AS set`),

    recordTransfer: (lease, t, payment) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            // The job's row is locked while the transfer goes in: no claim can take it between.
            const [job] = yield* sql<{ readonly nonce: string | null }>`SELECT nonce
              FROM chain_jobs WHERE ${held(lease)} FOR UPDATE`
            if (job === undefined) return yield* leaseLost(lease)
            if (job.nonce === null) {
              yield* takeNonce(sql, t)
              yield* sql`UPDATE chain_jobs SET nonce = ${t.nonce}, updated_at = ${t.createdAt}
                WHERE id = ${lease.jobId}`
            } else if (Number(job.nonce) !== t.nonce) {
              return yield* Effect.dieMessage(
                `chain job ${lease.jobId} holds nonce ${job.nonce}, not ${t.nonce}`
              )
            }
            yield* insertTransfer(sql, t)
            if (payment !== undefined) {
              const tx = payment.transaction
              yield* sql`UPDATE payments SET tx_network = ${tx.networkId}, tx_hash = ${tx.hash},
                  tx_nonce = ${tx.nonce}, updated_at = ${payment.at}
                WHERE id = ${payment.id} AND status = 'processing'`
            }
          })
        )
        .pipe(orDieSql),

    complete: (lease, now, settlement) => {
      const s = settlement?.settlement
      const settle =
        settlement === undefined || s === undefined
          ? sql``
          : sql`, settled AS (
              UPDATE payments p SET settlement_amount = ${s.amount.toString()}::numeric,
                settlement_status = ${settlementStatusToColumns(s.status).status}::text,
                settlement_held = ${settlementStatusToColumns(s.status).held}::boolean,
                settlement_destination = ${s.destination}::text,
                settlement_tx_hash = ${s.txHash}::text,
                settled_at = ${s.settledAt}::timestamptz
              FROM done WHERE p.id = ${settlement.paymentId}
            )`
      // One statement: the settlement is written only with the job's end.
      const end = fenced(lease)(sql`WITH done AS (
          UPDATE chain_jobs SET state = 'done', lease_token = NULL, lease_until = NULL,
            updated_at = ${now}
          WHERE ${held(lease)} RETURNING id
        )${settle} SELECT 1 AS completed FROM done`)
      const events = settlement?.events ?? []
      // With events, one transaction: a lost lease (the fence fails) rolls them back too.
      return events.length === 0
        ? end
        : sql
            .withTransaction(
              Effect.zipRight(
                end,
                writeEvents(sql, () => events, undefined)
              )
            )
            .pipe(orDieSql)
    },

    requeue: (job, kind, audit) =>
      job.payload.kind !== kind
        ? Effect.die(new Error(`a ${job.payload.kind} job queued as ${kind}`))
        : // Queued again, a held settlement is under way: `pending` from here; an operator's
          // override recorded in the same transaction, only when it queued.
          sql
            .withTransaction(
              Effect.gen(function* () {
                const queued = yield* requeued(job)
                if (queued && audit !== undefined) yield* insertAuditEntries(sql, audit)
                return queued
              })
            )
            .pipe(orDieSql),

    findByPayment: (paymentId, kind) =>
      sql<JobRow>`SELECT * FROM chain_jobs WHERE payment_id = ${paymentId} AND kind = ${kind}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toJob)),
        orDieSql
      ),

    transfersOf: (jobId) =>
      sql<TransferRow>`SELECT * FROM chain_transfers WHERE job_id = ${jobId}
        ORDER BY created_at, hash`.pipe(
        Effect.map((rows) => rows.map(toTransfer)),
        orDieSql
      ),

    transfersAtNonce: (chainId, sender, nonce) =>
      sql<TransferRow & { readonly job: JobRow }>`SELECT t.*, to_jsonb(j) AS job
        FROM chain_transfers t JOIN chain_jobs j ON j.id = t.job_id
        WHERE t.chain_id = ${chainId} AND t.sender = ${sender} AND t.nonce = ${nonce}
        ORDER BY t.created_at, t.hash`.pipe(
        Effect.map((rows) =>
          rows.map((row) => ({
            transfer: toTransfer(row),
            job: toJob(jobFromJson(row.job as unknown as Record<string, unknown>))
          }))
        ),
        orDieSql
      ),

    recordReplacement: (t) =>
      sql<{ readonly done: boolean }>`WITH job AS (
          SELECT id FROM chain_jobs WHERE id = ${t.jobId} AND state = 'done' FOR SHARE
        ), inserted AS (
          INSERT INTO chain_transfers (hash, job_id, chain_id, sender, nonce, purpose, to_address,
            data, gas, value, max_fee_per_gas, max_priority_fee_per_gas, raw, created_at)
          SELECT ${t.hash}, ${t.jobId}, ${t.chainId}, ${t.sender}, ${t.nonce}, ${t.purpose},
            ${t.to}, ${t.data}, ${t.gas.toString()}::numeric, ${t.value.toString()}::numeric,
            ${t.maxFeePerGas.toString()}::numeric, ${t.maxPriorityFeePerGas.toString()}::numeric,
            ${t.raw}, ${t.createdAt}
          FROM job
          ON CONFLICT (hash) DO NOTHING
        ) SELECT EXISTS (SELECT 1 FROM job) AS done`.pipe(
        Effect.map(([row]) => row?.done === true),
        orDieSql
      ),

    swapChainInstance: (chainId, instance, now) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const [row] = yield* sql<{ readonly instance: string; readonly since: Date }>`
              SELECT instance, since FROM chain_instances WHERE chain_id = ${chainId} FOR UPDATE`
            if (row?.instance !== instance) {
              yield* sql`INSERT INTO chain_instances (chain_id, instance, since)
                VALUES (${chainId}, ${instance}, ${now})
                ON CONFLICT (chain_id) DO UPDATE SET instance = excluded.instance,
                  since = excluded.since`
              yield* sql`DELETE FROM chain_nonces WHERE chain_id = ${chainId}`
              yield* sql`DELETE FROM chain_transfers WHERE chain_id = ${chainId}`
            }
            return row === undefined
              ? Option.none()
              : Option.some({ instance: row.instance, since: row.since })
          })
        )
        .pipe(orDieSql),

    chainInstance: (chainId) =>
      sql<{ readonly instance: string; readonly since: Date }>`SELECT instance, since
        FROM chain_instances WHERE chain_id = ${chainId}`.pipe(
        Effect.map(([row]) =>
          row === undefined
            ? Option.none()
            : Option.some({ instance: row.instance, since: row.since })
        ),
        orDieSql
      ),

    activeJobsOn: (chainId) =>
      sql<JobRow>`SELECT * FROM chain_jobs WHERE state = 'active' AND chain_id = ${chainId}
        ORDER BY id`.pipe(
        Effect.map((rows) => rows.map(toJob)),
        orDieSql
      ),

    endJob: (jobId, lastError, now) =>
      sql`UPDATE chain_jobs SET state = 'done', lease_token = NULL, lease_until = NULL,
          last_error = ${lastError}, updated_at = ${now}
        WHERE id = ${jobId} AND state = 'active' RETURNING 1 AS ended`.pipe(
        Effect.map((rows) => rows.length === 1),
        orDieSql
      ),

    recordReturnable: (funds) =>
      sql`INSERT INTO returnable_funds (chain_id, tx_hash, payment_id, asset, from_address, value,
          reason, recorded_at)
        VALUES (${funds.chainId}, ${funds.txHash}, ${funds.paymentId}, ${funds.asset},
          ${funds.from}, ${funds.value.toString()}::numeric, ${funds.reason}, ${funds.recordedAt})
        ON CONFLICT (chain_id, tx_hash) DO NOTHING`.pipe(Effect.asVoid, orDieSql),

    returnable: (limit) =>
      sql<ReturnableRow>`SELECT * FROM returnable_funds
        ORDER BY recorded_at DESC, chain_id DESC, tx_hash DESC LIMIT ${Math.max(0, limit)}`.pipe(
        Effect.map((rows) => rows.map(toReturnable)),
        orDieSql
      ),

    // numeric sums are exact; one statement, so both see the same snapshot.
    owedIn: (asset) =>
      sql<{ readonly owed: string }>`SELECT (
          coalesce((SELECT sum(settlement_amount) FROM payments
            WHERE token_asset = ${asset} AND status = 'succeeded'
              AND settlement_status IN ('pending', 'no_destination')), 0)
          + coalesce((SELECT sum(value) FROM returnable_funds WHERE asset = ${asset}), 0)
        )::text AS owed`.pipe(
        Effect.map(([row]) => BigInt(row?.owed ?? "0")),
        orDieSql
      )
  })
}
