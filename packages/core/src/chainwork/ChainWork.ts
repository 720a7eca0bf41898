/**
 * The durable chain work's runner (ChainJob.ts says what a job is). Each
 * instance claims due jobs under a lease and takes each one step at a time:
 * every step reads what is recorded and what the chain says now, does one
 * thing (record and send a transaction, send it again, replace it, or decide
 * the payment) and says when to look again. Nothing is kept only in memory,
 * so a step interrupted anywhere, by a crash, a timeout or a lost lease, is
 * taken again from the records by whichever instance claims the job next.
 *
 * This module is the lease loop: claiming, renewing, holding a job between
 * soon looks, letting it go, and how many run at once. The steps themselves
 * are DeployStep.ts, CollectStep.ts and SettleStep.ts, on the transactions of
 * Transactions.ts.
 */
import { Cause, Effect, Exit, FiberSet, Option, Queue, Random } from "effect"
import type { AuditActor, AuditEntry } from "../audit/AuditEntry.js"
import { auditEntryOf, auditStamp } from "../audit/NewAuditEntry.js"
import { Chain, networkOf } from "../chain/Chain.js"
import { type MerchantId, merchantPayable } from "../merchants/Merchant.js"
import { MerchantStore } from "../merchants/MerchantStore.js"
import { chainMismatch } from "../merchants/Settlements.js"
import type { ChainJobLeaseLost } from "../payments/ChainJob.js"
import {
  type ClaimedJob,
  heldJob,
  heldStart,
  type JobFailing,
  type NewChainJob,
  NOT_FAILING,
  newChainJob
} from "../payments/ChainJob.js"
import type { Payment, PaymentId } from "../payments/Payment.js"
import { type PaymentCursor, PaymentStore } from "../payments/PaymentStore.js"
import { Payments } from "../payments/Payments.js"
import { type Caip10, chainOfCaip19 } from "../shared/Caip.js"
import { InvalidInput } from "../shared/Errors.js"
import { type FreshChainRun, makeStartFreshChains } from "./ChainInstances.js"
import { ChainJobStore } from "./ChainJobStore.js"
import { ChainWorkConfig } from "./ChainWorkConfig.js"
import { makeCollectStep } from "./CollectStep.js"
import { makeDeployStep } from "./DeployStep.js"
import { makeSettleStep } from "./SettleStep.js"
import { again, done, type Held, RETRY_MS } from "./Step.js"
import { makeTransactions } from "./Transactions.js"

// Defined with the job (ChainJob.ts); re-exported so imports from the runner keep working.
export { newChainJob, newChainJobId } from "../payments/ChainJob.js"

/** A job waiting at most this long between steps keeps its lease and waits in memory. */
const HOLD_MS = 2_000
/** A job is let go after this long of holding, so others get their turn. */
const MAX_HOLD_MS = 60_000
/** Payments read at once when a merchant's held settlements are queued again. */
const RESUME_PAGE = 200

/** The shortest back-off once a step has failed twice: a step retried at once (0 ms) backs off too. */
const MIN_BACKOFF_MS = 100

/**
 * The job's failing steps after one more failure at `at`: counted, timed
 * from the first, and stuck once past either bound.
 */
export const failed = (
  before: JobFailing,
  at: number,
  bounds: { readonly stuckAfterMs: number; readonly stuckAfterFailures: number }
): JobFailing => {
  const failures = before.failures + 1
  const failingSince = before.failingSince ?? new Date(at)
  const over =
    failures >= bounds.stuckAfterFailures || at - failingSince.getTime() >= bounds.stuckAfterMs
  return {
    failures,
    failingSince,
    stuckSince: before.stuckSince ?? (over ? new Date(at) : null)
  }
}

/**
 * The wait before the next try after `failures` failed steps in a row: the
 * step's own wait the first time, then doubling from it, up to `capMs`, with
 * jitter (between half and all of it), so instances that failed together do
 * not retry together.
 */
export const backoff = (stepMs: number, failures: number, capMs: number) =>
  Effect.gen(function* () {
    if (failures <= 1) return Math.min(stepMs, capMs)
    const full = Math.min(capMs, Math.max(stepMs, MIN_BACKOFF_MS) * 2 ** Math.min(failures - 1, 30))
    return Math.round(full / 2 + (yield* Random.next) * (full / 2))
  })

