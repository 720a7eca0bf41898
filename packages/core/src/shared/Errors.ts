/**
 * Errors shared by every feature. Domain errors carry no HTTP status: the API
 * layer maps each one to its status and wire code in one place
 * (http/ErrorResponses.ts).
 */
import { Schema } from "effect"

/**
 * One offending field: a dotted path (`settlements.0.asset`) and what is wrong
 * with it; `code` where a client may act on the kind of wrong (a refused logo:
 * `icon_too_small`, …).
 */
export const FieldIssue = Schema.Struct({
  field: Schema.String,
  message: Schema.String,
  code: Schema.optional(
    Schema.String.annotations({
      description:
        "Where a client may act on the kind of wrong: the iconUrl issue of a refused merchant logo (its codes: the iconUrl field of the merchant create and update requests)"
    })
  )
})
export type FieldIssue = typeof FieldIssue.Type

/** Input that parsed but breaks a rule (wrong chain, unknown field, bad value). */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  message: Schema.String,
  issues: Schema.Array(FieldIssue)
}) {
  static of(field: string, message: string): InvalidInput {
    return new InvalidInput({ message: `${field}: ${message}`, issues: [{ field, message }] })
  }
}

/** No key, or a key that matches no partner. */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {
  reason: Schema.Literal("missing", "invalid")
}) {}

/** A valid key used on a resource of another partner. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  message: Schema.String
}) {}

/** The same idempotency key with another request, or its first use still running. */
export class IdempotencyConflict extends Schema.TaggedError<IdempotencyConflict>()(
  "IdempotencyConflict",
  { reason: Schema.Literal("different_request", "in_progress") }
) {}
