/**
 * Shared pieces of the payment end-to-end tests: creating payments over HTTP,
 * driving the chain's side of a payment (processing, succeeded, failed)
 * through the running server's own `Payments` service, and small query and
 * timing helpers.
 */
import { randomBytes } from "node:crypto"
import {
  type Caip10,
  type Caip19,
  type FailureCode,
  type MerchantId,
  Merchants,
  type MerchantStatus,
  type PaymentId,
  type PaymentTransition,
  Payments
} from "@pay/core"
import { Effect, type Either } from "effect"
import { expect } from "vitest"
import type { ApiResponse, Client, E2eServer, Json } from "./e2e-support.js"
import { newKey } from "./e2e-support.js"

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

/** Creates a payment (201 expected) and returns the create answer's body. */
export const newPayment = async (
  api: Client,
  merchantId: string,
  body: {
    readonly referenceId?: string
    readonly amount?: { readonly unit: string; readonly value: string }
    readonly expiresAt?: number | string
    readonly checkout?: { readonly successUrl: string; readonly errorUrl: string }
  } = {},
  options: { readonly key?: string } = {}
): Promise<Json> => {
  const response = await createPaymentRequest(
    api,
    { referenceId: "order-1", amount: usd("1050"), ...body },
    { merchantId, idempotencyKey: newKey(), ...options }
  )
  expect(response.status, response.text).toBe(201)
  return response.body
}

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
export const timed = async (
  start: number,
  request: Promise<ApiResponse>
): Promise<{ readonly response: ApiResponse; readonly at: number }> => {
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
  server.runEngine(
    Effect.either(Payments.use((p) => p.transition(paymentId as PaymentId, change)))
  )

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
