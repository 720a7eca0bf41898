/**
 * Shared pieces of the payment end-to-end tests: creating payments through
 * the typed client (and over raw HTTP for the wire's own tests), driving the
 * chain's side of a payment (processing, succeeded, failed) through the
 * running server's own `Payments` service, a dataset seeded through the
 * client, and small query and timing helpers.
 */
import { randomBytes } from "node:crypto"
import type { PayPromiseClient } from "@pay/client"
import {
  type Caip10,
  type Caip19,
  type FailureCode,
  type MerchantId,
  type MerchantStatus,
  Merchants,
  type PaymentId,
  Payments,
  type PaymentTransition
} from "@pay/core"
import { Effect, type Either } from "effect"
import { expect } from "vitest"
import {
  type ApiResponse,
  type Client,
  createMerchant,
  createPartner,
  type E2eServer,
  type Json,
  type Merchant,
  type PayClient,
  payClient
} from "./e2e-support.js"

export const USDC_BASE = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
export const USDC_ETHEREUM = "eip155:1/erc20:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
export const EURC_BASE = "eip155:8453/erc20:0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42"
export const MAX_UINT256 = (2n ** 256n - 1n).toString()

export const PAYMENT_ID = /^pay_[0-9A-Za-z]{20}$/
export const REFUND_ID = /^rfnd_[0-9A-Za-z]{20}$/

/** A well-formed payment id that names nothing. */
export const UNKNOWN_PAYMENT = "pay_0000000000ZZZZZZZZZZ"

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** `0x` and `bytes` random bytes in lowercase hex. */
export const randomHex = (bytes: number): string => `0x${randomBytes(bytes).toString("hex")}`
export const randomAddress = (): string => randomHex(20)
export const randomTxHash = (): string => randomHex(32)

export const usd = (value: string) => ({ unit: "iso4217/USD", value })
export const token = (asset: string, value: string) => ({ unit: `caip19/${asset}`, value })

/** A query string; repeated names are given as repeated entries. */
export const qs = (entries: ReadonlyArray<readonly [string, string | number]>): string => {
  const params = new URLSearchParams(entries.map(([k, v]) => [k, String(v)]))
  const text = params.toString()
  return text === "" ? "" : `?${text}`
}

/** A query as entries; a name may repeat. */
export type Query = ReadonlyArray<readonly [string, string | number]>

type ListParams = Parameters<PayPromiseClient["payments"]["list"]>[0]

/**
 * A query's entries as the typed client's parameters (a repeated name becomes
 * a list, which the client sends as repeated entries again). The names and
 * values are the test's: the client decodes them with the definition's schema
 * before sending, so they are not checked here.
 */
export const paramsOf = <P = ListParams>(query: Query): P => {
  const params: Record<string, string | number | Array<string | number>> = {}
  for (const [name, value] of query) {
    const seen = params[name]
    params[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value]
  }
  return params as P
}

export interface CreateOptions {
  /** The `Merchant-Id` header; `null` sends none. */
  readonly merchantId: string | null
  readonly idempotencyKey?: string
  readonly key?: string
}

/** POST /v1/payments. */
export const createPaymentRequest = (api: Client, body: unknown, options: CreateOptions) =>
  api.request("POST", "/v1/payments", {
    body,
    ...(options.merchantId === null ? {} : { headers: { "merchant-id": options.merchantId } }),
    ...(options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey }),
    ...(options.key === undefined ? {} : { key: options.key })
  })

/** What the typed client answers for a new payment. */
export type CreatedPayment = Awaited<ReturnType<PayPromiseClient["payments"]["create"]>>

/**
 * Creates a payment through the typed client (201 or it rejects; the client
 * sends a fresh Idempotency-Key) and returns the create answer.
 */
