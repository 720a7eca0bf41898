/**
 * Idempotency keys on PostgreSQL. The primary key on (partner, route, key)
 * decides which of several concurrent requests, on any instance, runs: the
 * claim is an `INSERT … ON CONFLICT DO NOTHING`, and taking over a dead
 * owner's claim is a compare-and-set on the lease time it was seen with. The
 * completion is fenced by the claim's token.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { IdempotencyClaimLost, type IdempotencyCompletion, IdempotencyStore } from "@pay/core"
import { Effect } from "effect"
import { orDieSql } from "./PgErrors.js"
import { batchLimit } from "./PgRetentionStore.js"

interface KeyRow {
  readonly fingerprint: string
  readonly locked_at: Date
  readonly created_at: Date
  readonly response_status: number | null
  readonly response_body: string | null
}

/**
 * Records a response; run inside the work's transaction, it commits or rolls
 * back with it. A claim no longer held by the completion's token dies with
 * `IdempotencyClaimLost`, which rolls the work back.
 */
export const writeCompletion = (sql: SqlClient, completion: IdempotencyCompletion) => {
  const { scope, token, response } = completion
  return sql`UPDATE idempotency_keys
    SET response_status = ${response.status}, response_body = ${response.body}
    WHERE partner_id = ${scope.partnerId} AND route = ${scope.route} AND key = ${scope.key}
      AND claim_token = ${token} AND response_status IS NULL
    RETURNING 1 AS written`.pipe(
    Effect.flatMap((rows) =>
      rows.length === 1 ? Effect.void : Effect.die(new IdempotencyClaimLost({ scope }))
    )
  )
}

/** `work`, and with it the completion if there is one, in one transaction. */
export const withCompletion = <A, E, R>(
  sql: SqlClient,
  work: Effect.Effect<A, E, R>,
  completion: IdempotencyCompletion | undefined
) =>
  completion === undefined
    ? work
    : sql.withTransaction(Effect.tap(work, () => writeCompletion(sql, completion)))

export const makePgIdempotencyStore = (sql: SqlClient) =>
  IdempotencyStore.of({
    claim: (scope, fingerprint, token, now, staleBefore, replayableSince) =>
      Effect.gen(function* () {
        const where = sql`partner_id = ${scope.partnerId} AND route = ${scope.route}
          AND key = ${scope.key}`
        const inserted = yield* sql`INSERT INTO idempotency_keys
            (partner_id, route, key, fingerprint, claim_token, locked_at, created_at)
          VALUES (${scope.partnerId}, ${scope.route}, ${scope.key}, ${fingerprint}, ${token},
            ${now}, ${now})
          ON CONFLICT DO NOTHING RETURNING 1 AS claimed`
        if (inserted.length === 1) return { _tag: "Claimed" } as const
        const [row] = yield* sql<KeyRow>`SELECT fingerprint, locked_at, created_at,
          response_status, response_body FROM idempotency_keys WHERE ${where}`
        // Released between our insert and read: the caller tries again.
        if (row === undefined) return { _tag: "InProgress" } as const
        if (
          row.response_status !== null &&
          replayableSince !== undefined &&
          row.created_at.getTime() < replayableSince.getTime()
        ) {
          // Past its replay window: claimed as a new key, compare-and-set on the time seen.
          const renewed = yield* sql`UPDATE idempotency_keys
            SET fingerprint = ${fingerprint}, claim_token = ${token}, locked_at = ${now},
              created_at = ${now}, response_status = NULL, response_body = NULL
            WHERE ${where} AND response_status IS NOT NULL AND created_at = ${row.created_at}
            RETURNING 1 AS claimed`
          return renewed.length === 1
            ? ({ _tag: "Claimed" } as const)
            : ({ _tag: "InProgress" } as const)
        }
        if (row.fingerprint !== fingerprint) return { _tag: "Mismatch" } as const
        if (row.response_status !== null) {
          return {
            _tag: "Replay",
            response: { status: row.response_status, body: row.response_body ?? "" }
          } as const
        }
        if (row.locked_at.getTime() < staleBefore.getTime()) {
          const taken = yield* sql`UPDATE idempotency_keys
            SET claim_token = ${token}, locked_at = ${now}
            WHERE ${where} AND response_status IS NULL AND locked_at = ${row.locked_at}
            RETURNING 1 AS claimed`
          if (taken.length === 1) return { _tag: "Claimed" } as const
        }
        return { _tag: "InProgress" } as const
      }).pipe(orDieSql),

    renew: (scope, token, now) =>
      sql`UPDATE idempotency_keys SET locked_at = ${now}
        WHERE partner_id = ${scope.partnerId} AND route = ${scope.route} AND key = ${scope.key}
          AND claim_token = ${token} AND response_status IS NULL
        RETURNING 1 AS renewed`.pipe(
        Effect.map((rows) => rows.length === 1),
        orDieSql
      ),

    complete: (completion) => orDieSql(writeCompletion(sql, completion)),

    release: (scope, token) =>
      orDieSql(
        Effect.asVoid(sql`DELETE FROM idempotency_keys
          WHERE partner_id = ${scope.partnerId} AND route = ${scope.route} AND key = ${scope.key}
            AND claim_token = ${token} AND response_status IS NULL`)
      ),

    // A range of the index of finished keys by age; a key being claimed again is skipped.
    purge: (before, limit) =>
      sql<{ readonly purged: string }>`WITH purged AS (
          DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(
            SELECT ctid FROM idempotency_keys
            WHERE response_status IS NOT NULL AND created_at < ${before}
            ORDER BY created_at LIMIT ${batchLimit(sql, limit)} FOR UPDATE SKIP LOCKED))
          RETURNING 1
        ) SELECT count(*) AS purged FROM purged`.pipe(
        Effect.map(([row]) => Number(row?.purged ?? 0)),
        orDieSql
      )
  })
