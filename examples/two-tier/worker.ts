/**
 * The worker tier of a two-tier deployment: the engine's background work and
 * nothing else (`runPaymentWorkers`): the expiry sweep, the purge of expired
 * idempotency keys and the durable chain work (submitting a confirmed
 * payment's transfer, watching it, settling the merchant). One is enough; more
 * share the jobs without double work (leases, FOR UPDATE SKIP LOCKED). Its
 * status changes reach the web tier's long-polls over LISTEN/NOTIFY.
 *
 * Environment: PAY_DATABASE and PAY_CONFIG, as the web tier's. Prints
 * `worker ready` once running; SIGTERM or SIGINT stops it (a job cut short
 * is a lease another worker, or the next start, takes over).
 * Run: see README.md.
 */
import { runPaymentWorkers } from "@pay/core"
import { Either } from "effect"
import { engineOptions, exitWith, loadTier } from "./options.js"

const tier = Either.getOrElse(loadTier("worker"), (message) => exitWith("worker", message))
const workers = await runPaymentWorkers(engineOptions(tier)).catch((error: unknown) =>
  exitWith("worker", error)
)

let stopping = false
const stop = () => {
  if (stopping) return
  stopping = true
  // Should closing hang, do not outlive the signal by much.
  setTimeout(() => process.exit(1), 10_000).unref()
  workers.close().then(
    () => {
      console.log("worker: stopped")
      process.exit(0)
    },
    (error: unknown) => exitWith("worker", error)
  )
}
process.once("SIGTERM", stop)
process.once("SIGINT", stop)
// Said only once a signal would stop it cleanly: whoever reads this line may send one at once.
console.log(
  `worker ready: chain work and expiry sweep on ${tier.setup.networks.map((n) => n.chainId).join(", ")}`
)