export const newPayment = (
  pay: PayPromiseClient,
  merchantId: string,
  body: {
    readonly referenceId?: string
    readonly amount?: { readonly unit: string; readonly value: string }
    readonly expiresAt?: number | string | null
    readonly checkout?: { readonly successUrl: string; readonly errorUrl: string } | null
  } = {}
): Promise<CreatedPayment> =>
  pay.payments.create(merchantId, { referenceId: "order-1", amount: usd("1050"), ...body })

/** GET /v1/payments/{id}/status with the `Merchant-Id` header. */
export const getStatus = (
  api: Client,
  paymentId: string,
  merchantId: string | null,
  query = "",
  key?: string
) =>
  api.get(`/v1/payments/${paymentId}/status${query}`, {
    ...(merchantId === null ? {} : { headers: { "merchant-id": merchantId } }),
    ...(key === undefined ? {} : { key })
  })

/** POST /v1/payments/{id}/cancel with the `Merchant-Id` header. */
export const cancel = (api: Client, paymentId: string, merchantId: string, key?: string) =>
  api.request("POST", `/v1/payments/${paymentId}/cancel`, {
    headers: { "merchant-id": merchantId },
    ...(key === undefined ? {} : { key })
  })

/** POST /v1/refunds. */
export const refund = (api: Client, paymentId: string, key?: string) =>
  api.request("POST", "/v1/refunds", {
    body: { paymentId },
    ...(key === undefined ? {} : { key })
  })

/** GET /v1/payments/{id}. */
export const details = (api: Client, paymentId: string, key?: string) =>
  api.get(`/v1/payments/${paymentId}`, key === undefined ? {} : { key })

/** A request and when its answer arrived, in ms since `start`. */
export const timed = async <A = ApiResponse>(
  start: number,
  request: Promise<A>
): Promise<{ readonly response: A; readonly at: number }> => {
  const response = await request
  return { response, at: performance.now() - start }
}

// ---- the chain's side, through the server's own services

/** Applies a transition on the running server; Left when the state machine refuses it. */
export const tryTransition = (
  server: E2eServer,
  paymentId: string,
  change: PaymentTransition
): Promise<Either.Either<Json, Json>> =>
  server.runEngine(Effect.either(Payments.use((p) => p.transition(paymentId as PaymentId, change))))

export const transition = (server: E2eServer, paymentId: string, change: PaymentTransition) =>
  server.runEngine(Payments.use((p) => p.transition(paymentId as PaymentId, change)))

export interface ProcessingOptions {
  readonly asset?: string
  readonly value?: string
  /** The buyer's CAIP-10 account. */
  readonly account?: string
  readonly providerName?: string | null
  readonly hash?: string
  readonly nonce?: number | null
}

export const startProcessingChange = (options: ProcessingOptions = {}): PaymentTransition => {
  const asset = options.asset ?? USDC_BASE
  const chainRef = asset.split("/")[0]!.split(":")[1]!
  return {
    _tag: "StartProcessing",
    tokenAmount: { asset: asset as Caip19, value: BigInt(options.value ?? "10500000") },
    buyer: {
      account: (options.account ?? `eip155:${chainRef}:${randomAddress()}`) as Caip10,
      providerName: options.providerName === undefined ? "MetaMask" : options.providerName,
      providerIcon: null
    },
    transaction: {
      networkId: chainRef,
      hash: options.hash ?? randomTxHash(),
      nonce: options.nonce === undefined ? 1 : options.nonce
    }
  }
}

export const startProcessing = (
  server: E2eServer,
  paymentId: string,
  options: ProcessingOptions = {}
) => transition(server, paymentId, startProcessingChange(options))

export const succeed = (server: E2eServer, paymentId: string, txId = randomTxHash()) =>
  transition(server, paymentId, { _tag: "Succeed", txId, transaction: null })

export const fail = (
  server: E2eServer,
  paymentId: string,
  failureCode: FailureCode = "transaction_reverted"
) => transition(server, paymentId, { _tag: "Fail", failureCode })

