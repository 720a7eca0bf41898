/**
 * The wallet gateway's route handlers: the payment reference, accounts and
 * results parsed at the edge, the service call, the wire views.
 */
import { Effect, Either } from "effect"
import { json } from "../http/Exchange.js"
import { RequestError } from "../http/RequestError.js"
import { walletRoute } from "../http/Route.js"
import type { Merchant } from "../merchants/Merchant.js"
import type { Payment, PaymentId } from "../payments/Payment.js"
import { effectiveStatus } from "../payments/PaymentStateMachine.js"
import { amountView, cancelView, statusView } from "../payments/Views.js"
import { type Caip10, parseCaip10 } from "../shared/Caip.js"
import { InvalidInput } from "../shared/Errors.js"
import { toUnixSeconds } from "../shared/Time.js"
import { TokenRegistry, type TokenRegistryShape } from "../shared/TokenRegistry.js"
import {
  gatewayCancel,
  gatewayConfirm,
  gatewayFetch,
  gatewayOptions,
  gatewayPayment,
  gatewayStatus
} from "./Api.js"
import { collectDataRoutes } from "./CollectDataRoutes.js"
import { Gateway } from "./Gateway.js"
import { paymentIdOfSegment } from "./PaymentRef.js"

/** The payment the path names, or 404 with what was wrong. */
const paymentIdOf = (segment: string): Effect.Effect<PaymentId, RequestError> => {
  const id = paymentIdOfSegment(segment)
  return id !== undefined
    ? Effect.succeed(id)
    : Effect.fail(
        new RequestError({
          status: 404,
          code: "payment_not_found",
          message:
            "The path names no payment: send the payment id (pay_…) or its buyer link, percent-encoded"
        })
      )
}

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

/** The reference's `GetPaymentResponse`: what a wallet shows before paying. */
export const paymentInfoView = (
  payment: Payment,
  merchant: Merchant | undefined,
  registry: TokenRegistryShape,
  now: Date
) => ({
  status: effectiveStatus(payment, now),
  amount: amountView(payment.amount, registry),
  expiresAt: toUnixSeconds(payment.expiresAt),
  merchant: { name: merchant?.name ?? "", iconUrl: merchant?.iconUrl ?? null },
  buyer:
    payment.buyer === null
      ? null
      : {
          accountCaip10: payment.buyer.account,
          accountProviderName: payment.buyer.providerName,
          accountProviderIcon: payment.buyer.providerIcon
        }
})

export const gatewayRoutes = Effect.gen(function* () {
  const gateway = yield* Gateway
  const registry = yield* TokenRegistry
  return [
    walletRoute(gatewayPayment, (input) =>
      Effect.flatMap(paymentIdOf(input.path.id), (id) =>
        Effect.map(gateway.info(id), ({ payment, merchant, at }) =>
          json(200, paymentInfoView(payment, merchant, registry, at))
        )
      )
    ),

    walletRoute(gatewayOptions, (input) =>
      Effect.gen(function* () {
        const id = yield* paymentIdOf(input.path.id)
        const accounts = yield* accountsOf(input.payload.accounts)
        const { payment, options, collectData } = yield* gateway.optionsFor(
          id,
          accounts,
          input.header("client-id")?.trim().slice(0, 256) || null
        )
        const info = input.urlParams.includePaymentInfo
          ? yield* Effect.map(gateway.info(id), ({ merchant, at }) =>
              paymentInfoView(payment, merchant, registry, at)
            )
          : null
        return json(200, {
          options: options.map(({ option, action, collectData }) => ({
            id: option.id,
            account: option.account,
            amount: amountView(
              { unit: { kind: "token", asset: option.asset }, value: option.authorization.value },
              registry
            ),
            actions: [action],
            etaS: gateway.etaSeconds(option),
            expiresAt: option.quoted ? toUnixSeconds(option.expiresAt) : null,
            collectData
          })),
          info,
          collectData
        })
      })
    ),

    walletRoute(gatewayFetch, (input) =>
      Effect.gen(function* () {
        const id = yield* paymentIdOf(input.path.id)
        const actions = yield* gateway.fetchActions(id, input.payload.optionId)
        return json(200, { actions })
      })
    ),

    walletRoute(gatewayConfirm, (input) =>
      Effect.gen(function* () {
        const id = yield* paymentIdOf(input.path.id)
        yield* gateway.confirm(
          id,
          {
            optionId: input.payload.optionId,
            results: input.payload.results,
            collectedData: input.payload.collectedData
          },
          input.wallet
        )
        const { payment, at } = yield* gateway.status(id, input.urlParams.maxPollMs ?? 0)
        return json(200, statusView(payment, { registry, now: at }))
      })
    ),

    walletRoute(gatewayStatus, (input) =>
      Effect.flatMap(paymentIdOf(input.path.id), (id) =>
        Effect.map(gateway.status(id, input.urlParams.maxPollMs ?? 0), ({ payment, at }) =>
          json(200, statusView(payment, { registry, now: at }))
        )
      )
    ),

    walletRoute(gatewayCancel, (input) =>
      Effect.flatMap(paymentIdOf(input.path.id), (id) =>
        Effect.map(gateway.cancel(id), (payment) => json(200, cancelView(payment)))
      )
    ),

    ...collectDataRoutes(gateway)
  ]
})
