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
import { createPaymentRequest } from "./payments-support.js"

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

/** Where every test merchant settles; the sandbox takes no fees, so it gets what was paid. */
export const MERCHANT_DESTINATION: Hex = "0x000000000000000000000000000000000000dEaD"

/**
 * What the engine's side holds: the collector's balance plus the merchants'
 * destination's, read at one block. A payment adds exactly its amount, whether
 * or not its settlement has moved it on yet (and earlier payments' settlements
 * in flight change nothing).
 */
export const receivedBalance = async (server: E2eServer): Promise<bigint> => {
  const blockNumber = await server.sandbox.publicClient.getBlockNumber()
  const at = (address: Hex) =>
    server.sandbox.publicClient.readContract({
      address: server.sandbox.token.address,
      abi: server.sandbox.token.abi,
      functionName: "balanceOf",
      args: [address],
      blockNumber
    })
  return (await at(server.sandbox.collector.address)) + (await at(MERCHANT_DESTINATION))
}

/**
 * A merchant registered over HTTP with these crypto settlements (with none, no settlement call):
 * its id, and the warnings its registration answered.
 */
export const merchantSettledIn = async (
  partner: Client,
  settlements: ReadonlyArray<{ readonly asset: string; readonly destination: string }>,
  names: { readonly merchantName: string; readonly merchantEmail: string } = {
    merchantName: "Gateway Shop",
    merchantEmail: "gw@shop.example"
  }
): Promise<{ readonly merchantId: string; readonly warnings: Json }> => {
  const created = await partner.request("POST", "/v1/merchants", {
    idempotencyKey: newKey(),
    body: names
  })
  expect(created.status, created.text).toBe(201)
  const merchantId = created.body.merchant.id as string
  if (settlements.length === 0) return { merchantId, warnings: undefined }
  const settled = await partner.request("POST", `/v1/merchants/${merchantId}/settlements/crypto`, {
    idempotencyKey: newKey(),
    body: { settlements }
  })
  expect(settled.status, settled.text).toBe(201)
  return { merchantId, warnings: settled.body.warnings }
}

/** A merchant with a settlement in the sandbox's USDC; its id. */
export const settledMerchant = async (partner: Client): Promise<string> =>
  (
    await merchantSettledIn(partner, [
      {
        asset: "eip155:31337/erc20:0x1cd2272Cf2400da5cB86ccc008e3bE381C167116",
        destination: `eip155:31337:${MERCHANT_DESTINATION}`
      }
    ])
  ).merchantId

/** USDC on Base: a network the sandbox server does not run. */
export const BASE_USDC = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
/** An account on Base to settle to. */
export const BASE_DESTINATION = "eip155:8453:0x000000000000000000000000000000000000dEaD"

/**
 * A merchant settled only in USDC on Base, which the sandbox server cannot pay: its
 * registration answers warnings (returned), its payments offer wallets no option.
 */
export const baseOnlyMerchant = (partner: Client) =>
  merchantSettledIn(partner, [{ asset: BASE_USDC, destination: BASE_DESTINATION }], {
    merchantName: "Base Shop",
    merchantEmail: "base@shop.example"
  })

/** Creates a payment over HTTP (201 expected); the create answer's body. */
export const paymentFor = async (
  partner: Client,
  merchantId: string,
  value = "1050",
  extra: Json = {}
): Promise<Json> => {
  const response = await createPaymentRequest(
    partner,
    { referenceId: "order-1", amount: { unit: "iso4217/USD", value }, ...extra },
    { merchantId, idempotencyKey: newKey() }
  )
  expect(response.status, response.text).toBe(201)
  return response.body
}

export const options = (wallet: Client, paymentId: string, accounts: ReadonlyArray<string>) =>
  wallet.request("POST", `/v1/gateway/payment/${paymentId}/options?includePaymentInfo=true`, {
    body: { accounts, refresh: null }
  })

/**
 * Signs an `eth_signTypedData_v4` action as a wallet does: from the JSON it was handed.
 * `tamper` edits the message (its values as on the wire: numbers as hex strings) before signing,
 * as a compromised or buggy wallet would.
 */
