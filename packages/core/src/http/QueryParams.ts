/**
 * Query parameters the lists share, read at the edge: each refusal is a 400
 * `invalid_params` naming the parameter.
 */
import { Effect } from "effect"
import { parseRfc3339 } from "../shared/Time.js"
import { ApiErrors } from "./ErrorResponses.js"
import { RequestError } from "./RequestError.js"

/** An RFC 3339 time (`startTs`, `endTs`), or none when not given. */
export const timestampParam = (
  field: string,
  value: string | undefined
): Effect.Effect<Date | undefined, RequestError> => {
  if (value === undefined) return Effect.succeed(undefined)
  const date = parseRfc3339(value)
  return date
    ? Effect.succeed(date)
    : Effect.fail(
        RequestError.invalid(
          ApiErrors.InvalidParams,
          field,
          "must be an RFC 3339 timestamp like 2026-01-31T00:00:00Z"
        )
      )
}

/** A `cursor` a list's codec made (shared/Cursor.ts), or none when not given. */
export const cursorParam = <A>(
  codec: { readonly decode: (cursor: string) => A | undefined },
  cursor: string | undefined
): Effect.Effect<A | undefined, RequestError> => {
  if (cursor === undefined) return Effect.succeed(undefined)
  const decoded = codec.decode(cursor)
  return decoded !== undefined
    ? Effect.succeed(decoded)
    : Effect.fail(
        RequestError.invalid(ApiErrors.InvalidParams, "cursor", "is not a cursor from this list")
      )
}
