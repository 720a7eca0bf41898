/**
 * The wallet gateway's route handlers: the payment reference, accounts and
 * results parsed at the edge, the payment's rate limit when one is set
 * (RateLimits.perPayment, after the wallet app's), the service call, the
 * wire views.
 */
import { Effect, Either } from "effect"
import { CurrentWalletApp } from "../apps/WalletAppAuth.js"
import { json } from "../http/Exchange.js"
import { HttpConfig } from "../http/HttpConfig.js"
import { implement } from "../http/Route.js"
import { type Merchant, merchantIconUrl } from "../merchants/Merchant.js"
import { type Payment, type PaymentId, paymentLivemode } from "../payments/Payment.js"
import { effectiveStatus } from "../payments/PaymentStateMachine.js"
import { amountView, cancelView, statusView } from "../payments/Views.js"
import { admitPayment, RateLimits } from "../ratelimit/RateLimits.js"
import { type Caip10, parseCaip10 } from "../shared/Caip.js"
import { EngineMode } from "../shared/EngineMode.js"
import { InvalidInput } from "../shared/Errors.js"
import { toUnixSeconds } from "../shared/Time.js"
import { TokenRegistry, type TokenRegistryShape } from "../shared/TokenRegistry.js"
import { GatewayApi } from "./Api.js"
import { Gateway } from "./Gateway.js"
import { noOptionsView } from "./NoOptions.js"

/** The accounts, each a CAIP-10 id, or every malformed one named. */
const accountsOf = (
  accounts: ReadonlyArray<string>
): Effect.Effect<Array<Caip10>, InvalidInput> => {
  const parsed: Array<Caip10> = []
  const issues: Array<{ field: string; message: string }> = []
  accounts.forEach((account, i) => {
    const result = parseCaip10(account)
    if (Either.isRight(result)) parsed.push(result.right.value)
    else issues.push({ field: `accounts.${i}`, message: result.left })
  })
  return issues.length === 0
    ? Effect.succeed(parsed)
    : Effect.fail(
        new InvalidInput({ message: `${issues[0]!.field}: ${issues[0]!.message}`, issues })
      )
}

/**
 * The reference's `GetPaymentResponse`: what a wallet shows before paying,
 * and whether it is a test payment (`livemode: false`).
 */
export const paymentInfoView = (
  payment: Payment,
  merchant: Merchant | undefined,
  registry: TokenRegistryShape,
  publicUrl: string,
  now: Date,
  livemode: boolean
) => ({
  status: effectiveStatus(payment, now),
  amount: amountView(payment.amount, registry),
  expiresAt: toUnixSeconds(payment.expiresAt),
  merchant: { name: merchant?.name ?? "", iconUrl: merchantIconUrl(publicUrl, merchant) },
  buyer:
    payment.buyer === null
      ? null
      : {
          accountCaip10: payment.buyer.account,
          accountProviderName: payment.buyer.providerName,
          accountProviderIcon: payment.buyer.providerIcon
        },
  livemode: paymentLivemode(payment, livemode)
})

export const gatewayHandlers = Effect.gen(function* () {
  const gateway = yield* Gateway
  const registry = yield* TokenRegistry
  const { publicUrl } = yield* HttpConfig
  const limits = yield* RateLimits
  const { livemode } = yield* EngineMode
  /** Each route about a payment takes a token of its bucket first. */
  const admitted = (id: PaymentId) => admitPayment(limits, id)
  return implement(GatewayApi, {
    gatewayPayment: ({ path }) =>
      Effect.flatMap(admitted(path.id), () =>
        Effect.map(gateway.info(path.id), ({ payment, merchant, at }) =>
          json(200, paymentInfoView(payment, merchant, registry, publicUrl, at, livemode))
        )
      ),

    gatewayOptions: ({ path, payload, urlParams, headers }) =>
      Effect.gen(function* () {
        const id = path.id
        yield* admitted(id)
        const accounts = yield* accountsOf(payload.accounts)
        const { payment, options, collectData, noOptions } = yield* gateway.optionsFor(
          id,
          accounts,
          headers["client-id"]?.slice(0, 256) || null
        )
        const info = urlParams.includePaymentInfo
          ? yield* Effect.map(gateway.info(id), ({ merchant, at }) =>
              paymentInfoView(payment, merchant, registry, publicUrl, at, livemode)
            )
          : null
        return json(200, {
          options: options.map(({ option, actions, collectData, affordable }) => ({
            id: option.id,
            account: option.account,
            amount: amountView(
              { unit: { kind: "token", asset: option.asset }, value: option.authorization.value },
              registry
            ),
            actions,
            etaS: gateway.etaSeconds(option),
            expiresAt: option.quoted ? toUnixSeconds(option.expiresAt) : null,
            collectData,
            affordable: affordable ?? null
          })),
          info,
          collectData,
          ...(noOptions === undefined ? {} : { noOptionsReason: noOptionsView(noOptions) })
        })
      }),

    gatewayFetch: ({ path, payload }) =>
      Effect.flatMap(admitted(path.id), () =>
        Effect.map(gateway.fetchActions(path.id, payload.optionId), (actions) =>
          json(200, { actions })
        )
      ),

    gatewayConfirm: ({ path, payload, urlParams }) =>
      Effect.gen(function* () {
        yield* admitted(path.id)
        const wallet = yield* CurrentWalletApp
        yield* gateway.confirm(
          path.id,
          {
            optionId: payload.optionId,
            results: payload.results,
            collectedData: payload.collectedData
          },
          wallet
        )
        const { payment, at } = yield* gateway.status(path.id, urlParams.maxPollMs ?? 0)
        return json(200, statusView(payment, { registry, now: at }))
      }),

    gatewayStatus: ({ path, urlParams }) =>
      Effect.flatMap(admitted(path.id), () =>
        Effect.map(gateway.status(path.id, urlParams.maxPollMs ?? 0), ({ payment, at }) =>
          json(200, statusView(payment, { registry, now: at }))
        )
      ),

    gatewayCancel: ({ path }) =>
      Effect.flatMap(admitted(path.id), () =>
        Effect.map(gateway.cancel(path.id), (payment) =>
          json(200, cancelView(payment, { livemode }))
        )
      )
  })
})
