/**
 * `npm run pay -- merchants list` and `npm run pay -- payments get <id>`: what
 * the database holds, read for an operator who has no API key at hand (a lost
 * one, a support question). They change nothing.
 */
import { Args, Command, Options } from "@effect/cli"
import {
  type Amount,
  amountDisplay,
  amountToWire,
  type Caip2,
  ChainJobStore,
  effectiveStatus,
  formatMajor,
  formatUnit,
  type Merchant,
  MerchantId,
  Merchants,
  type Partner,
  PartnerId,
  Partners,
  type Payment,
  PaymentId,
  Payments,
  type TokenInfo,
  TokenRegistry,
  type TokenRegistryShape
} from "@pay/core"
import { CAIP2_CHAIN_ID, TEST_USDC_ADDRESS } from "@pay/sandbox-chain"
import { Effect, type Layer, Option, Schema } from "effect"
import { invalidInput, notFound } from "./cli-errors.js"

/** What cli.ts shares with these commands. */
export interface LookupParts {
  readonly database: Options.Options<string>
  readonly json: Options.Options<boolean>
  readonly onDatabase: (
    database: string
  ) => Layer.Layer<Merchants | Partners | Payments | TokenRegistry | ChainJobStore, unknown>
  readonly print: (asJson: boolean, value: unknown, text: string) => Effect.Effect<void>
}

/**
 * The sandbox's test USDC, at the address it has on every run of the sandbox
 * chain ("USD Coin", USDC, 6 decimals: TestUSDC.sol). The server learns it from
 * the chain it starts; the CLI starts none, so it is named here, or the
 * walk-through's payments would show in minor units.
 */
const SANDBOX_USDC: TokenInfo = {
  asset: `${CAIP2_CHAIN_ID}/erc20:${TEST_USDC_ADDRESS}` as TokenInfo["asset"],
  symbol: "USDC",
  name: "USD Coin",
  decimals: 6,
  iconUrl: null
}

/** The engine's tokens, and the sandbox's. */
export const withSandboxToken = (registry: TokenRegistryShape): TokenRegistryShape => ({
  ...registry,
  token: (asset) =>
    registry.token(asset) ??
    (asset.toLowerCase() === SANDBOX_USDC.asset.toLowerCase() ? SANDBOX_USDC : undefined)
})

const LIMIT_MAX = 1000
const isPartnerId = Schema.is(PartnerId)
const isMerchantId = Schema.is(MerchantId)

/** Partners named in a refusal; past this many, `partners list` shows the rest. */
const PARTNERS_NAMED = 5

/**
 * The partner a command is about: the one `--partner` names, else the only one
 * there is. None when the database has no partner yet.
 */
export const pickPartner = (given: Option.Option<string>) =>
  Effect.gen(function* () {
    const partners = yield* Partners
    if (Option.isSome(given)) {
      const id = given.value.trim()
      if (!isPartnerId(id)) {
        return yield* Effect.fail(
          invalidInput(`--partner must be a partner id (ptnr_…), not ${JSON.stringify(id)}`)
        )
      }
      const found = yield* partners.find(id)
      if (Option.isNone(found)) return yield* Effect.fail(notFound(`No partner ${id}`))
      return found
    }
    const all = yield* partners.list
    if (all.length <= 1) return Option.fromNullable(all[0])
    const named = all.slice(0, PARTNERS_NAMED).map((p) => `${p.id} (${p.name})`)
    return yield* Effect.fail(
      invalidInput(
        `this database has ${all.length} partners: name one with --partner: ${named.join(", ")}${all.length > PARTNERS_NAMED ? ", … (`pay partners list` shows them all)" : ""}`
      )
    )
  })

const merchantJson = (m: Merchant) => ({
  id: m.id,
  partnerId: m.partnerId,
  name: m.name,
  email: m.email,
  status: m.status,
  createdAt: m.createdAt.toISOString()
})

const STATUS_WIDTH = "suspended".length

const merchantLine = (m: Merchant) =>
  [
    m.id,
    m.status.padEnd(STATUS_WIDTH),
    m.createdAt.toISOString(),
    m.name,
    ...(m.email === null ? [] : [`<${m.email}>`])
  ].join("  ")

const merchantsText = (
  partner: Partner,
  merchants: ReadonlyArray<Merchant>,
  total: number,
  more: string | undefined
) =>
  merchants.length === 0
    ? `No merchants of partner ${partner.id} (${partner.name})${total > 0 ? " on this page" : " yet"}.`
    : [
        `Merchants of partner ${partner.id} (${partner.name}), newest first: ${merchants.length} of ${total}`,
        ...merchants.map(merchantLine),
        ...(more === undefined ? [] : [`(more: --before ${more})`])
      ].join("\n")

/** An amount for people: `10.50 USD`, `10.500000 USDC on Base`; raw units for a token not known here. */
export const amountText = (amount: Amount, registry: TokenRegistryShape): string => {
  const display = amountDisplay(amount.unit, registry)
  if (display === undefined) return `${amount.value} minor units of ${formatUnit(amount.unit)}`
  const network = "networkName" in display ? ` on ${display.networkName}` : ""
  return `${formatMajor(amount.value, display.decimals)} ${display.assetSymbol}${network}`
}

