/**
 * The chain port: what the engine needs of a blockchain to take a payment,
 * and nothing more. The EVM adapter (`@pay/chain-evm`) provides it with viem
 * over each configured network's RPC; the sandbox chain is one such network.
 *
 * Signing, sending and watching are separate calls so that a transaction
 * can be recorded before it is sent (chainwork/): a restart then sends the
 * same transaction again or resumes the watch instead of losing the transfer.
 */
import { Context, type Effect, Schema } from "effect"
import type { Address, Hex } from "viem"
import type { Caip2, Caip19 } from "../shared/Caip.js"
import type { Eip712Domain } from "./Eip3009.js"
import type { Permission, TokenAuthorization } from "./Permission.js"

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
  /**
   * How a buyer authorizes the transfer (Permission.ts): the token's own
   * EIP-3009 (USDC, EURC), Permit2 for any other ERC-20 (USDT, DAI), or
   * `native` for the network's own coin (`eip155:1/slip44:60`, ETH), whose
   * `address` is then EIP-7528's `NATIVE_COIN_ADDRESS`.
   */
  readonly authorization: TokenAuthorization
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
  /** How often a transaction being watched is looked at. */
  readonly pollIntervalMs: number
  /** A transaction still pending this long is replaced (same nonce, higher fee). */
  readonly stuckAfterMs: number
  readonly tokens: ReadonlyArray<ChainToken>
  /** Uniswap's Permit2 on this network: what a `permit2` token's buyers approve and sign for. */
  readonly permit2: Address
  /**
   * A test network: its tokens are worth nothing (a public testnet, the
   * sandbox chain). Absent or false: a network of real money.
   */
  readonly testnet?: boolean | undefined
  /**
   * Which run of the network this is, for a chain that starts fresh (the
   * sandbox names each of its starts): finding another than the one it last
   * ran against, the engine starts this chain's nonces and unfinished work
   * afresh (chainwork/ChainInstances.ts). Absent for a real network.
   */
  readonly instance?: string | undefined
  /**
   * The account that sends the factory call of a buyer's account not yet
   * deployed (ERC-6492), never the collector: the factory and its calldata
   * come from the buyer, so it holds gas money only. Absent: such accounts
   * cannot pay on this network (a deployed one still can).
   */
  readonly deployer?: Address | undefined
  /** The most gas a factory call may take; one that needs more is refused. */
  readonly deploymentGasCap?: bigint | undefined
}

/** How an undeployed account is deployed: its factory and calldata, as its ERC-6492 signature carries them. */
export interface AccountDeployment {
  readonly factory: Address
  readonly factoryData: Hex
}

/** A contract call the collector is to send, with the gas it needs (estimated, with headroom). */
export interface ChainCall {
  readonly to: Address
  readonly data: Hex
  readonly gas: bigint
  /** The coin sent with it, in wei: a native settlement's amount. Absent: none. */
  readonly value?: bigint | undefined
}

/** EIP-1559 fees, in wei per gas. */
export interface FeeQuote {
  readonly maxFeePerGas: bigint
  readonly maxPriorityFeePerGas: bigint
}

export interface UnsignedTransaction extends ChainCall, FeeQuote {
  readonly nonce: number
}

export interface SignedTransaction {
  readonly hash: Hex
  /** The serialized signed transaction, for `eth_sendRawTransaction`. */
  readonly raw: Hex
}

/** A transaction as the network has it (pending or mined), for checking one a buyer sent. */
export interface NetworkTransaction {
  readonly hash: Hex
  readonly from: Address
  /** Null for a contract creation. */
  readonly to: Address | null
  readonly value: bigint
  readonly input: Hex
  readonly nonce: number
}

/** What the network knows of a transaction now. */
export type TransactionState =
  /** Not in a block, not in the node's pool: never received, or dropped. */
  | { readonly _tag: "Unknown" }
  /** In the node's pool, not in a block yet. */
  | { readonly _tag: "Pending" }
  | {
      readonly _tag: "Mined"
      readonly blockNumber: bigint
      readonly blockHash: Hex
      /** False when the call reverted: the nonce is used, nothing moved. */
      readonly success: boolean
    }

