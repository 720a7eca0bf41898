/**
 * A wallet, for the gateway's end-to-end tests: a wallet app's key, a buyer
 * key funded by the sandbox faucet, and the calls a wallet SDK makes
 * (WIRE.md section 1), signing the typed data it is handed as a wallet would.
 */
import { WalletApps } from "@pay/core"
import { Effect } from "effect"
import { type Hex, hexToBigInt, type TypedDataDefinition } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { expect } from "vitest"
import {
  type ApiResponse,
  type Client,
  client,
  type E2eServer,
  type Json,
  newKey
} from "./e2e-support.js"
import { newPayment } from "./payments-support.js"

export const WALLET_NAME = "E2E Wallet"
export const WALLET_ICON = "https://wallet.example/icon.png"

/** A wallet app of the server, and a client that sends its key as the SDKs do. */
export const walletClient = async (
  server: E2eServer
): Promise<{ api: Client; appId: string; apiKey: string }> => {
  const { app, apiKey } = await server.runEngine(
    Effect.flatMap(WalletApps, (apps) => apps.create({ name: WALLET_NAME, iconUrl: WALLET_ICON }))
  )
  const base = client(() => server.baseUrl)
  const sdkHeaders = {
    "api-version": "2026-02-19.preview",
    "wcp-version": "2026-02-19.preview",
    "sdk-name": "e2e-sdk",
    "sdk-version": "1.0.0",
    "sdk-platform": "node",
    accept: "application/json"
  }
  const api: Client = {
    request: (method, path, options = {}) =>
      base.request(method, path, {
        ...options,
        key: options.key === undefined ? apiKey : options.key,
        headers: { ...sdkHeaders, ...options.headers }
      }),
    get: (path, options = {}) => api.request("GET", path, options)
  }
  return { api, appId: app.id, apiKey }
}

export interface Buyer {
  readonly key: Hex
  readonly address: Hex
  /** CAIP-10 on the sandbox chain. */
  readonly account: string
}

export const newBuyer = (): Buyer => {
  const key = generatePrivateKey()
  const address = privateKeyToAccount(key).address
  return { key, address, account: `eip155:31337:${address}` }
}

/** Mints test USDC to the buyer through the server's own faucet route. */
export const fund = async (server: E2eServer, buyer: Buyer, minorUnits: bigint) => {
  const response = await fetch(`${server.baseUrl}/sandbox/faucet`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ account: buyer.account, amount: minorUnits.toString() })
  })
  expect(response.status).toBe(200)
}

export const usdcBalance = (server: E2eServer, address: Hex) =>
  server.sandbox.publicClient.readContract({
    address: server.sandbox.token.address,
    abi: server.sandbox.token.abi,
    functionName: "balanceOf",
    args: [address]
  })

/** A merchant with a settlement in the sandbox's USDC; its id. */
export const settledMerchant = async (partner: Client): Promise<string> => {
  const created = await partner.request("POST", "/v1/merchants", {
    idempotencyKey: newKey(),
    body: { merchantName: "Gateway Shop", merchantEmail: "gw@shop.example" }
  })
  expect(created.status, created.text).toBe(201)
  const merchantId = created.body.merchant.id as string
  const settled = await partner.request("POST", `/v1/merchants/${merchantId}/settlements/crypto`, {
    idempotencyKey: newKey(),
    body: {
      settlements: [
        {
          asset: "eip155:31337/erc20:0x1cd2272Cf2400da5cB86ccc008e3bE381C167116",
          destination: "eip155:31337:0x000000000000000000000000000000000000dEaD"
        }
      ]
    }
  })
  expect(settled.status, settled.text).toBe(201)
  return merchantId
}

export const paymentFor = (partner: Client, merchantId: string, value = "1050", extra: Json = {}) =>
  newPayment(partner, merchantId, { amount: { unit: "iso4217/USD", value }, ...extra })

export const options = (wallet: Client, paymentId: string, accounts: ReadonlyArray<string>) =>
  wallet.request("POST", `/v1/gateway/payment/${paymentId}/options?includePaymentInfo=true`, {
    body: { accounts, refresh: null }
  })

/** Signs an `eth_signTypedData_v4` action as a wallet does: from the JSON it was handed. */
export const signAction = async (buyerKey: Hex, action: Json): Promise<Hex> => {
  expect(action.type).toBe("walletRpc")
  expect(action.data.method).toBe("eth_signTypedData_v4")
  const typed = JSON.parse(action.data.params[1])
  const { EIP712Domain: _, ...types } = typed.types
  const message = Object.fromEntries(
    Object.entries(typed.message as Record<string, string>).map(([k, v]) => [
      k,
      ["value", "validAfter", "validBefore"].includes(k) ? hexToBigInt(v as Hex) : v
    ])
  )
  const definition = {
    domain: { ...typed.domain, chainId: hexToBigInt(typed.domain.chainId) },
    types,
    primaryType: typed.primaryType,
    message
  } as TypedDataDefinition
  return privateKeyToAccount(buyerKey).signTypedData(definition)
}

export const confirm = (
  wallet: Client,
  paymentId: string,
  body: Json,
  query = "?maxPollMs=15000"
): Promise<ApiResponse> =>
  wallet.request("POST", `/v1/gateway/payment/${paymentId}/confirm${query}`, { body })
