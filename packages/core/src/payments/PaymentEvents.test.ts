/**
 * The waiters without a fiber (waitChange), as the status long-poll holds them: woken by
 * a change, at once for a change already made, at their timeout on the one timer, never
 * after being let go, and with `stopped` when the events stop.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Scope, TestClock } from "effect"
import type { PaymentId } from "./Payment.js"
import { makePaymentWaiters } from "./PaymentEvents.js"

const A = "pay_a" as PaymentId
const B = "pay_b" as PaymentId

describe("PaymentEvents.waitChange", () => {
  it.scoped("wakes at the payment's change, not at another's, and counts what it holds", () =>
    Effect.gen(function* () {
      const { events, wake } = yield* makePaymentWaiters
      const woken: Array<string> = []
      const since = events.positionNow()
      events.waitChange(A, since, 10_000, (stopped) => woken.push(`a1 ${stopped}`))
      events.waitChange(A, since, 10_000, (stopped) => woken.push(`a2 ${stopped}`))
      events.waitChange(B, since, 10_000, () => woken.push("b"))
      expect(yield* events.held).toBe(3)
      yield* wake(A)
      expect(woken.sort()).toEqual(["a1 false", "a2 false"])
      expect(yield* events.held).toBe(1)
      // A change already made since the position: woken on the spot, nothing held.
      events.waitChange(A, since, 10_000, () => woken.push("a3"))
      expect(woken).toContain("a3")
      expect(yield* events.held).toBe(1)
    })
  )

  it.scoped("wakes at the timeout on the shared timer, and never once let go", () =>
    Effect.gen(function* () {
      const { events, wake } = yield* makePaymentWaiters
      const woken: Array<string> = []
      const since = events.positionNow()
      events.waitChange(A, since, 2_000, () => woken.push("timed"))
      const letGo = events.waitChange(B, since, 2_000, () => woken.push("let go"))
      letGo()
      expect(yield* events.held).toBe(1)
      yield* TestClock.adjust(Duration.millis(1_999))
      expect(woken).toEqual([])
      yield* TestClock.adjust(Duration.millis(1))
      expect(woken).toEqual(["timed"])
      yield* wake(B)
      expect(woken).toEqual(["timed"])
      expect(yield* events.held).toBe(0)
    })
  )

  it.effect(
    "wakes what it holds with `stopped` when its scope closes, and any later wait at once",
    () =>
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const { events } = yield* Scope.extend(makePaymentWaiters, scope)
        const woken: Array<boolean> = []
        events.waitChange(A, events.positionNow(), 30_000, (stopped) => woken.push(stopped))
        yield* Scope.close(scope, Exit.void)
        expect(woken).toEqual([true])
        events.waitChange(A, events.positionNow(), 30_000, (stopped) => woken.push(stopped))
        expect(woken).toEqual([true, true])
        expect(yield* events.held).toBe(0)
      })
  )
})
