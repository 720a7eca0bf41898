/**
 * Reading PostgreSQL's errors: a unique violation (SQLSTATE 23505) on a named
 * constraint is an answer the ports promise (a taken key prefix, a registered
 * asset, a second refund); every other database error is a defect, since the
 * ports have no error channel for an unreachable or broken database.
 */
import { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

const isSqlError = (error: unknown): error is SqlError => error instanceof SqlError

export const violatesUnique = (error: unknown, constraint: string): error is SqlError => {
  if (!isSqlError(error)) return false
  const cause = error.cause as
    | { readonly code?: unknown; readonly constraint?: unknown }
    | undefined
  return cause?.code === "23505" && cause.constraint === constraint
}

/** Turns a violation of `constraint` into the port's own failure; other errors pass. */
export const onUniqueViolation =
  <A2, E2, R2>(constraint: string, answer: () => Effect.Effect<A2, E2, R2>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.catchIf(
      effect,
      (error): error is Extract<E, SqlError> => violatesUnique(error, constraint),
      answer
    )

/** Database errors left over become defects. */
export const orDieSql = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(effect, (error): error is Extract<E, SqlError> => isSqlError(error), Effect.die)
