/**
 * Idempotency at the HTTP edge: the request fingerprint and the replayed
 * response (WIRE.md section 3). The `Idempotency-Key` header itself is
 * declared and checked by each endpoint's header schema.
 */
import { Effect } from "effect"
import { json, type Reply } from "../http/Exchange.js"
import type { RouteInput } from "../http/Route.js"
import { CurrentPartner } from "../identity/PartnerAuth.js"
import { EngineSecret } from "../secrets/EngineSecret.js"
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
  recordFailure?: (error: E) => Reply | undefined,
  onReplay?: (stored: Reply) => Effect.Effect<Reply, never, R>
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
      ...(recordFailure ? { recordFailure } : {}),
      ...(onReplay ? { onReplay } : {})
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

/** What `EngineSecret` seals a secret kept in an idempotency record for. */
export const REPLAYED_SECRET_PURPOSE = "replayed-secret"

/**
 * `idempotently` for a reply that shows a secret once (a new API key, a
 * webhook signing secret). The record keeps the reply with its `secret`
 * sealed under the engine's secret, and a replay opens it again: the secret
 * is never stored in clear, and sealed only as long as the record lives.
 * `work` turns its reply's status and body into the completion with `keep`.
 */
export const idempotentlyWithSecret = <E, R>(
  input: AnyInput,
  key: string,
  work: (
    keep: (
      status: number,
      body: { readonly secret: string }
    ) => Effect.Effect<IdempotencyCompletion>
  ) => Effect.Effect<Reply, E, R>,
  recordFailure?: (error: E) => Reply | undefined
) =>
  Effect.flatMap(EngineSecret, (secrets) =>
    idempotently(
      input,
      key,
      (complete) =>
        work((status, body) =>
          Effect.map(secrets.seal(REPLAYED_SECRET_PURPOSE, body.secret), (sealed) =>
            complete(json(status, { ...body, secret: sealed }))
          )
        ),
      recordFailure,
      (stored) => {
        const body = stored.status < 300 ? (JSON.parse(stored.body) as { secret?: unknown }) : {}
        if (typeof body.secret !== "string") return Effect.succeed(stored)
        // A record sealed under a secret this engine no longer has (PAY_SECRET changed without
        // PAY_SECRET_PREVIOUS) cannot be answered: a defect, never a reply without the secret.
        return secrets.open(REPLAYED_SECRET_PURPOSE, body.secret).pipe(
          Effect.map((secret) => json(stored.status, { ...body, secret })),
          Effect.orDie
        )
      }
    )
  )
