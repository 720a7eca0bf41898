/**
 * Reads worth sharing for a few seconds (a buyer's balance, a price feed's
 * round): each key read at most once per TTL however many ask at once, a
 * failed read kept as long (a network that is down is not asked by every
 * request). The reads run in fibers of the scope that made the cache, so a
 * caller given up on does not cut a read others wait for, and none outlives
 * the engine. The TTL counts from the read's end; a read interrupted (the
 * scope closing) is forgotten, not kept. Bounded: when full it starts over,
 * and reads in flight still answer those already waiting.
 */
import { Cause, Deferred, Effect, Exit, FiberId, FiberSet, type Scope } from "effect"

export type SharedRead = <A, E>(key: string, read: Effect.Effect<A, E>) => Effect.Effect<A, E>

export const makeSharedReads = (
  ttlMs: number,
  maxEntries = 10_000
): Effect.Effect<SharedRead, never, Scope.Scope> =>
  Effect.gen(function* () {
    const clock = yield* Effect.clock
    const fibers = yield* FiberSet.make()
    const kept = new Map<
      string,
      { readonly answer: Deferred.Deferred<unknown, unknown>; until: number }
    >()

    return <A, E>(key: string, read: Effect.Effect<A, E>) =>
      Effect.suspend((): Effect.Effect<A, E> => {
        const found = kept.get(key)
        if (found !== undefined && clock.unsafeCurrentTimeMillis() < found.until) {
          return Deferred.await(found.answer as Deferred.Deferred<A, E>)
        }
        if (kept.size >= maxEntries) kept.clear()
        // Set before anything yields, so the callers that follow wait for this read.
        const answer = Deferred.unsafeMake<A, E>(FiberId.none)
        const entry = { answer: answer as Deferred.Deferred<unknown, unknown>, until: Infinity }
        kept.set(key, entry)
        const shared = read.pipe(
          Effect.onExit((exit) =>
            Effect.sync(() => {
              if (Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)) {
                if (kept.get(key) === entry) kept.delete(key)
              } else entry.until = clock.unsafeCurrentTimeMillis() + ttlMs
            })
          ),
          Effect.intoDeferred(answer)
        )
        return Effect.zipRight(FiberSet.run(fibers, shared), Deferred.await(answer))
      })
  })
