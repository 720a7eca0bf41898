/**
 * The webhook delivery runner. Each instance claims due deliveries under a
 * lease (WebhookDelivery.ts says what the store guarantees: one holder, the
 * order per payment, the limit per endpoint), sends each one signed as the
 * Standard Webhooks specification says, with the current secret and, during
 * a rotation's overlap, the previous one too, and records what came of it
 * with the lease's token. Nothing is kept only in memory: a delivery whose
 * instance died is claimed again once its lease has run out.
 */
import { Cause, Context, Effect, FiberSet, Random } from "effect"
import { eventView } from "../events/Http.js"
import { OutboxSignal } from "../events/OutboxSignal.js"
import { EngineSecret, WEBHOOK_SECRET_PURPOSE } from "../secrets/EngineSecret.js"
import { attemptOutcome } from "./DeliveryOutcome.js"
import { webhookHeaders } from "./Signature.js"
import { type ClaimedDelivery, WebhookDeliveryStore } from "./WebhookDelivery.js"
import type { WebhookEndpoint } from "./WebhookEndpoint.js"
import { type WebhookResponse, WebhookSender } from "./WebhookSender.js"
import { MAX_RESPONSE_BYTES, WebhookDeliveryConfig } from "./WebhookWorkConfig.js"

/**
 * The time a delivery's `webhook-timestamp` says, from the engine's time of
 * the attempt: that time itself. `@pay/testing` stamps the real time instead
 * (as Stripe's test clocks do): its clock runs ahead of the receiver's, which
 * checks the stamp against its own.
 */
export class WebhookSigningTime extends Context.Reference<WebhookSigningTime>()(
  "@pay/core/WebhookSigningTime",
  { defaultValue: () => ({ of: (attempt: Date): Date => attempt }) }
) {}

export const WEBHOOK_USER_AGENT = "pay-engine-webhooks/1"

export class WebhookWork extends Effect.Service<WebhookWork>()("@pay/core/WebhookWork", {
  scoped: Effect.gen(function* () {
    const store = yield* WebhookDeliveryStore
    const sender = yield* WebhookSender
    const secrets = yield* EngineSecret
    const settings = yield* WebhookDeliveryConfig
    const clock = yield* Effect.clock
    const signingTime = yield* WebhookSigningTime
    const now = () => new Date(clock.unsafeCurrentTimeMillis())
    // Events committed by this process, and deliveries queued by a redeliver or test, wake
    // the loop at once; other processes' are found by the poll.
    const signal = yield* OutboxSignal
    const wake = signal.written
    const running = yield* FiberSet.make()
    let busy = 0

    /** The secrets that sign now: the current one, and the previous during its overlap. */
    const signingSecrets = (endpoint: WebhookEndpoint, at: Date) =>
      Effect.gen(function* () {
        const current = yield* secrets.open(WEBHOOK_SECRET_PURPOSE, endpoint.secret)
        const previous =
          endpoint.previousSecret !== null &&
          endpoint.previousSecretExpiresAt !== null &&
          endpoint.previousSecretExpiresAt.getTime() > at.getTime()
            ? [yield* secrets.open(WEBHOOK_SECRET_PURPOSE, endpoint.previousSecret)]
            : []
        return [current, ...previous]
      })

    /** One attempt: the request as the receiver gets it, sent; its response. */
    const attempt = (claimed: ClaimedDelivery, at: Date) =>
      Effect.gen(function* () {
        const { event, endpoint } = claimed
        // The same bytes on every attempt: the event as the endpoint's version renders it.
        const body = JSON.stringify(eventView(event, endpoint.apiVersion))
        const timestamp = Math.floor(signingTime.of(at).getTime() / 1000)
        const signing = yield* Effect.either(signingSecrets(endpoint, at))
        if (signing._tag === "Left") {
          return {
            status: null,
            body: "",
            retryAfter: null,
            error:
              "the endpoint's signing secret could not be opened: neither the engine's secret (PAY_SECRET) nor a previous one (PAY_SECRET_PREVIOUS) is the one it was sealed with",
            durationMs: 0
          } satisfies WebhookResponse
        }
        const headers = yield* Effect.promise(() =>
          webhookHeaders(signing.right, event.id, timestamp, body)
        )
        return yield* sender.send({
          url: endpoint.url,
          headers: {
            ...headers,
            "content-type": "application/json",
            "user-agent": WEBHOOK_USER_AGENT
          },
          body,
          timeoutMs: settings.timeoutMs,
          maxResponseBytes: MAX_RESPONSE_BYTES
        })
      })

    const deliver = (claimed: ClaimedDelivery) =>
      Effect.gen(function* () {
        const at = now()
        const response = yield* attempt(claimed, at)
        const outcome = attemptOutcome(response, claimed.attempts, at, settings, yield* Random.next)
        yield* store.record(claimed.lease, outcome)
        // Every attempt: delivered at info, one to be tried again at warning, given up at error.
        const fields = {
          eventId: claimed.event.id,
          endpointId: claimed.endpoint.id,
          attempt: claimed.attempts + 1,
          status: outcome.attempt.responseStatus,
          state: outcome.state,
          ...(outcome.attempt.error === null ? {} : { reason: outcome.attempt.error })
        }
        if (outcome.state === "delivered") yield* Effect.logInfo("webhook attempt", fields)
        else if (outcome.state === "failed" || outcome.endpoint._tag === "Gone") {
          yield* Effect.logError("webhook attempt", fields)
        } else yield* Effect.logWarning("webhook attempt", fields)
      }).pipe(
        Effect.catchTag("WebhookDeliveryLeaseLost", () =>
          Effect.logWarning("webhook lease lost to another instance", {
            eventId: claimed.event.id,
            endpointId: claimed.endpoint.id
          })
        ),
        // A broken database or a bug: logged; the lease runs out and the delivery is tried again.
        Effect.catchAllDefect((defect) =>
          Effect.logError(
            "webhook attempt failed",
            { eventId: claimed.event.id, endpointId: claimed.endpoint.id },
            Cause.die(defect)
          )
        ),
        // Stopping: let it go now, so the next start (or another instance) sends it at once.
        Effect.onInterrupt(() => store.release(claimed.lease, now()).pipe(Effect.ignore))
      )

    /** Claims what is due and starts it; returns how many were claimed. */
    const claimAndStart = Effect.gen(function* () {
      const room = settings.concurrency - busy
      if (room <= 0) return 0
      const claimed = yield* store.claimDue(
        now(),
        room,
        settings.leaseMs,
        settings.perEndpoint,
        settings.perPartner
      )
      for (const delivery of claimed) {
        busy++
        yield* FiberSet.run(
          running,
          Effect.ensuring(
            deliver(delivery),
            // Room again, and the payment's next delivery may be due now: look at once.
            Effect.zipRight(
              Effect.sync(() => {
                busy--
              }),
              wake
            )
          )
        )
      }
      return claimed.length
    })

    /** Claims and sends due deliveries until none is due or in flight: for tests. */
    const drain = Effect.gen(function* () {
      // Real time, not the Clock: tests drain with a TestClock set to when deliveries are due.
      while ((yield* claimAndStart) > 0 || busy > 0) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      }
    })

    /** The background loop, for as long as the engine runs. */
    const runForever = Effect.forever(
      Effect.gen(function* () {
        yield* claimAndStart.pipe(
          Effect.catchAllCause((cause) =>
            Effect.logWarning("webhook delivery: claiming failed", cause)
          )
        )
        yield* Effect.race(signal.next, Effect.sleep(settings.pollMs))
      })
    )

    return { wake, runForever, drain } as const
  })
}) {}
