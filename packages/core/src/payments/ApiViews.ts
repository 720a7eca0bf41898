/**
 * The wire shapes of what the payment routes answer (SPEC.md 2 and 3, the
 * reference's schemas field for field): amounts, the payment views, the status
 * object, statistics and the legacy list. The endpoints are in Api.ts.
 */
import { Schema } from "effect"
import { PaymentStatus, SETTLEMENT_STATUSES } from "./Payment.js"

const Display = Schema.Struct({
  assetSymbol: Schema.String,
  assetName: Schema.String,
  decimals: Schema.Int,
  iconUrl: Schema.optional(Schema.String).annotations({ description: "Absent when unknown" }),
  networkName: Schema.optional(Schema.String),
  networkIconUrl: Schema.optional(Schema.String).annotations({ description: "Absent when unknown" })
}).annotations({ identifier: "AmountDisplay" })

export const AmountView = Schema.Struct({
  unit: Schema.String.annotations({ examples: ["iso4217/USD"] }),
  value: Schema.String.annotations({ description: "Minor units", examples: ["1050"] }),
  display: Schema.NullOr(Display)
}).annotations({ identifier: "Amount" })

export const Timestamp = Schema.String.annotations({ description: "RFC 3339" })
export const UnixSeconds = Schema.Int.annotations({ description: "Unix time in seconds" })

/** On every view of a payment: whether real money is at stake. */
export const Livemode = Schema.Boolean.annotations({
  description:
    "false for a test payment, made on the sandbox chain or by an engine whose every network is a testnet: no real money moves. true otherwise. The engine's mode when the payment was created; it never changes"
})

/** The statuses of the legacy list (no `cancelled`: SPEC.md section 3, rule 4). */
export const LegacyStatus = Schema.Literal(
  "requires_action",
  "processing",
  "succeeded",
  "failed",
  "expired"
)

export const CreatePaymentResponse = Schema.Struct({
  paymentId: Schema.String,
  status: PaymentStatus,
  expiresAt: UnixSeconds,
  isFinal: Schema.Boolean,
  gatewayUrl: Schema.String.annotations({
    description: "The buyer link: open in a wallet or show as a QR code"
  }),
  pollInMs: Schema.optional(Schema.NullOr(Schema.Int)),
  livemode: Livemode
}).annotations({ identifier: "CreatePaymentResponse" })

export const PaymentInfo = Schema.Struct({ optionAmount: AmountView, txId: Schema.String })

export const StatusResponse = Schema.Struct({
  status: PaymentStatus,
  isFinal: Schema.Boolean,
  pollInMs: Schema.optional(Schema.Int).annotations({ description: "Only while not final" }),
  failureCode: Schema.optional(Schema.String).annotations({ description: "Only when failed" }),
  info: Schema.NullOr(PaymentInfo).annotations({ description: "Only when succeeded" })
}).annotations({ identifier: "PaymentStatusResponse" })

export const CancelResponse = Schema.Struct({
  paymentId: Schema.String,
  status: PaymentStatus,
  cancelledReason: Schema.String,
  cancelledAt: Timestamp,
  livemode: Livemode
}).annotations({ identifier: "PaymentsCancelPaymentResponse" })

const MerchantRef = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  iconUrl: Schema.NullOr(Schema.String)
})

export const PaymentView = Schema.Struct({
  paymentId: Schema.String,
  merchant: MerchantRef,
  referenceId: Schema.String,
  status: PaymentStatus,
  isTerminal: Schema.Boolean,
  fiatAmount: Schema.optional(AmountView),
  tokenAmount: Schema.optional(AmountView),
  buyer: Schema.optional(
    Schema.Struct({
      accountCaip10: Schema.String,
      accountProviderName: Schema.optional(Schema.String),
      accountProviderIcon: Schema.optional(Schema.String)
    })
  ),
  transaction: Schema.optional(
    Schema.Struct({
      networkId: Schema.String,
      hash: Schema.optional(Schema.String),
      nonce: Schema.optional(Schema.Int)
    })
  ),
  settlement: Schema.optional(
    Schema.Struct({
      settled: Schema.Boolean,
      amount: AmountView.annotations({
        description: "What the merchant receives: the token amount paid less fees"
      }),
      txHash: Schema.optional(Schema.String).annotations({ description: "Once settled" }),
      status: Schema.Literal(...SETTLEMENT_STATUSES).annotations({
        description:
          "pending until the transfer to the merchant's settlement destination lands; no_destination when the merchant has no settlement for the asset paid (the funds stay with the engine until an operator settles again); held while the merchant is not active (inactive, suspended or deleted): the funds stay with the engine until the merchant is active again or an operator settles"
      })
    })
  ).annotations({ description: "Once the payment succeeded" }),
  fees: Schema.optional(
    Schema.Struct({
      total: AmountView,
      fixed: AmountView,
      percentage: Schema.String.annotations({
        description: 'The percentage rate applied, as a decimal string: "0.4" is 0.4 %'
      }),
      network: Schema.optional(AmountView).annotations({
        description:
          "A native-coin payment only: the gas its settlement to the merchant may burn (a plain transfer's gas limit at the network's max fee when the payment was collected), kept so that the merchant's coin pays its own settlement; included in total"
      })
    })
  ).annotations({
    description: "The engine's fees, in the token paid; once the payment succeeded"
  }),
  createdAt: Timestamp,
  lastUpdatedAt: Timestamp,
  settledAt: Schema.optional(Timestamp).annotations({ description: "Only once settled" }),
  livemode: Livemode
}).annotations({ identifier: "Payment" })

