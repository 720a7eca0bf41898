/**
 * Durable chain work on SQLite. A claim is one `UPDATE … RETURNING` that
 * leases the due jobs to a new random token each; every later write of a job
 * is fenced by that token in its WHERE clause, and a transaction's first
 * statement is always a write, so it holds SQLite's one write lock from the
 * start and no other connection can take the job in between. Nonces come
 * from a per-chain, per-sender sequence upserted in the transaction that
 * gives one to the job. uint256 values are decimal TEXT; times are ms.
 */
import {
  type AuditEntry,
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
  type ClaimedJob,
  chainTransferFromColumns,
  type NewChainJob,
  NonceTaken,
  type PayEvent,
  type PaymentId,
  type PaymentSettlement,
  payloadFromJson,
  payloadToJson,
  type ReturnableFunds,
  type ReturnableFundsColumns,
  returnableFromColumns,
  settlementStatusToColumns,
  TransactionClaimed
} from "@pay/core"
import { Effect, Option } from "effect"
import type { GroupCommit } from "./GroupCommit.js"
import type { SqliteConnection, SqliteValue } from "./SqliteDatabase.js"

interface JobRow {
  id: string
  payment_id: string
  kind: string
  chain_id: string
  payload: string
  state: string
  run_at: number
  lease_token: string | null
  lease_until: number | null
  nonce: number | null
  destination: string | null
  attempts: number
  last_error: string | null
  failures: number
  failing_since: number | null
  stuck_since: number | null
  created_at: number
  updated_at: number
}

/** The columns both drivers return alike, and SQLite's own: the nonce a number, the time ms. */
interface TransferRow extends ChainTransferColumns {
  nonce: number
  created_at: number
}

interface ReturnableRow extends ReturnableFundsColumns {
  recorded_at: number
}

const toReturnable = (r: ReturnableRow): ReturnableFunds =>
  returnableFromColumns(r, new Date(r.recorded_at))

/** Decimal texts added exactly (SQLite's sum over TEXT is a float's). */
const sumExactly = (rows: ReadonlyArray<{ readonly amount: string | null }>): bigint =>
  rows.reduce((total, r) => (r.amount === null ? total : total + BigInt(r.amount)), 0n)

/**
 * SQLite's own (PgChainJobStore has its twin): times are ms and the nonce a number
 * here, Date and bigint-as-text there; the payload is read by the one
 * payloadFromJson already, and what is left are casts of text columns.
 */
const toJob = (r: JobRow): ChainJob => ({
  id: r.id as ChainJobId,
  paymentId: r.payment_id as PaymentId,
  chainId: r.chain_id as Caip2,
  payload: payloadFromJson(r.payload),
  runAt: new Date(r.run_at),
  createdAt: new Date(r.created_at),
  kind: r.kind as ChainJobKind,
  state: r.state as ChainJob["state"],
  nonce: r.nonce,
  destination: r.destination as Caip10 | null,
  attempts: r.attempts,
  lastError: r.last_error,
  failures: r.failures,
  failingSince: r.failing_since === null ? null : new Date(r.failing_since),
  stuckSince: r.stuck_since === null ? null : new Date(r.stuck_since),
  updatedAt: new Date(r.updated_at)
})

const toTransfer = (r: TransferRow): ChainTransfer =>
  chainTransferFromColumns(r, { nonce: r.nonce, createdAt: new Date(r.created_at) })

/** The payment's settlement columns, in the order the statements here name them. */
export const settlementToStorage = (s: PaymentSettlement | null): Array<SqliteValue> => {
  const status = settlementStatusToColumns(s?.status ?? null)
  return [
    s?.amount.toString() ?? null,
    status.status,
    status.held ? 1 : 0,
    s?.destination ?? null,
    s?.txHash ?? null,
    s?.settledAt?.getTime() ?? null
  ]
}

/** Thrown inside a transaction to roll it back; turned into the port's failure outside. */
const leaseLost = (lease: ChainJobLease) => new ChainJobLeaseLost({ jobId: lease.jobId })