export const decline = (server: E2eServer, paymentId: string) =>
  transition(server, paymentId, { _tag: "Decline" })

export const setMerchantStatus = (server: E2eServer, merchantId: string, status: MerchantStatus) =>
  server.runEngine(Merchants.use((m) => m.setStatus(merchantId as MerchantId, status)))

// ---- a dataset of payments and what listings must answer about it, computed here

export interface TokenFacts {
  readonly symbol: string
  readonly decimals: number
  /** CAIP-2 chain id. */
  readonly chain: string
}

export const TOKENS: Readonly<Record<string, TokenFacts>> = {
  [USDC_BASE]: { symbol: "USDC", decimals: 6, chain: "eip155:8453" },
  [USDC_ETHEREUM]: { symbol: "USDC", decimals: 6, chain: "eip155:1" },
  [EURC_BASE]: { symbol: "EURC", decimals: 6, chain: "eip155:8453" }
}

const FIAT_DECIMALS: Readonly<Record<string, number>> = { USD: 2, EUR: 2, JPY: 0 }

/** The currency a revenue line names (ISO code or token symbol) and its decimals. */
export const currencyOf = (
  unit: string
): { readonly currency: string; readonly decimals: number } => {
  if (unit.startsWith("iso4217/")) {
    const code = unit.slice("iso4217/".length)
    return { currency: code, decimals: FIAT_DECIMALS[code]! }
  }
  const facts = TOKENS[unit.slice("caip19/".length)]!
  return { currency: facts.symbol, decimals: facts.decimals }
}

export type Fate =
  | "open"
  | "processing"
  | "succeeded"
  | "failed"
  | "declined"
  | "cancelled"
  | "expired"

export interface PaymentSpec {
  /** Index of the dataset's merchant. */
  readonly merchant: 0 | 1
  readonly ref: string
  readonly unit: string
  readonly value: string
  readonly fate: Fate
  /** The token a fiat payment is paid with (a token payment pays in its own token). */
  readonly pay?: string
  /** The buyer's CAIP-10 account, once processing. */
  readonly buyer?: string
  readonly wallet?: string
  readonly refund?: boolean
}

/** A payment as the test expects every listing to show it. */
export interface ModelPayment {
  readonly id: string
  readonly merchantId: string
  readonly referenceId: string
  readonly unit: string
  readonly value: string
  /** The status a reader sees (an overdue unpaid payment is expired). */
  readonly status: string
  readonly tokenAsset: string | null
  readonly buyer: string | null
  readonly wallet: string | null
  readonly txHash: string | null
  readonly refunded: boolean
  /** Creation time in ms, as the list shows it. */
  readonly createdAt: number
  readonly createdAtText: string
}

export interface Dataset {
  readonly key: string
  /** The typed client with the dataset partner's key. */
  readonly pay: PayClient
  readonly merchants: readonly [Merchant, Merchant]
  readonly payments: ReadonlyArray<ModelPayment>
}

const FATE_STATUS: Record<Fate, string> = {
  open: "requires_action",
  processing: "processing",
  succeeded: "succeeded",
  failed: "failed",
  declined: "failed",
  cancelled: "cancelled",
  expired: "expired"
}

/**
 * Creates `specs` in order for a new partner's two merchants, through the
 * typed client with that partner's key, drives each to its fate, and waits
 * for the expiring ones to pass their time.
 */
