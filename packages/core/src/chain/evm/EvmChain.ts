/**
 * The chain port on EVM networks, with viem: one public and one wallet client
 * per configured network, over whatever transport the network is reached by
 * (HTTP for a real RPC, an in-process provider for the sandbox).
 */
import { Effect } from "effect"
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  type Hex,
  type PublicClient,
  parseSignature,
  type Transport,
  type WalletClient
} from "viem"
import { privateKeyToAccount } from "viem/accounts"
import type { Caip2, Caip19 } from "../../shared/Caip.js"
import {
  Chain,
  type ChainNetwork,
  type ChainToken,
  ChainUnavailable,
  TransferRefused,
  tokenOf
} from "../Chain.js"
import type { Eip712Domain, ReceiveAuthorization } from "../Eip3009.js"
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
  /** How often to ask for a receipt while waiting. */
  readonly pollingIntervalMs?: number
  /** How long to wait for a transfer to be mined and confirmed. */
  readonly receiptTimeoutMs?: number
  readonly tokens: ReadonlyArray<Omit<ChainToken, "address">>
}

interface Connected {
  readonly network: ChainNetwork
  readonly publicClient: PublicClient
  readonly walletClient: WalletClient
  readonly receiptTimeoutMs: number
  /** One send at a time per collector, so nonces are taken in order. */
  readonly sendLock: Effect.Semaphore
}

const addressOfAsset = (asset: Caip19): Address =>
  asset.slice(asset.lastIndexOf(":") + 1) as Address

/** The shortest useful account of a viem error: its short message, not its whole dump. */
const describe = (error: unknown): string =>
  error instanceof BaseError
    ? error.shortMessage
    : error instanceof Error
      ? error.message
      : String(error)

export const makeEvmChain = (configs: ReadonlyArray<EvmNetworkConfig>) =>
  Effect.gen(function* () {
    const connected = new Map<string, Connected>()
    for (const config of configs) {
      const account = privateKeyToAccount(config.collectorKey)
      const numericId = Number(config.chainId.slice(config.chainId.indexOf(":") + 1))
      const chain = {
        id: numericId,
        name: config.name,
        nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
        rpcUrls: { default: { http: [] as Array<string> } }
      }
      const pollingInterval = config.pollingIntervalMs ?? 1000
      connected.set(config.chainId, {
        network: {
          chainId: config.chainId,
          reference: String(numericId),
          name: config.name,
          iconUrl: config.iconUrl ?? null,
          collector: account.address,
          confirmations: config.confirmations,
          etaSeconds: config.etaSeconds,
          tokens: config.tokens.map((t) => ({ ...t, address: addressOfAsset(t.asset) }))
        },
        publicClient: createPublicClient({ chain, transport: config.transport, pollingInterval }),
        walletClient: createWalletClient({ chain, account, transport: config.transport }),
        receiptTimeoutMs: config.receiptTimeoutMs ?? 180_000,
        sendLock: yield* Effect.makeSemaphore(1)
      })
    }
    const networks = [...connected.values()].map((c) => c.network)

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
        catch: (error) => new ChainUnavailable({ chainId, message: describe(error) })
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

    const submitReceive = (asset: Caip19, auth: ReceiveAuthorization, signature: Hex) =>
      Effect.flatMap(
        forAsset(asset),
        ({ publicClient, walletClient, network, token, sendLock }) => {
          const { v, r, s, yParity } = parseSignature(signature)
          const args = [
            auth.from,
            auth.to,
            auth.value,
            auth.validAfter,
            auth.validBefore,
            auth.nonce,
            Number(v ?? BigInt(yParity + 27)),
            r,
            s
          ] as const
          const collector = network.collector
          // A revert is the token refusing the transfer; any other failure, the network's.
          const refusal = (error: unknown): ChainUnavailable | TransferRefused => {
            const reverted =
              error instanceof BaseError &&
              error.walk((e) => e instanceof ContractFunctionRevertedError)
            return reverted
              ? new TransferRefused({ reason: describe(reverted) })
              : new ChainUnavailable({ chainId: network.chainId, message: describe(error) })
          }
          // Simulated first: a transfer the token would revert is refused before it costs gas.
          const simulate = Effect.tryPromise({
            try: () =>
              publicClient.simulateContract({
                account: collector,
                address: token.address,
                abi: eip3009TokenAbi,
                functionName: "receiveWithAuthorization",
                args
              }),
            catch: refusal
          })
          const send = sendLock.withPermits(1)(
            Effect.gen(function* () {
              const nonce = yield* call(network.chainId, () =>
                publicClient.getTransactionCount({ address: collector, blockTag: "pending" })
              )
              // The gas estimate runs against the next block, not the simulated one: a
              // revert there (an authorization expired or used meanwhile) is a refusal too.
              const hash = yield* Effect.tryPromise({
                try: () =>
                  walletClient.writeContract({
                    chain: walletClient.chain,
                    account: walletClient.account ?? collector,
                    address: token.address,
                    abi: eip3009TokenAbi,
                    functionName: "receiveWithAuthorization",
                    args,
                    nonce
                  }),
                catch: refusal
              })
              return { hash, nonce }
            })
          )
          return Effect.zipRight(simulate, send)
        }
      )

    const awaitOutcome = (chainId: Caip2, hash: Hex) =>
      Effect.suspend(() => {
        const c = connected.get(chainId)
        if (c === undefined) {
          return Effect.fail(new ChainUnavailable({ chainId, message: "not a configured network" }))
        }
        return Effect.map(
          call(chainId, () =>
            c.publicClient.waitForTransactionReceipt({
              hash,
              confirmations: Math.max(1, c.network.confirmations),
              timeout: c.receiptTimeoutMs
            })
          ),
          (receipt) =>
            receipt.status === "success"
              ? ({ _tag: "Confirmed", blockNumber: receipt.blockNumber } as const)
              : ({ _tag: "Reverted", blockNumber: receipt.blockNumber } as const)
        )
      })

    return Chain.of({ networks, tokenDomain, balanceOf, submitReceive, awaitOutcome })
  })
