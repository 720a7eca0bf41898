/**
 * The payment listings and statistics on a worker thread with its own connection to the
 * file. The drivers run each query synchronously on the calling thread, so a listing over
 * a whole account (hundreds of milliseconds at 200,000 payments) would stall every other
 * request of the process, a status poll among them, for as long (bench/status-under-load.ts).
 * On the worker the engine's thread only waits for the answer. WAL lets the worker read
 * while the engine's connection writes; it sees what is committed, and a write is
 * acknowledged only once committed, so a client reads its own writes. The worker is one
 * thread: heavy listings queue there, one after another, not on the engine's thread.
 *
 * The purge's deletes run on the same thread (SqlitePurge.ts), on a second connection of
 * the worker's that writes: a batch, its fsync and the WAL checkpoints it brings about
 * stall this thread, not the engine's.
 */
import { type MessagePort, parentPort, Worker, workerData } from "node:worker_threads"
import type { Payment, PaymentFilter, PaymentPageQuery, PaymentStats } from "@pay/core"
import { Context, Effect, Layer } from "effect"
import { type SqliteConnection, SqliteDatabase } from "./SqliteDatabase.js"
import { makeSqlitePaymentQueries } from "./SqlitePaymentQueries.js"
import {
  makeSqlitePurgeStatements,
  type PurgeKind,
  type PurgeResults,
  SqlitePurgeWorker
} from "./SqlitePurge.js"

/** The payment store's `list` and `stats`, when they run somewhere else than its connection. */
export class SqlitePaymentReads extends Context.Tag("@pay/storage-sqlite/SqlitePaymentReads")<
  SqlitePaymentReads,
  {
    readonly list: (query: PaymentPageQuery) => Effect.Effect<ReadonlyArray<Payment>>
    readonly stats: (filter: PaymentFilter) => Effect.Effect<PaymentStats>
  }
>() {}

/** Where the worker's program is: the driver's worker entry, built or run from source. */
export interface SqliteReadWorkerOptions {
  /** The module the worker runs: one that calls `serveReadWorker` with a connection. */
  readonly script: URL
  /** Node flags for the worker (tests: a loader for TypeScript sources). */
  readonly execArgv?: ReadonlyArray<string>
}

type Request =
  | { readonly id: number; readonly op: "list"; readonly arg: PaymentPageQuery }
  | { readonly id: number; readonly op: "stats"; readonly arg: PaymentFilter }
  | {
      readonly id: number
      readonly op: "purge"
      readonly arg: { readonly kind: PurgeKind; readonly before: number; readonly limit: number }
    }
/** A request as a caller makes it: the id is the worker's to give. */
type RequestBody = Request extends infer R ? (R extends unknown ? Omit<R, "id"> : never) : never
type Reply =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly message: string }

/**
 * WAL checkpoints on the worker's thread. SQLite checkpoints on the connection whose commit
 * finds the WAL past `wal_autocheckpoint` pages, and a checkpoint fsyncs the WAL and the
 * database: on the engine's connection that stalls its thread (up to 0.24 s in the soak,
 * bench/soak.ts). With the worker running, the engine's connection never checkpoints
 * (`readWorkerLayer`) and the worker does: a passive checkpoint (it waits for no reader nor
 * writer) every second, which copies what was committed since the last one and, with nothing
 * new, does nothing. The process never opens the `-shm` file to look first: closing a
 * descriptor drops every POSIX lock the process holds on that file, SQLite's own included
 * (https://sqlite.org/howtocorrupt.html, 2.2), and the engine's connection died of SIGBUS
 * when one did.
 */
export const WORKER_CHECKPOINT_EVERY_MS = 1000
const checkpointWhileServing = (connection: () => SqliteConnection) => {
  const timer = setInterval(() => {
    try {
      connection().exec("PRAGMA wal_checkpoint(PASSIVE)")
    } catch {
      // Busy (another process checkpoints): the next turn tries again.
    }
  }, WORKER_CHECKPOINT_EVERY_MS)
  timer.unref()
}

/**
 * The worker's side: opens the file read-only for this connection and answers each request;
 * the purge's, on a connection that writes, opened at the first.
 */