export const buildDataset = async (
  server: E2eServer,
  specs: ReadonlyArray<PaymentSpec>
): Promise<Dataset> => {
  const { apiKey: key } = await createPartner(server, `Dataset ${randomHex(4)}`)
  const pay = payClient(server, key)
  const merchants = [
    await createMerchant(pay, "Alpha Store"),
    await createMerchant(pay, "Beta Store")
  ] as const
  let lastExpiry = 0
  const made: Array<Omit<ModelPayment, "createdAt" | "createdAtText">> = []
  for (const spec of specs) {
    const merchantId = merchants[spec.merchant].id
    const expiresAt = spec.fate === "expired" ? new Date(Date.now() + 1500) : undefined
    if (expiresAt) lastExpiry = Math.max(lastExpiry, expiresAt.getTime())
    const created = await newPayment(pay, merchantId, {
      referenceId: spec.ref,
      amount: { unit: spec.unit, value: spec.value },
      ...(expiresAt ? { expiresAt: expiresAt.toISOString() } : {})
    })
    const id = created.paymentId
    const isToken = spec.unit.startsWith("caip19/")
    const paidWith = isToken ? spec.unit.slice("caip19/".length) : (spec.pay ?? USDC_BASE)
    let buyer: string | null = null
    let txHash: string | null = null
    if (["processing", "succeeded", "failed"].includes(spec.fate)) {
      const chainRef = TOKENS[paidWith]!.chain.split(":")[1]
      buyer = spec.buyer ?? `eip155:${chainRef}:${randomAddress()}`
      txHash = randomTxHash()
      await startProcessing(server, id, {
        asset: paidWith,
        value: isToken ? spec.value : "1000000",
        account: buyer,
        providerName: spec.wallet ?? "MetaMask",
        hash: txHash
      })
      if (spec.fate === "succeeded") await succeed(server, id)
      if (spec.fate === "failed") await fail(server, id)
    }
    if (spec.fate === "declined") await decline(server, id)
    if (spec.fate === "cancelled") {
      expect((await pay.payments.cancel(id, { merchantId })).status).toBe("cancelled")
    }
    if (spec.refund) expect((await pay.refunds.create(id)).refund.paymentId).toBe(id)
    made.push({
      id,
      merchantId,
      referenceId: spec.ref,
      unit: spec.unit,
      value: spec.value,
      status: FATE_STATUS[spec.fate],
      tokenAsset: buyer !== null || isToken ? paidWith : null,
      buyer,
      wallet: buyer === null ? null : (spec.wallet ?? "MetaMask"),
      txHash,
      refunded: spec.refund === true
    })
  }
  await sleep(Math.max(0, lastExpiry - Date.now() + 50))
  // The expired ones recorded now, rather than by the server's sweep some seconds later, in the
  // middle of a test that reads the same listing twice (its `last_updated_at` moving between).
  await server.runEngine(Effect.flatMap(Payments, (p) => p.sweepExpired))
  const listed = await pay.payments.list({ limit: 200 })
  const createdAt = new Map<string, string>(listed.data.map((p) => [p.paymentId, p.createdAt]))
  const payments = made.map((p) => {
    const text = createdAt.get(p.id)
    expect(text, `${p.id} is listed`).toBeDefined()
    return { ...p, createdAt: Date.parse(text!), createdAtText: text! }
  })
  return { key, pay, merchants, payments }
}

export type SortBy = "date" | "amount"
export type SortDir = "asc" | "desc"

/** The listing order: by creation time or amount (minor units), then by id, both in `dir`. */
export const sortModel = (
  rows: ReadonlyArray<ModelPayment>,
  by: SortBy = "date",
  dir: SortDir = "desc"
): Array<ModelPayment> => {
  const sign = dir === "asc" ? 1 : -1
  return [...rows].sort((a, b) => {
    const [x, y] =
      by === "date"
        ? [BigInt(a.createdAt), BigInt(b.createdAt)]
        : [BigInt(a.value), BigInt(b.value)]
    const order = x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
    return sign * order
  })
}

export interface ExpectedStats {
  readonly totalRevenue: Array<{ readonly amount: number; readonly currency: string }>
  readonly totalTransactions: number
  readonly totalCustomers: number
}

