/**
 * Idempotent requests, modelled on the most trusted payments APIs (WIRE.md
 * section 3): a key is scoped to the partner and the route; a replay of the
 * same request returns the first response; the same key with another request
 * is refused; concurrent requests with one key have one effect.
 *
 * The work and the record of its response are written in one transaction
 * (`IdempotencyCompletion`), so a crash can never leave an effect without its
 * record, and a retry never repeats it.
 *
 * The claim on a key is a short lease, renewed while the work runs: when the
 * process doing it dies, another instance takes the key over seconds later,
 * and the completion is fenced by the claim's token, so the old owner, should
 * it only have stalled, cannot commit as well.
 */
import { Clock, Duration, Effect, Option } from "effect"
import { sha256, stringToBytes } from "viem"
import { IdempotencyConflict } from "../shared/Errors.js"
import {
  IdempotencyClaimLost,
  type IdempotencyCompletion,
  type IdempotencyScope,
  IdempotencyStore,
  type StoredResponse
} from "./IdempotencyStore.js"

/** How long concurrent requests wait for the first one before answering 409. */
const WAIT_FOR_OWNER = Duration.seconds(5)
const POLL_EVERY = Duration.millis(25)
/**
 * A claim not renewed for this long belongs to a dead request and may be
 * taken over. Shorter than the wait above, so a retry sent as soon as the
 * owner's process died is answered by doing the work, not with a 409.
 */
export const CLAIM_LEASE = Duration.seconds(4)
/** How often a running request renews its claim: several times per lease. */
export const RENEW_CLAIM_EVERY = Duration.seconds(1)
/**
 * A finished key is replayed for this long after its request (WIRE.md: keys
 * are kept at least 24 hours); past it, the same key is a new request, even
 * while its record is still kept (the purge's `retention.idempotencyKeysMs`,
 * never shorter). So a response sealed under a previous engine secret is
 * never opened again once this has passed (operations.md, rotating the
 * engine's secret), however long records are kept.
 */
export const REPLAY_WINDOW_MS = 48 * 60 * 60_000

/** Unique per process and claim; the random part tells instances apart. */
const processTag = Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) =>
  b.toString(16).padStart(2, "0")
).join("")
let claimsMade = 0
const newClaimToken = (): string => `${processTag}-${(++claimsMade).toString(36)}`

/** JSON with sorted keys, so that a body's key order does not change its fingerprint. */
const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

/** Method, route, `Merchant-Id` and body (WIRE.md): what makes two requests "the same". */
export const fingerprint = (parts: {
  readonly method: string
  readonly route: string
  readonly merchantId: string | undefined
  readonly body: unknown
}): string =>
  sha256(
    stringToBytes(
      canonicalJson([parts.method, parts.route, parts.merchantId ?? null, parts.body ?? null])
    )
  ).slice(2)

/**
 * Runs `work` once per key. `work` receives a `complete` function that turns
 * its response into the completion to write with its own transaction; if the
 * work fails before writing, the claim is released so the request can be
 * retried, unless `recordFailure` turns the failure into a response to keep.
 */
export const runIdempotent = <E, R>(options: {
  readonly scope: IdempotencyScope
  readonly fingerprint: string
  readonly work: (
    complete: (response: StoredResponse) => IdempotencyCompletion
  ) => Effect.Effect<StoredResponse, E, R>
  /** A failure that is an answer (a conflict), stored and replayed like a success. */
  readonly recordFailure?: (error: E) => StoredResponse | undefined
  /** What a replay answers, made from the stored response (a sealed secret opened again). */
  readonly onReplay?: (stored: StoredResponse) => Effect.Effect<StoredResponse, never, R>
}): Effect.Effect<StoredResponse, E | IdempotencyConflict, R | IdempotencyStore> =>
  Effect.gen(function* () {
    const store = yield* IdempotencyStore
    const { scope } = options
    const token = newClaimToken()
    const deadline = (yield* Clock.currentTimeMillis) + Duration.toMillis(WAIT_FOR_OWNER)
    for (;;) {
      const now = yield* Clock.currentTimeMillis
      const outcome = yield* store.claim(
        scope,
        options.fingerprint,
        token,
        new Date(now),
        new Date(now - Duration.toMillis(CLAIM_LEASE)),
        new Date(now - REPLAY_WINDOW_MS)
      )
      switch (outcome._tag) {
        case "Replay":
          return options.onReplay ? yield* options.onReplay(outcome.response) : outcome.response
        case "Mismatch":
          return yield* new IdempotencyConflict({ reason: "different_request" })
        case "InProgress":
          if (now >= deadline) return yield* new IdempotencyConflict({ reason: "in_progress" })
          yield* Effect.sleep(POLL_EVERY)
          continue
        case "Claimed":
          return yield* runClaimed(store, scope, token, options)
      }
    }
  })

/** The work of a claimed key, its lease renewed meanwhile, its outcome recorded or released. */
const runClaimed = <E, R>(
  store: IdempotencyStore["Type"],
  scope: IdempotencyScope,
  token: string,
  options: {
    readonly work: (
      complete: (response: StoredResponse) => IdempotencyCompletion
    ) => Effect.Effect<StoredResponse, E, R>
    readonly recordFailure?: (error: E) => StoredResponse | undefined
  }
): Effect.Effect<StoredResponse, E | IdempotencyConflict, R> => {
  const renewLease = Effect.flatMap(Clock.currentTimeMillis, (now) =>
    store.renew(scope, token, new Date(now))
  ).pipe(
    Effect.delay(RENEW_CLAIM_EVERY),
    // A failed renewal is retried at the next tick; a lost claim is caught by the fenced write.
    Effect.catchAllCause(() => Effect.succeed(true)),
    Effect.repeat({ while: (held) => held }),
    Effect.zipRight(Effect.never)
  )
  const work = options
    .work((response) => ({ scope, token, response }))
    .pipe(
      Effect.catchAll((error) => {
        const recorded = options.recordFailure?.(error)
        return recorded === undefined
          ? Effect.zipRight(store.release(scope, token), Effect.fail(error))
          : Effect.as(store.complete({ scope, token, response: recorded }), recorded)
      })
    )
  return Effect.raceFirst(work, renewLease).pipe(
    // Another request took the key over while this one stalled: its write was rolled back.
    Effect.catchSomeDefect((defect) =>
      defect instanceof IdempotencyClaimLost
        ? Option.some(Effect.fail(new IdempotencyConflict({ reason: "in_progress" })))
        : Option.none()
    ),
    // Interruption or a defect: free the key so the client can retry.
    Effect.onExit((exit) =>
      exit._tag === "Failure" && exit.cause._tag !== "Fail"
        ? store.release(scope, token)
        : Effect.void
    )
  )
}
