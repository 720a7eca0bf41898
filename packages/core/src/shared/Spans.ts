/**
 * Spans on service methods, so a program that plugs in a tracer (for example
 * @effect/opentelemetry) sees each step of a flow by name. The two hottest
 * routes' calls (payment create and status) stay span-free.
 */
import { Effect } from "effect"

/** `method`, its effect wrapped in a span named `name` (`Merchants.create`). */
export const spanned =
  <Args extends ReadonlyArray<unknown>, A, E, R>(
    name: string,
    method: (...args: Args) => Effect.Effect<A, E, R>
  ) =>
  (...args: Args): Effect.Effect<A, E, R> =>
    Effect.withSpan(method(...args), name)
