/**
 * The settings of the durable chain work, in a module of their own so that the
 * engine's configuration (Config.ts) does not import the runner.
 */

export interface ChainWorkSettings {
  /** How often an idle instance looks for due jobs (a confirm here wakes it at once). */
  readonly pollMs?: number
  /** How long a claim holds a job before another instance may take it over. */
  readonly leaseMs?: number
  /** The most jobs one instance runs at once. */
  readonly concurrency?: number
  /**
   * The longest wait between two tries of a step that keeps failing (the node
   * refuses a transaction, the RPC does not answer): the back-off doubles up to it.
   */
  readonly backoffCapMs?: number
  /** A job whose steps have failed this long without a break is marked stuck. */
  readonly stuckAfterMs?: number
  /** ...or this many times in a row, whichever comes first. */
  readonly stuckAfterFailures?: number
}

export const DEFAULT_CHAIN_WORK = {
  pollMs: 500,
  leaseMs: 15_000,
  concurrency: 32,
  backoffCapMs: 60_000,
  stuckAfterMs: 600_000,
  stuckAfterFailures: 30
} as const
