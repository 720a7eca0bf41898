/**
 * The wallet gateway's errors as HTTP answers. Registered with the
 * failures a route may answer with (http/ErrorResponses.ts) by declaration
 * merging; the engine's assembly (ApiFailures.ts) joins every feature's.
 */
import { ApiErrors, type FailureReplies, replyOf } from "../http/ErrorResponses.js"
import type { ChainUnreachable, InsufficientBalance, QuoteExpired } from "./GatewayErrors.js"

declare module "../http/ErrorResponses.js" {
  interface ApiFailureRegistry {
    readonly QuoteExpired: QuoteExpired
    readonly InsufficientBalance: InsufficientBalance
    readonly ChainUnreachable: ChainUnreachable
  }
}

export const gatewayFailures: FailureReplies<
  "QuoteExpired" | "InsufficientBalance" | "ChainUnreachable"
> = {
  QuoteExpired: (e) =>
    replyOf(
      ApiErrors.QuoteExpired,
      `The price of option ${e.optionId} is no longer locked; fetch the options again`
    ),
  InsufficientBalance: (e) =>
    replyOf(
      ApiErrors.InsufficientBalance,
      `${e.account} holds ${e.balance} of ${e.asset} in minor units; the option needs ${e.required}`
    ),
  ChainUnreachable: (e) =>
    replyOf(
      ApiErrors.ChainUnavailable,
      `The network ${e.chainId} did not answer; nothing was submitted, try again`
    )
}
