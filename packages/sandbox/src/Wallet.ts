/**
 * A small wallet, as a script: it pays a payment through the engine's
 * gateway with a local key, the way wallet SDKs do (WIRE.md section 1). On
 * the sandbox it first gets test tokens from the faucet. viem signs and
 * sends: every `eth_signTypedData_v4` action is signed, every
 * `eth_sendTransaction` one (a Permit2 token's approval, a native coin's
 * transfer) sent as given, in order; nothing else is needed.
 */
import { typedDataFromJson } from "@pay/core"
import { delegate7702, safeAccount, sandboxChain, thirdwebAccount } from "@pay/sandbox-chain"
import {
  type Address,
  createPublicClient,
  createWalletClient,
  type Hex,
  hexToBigInt,
  http,
  isAddress,
  isAddressEqual,
  isHex
} from "viem"
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts"

export interface WalletOptions {
  /** The engine's base URL, e.g. http://127.0.0.1:8080 */
  readonly engineUrl: string
  /** The payment id (pay_…) or its buyer link (gatewayUrl). */
  readonly payment: string
  /** A wallet app's key (`npm run pay -- apps create`). */
  readonly apiKey: string
  /** The buyer's key; a new one when absent. */
  readonly privateKey?: Hex
  /** Ask the sandbox faucet for this many minor units of the token first (sandbox only). */
  readonly faucet?: bigint
  /**
   * Or for this many whole tokens, in the token's own decimals (1,000 is
   * 10^9 minor units of USDC, 10^21 of DAI). `faucet` wins when both are given.
   */
  readonly faucetTokens?: bigint
  /**
   * What the buyer's account is (sandbox only for the smart ones): the key
   * itself (`eoa`, the default), a one-owner Safe or a thirdweb ERC-4337
   * account of the key (deployed by the wallet first, or with
   * `counterfactual` left to the engine to deploy: it signs ERC-6492), or the
   * key delegated by EIP-7702 to Simple7702Account.
   */
  readonly account?: "eoa" | "safe" | "4337" | "7702"
  readonly counterfactual?: boolean
  /**
   * The token to pay with, by symbol (`USDC`, `USDT`, `DAI`, or `ETH`, the
   * chain's own coin, sent in a transaction of the buyer's): the first option
   * offered when absent.
   */
  readonly token?: string
  readonly log?: (line: string) => void
}

export interface WalletOutcome {
  readonly status: string
  readonly txId: string | null
  readonly buyer: string
}

/** Where the engine came from, said when it cannot be reached. */
export type EngineSource = "--engine" | "ENGINE_URL" | "the link" | "the default"

export const DEFAULT_ENGINE_URL = "http://127.0.0.1:8080"

/** The engine a link belongs to: the link without its last segment (the payment id). */
export const engineOfLink = (link: string): string | undefined => {
  if (!URL.canParse(link)) return undefined
  const url = new URL(link)
  if (!/^https?:$/.test(url.protocol)) return undefined
  return `${url.origin}${url.pathname.replace(/\/[^/]*\/?$/, "")}`
}

/**
 * The engine to pay through: `--engine`, else ENGINE_URL, else the one the
 * link names (its host, port and path), else the default (a bare `pay_…` id).
 */
export const chooseEngine = (
  payment: string,
  given: { readonly flag?: string | undefined; readonly env?: string | undefined }
): { readonly url: string; readonly from: EngineSource } => {
  const link = engineOfLink(payment)
  const [url, from]: [string, EngineSource] =
    given.flag !== undefined
      ? [given.flag, "--engine"]
      : given.env !== undefined && given.env !== ""
        ? [given.env, "ENGINE_URL"]
        : link !== undefined
          ? [link, "the link"]
          : [DEFAULT_ENGINE_URL, "the default"]
  return { url: url.replace(/\/+$/, ""), from }
}

/**
 * fetch, with a failure to connect said with the URL and why (`connect
 * ECONNREFUSED 127.0.0.1:8080`, `getaddrinfo ENOTFOUND shop.example`), not
 * undici's bare `fetch failed`.
 */
