/**
 * The test engine's time: an Effect `Clock` that moves only when the test
 * says, and a way to know that the engine has done everything it can do at
 * the current instant before time moves on.
 *
 * Every effect of the engine runs `within` it (its start, its requests, its
 * background loops, its administrative calls): their `Effect.sleep`, schedules,
 * leases and timestamps read this clock. A sleeping fiber sets a timer here;
 * `advance` moves the clock from timer to timer, in order, and lets the engine
 * settle after each, so a webhook retried every minute is tried at each minute
 * of an hour advanced, as it would be in real time.
 *
 * Durable work the stores hold (a webhook retry, a chain job backing off)
 * falls due at a time written in a row, not at a timer: the clock stops at
 * those times too and wakes the engine's loops there, as their polling would.
 *
 * "Settled" is seen from the engine's fibers (a supervisor counts the ones
 * running and every start, resume, suspend and end), from Effect's scheduler
 * (tasks queued to run), from the work the test engine hands to Promises (a
 * webhook handler's answer) and from the stores (a delivery claimed and not
 * yet recorded is on its way, through WebCrypto say): all quiet over several
 * turns of the event loop.
 */
import { Clock, Duration, Effect, type Fiber, Scheduler, Supervisor } from "effect"

interface Timer {
  readonly at: number
  readonly order: number
  readonly wake: () => void
}

/** Counts the engine's fibers at work, and every change of theirs. */
class ActivitySupervisor extends Supervisor.AbstractSupervisor<void> {
  running = 0
  changes = 0
  get value() {
    return Effect.void
  }
  override onStart(): void {
    this.changes++
  }
  override onResume<A, E>(_fiber: Fiber.RuntimeFiber<A, E>): void {
    this.running++
    this.changes++
  }
  override onSuspend<A, E>(_fiber: Fiber.RuntimeFiber<A, E>): void {
    this.running--
    this.changes++
  }
  override onEnd(): void {
    this.changes++
  }
}

/** Effect's scheduler, with the tasks it holds counted. */
class CountingScheduler implements Scheduler.Scheduler {
  queued = 0
  constructor(private readonly inner: Scheduler.Scheduler) {}
  shouldYield(fiber: Fiber.RuntimeFiber<unknown, unknown>): number | false {
    return this.inner.shouldYield(fiber)
  }
  scheduleTask(task: Scheduler.Task, priority: number): void {
    this.queued++
    this.inner.scheduleTask(() => {
      this.queued--
      task()
    }, priority)
  }
}

const nextTurn: () => Promise<void> =
  typeof setImmediate === "function"
    ? () => new Promise((resolve) => setImmediate(resolve))
    : () => new Promise((resolve) => setTimeout(resolve, 0))
const timerTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 1))

/** Turns of the event loop that must pass quiet before the engine counts as settled. */
const QUIET_TURNS = 4
/** An engine that never settles (a loop that does not wait, a handler that never answers): said, not hung on. */
const SETTLE_LIMIT_MS = 30_000

/** What the clock needs to know of the engine's durable work. */
export interface DurableWork {
  /** Work claimed and not finished: the engine is on its way, outside Effect perhaps. */
  readonly underWay: () => boolean
  /** When stored work next falls due after `at`, if it will. */
  readonly nextDueAt: (at: number) => number | undefined
  /** Tells the engine's loops to look for due work now. */
  readonly wake: () => Promise<void>
}

const noWork: DurableWork = {
  underWay: () => false,
  nextDueAt: () => undefined,
  wake: () => Promise.resolve()
}

export class ControlledClock implements Clock.Clock {
  readonly [Clock.ClockTypeId]: Clock.ClockTypeId = Clock.ClockTypeId
  private nowMs: number
  private order = 0
  private readonly timers: Array<Timer> = []
  private readonly supervisor = new ActivitySupervisor()
  private readonly scheduler = new CountingScheduler(Scheduler.defaultScheduler)
  /** Promises the test engine hands work to (a webhook handler's answer), not yet settled. */
  private outside = 0
  private work: DurableWork = noWork

  constructor(startAt: number) {
    this.nowMs = startAt
  }

  // ---------------------------------------------------------------------------
  // Effect's Clock