const inToken = (p: Payment, value: bigint): Amount | undefined =>
  p.tokenAmount === null
    ? undefined
    : { unit: { kind: "token", asset: p.tokenAmount.asset }, value }

/**
 * Said of a payment made before the run of its chain the engine works on now
 * began (the sandbox starts fresh with every start, core's ChainInstances.ts):
 * its transactions were on an earlier run, which is gone.
 */
export const earlierRunNote = (runSince: Date) =>
  `its transactions were on an earlier run of the sandbox chain, gone since ${runSince.toISOString()} (the chain starts fresh with every start); its history is kept as it was`

/** When the payment's chain has been on a new run since it was made: that run's start. */
export const earlierRunOf = (
  p: Payment,
  run: Option.Option<{ readonly since: Date }>
): Date | undefined =>
  p.transaction !== null && Option.isSome(run) && run.value.since > p.createdAt
    ? run.value.since
    : undefined

/** One payment for scripts: amounts as the API writes them (minor units as strings). */
export const paymentJson = (
  p: Payment,
  merchant: Merchant | undefined,
  registry: TokenRegistryShape,
  now: Date,
  earlierRun?: Date
) => {
  const token = (value: bigint) => {
    const amount = inToken(p, value)
    return amount === undefined ? null : amountToWire(amount, registry)
  }
  return {
    id: p.id,
    status: effectiveStatus(p, now),
    failureCode: p.failureCode,
    cancelledReason: p.cancelledReason,
    amount: amountToWire(p.amount, registry),
    tokenAmount: p.tokenAmount === null ? null : token(p.tokenAmount.value),
    partnerId: p.partnerId,
    merchant: {
      id: p.merchantId,
      name: merchant?.name ?? null,
      status:
        merchant === undefined ? null : merchant.deletedAt === null ? merchant.status : "deleted"
    },
    referenceId: p.referenceId,
    buyer: p.buyer,
    transaction: p.transaction,
    txId: p.txId,
    fees:
      p.fees === null
        ? null
        : { total: token(p.fees.total), fixed: token(p.fees.fixed), percentage: p.fees.percentage },
    settlement:
      p.settlement === null
        ? null
        : {
            status: p.settlement.status,
            amount: token(p.settlement.amount),
            destination: p.settlement.destination,
            txHash: p.settlement.txHash,
            settledAt: p.settlement.settledAt?.toISOString() ?? null
          },
    refund:
      p.refund === null ? null : { id: p.refund.id, createdAt: p.refund.createdAt.toISOString() },
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
    expiresAt: p.expiresAt.toISOString(),
    finalAt: p.finalAt?.toISOString() ?? null,
    ...(earlierRun === undefined ? {} : { note: earlierRunNote(earlierRun) })
  }
}

/** One payment for people: a line per fact, the ones it does not have yet left out. */
export const paymentText = (
  p: Payment,
  merchant: Merchant | undefined,
  registry: TokenRegistryShape,
  now: Date,
  earlierRun?: Date
): string => {
  const status = effectiveStatus(p, now)
  const token = (value: bigint) => {
    const amount = inToken(p, value)
    return amount === undefined ? String(value) : amountText(amount, registry)
  }
  const rows: Array<readonly [string, string]> = [
    [
      "Status",
      [
        status,
        ...(p.failureCode === null ? [] : [`failureCode ${p.failureCode}`]),
        ...(p.cancelledReason === null ? [] : [p.cancelledReason])
      ].join(", ")
    ],
    ["Amount", amountText(p.amount, registry)],
    ...(p.tokenAmount === null ||
    (p.amount.unit.kind === "token" && p.amount.value === p.tokenAmount.value)
      ? []
      : [["Paid in", token(p.tokenAmount.value)] as const]),
    [
      "Merchant",
      merchant === undefined
        ? p.merchantId
        : `${p.merchantId} (${merchant.name}), ${merchant.deletedAt === null ? merchant.status : "deleted"}`
    ],
    ["Partner", p.partnerId],
    ["Reference", p.referenceId],
    ...(p.buyer === null
      ? []
      : [
          [
            "Buyer",
            `${p.buyer.account}${p.buyer.providerName === null ? "" : ` (${p.buyer.providerName})`}`
          ] as const
        ]),
    ...(p.transaction === null
      ? []
      : [
          [
            "Transaction",
            `${p.transaction.hash} on network ${p.transaction.networkId}${p.transaction.nonce === null ? "" : `, nonce ${p.transaction.nonce}`}`
          ] as const
        ]),
    ...(p.fees === null
      ? []
      : [
          [
            "Fees",
            `${token(p.fees.total)} (${p.fees.percentage} %${p.fees.fixed > 0n ? ` + ${token(p.fees.fixed)}` : ""})`
          ] as const
        ]),
    ...(p.settlement === null
      ? []
      : [
          [
            "Settlement",
            [
              `${p.settlement.status}: ${token(p.settlement.amount)}`,
              ...(p.settlement.destination === null ? [] : [`to ${p.settlement.destination}`]),
              ...(p.settlement.txHash === null ? [] : [`tx ${p.settlement.txHash}`]),
              ...(p.settlement.settledAt === null
                ? []
                : [`at ${p.settlement.settledAt.toISOString()}`])
            ].join(", ")
          ] as const
        ]),
    ...(p.refund === null
      ? []
      : [["Refund", `${p.refund.id}, requested ${p.refund.createdAt.toISOString()}`] as const]),
    ["Created", p.createdAt.toISOString()],
    ["Updated", p.updatedAt.toISOString()],
    [p.finalAt === null ? "Expires" : "Final", (p.finalAt ?? p.expiresAt).toISOString()],
    ...(earlierRun === undefined ? [] : [["Note", earlierRunNote(earlierRun)] as const])
  ]
  const width = Math.max(...rows.map(([label]) => label.length)) + 1
  return [
    `Payment ${p.id}`,
    ...rows.map(([label, value]) => `  ${`${label}:`.padEnd(width)} ${value}`)
  ].join("\n")
}