export interface ChainHead {
  readonly number: bigint
  /** The head block's time, in Unix seconds: what an authorization's validBefore is checked against. */
  readonly timestamp: bigint
}

/** The network did not answer, or answered with an error that says nothing of the transfer. */
export class ChainUnavailable extends Schema.TaggedError<ChainUnavailable>()("ChainUnavailable", {
  chainId: Schema.String,
  message: Schema.String,
  /**
   * For the operator's log, never a client: the host of the RPC endpoint that did not
   * answer (only the host: RPC URLs often carry an API key in their path) and the low-level
   * error's code (`ECONNREFUSED`, `ENOTFOUND`, a timeout), when the adapter knows them.
   */
  rpcHost: Schema.optional(Schema.String),
  errorCode: Schema.optional(Schema.String)
}) {}

/** The call would revert (the token refuses the transfer): not sent, nothing spent. */
export class TransferRefused extends Schema.TaggedError<TransferRefused>()("TransferRefused", {
  reason: Schema.String
}) {}

/**
 * The node refused a signed transaction for a reason that is not "I have it
 * already" (underpriced replacement, a nonce ahead of the sequence, no ether
 * for gas): it was not taken, and can be sent again later.
 */
export class TransactionRejected extends Schema.TaggedError<TransactionRejected>()(
  "TransactionRejected",
  { chainId: Schema.String, reason: Schema.String }
) {}

/**
 * The chain port. Sending is split in steps so that the durable chain work
 * (chainwork/) can record each transaction, signed, before it is sent, and
 * recognise it afterwards by its hash: a crash at any point leaves either
 * nothing sent or a recorded transaction to send again or to watch.
 */
