/**
 * Idempotency at the HTTP edge: the `Idempotency-Key` header, the request
 * fingerprint and the replayed response (WIRE.md section 3).
 */
import { Effect } from "effect"
import {
  fingerprint,
  type IdempotencyCompletion,
  MAX_KEY_LENGTH,
  runIdempotent
} from "../idempotency/Idempotency.js"
import type { Reply } from "./Exchange.js"
import { RequestError } from "./RequestError.js"
import type { RouteInput } from "./Route.js"

// biome-ignore lint/suspicious/noExplicitAny: any endpoint's input carries what is read here
type AnyInput = RouteInput<any>

/** The sent key, if any, checked for length. */
const sentKey = (input: AnyInput): Effect.Effect<string | undefined, RequestError> => {
  const key = input.header("idempotency-key")
  if (key === undefined || key === "") return Effect.succeed(undefined)
  return key.length > MAX_KEY_LENGTH
    ? Effect.fail(
        RequestError.invalid(
          "params_validation",
          "Idempotency-Key",
          `must be at most ${MAX_KEY_LENGTH} characters`
        )
      )
    : Effect.succeed(key)
}

/** The key, when the route requires one. */
export const requiredIdempotencyKey = (input: AnyInput): Effect.Effect<string, RequestError> =>
  Effect.flatMap(sentKey(input), (key) =>
    key === undefined
      ? Effect.fail(RequestError.missingHeader("missing_idempotency_key", "Idempotency-Key"))
      : Effect.succeed(key)
  )

/**
 * Runs `work` once for this key and request. `work` passes `complete(reply)`
 * to the store call that writes its effect, so the reply is recorded in the
 * same transaction. Failures listed by `recordFailure` are kept and replayed.
 */
export const idempotently = <E, R>(
  input: AnyInput,
  key: string,
  work: (complete: (reply: Reply) => IdempotencyCompletion) => Effect.Effect<Reply, E, R>,
  recordFailure?: (error: E) => Reply | undefined
) =>
  runIdempotent({
    scope: { partnerId: input.partner.id, route: input.routeKey, key },
    // The concrete path: the same key for another merchant is another request (409), never a replay.
    fingerprint: fingerprint({
      method: input.method,
      route: input.requestPath,
      merchantId: input.header("merchant-id"),
      body: input.body
    }),
    work: (complete) => work((reply) => complete({ status: reply.status, body: reply.body })),
    ...(recordFailure ? { recordFailure } : {})
  }).pipe(Effect.map((stored): Reply => ({ status: stored.status, body: stored.body })))

/** Where the key is optional: with one, runs `idempotently`; without, runs the work as is. */
export const maybeIdempotently = <E, R>(
  input: AnyInput,
  work: (
    complete: ((reply: Reply) => IdempotencyCompletion) | undefined
  ) => Effect.Effect<Reply, E, R>
) =>
  Effect.flatMap(sentKey(input), (key) =>
    key === undefined ? work(undefined) : idempotently(input, key, (complete) => work(complete))
  )
