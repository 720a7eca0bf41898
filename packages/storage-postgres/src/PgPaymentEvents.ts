/**
 * The core's `PaymentEvents` carried between engine instances over PostgreSQL
 * `LISTEN/NOTIFY`, so a long-poll held on one instance wakes when its payment
 * changes through another. Waiting stays in process (the core's waiters and
 * their one timer); only the changes travel.
 *
 * Who wakes whom:
 * - `publish` wakes this instance's waiters at once, then notifies the others.
 *   Waking at once keeps local long-polls as quick as in process and
 *   independent of the listener's health; the echo of our own notification is
 *   recognised by its origin and dropped, so it cannot wake a long-poll
 *   started after the change a second time.
 * - A listener, on a connection of its own, wakes the waiters of every payment
 *   another instance reports.
 * - Whenever the listener starts listening (first, and after every
 *   reconnection), every waiter is woken once: notifications sent while no one
 *   listened are lost, and a woken long-poll re-reads its payment.
 *
 * A dropped listening connection says nothing: `PgClient.listen` swallows its
 * errors and its stream stays open. So the listener notifies itself every
 * heartbeat and starts over on a new connection, after a bounded backoff, when
 * its own notification does not come back in time.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { PgClient } from "@effect/sql-pg"
import { makePaymentWaiters, PaymentEvents, type PaymentId } from "@pay/core"
import { Cause, Data, Deferred, Duration, Effect, Exit, Fiber, Layer, Option, Stream } from "effect"

export interface PgPaymentEventsOptions {
  /**
   * The channel; instances on one database that share it share events.
   * At most 63 bytes, PostgreSQL's limit for a name.
   */
  readonly channel?: string | undefined
  /** The listening connection's name in `pg_stat_activity`; default: the client's, plus `/events`. */
  readonly applicationName?: string | undefined
  /**
   * How often the listener checks its connection by notifying itself; a
   * silently dropped connection is noticed within about two of these.
   */
  readonly heartbeat?: Duration.DurationInput | undefined
  /** The longest pause between attempts to listen again. */
  readonly maxBackoff?: Duration.DurationInput | undefined
}

export const DEFAULT_CHANNEL = "pay_payment_events"
const DEFAULT_HEARTBEAT = Duration.seconds(5)
const DEFAULT_MAX_BACKOFF = Duration.seconds(5)
const FIRST_BACKOFF_MS = 100
/** A new connection may need longer than a heartbeat to connect and listen on a busy server. */
const MIN_START_MS = 2_000
/** LISTEN runs out of sight inside the stream, so a new listener is pinged until it hears one. */
const START_PING_MS = 100
/** Closing a listener whose socket hangs must not hold up a reconnection or a shutdown. */
const STOP_WAIT_MS = 1_000

class ListenerSilent extends Data.TaggedError("ListenerSilent")<{ readonly afterMs: number }> {
  override get message() {
    return `the listener heard nothing of its own within ${this.afterMs} ms`
  }
}

type Message =
  | { readonly _tag: "Change"; readonly paymentId: PaymentId; readonly origin: string }
  | { readonly _tag: "Ping"; readonly origin: string; readonly n: number }

/** A change is `<payment id> <status> <origin>`, a listener's check of itself `! <origin> <n>`. */
const decode = (payload: string): Message | undefined => {
  const [head, second, third] = payload.split(" ")
  if (head === "!") {
    const n = Number(third)
    return second !== undefined && Number.isSafeInteger(n)
      ? { _tag: "Ping", origin: second, n }
      : undefined
  }
  return head !== undefined && head !== ""
    ? { _tag: "Change", paymentId: head as PaymentId, origin: third ?? "" }
    : undefined
}

