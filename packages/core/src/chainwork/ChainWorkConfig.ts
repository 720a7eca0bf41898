/**
 * The settings of the durable chain work (the engine's `chainWork` option):
 * decoding applies every default. In a module of their own so that the
 * engine's options (EngineOptions.ts) do not import the runner.
 */
import { Context, Schema } from "effect"
import { wholeNumber } from "../shared/WholeNumber.js"

export const ChainWorkSettings = Schema.Struct({
  /** How often an idle instance looks for due jobs (a confirm here wakes it at once). */
  pollMs: Schema.optionalWith(wholeNumber(10, 60_000, "milliseconds"), { default: () => 500 }),
  /** How long a claim holds a job before another instance may take it over. */
  leaseMs: Schema.optionalWith(wholeNumber(100, 600_000, "milliseconds"), {
    default: () => 15_000
  }),
  /** The most jobs one instance runs at once. */
  concurrency: Schema.optionalWith(wholeNumber(1, 1000, "jobs"), { default: () => 32 }),
  /**
   * The longest wait between two tries of a step that keeps failing (the node
   * refuses a transaction, the RPC does not answer): the back-off doubles up to it.
   */
  backoffCapMs: Schema.optionalWith(wholeNumber(100, 3_600_000, "milliseconds"), {
    default: () => 60_000
  }),
  /** A job whose steps have failed this long without a break is marked stuck. */
  stuckAfterMs: Schema.optionalWith(wholeNumber(1_000, 7 * 86_400_000, "milliseconds"), {
    default: () => 600_000
  }),
  /** ...or this many times in a row, whichever comes first. */
  stuckAfterFailures: Schema.optionalWith(wholeNumber(1, 1_000_000, "failures"), {
    default: () => 30
  })
})
export type ChainWorkSettings = typeof ChainWorkSettings.Type

export class ChainWorkConfig extends Context.Tag("@pay/core/ChainWorkConfig")<
  ChainWorkConfig,
  ChainWorkSettings
>() {}