/** Revenue per currency in major units, succeeded payments, distinct buyer addresses. */
export const modelStats = (rows: ReadonlyArray<ModelPayment>): ExpectedStats => {
  const succeeded = rows.filter((r) => r.status === "succeeded")
  const totals = new Map<string, { total: bigint; decimals: number }>()
  for (const r of succeeded) {
    const { currency, decimals } = currencyOf(r.unit)
    const line = totals.get(currency) ?? { total: 0n, decimals }
    totals.set(currency, { total: line.total + BigInt(r.value), decimals })
  }
  const addresses = new Set(
    succeeded.flatMap((r) => (r.buyer === null ? [] : [r.buyer.split(":")[2]!.toLowerCase()]))
  )
  return {
    totalRevenue: [...totals]
      .map(([currency, { total, decimals }]) => ({
        amount: Number(total) / 10 ** decimals,
        currency
      }))
      .sort((a, b) => (a.currency < b.currency ? -1 : 1)),
    totalTransactions: succeeded.length,
    totalCustomers: addresses.size
  }
}

/** A stats object with its revenue lines in currency order, to compare with `modelStats`. */
export const normalStats = (stats: Json): Json => ({
  ...stats,
  totalRevenue: [...stats.totalRevenue].sort((a: Json, b: Json) =>
    a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0
  )
})

const UNITS: Readonly<Record<string, string>> = {
  USD: "iso4217/USD",
  EUR: "iso4217/EUR",
  JPY: "iso4217/JPY",
  "USDC/base": `caip19/${USDC_BASE}`,
  "USDC/eth": `caip19/${USDC_ETHEREUM}`,
  "EURC/base": `caip19/${EURC_BASE}`
}
const PAID_WITH: Readonly<Record<string, string>> = {
  "USDC/base": USDC_BASE,
  "USDC/eth": USDC_ETHEREUM,
  "EURC/base": EURC_BASE
}
// Buyer addresses; X pays on Base and on Ethereum and must count as one customer.
const ADDRESSES: Readonly<Record<string, string>> = {
  X: `0x${"a1".repeat(20)}`,
  Y: `0x${"b2".repeat(20)}`,
  Z: `0x${"c3".repeat(20)}`,
  W: `0x${"d4".repeat(20)}`,
  V: `0x${"e5".repeat(20)}`,
  U: `0x${"f6".repeat(20)}`
}
const CHAINS: Readonly<Record<string, string>> = { base: "eip155:8453", eth: "eip155:1" }

/**
 * 40 payments over two merchants: every status, fiat USD/EUR/JPY and token
 * units, repeated buyers (X on two chains), a few refunds, equal amounts (the
 * id breaks ties), references in mixed case. Succeeded token payments use one
 * token per symbol, so each currency has one revenue line.
 * Columns: merchant | reference | unit | minor units | fate | paid with | buyer | wallet | refund
 */