export const request = async (url: string, init?: RequestInit): Promise<Response> => {
  try {
    return await fetch(url, init)
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause
    // An AggregateError (every address refused) has an empty message but a code.
    const why = cause?.message || cause?.code || (e as Error).message
    throw new Error(`could not reach ${url}: ${why}`)
  }
}

/** An answer's JSON; anything else (a proxy's HTML page) said as what it is. */
const jsonOf = (url: string, response: Response, text: string): unknown => {
  if (text === "") return undefined
  try {
    return JSON.parse(text)
  } catch {
    throw new Error(
      `${url} answered ${response.status} with ${response.headers.get("content-type") ?? "no content type"}, not JSON: is it the engine?`
    )
  }
}

const call = async (options: WalletOptions, method: string, path: string, body?: unknown) => {
  const url = `${options.engineUrl}${path}`
  const response = await request(url, {
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
  // biome-ignore lint/suspicious/noExplicitAny: the engine's JSON, read as WIRE.md describes it
  const json = jsonOf(url, response, text) as any
  if (!response.ok) {
    throw new Error(
      `${method} ${url}: ${response.status} ${json?.code ?? ""} ${json?.message ?? text}`
    )
  }
  return json
}

/** Signs the `eth_signTypedData_v4` request of an action, from the JSON the engine sent. */
export const signTypedDataJson = (privateKey: Hex, json: string): Promise<Hex> =>
  privateKeyToAccount(privateKey).signTypedData(typedDataFromJson(json))

/** An action of `fetch`'s answer, as WIRE.md describes it. */
export interface WalletAction {
  readonly type: string
  readonly data: {
    readonly chain_id?: string
    readonly method: string
    readonly params: ReadonlyArray<string>
  }
}

/** A confirm's result: an action's answer (a signature, a transaction's hash). */
export interface WalletResult {
  readonly type: "walletRpc"
  readonly data: ReadonlyArray<string>
}

/** An `eth_sendTransaction` action's transaction, read from its JSON. */
export interface TransactionRequest {
  readonly from?: Address
  readonly to: Address
  readonly data: Hex
  readonly value: bigint
  readonly chainId?: number
  readonly gas?: bigint
}

/** A 0x quantity (`"0x0"`, `"0xde0b6b3a7640000"`), as JSON-RPC writes value and chainId. */
const quantity = (field: string, value: unknown): bigint => {
  if (typeof value !== "string" || !/^0x[0-9a-fA-F]+$/.test(value)) {
    throw new Error(
      `the transaction's ${field} must be a 0x hex quantity, not ${JSON.stringify(value)}`
    )
  }
  return hexToBigInt(value as Hex)
}

/**
 * The transaction of an `eth_sendTransaction` action (its JSON param), as it
 * will be sent: `to`, `data` (default `0x`) and `value` (default 0) as
 * given, `chainId` and `gas` when given, `from` to check against the sender.
 */
export const transactionOf = (json: string): TransactionRequest => {
  let raw: Record<string, unknown>
  try {
    raw = JSON.parse(json)
  } catch {
    throw new Error(`the action's transaction is not JSON: ${json.slice(0, 80)}`)
  }
  if (typeof raw !== "object" || raw === null) {
    throw new Error("the action's transaction is not a JSON object")
  }
  const address = (field: string, value: unknown): Address => {
    if (typeof value !== "string" || !isAddress(value, { strict: false })) {
      throw new Error(`the transaction's ${field} must be an address, not ${JSON.stringify(value)}`)
    }
    return value
  }
  const data = raw.data ?? raw.input ?? "0x"
  if (typeof data !== "string" || !isHex(data, { strict: true })) {
    throw new Error(`the transaction's data must be 0x hex, not ${JSON.stringify(data)}`)
  }
  return {
    ...(raw.from === undefined ? {} : { from: address("from", raw.from) }),
    to: address("to", raw.to),
    data,
    value: raw.value === undefined ? 0n : quantity("value", raw.value),
    ...(raw.chainId === undefined ? {} : { chainId: Number(quantity("chainId", raw.chainId)) }),
    ...(raw.gas === undefined ? {} : { gas: quantity("gas", raw.gas) })
  }
}

/** ERC-20 `approve(address,uint256)`: a Permit2 token's approval, said as one in the log. */
const APPROVE_SELECTOR = "0x095ea7b3"

/** The buyer as the actions need it: its address, its signature, its sends (none: it cannot). */
export interface ActingBuyer {
  readonly address: Address
  readonly sign: (typedDataJson: string) => Promise<Hex>
  readonly send: ((transaction: TransactionRequest) => Promise<Hex>) | undefined
}

/**
 * The results of `fetch`'s actions, one per action, in order: each
 * `eth_sendTransaction` sent as given (from the buyer's own address; `fund`
 * first, to give it the coin it needs) and answered with its hash, each
 * `eth_signTypedData_v4` signed. Any other method is refused.
 */
export const resultsOf = async (
  actions: ReadonlyArray<WalletAction>,
  buyer: ActingBuyer,
  options: {
    /** What kind of account it is, to say why it cannot send. */
    readonly kind?: string
    /** Called before each send: tops the account's coin up where it can. */
    readonly fund?: (transaction: TransactionRequest) => Promise<void>
    readonly log?: (line: string) => void
  } = {}
): Promise<ReadonlyArray<WalletResult>> => {
  const log = options.log ?? (() => {})
  const results: Array<WalletResult> = []
  for (const [i, action] of actions.entries()) {
    const { method, params } = action.data
    if (method === "eth_sendTransaction") {
      const transaction = transactionOf(params[0] ?? "")
      if (transaction.from !== undefined && !isAddressEqual(transaction.from, buyer.address)) {
        throw new Error(
          `action ${i} is a transaction from ${transaction.from}, not from this wallet's ${buyer.address}`
        )
      }
      if (buyer.send === undefined) {
        throw new Error(
          transaction.data.startsWith(APPROVE_SELECTOR)
            ? `a ${options.kind ?? "smart"} account cannot send the option's approval here: approve Permit2 for the token from the account first`
            : `a ${options.kind ?? "smart"} account cannot send the option's transaction here: pay in a token it signs for`
        )
      }
      await options.fund?.(transaction)
      const hash = await buyer.send(transaction)
      log(
        `${transaction.data.startsWith(APPROVE_SELECTOR) ? "approval" : "transaction"} sent: ${hash}`
      )
      results.push({ type: "walletRpc", data: [hash] })
    } else if (method === "eth_signTypedData_v4") {
      results.push({ type: "walletRpc", data: [await buyer.sign(params[1] ?? "")] })
    } else {
      throw new Error(`action ${i} asks for ${method}, which this wallet does not do`)
    }
  }
  return results
}

/** Test ether kept for gas beside what a transaction sends, and given with a top-up. */
const GAS_ETHER = 10n ** 16n
const TOP_UP_ETHER = 10n ** 18n

export const payWithWallet = async (options: WalletOptions): Promise<WalletOutcome> => {
  const log = options.log ?? (() => {})
  const privateKey = options.privateKey ?? generatePrivateKey()
  const owner = privateKeyToAccount(privateKey)
  // The path segment: a bare id, or the link encoded twice as SDKs send unknown links.
  const id = /^pay_[0-9A-Za-z]+$/.test(options.payment)
    ? options.payment
    : encodeURIComponent(encodeURIComponent(options.payment))

  const sandbox = await request(`${options.engineUrl}/sandbox`).then((r) =>
    r.ok ? r.json().catch(() => undefined) : undefined
  )
  const chainId: string = sandbox?.chainId ?? "eip155:31337"
  const faucet = (address: string, amount: bigint, gas = false, token?: string) =>
    request(`${options.engineUrl}/sandbox/faucet`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        account: `${chainId}:${address}`,
        amount: amount.toString(),
        gas,
        ...(token === undefined ? {} : { token })
      })
    }).then(async (r) => {
      // biome-ignore lint/suspicious/noExplicitAny: the engine's JSON, read as api.md describes it
      const body = (await r.json().catch(() => undefined)) as any
      if (!r.ok) throw new Error(`the sandbox faucet refused: ${r.status} ${body?.message ?? ""}`)
      return body
    })
  /**
   * On the sandbox, the ether a transaction needs (what it sends, and its
   * gas), from the faucet when the account holds less: a transfer that adds
   * to the balance (the faucet's `gas: true` would set it to 1 ether).
   */
  const fund = async (address: Address, transaction: TransactionRequest) => {
    if (sandbox === undefined) return
    const client = createPublicClient({
      chain: { ...sandboxChain, rpcUrls: { default: { http: [] } } },
      transport: http(`${options.engineUrl}/sandbox/rpc`),
      cacheTime: 0
    })
    const held = await client.getBalance({ address })
    const needed = transaction.value + GAS_ETHER
    if (held >= needed) return
    const given = await faucet(address, needed - held + TOP_UP_ETHER, false, "ETH")
    log(`faucet: ether balance ${given.balance} (tx ${given.txHash})`)
  }
  // The sandbox's token of that symbol, to be given by the faucet and chosen among the options.
  const wanted =
    options.token === undefined
      ? undefined
      : (
          sandbox?.tokens as
            | ReadonlyArray<{ asset: string; symbol: string; decimals: number }>
            | undefined
        )?.find((t) => t.symbol.toUpperCase() === options.token?.toUpperCase())
  if (options.token !== undefined && sandbox !== undefined && wanted === undefined) {
    throw new Error(`the sandbox has no token ${options.token}`)
  }
  const kind = options.account ?? "eoa"
  if (kind !== "eoa" && sandbox === undefined) {
    throw new Error(`--account ${kind} needs the sandbox (its faucet and /sandbox/rpc)`)
  }
  const buyer =
    kind === "eoa"
      ? {
          address: owner.address,
          sign: (json: string) => signTypedDataJson(privateKey, json),
          send: sendFrom(options.engineUrl, owner)
        }
      : await smartBuyer(options.engineUrl, owner, kind, {
          counterfactual: options.counterfactual === true,
          gas: (address) => faucet(address, 1n, true),
          log
        })
  const account = `${chainId}:${buyer.address}`
  log(`buyer ${account}${kind === "eoa" ? "" : ` (${kind} of ${owner.address})`}`)
  // Whole tokens in the token's decimals: the faucet's amount is in its minor units.
  const faucetAmount =
    options.faucet ??
    (options.faucetTokens === undefined
      ? undefined
      : options.faucetTokens *
        10n ** BigInt(wanted?.decimals ?? sandbox?.tokens?.[0]?.decimals ?? 6))
  if (faucetAmount !== undefined && sandbox !== undefined) {
    const minted = await faucet(buyer.address, faucetAmount, false, wanted?.symbol)
    log(`faucet: balance ${minted.balance} (tx ${minted.txHash})`)
  }

  const info = await call(options, "GET", `/v1/gateway/payment/${id}`)
  log(`paying ${info.amount.value} ${info.amount.unit} to ${info.merchant.name} (${info.status})`)
  const offered = await call(options, "POST", `/v1/gateway/payment/${id}/options`, {
    accounts: [account],
    refresh: null
  })
  const option =
    wanted === undefined
      ? offered.options[0]
      : // biome-ignore lint/suspicious/noExplicitAny: the engine's JSON, read as WIRE.md describes it
        offered.options.find((o: any) => String(o.amount.unit).endsWith(wanted.asset))
  if (option === undefined) {
    // The engine says why in words (noOptionsReason): a merchant settled only on another network, say.
    const why = offered.noOptionsReason?.message
    const what = wanted === undefined ? "" : ` in ${wanted.symbol}`
    throw new Error(`the engine offered no option${what} for this account${why ? `: ${why}` : ""}`)
  }
  log(
    `option ${option.id}: ${option.amount.value} ${option.amount.display?.assetSymbol ?? option.amount.unit}`
  )
  const { actions } = await call(options, "POST", `/v1/gateway/payment/${id}/fetch`, {
    optionId: option.id,
    data: ""
  })
  // A Permit2 token's approvals, or a native coin's transfer: sent from the buyer's account,
  // its gas (and the coin it sends) paid by the buyer; then the signature, if any.
  const results = await resultsOf(actions, buyer, {
    kind,
    fund: (transaction) => fund(buyer.address, transaction),
    log
  })
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

