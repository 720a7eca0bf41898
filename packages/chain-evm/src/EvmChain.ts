/**
 * The chain port on EVM networks, with viem: one public client and the
 * collector's local account per configured network, over whatever transport
 * the network is reached by (HTTP for a real RPC, an in-process provider for
 * the sandbox). Transactions are EIP-1559, signed offline with the
 * collector's key and sent raw, so the durable chain work can record each one
 * before it leaves the process.
 */

import {
  type Caip2,
  type Caip19,
  Chain,
  type ChainCall,
  type ChainNetwork,
  type ChainToken,
  ChainUnavailable,
  countRpcError,
  type Eip712Domain,
  type FeeQuote,
  type ReceiveAuthorization,
  TransactionRejected,
  type TransactionState,
  TransferRefused,
  tokenOf,
  type UnsignedTransaction
} from "@pay/core"
import { Effect } from "effect"
import {
  type Address,
  BaseError,
  createPublicClient,
  encodeFunctionData,
  type Hex,
  keccak256,
  type PrivateKeyAccount,
  type PublicClient,
  parseSignature,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  type Transport
} from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { eip3009TokenAbi } from "./Eip3009Abi.js"

export interface EvmNetworkConfig {
  readonly chainId: Caip2
  readonly name: string
  readonly iconUrl?: string | null
  /** The collector's private key: it submits every transfer and receives every payment. */
  readonly collectorKey: Hex
  readonly confirmations: number
  readonly etaSeconds: number
  readonly transport: Transport
  /** How often a transaction being watched is looked at (default 1 s). */
  readonly pollingIntervalMs?: number
  /** A transaction pending this long is replaced at a higher fee (default 60 s). */
  readonly stuckAfterMs?: number
  readonly tokens: ReadonlyArray<Omit<ChainToken, "address">>
  /**
   * A test network, whose tokens are worth nothing (default false). When every
   * network is one, the engine runs in test mode: its payments say `livemode: false`.
   */
  readonly testnet?: boolean
  /** A chain that starts fresh names each of its runs (Chain.ts's `ChainNetwork.instance`). */
  readonly instance?: string
}

interface Connected {
  readonly network: ChainNetwork
  readonly publicClient: PublicClient
  readonly account: PrivateKeyAccount
  readonly numericId: number
}

/** Gas estimates get this much headroom (in %): a state change between estimate and block. */
const GAS_HEADROOM_PERCENT = 25n
/** The tip when the node suggests none (1 gwei would be a lot on an L2; 0.01 gwei is ignored). */
const MIN_PRIORITY_FEE = 1_000_000n

const addressOfAsset = (asset: Caip19): Address =>
  asset.slice(asset.lastIndexOf(":") + 1) as Address

/** The shortest useful account of a viem error: its short message and details, not its whole dump. */
const describe = (error: unknown): string =>
  error instanceof BaseError
    ? [error.shortMessage, error.details].filter((s) => s && s.length > 0).join(": ")
    : error instanceof Error
      ? error.message
      : String(error)

/** The errors an error stands on: viem's own chain (`walk`), then each `cause`. */
const causesOf = (error: unknown): Array<unknown> => {
  const found: Array<unknown> = []
  let current: unknown = error
  while (current !== undefined && current !== null && found.length < 16) {
    found.push(current)
    current = (current as { cause?: unknown }).cause
  }
  return found
}

/**
 * The RPC endpoint's host and the low-level cause of an error, for the operator's log:
 * only the host, never the URL (RPC URLs often carry an API key in their path).
 */
const whereAndWhy = (error: unknown): { rpcHost?: string; cause?: string } => {
  const found: { rpcHost?: string; cause?: string } = {}
  for (const e of causesOf(error)) {
    const { url, code, name } = e as { url?: unknown; code?: unknown; name?: unknown }
    if (found.rpcHost === undefined && typeof url === "string" && URL.canParse(url)) {
      found.rpcHost = new URL(url).host
    }
    // ECONNREFUSED, ENOTFOUND, UND_ERR_CONNECT_TIMEOUT; not the node's numeric RPC codes.
    if (typeof code === "string" && code !== "") found.cause = code
    else if (found.cause === undefined && name === "TimeoutError") found.cause = "timeout"
  }
  return found
}

/**
 * The network did not answer: what it says, and where and why for the log.
 * Counted as the network's RPC error (pay_rpc_errors_total).
 */
