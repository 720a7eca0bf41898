/**
 * Idempotency at the HTTP edge: the request fingerprint and the replayed
 * response (WIRE.md section 3). The `Idempotency-Key` header itself is
 * declared and checked by each endpoint's header schema.
 */
import { Effect } from "effect"
import type { Reply } from "../http/Exchange.js"
import type { RouteInput } from "../http/Route.js"
import { CurrentPartner } from "../partners/PartnerAuth.js"
import { fingerprint, runIdempotent } from "./Idempotency.js"
import type { IdempotencyCompletion } from "./IdempotencyStore.js"

// biome-ignore lint/suspicious/noExplicitAny: any endpoint's input carries what is read here
type AnyInput = RouteInput<any>

const headerOf = (input: AnyInput, name: string): string | undefined =>
  (input.headers as Readonly<Record<string, string | undefined>> | undefined)?.[name]

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
  Effect.flatMap(CurrentPartner, (partner) =>
    runIdempotent({
      scope: { partnerId: partner.id, route: input.routeKey, key },
      // The concrete path: the same key for another merchant is another request (409), never a replay.
      fingerprint: fingerprint({
        method: input.method,
        route: input.requestPath,
        merchantId: headerOf(input, "merchant-id"),
        body: input.body
      }),
      work: (complete) => work((reply) => complete({ status: reply.status, body: reply.body })),
      ...(recordFailure ? { recordFailure } : {})
    }).pipe(Effect.map((stored): Reply => ({ status: stored.status, body: stored.body })))
  )

/** Where the key is optional: with one, runs `idempotently`; without, runs the work as is. */
export const maybeIdempotently = <E, R>(
  input: AnyInput,
  work: (
    complete: ((reply: Reply) => IdempotencyCompletion) | undefined
  ) => Effect.Effect<Reply, E, R>
) => {
  const key = headerOf(input, "idempotency-key")
  return key === undefined
    ? work(undefined)
    : idempotently(input, key, (complete) => work(complete))
}