export const PaymentDetails = Schema.Struct({
  ...PaymentView.fields,
  amount: AmountView.annotations({ description: "The amount as requested" }),
  isFinal: Schema.Boolean,
  expiresAt: UnixSeconds,
  gatewayUrl: Schema.String,
  failureCode: Schema.optional(Schema.String),
  cancelledReason: Schema.optional(Schema.String),
  info: Schema.NullOr(PaymentInfo),
  checkout: Schema.NullOr(Schema.Struct({ successUrl: Schema.String, errorUrl: Schema.String })),
  refund: Schema.NullOr(Schema.Struct({ refundId: Schema.String, createdAt: Timestamp }))
}).annotations({ identifier: "PaymentDetails" })

export const Stats = Schema.Struct({
  totalRevenue: Schema.Array(Schema.Struct({ amount: Schema.Number, currency: Schema.String })),
  totalTransactions: Schema.Int,
  totalCustomers: Schema.Int
}).annotations({
  identifier: "PaymentStats",
  description:
    "Over every match, not only the page. Revenue: requested amounts of succeeded payments, per currency, in major units. Transactions: succeeded payments. Customers: distinct buyer accounts among them."
})

export const ListPaymentsResponse = Schema.Struct({
  data: Schema.Array(PaymentView),
  nextCursor: Schema.NullOr(Schema.String),
  stats: Stats
})

export const LegacyPaymentView = Schema.Struct({
  payment_id: Schema.String,
  merchant_id: Schema.String,
  reference_id: Schema.String,
  status: LegacyStatus,
  is_terminal: Schema.Boolean,
  wallet_name: Schema.String,
  token_symbol: Schema.NullOr(Schema.String),
  token_decimals: Schema.Int,
  token_logo: Schema.NullOr(Schema.String),
  chain_logo: Schema.NullOr(Schema.String),
  wallet_logo: Schema.NullOr(Schema.String),
  chain_id: Schema.NullOr(Schema.String),
  buyer_caip10: Schema.NullOr(Schema.String),
  token_caip19: Schema.NullOr(Schema.String),
  tx_hash: Schema.NullOr(Schema.String),
  nonce: Schema.NullOr(Schema.Int),
  token_amount: Schema.NullOr(Schema.String),
  fiat_amount: Schema.NullOr(Schema.Int).annotations({ description: "Minor units" }),
  fiat_currency: Schema.NullOr(Schema.String),
  created_at: Schema.NullOr(Timestamp),
  last_updated_at: Schema.NullOr(Timestamp),
  settled_at: Schema.NullOr(Timestamp),
  settlement_status: Schema.NullOr(Schema.String),
  settlement_tx_hash: Schema.NullOr(Schema.String),
  livemode: Livemode
}).annotations({ identifier: "LegacyPayment" })

export const LegacyPaymentsResponse = Schema.Struct({
  data: Schema.Array(LegacyPaymentView),
  next_cursor: Schema.NullOr(Schema.String),
  stats: Schema.Struct({
    total_customers: Schema.Int,
    total_revenue: Schema.Struct({ amount: Schema.Number, currency: Schema.String }),
    total_transactions: Schema.Int
  })
})

export const RefundResponse = Schema.Struct({
  refund: Schema.Struct({
    refundId: Schema.String,
    paymentId: Schema.String,
    amount: AmountView,
    status: Schema.Literal("requested"),
    createdAt: Timestamp,
    livemode: Livemode.annotations({ description: "The refunded payment's `livemode`" })
  })
}).annotations({ identifier: "RefundResponse" })