const unavailable = (chainId: string, error: unknown): ChainUnavailable => {
  countRpcError(chainId)
  const { rpcHost, cause } = whereAndWhy(error)
  const at = [rpcHost === undefined ? undefined : `RPC ${rpcHost}`, cause]
    .filter((s) => s !== undefined)
    .join(", ")
  return new ChainUnavailable({
    chainId,
    message: at === "" ? describe(error) : `${describe(error)} (${at})`,
    ...(rpcHost === undefined ? {} : { rpcHost }),
    ...(cause === undefined ? {} : { errorCode: cause })
  })
}

/** The node's own text of an error, wherever viem put it. */
const nodeMessage = (error: unknown): string => {
  const parts: Array<string> = []
  if (error instanceof BaseError) {
    error.walk((e) => {
      if (e instanceof Error) parts.push(e.message)
      if (e instanceof BaseError && e.details) parts.push(e.details)
      return false
    })
  } else if (error instanceof Error) {
    parts.push(error.message)
  }
  return parts.join(" | ")
}

/**
 * Why the node refused a transaction, in its own words: viem's short message
 * alone ("Missing or invalid parameters.") says nothing an operator can act on,
 * so the details of every error it stands on follow, once each.
 */
const refusal = (error: unknown): string => {
  if (!(error instanceof BaseError)) return describe(error)
  // viem's short messages run on to a second line of advice ("Double check you have…").
  const parts = [error.shortMessage.split("\n")[0]!]
  error.walk((e) => {
    const text = e instanceof BaseError ? e.details : e instanceof Error ? e.message : undefined
    if (text !== undefined && text !== "" && !parts.includes(text)) parts.push(text)
    return false
  })
  return parts.join(": ")
}

/** Answers that mean the node has the transaction, or has mined its nonce already. */
const ALREADY_HAVE =
  /already known|known transaction|already imported|nonce too low|nonce is too low/i
/** Answers of a node that heard the request and refused it (as opposed to not answering). */
const REFUSED =
  /underpriced|nonce too high|nonce is too high|insufficient funds|exceeds block gas limit|intrinsic gas|fee cap|max fee per gas less than|transaction type not supported|invalid sender/i
/** A JSON-RPC error code: the node answered, so the network is up. */
const hasRpcCode = (error: unknown): boolean =>
  error instanceof BaseError &&
  error.walk((e) => typeof (e as { code?: unknown }).code === "number") !== null

const isRevert = (error: unknown): boolean =>
  /revert|execution reverted|invalid signature|authorization is/i.test(nodeMessage(error))