export class ChainWork extends Effect.Service<ChainWork>()("@pay/core/ChainWork", {
  scoped: Effect.gen(function* () {
    const store = yield* ChainJobStore
    const chain = yield* Chain
    const payments = yield* Payments
    const paymentStore = yield* PaymentStore
    const merchants = yield* MerchantStore
    const settings = yield* ChainWorkConfig
    const clock = yield* Effect.clock
    const now = () => new Date(clock.unsafeCurrentTimeMillis())
    const wakeUps = yield* Queue.sliding<void>(1)
    /** Tells the loop there is work now (a job was just queued). */
    const wake = Queue.offer(wakeUps, undefined).pipe(Effect.asVoid)
    const running = yield* FiberSet.make()
    let busy = 0
    const transactions = yield* makeTransactions
    const startFreshChains = yield* makeStartFreshChains
    let freshRuns: ReadonlyArray<FreshChainRun> = []
    /**
     * Starts afresh each chain that is on a new run (ChainInstances.ts): run
     * once at start, before the loop claims anything.
     */
    const startFresh = Effect.tap(startFreshChains, (runs) =>
      Effect.sync(() => {
        freshRuns = runs
      })
    )
    const collectStep = yield* makeCollectStep(transactions)
    const settleStep = yield* makeSettleStep(transactions)
    const deployStep = yield* makeDeployStep(transactions, wake)

    /** One look at the job. */
    const step = (held: Held) =>
      Effect.gen(function* () {
        const network = networkOf(chain.networks, held.job.chainId)
        if (network === undefined) {
          return again(60_000, `${held.job.chainId} is not a configured network`)
        }
        const payment = yield* payments.find(held.job.paymentId)
        // A collect or deploy whose payment is decided is over, unless it still holds a nonce
        // its transactions have not used (a failed payment's expired call): it goes on to use it.
        if (
          held.job.payload.kind !== "settle" &&
          payment.status !== "processing" &&
          (held.job.nonce === null || held.transfers.length === 0)
        ) {
          return done
        }
        switch (held.job.payload.kind) {
          case "collect":
            return yield* collectStep(held, network, payment)
          case "deploy":
            return yield* deployStep(held, network, payment)
          case "settle":
            return yield* settleStep(held, network, payment)
        }
      })

    /** Runs a claimed job, step after step, while the next look is soon; then lets it go. */
    const run = (claimed: ClaimedJob, claimedAt: number): Effect.Effect<void> => {
      const held: Held = {
        lease: claimed.lease,
        job: claimed.job,
        transfers: [...claimed.transfers]
      }
      const startedAt = clock.unsafeCurrentTimeMillis()
      // When the lease runs out, as this process last set it (the store's clock is ours).
      let leaseUntil = claimedAt + settings.leaseMs
      // Steps in a row that could not finish, as stored with the job and kept up to date here.
      let failing: JobFailing = {
        failures: claimed.job.failures,
        failingSince: claimed.job.failingSince,
        stuckSince: claimed.job.stuckSince
      }
      const loop: Effect.Effect<void, ChainJobLeaseLost> = Effect.gen(function* () {
        const stepped = yield* step(held).pipe(
          Effect.catchTags({
            ChainUnavailable: (e) => Effect.succeed(again(RETRY_MS, e.message)),
            // The node answered: soon again (a nonce ahead of one still on its way, say).
            TransactionRejected: (e) =>
              Effect.succeed(
                again(
                  networkOf(chain.networks, held.job.chainId)?.pollIntervalMs ?? RETRY_MS,
                  e.reason
                )
              ),
            PaymentNotFound: () => Effect.succeed(done),
            // Another instance took the nonce it was signed at: nothing was written; sign again.
            NonceTaken: (e) => Effect.succeed(again(0, `nonce ${e.nonce} was taken meanwhile`))
          }),
          Effect.catchIf(
            (e): e is Exclude<typeof e, ChainJobLeaseLost> => e._tag !== "ChainJobLeaseLost",
            (e) => Effect.succeed(again(RETRY_MS, `${e._tag}`))
          ),
          Effect.catchAllDefect((defect) =>
            Effect.as(
              Effect.logError("chain job step failed", Cause.die(defect)),
              again(RETRY_MS * 5, String(defect))
            )
          )
        )
        let result = stepped
        // Newly stuck: let go at once, so the mark is stored where /ready and other instances read it.
        let newlyStuck = false
        if (result._tag === "Again" && result.note !== null) {
          const at = clock.unsafeCurrentTimeMillis()
          const next = failed(failing, at, settings)
          const afterMs = yield* backoff(result.afterMs, next.failures, settings.backoffCapMs)
          // One line per back-off step: the waits double, so a refusal that lasts costs few lines.
          yield* Effect.logWarning("chain job retry", {
            step: "again",
            attempt: next.failures,
            reason: result.note,
            afterMs,
            failingSince: next.failingSince?.toISOString()
          })
          if (failing.stuckSince === null && next.stuckSince !== null) {
            newlyStuck = true
            yield* Effect.logError("chain job stuck", {
              failures: next.failures,
              failingSince: next.failingSince?.toISOString(),
              reason: result.note
            })
          }
          failing = next
          result = again(afterMs, result.note)
        } else {
          if (failing.failures > 0) {
            yield* Effect.logInfo("chain job going again", {
              after: failing.failures,
              ...(failing.stuckSince === null ? {} : { wasStuck: true })
            })
          }
          failing = NOT_FAILING
        }
        if (result._tag === "Again") {
          if (result.note === null) {
            yield* Effect.logDebug("chain job step", { step: "wait", afterMs: result.afterMs })
          }
        } else {
          yield* Effect.logInfo("chain job step", {
            step:
              result._tag === "Handover"
                ? "handover"
                : result._tag === "Done"
                  ? "done"
                  : "completed"
          })
        }
        if (result._tag === "Completed") return
        if (result._tag === "Handover") {
          return yield* run(result.next, clock.unsafeCurrentTimeMillis())
        }
        if (result._tag === "Done") {
          yield* store.complete(held.lease, now())
          return
        }
        const heldFor = clock.unsafeCurrentTimeMillis() - startedAt
        if (result.afterMs <= HOLD_MS && heldFor < MAX_HOLD_MS && !newlyStuck) {
          // A wait the lease would not outlast (a short lease, a back-off): renewed first.
          const before = clock.unsafeCurrentTimeMillis()
          if (before + result.afterMs >= leaseUntil - settings.leaseMs / 2) {
            const span = result.afterMs + settings.leaseMs
            yield* store.renew(held.lease, new Date(before), span)
            leaseUntil = before + span
          }
          if (result.afterMs > 0) yield* Effect.sleep(result.afterMs)
          // Renewed once half of it is gone: a commit per step would cost more than the step.
          const at = clock.unsafeCurrentTimeMillis()
          if (at >= leaseUntil - settings.leaseMs / 2) {
            yield* store.renew(held.lease, new Date(at), settings.leaseMs)
            leaseUntil = at + settings.leaseMs
          }
          return yield* loop
        }
        yield* store.release(
          held.lease,
          new Date(clock.unsafeCurrentTimeMillis() + result.afterMs),
          result.note,
          now(),
          failing
        )
      })
      return loop.pipe(
        Effect.catchTag("ChainJobLeaseLost", () =>
          Effect.logWarning("chain job lease lost to another instance")
        ),
        // Every line of the job's work carries the job's ids.
        Effect.annotateLogs({
          jobId: claimed.job.id,
          kind: claimed.job.payload.kind,
          paymentId: claimed.job.paymentId,
          chainId: claimed.job.chainId
        }),
        // Stopping: let the job go now, so the next start (or another instance) takes it at once.
        Effect.onInterrupt(() =>
          store.release(held.lease, now(), null, now(), failing).pipe(Effect.ignore)
        )
      )
    }

    /** Claims what is due and starts it; returns how many were claimed. */
    const claimAndStart = Effect.gen(function* () {
      const room = settings.concurrency - busy
      if (room <= 0) return 0
      const claimedAt = clock.unsafeCurrentTimeMillis()
      const claimed = yield* store.claimDue(new Date(claimedAt), room, settings.leaseMs)
      for (const job of claimed) {
        busy++
        yield* FiberSet.run(
          running,
          Effect.ensuring(
            run(job, claimedAt),
            Effect.sync(() => {
              busy--
            })
          )
        )
      }
      return claimed.length
    })

    /** Whether this process's runner runs: only then does it hold the jobs it queues. */
    let looping = false

    /**
     * Queues `job` through `write` (the payment change that queues it), held
     * by this process and run here at once when its runner runs and has
     * room: no claim to write, no wait for the next look. Otherwise the job
     * is queued for any instance to claim, and the runner woken.
     */
    const queueHeld = <A, E, R>(
      job: NewChainJob,
      write: (job: NewChainJob) => Effect.Effect<A, E, R>
    ): Effect.Effect<A, E, R> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          if (!looping || busy >= settings.concurrency) {
            const written = yield* restore(write(job))
            yield* wake
            return written
          }
          busy++
          const at = clock.unsafeCurrentTimeMillis()
          const held = { ...job, held: heldStart(job.id, new Date(at), settings.leaseMs) }
          const exit = yield* Effect.exit(restore(write(held)))
          if (Exit.isFailure(exit)) {
            busy--
            return yield* exit
          }
          yield* FiberSet.run(
            running,
            Effect.ensuring(
              run(heldJob(held), at),
              Effect.sync(() => {
                busy--
              })
            )
          )
          return exit.value
        })
      )

    /** Claims and runs due jobs until none is due or running: for tests. */
    const drain = Effect.gen(function* () {
      while ((yield* claimAndStart) > 0 || busy > 0) yield* Effect.sleep(10)
    })

    /** The background loop, for as long as the engine runs. */
    const runForever = Effect.suspend(() => {
      looping = true
      return Effect.forever(
        Effect.gen(function* () {
          yield* claimAndStart.pipe(
            Effect.catchAllCause((cause) => Effect.logWarning("chain work: claiming failed", cause))
          )
          yield* Effect.race(Queue.take(wakeUps), Effect.sleep(settings.pollMs))
        })
      ).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            looping = false
          })
        )
      )
    })

    /** The payment's settle job, queued again unless one is active: true when queued. */
    const requeueSettle = (
      payment: Payment,
      release: boolean,
      redirect?: { readonly destination: Caip10; readonly audit: AuditEntry }
    ) =>
      Effect.gen(function* () {
        if (payment.tokenAmount === null || payment.settlement === null) return false
        const queued = yield* store.requeue(
          newChainJob(
            payment.id,
            chainOfCaip19(payment.tokenAmount.asset),
            {
              kind: "settle",
              asset: payment.tokenAmount.asset,
              amount: payment.settlement.amount,
              ...(release ? { release: true as const } : {}),
              ...(redirect === undefined ? {} : { destination: redirect.destination })
            },
            now()
          ),
          "settle",
          redirect === undefined ? undefined : [redirect.audit]
        )
        if (queued) yield* wake
        return queued
      })

    /**
     * Settles again a succeeded payment whose funds stayed with the engine: no
     * settlement destination for the asset at the time (`no_destination`), or
     * a settlement held while the merchant was not active (`held`). The
     * operator's move; sent even if the merchant is still not active. False when there is nothing to settle (a settlement under way
     * has its job active: `requeue` leaves it alone).
     */
    const settleAgain = (
      paymentId: PaymentId,
      override?: { readonly destination: Caip10; readonly actor: AuditActor }
    ) =>
      Effect.gen(function* () {
        const payment = yield* payments.find(paymentId)
        const status = payment.settlement?.status
        if (payment.status !== "succeeded" || (status !== "no_destination" && status !== "held")) {
          return false
        }
        if (override === undefined || payment.tokenAmount === null) {
          return yield* requeueSettle(payment, true)
        }
        const mismatch = chainMismatch(payment.tokenAmount.asset, override.destination)
        if (mismatch !== undefined) return yield* InvalidInput.of("destination", mismatch)
        // Recorded with the queueing, in its transaction: who sent the money elsewhere, from where.
        const audit = auditEntryOf(yield* auditStamp, {
          partnerId: payment.partnerId,
          actor: override.actor,
          action: "payment.settlement_redirected",
          subject: payment.id,
          merchantId: payment.merchantId,
          before: { destination: payment.settlement?.destination ?? null },
          after: { destination: override.destination }
        })
        return yield* requeueSettle(payment, true, { destination: override.destination, audit })
      })

    /**
     * Queues again the held settlements of a merchant that is active again
     * (`pay merchants set-status <id> active` runs it after the change): every
     * succeeded payment of its whose settlement is `held`. Idempotent, so running it again after a crash is safe; a
     * settlement under way is left alone. How many were queued.
     */
    const resumeHeld = (merchantId: MerchantId) =>
      Effect.gen(function* () {
        const merchant = yield* merchants.find(merchantId)
        if (Option.isNone(merchant) || !merchantPayable(merchant.value)) return 0
        let queued = 0
        let after: PaymentCursor | undefined
        for (;;) {
          const page = yield* paymentStore.list({
            filter: {
              partnerId: merchant.value.partnerId,
              merchantIds: [merchantId],
              statuses: ["succeeded"],
              now: now()
            },
            sortBy: "date",
            direction: "asc",
            after,
            limit: RESUME_PAGE
          })
          for (const payment of page) {
            if (payment.settlement?.status === "held" && (yield* requeueSettle(payment, false))) {
              queued++
            }
          }
          const last = page.at(-1)
          if (page.length < RESUME_PAGE || last === undefined) return queued
          after = {
            sortBy: "date",
            direction: "asc",
            key: String(last.createdAt.getTime()),
            id: last.id
          }
        }
      })

    return {
      wake,
      startFresh,
      /** What the start's `startFresh` did, for the start's banner. */
      freshRuns: Effect.sync(() => freshRuns),
      queueHeld,
      runForever,
      drain,
      settleAgain,
      resumeHeld
    } as const
  }),
  dependencies: [Payments.Default]
}) {}
