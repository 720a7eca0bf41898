/**
 * For Promise APIs over scoped Effect resources (`createPaymentEngine`,
 * `runPaymentWorkers`, the sandbox's `startSandbox`): the resource is made in
 * a scope of its own, closed by the API's `close`, or at once when making it
 * fails, whose error is thrown as it is (an options error names every wrong
 * option).
 */
import { Cause, Effect, Exit, Scope } from "effect"

export interface InOwnScope<A> {
  readonly value: A
  /** Closes the scope once; later calls wait for the same closing. */
  readonly close: () => Promise<void>
}

/**
 * How a Promise API's effects run: as they are, or under services of the
 * caller's (`@pay/testing` runs an engine under a clock the test moves).
 */
export type EffectRunner = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

const asGiven: EffectRunner = (effect) => effect

export const startInOwnScope = async <A, E>(
  make: Effect.Effect<A, E, Scope.Scope>,
  within: EffectRunner = asGiven
): Promise<InOwnScope<A>> => {
  const scope = Effect.runSync(Scope.make())
  const exit = await Effect.runPromiseExit(within(Scope.extend(make, scope)))
  if (Exit.isFailure(exit)) {
    await Effect.runPromise(within(Scope.close(scope, exit)))
    throw Cause.squash(exit.cause)
  }
  let closing: Promise<void> | undefined
  return {
    value: exit.value,
    close: () => {
      closing ??= Effect.runPromise(within(Scope.close(scope, Exit.void)))
      return closing
    }
  }
}