export const makeEvmChain = (configs: ReadonlyArray<EvmNetworkConfig>) =>
  Effect.sync(() => {
    const connected = new Map<string, Connected>()
    for (const config of configs) {
      // Read as given from plain JavaScript too: "true" (a string) must not pass for a live network.
      if (config.testnet !== undefined && typeof config.testnet !== "boolean") {
        throw new TypeError(`network ${config.chainId}: testnet must be true or false`)
      }
      const account = privateKeyToAccount(config.collectorKey)
      const numericId = Number(config.chainId.slice(config.chainId.indexOf(":") + 1))
      const chain = {
        id: numericId,
        name: config.name,
        nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
        rpcUrls: { default: { http: [] as Array<string> } }
      }
      const pollIntervalMs = config.pollingIntervalMs ?? 1000
      connected.set(config.chainId, {
        network: {
          chainId: config.chainId,
          reference: String(numericId),
          name: config.name,
          iconUrl: config.iconUrl ?? null,
          collector: account.address,
          confirmations: config.confirmations,
          etaSeconds: config.etaSeconds,
          pollIntervalMs,
          stuckAfterMs: config.stuckAfterMs ?? 60_000,
          tokens: config.tokens.map((t) => ({ ...t, address: addressOfAsset(t.asset) })),
          testnet: config.testnet === true,
          ...(config.instance === undefined ? {} : { instance: config.instance })
        },
        // No caching: a watch must see the chain as it is now (a receipt may disappear).
        publicClient: createPublicClient({
          chain,
          transport: config.transport,
          pollingInterval: pollIntervalMs,
          cacheTime: 0
        }),
        account,
        numericId
      })
    }
    const networks = [...connected.values()].map((c) => c.network)

    const forChain = (chainId: Caip2) => {
      const c = connected.get(chainId)
      return c
        ? Effect.succeed(c)
        : Effect.fail(new ChainUnavailable({ chainId, message: "not a configured network" }))
    }
    const forAsset = (asset: Caip19) => {
      const found = tokenOf(networks, asset)
      const c = found && connected.get(found.network.chainId)
      return c && found
        ? Effect.succeed({ ...c, token: found.token })
        : Effect.fail(
            new ChainUnavailable({ chainId: asset, message: `no configured network has ${asset}` })
          )
    }
    const call = <A>(chainId: string, run: () => Promise<A>) =>
      Effect.tryPromise({
        try: run,
        catch: (error) => unavailable(chainId, error)
      })

    const domains = new Map<string, Eip712Domain>()
    const tokenDomain = (asset: Caip19) =>
      Effect.suspend(() => {
        const known = domains.get(asset)
        if (known !== undefined) return Effect.succeed(known)
        return Effect.flatMap(forAsset(asset), ({ publicClient, network, token }) =>
          // EIP-5267 where the token has it; else its name() and version().
          call(network.chainId, () =>
            publicClient
              .readContract({
                address: token.address,
                abi: eip3009TokenAbi,
                functionName: "eip712Domain"
              })
              .then(([, name, version, chainId, verifyingContract]) => ({
                name,
                version,
                chainId,
                verifyingContract
              }))
              .catch(async () => ({
                name: await publicClient.readContract({
                  address: token.address,
                  abi: eip3009TokenAbi,
                  functionName: "name"
                }),
                version: await publicClient.readContract({
                  address: token.address,
                  abi: eip3009TokenAbi,
                  functionName: "version"
                }),
                chainId: BigInt(network.reference),
                verifyingContract: token.address
              }))
          ).pipe(Effect.tap((domain) => Effect.sync(() => domains.set(asset, domain))))
        )
      })

    const balanceOf = (asset: Caip19, owner: Address) =>
      Effect.flatMap(forAsset(asset), ({ publicClient, network, token }) =>
        call(network.chainId, () =>
          publicClient.readContract({
            address: token.address,
            abi: eip3009TokenAbi,
            functionName: "balanceOf",
            args: [owner]
          })
        )
      )

    /**
     * The call with its gas, estimated against the next block: a revert there
     * (a used or expired authorization, a forged signature) is a refusal; any
     * other failure is the network's.
     */
    const estimated = (c: Connected, to: Address, data: Hex) =>
      Effect.tryPromise({
        try: () =>
          c.publicClient.estimateGas({ account: c.account.address, to, data, blockTag: "pending" }),
        // Only a revert is the token's word; anything else may pass, and is tried again.
        catch: (error): ChainUnavailable | TransferRefused =>
          isRevert(error)
            ? new TransferRefused({ reason: describe(error) })
            : unavailable(c.network.chainId, error)
      }).pipe(
        Effect.map(
          (gas): ChainCall => ({ to, data, gas: gas + (gas * GAS_HEADROOM_PERCENT) / 100n })
        )
      )

    const receiveCall = (asset: Caip19, auth: ReceiveAuthorization, signature: Hex) =>
      Effect.flatMap(forAsset(asset), (c) => {
        const { v, r, s, yParity } = parseSignature(signature)
        const data = encodeFunctionData({
          abi: eip3009TokenAbi,
          functionName: "receiveWithAuthorization",
          args: [
            auth.from,
            auth.to,
            auth.value,
            auth.validAfter,
            auth.validBefore,
            auth.nonce,
            Number(v ?? BigInt(yParity + 27)),
            r,
            s
          ]
        })
        return estimated(c, c.token.address, data)
      })

    const transferCall = (asset: Caip19, to: Address, value: bigint) =>
      Effect.flatMap(forAsset(asset), (c) =>
        estimated(
          c,
          c.token.address,
          encodeFunctionData({ abi: eip3009TokenAbi, functionName: "transfer", args: [to, value] })
        )
      )

    const head = (chainId: Caip2, atBlock?: bigint) =>
      Effect.flatMap(forChain(chainId), (c) =>
        call(chainId, () =>
          atBlock === undefined
            ? c.publicClient.getBlock({ blockTag: "latest" })
            : c.publicClient.getBlock({ blockNumber: atBlock })
        ).pipe(Effect.map((block) => ({ number: block.number, timestamp: block.timestamp })))
      )

    const collectorNonce = (chainId: Caip2, atBlock?: bigint) =>
      Effect.flatMap(forChain(chainId), (c) =>
        call(chainId, () =>
          Promise.all([
            atBlock === undefined
              ? c.publicClient.getTransactionCount({
                  address: c.account.address,
                  blockTag: "latest"
                })
              : c.publicClient.getTransactionCount({
                  address: c.account.address,
                  blockNumber: atBlock
                }),
            c.publicClient.getTransactionCount({ address: c.account.address, blockTag: "pending" })
          ])
        ).pipe(Effect.map(([latest, pending]) => ({ latest, pending })))
      )

    const fees = (chainId: Caip2) =>
      Effect.flatMap(forChain(chainId), (c) =>
        call(chainId, async (): Promise<FeeQuote> => {
          const block = await c.publicClient.getBlock({ blockTag: "latest" })
          const base = block.baseFeePerGas ?? 0n
          const suggested = await c.publicClient
            .estimateMaxPriorityFeePerGas()
            .catch(() => MIN_PRIORITY_FEE)
          const tip = suggested > 0n ? suggested : MIN_PRIORITY_FEE
          // Twice the base fee: room for six full blocks of base fee increases.
          return { maxFeePerGas: base * 2n + tip, maxPriorityFeePerGas: tip }
        })
      )

    const sign = (chainId: Caip2, tx: UnsignedTransaction) =>
      Effect.flatMap(forChain(chainId), (c) =>
        call(chainId, () =>
          c.account.signTransaction({
            type: "eip1559",
            chainId: c.numericId,
            to: tx.to,
            data: tx.data,
            value: 0n,
            gas: tx.gas,
            nonce: tx.nonce,
            maxFeePerGas: tx.maxFeePerGas,
            maxPriorityFeePerGas: tx.maxPriorityFeePerGas
          })
        ).pipe(Effect.map((raw) => ({ raw, hash: keccak256(raw) })))
      )

    const broadcast = (chainId: Caip2, raw: Hex) =>
      Effect.flatMap(forChain(chainId), (c) =>
        Effect.tryPromise({
          try: () => c.publicClient.sendRawTransaction({ serializedTransaction: raw }),
          catch: (error) => error
        }).pipe(
          Effect.asVoid,
          Effect.catchAll((error): Effect.Effect<void, ChainUnavailable | TransactionRejected> => {
            const text = nodeMessage(error)
            if (ALREADY_HAVE.test(text)) return Effect.void
            return REFUSED.test(text) || (hasRpcCode(error) && !/timeout|timed out/i.test(text))
              ? Effect.fail(new TransactionRejected({ chainId, reason: refusal(error) }))
              : Effect.fail(unavailable(chainId, error))
          })
        )
      )

    const transactionState = (chainId: Caip2, hash: Hex) =>
      Effect.flatMap(forChain(chainId), (c) =>
        call(chainId, async (): Promise<TransactionState> => {
          const receipt = await c.publicClient
            .getTransactionReceipt({ hash })
            .catch((error: unknown) => {
              if (error instanceof TransactionReceiptNotFoundError) return undefined
              throw error
            })
          if (receipt !== undefined) {
            return {
              _tag: "Mined",
              blockNumber: receipt.blockNumber,
              blockHash: receipt.blockHash,
              success: receipt.status === "success"
            }
          }
          const pending = await c.publicClient.getTransaction({ hash }).catch((error: unknown) => {
            if (error instanceof TransactionNotFoundError) return undefined
            throw error
          })
          return pending === undefined ? { _tag: "Unknown" } : { _tag: "Pending" }
        })
      )

    const authorizationUsed = (asset: Caip19, authorizer: Address, nonce: Hex, atBlock?: bigint) =>
      Effect.flatMap(forAsset(asset), ({ publicClient, network, token }) =>
        call(network.chainId, () =>
          publicClient.readContract({
            address: token.address,
            abi: eip3009TokenAbi,
            functionName: "authorizationState",
            args: [authorizer, nonce],
            ...(atBlock === undefined ? {} : { blockNumber: atBlock })
          })
        )
      )

    return Chain.of({
      networks,
      authorizationUsed,
      tokenDomain,
      balanceOf,
      receiveCall,
      transferCall,
      head,
      collectorNonce,
      fees,
      sign,
      broadcast,
      transactionState
    })
  })