export const lookupCommands = ({ database, json, onDatabase, print }: LookupParts) => {
  const now = Effect.map(Effect.clock, (c) => new Date(c.unsafeCurrentTimeMillis()))

  const merchantsList = Command.make(
    "list",
    {
      partner: Options.text("partner").pipe(
        Options.withPseudoName("ptnr_…"),
        Options.withDescription(
          "The partner whose merchants to list (ptnr_…); needed only when the database has several"
        ),
        Options.optional
      ),
      limit: Options.integer("limit").pipe(
        Options.withPseudoName("count"),
        Options.withDescription(`At most this many merchants (1 to ${LIMIT_MAX}, default 50)`),
        Options.withDefault(50)
      ),
      before: Options.text("before").pipe(
        Options.withPseudoName("mrch_…"),
        Options.withDescription("Only merchants older than this one (mrch_…): the next page"),
        Options.optional
      ),
      database,
      json
    },
    ({ partner, limit, before, database, json }) =>
      Effect.gen(function* () {
        // The flags are checked before the database is opened: a bad one touches nothing.
        if (!Number.isInteger(limit) || limit < 1 || limit > LIMIT_MAX) {
          return yield* Effect.fail(invalidInput(`--limit must be 1 to ${LIMIT_MAX}`))
        }
        const beforeId = Option.getOrUndefined(before)?.trim()
        if (beforeId !== undefined && !isMerchantId(beforeId)) {
          return yield* Effect.fail(
            invalidInput(`--before must be a merchant id (mrch_…), not ${JSON.stringify(beforeId)}`)
          )
        }
        yield* Effect.gen(function* () {
          const picked = yield* pickPartner(partner)
          if (Option.isNone(picked)) {
            return yield* print(json, [], "No partners yet, so no merchants.")
          }
          const page = yield* (yield* Merchants).list(picked.value, { before: beforeId, limit })
          const { merchants } = page
          const more = merchants.length === limit ? merchants[merchants.length - 1]!.id : undefined
          yield* print(
            json,
            merchants.map(merchantJson),
            merchantsText(picked.value, merchants, page.totalCount, more)
          )
        }).pipe(Effect.provide(onDatabase(database)))
      })
  ).pipe(
    Command.withDescription(
      "List a partner's merchants, newest first, with their status (deleted ones left out)"
    )
  )

  const paymentsGet = Command.make(
    "get",
    {
      paymentId: Args.text({ name: "payment-id" }).pipe(
        Args.withDescription("The payment (pay_…)")
      ),
      database,
      json
    },
    ({ paymentId, database, json }) =>
      Effect.gen(function* () {
        const id = paymentId.trim()
        if (!Schema.is(PaymentId)(id)) {
          return yield* Effect.fail(
            invalidInput(`${JSON.stringify(id)} is not a payment id (pay_…)`)
          )
        }
        yield* Effect.gen(function* () {
          const payment = yield* (yield* Payments)
            .find(id)
            .pipe(
              Effect.catchTag("PaymentNotFound", () => Effect.fail(notFound(`No payment ${id}`)))
            )
          const merchant = Option.getOrUndefined(
            yield* (yield* Merchants).lookup(payment.merchantId)
          )
          const registry = withSandboxToken(yield* TokenRegistry)
          const at = yield* now
          const earlierRun =
            payment.transaction === null
              ? undefined
              : earlierRunOf(
                  payment,
                  yield* (yield* ChainJobStore).chainInstance(
                    `eip155:${payment.transaction.networkId}` as Caip2
                  )
                )
          yield* print(
            json,
            paymentJson(payment, merchant, registry, at, earlierRun),
            paymentText(payment, merchant, registry, at, earlierRun)
          )
        }).pipe(Effect.provide(onDatabase(database)))
      })
  ).pipe(
    Command.withDescription(
      "Show one payment: status, amount, merchant, buyer, transaction, settlement, failureCode"
    )
  )

  return { merchantsList, paymentsGet }
}
