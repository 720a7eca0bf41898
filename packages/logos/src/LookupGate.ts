/**
 * The gate every DNS lookup of this package goes through (logo fetches,
 * webhook URL registration, webhook sends: all by `resolveTarget`). Node's
 * `dns.lookup` is getaddrinfo on libuv's thread pool, four threads by
 * default, the pool WebCrypto, zlib and file reads run on too: a partner
 * whose URLs name a host whose DNS never answers could otherwise hold every
 * thread and stall the engine's signing and hashing. So:
 *
 * - at most `maxConcurrent` lookups run at once in the process (2, below the
 *   pool's 4); the others wait their turn, in order;
 * - each caller gets an answer within `timeoutMs` (5 s), waiting for its turn
 *   included: past it, a `LookupTimedOut` (a refusal, "could not resolve …: no
 *   DNS answer within 5 s");
 * - a lookup that timed out keeps its place until it really ends (its thread
 *   is still busy), or at most `holdMs` (30 s: the system resolver's own
 *   retries, 5 s × 2 attempts × up to 3 nameservers by resolv.conf's
 *   defaults, end by then), so hung DNS cannot make a third thread busy, and
 *   a resolver that never settles (a test's) cannot hold a place for ever.
 */
/** One DNS answer: an address and its family. */
export type ResolvedAddress = { readonly address: string; readonly family: 4 | 6 }

/** The time a caller waits for a DNS answer, its turn included. */
export const DNS_LOOKUP_TIMEOUT_MS = 5_000
/** DNS lookups running at once in the process: below libuv's default pool of 4 threads. */
export const DNS_MAX_CONCURRENT_LOOKUPS = 2
/** The longest a lookup that timed out keeps its place while it still runs. */
export const DNS_LOOKUP_HOLD_MS = 30_000

export type Resolve = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

/** A lookup past the time limit (its turn included); its message is a partner's to read. */
export class LookupTimedOut extends Error {
  constructor(
    readonly hostname: string,
    readonly timeoutMs: number
  ) {
    super(
      `no DNS answer within ${timeoutMs % 1000 === 0 ? `${timeoutMs / 1000} s` : `${timeoutMs} ms`}, the lookup time limit`
    )
    this.name = "LookupTimedOut"
  }
}

export interface LookupGate {
  /**
   * `resolve(hostname)` in its turn, within the time limit: its answers, its
   * failure, a `LookupTimedOut`, or `signal`'s reason once it aborts.
   */
  readonly lookup: (
    resolve: Resolve,
    hostname: string,
    signal?: AbortSignal
  ) => Promise<ReadonlyArray<ResolvedAddress>>
  /** Lookups holding a place now (running, or timed out and still running). */
  readonly running: () => number
  /** Callers waiting for a place. */
  readonly waiting: () => number
}

export interface LookupGateOptions {
  readonly maxConcurrent?: number
  readonly timeoutMs?: number
  readonly holdMs?: number
}

export const makeLookupGate = (options: LookupGateOptions = {}): LookupGate => {
  const max = Math.max(1, Math.floor(options.maxConcurrent ?? DNS_MAX_CONCURRENT_LOOKUPS))
  const timeoutMs = options.timeoutMs ?? DNS_LOOKUP_TIMEOUT_MS
  const holdMs = options.holdMs ?? DNS_LOOKUP_HOLD_MS
  let running = 0
  const queue: Array<() => void> = []

  const next = () => {
    const start = queue.shift()
    if (start === undefined) running--
    else start()
  }

  /** Runs `resolve` in a place held until it settles, or `holdMs` at most. */
  const run = (resolve: Resolve, hostname: string) => {
    let released = false
    const release = () => {
      if (released) return
      released = true
      clearTimeout(hold)
      next()
    }
    const hold = setTimeout(release, holdMs)
    hold.unref?.()
    let answer: Promise<ReadonlyArray<ResolvedAddress>>
    try {
      answer = resolve(hostname)
    } catch (error) {
      answer = Promise.reject(error)
    }
    answer.then(release, release)
    return answer
  }

  return {
    lookup: (resolve, hostname, signal) =>
      new Promise((ok, fail) => {
        if (signal?.aborted) return fail(signal.reason)
        let done = false
        let queued: (() => void) | undefined
        const finish = (settle: () => void) => {
          if (done) return
          done = true
          clearTimeout(timer)
          signal?.removeEventListener("abort", onAbort)
          if (queued !== undefined) {
            const at = queue.indexOf(queued)
            if (at >= 0) queue.splice(at, 1)
          }
          settle()
        }
        const timer = setTimeout(
          () => finish(() => fail(new LookupTimedOut(hostname, timeoutMs))),
          timeoutMs
        )
        timer.unref?.()
        const onAbort = () => finish(() => fail(signal?.reason))
        signal?.addEventListener("abort", onAbort, { once: true })
        const start = () => {
          queued = undefined
          run(resolve, hostname).then(
            (answers) => finish(() => ok(answers)),
            (error: unknown) => finish(() => fail(error))
          )
        }
        if (running < max) {
          running++
          start()
        } else {
          queued = start
          queue.push(start)
        }
      }),
    running: () => running,
    waiting: () => queue.length
  }
}

/** The process's gate: one for every fetcher, guard and sender, whatever engine made them. */
export const processLookupGate: LookupGate = makeLookupGate()
