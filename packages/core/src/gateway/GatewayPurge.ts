/**
 * The gateway's data kept no longer than it is needed: options purged a day
 * after they expire (confirm answers `quote_expired` until then, and never
 * for a payment still collecting, whose collection reads its option), and the
 * data buyers entered deleted once their payment has been final for the
 * retention (`gateway.buyerDataRetentionMs`, 90 days by default). Runs now and
 * then every `GATEWAY_PURGE_EVERY`, in batches, on every instance: a delete
 * another instance already did deletes nothing.
 */
import { Clock, Duration, Effect, Schedule } from "effect"
import { GatewayStore, OPTION_PURGE_GRACE_MS } from "../payments/PaymentOption.js"
import { GatewayConfig } from "./GatewayConfig.js"

export const GATEWAY_PURGE_EVERY = Duration.hours(1)

/** Rows deleted per statement: short transactions, so the purge never holds writers up long. */
export const GATEWAY_PURGE_BATCH = 1000

/** Runs `batch` until one deletes fewer than a full batch; the total deleted. */
const drain = (batch: Effect.Effect<number>) =>
  Effect.iterate(
    { total: 0, last: GATEWAY_PURGE_BATCH },
    {
      while: (s) => s.last >= GATEWAY_PURGE_BATCH,
      body: (s) => Effect.map(batch, (n) => ({ total: s.total + n, last: n }))
    }
  ).pipe(Effect.map((s) => s.total))

/** One pass: expired options and buyer data past its retention; the counts deleted. */
export const purgeGatewayDataOnce = Effect.gen(function* () {
  const store = yield* GatewayStore
  const config = yield* GatewayConfig
  const now = yield* Clock.currentTimeMillis
  const retention = config.buyerDataRetentionMs
  const options = yield* drain(
    store.purgeOptions(new Date(now - OPTION_PURGE_GRACE_MS), GATEWAY_PURGE_BATCH)
  )
  const collectedData = yield* drain(
    store.purgeCollectedData(new Date(now - retention), GATEWAY_PURGE_BATCH)
  )
  return { options, collectedData }
})

/** `purgeGatewayDataOnce` now and every `GATEWAY_PURGE_EVERY`, for as long as the scope lives. */
export const purgeGatewayDataForever = Effect.repeat(
  purgeGatewayDataOnce.pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("gateway data purge failed", cause))
  ),
  Schedule.spaced(GATEWAY_PURGE_EVERY)
)
