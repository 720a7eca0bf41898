/**
 * Pause points, to force the order of a race instead of hoping for it (issue
 * 20): a wrapper around an engine's storage layer (the `wrapStorage` of
 * startStandalone's overrides, for tests only) that can hold a named store
 * call before it reaches the database, until the test lets it go, and that
 * notes what this engine wrote for payments and their chain jobs. With one
 * wrapper per engine, a test says which of two contenders writes first and which
 * engine does the work, then checks the loser's answer.
 *
 * Nothing here changes what a call does once let through: a held call runs
 * as it would have, later.
 */
import {
  ChainJobStore,
  type ClaimedJob,
  type PaymentChange,
  type PaymentId,
  type PaymentStatus,
  PaymentStore,
  type PayStorage
} from "@pay/core"
import { Context, Effect, Layer } from "effect"

/** A store call the test can hold: a payment's status write, or a chain job claim. */
export interface TransitionCall {
  readonly id: PaymentId
  readonly from: PaymentStatus
  readonly change: PaymentChange
}

/** One held call: it waits until `release`; `answered` settles with what the store then did. */
export interface Hold {
  /** Resolves once a matching call has arrived and is held. */
  readonly reached: Promise<void>
  /** Lets the held call (or the next one to arrive) through. */
  readonly release: () => void
  /** What the call answered once let through (a rejection for a failed or interrupted one). */
  readonly answered: Promise<unknown>
}

interface Pending<A> {
  readonly when: (call: A) => boolean
  readonly hold: Hold
  readonly arrived: () => void
  readonly released: Promise<void>
  readonly settle: (outcome: { ok: true; value: unknown } | { ok: false; error: unknown }) => void
}

const newHold = <A>(when: (call: A) => boolean): Pending<A> => {
  let arrived = () => {}
  let release = () => {}
  let settle: Pending<A>["settle"] = () => {}
  const reached = new Promise<void>((resolve) => {
    arrived = resolve
  })
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  const answered = new Promise<unknown>((resolve, reject) => {
    settle = (outcome) => (outcome.ok ? resolve(outcome.value) : reject(outcome.error))
  })
  // Looked at by the test only when it asks; never an unhandled rejection.
  answered.catch(() => {})
  return { when, hold: { reached, release, answered }, arrived, released, settle }
}

/**
 * The chain job claims of one engine, gated: until `arm`, every claim finds
 * nothing due (the store is not asked, as if the runner looked before anything
 * was queued); once armed, a claim made at `notBefore` or later is held until
 * `open`, an earlier one still finds nothing. After `open` claims go through.
 */
export interface ClaimGate {
  readonly arm: (notBefore: Date) => void
  /** Resolves once a claim made at `notBefore` or later is held. */
  readonly held: () => Promise<void>
  /**
   * Lets the held claim and every later one through; resolves with what the
   * held one claimed (nothing, at once, when no claim was held).
   */
  readonly open: () => Promise<ReadonlyArray<ClaimedJob>>
}

export interface PausePoints {
  /** Wraps an engine's storage layer: its PaymentStore and ChainJobStore pass through the points. */
  readonly wrap: <E>(storage: Layer.Layer<PayStorage, E>) => Layer.Layer<PayStorage, E>
  /** Holds the next payment status write matching `when` (once). */
  readonly holdTransition: (when: (call: TransitionCall) => boolean) => Hold
  /** The claims gate; closed (claims find nothing due) from the start when `claimsClosed`. */
  readonly claims: ClaimGate
  /**
   * What this engine's store calls did, in order: `claim <jobId>` for each job
   * it claimed, `record <jobId>` for each transaction it recorded, `complete
   * <jobId>` for each job it ended, `<paymentId> -> <status>` for each
   * payment status it wrote (with `+<kind> held` when the write queued a job
   * held by this engine).
   */
  readonly writes: () => ReadonlyArray<string>
}

