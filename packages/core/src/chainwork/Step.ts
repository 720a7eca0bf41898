/**
 * What a step of a chain job answers and what it works on: the contract
 * between the lease loop (ChainWork.ts) and the collect and settle steps
 * (CollectStep.ts, SettleStep.ts). A step says whether the job's work is over
 * or when to look again; between two looks it holds the job as read from the
 * claim, kept up to date as it writes.
 */
import type { ChainJob, ChainJobLease, ChainTransfer, ClaimedJob } from "../payments/ChainJob.js"

/** The wait after a failure the network or the node caused. */
export const RETRY_MS = 2_000

export type Step =
  /** The job's work is over: complete it. */
  | { readonly _tag: "Done" }
  /** The step completed the job itself (with the payment's settlement, in one write). */
  | { readonly _tag: "Completed" }
  | { readonly _tag: "Again"; readonly afterMs: number; readonly note: string | null }
  /**
   * The step ended the job in the write that queued the next one, held by
   * this process (a collect's success and its settle job): run that one now.
   */
  | { readonly _tag: "Handover"; readonly next: ClaimedJob }

export const done: Step = { _tag: "Done" }
export const completed: Step = { _tag: "Completed" }
export const handover = (next: ClaimedJob): Step => ({ _tag: "Handover", next })
export const again = (afterMs: number, note: string | null = null): Step => ({
  _tag: "Again",
  afterMs,
  note
})

/** What a job's steps know between two looks: read from the claim, kept up to date as they write. */
export interface Held {
  readonly lease: ChainJobLease
  job: ChainJob
  transfers: Array<ChainTransfer>
}