/** The chain work's refusals, thrown inside a write (and so a defect of it), as failures. */
export const chainWorkRefusal = (defect: unknown) =>
  defect instanceof ChainJobLeaseLost || defect instanceof NonceTaken
    ? Option.some(Effect.fail(defect))
    : Option.none()

/**
 * A payment change's refusals, thrown inside its write, as failures: the chain
 * work's, and a buyer's transfer another payment has claimed (its job not queued).
 */
export const paymentChangeRefusal = (
  defect: unknown
): Option.Option<Effect.Effect<never, ChainJobLeaseLost | NonceTaken | TransactionClaimed>> =>
  defect instanceof TransactionClaimed ? Option.some(Effect.fail(defect)) : chainWorkRefusal(defect)

/**
 * The chain job store, and `enqueue` for the payment store: the job's row,
 * written in the caller's transaction, unless the payment has a job of its
 * kind already.
 */
export const makeSqliteChainJobStore = (
  db: SqliteConnection,
  /** Where the job writes go: concurrent payments' share a commit (GroupCommit.ts). */
  writes: GroupCommit,
  /** Writes events in the caller's transaction (the event store's insert). */
  writeEvents: (events: ReadonlyArray<PayEvent>) => void,
  /** Writes audit entries in the caller's transaction (an operator's override). */
  insertAuditEntries: (entries: ReadonlyArray<AuditEntry>) => void = () => {
    throw new Error("this chain job store writes no audit entries")
  }
) => {
  const q = (sql: string) => db.prepare(sql)
  const sql = {
    insert: q(`INSERT INTO chain_jobs (id, payment_id, kind, chain_id, payload, state, run_at,
        attempts, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, 'active', ?, 0, ?, ?)
      ON CONFLICT (payment_id, kind) DO NOTHING`),
    requeue: q(`INSERT INTO chain_jobs (id, payment_id, kind, chain_id, payload, state, run_at,
        attempts, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, 'active', ?, 0, ?, ?)
      ON CONFLICT (payment_id, kind) DO UPDATE SET
        chain_id = excluded.chain_id, payload = excluded.payload, state = 'active',
        run_at = excluded.run_at, lease_token = NULL, lease_until = NULL, nonce = NULL,
        destination = NULL, last_error = NULL, failures = 0, failing_since = NULL,
        stuck_since = NULL, updated_at = excluded.updated_at
      WHERE chain_jobs.state = 'done'
      RETURNING id`),
    claim: q(`UPDATE chain_jobs SET lease_token = lower(hex(randomblob(16))), lease_until = ?,
        attempts = attempts + 1, updated_at = ?
      WHERE id IN (
        SELECT id FROM chain_jobs
        WHERE state = 'active' AND run_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
        ORDER BY run_at, id LIMIT ?
      )
      RETURNING *`),
    renew: q("UPDATE chain_jobs SET lease_until = ? WHERE id = ? AND lease_token = ?"),
    release: q(`UPDATE chain_jobs SET lease_token = NULL, lease_until = NULL, run_at = ?,
        last_error = ?, failures = ?, failing_since = ?, stuck_since = ?, updated_at = ?
      WHERE id = ? AND lease_token = ?`),
    /** A write that changes nothing: the fence, and SQLite's write lock from here on. */
    hold: q(`UPDATE chain_jobs SET updated_at = updated_at WHERE id = ? AND lease_token = ?
      RETURNING nonce`),
    insertHeld: q(`INSERT INTO chain_jobs (id, payment_id, kind, chain_id, payload, state, run_at,
        lease_token, lease_until, nonce, destination, attempts, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, 'active', ?, ?, ?, ?, ?, 1, ?, ?)`),
    peekNonce: q("SELECT next_nonce FROM chain_nonces WHERE chain_id = ? AND sender = ?"),
    /** Takes exactly the nonce given, unless the sequence has passed it (no row returned). */
    takeNonce: q(`INSERT INTO chain_nonces (chain_id, sender, next_nonce) VALUES (?, ?, ? + 1)
      ON CONFLICT (chain_id, sender) DO UPDATE SET next_nonce = excluded.next_nonce
        WHERE chain_nonces.next_nonce < excluded.next_nonce
      RETURNING next_nonce`),
    paymentTransaction: q(`UPDATE payments SET tx_network = ?, tx_hash = ?, tx_nonce = ?,
        updated_at = ?
      WHERE id = ? AND status = 'processing'`),
    setNonce: q("UPDATE chain_jobs SET nonce = ?, updated_at = ? WHERE id = ? AND lease_token = ?"),
    setDestination: q(`UPDATE chain_jobs SET destination = ?, updated_at = ?
      WHERE id = ? AND lease_token = ?`),
    recordTransfer: q(`INSERT INTO chain_transfers (hash, job_id, chain_id, sender, nonce, purpose,
        to_address, data, gas, value, max_fee_per_gas, max_priority_fee_per_gas, raw, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (hash) DO NOTHING`),
    complete: q(`UPDATE chain_jobs SET state = 'done', lease_token = NULL, lease_until = NULL,
        updated_at = ?
      WHERE id = ? AND lease_token = ?`),
    settle: q(`UPDATE payments SET settlement_amount = ?, settlement_status = ?,
        settlement_held = ?, settlement_destination = ?, settlement_tx_hash = ?, settled_at = ?
      WHERE id = ?`),
    unhold: q("UPDATE payments SET settlement_held = 0 WHERE id = ? AND settlement_held = 1"),
    byPayment: q("SELECT * FROM chain_jobs WHERE payment_id = ? AND kind = ?"),
    transfersAt: q(`SELECT * FROM chain_transfers WHERE job_id = ? AND nonce = ?
      ORDER BY created_at, hash`),
    transfersOf: q("SELECT * FROM chain_transfers WHERE job_id = ? ORDER BY created_at, hash"),
    transfersAtNonce: q(`SELECT t.*, j.id AS j_id, j.payment_id AS j_payment_id, j.kind AS j_kind,
        j.chain_id AS j_chain_id, j.payload AS j_payload, j.state AS j_state, j.run_at AS j_run_at,
        j.lease_token AS j_lease_token, j.lease_until AS j_lease_until, j.nonce AS j_nonce,
        j.destination AS j_destination, j.attempts AS j_attempts, j.last_error AS j_last_error,
        j.failures AS j_failures, j.failing_since AS j_failing_since,
        j.stuck_since AS j_stuck_since, j.created_at AS j_created_at, j.updated_at AS j_updated_at
      FROM chain_transfers t JOIN chain_jobs j ON j.id = t.job_id
      WHERE t.chain_id = ? AND t.sender = ? AND t.nonce = ?
      ORDER BY t.created_at, t.hash`),
    /** A replacement for a job that is over: its nonce is no holder's to watch. */
    recordReplacement: q(`INSERT INTO chain_transfers (hash, job_id, chain_id, sender, nonce,
        purpose, to_address, data, gas, value, max_fee_per_gas, max_priority_fee_per_gas, raw,
        created_at)
      SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
      WHERE EXISTS (SELECT 1 FROM chain_jobs WHERE id = ? AND state = 'done')
      ON CONFLICT (hash) DO NOTHING`),
    isDone: q("SELECT 1 AS done FROM chain_jobs WHERE id = ? AND state = 'done'"),
    instanceOf: q("SELECT instance, since FROM chain_instances WHERE chain_id = ?"),
    setInstance: q(`INSERT INTO chain_instances (chain_id, instance, since) VALUES (?, ?, ?)
      ON CONFLICT (chain_id) DO UPDATE SET instance = excluded.instance, since = excluded.since`),
    forgetNonces: q("DELETE FROM chain_nonces WHERE chain_id = ?"),
    forgetTransfers: q("DELETE FROM chain_transfers WHERE chain_id = ?"),
    activeOn: q("SELECT * FROM chain_jobs WHERE state = 'active' AND chain_id = ? ORDER BY id"),
    endJob: q(`UPDATE chain_jobs SET state = 'done', lease_token = NULL, lease_until = NULL,
        last_error = ?, updated_at = ?
      WHERE id = ? AND state = 'active'`),
    /** The payment whose collect job names the buyer's transfer already (the unique index's). */
    claimedBy: q(`SELECT payment_id FROM chain_jobs
      WHERE chain_id = ? AND json_extract(payload, '$.paid.hash') = ?
        AND kind = 'collect' AND json_extract(payload, '$.paid.hash') IS NOT NULL`),
    recordReturnable: q(`INSERT INTO returnable_funds (chain_id, tx_hash, payment_id, asset,
        from_address, value, reason, recorded_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (chain_id, tx_hash) DO NOTHING`),
    returnable: q(`SELECT * FROM returnable_funds
      ORDER BY recorded_at DESC, chain_id DESC, tx_hash DESC LIMIT ?`),
    /** Migration 0026's partial index (payments_owed) holds these, by asset. */
    owedSettlements: q(`SELECT settlement_amount AS amount FROM payments
      WHERE token_asset = ? AND status = 'succeeded'
        AND settlement_status IN ('pending', 'no_destination')`),
    owedReturnable: q("SELECT value AS amount FROM returnable_funds WHERE asset = ?")
  }

  const jobParams = (job: NewChainJob): Array<SqliteValue> => [
    job.id,
    job.paymentId,
    job.payload.kind,
    job.chainId,
    payloadToJson(job.payload),
    job.runAt.getTime(),
    job.createdAt.getTime(),
    job.createdAt.getTime()
  ]

  const transferParams = (t: ChainTransfer): Array<SqliteValue> => [
    t.hash,
    t.jobId,
    t.chainId,
    t.sender,
    t.nonce,
    t.purpose,
    t.to,
    t.data,
    t.gas.toString(),
    t.value.toString(),
    t.maxFeePerGas.toString(),
    t.maxPriorityFeePerGas.toString(),
    t.raw,
    t.createdAt.getTime()
  ]

  const insertTransfer = (t: ChainTransfer) => sql.recordTransfer.run(...transferParams(t))

  /** Takes the transfer's nonce from its sender's sequence, or throws `NonceTaken`. */
  const takeNonce = (t: ChainTransfer) => {
    if (sql.takeNonce.get(t.chainId, t.sender, t.nonce) === undefined) {
      throw new NonceTaken({ jobId: t.jobId, nonce: t.nonce })
    }
  }

  /**
   * Throws `TransactionClaimed` when the job is a collect naming a buyer's
   * transfer (a native payment's) that another payment's job names already on
   * its chain. Read in the writing transaction, which holds SQLite's one write
   * lock: nobody can claim it in between (the unique index backs this up).
   */
  const refuseClaimed = (job: NewChainJob) => {
    const paid = job.payload.kind === "collect" ? job.payload.paid : undefined
    if (paid === undefined) return
    const claimed = sql.claimedBy.get(job.chainId, paid.hash) as { payment_id: string } | undefined
    // The payment's own job is kept as it is (a job of its kind queued already).
    if (claimed !== undefined && claimed.payment_id !== job.paymentId) {
      throw new TransactionClaimed({ chainId: job.chainId, hash: paid.hash })
    }
  }

  /**
   * Queues the job in the caller's transaction. A held one goes in with its
   * lease and its first transfer (its nonce taken), and must be the payment's
   * job of its kind: its holder runs it at once. A buyer's transfer another
   * payment claimed throws `TransactionClaimed`, before anything is written.
   */
  const enqueue = (job: NewChainJob) => {
    refuseClaimed(job)
    const start = job.held
    if (start === undefined) {
      sql.insert.run(...jobParams(job))
      return
    }
    const transfer = start.transfer
    if (transfer !== undefined) takeNonce(transfer)
    sql.insertHeld.run(
      job.id,
      job.paymentId,
      job.payload.kind,
      job.chainId,
      payloadToJson(job.payload),
      job.runAt.getTime(),
      start.lease.token,
      start.leaseUntil.getTime(),
      transfer?.nonce ?? null,
      start.destination ?? null,
      job.createdAt.getTime(),
      job.createdAt.getTime()
    )
    if (transfer !== undefined) insertTransfer(transfer)
  }

  /** Ends the held job in the caller's transaction, or throws `ChainJobLeaseLost`. */
  const completeHeld = (lease: ChainJobLease, now: Date) =>
    write(lease, sql.complete.run(now.getTime(), lease.jobId, lease.token))

  /** Runs a fenced single-statement write: exactly one row, or the lease is lost. */
  const write = (lease: ChainJobLease, changes: { readonly changes: number | bigint }) => {
    if (Number(changes.changes) !== 1) throw leaseLost(lease)
  }

  const hold = (lease: ChainJobLease) => {
    const row = sql.hold.get(lease.jobId, lease.token) as { nonce: number | null } | undefined
    if (row === undefined) throw leaseLost(lease)
    return row
  }

  /**
   * A write of the job while `lease` holds it, in the next group commit: `ChainJobLeaseLost`
   * (and `NonceTaken` from a write that takes a nonce), thrown inside, rolls it back alone.
   */
  const fenced = <A>(body: () => A) =>
    writes
      .write(body)
      .pipe(
        Effect.catchSomeDefect((defect) =>
          defect instanceof ChainJobLeaseLost ? Option.some(Effect.fail(defect)) : Option.none()
        )
      )
  const fencedTakingNonce = <A>(body: () => A) =>
    writes.write(body).pipe(Effect.catchSomeDefect(chainWorkRefusal))

  const store = ChainJobStore.of({
    claimDue: (now, limit, leaseMs) =>
      writes.write(() =>
        db.transaction((): ReadonlyArray<ClaimedJob> => {
          const at = now.getTime()
          const rows = sql.claim.all(at + leaseMs, at, at, at, Math.max(0, limit)) as Array<JobRow>
          // RETURNING has no order of its own.
          rows.sort((a, b) => a.run_at - b.run_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          return rows.map((r) => ({
            job: toJob(r),
            lease: { jobId: r.id as ChainJobId, token: r.lease_token! },
            transfers:
              r.nonce === null
                ? []
                : (sql.transfersAt.all(r.id, r.nonce) as Array<TransferRow>).map(toTransfer)
          }))
        })
      ),

    renew: (lease, now, leaseMs) =>
      fenced(() => write(lease, sql.renew.run(now.getTime() + leaseMs, lease.jobId, lease.token))),

    release: (lease, runAt, lastError, now, failing) =>
      fenced(() =>
        write(
          lease,
          sql.release.run(
            runAt.getTime(),
            lastError,
            failing.failures,
            failing.failingSince?.getTime() ?? null,
            failing.stuckSince?.getTime() ?? null,
            now.getTime(),
            lease.jobId,
            lease.token
          )
        )
      ),

    nextNonce: (chainId, sender, chainNext) =>
      Effect.sync(() => {
        const row = sql.peekNonce.get(chainId, sender) as { next_nonce: number } | undefined
        return Math.max(row?.next_nonce ?? 0, chainNext)
      }),

    dropNonce: (lease, now) =>
      fenced(() => write(lease, sql.setNonce.run(null, now.getTime(), lease.jobId, lease.token))),

    setDestination: (lease, destination, now) =>
      fenced(() =>
        write(lease, sql.setDestination.run(destination, now.getTime(), lease.jobId, lease.token))
      ),

    recordTransfer: (lease, t, payment) =>
      fencedTakingNonce(() =>
        db.transaction(() => {
          const held = hold(lease).nonce
          if (held === null) {
            takeNonce(t)
            write(lease, sql.setNonce.run(t.nonce, t.createdAt.getTime(), lease.jobId, lease.token))
          } else if (held !== t.nonce) {
            throw new Error(`chain job ${lease.jobId} holds nonce ${held}, not ${t.nonce}`)
          }
          insertTransfer(t)
          if (payment !== undefined) {
            const tx = payment.transaction
            sql.paymentTransaction.run(
              tx.networkId,
              tx.hash,
              tx.nonce,
              payment.at.getTime(),
              payment.id
            )
          }
        })
      ),

    complete: (lease, now, settlement) =>
      fenced(() =>
        db.transaction(() => {
          write(lease, sql.complete.run(now.getTime(), lease.jobId, lease.token))
          if (settlement !== undefined) {
            sql.settle.run(...settlementToStorage(settlement.settlement), settlement.paymentId)
            writeEvents(settlement.events ?? [])
          }
        })
      ),

    requeue: (job, kind, audit) =>
      Effect.sync(() => {
        if (job.payload.kind !== kind)
          throw new Error(`a ${job.payload.kind} job queued as ${kind}`)
        // Queued again, a held settlement is under way: `pending` from here.
        return db.transaction(() => {
          const queued = sql.requeue.get(...jobParams(job)) !== undefined
          if (queued) {
            sql.unhold.run(job.paymentId)
            if (audit !== undefined) insertAuditEntries(audit)
          }
          return queued
        })
      }),

    findByPayment: (paymentId, kind) =>
      Effect.sync(() => {
        const row = sql.byPayment.get(paymentId, kind) as JobRow | undefined
        return row === undefined ? Option.none() : Option.some(toJob(row))
      }),

    transfersOf: (jobId) =>
      Effect.sync(() => (sql.transfersOf.all(jobId) as Array<TransferRow>).map(toTransfer)),

    transfersAtNonce: (chainId, sender, nonce) =>
      Effect.sync(() =>
        (sql.transfersAtNonce.all(chainId, sender, nonce) as Array<Record<string, unknown>>).map(
          (row) => ({
            transfer: toTransfer(row as unknown as TransferRow),
            job: toJob(
              Object.fromEntries(
                Object.entries(row)
                  .filter(([k]) => k.startsWith("j_"))
                  .map(([k, v]) => [k.slice(2), v])
              ) as unknown as JobRow
            )
          })
        )
      ),

    recordReplacement: (t) =>
      writes.write(() =>
        db.transaction(() => {
          sql.recordReplacement.run(...transferParams(t), t.jobId)
          return sql.isDone.get(t.jobId) !== undefined
        })
      ),

    swapChainInstance: (chainId, instance, now) =>
      writes.write(() =>
        db.transaction(() => {
          const row = sql.instanceOf.get(chainId) as
            | { readonly instance: string; readonly since: number }
            | undefined
          if (row?.instance !== instance) {
            sql.setInstance.run(chainId, instance, now.getTime())
            sql.forgetNonces.run(chainId)
            sql.forgetTransfers.run(chainId)
          }
          return row === undefined
            ? Option.none()
            : Option.some({ instance: row.instance, since: new Date(row.since) })
        })
      ),

    chainInstance: (chainId) =>
      Effect.sync(() => {
        const row = sql.instanceOf.get(chainId) as
          | { readonly instance: string; readonly since: number }
          | undefined
        return row === undefined
          ? Option.none()
          : Option.some({ instance: row.instance, since: new Date(row.since) })
      }),

    activeJobsOn: (chainId) =>
      Effect.sync(() => (sql.activeOn.all(chainId) as Array<JobRow>).map(toJob)),

    endJob: (jobId, lastError, now) =>
      writes.write(() => Number(sql.endJob.run(lastError, now.getTime(), jobId).changes) === 1),

    recordReturnable: (funds) =>
      writes.write(() => {
        sql.recordReturnable.run(
          funds.chainId,
          funds.txHash,
          funds.paymentId,
          funds.asset,
          funds.from,
          funds.value.toString(),
          funds.reason,
          funds.recordedAt.getTime()
        )
      }),

    returnable: (limit) =>
      Effect.sync(() =>
        (sql.returnable.all(Math.max(0, limit)) as Array<ReturnableRow>).map(toReturnable)
      ),

    owedIn: (asset) =>
      Effect.sync(() =>
        // One read transaction: both sums see the same moment.
        db.transaction(
          () =>
            sumExactly(sql.owedSettlements.all(asset) as Array<{ amount: string | null }>) +
            sumExactly(sql.owedReturnable.all(asset) as Array<{ amount: string }>)
        )
      )
  })

  return { store, enqueue, completeHeld }
}