export const make = (options: PgPaymentEventsOptions = {}) =>
  Effect.gen(function* () {
    const pg = yield* PgClient.PgClient
    const channel = options.channel ?? DEFAULT_CHANNEL
    if (Buffer.byteLength(channel) > 63) {
      // LISTEN would truncate the name while pg_notify refuses it: they would never meet.
      return yield* Effect.dieMessage(`PgPaymentEvents: channel name over 63 bytes: ${channel}`)
    }
    const applicationName =
      options.applicationName ?? `${pg.config.applicationName ?? "pay-engine"}/events`
    const heartbeatMs = Duration.toMillis(options.heartbeat ?? DEFAULT_HEARTBEAT)
    const maxBackoffMs = Duration.toMillis(options.maxBackoff ?? DEFAULT_MAX_BACKOFF)
    const origin = Math.random().toString(36).slice(2, 10)
    const local = yield* makePaymentWaiters

    // The parameterised `NOTIFY ch, $1` of PgClient.notify is a syntax error; pg_notify is not.
    const notify = (payload: string) => pg`SELECT pg_notify(${channel}, ${payload})`

    let pingsSent = 0
    /** Notifies this instance's listener; returns the ping's number, for the check. */
    const ping = Effect.suspend(() => {
      const n = ++pingsSent
      // A ping that fails is a ping not heard back: the check that follows decides.
      return notify(`! ${origin} ${n}`).pipe(Effect.ignore, Effect.as(n))
    })

    const firstListening = yield* Deferred.make<void>()
    let failures = 0

    /** One connection's life: listen until it falls silent or fails; never succeeds. */
    const session = Effect.gen(function* () {
      const listener = yield* PgClient.make({
        ...pg.config,
        applicationName,
        // Its pool only runs the connection check; the listening connection is its own.
        maxConnections: 1,
        minConnections: undefined,
        idleTimeout: Duration.seconds(1)
      }).pipe(Effect.provide(Reactivity.layer))
      let heard = 0
      const receive = (payload: string) => {
        const message = decode(payload)
        switch (message?._tag) {
          case "Change":
            return message.origin === origin ? Effect.void : local.wake(message.paymentId)
          case "Ping":
            if (message.origin === origin) heard = Math.max(heard, message.n)
            return Effect.void
          default:
            return Effect.void
        }
      }
      const consumer = yield* Effect.forkScoped(
        Stream.runForEach(listener.listen(channel), receive)
      )
      const startMs = Math.max(heartbeatMs, MIN_START_MS)
      const watch = Effect.gen(function* () {
        const started = yield* Effect.gen(function* () {
          while (heard === 0) {
            yield* ping
            yield* Effect.sleep(Math.min(START_PING_MS, heartbeatMs))
          }
        }).pipe(Effect.timeoutOption(startMs))
        if (Option.isNone(started)) return yield* new ListenerSilent({ afterMs: startMs })
        failures = 0
        yield* local.wakeAll
        yield* Deferred.succeed(firstListening, undefined)
        for (;;) {
          const n = yield* ping
          yield* Effect.sleep(heartbeatMs)
          if (heard < n) return yield* new ListenerSilent({ afterMs: heartbeatMs })
        }
      })
      return yield* Effect.raceFirst(watch, Fiber.join(consumer))
    })

    /** Listens again and again, each time on a new connection, for as long as the layer lives. */
    const supervise = Effect.gen(function* () {
      for (;;) {
        const ended = yield* Deferred.make<Cause.Cause<unknown>>()
        // A daemon, and not awaited: closing a half-open socket can hang until TCP gives up.
        const fiber = yield* Effect.forkDaemon(
          Effect.scoped(
            session.pipe(
              Effect.onExit((exit) =>
                Deferred.succeed(ended, Exit.isFailure(exit) ? exit.cause : Cause.empty)
              )
            )
          )
        )
        const cause = yield* Deferred.await(ended).pipe(
          Effect.onInterrupt(() =>
            Effect.interruptible(Fiber.interrupt(fiber)).pipe(Effect.timeoutOption(STOP_WAIT_MS))
          )
        )
        const backoffMs = Math.min(maxBackoffMs, FIRST_BACKOFF_MS * 2 ** failures++)
        yield* Effect.logWarning(
          `payment events: stopped listening on ${channel}; listening again in ${backoffMs} ms`,
          cause
        )
        yield* Effect.sleep(backoffMs)
      }
    })
    yield* Effect.forkScoped(supervise)
    // Changes from other instances reach this one from its first request on, when the server lets them.
    yield* Deferred.await(firstListening).pipe(
      Effect.timeoutOption(Math.max(heartbeatMs, MIN_START_MS))
    )

    return PaymentEvents.of({
      publish: (event) =>
        Effect.zipRight(
          local.wake(event.paymentId),
          notify(`${event.paymentId} ${event.status} ${origin}`).pipe(
            Effect.asVoid,
            // The change is stored already; other instances' long-polls then end at their timeouts.
            Effect.catchAll((error) =>
              Effect.logWarning(`payment events: could not notify ${event.paymentId}`, error)
            )
          )
        ),
      position: local.events.position,
      awaitChange: local.events.awaitChange,
      held: local.events.held,
      positionNow: local.events.positionNow,
      waitChange: local.events.waitChange
    })
  })

/** `PaymentEvents` between every instance on the database that listens on the same channel. */
export const layer = (
  options: PgPaymentEventsOptions = {}
): Layer.Layer<PaymentEvents, never, PgClient.PgClient> =>
  Layer.scoped(PaymentEvents, make(options))