/**
 * Sends an `eth_sendTransaction` action's transaction from `owner` over the
 * sandbox's public RPC, as given (to, data, value; its gas when given, else
 * estimated; on its chainId, which the node must be), and waits for it to be
 * mined.
 */
const sendFrom =
  (engineUrl: string, owner: PrivateKeyAccount) => async (tx: TransactionRequest) => {
    const transport = http(`${engineUrl}/sandbox/rpc`)
    // The transaction's own chain: viem refuses to send it to a node on another.
    const chain = {
      ...sandboxChain,
      id: tx.chainId ?? sandboxChain.id,
      rpcUrls: { default: { http: [] } }
    }
    const client = createPublicClient({ chain, transport, cacheTime: 0, pollingInterval: 50 })
    const wallet = createWalletClient({ account: owner, chain, transport, pollingInterval: 50 })
    const hash = await wallet.sendTransaction({
      to: tx.to,
      data: tx.data,
      value: tx.value,
      ...(tx.gas === undefined ? {} : { gas: tx.gas })
    })
    await client.waitForTransactionReceipt({ hash })
    return hash
  }

/**
 * A smart account of `owner` as the wallet pays with it, on the sandbox chain
 * through its public RPC: a Safe or a thirdweb account (deployed here, the
 * owner's key paying the gas the faucet gave it, unless `counterfactual`) or
 * the owner's key delegated by EIP-7702 (the owner sends the delegation itself).
 */
