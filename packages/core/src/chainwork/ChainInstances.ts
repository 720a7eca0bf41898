/**
 * Chains that start fresh. The sandbox chain keeps no state between starts
 * (its EVM cannot save it), while the database keeps the collector's nonces
 * and the chain work of the earlier run. So each run of such a chain names
 * itself (`ChainNetwork.instance`), and before the chain work starts the
 * engine compares it with the run it last worked on. On a new run:
 *
 * - the collector's nonce sequence on that chain is forgotten: the next
 *   transaction takes the count the new chain reports;
 * - every job left active on the earlier run ends: a collect's or a deploy's
 *   payment, still processing, fails with `chain_reset` (its authorization
 *   was signed on a chain that is gone, and nothing was taken on this one);
 *   and the deployer's sequence is forgotten as the collector's is; a settle's
 *   settlement stays `pending` for good, its funds having been on the earlier
 *   run (say so to whoever looks: the job's last error);
 * - payments already decided keep their history, transactions included:
 *   those hashes name transactions of the earlier run (`since` dates it).
 *
 * Real networks name no instance, and nothing here touches them.
 */
import { Effect, Option } from "effect"
import { Chain } from "../chain/Chain.js"
import { Payments } from "../payments/Payments.js"
import { ChainJobStore } from "./ChainJobStore.js"

/** What starting a chain afresh did, for the start's banner and the log. */
export interface FreshChainRun {
  readonly chainId: string
  /** The run worked on before, if one was recorded. */
  readonly previous: { readonly instance: string; readonly since: Date } | null
  /** Collect and deploy jobs ended, their payments failed with `chain_reset`. */
  readonly paymentsFailed: number
  /** Settle jobs ended, their settlements left `pending`. */
  readonly settlementsEnded: number
}

const ENDED = "the chain started afresh (a new run of a chain that keeps no state)"

/**
 * Compares each fresh-starting network's run with the last recorded and
 * starts it afresh if new: the effect that does it, on the engine's services.
 */
export const makeStartFreshChains = Effect.gen(function* () {
  const chain = yield* Chain
  const store = yield* ChainJobStore
  const payments = yield* Payments
  const clock = yield* Effect.clock
  const now = () => new Date(clock.unsafeCurrentTimeMillis())
  return Effect.gen(function* () {
    const runs: Array<FreshChainRun> = []
    for (const network of chain.networks) {
      if (network.instance === undefined) continue
      // The run is recorded first: a stop halfway through is finished by the next start,
      // which, on a chain that starts fresh, is a new run again.
      const previous = yield* store.swapChainInstance(network.chainId, network.instance, now())
      if (Option.isSome(previous) && previous.value.instance === network.instance) continue
      let paymentsFailed = 0
      let settlementsEnded = 0
      for (const job of yield* store.activeJobsOn(network.chainId)) {
        if (job.kind !== "settle") {
          const failed = yield* payments
            .transition(job.paymentId, { _tag: "Fail", failureCode: "chain_reset" })
            .pipe(
              Effect.as(true),
              Effect.catchTags({
                InvalidState: () => Effect.succeed(false),
                PaymentNotFound: () => Effect.succeed(false)
              })
            )
          if (failed) paymentsFailed++
        } else {
          settlementsEnded++
        }
        yield* store.endJob(job.id, ENDED, now())
      }
      const run: FreshChainRun = {
        chainId: network.chainId,
        previous: Option.getOrNull(previous),
        paymentsFailed,
        settlementsEnded
      }
      if (run.previous !== null || paymentsFailed + settlementsEnded > 0) {
        yield* Effect.logWarning("chain started afresh", {
          chainId: network.chainId,
          previousRunSince: run.previous?.since.toISOString() ?? null,
          paymentsFailed,
          settlementsEnded
        })
      }
      runs.push(run)
    }
    return runs
  })
})