  unsafeCurrentTimeMillis(): number {
    return this.nowMs
  }
  readonly currentTimeMillis = Effect.sync(() => this.nowMs)
  unsafeCurrentTimeNanos(): bigint {
    return BigInt(this.nowMs) * 1_000_000n
  }
  readonly currentTimeNanos = Effect.sync(() => this.unsafeCurrentTimeNanos())
  sleep(duration: Duration.Duration): Effect.Effect<void> {
    return Effect.async<void>((resume) => {
      const ms = Duration.toMillis(duration)
      if (ms <= 0) {
        resume(Effect.void)
        return
      }
      const timer: Timer = {
        at: this.nowMs + ms,
        order: this.order++,
        wake: () => resume(Effect.void)
      }
      this.timers.push(timer)
      return Effect.sync(() => {
        const at = this.timers.indexOf(timer)
        if (at >= 0) this.timers.splice(at, 1)
      })
    })
  }

  // ---------------------------------------------------------------------------
  // The test's handles

  /** The clock's time, in milliseconds since the epoch. */
  now(): number {
    return this.nowMs
  }

  /** Runs an effect of the engine on this clock, seen by the supervisor, on the counting scheduler. */
  readonly within = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    effect.pipe(
      Effect.supervised(this.supervisor),
      Effect.withScheduler(this.scheduler),
      Effect.withClock(this)
    )

  /** The engine's durable work, once the engine is made. */
  watch(work: DurableWork): void {
    this.work = work
  }

  /** A Promise the engine waits on outside Effect, counted until it settles. */
  async outsideWork<A>(work: () => Promise<A>): Promise<A> {
    this.outside++
    try {
      return await work()
    } finally {
      this.outside--
    }
  }

  /** Resolves once the engine has nothing left to do at the current instant. */
  async settled(): Promise<void> {
    const giveUpAt = Date.now() + SETTLE_LIMIT_MS
    let seen = -1
    let quiet = 0
    while (Date.now() < giveUpAt) {
      await nextTurn()
      const still =
        this.supervisor.running === 0 &&
        this.scheduler.queued === 0 &&
        this.outside === 0 &&
        this.supervisor.changes === seen
      seen = this.supervisor.changes
      quiet = still ? quiet + 1 : 0
      if (quiet < QUIET_TURNS) continue
      // Quiet, with work claimed: it waits on the platform (WebCrypto, say); give it real time.
      if (this.work.underWay()) {
        await timerTurn()
        quiet = 0
        continue
      }
      return
    }
    throw new Error(
      `the test engine did not settle within ${SETTLE_LIMIT_MS / 1000} s of real time: a webhook handler that never answers, or work that never waits`
    )
  }

  /** The next instant by `until` at which a timer fires or stored work falls due. */
  private nextStop(until: number): number | undefined {
    let next: number | undefined
    for (const timer of this.timers) {
      if (timer.at <= until && (next === undefined || timer.at < next)) next = timer.at
    }
    const due = this.work.nextDueAt(this.nowMs)
    if (due !== undefined && due <= until && (next === undefined || due < next)) next = due
    return next
  }

  /** Moves to the next stop by `until`, wakes what is due there; false when there is none. */
  private async step(until: number): Promise<boolean> {
    const next = this.nextStop(until)
    if (next === undefined) return false
    if (next > this.nowMs) this.nowMs = next
    const due = this.timers
      .filter((t) => t.at <= this.nowMs)
      .sort((a, b) => a.at - b.at || a.order - b.order)
    for (const timer of due) this.timers.splice(this.timers.indexOf(timer), 1)
    for (const timer of due) timer.wake()
    await this.work.wake()
    await this.settled()
    return true
  }

  /**
   * Moves time on by `ms`: every timer due on the way fires at its own time,
   * in order, the engine settling after each; then the clock rests at the end.
   */
  async advance(ms: number): Promise<void> {
    if (!Number.isSafeInteger(ms) || ms < 0) {
      throw new RangeError(`advance takes whole milliseconds, 0 or more; got ${ms}`)
    }
    const until = this.nowMs + ms
    await this.settled()
    while (await this.step(until)) {}
    this.nowMs = until
    await this.settled()
  }

  /**
   * Moves time on, timer by timer, until `done` holds; throws when it still
   * does not after `withinMs` of test time (the time gone by is kept).
   */
  async until(done: () => Promise<boolean>, withinMs: number, what: string): Promise<void> {
    const deadline = this.nowMs + withinMs
    await this.settled()
    while (!(await done())) {
      if (!(await this.step(deadline))) {
        throw new Error(`${what}: not within ${withinMs} ms of test time`)
      }
    }
  }
}
