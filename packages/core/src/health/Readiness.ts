/**
 * `/health` says the process answers; `/ready` says it can do its work: the
 * database answers, its schema is the one this code was written for, and
 * each network's RPC answers. Each part is named with its state, so an
 * operator reads which one is down; the checks run in parallel, each within
 * a time limit, so a hung RPC cannot hang the probe.
 */
import { Duration, Effect, Either, Fiber, Runtime } from "effect"
import { Chain } from "../chain/Chain.js"
import { json } from "../http/Exchange.js"
import { publicRoute } from "../http/Route.js"
import { StorageProbe } from "./StorageProbe.js"

export interface ReadinessCheck {
  /** `database`, `migrations`, or `network <CAIP-2 id>`. */
  readonly name: string
  readonly status: "ok" | "failing"
  /** How long the check took, in whole milliseconds. */
  readonly ms: number
  /** What was found: the migrations applied, a network's head, or why the part fails. */
  readonly detail?: string
}

/** A stuck chain job as `/ready` names it. */
export interface ReadinessStuckJob {
  readonly id: string
  readonly kind: string
  readonly paymentId: string
  readonly chainId: string
  /** ISO 8601. */
  readonly stuckSince: string
  readonly failingSince: string | null
  readonly failures: number
  readonly lastError: string | null
}

export interface Readiness {
  /**
   * `degraded`: every part answers, but chain work is stuck (still 200: the
   * instance serves, and taking it out of the load balancer would not help).
   */
  readonly status: "ready" | "degraded" | "not_ready"
  readonly checks: ReadonlyArray<ReadinessCheck>
  /** With `degraded`: the longest-stuck chain jobs, at most `STUCK_JOBS_SHOWN`. */
  readonly stuckJobs?: ReadonlyArray<ReadinessStuckJob>
}

/** Stuck jobs named in a degraded answer; `pay_chain_jobs_stuck` counts them all. */
export const STUCK_JOBS_SHOWN = 10

/** Each check's limit: a load balancer's probe usually gives up after 5 s. */
export const READINESS_CHECK_TIMEOUT = Duration.seconds(2)

/**
 * Only a URL's origin, never its path, query or user: an RPC URL often carries
 * its API key in the path (`…/v2/<key>`), and a database URL its password.
 */
export const withoutSecrets = (text: string) =>
  text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, (found) => {
    try {
      const url = new URL(found)
      return url.host === "" ? `${url.protocol}//…` : `${url.protocol}//${url.host}/…`
    } catch {
      return "…"
    }
  })

const firstLine = (text: string) => withoutSecrets(text.split("\n")[0]!.trim()).slice(0, 300)

/** The effect's outcome within the limit, and how long it took. */
const timed = <A, E extends { readonly message: string }>(
  effect: Effect.Effect<A, E>,
  timeout: Duration.DurationInput
) =>
  effect.pipe(
    Effect.mapError((e) => firstLine(e.message)),
    Effect.timeoutFail({
      duration: timeout,
      onTimeout: () => `did not answer within ${Duration.format(Duration.decode(timeout))}`
    }),
    Effect.either,
    Effect.timed,
    Effect.map(([took, outcome]) => ({ ms: Math.round(Duration.toMillis(took)), outcome }))
  )

/** Every part checked, at once. */
export const checkReadiness = (timeout: Duration.DurationInput = READINESS_CHECK_TIMEOUT) =>
  Effect.gen(function* () {
    const probe = yield* StorageProbe
    const chain = yield* Chain
    const [storage, stuck, networks] = yield* Effect.all(
      [
        timed(probe.migrations, timeout),
        timed(probe.stuckJobs(STUCK_JOBS_SHOWN), timeout),
        Effect.forEach(
          chain.networks,
          (network) =>
            Effect.map(timed(chain.head(network.chainId), timeout), (result) => ({
              network,
              ...result
            })),
          { concurrency: "unbounded" }
        )
      ],
      { concurrency: "unbounded" }
    )
    const checks: Array<ReadinessCheck> = []
    if (Either.isLeft(storage.outcome)) {
      checks.push({
        name: "database",
        status: "failing",
        ms: storage.ms,
        detail: storage.outcome.left
      })
      checks.push({
        name: "migrations",
        status: "failing",
        ms: 0,
        detail: "not known: the database did not answer"
      })
    } else {
      const m = storage.outcome.right
      checks.push({ name: "database", status: "ok", ms: storage.ms })
      const current = m.known === 0 || m.latestApplied === m.latestKnown
      checks.push({
        name: "migrations",
        status: current ? "ok" : "failing",
        ms: 0,
        detail:
          m.known === 0
            ? "none to apply (in-memory storage)"
            : current
              ? `${m.applied} of ${m.known} applied`
              : (m.latestApplied ?? 0) > m.latestKnown
                ? `the database is at migration ${m.latestApplied}, newer than this code's ${m.latestKnown}: run the newer version`
                : `${m.applied} of ${m.known} applied, the latest (${m.latestKnown}) is not: restart the server to apply them`
      })
    }
    for (const { network, ms, outcome } of networks) {
      checks.push(
        Either.isRight(outcome)
          ? {
              name: `network ${network.chainId}`,
              status: "ok",
              ms,
              detail: `block ${outcome.right.number}`
            }
          : { name: `network ${network.chainId}`, status: "failing", ms, detail: outcome.left }
      )
    }
    if (!checks.every((c) => c.status === "ok")) {
      return { status: "not_ready", checks } satisfies Readiness as Readiness
    }
    // The stuck jobs' read failing says nothing a check above did not: the database answered.
    const stuckJobs = Either.getOrElse(stuck.outcome, () => [])
    if (stuckJobs.length === 0) return { status: "ready", checks } satisfies Readiness as Readiness
    return {
      status: "degraded",
      checks,
      stuckJobs: stuckJobs.map((j) => ({
        id: j.id,
        kind: j.kind,
        paymentId: j.paymentId,
        chainId: j.chainId,
        stuckSince: j.stuckSince.toISOString(),
        failingSince: j.failingSince?.toISOString() ?? null,
        failures: j.failures,
        lastError: j.lastError === null ? null : firstLine(j.lastError)
      }))
    } satisfies Readiness as Readiness
  })

/**
 * `GET /ready`: 200 when every part is ready, else 503; public, like `/health`.
 * Requests that arrive while a check runs wait for that one rather than start
 * their own: a flood of probes costs each RPC one call at a time, never a call
 * a probe (nothing is kept once answered, so no probe reads a stale state).
 */
export const makeReadinessRoute = Effect.gen(function* () {
  const runFork = Runtime.runFork(yield* Effect.runtime<StorageProbe | Chain>())
  let running: Fiber.RuntimeFiber<Readiness> | undefined
  const shared = Effect.suspend(() => {
    let fiber = running
    if (fiber === undefined) {
      const started = runFork(
        Effect.ensuring(
          checkReadiness(),
          Effect.sync(() => {
            if (running === started) running = undefined
          })
        )
      )
      fiber = started
      if (started.unsafePoll() === null) running = started
    }
    return Fiber.join(fiber)
  })
  return publicRoute("GET", "/ready", () =>
    Effect.map(shared, (readiness) => json(readiness.status === "not_ready" ? 503 : 200, readiness))
  )
})