export const serveReadWorker = (open: (filename: string) => SqliteConnection) => {
  // Loaded off a worker (the build's check that every entry loads): nothing to serve.
  if (parentPort === null) return
  const port: MessagePort = parentPort
  const { filename } = workerData as { filename: string }
  const db = open(filename)
  // Reads only: a bug that wrote here would bypass the group commit and its ordering.
  db.exec("PRAGMA query_only = ON")
  const queries = makeSqlitePaymentQueries(db)
  // The connection that writes: the purge's deletes and the WAL's checkpoints.
  let writer: SqliteConnection | undefined
  const writerConnection = () => {
    writer ??= open(filename)
    return writer
  }
  let purgeStatements: ReturnType<typeof makeSqlitePurgeStatements> | undefined
  const purges = () => {
    purgeStatements ??= makeSqlitePurgeStatements(writerConnection())
    return purgeStatements
  }
  checkpointWhileServing(writerConnection)
  port.on("message", (request: Request) => {
    let reply: Reply
    try {
      const value =
        request.op === "list"
          ? queries.listNow(request.arg)
          : request.op === "stats"
            ? queries.statsNow(request.arg)
            : purges().run(request.arg.kind, request.arg.before, request.arg.limit)
      reply = { id: request.id, ok: true, value }
    } catch (error) {
      reply = { id: request.id, ok: false, message: String(error) }
    }
    port.postMessage(reply)
  })
}

/** The engine's side: a worker on `filename`, its calls, and its end. */
const startReadWorker = (
  filename: string,
  options: SqliteReadWorkerOptions,
  onStopped: () => void
) => {
  const worker = new Worker(options.script, {
    workerData: { filename },
    execArgv: [...(options.execArgv ?? [])]
  })
  // The engine's scope ends it; it must not keep a process alive meanwhile.
  worker.unref()
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  let next = 0
  let broken: Error | undefined
  const failAll = (error: Error) => {
    if (broken === undefined) onStopped()
    broken ??= error
    for (const call of pending.values()) call.reject(broken)
    pending.clear()
  }
  worker.on("message", (reply: Reply) => {
    const call = pending.get(reply.id)
    if (call === undefined) return
    pending.delete(reply.id)
    if (reply.ok) call.resolve(reply.value)
    else call.reject(new Error(`SQLite read worker: ${reply.message}`))
  })
  worker.on("error", (error) => failAll(new Error(`SQLite read worker failed: ${error.message}`)))
  worker.on("exit", (code) => failAll(new Error(`SQLite read worker exited (code ${code})`)))
  const call = <A>(request: RequestBody) =>
    new Promise<A>((resolve, reject) => {
      if (broken !== undefined) return reject(broken)
      const id = next++
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject })
      worker.postMessage({ ...request, id })
    })
  return { call, stop: () => worker.terminate() }
}

/** A call's answer; its failure a defect, carrying the worker's own error. */
const called = <A>(call: () => Promise<A>) =>
  Effect.orDie(Effect.tryPromise({ try: call, catch: (error) => error }))

/**
 * `list` and `stats`, and the purge's deletes, on a worker for `filename`, until the layer's
 * scope ends. A worker that fails is a defect of the reads (and of the purge), as a failing
 * query on the engine's connection is.
 */
export const readWorkerLayer = (filename: string, options: SqliteReadWorkerOptions) =>
  Layer.scopedContext(
    Effect.map(
      Effect.acquireRelease(
        Effect.gen(function* () {
          const engineConnection = yield* SqliteDatabase
          // The worker checkpoints (checkpointWhileServing); should it stop, SQLite does again.
          const checkpointHere = (pages: number) => () => {
            try {
              engineConnection.exec(`PRAGMA wal_autocheckpoint = ${pages}`)
            } catch {
              // Closed already: nothing left to checkpoint.
            }
          }
          const worker = startReadWorker(filename, options, checkpointHere(1000))
          checkpointHere(0)()
          return worker
        }),
        (worker) => Effect.promise(() => worker.stop())
      ),
      (worker) =>
        Context.make(SqlitePaymentReads, {
          list: (query: PaymentPageQuery) =>
            called(() => worker.call<ReadonlyArray<Payment>>({ op: "list", arg: query })),
          stats: (filter: PaymentFilter) =>
            called(() => worker.call<PaymentStats>({ op: "stats", arg: filter }))
        }).pipe(
          Context.add(SqlitePurgeWorker, {
            run: <K extends PurgeKind>(kind: K, before: number, limit: number) =>
              called(() =>
                worker.call<PurgeResults[K]>({ op: "purge", arg: { kind, before, limit } })
              )
          })
        )
    )
  )
