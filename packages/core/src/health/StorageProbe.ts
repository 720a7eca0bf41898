/**
 * What the operations routes ask the database, beside the domain's ports:
 * whether it answers and is migrated (`/ready`), and how long the chain work's
 * queue is (`/metrics`). Every query here is small and index-backed: they run
 * on every probe and every scrape, on tables of any size.
 */
import { Context, type Effect, Schema } from "effect"

/** The database did not answer (down, unreachable, locked past its timeout). */
export class StorageUnavailable extends Schema.TaggedError<StorageUnavailable>()(
  "StorageUnavailable",
  { message: Schema.String }
) {}

export interface MigrationState {
  /** How many migrations the database records as applied. */
  readonly applied: number
  /** The id of the latest one applied, or null on an empty database. */
  readonly latestApplied: number | null
  /** The id of the latest migration this code knows: applied too when the schema is current. */
  readonly latestKnown: number
  /** How many migrations this code knows. */
  readonly known: number
}

export interface ChainJobQueue {
  /** Active jobs (waiting, being worked on, or retrying later). */
  readonly active: number
  /** Active jobs whose time to run has come (`run_at` passed): worked on or waiting for a worker. */
  readonly due: number
  /**
   * When the longest-due work became due: a due job's `run_at`, or, for a job
   * whose steps keep failing (backing off, so mostly not due), when the first
   * of them failed. Null when no job is due or failing.
   */
  readonly oldestDueAt: Date | null
  /** Active jobs marked stuck (failing past the bound, ChainWork.ts). */
  readonly stuck: number
}

/** A stuck job, as `/ready` names it. */
export interface StuckJob {
  readonly id: string
  readonly kind: string
  readonly paymentId: string
  readonly chainId: string
  /** When it was marked stuck. */
  readonly stuckSince: Date
  /** When its steps began failing. */
  readonly failingSince: Date | null
  readonly failures: number
  readonly lastError: string | null
}

export class StorageProbe extends Context.Tag("@pay/core/StorageProbe")<
  StorageProbe,
  {
    /** One round trip: the migrations table read, so an answer also says the schema's state. */
    readonly migrations: Effect.Effect<MigrationState, StorageUnavailable>
    /** The chain job queue at `now`, from the partial index of active jobs. */
    readonly chainJobQueue: (now: Date) => Effect.Effect<ChainJobQueue, StorageUnavailable>
    /** The longest-stuck active jobs, at most `limit`, from the partial index of stuck jobs. */
    readonly stuckJobs: (
      limit: number
    ) => Effect.Effect<ReadonlyArray<StuckJob>, StorageUnavailable>
  }
>() {}