export class Chain extends Context.Tag("@pay/core/Chain")<
  Chain,
  {
    readonly networks: ReadonlyArray<ChainNetwork>
    /** The token's EIP-712 domain, read from the contract (cached: it never changes). */
    readonly tokenDomain: (asset: Caip19) => Effect.Effect<Eip712Domain, ChainUnavailable>
    /** The owner's balance of the token, or of the coin for a native asset. */
    readonly balanceOf: (asset: Caip19, owner: Address) => Effect.Effect<bigint, ChainUnavailable>
    /** How much of the token `owner` lets `spender` take (ERC-20 `allowance`). */
    readonly allowance: (
      asset: Caip19,
      owner: Address,
      spender: Address
    ) => Effect.Effect<bigint, ChainUnavailable>
    /**
     * The collector's call that takes the payment, checked against the next
     * block (a call that would revert is `TransferRefused`): the token's
     * `receiveWithAuthorization` for EIP-3009 (a 65-byte signature in the
     * `v, r, s` form, any other in FiatToken v2.2's `bytes signature` form,
     * for ERC-1271 accounts), Permit2's `permitWitnessTransferFrom` to the
     * collector for Permit2. Never an ERC-6492 wrapper: the caller passes the
     * account's own signature.
     */
    readonly receiveCall: (
      asset: Caip19,
      permission: Permission,
      signature: Hex
    ) => Effect.Effect<ChainCall, ChainUnavailable | TransferRefused>
    /**
     * Whether `signature` is the payer's signature of the permission, as a
     * node checks it: an ECDSA recovery for an account without code, the
     * account's ERC-1271 `isValidSignature` for one with code (a contract, an
     * EIP-7702 delegation), and for an ERC-6492 signature the same after its
     * factory call, simulated. One `eth_call`; nothing is sent.
     */
    readonly verifyAuthorization: (
      asset: Caip19,
      permission: Permission,
      signature: Hex
    ) => Effect.Effect<boolean, ChainUnavailable>
    /**
     * The collector's `receiveCall`, simulated (`eth_call` from the collector,
     * nothing sent): `TransferRefused` with the reason when it would revert.
     * For an account not deployed yet, `deployment` is run first in the same
     * simulated call; `signature` is then the inner one.
     */
    readonly simulateReceive: (
      asset: Caip19,
      permission: Permission,
      signature: Hex,
      deployment?: AccountDeployment
    ) => Effect.Effect<void, ChainUnavailable | TransferRefused>
    /** The code at an address: `0x` for none (an EOA), else a contract or an EIP-7702 delegation. */
    readonly codeAt: (chainId: Caip2, address: Address) => Effect.Effect<Hex, ChainUnavailable>
    /**
     * The deployer's factory call (the network's `deployer` sends it), checked
     * against the next block: `TransferRefused` when it would revert or needs
     * more gas than the network's cap.
     */
    readonly deploymentCall: (
      chainId: Caip2,
      deployment: AccountDeployment
    ) => Effect.Effect<ChainCall, ChainUnavailable | TransferRefused>
    /**
     * The collector's ERC-20 `transfer` of `value` to `to`, checked the same
     * way; for a native asset, a plain transfer of the coin (`ChainCall.value`).
     */
    readonly transferCall: (
      asset: Caip19,
      to: Address,
      value: bigint
    ) => Effect.Effect<ChainCall, ChainUnavailable | TransferRefused>
    /** The newest block, or block `atBlock` when given. */
    readonly head: (chainId: Caip2, atBlock?: bigint) => Effect.Effect<ChainHead, ChainUnavailable>
    /**
     * The collector's transaction count (or `sender`'s: the network's
     * deployer, or any account, such as a native payment's buyer): mined
     * (`latest`, or as of block `atBlock` when given) and with the node's
     * pool (`pending`).
     */
    readonly collectorNonce: (
      chainId: Caip2,
      atBlock?: bigint,
      sender?: Address
    ) => Effect.Effect<{ readonly latest: number; readonly pending: number }, ChainUnavailable>
    /** Fees for a transaction to be mined soon. */
    readonly fees: (chainId: Caip2) => Effect.Effect<FeeQuote, ChainUnavailable>
    /**
     * Signs with the collector's key (or `sender`'s: the network's deployer),
     * offline: nothing is sent.
     */
    readonly sign: (
      chainId: Caip2,
      transaction: UnsignedTransaction,
      sender?: Address
    ) => Effect.Effect<SignedTransaction, ChainUnavailable>
    /**
     * Sends a signed transaction. A node that already has it, or has already
     * mined its nonce, answers success: whether it was this transaction that
     * was mined is for `transactionState` to say.
     */
    readonly broadcast: (
      chainId: Caip2,
      raw: Hex
    ) => Effect.Effect<void, ChainUnavailable | TransactionRejected>
    readonly transactionState: (
      chainId: Caip2,
      hash: Hex
    ) => Effect.Effect<TransactionState, ChainUnavailable>
    /** The transaction, pending or mined, as the network has it; undefined when it has none. */
    readonly transaction: (
      chainId: Caip2,
      hash: Hex
    ) => Effect.Effect<NetworkTransaction | undefined, ChainUnavailable>
    /**
     * Whether the permission's nonce is used (or cancelled), as of block
     * `atBlock` (the latest without it): the token's EIP-3009 authorization
     * state, or Permit2's nonce bitmap.
     */
    readonly authorizationUsed: (
      asset: Caip19,
      permission: Permission,
      atBlock?: bigint
    ) => Effect.Effect<boolean, ChainUnavailable>
  }
>() {}

/**
 * The engine's mode, decided once at start from its networks: live (`true`)
 * unless it has networks and every one of them is a test network. An engine
 * without networks is live: it takes no payment on any chain, and nothing it
 * answers should claim to be a test.
 */
export const livemodeOf = (networks: ReadonlyArray<Pick<ChainNetwork, "testnet">>): boolean =>
  !(networks.length > 0 && networks.every((n) => n.testnet === true))

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