const smartBuyer = async (
  engineUrl: string,
  owner: PrivateKeyAccount,
  kind: "safe" | "4337" | "7702",
  options: {
    readonly counterfactual: boolean
    readonly gas: (address: string) => Promise<unknown>
    readonly log: (line: string) => void
  }
) => {
  // The engine the wallet was given: the URL its description names is the engine's public one.
  const transport = http(`${engineUrl}/sandbox/rpc`)
  const chain = { ...sandboxChain, rpcUrls: { default: { http: [] } } }
  const client = createPublicClient({ chain, transport, cacheTime: 0, pollingInterval: 50 })
  const wallet = createWalletClient({ account: owner, chain, transport, pollingInterval: 50 })
  if (kind === "7702") {
    await options.gas(owner.address)
    const delegated = await delegate7702({ client, wallet, owner })
    options.log(`delegated ${owner.address} to Simple7702Account (EIP-7702)`)
    return {
      address: delegated.address,
      sign: (json: string) => delegated.signTypedData(typedDataFromJson(json)),
      // The delegated EOA sends as itself.
      send: sendFrom(engineUrl, owner)
    }
  }
  const saltNonce = BigInt(
    `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex")}`
  )
  const account =
    kind === "safe"
      ? await safeAccount({ client, owner, saltNonce })
      : await thirdwebAccount({ client, owner, saltNonce })
  const name = kind === "safe" ? "Safe" : "thirdweb ERC-4337 account"
  if (options.counterfactual) {
    options.log(
      `${name} ${account.address}, not deployed: it signs with ERC-6492, the engine deploys it`
    )
  } else {
    await options.gas(owner.address)
    await account.deploy(wallet)
    options.log(`${name} ${account.address} deployed`)
  }
  return {
    address: account.address,
    sign: (json: string) => account.signTypedData(typedDataFromJson(json)),
    send: undefined
  }
}
