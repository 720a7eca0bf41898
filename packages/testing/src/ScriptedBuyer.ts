/**
 * A buyer in a test: a wallet that pays through the engine's wallet gateway as
 * wallet SDKs do (WIRE.md section 1): the payment, its options for the
 * buyer's account, the action to sign, the signature (EIP-712, EIP-3009's
 * `ReceiveWithAuthorization`, signed here with a local key), the confirm. A
 * native option's action is a transaction to send instead (the coin to the
 * collector, the option's reference as its data): the wallet sends it
 * (`send`, onto the scripted chain) and confirms with its hash. The
 * requests go to the engine's own `fetch`: the gateway's code, its checks and
 * its errors are the ones a real wallet meets.
 */
import { typedDataFromJson } from "@pay/core"
import { type Address, type Hex, hexToBigInt } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"

/** The buyer's key: a private key (hex), or none for a new one each payment. */
export type BuyerKey = Hex

/** A gateway answer that was not 2xx: its status and the engine's error body. */
export class GatewayRefused extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string
  ) {
    super(message)
    this.name = "GatewayRefused"
  }
}

// biome-ignore lint/suspicious/noExplicitAny: the gateway's JSON, read as WIRE.md describes it
type Json = any

export interface Gateway {
  readonly call: (method: string, path: string, body?: unknown) => Promise<Json>
}

/** The gateway over the engine's `fetch`, with a wallet app's key. */
export const gatewayOf = (
  fetch: (request: Request) => Promise<Response>,
  origin: string,
  apiKey: string
): Gateway => ({
  call: async (method, path, body) => {
    const response = await fetch(
      new Request(`${origin}${path}`, {
        method,
        headers: {
          "api-key": apiKey,
          "api-version": "2026-02-19.preview",
          "sdk-name": "pay-testing",
          "sdk-version": "0.1.0",
          "sdk-platform": "test",
          accept: "application/json",
          ...(body === undefined ? {} : { "content-type": "application/json" })
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    )
    const text = await response.text()
    const json: Json = text === "" ? undefined : JSON.parse(text)
    if (!response.ok) {
      throw new GatewayRefused(
        response.status,
        json?.code,
        `${method} ${path}: ${response.status} ${json?.code ?? ""} ${json?.message ?? text}`.trim()
      )
    }
    return json
  }
})

/** Signs an action's `eth_signTypedData_v4` request, from the JSON the engine sent. */
export const signTypedDataJson = (privateKey: Hex, json: string): Promise<Hex> =>
  privateKeyToAccount(privateKey).signTypedData(typedDataFromJson(json))

/** The authorization's nonce in a typed-data request: what the chain's transfer will carry. */
export const authorizationNonceOf = (json: string): Hex => JSON.parse(json).message.nonce as Hex

/** The transaction an `eth_sendTransaction` action asks the wallet to send: a native option's transfer. */
export interface WalletTransaction {
  readonly from: Address
  readonly to: Address
  /** The coin it sends, in wei. */
  readonly value: bigint
  /** A native option's reference: the option's 32-byte authorization nonce. */
  readonly data: Hex
  /** The network's chain id, as hex (`0x14a34` for Base Sepolia). */
  readonly chainId: Hex
}

/** Reads an action's `eth_sendTransaction` request (its one param), from the JSON the engine sent. */
export const walletTransactionOf = (json: string): WalletTransaction => {
  const tx = JSON.parse(json)
  return {
    from: tx.from as Address,
    to: tx.to as Address,
    value: hexToBigInt(tx.value ?? "0x0"),
    data: (tx.data ?? "0x") as Hex,
    chainId: tx.chainId as Hex
  }
}

/** The wallet's `eth_sendTransaction`: sends the transaction, answers its hash. */
export type SendTransaction = (tx: WalletTransaction) => Hex | Promise<Hex>

export interface SignedPayment {
  readonly optionId: string
  /** The buyer's CAIP-10 account. */
  readonly buyer: string
  readonly address: Hex
  /** The option's amount, in the token's minor units. */
  readonly amount: bigint
  /** The CAIP-19 asset paid with. */
  readonly asset: string
  readonly authorizationNonces: ReadonlyArray<Hex>
  /** The transactions the wallet sent for the option's actions (a native option's transfer), by hash. */
  readonly sent: ReadonlyArray<Hex>
  readonly results: ReadonlyArray<{ readonly type: "walletRpc"; readonly data: ReadonlyArray<Hex> }>
}

const optionMatches = (option: Json, token: string): boolean => {
  const unit: string = option.amount?.unit ?? ""
  const asset = unit.startsWith("caip19/") ? unit.slice("caip19/".length) : unit
  if (token.includes(":")) return asset.toLowerCase() === token.toLowerCase()
  return (option.amount?.display?.assetSymbol ?? "").toLowerCase() === token.toLowerCase()
}

/**
 * The wallet's part up to the confirm: the options for the buyer's account on
 * `chainId`, the one for `token` (its symbol or CAIP-19 asset; the first
 * offered otherwise), its actions signed, or sent with `send` (a native
 * option's transfer, from the buyer's address): the results hold their hashes.
 */
export const signPayment = async (
  gateway: Gateway,
  paymentId: string,
  chainId: string,
  given: {
    readonly token?: string | undefined
    readonly account?: BuyerKey | undefined
    readonly send?: SendTransaction | undefined
  }
): Promise<SignedPayment> => {
  const privateKey = given.account ?? generatePrivateKey()
  const address = privateKeyToAccount(privateKey).address
  const buyer = `${chainId}:${address}`
  const path = `/v1/gateway/payment/${encodeURIComponent(paymentId)}`
  await gateway.call("GET", path)
  const offered = await gateway.call("POST", `${path}/options`, {
    accounts: [buyer],
    refresh: null
  })
  const options: ReadonlyArray<Json> = offered.options ?? []
  const option =
    given.token === undefined
      ? options[0]
      : options.find((o) => optionMatches(o, given.token as string))
  if (option === undefined) {
    const why = offered.noOptionsReason?.message
    const offeredUnits = options.map((o) => o.amount?.unit).join(", ")
    throw new Error(
      given.token === undefined
        ? `the engine offered no option for ${buyer}${why ? `: ${why}` : ""}`
        : `the engine offered no option in ${given.token} (it offered ${offeredUnits || "none"})`
    )
  }
  const { actions } = await gateway.call("POST", `${path}/fetch`, { optionId: option.id, data: "" })
  const results = []
  const authorizationNonces: Array<Hex> = []
  const sent: Array<Hex> = []
  for (const action of actions as ReadonlyArray<Json>) {
    if (action.data.method === "eth_sendTransaction") {
      if (given.send === undefined) {
        throw new Error(`option ${option.id} asks the wallet to send a transaction: give send`)
      }
      // A wallet sends from its own account.
      const tx = { ...walletTransactionOf(action.data.params[0]), from: address }
      authorizationNonces.push(tx.data)
      const hash = await given.send(tx)
      sent.push(hash)
      results.push({ type: "walletRpc" as const, data: [hash] })
      continue
    }
    const typed: string = action.data.params[1]
    authorizationNonces.push(authorizationNonceOf(typed))
    results.push({ type: "walletRpc" as const, data: [await signTypedDataJson(privateKey, typed)] })
  }
  const unit: string = option.amount.unit
  return {
    optionId: option.id,
    buyer,
    address,
    amount: BigInt(option.amount.value),
    asset: unit.startsWith("caip19/") ? unit.slice("caip19/".length) : unit,
    authorizationNonces,
    sent,
    results
  }
}