export const pausePoints = (options: { readonly claimsClosed?: boolean } = {}): PausePoints => {
  const transitions: Array<Pending<TransitionCall>> = []
  const writes: Array<string> = []
  const note = (line: string) => Effect.sync(() => writes.push(line))

  type GateState =
    | { readonly _tag: "closed" }
    | { readonly _tag: "armed"; readonly notBefore: Date }
    | { readonly _tag: "open" }
  let gate: GateState = options.claimsClosed === true ? { _tag: "closed" } : { _tag: "open" }
  let claimHold: Pending<Date> | undefined
  /** Whether a claim took the armed hold: any later one waits for `open` too, untracked. */
  let claimTaken = false

  /** Runs `call` after the first pending hold matching `args` (if any) is released. */
  const through = <A, R, E>(
    pending: Array<Pending<A>>,
    args: A,
    call: Effect.Effect<R, E>
  ): Effect.Effect<R, E> =>
    Effect.suspend(() => {
      const index = pending.findIndex((p) => p.when(args))
      if (index < 0) return call
      const [hit] = pending.splice(index, 1)
      const held = hit!
      held.arrived()
      return Effect.promise(() => held.released).pipe(
        Effect.zipRight(call),
        Effect.tapBoth({
          onSuccess: (value) => Effect.sync(() => held.settle({ ok: true, value })),
          onFailure: (error) => Effect.sync(() => held.settle({ ok: false, error }))
        }),
        Effect.onInterrupt(() =>
          Effect.sync(() => held.settle({ ok: false, error: new Error("interrupted") }))
        )
      )
    })

  const claimThrough = (
    now: Date,
    call: Effect.Effect<ReadonlyArray<ClaimedJob>>
  ): Effect.Effect<ReadonlyArray<ClaimedJob>> =>
    Effect.suspend(() => {
      if (gate._tag === "closed") return Effect.succeed([])
      if (gate._tag === "armed" && claimHold !== undefined) {
        if (now.getTime() < gate.notBefore.getTime()) return Effect.succeed([])
        const hold = claimHold
        if (claimTaken)
          return Effect.zipRight(
            Effect.promise(() => hold.released),
            call
          )
        claimTaken = true
        return through([hold], now, call)
      }
      return call
    })

  const claims: ClaimGate = {
    arm: (notBefore) => {
      gate = { _tag: "armed", notBefore }
      claimHold = newHold<Date>(() => true)
      claimTaken = false
    },
    held: () => {
      if (claimHold === undefined) throw new Error("the claims gate is not armed")
      return claimHold.hold.reached
    },
    open: async () => {
      const hold = claimHold
      gate = { _tag: "open" }
      if (hold === undefined) return []
      hold.hold.release()
      if (!claimTaken) return []
      return (await hold.hold.answered) as ReadonlyArray<ClaimedJob>
    }
  }

  const wrap = <E>(storage: Layer.Layer<PayStorage, E>): Layer.Layer<PayStorage, E> =>
    Layer.effectContext(
      Effect.map(Effect.context<PayStorage>(), (context) => {
        const payments = Context.get(context, PaymentStore)
        const jobs = Context.get(context, ChainJobStore)
        return context.pipe(
          Context.add(PaymentStore, {
            ...payments,
            transition: (id, from, change, completion, outbox) =>
              through(
                transitions,
                { id, from, change },
                payments.transition(id, from, change, completion, outbox)
              ).pipe(
                Effect.tap((written) =>
                  written._tag === "Some"
                    ? note(
                        `${id} -> ${change.status}${
                          change.enqueue?.held === undefined
                            ? ""
                            : ` +${change.enqueue.payload.kind} held`
                        }`
                      )
                    : Effect.void
                )
              )
          }),
          Context.add(ChainJobStore, {
            ...jobs,
            claimDue: (now, limit, leaseMs) =>
              claimThrough(now, jobs.claimDue(now, limit, leaseMs)).pipe(
                Effect.tap((got) => Effect.forEach(got, (c) => note(`claim ${c.job.id}`)))
              ),
            recordTransfer: (lease, transfer, payment) =>
              jobs
                .recordTransfer(lease, transfer, payment)
                .pipe(Effect.tap(() => note(`record ${lease.jobId}`))),
            complete: (lease, now, settlement) =>
              jobs
                .complete(lease, now, settlement)
                .pipe(Effect.tap(() => note(`complete ${lease.jobId}`)))
          })
        )
      })
    ).pipe(Layer.provide(storage))

  return {
    wrap,
    holdTransition: (when) => {
      const pending = newHold(when)
      transitions.push(pending)
      return pending.hold
    },
    claims,
    writes: () => [...writes]
  }
}
