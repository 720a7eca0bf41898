/**
 * Group commit (DESIGN.md): concurrent requests' writes share one transaction
 * and one fsync. A write is queued; on the next turn of the event loop the
 * queue runs in one `BEGIN IMMEDIATE … COMMIT`, each write inside a savepoint
 * of its own, so a write that throws (a constraint, a lost claim) is rolled
 * back to its savepoint and fails alone while the others commit. Every write
 * of the batch is answered only once the commit is on disk: durability per
 * acknowledged write is that of `synchronous = FULL`, the fsync is paid once
 * per batch. Given a `walSync` (a file's WAL), the batch commits with
 * `synchronous = NORMAL` and its fsync runs off the event loop (WalSync.ts):
 * the engine's thread goes on to the next requests meanwhile, and the writes
 * are answered when it ends. Without one (an in-memory database) the commit
 * itself syncs. A lone write waits only for the current turn of the event
 * loop (`setImmediate`), and a batch is cut at `maxBatch` writes.
 *
 * A write's body runs synchronously inside the batch's transaction, seeing
 * the writes queued before it, exactly as if it were alone in a transaction
 * of its own; it may use `db.transaction` inside (a nested savepoint).
 */
import { Effect } from "effect"
import type { SqliteConnection } from "./SqliteDatabase.js"
import type { WalSync } from "./WalSync.js"

type Outcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: unknown }

interface Queued {
  readonly body: () => unknown
  readonly settle: (outcome: Outcome) => void
}

export interface GroupCommitStats {
  /** Transactions committed (or rolled back as a whole). */
  readonly batches: number
  /** Writes run in them. */
  readonly writes: number
  /** Writes waiting for the next batch. */
  readonly queued: number
}

export interface GroupCommit {
  /** Runs `body` in the next batch; succeeds with its value once that batch committed. */
  readonly write: <A>(body: () => A) => Effect.Effect<A>
  readonly stats: () => GroupCommitStats
}

export const DEFAULT_MAX_BATCH = 128

export const makeGroupCommit = (
  db: SqliteConnection,
  options: { readonly maxBatch?: number; readonly walSync?: WalSync | undefined } = {}
): GroupCommit => {
  const maxBatch = options.maxBatch ?? DEFAULT_MAX_BATCH
  const walSync = options.walSync
  let queue: Array<Queued> = []
  let scheduled = false
  let batches = 0
  let writes = 0

  const runBatch = (batch: ReadonlyArray<Queued>) => {
    const outcomes: Array<Outcome> = []
    let committed = false
    // The connection's other writes (outside the group commit) keep FULL: only here does an
    // fsync follow the commit before anyone is answered.
    if (walSync !== undefined) db.exec("PRAGMA synchronous = NORMAL")
    try {
      db.exec("BEGIN IMMEDIATE")
      for (const item of batch) {
        db.exec("SAVEPOINT pay_write")
        try {
          outcomes.push({ ok: true, value: item.body() })
          db.exec("RELEASE pay_write")
        } catch (error) {
          db.exec("ROLLBACK TO pay_write")
          db.exec("RELEASE pay_write")
          outcomes.push({ ok: false, error })
        }
      }
      db.exec("COMMIT")
      committed = true
    } catch (error) {
      // The transaction itself failed (BEGIN or COMMIT: a full disk, a busy database past its
      // timeout): nothing of the batch is kept, and every write of it fails.
      try {
        db.exec("ROLLBACK")
      } catch {
        // Already rolled back by SQLite.
      }
      outcomes.length = 0
      for (let i = 0; i < batch.length; i++) outcomes.push({ ok: false, error })
    }
    if (walSync !== undefined) db.exec("PRAGMA synchronous = FULL")
    batches++
    writes += batch.length
    const settleAll = () => {
      for (const [i, item] of batch.entries()) item.settle(outcomes[i]!)
    }
    if (walSync === undefined || !committed) return settleAll()
    walSync.afterCommit().then(settleAll, (error: unknown) => {
      // Committed, but not known to be on disk (an I/O error): no write of it is acknowledged.
      for (const item of batch) item.settle({ ok: false, error })
    })
  }

  const flush = () => {
    scheduled = false
    while (queue.length > 0) {
      const batch = queue.slice(0, maxBatch)
      queue = queue.slice(batch.length)
      runBatch(batch)
    }
  }

  const write = <A>(body: () => A): Effect.Effect<A> =>
    Effect.async<A>((resume) => {
      const item: Queued = {
        body,
        settle: (outcome) =>
          resume(outcome.ok ? Effect.succeed(outcome.value as A) : Effect.die(outcome.error))
      }
      queue.push(item)
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
      // Interrupted before its batch ran: it never runs. Once run, it stands (it may be
      // committed already), as a request whose client went away after sending.
      return Effect.sync(() => {
        const at = queue.indexOf(item)
        if (at >= 0) queue.splice(at, 1)
      })
    })

  return { write, stats: () => ({ batches, writes, queued: queue.length }) }
}
