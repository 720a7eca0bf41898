/**
 * A small wallet, as a script: it pays a payment through the engine's
 * gateway with a local key, the way wallet SDKs do (WIRE.md section 1). On
 * the sandbox it first gets test USDC from the faucet. viem signs; nothing
 * else is needed.
 */
import { type Hex, hexToBigInt, type TypedDataDefinition } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"

export interface WalletOptions {
  /** The engine's base URL, e.g. http://127.0.0.1:8080 */
  readonly engineUrl: string
  /** The payment id (pay_…) or its buyer link (gatewayUrl). */
  readonly payment: string
  /** A wallet app's key (`npm run pay -- apps create`). */
  readonly apiKey: string
  /** The buyer's key; a new one when absent. */
  readonly privateKey?: Hex
  /** Ask the sandbox faucet for this many minor units first (sandbox only). */
  readonly faucet?: bigint
  readonly log?: (line: string) => void
}

export interface WalletOutcome {
  readonly status: string
  readonly txId: string | null
  readonly buyer: string
}

const call = async (options: WalletOptions, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${options.engineUrl}${path}`, {
    method,
    headers: {
      "api-key": options.apiKey,
      "api-version": "2026-02-19.preview",
      "sdk-name": "pay-example-wallet",
      "sdk-version": "0.1.0",
      "sdk-platform": "node",
      accept: "application/json",
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  const json = text === "" ? undefined : JSON.parse(text)
  if (!response.ok) {
    throw new Error(
      `${method} ${path}: ${response.status} ${json?.code ?? ""} ${json?.message ?? text}`
    )
  }
  return json
}

/** Signs the `eth_signTypedData_v4` request of an action, from the JSON the engine sent. */
export const signTypedDataJson = (privateKey: Hex, json: string): Promise<Hex> => {
  const typed = JSON.parse(json)
  const { EIP712Domain: _, ...types } = typed.types
  const numeric = new Set(["value", "validAfter", "validBefore"])
  const message = Object.fromEntries(
    Object.entries(typed.message as Record<string, string>).map(([k, v]) =>
      numeric.has(k) ? [k, hexToBigInt(v as Hex)] : [k, v]
    )
  )
  return privateKeyToAccount(privateKey).signTypedData({
    domain: { ...typed.domain, chainId: hexToBigInt(typed.domain.chainId) },
    types,
    primaryType: typed.primaryType,
    message
  } as TypedDataDefinition)
}

export const payWithWallet = async (options: WalletOptions): Promise<WalletOutcome> => {
  const log = options.log ?? (() => {})
  const privateKey = options.privateKey ?? generatePrivateKey()
  const address = privateKeyToAccount(privateKey).address
  // The path segment: a bare id, or the link encoded twice as SDKs send unknown links.
  const id = /^pay_[0-9A-Za-z]+$/.test(options.payment)
    ? options.payment
    : encodeURIComponent(encodeURIComponent(options.payment))

  const sandbox = await fetch(`${options.engineUrl}/sandbox`).then((r) =>
    r.ok ? r.json() : undefined
  )
  const chainId: string = sandbox?.chainId ?? "eip155:31337"
  const account = `${chainId}:${address}`
  log(`buyer ${account}`)
  if (options.faucet !== undefined && sandbox !== undefined) {
    const minted = await fetch(`${options.engineUrl}/sandbox/faucet`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ account, amount: options.faucet.toString() })
    }).then((r) => r.json())
    log(`faucet: balance ${minted.balance} (tx ${minted.txHash})`)
  }

  const info = await call(options, "GET", `/v1/gateway/payment/${id}`)
  log(`paying ${info.amount.value} ${info.amount.unit} to ${info.merchant.name} (${info.status})`)
  const offered = await call(options, "POST", `/v1/gateway/payment/${id}/options`, {
    accounts: [account],
    refresh: null
  })
  const option = offered.options[0]
  if (option === undefined) throw new Error("the engine offered no option for this account")
  log(
    `option ${option.id}: ${option.amount.value} ${option.amount.display?.assetSymbol ?? option.amount.unit}`
  )
  const { actions } = await call(options, "POST", `/v1/gateway/payment/${id}/fetch`, {
    optionId: option.id,
    data: ""
  })
  const results = []
  for (const action of actions) {
    results.push({
      type: "walletRpc",
      data: [await signTypedDataJson(privateKey, action.data.params[1])]
    })
  }
  let status = await call(options, "POST", `/v1/gateway/payment/${id}/confirm?maxPollMs=10000`, {
    optionId: option.id,
    results
  })
  log(`confirmed: ${status.status}`)
  // As SDKs do: poll until final, waiting pollInMs (here with a long-poll too).
  while (!status.isFinal) {
    await new Promise((resolve) => setTimeout(resolve, status.pollInMs ?? 1000))
    status = await call(options, "GET", `/v1/gateway/payment/${id}/status?maxPollMs=10000`)
    log(`status: ${status.status}`)
  }
  return { status: status.status, txId: status.info?.txId ?? null, buyer: account }
}
