/**
 * Tells this process's webhook delivery that events were just committed, so
 * a delivery goes out at once instead of at the next poll. The stores know
 * nothing of it: the engine's assembly (SignallingStores.ts) wraps the storage
 * ports whose writes take an outbox and signals after a write that made events
 * has returned (so after its commit, on every store). Writes made by other
 * processes (another instance, the CLI) are found by the delivery's poll.
 */
import { Context, Effect, Layer, Queue } from "effect"

export class OutboxSignal extends Context.Tag("@pay/core/OutboxSignal")<
  OutboxSignal,
  {
    /** Events were committed (or a delivery queued): wake whoever waits. */
    readonly written: Effect.Effect<void>
    /** Waits for the next signal; signals while nobody waits collapse into one. */
    readonly next: Effect.Effect<void>
  }
>() {}

export const outboxSignalLayer = Layer.effect(
  OutboxSignal,
  Effect.map(Queue.sliding<void>(1), (queue) =>
    OutboxSignal.of({
      written: Effect.asVoid(Queue.offer(queue, undefined)),
      next: Queue.take(queue)
    })
  )
)
