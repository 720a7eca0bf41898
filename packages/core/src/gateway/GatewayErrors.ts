/**
 * The gateway's own refusals (WIRE.md section 3). Like every domain error
 * they carry no HTTP status: http/ErrorResponses.ts maps them.
 */
import { Schema } from "effect"

/** The option's locked price went stale: the wallet must fetch options again (409). */
export class QuoteExpired extends Schema.TaggedError<QuoteExpired>()("QuoteExpired", {
  optionId: Schema.String
}) {}

/** The buyer's account holds less of the token than the option asks (409). */
export class InsufficientBalance extends Schema.TaggedError<InsufficientBalance>()(
  "InsufficientBalance",
  { account: Schema.String, asset: Schema.String, required: Schema.String, balance: Schema.String }
) {}

/** The network of the option did not answer (503): nothing was submitted. */
export class ChainUnreachable extends Schema.TaggedError<ChainUnreachable>()("ChainUnreachable", {
  chainId: Schema.String
}) {}

/**
 * A data-collection page opened or posted without the token of its URL, or with one made for
 * another payment or other accounts (403): knowing a payment id does not let anyone write its
 * buyer's data.
 */
export class CollectDataForbidden extends Schema.TaggedError<CollectDataForbidden>()(
  "CollectDataForbidden",
  { paymentId: Schema.String }
) {}