const TABLE = `
0 | INV-2024/A-001 | USD       | 1050      | succeeded  | USDC/base | base:X | -        | refund
0 | INV-2024/A-002 | USD       | 2500      | succeeded  | USDC/eth  | eth:X  | Rainbow  |
0 | inv-2024/a-003 | EUR       | 1999      | succeeded  | EURC/base | base:Y | -        |
0 | Inv-2024/A-004 | JPY       | 1500      | succeeded  | USDC/base | base:Z | -        |
0 | INV-2024/A-005 | USDC/base | 2500000   | succeeded  | -         | base:Y | -        |
0 | INV-2024/A-006 | EURC/base | 7000000   | succeeded  | -         | base:W | -        | refund
0 | INV-2024/A-007 | USD       | 300       | open       | -         | -      | -        |
0 | INV-2024/A-008 | USD       | 301       | processing | USDC/eth  | eth:Z  | -        |
0 | INV-2024/A-009 | EUR       | 450       | failed     | USDC/base | base:Y | -        |
0 | INV-2024/A-010 | USD       | 5000      | declined   | -         | -      | -        |
0 | INV-2024/A-011 | JPY       | 800       | cancelled  | -         | -      | -        |
0 | INV-2024/A-012 | USD       | 120       | expired    | -         | -      | -        |
0 | INV-2024/A-013 | USDC/eth  | 9000000   | open       | -         | -      | -        |
0 | INV-2024/A-014 | USDC/eth  | 1000000   | processing | -         | eth:W  | -        |
0 | INV-2024/A-015 | EURC/base | 1234567   | failed     | -         | base:X | -        |
0 | INV-2024/A-016 | USD       | 99999     | succeeded  | USDC/base | base:W | -        |
0 | INV-2024/A-017 | USDC/base | 333       | expired    | -         | -      | -        |
0 | ORDER-XYZ-1    | EUR       | 10000     | succeeded  | USDC/base | base:Z | -        | refund
0 | ORDER-xyz-2    | USD       | 10        | cancelled  | -         | -      | -        |
0 | order xyz 3    | JPY       | 100000    | succeeded  | EURC/base | base:X | -        |
1 | INV-2024/B-001 | USD       | 1050      | succeeded  | USDC/base | base:V | Coinbase |
1 | INV-2024/B-002 | USD       | 777       | succeeded  | USDC/eth  | eth:Y  | -        |
1 | INV-2024/B-003 | EUR       | 2000      | open       | -         | -      | -        |
1 | INV-2024/B-004 | JPY       | 5000      | succeeded  | USDC/base | base:V | -        | refund
1 | INV-2024/B-005 | USDC/base | 5000000   | succeeded  | -         | base:U | -        |
1 | INV-2024/B-006 | EURC/base | 2000000   | processing | -         | base:U | -        |
1 | INV-2024/B-007 | USD       | 42        | failed     | USDC/eth  | eth:U  | -        |
1 | INV-2024/B-008 | USD       | 43        | declined   | -         | -      | -        |
1 | INV-2024/B-009 | USD       | 44        | cancelled  | -         | -      | -        |
1 | INV-2024/B-010 | EUR       | 45        | expired    | -         | -      | -        |
1 | INV-2024/B-011 | USD       | 1050      | open       | -         | -      | -        |
1 | INV-2024/B-012 | USDC/base | 1050      | succeeded  | -         | base:V | -        |
1 | REF-b 13       | EUR       | 1050      | processing | EURC/base | base:Y | -        |
1 | REF-b 14       | USD       | 60000     | succeeded  | USDC/base | base:X | -        |
1 | REF-b 15       | JPY       | 1         | succeeded  | USDC/base | base:Z | -        |
1 | REF-b 16       | USD       | 999999999 | open       | -         | -      | -        |
1 | REF-b 17       | EURC/base | 1         | expired    | -         | -      | -        |
1 | REF-b 18       | USD       | 2         | cancelled  | -         | -      | -        |
0 | INV-2024/A-018 | USD       | 500       | succeeded  | USDC/base | base:Y | -        |
1 | INV-2024/B-019 | EUR       | 55        | succeeded  | EURC/base | base:W | -        |
`

const cell = (value: string | undefined): string | undefined =>
  value === undefined || value === "-" || value === "" ? undefined : value

export const DATASET: ReadonlyArray<PaymentSpec> = TABLE.trim()
  .split("\n")
  .map((line) => {
    const [merchant, ref, unit, value, fate, pay, buyer, wallet, refund] = line
      .split("|")
      .map((c) => c.trim())
    const [chain, who] = cell(buyer)?.split(":") ?? []
    const paidWith = cell(pay)
    const walletName = cell(wallet)
    return {
      merchant: merchant === "1" ? 1 : 0,
      ref: ref!,
      unit: UNITS[unit!]!,
      value: value!,
      fate: fate as Fate,
      ...(paidWith ? { pay: PAID_WITH[paidWith]! } : {}),
      ...(chain && who ? { buyer: `${CHAINS[chain]}:${ADDRESSES[who]}` } : {}),
      ...(walletName ? { wallet: walletName } : {}),
      ...(refund === "refund" ? { refund: true } : {})
    } satisfies PaymentSpec
  })