export const signAction = async (
  buyerKey: Hex,
  action: Json,
  tamper: (message: Record<string, string>) => Record<string, string> = (m) => m
): Promise<Hex> => {
  expect(action.type).toBe("walletRpc")
  expect(action.data.method).toBe("eth_signTypedData_v4")
  const typed = JSON.parse(action.data.params[1])
  const { EIP712Domain: _, ...types } = typed.types
  const message = Object.fromEntries(
    Object.entries(tamper({ ...typed.message }) as Record<string, string>).map(([k, v]) => [
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

/** The confirm body for an option and its one signature, as SDKs send it. */
export const signed = (optionId: string, signature: Hex, extra: Json = {}): Json => ({
  optionId,
  results: [{ type: "walletRpc", data: [signature] }],
  ...extra
})

/** The one option offered to `buyer` for the payment (200 expected). */
export const onlyOption = async (
  wallet: Client,
  paymentId: string,
  buyer: Buyer
): Promise<Json> => {
  const offered = await options(wallet, paymentId, [buyer.account])
  expect(offered.status, offered.text).toBe(200)
  expect(offered.body.options).toHaveLength(1)
  return offered.body.options[0]
}

/** GET .../status, long-polled for up to `maxPollMs` when given. */
export const gatewayStatus = (wallet: Client, paymentId: string, maxPollMs?: number) =>
  wallet.get(
    `/v1/gateway/payment/${paymentId}/status${maxPollMs === undefined ? "" : `?maxPollMs=${maxPollMs}`}`
  )

/** The token transfers out of `from` on the sandbox chain since genesis. */
export const transfersFrom = (server: E2eServer, from: Hex) =>
  server.sandbox.publicClient.getContractEvents({
    address: server.sandbox.token.address,
    abi: server.sandbox.token.abi,
    eventName: "Transfer",
    args: { from },
    fromBlock: 0n
  })

/** The EIP-712 message of an option's authorization: its nonce, signer and domain. */
export const authorizationOf = (option: Json) => {
  const typed = JSON.parse(option.actions[0].data.params[1])
  return {
    domain: { ...typed.domain, chainId: hexToBigInt(typed.domain.chainId) },
    from: typed.message.from as Hex,
    to: typed.message.to as Hex,
    nonce: typed.message.nonce as Hex
  }
}

/** The buyer's EIP-3009 `CancelAuthorization(authorizer, nonce)` of an option's authorization, under the token's domain. */
export const signCancelAuthorization = (buyer: Buyer, option: Json) => {
  const { domain, nonce } = authorizationOf(option)
  return privateKeyToAccount(buyer.key).signTypedData({
    domain,
    types: {
      CancelAuthorization: [
        { name: "authorizer", type: "address" },
        { name: "nonce", type: "bytes32" }
      ]
    },
    primaryType: "CancelAuthorization",
    message: { authorizer: buyer.address, nonce }
  })
}

/**
 * Cancels an authorization on chain (EIP-3009 `cancelAuthorization`) before the engine submits
 * it: the buyer signs `CancelAuthorization(authorizer, nonce)` under the token's domain, and the
 * sandbox collector's own wallet sends it. Resolves once it is mined (status success).
 */
export const cancelOnChain = async (server: E2eServer, buyer: Buyer, option: Json) => {
  const { nonce } = authorizationOf(option)
  const signature = await signCancelAuthorization(buyer, option)
  const hash = await server.sandbox.collector.walletClient.writeContract({
    address: server.sandbox.token.address,
    abi: server.sandbox.token.abi,
    functionName: "cancelAuthorization",
    args: [buyer.address, nonce, signature]
  })
  const receipt = await server.sandbox.publicClient.waitForTransactionReceipt({ hash })
  expect(receipt.status).toBe("success")
  expect(await authorizationUsed(server, buyer, option)).toBe(true)
}

/** Whether the token holds the option's authorization nonce as used or cancelled. */
export const authorizationUsed = (server: E2eServer, buyer: Buyer, option: Json) =>
  server.sandbox.publicClient.readContract({
    address: server.sandbox.token.address,
    abi: server.sandbox.token.abi,
    functionName: "authorizationState",
    args: [buyer.address, authorizationOf(option).nonce]
  })
