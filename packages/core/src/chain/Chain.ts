/**
 * The chain port: what the engine needs of a blockchain to take a payment,
 * and nothing more. The EVM adapter (`evm/`) provides it with viem over each
 * configured network's RPC; the sandbox chain is one such network.
 *
 * Submitting and watching are separate calls so that the transaction's hash
 * can be recorded before the engine waits on it: a restart then resumes the
 * wait instead of losing the transfer.
 */
import { Context, type Effect, Schema } from "effect"
import type { Address, Hex } from "viem"
import type { Caip2, Caip19 } from "../shared/Caip.js"
import type { Eip712Domain, ReceiveAuthorization } from "./Eip3009.js"

export interface ChainToken {
  readonly asset: Caip19
  readonly address: Address
  readonly symbol: string
  readonly name: string
  readonly decimals: number
  readonly iconUrl: string | null
  /**
   * The currency the token is priced in: its peg for a stablecoin (`USD` for
   * USDC, `EUR` for EURC), else its own symbol, priced through the rate table.
   */
  readonly priceCurrency: string
}

export interface ChainNetwork {
  readonly chainId: Caip2
  /** The chain reference (`8453`), as the reference reports a transaction's network. */
  readonly reference: string
  readonly name: string
  readonly iconUrl: string | null
  /** The engine's collecting address on this network: the payee of every authorization. */
  readonly collector: Address
  /** Blocks to wait after the one holding the transfer before it counts as settled. */
  readonly confirmations: number
  /** The estimate given to wallets (`etaS`) for a payment on this network. */
  readonly etaSeconds: number
  readonly tokens: ReadonlyArray<ChainToken>
}

/** A transfer sent to the network: its hash, and the collector's nonce it used. */
export interface SubmittedTransfer {
  readonly hash: Hex
  readonly nonce: number
}

export type TransferOutcome =
  | { readonly _tag: "Confirmed"; readonly blockNumber: bigint }
  /** Mined, but the call reverted: nothing moved. */
  | { readonly _tag: "Reverted"; readonly blockNumber: bigint }

/** The network did not answer, or answered with an error that says nothing of the transfer. */
export class ChainUnavailable extends Schema.TaggedError<ChainUnavailable>()("ChainUnavailable", {
  chainId: Schema.String,
  message: Schema.String
}) {}

/** The network refused the transfer before it was mined (the token would revert it). */
export class TransferRefused extends Schema.TaggedError<TransferRefused>()("TransferRefused", {
  reason: Schema.String
}) {}

export class Chain extends Context.Tag("@pay/core/Chain")<
  Chain,
  {
    readonly networks: ReadonlyArray<ChainNetwork>
    /** The token's EIP-712 domain, read from the contract (cached: it never changes). */
    readonly tokenDomain: (asset: Caip19) => Effect.Effect<Eip712Domain, ChainUnavailable>
    readonly balanceOf: (asset: Caip19, owner: Address) => Effect.Effect<bigint, ChainUnavailable>
    /** Sends `receiveWithAuthorization` from the network's collector. */
    readonly submitReceive: (
      asset: Caip19,
      authorization: ReceiveAuthorization,
      signature: Hex
    ) => Effect.Effect<SubmittedTransfer, ChainUnavailable | TransferRefused>
    /** Waits until the transfer is mined and has the network's confirmations. */
    readonly awaitOutcome: (
      chainId: Caip2,
      hash: Hex
    ) => Effect.Effect<TransferOutcome, ChainUnavailable>
  }
>() {}

/** The configured network of a chain id, if any. */
export const networkOf = (
  networks: ReadonlyArray<ChainNetwork>,
  chainId: Caip2
): ChainNetwork | undefined => networks.find((n) => n.chainId === chainId)

/** The configured token of an asset, with its network, if any. */
export const tokenOf = (
  networks: ReadonlyArray<ChainNetwork>,
  asset: Caip19
): { readonly network: ChainNetwork; readonly token: ChainToken } | undefined => {
  for (const network of networks) {
    const token = network.tokens.find((t) => t.asset === asset)
    if (token !== undefined) return { network, token }
  }
  return undefined
}
