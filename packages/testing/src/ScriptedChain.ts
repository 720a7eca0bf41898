/**
 * A scripted EVM behind the chain port, for unit tests of the chain work: one
 * network with one token (and its own coin, with `native`) and the
 * collector's address, per-sender nonces
 * (mined and pending), a mempool, blocks mined on demand (or after every
 * accepted broadcast) that take the pending transactions in nonce order when
 * they pay the base fee, receipts that revert when the token would (an
 * authorization used or expired, a balance too small) or when a test says so,
 * token balances, and hooks to refuse calls, reject or intercept broadcasts,
 * pause a method or make it fail with ChainUnavailable.
 *
 * Smart accounts: any address can be given code (`setCode`); an account the
 * test scripts (`addSmartAccount`) checks signatures by its verdict (ERC-1271)
 * and, when not deployed yet, is deployed by the deployer's factory call
 * (ERC-6492) or by someone else (`deployExternally`). Accounts without code
 * are EOAs: their signatures are recovered (ECDSA). The network's deployer
 * signs and counts nonces of its own, beside the collector.
 *
 * The network's own coin (`native`, off unless given): a token the engine
 * takes by a transfer the buyer's wallet sends (`sendTransaction`: pooled,
 * mined at the next block like any other), coin balances per address
 * (`coinBalance`, `mintCoin`; the collector and the deployer start with gas
 * money), transactions that carry value, and gas: each mined transaction
 * burns its whole gas limit at its effective price (the base fee and its tip,
 * at most its max fee) from its sender, reverted or not, and the node refuses
 * one its sender cannot pay for. Without `native` no coin is counted, as
 * before. A test scripts the buyer's transfer going wrong as it would: another
 * value sent, a revert (`revertIf`), a transfer dropped and its nonce taken by
 * the wallet's cancel (`dropIf`).
 *
 * A signed transaction is the JSON of its fields (as hex) and its hash the
 * keccak of that: the same fields always sign to the same transaction.
 */
import {
  type AccountDeployment,
  type Caip2,
  type Caip19,
  Chain,
  type ChainCall,
  type ChainNetwork,
  ChainUnavailable,
  type FeeQuote,
  isSignedByPayer,
  NATIVE_COIN_ADDRESS,
  type NetworkTransaction,
  PERMIT2_ADDRESS,
  type Permission,
  parsePayerSignature,
  type ReceiveAuthorization,
  TransactionRejected,
  type TransactionState,
  TransferRefused,
  type UnsignedTransaction
} from "@pay/core"
import { Effect, Layer } from "effect"
import { type Address, type Hex, hexToString, keccak256, stringToHex } from "viem"

export const CHAIN_ID = "eip155:8453" as Caip2
export const TOKEN = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Address
export const ASSET = `${CHAIN_ID}/erc20:${TOKEN}` as Caip19
export const COLLECTOR = "0x00000000000000000000000000000000000000C0" as Address
/** The network's deployer: sends the factory calls of accounts not deployed yet. */
export const DEPLOYER = "0x0000000000000000000000000000000000000De0" as Address
/** The code a scripted smart account gets once deployed. */
export const ACCOUNT_CODE = "0x60806040" as Hex
/** The gas a scripted factory call takes, unless a test says otherwise. */
export const DEPLOYMENT_GAS = 250_000n
const GWEI = 1_000_000_000n
/** A plain transfer of the coin to an account without code (core's settlement gas). */
export const NATIVE_TRANSFER_GAS = 21_000n
/** The gas money the collector and the deployer start with, when the chain scripts the coin: 1 ETH. */
export const GAS_MONEY = 10n ** 18n

/** The coin a native asset names on `chainId` (SLIP-44's 60, ether's coin type). */
export const nativeAssetOf = (chainId: Caip2) => `${chainId}/slip44:60` as Caip19

/**
 * A transaction's intrinsic gas, as a wallet estimates a plain transfer to an
 * account without code: 21,000, and 16 a non-zero byte of data, 4 a zero byte.
 */
export const intrinsicGas = (data: Hex): bigint => {
  let gas = NATIVE_TRANSFER_GAS
  for (let i = 2; i < data.length; i += 2) gas += data.slice(i, i + 2) === "00" ? 4n : 16n
  return gas
}

export type ChainMethod = Exclude<keyof Chain["Type"], "networks">

/** What a transaction's data asks for. */
export type TxCall =
  | {
      readonly kind: "receive"
      readonly from: Address
      readonly to: Address
      readonly value: bigint
      readonly validBefore: bigint
      readonly authNonce: Hex
    }
  | { readonly kind: "transfer"; readonly to: Address; readonly value: bigint }
  /** A factory call that deploys `account` (ERC-6492's factory and calldata). */
  | {
      readonly kind: "deploy"
      readonly account: Address
      readonly factory: Address
      readonly factoryData: Hex
    }
  /** A zero-value transfer to oneself, without data (the engine's cancel, or a wallet's). */
  | { readonly kind: "cancel" }
  /**
   * A transfer of the coin, the transaction's `value` to its `to`: a buyer's
   * (`sendTransaction`, its data the option's reference) or the collector's
   * settlement of a native payment (no data).
   */
  | { readonly kind: "coin" }
  /** A transaction the engine did not send (another process with the key, say). */
  | { readonly kind: "external" }

export interface FakeTx extends UnsignedTransaction {
  readonly hash: Hex
  readonly raw: Hex
  readonly sender: Address
  readonly call: TxCall
}

export interface MinedTx extends FakeTx {
  readonly blockNumber: bigint
  readonly success: boolean
  /** The coin its gas burned from its sender: 0 when the chain counts no coin (no `native`). */
  readonly gasCost: bigint
}

export interface ScriptedChainOptions {
  /** The network, `eip155:8453` (Base) unless given: a platform's test engine uses Base Sepolia. */
  readonly chainId?: Caip2
  /** The USDC contract's address on it. */
  readonly token?: Address
  /** The network's name, as the gateway shows it. */
  readonly name?: string
  /** A test network (the engine then runs in test mode). */
  readonly testnet?: boolean
  /** The head's time in milliseconds, read at each block (a test's clock); `timestamp` otherwise. */
  readonly now?: () => number
  readonly confirmations?: number
  readonly pollIntervalMs?: number
  readonly stuckAfterMs?: number
  /** The chain's run, for a chain that starts fresh (as the sandbox names each start). */
  readonly instance?: string
  /** The network's deployer (`DEPLOYER` unless given); null for a network without one. */
  readonly deployer?: Address | null
  /** The most gas a factory call may take (the network's `deploymentGasCap`). */
  readonly deploymentGasCap?: bigint
  /**
   * The network's own coin as a token the engine takes (`authorization:
   * "native"`, asset `<chainId>/slip44:60`, after USDC): `true` for ETH, or
   * its symbol and name. It turns on the coin's accounting (balances, value,
   * gas). Default: none, the network has USDC only and counts no coin.
   */
  readonly native?: boolean | { readonly symbol?: string; readonly name?: string }
  /** With `native`: the coin the collector and the deployer start with (`GAS_MONEY`, 1 ETH, unless given). */
  readonly gasMoney?: bigint
}

/** A transaction a wallet sends (`eth_sendTransaction`): the buyer's transfer of the coin. */
export interface WalletSend {
  readonly from: Address
  readonly to: Address
  readonly value: bigint
  readonly data?: Hex
  /** The wallet's gas limit: the transfer's intrinsic gas unless given. */
  readonly gas?: bigint
  /** The sender's next nonce (counting its pooled transactions) unless given. */
  readonly nonce?: number
  /** The node's quote (`quote`) unless given. */
  readonly maxFeePerGas?: bigint
  readonly maxPriorityFeePerGas?: bigint
}

/** An account the test scripts as a smart account: how it checks signatures and how it is deployed. */
export interface ScriptedAccount {
  /** Its verdict on a signature (ERC-1271's `isValidSignature`), once it has code. */
  accepts: (signature: Hex) => boolean
  /** Its factory and calldata (what its ERC-6492 signatures carry), for a deployment. */
  readonly deployment?: AccountDeployment
  /** The gas its factory call takes. */
  deploymentGas: bigint
}

const json = (value: unknown) =>
  JSON.stringify(value, (_, v) => (typeof v === "bigint" ? `${v}n` : v))
const unjson = <A>(text: string): A =>
  JSON.parse(text, (_, v) =>
    typeof v === "string" && /^\d+n$/.test(v) ? BigInt(v.slice(0, -1)) : v
  )

const decodeCall = (sender: Address, to: Address, data: Hex, value: bigint): TxCall => {
  if (data === "0x") {
    if (value > 0n) return { kind: "coin" }
    return to === sender ? { kind: "cancel" } : { kind: "external" }
  }
  try {
    const text = hexToString(data)
    return text.startsWith("{") ? unjson<TxCall>(text) : { kind: "external" }
  } catch {
    // Data that is not one of this chain's calls (random bytes that start like JSON).
    return { kind: "external" }
  }
}

const same = (a: Address, b: Address) => a.toLowerCase() === b.toLowerCase()

export class ScriptedChain {
  readonly chainId: Caip2
  readonly token: Address
  readonly asset: Caip19
  /** The network's own coin as the engine takes it (`native`), or undefined. */
  readonly nativeAsset: Caip19 | undefined
  readonly network: ChainNetwork
  readonly service: Chain["Type"]
  readonly layer: Layer.Layer<Chain>
  /** The head's number: the last block mined. */
  blockNumber = 100n
  /** The head's time, in Unix seconds (what authorizations are checked against). */
  timestamp = 1_000n
  /** A transaction is mined only when its maxFeePerGas reaches this. */
  baseFee = GWEI
  /** What `fees` quotes. */
  quote: FeeQuote = { maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: GWEI }
  /** Mine a block after every broadcast the node takes (hardhat's automine). */
  automine = true
  /** Methods that fail with ChainUnavailable while listed. */
  readonly down = new Set<ChainMethod>()
  /** Whether a transaction mined reverts (beyond what the token itself refuses). */
  revertIf: (tx: FakeTx) => boolean = () => false
  /**
   * Whether a pooled transaction is dropped instead of mined: at the block
   * that would take it, the node forgets it and its sender's wallet sends a
   * cancel at its nonce (a zero-value transfer to itself), mined in its place.
   * A buyer's transfer dropped so fails its payment `transaction_dropped`.
   */
  dropIf: (tx: FakeTx) => boolean = () => false
  /** A reason for the token to refuse `receiveCall`, or undefined. */
  refuseReceive: (auth: ReceiveAuthorization) => string | undefined = () => undefined
  /** A reason for the token to refuse `transferCall`, or undefined. */
  refuseTransfer: (to: Address, value: bigint) => string | undefined = () => undefined
  /** A reason for the node to reject a broadcast (TransactionRejected), or undefined. */
  rejectBroadcast: (tx: FakeTx) => string | undefined = () => undefined
  /** Whether a broadcast of this transaction fails with ChainUnavailable (it never reached the node). */
  unreachableFor: (tx: FakeTx) => boolean = () => false
  /**
   * Refuse a transaction whose nonce is past the sender's next (EDR's "nonce
   * too high"), as the sandbox does, instead of pooling it as geth does.
   */
  rejectNonceGaps = false
  /** Called at each broadcast before the node looks at it. */
  onBroadcast: (tx: FakeTx) => void = () => {}
  /** A reason for the factory call to be refused (`deploymentCall`), or undefined. */
  refuseDeployment: (deployment: AccountDeployment) => string | undefined = () => undefined
  /** The network's deployer, if it has one. */
  readonly deployer: Address | undefined
  /** Each address's code, where it has any. */
  private readonly codes = new Map<string, Hex>()
  /** The accounts scripted as smart accounts, by address. */
  private readonly accounts = new Map<string, ScriptedAccount>()

  readonly mempool: Array<FakeTx> = []
  private readonly minedInOrder: Array<MinedTx> = []
  /** The mined transactions by hash, and each sender's in nonce order: reads stay cheap as a test pays thousands. */
  private readonly minedByHash = new Map<Hex, MinedTx>()
  /** Every transaction mined, in order. */
  get mined(): ReadonlyArray<MinedTx> {
    return this.minedInOrder
  }
  private readonly minedBySender = new Map<string, Array<MinedTx>>()
  /** Every transaction signed, in order. */
  readonly signed: Array<FakeTx> = []
  /** Every broadcast the node took into its pool, in order. */
  readonly broadcasts: Array<FakeTx> = []
  /** Every transaction a wallet sent (`sendTransaction`), in order: not among `broadcasts`. */
  readonly walletSends: Array<FakeTx> = []
  /** Every transaction `dropIf` dropped, in order. */
  readonly dropped: Array<FakeTx> = []
  readonly calls = new Map<ChainMethod, number>()
  private readonly balances = new Map<string, bigint>()
  /** Each address's coin, when the chain counts it (`native`). */
  private readonly coins = new Map<string, bigint>()
  /** Each used authorization, with the block that used it. */
  private readonly usedAuthorizations = new Map<string, bigint>()
  /** Each mined block's time, where it differs from the head's. */
  private readonly blockTimes = new Map<bigint, bigint>()
  private readonly failures = new Map<ChainMethod, number>()
  private readonly pauses = new Map<ChainMethod, Array<number>>()

  private readonly now: (() => number) | undefined

  constructor(options: ScriptedChainOptions = {}) {
    this.chainId = options.chainId ?? CHAIN_ID
    this.token = options.token ?? TOKEN
    this.asset = `${this.chainId}/erc20:${this.token}` as Caip19
    const native =
      options.native === undefined || options.native === false
        ? undefined
        : options.native === true
          ? {}
          : options.native
    this.nativeAsset = native === undefined ? undefined : nativeAssetOf(this.chainId)
    const symbol = native?.symbol ?? "ETH"
    this.now = options.now
    this.deployer = options.deployer === null ? undefined : (options.deployer ?? DEPLOYER)
    this.network = {
      chainId: this.chainId,
      reference: this.chainId.slice("eip155:".length),
      name: options.name ?? "Fake Base",
      ...(options.testnet === undefined ? {} : { testnet: options.testnet }),
      iconUrl: null,
      collector: COLLECTOR,
      confirmations: options.confirmations ?? 1,
      etaSeconds: 2,
      pollIntervalMs: options.pollIntervalMs ?? 100,
      stuckAfterMs: options.stuckAfterMs ?? 60_000,
      ...(options.instance === undefined ? {} : { instance: options.instance }),
      ...(this.deployer === undefined ? {} : { deployer: this.deployer }),
      deploymentGasCap: options.deploymentGasCap ?? 1_000_000n,
      tokens: [
        {
          asset: this.asset,
          address: this.token,
          symbol: "USDC",
          name: "USD Coin",
          decimals: 6,
          iconUrl: null,
          priceCurrency: "USD",
          authorization: "eip3009"
        },
        ...(this.nativeAsset === undefined
          ? []
          : [
              {
                asset: this.nativeAsset,
                address: NATIVE_COIN_ADDRESS,
                symbol,
                name: native?.name ?? (symbol === "ETH" ? "Ether" : symbol),
                decimals: 18,
                iconUrl: null,
                priceCurrency: symbol,
                authorization: "native" as const
              }
            ])
      ],
      // No Permit2 is scripted: its tokens are EIP-3009's.
      permit2: PERMIT2_ADDRESS
    }
    if (this.nativeAsset !== undefined) {
      const gasMoney = options.gasMoney ?? GAS_MONEY
      this.mintCoin(COLLECTOR, gasMoney)
      if (this.deployer !== undefined) this.mintCoin(this.deployer, gasMoney)
    }
    this.service = this.makeService()
    this.layer = Layer.succeed(Chain, this.service)
  }

  // ---------------------------------------------------------------------------
  // The test's handles

  balance(owner: Address): bigint {
    return this.balances.get(owner.toLowerCase()) ?? 0n
  }

  mint(owner: Address, value: bigint): void {
    this.balances.set(owner.toLowerCase(), this.balance(owner) + value)
  }

  /** `owner`'s coin, in wei (counted with `native` only). */
  coinBalance(owner: Address): bigint {
    return this.coins.get(owner.toLowerCase()) ?? 0n
  }

  /** Gives `owner` coin (a negative value takes it away): a faucet, or gas money. */
  mintCoin(owner: Address, wei: bigint): void {
    this.coins.set(owner.toLowerCase(), this.coinBalance(owner) + wei)
  }

  /** The most a wallet's transaction can cost its sender: its value, and its gas at its max fee. */
  sendCost(tx: WalletSend): bigint {
    const gas = tx.gas ?? intrinsicGas(tx.data ?? "0x")
    return tx.value + gas * (tx.maxFeePerGas ?? this.quote.maxFeePerGas)
  }

  /**
   * A wallet sends a transaction (`eth_sendTransaction`, signed with the
   * sender's key): pooled as pending, mined at the next block (`mine()`, or
   * the one after the engine's next broadcast with `automine`), as any other
   * pooled transaction is: its value moves from the sender to `to`, its gas
   * burns, its sender's nonce is used. Answers its hash, as the wallet does.
   * Throws, as a node refuses it, when the sender cannot pay for it (with
   * `native`) or its nonce is used.
   */
  sendTransaction(send: WalletSend): Hex {
    if (this.nativeAsset === undefined && send.value > 0n) {
      throw new Error("ScriptedChain: no coin to send without the `native` option")
    }
    const nonce = send.nonce ?? this.pendingNonce(send.from)
    if (nonce < this.latestNonce(send.from)) {
      throw new Error(`nonce too low: ${send.from}'s next is ${this.latestNonce(send.from)}`)
    }
    const cost = this.sendCost(send)
    if (this.nativeAsset !== undefined && this.coinBalance(send.from) < cost) {
      throw new Error(
        `insufficient funds for gas * price + value: ${send.from} holds ${this.coinBalance(send.from)} wei, the transaction may cost ${cost}`
      )
    }
    const fields = {
      to: send.to,
      data: send.data ?? ("0x" as Hex),
      value: send.value,
      gas: send.gas ?? intrinsicGas(send.data ?? "0x"),
      maxFeePerGas: send.maxFeePerGas ?? this.quote.maxFeePerGas,
      maxPriorityFeePerGas: send.maxPriorityFeePerGas ?? this.quote.maxPriorityFeePerGas,
      nonce
    }
    const raw = stringToHex(
      json({ chainId: this.chainId, wallet: true, sender: send.from, ...fields })
    )
    const tx: FakeTx = {
      ...fields,
      hash: keccak256(raw),
      raw,
      sender: send.from,
      call:
        fields.value === 0n && fields.data === "0x" && same(send.to, send.from)
          ? { kind: "cancel" }
          : { kind: "coin" }
    }
    // A replacement (same sender and nonce) takes the pooled one's place, as a wallet's "speed up".
    for (const t of [...this.mempool]) {
      if (same(t.sender, tx.sender) && t.nonce === nonce) this.drop(t.hash)
    }
    this.mempool.push(tx)
    this.walletSends.push(tx)
    return tx.hash
  }

  /** The code at `address`: `0x` for an EOA (or an account not deployed yet). */
  codeOf(address: Address): Hex {
    return this.codes.get(address.toLowerCase()) ?? "0x"
  }

  /** Gives `address` code (`0x` takes it away): a contract, or an EIP-7702 delegation. */
  setCode(address: Address, code: Hex): void {
    if (code === "0x") this.codes.delete(address.toLowerCase())
    else this.codes.set(address.toLowerCase(), code)
  }

  /**
   * Scripts `address` as a smart account: deployed now (code at once) or not
   * yet (deployed by the factory call its `deployment` names), accepting the
   * signatures `accepts` says (all, unless given).
   */
  addSmartAccount(
    address: Address,
    options: {
      readonly deployed?: boolean
      readonly deployment?: AccountDeployment
      readonly accepts?: (signature: Hex) => boolean
      readonly deploymentGas?: bigint
    } = {}
  ): ScriptedAccount {
    const account: ScriptedAccount = {
      accepts: options.accepts ?? (() => true),
      ...(options.deployment === undefined ? {} : { deployment: options.deployment }),
      deploymentGas: options.deploymentGas ?? DEPLOYMENT_GAS
    }
    this.accounts.set(address.toLowerCase(), account)
    if (options.deployed === true) this.setCode(address, ACCOUNT_CODE)
    return account
  }

  /** The scripted smart account at `address`, if any: its verdict can be changed. */
  smartAccount(address: Address): ScriptedAccount | undefined {
    return this.accounts.get(address.toLowerCase())
  }

  /** Someone else deploys the account (the buyer's wallet, another engine): it has code now. */
  deployExternally(address: Address): void {
    this.setCode(address, ACCOUNT_CODE)
  }

  /** The scripted account its factory call deploys. */
  private accountDeployedBy(deployment: AccountDeployment): Address | undefined {
    for (const [address, account] of this.accounts) {
      const d = account.deployment
      if (
        d !== undefined &&
        same(d.factory, deployment.factory) &&
        d.factoryData.toLowerCase() === deployment.factoryData.toLowerCase()
      ) {
        return address as Address
      }
    }
    return undefined
  }

  /**
   * Whether the token takes `signature` as `auth.from`'s: a scripted smart
   * account's verdict once it has code (none without: nothing answers
   * ERC-1271), an ECDSA recovery for any other account.
   */
  private signatureValid(auth: ReceiveAuthorization, signature: Hex): Effect.Effect<boolean> {
    const account = this.accounts.get(auth.from.toLowerCase())
    if (account !== undefined) {
      return Effect.succeed(this.codeOf(auth.from) !== "0x" && account.accepts(signature))
    }
    if (this.codeOf(auth.from) !== "0x") return Effect.succeed(false)
    return isSignedByPayer(
      {
        name: "USD Coin",
        version: "2",
        chainId: BigInt(this.network.reference),
        verifyingContract: this.token
      },
      auth,
      signature
    )
  }

  /** The next `count` calls of `method` fail with ChainUnavailable. */
  failNext(method: ChainMethod, count = 1): void {
    this.failures.set(method, (this.failures.get(method) ?? 0) + count)
  }

  /** The next call of `method` waits `ms` (on the clock the test runs on) before it acts. */
  pauseNext(method: ChainMethod, ms: number): void {
    this.pauses.set(method, [...(this.pauses.get(method) ?? []), ms])
  }

  /** Transactions mined from `sender` (as of block `atBlock` when given): its next nonce then. */
  latestNonce(sender: Address, atBlock?: bigint): number {
    const sent = this.minedBySender.get(sender.toLowerCase()) ?? []
    if (atBlock === undefined) return sent.length
    // Mined in block order: count back from the newest past the ones after `atBlock`.
    let count = sent.length
    while (count > 0 && (sent[count - 1] as MinedTx).blockNumber > atBlock) count--
    return count
  }

  /** The next nonce counting the pool's transactions that follow the mined ones without a gap. */
  pendingNonce(sender: Address): number {
    let next = this.latestNonce(sender)
    while (this.mempool.some((t) => same(t.sender, sender) && t.nonce === next)) next++
    return next
  }

  /** The node forgets a pooled transaction (evicted, or the node restarted). */
  drop(hash: Hex): void {
    const at = this.mempool.findIndex((t) => t.hash === hash)
    if (at >= 0) this.mempool.splice(at, 1)
  }

  /**
   * Mines one block: for each sender, its pooled transactions from its next
   * nonce on, in order, while each pays the base fee (one `dropIf` says to
   * drop is replaced by its sender's cancel). Pooled ones whose nonce is now
   * used are dropped.
   */
  mine(): ReadonlyArray<MinedTx> {
    this.followClock()
    this.blockNumber++
    this.blockTimes.set(this.blockNumber, this.timestamp)
    const included: Array<MinedTx> = []
    const senders = [...new Set(this.mempool.map((t) => t.sender.toLowerCase()))]
    for (const sender of senders) {
      for (;;) {
        const next = this.latestNonce(sender as Address)
        const tx = this.mempool.find((t) => t.sender.toLowerCase() === sender && t.nonce === next)
        if (tx === undefined) break
        if (this.dropIf(tx)) {
          this.drop(tx.hash)
          this.dropped.push(tx)
          included.push(this.include(this.walletCancel(tx)))
          continue
        }
        if (tx.maxFeePerGas < this.baseFee) break
        this.drop(tx.hash)
        included.push(this.include(tx))
      }
    }
    for (const tx of [...this.mempool]) {
      if (tx.nonce < this.latestNonce(tx.sender)) this.drop(tx.hash)
    }
    return included
  }

  /** A transaction executed in the block being mined: its gas burned, its effect, recorded. */
  private include(tx: FakeTx): MinedTx {
    const gasCost = this.burnGas(tx)
    const mined: MinedTx = {
      ...tx,
      blockNumber: this.blockNumber,
      success: this.execute(tx),
      gasCost
    }
    this.record(mined)
    return mined
  }

  /**
   * The gas a mined transaction burns from its sender, when the chain counts
   * the coin: its whole gas limit at its effective price (the base fee and
   * its tip, at most its max fee), never more than the sender holds.
   */
  private burnGas(tx: FakeTx): bigint {
    if (this.nativeAsset === undefined) return 0n
    const tipped = this.baseFee + tx.maxPriorityFeePerGas
    const price = tipped < tx.maxFeePerGas ? tipped : tx.maxFeePerGas
    const cost = tx.gas * price
    const held = this.coinBalance(tx.sender)
    const burned = cost < held ? cost : held
    this.mintCoin(tx.sender, -burned)
    return burned
  }

  /** The cancel a wallet sends in place of its pooled `tx`: nothing to itself, at its nonce. */
  private walletCancel(tx: FakeTx): FakeTx {
    const fields = {
      to: tx.sender,
      data: "0x" as Hex,
      gas: NATIVE_TRANSFER_GAS,
      maxFeePerGas: tx.maxFeePerGas * 2n,
      maxPriorityFeePerGas: tx.maxPriorityFeePerGas * 2n,
      nonce: tx.nonce
    }
    const raw = stringToHex(json({ cancels: tx.hash, sender: tx.sender, ...fields }))
    return { ...fields, hash: keccak256(raw), raw, sender: tx.sender, call: { kind: "cancel" } }
  }

  /**
   * Mines, in a block of its own, a transaction not of the engine from the
   * collector (or `sender`) at `nonce`.
   */
  mineExternal(nonce?: number, sender: Address = COLLECTOR): MinedTx {
    nonce ??= this.latestNonce(sender)
    for (const tx of [...this.mempool]) {
      if (same(tx.sender, sender) && tx.nonce === nonce) this.drop(tx.hash)
    }
    const fields = {
      to: "0x00000000000000000000000000000000000000e0" as Address,
      data: "0x" as Hex,
      gas: 21_000n,
      maxFeePerGas: 10n * GWEI,
      maxPriorityFeePerGas: 5n * GWEI,
      nonce
    }
    const raw = stringToHex(json({ external: true, sender, ...fields }))
    const tx: FakeTx = {
      ...fields,
      hash: keccak256(raw),
      raw,
      sender,
      call: { kind: "external" }
    }
    this.mempool.push(tx)
    const mined = this.mine().find((t) => t.hash === tx.hash)
    if (mined === undefined) throw new Error(`external transaction at nonce ${nonce} not mined`)
    return mined
  }

  /** A transaction mined: kept in order, by hash and by sender. */
  private record(mined: MinedTx): void {
    this.minedInOrder.push(mined)
    this.minedByHash.set(mined.hash, mined)
    const sender = mined.sender.toLowerCase()
    const sent = this.minedBySender.get(sender)
    if (sent === undefined) this.minedBySender.set(sender, [mined])
    else sent.push(mined)
  }

  stateOf(hash: Hex): TransactionState["_tag"] {
    if (this.minedByHash.has(hash)) return "Mined"
    return this.mempool.some((t) => t.hash === hash) ? "Pending" : "Unknown"
  }

  /**
   * The effect of a mined transaction: its value (the coin it sends), then
   * the token's call; false when it reverts, and then nothing moved.
   */
  private execute(tx: FakeTx): boolean {
    if (this.revertIf(tx)) return false
    const value = tx.value ?? 0n
    if (value > 0n) {
      if (this.coinBalance(tx.sender) < value) return false
      if (!this.executeCall(tx)) return false
      this.mintCoin(tx.sender, -value)
      this.mintCoin(tx.to, value)
      return true
    }
    return this.executeCall(tx)
  }

  /** The token's effect of a mined transaction's call: false when it reverts. */
  private executeCall(tx: FakeTx): boolean {
    const call = tx.call
    switch (call.kind) {
      case "receive": {
        const key = `${call.from.toLowerCase()}/${call.authNonce}`
        const signature = (call as { readonly signature?: Hex }).signature
        const account = this.accounts.get(call.from.toLowerCase())
        if (
          !same(tx.to, this.token) ||
          !same(call.to, tx.sender) ||
          // A scripted account checks its signature when the token asks it, as it is then.
          (account !== undefined &&
            (this.codeOf(call.from) === "0x" ||
              signature === undefined ||
              !account.accepts(signature))) ||
          this.usedAuthorizations.has(key) ||
          this.timestamp >= call.validBefore ||
          this.balance(call.from) < call.value
        ) {
          return false
        }
        this.usedAuthorizations.set(key, this.blockNumber)
        this.mint(call.from, -call.value)
        this.mint(call.to, call.value)
        return true
      }
      case "transfer":
        if (!same(tx.to, this.token) || this.balance(tx.sender) < call.value) return false
        this.mint(tx.sender, -call.value)
        this.mint(call.to, call.value)
        return true
      case "deploy":
        // The factory's CREATE2 reverts where the account exists already.
        if (!same(tx.to, call.factory) || this.codeOf(call.account) !== "0x") return false
        this.setCode(call.account, ACCOUNT_CODE)
        return true
      case "cancel":
      case "coin":
      case "external":
        return true
    }
  }

  /** What the token refuses whoever signed: a used or expired authorization, a balance too small. */
  private tokenRefusal(auth: ReceiveAuthorization): string | undefined {
    return this.usedAuthorizations.has(`${auth.from.toLowerCase()}/${auth.nonce}`)
      ? "FiatTokenV2: authorization is used or canceled"
      : this.timestamp >= auth.validBefore
        ? "FiatTokenV2: authorization is expired"
        : this.balance(auth.from) < auth.value
          ? "ERC20: transfer amount exceeds balance"
          : undefined
  }

  /**
   * Why the token refuses the receive now: the test's reason, a scripted
   * account refusing the signature (or not deployed: nothing to ask), then
   * the token's own. EOAs' signatures are not recovered here, as before.
   */
  private receiveRefusal(auth: ReceiveAuthorization, signature: Hex): string | undefined {
    const account = this.accounts.get(auth.from.toLowerCase())
    return (
      this.refuseReceive(auth) ??
      (account !== undefined && (this.codeOf(auth.from) === "0x" || !account.accepts(signature))
        ? "FiatTokenV2: invalid signature"
        : this.tokenRefusal(auth))
    )
  }

  // ---------------------------------------------------------------------------
  // The port

  /** The head's time moved up to the test's clock, when the chain follows one. */
  private followClock(): void {
    if (this.now === undefined) return
    const seconds = BigInt(Math.floor(this.now() / 1000))
    if (seconds > this.timestamp) this.timestamp = seconds
  }

  /** Counts the call, fails it if the test says so, pauses it if asked. */
  private enter(method: ChainMethod, chainId: string): Effect.Effect<void, ChainUnavailable> {
    return Effect.suspend(() => {
      this.followClock()
      this.calls.set(method, (this.calls.get(method) ?? 0) + 1)
      const pause = this.pauses.get(method)?.shift()
      const failing = this.failures.get(method) ?? 0
      if (failing > 0) this.failures.set(method, failing - 1)
      const fail =
        failing > 0 || this.down.has(method)
          ? Effect.fail(new ChainUnavailable({ chainId, message: `${method}: the node is down` }))
          : Effect.void
      return pause === undefined ? fail : Effect.zipRight(Effect.sleep(pause), fail)
    })
  }

  private checkChain(chainId: string): Effect.Effect<void, ChainUnavailable> {
    return chainId === this.chainId ||
      chainId === this.asset ||
      (this.nativeAsset !== undefined && chainId === this.nativeAsset)
      ? Effect.void
      : Effect.fail(new ChainUnavailable({ chainId, message: "not a configured network" }))
  }

  private decodeRaw(raw: Hex): FakeTx {
    const fields = unjson<UnsignedTransaction & { sender: Address }>(hexToString(raw))
    return {
      to: fields.to,
      data: fields.data,
      ...(fields.value === undefined ? {} : { value: fields.value }),
      gas: fields.gas,
      maxFeePerGas: fields.maxFeePerGas,
      maxPriorityFeePerGas: fields.maxPriorityFeePerGas,
      nonce: fields.nonce,
      sender: fields.sender,
      raw,
      hash: keccak256(raw),
      call: decodeCall(fields.sender, fields.to, fields.data, fields.value ?? 0n)
    }
  }

  /** The authorization of an EIP-3009 permission: the only kind this chain scripts. */
  private eip3009(permission: Permission): ReceiveAuthorization {
    if (permission.kind !== "eip3009") {
      throw new Error("ScriptedChain scripts EIP-3009 tokens only, not Permit2")
    }
    return permission.authorization
  }

  private makeService(): Chain["Type"] {
    return Chain.of({
      networks: [this.network],
      tokenDomain: (asset) =>
        this.enter("tokenDomain", asset).pipe(
          Effect.zipRight(this.checkChain(asset)),
          Effect.as({
            name: "USD Coin",
            version: "2",
            chainId: BigInt(this.network.reference),
            verifyingContract: this.token
          })
        ),
      balanceOf: (asset, owner) =>
        this.enter("balanceOf", asset).pipe(
          Effect.zipRight(this.checkChain(asset)),
          Effect.map(() =>
            asset === this.nativeAsset ? this.coinBalance(owner) : this.balance(owner)
          )
        ),
      receiveCall: (asset, permission, signature) =>
        this.enter("receiveCall", asset).pipe(
          Effect.zipRight(this.checkChain(asset)),
          Effect.flatMap((): Effect.Effect<ChainCall, TransferRefused> => {
            const auth = this.eip3009(permission)
            const refused = this.receiveRefusal(auth, signature)
            if (refused !== undefined) return Effect.fail(new TransferRefused({ reason: refused }))
            const call: TxCall = {
              kind: "receive",
              from: auth.from,
              to: auth.to,
              value: auth.value,
              validBefore: auth.validBefore,
              authNonce: auth.nonce
            }
            return Effect.succeed({
              to: this.token,
              data: stringToHex(json({ ...call, signature })),
              gas: 90_000n
            })
          })
        ),
      transferCall: (asset, to, value) =>
        this.enter("transferCall", asset).pipe(
          Effect.zipRight(this.checkChain(asset)),
          Effect.flatMap((): Effect.Effect<ChainCall, TransferRefused> => {
            if (asset === this.nativeAsset) {
              // A plain transfer of the coin: no contract, the value sent with the transaction.
              const held = this.coinBalance(COLLECTOR)
              const refused =
                this.refuseTransfer(to, value) ??
                (held < value
                  ? `insufficient funds: the collector holds ${held} wei of ${asset}, less than the ${value} it would send`
                  : undefined)
              if (refused !== undefined)
                return Effect.fail(new TransferRefused({ reason: refused }))
              return Effect.succeed({ to, data: "0x", gas: NATIVE_TRANSFER_GAS, value })
            }
            const refused =
              this.refuseTransfer(to, value) ??
              (this.balance(COLLECTOR) < value
                ? "ERC20: transfer amount exceeds balance"
                : undefined)
            if (refused !== undefined) return Effect.fail(new TransferRefused({ reason: refused }))
            const call: TxCall = { kind: "transfer", to, value }
            return Effect.succeed({ to: this.token, data: stringToHex(json(call)), gas: 60_000n })
          })
        ),
      head: (chainId, atBlock) =>
        this.enter("head", chainId).pipe(
          Effect.zipRight(this.checkChain(chainId)),
          Effect.map(() =>
            atBlock === undefined || atBlock >= this.blockNumber
              ? { number: this.blockNumber, timestamp: this.timestamp }
              : { number: atBlock, timestamp: this.blockTimes.get(atBlock) ?? 0n }
          )
        ),
      authorizationUsed: (asset, permission, atBlock) =>
        this.enter("authorizationUsed", asset).pipe(
          Effect.zipRight(this.checkChain(asset)),
          Effect.map(() => {
            const { from, nonce } = this.eip3009(permission)
            const usedAt = this.usedAuthorizations.get(`${from.toLowerCase()}/${nonce}`)
            return usedAt !== undefined && (atBlock === undefined || usedAt <= atBlock)
          })
        ),
      verifyAuthorization: (asset, permission, signature) =>
        this.enter("verifyAuthorization", asset).pipe(
          Effect.zipRight(this.checkChain(asset)),
          Effect.flatMap(() => {
            const auth = this.eip3009(permission)
            const parsed = parsePayerSignature(signature)
            if (typeof parsed === "string") return Effect.succeed(false)
            if (parsed.kind !== "counterfactual") return this.signatureValid(auth, parsed.signature)
            // ERC-6492: the factory call simulated first, then the account asked.
            const account = this.accounts.get(auth.from.toLowerCase())
            const deploys = this.accountDeployedBy(parsed.deployment)
            if (this.codeOf(auth.from) !== "0x") return this.signatureValid(auth, parsed.signature)
            return Effect.succeed(
              account !== undefined &&
                deploys !== undefined &&
                same(deploys, auth.from) &&
                account.accepts(parsed.signature)
            )
          })
        ),
      simulateReceive: (asset, permission, signature, deployment) =>
        this.enter("simulateReceive", asset).pipe(
          Effect.zipRight(this.checkChain(asset)),
          Effect.flatMap((): Effect.Effect<void, TransferRefused> => {
            const auth = this.eip3009(permission)
            const deploys =
              deployment === undefined ? undefined : this.accountDeployedBy(deployment)
            const account = this.accounts.get(auth.from.toLowerCase())
            const refused =
              deployment !== undefined &&
              this.codeOf(auth.from) === "0x" &&
              (deploys === undefined || !same(deploys, auth.from))
                ? "execution reverted: the factory call does not deploy the payer"
                : deployment !== undefined && this.codeOf(auth.from) === "0x"
                  ? // Deployed in the simulation: the account's verdict, the token's own checks.
                    (this.refuseReceive(auth) ??
                    (account?.accepts(signature) === false
                      ? "FiatTokenV2: invalid signature"
                      : this.tokenRefusal(auth)))
                  : this.receiveRefusal(auth, signature)
            return refused === undefined
              ? Effect.void
              : Effect.fail(new TransferRefused({ reason: refused }))
          })
        ),
      codeAt: (chainId, address) =>
        this.enter("codeAt", chainId).pipe(
          Effect.zipRight(this.checkChain(chainId)),
          Effect.map(() => this.codeOf(address))
        ),
      deploymentCall: (chainId, deployment) =>
        this.enter("deploymentCall", chainId).pipe(
          Effect.zipRight(this.checkChain(chainId)),
          Effect.flatMap((): Effect.Effect<ChainCall, TransferRefused> => {
            const account = this.accountDeployedBy(deployment)
            const gas = account === undefined ? 0n : this.accounts.get(account)!.deploymentGas
            const cap = this.network.deploymentGasCap
            const refused =
              this.refuseDeployment(deployment) ??
              (account === undefined
                ? "execution reverted: the factory deploys no known account"
                : this.codeOf(account) !== "0x"
                  ? "execution reverted: the account exists already"
                  : cap !== undefined && gas > cap
                    ? `the factory call needs ${gas} gas, over the cap of ${cap}`
                    : undefined)
            if (refused !== undefined || account === undefined) {
              return Effect.fail(new TransferRefused({ reason: refused ?? "" }))
            }
            const call: TxCall = { kind: "deploy", account, ...deployment }
            return Effect.succeed({
              to: deployment.factory,
              data: stringToHex(json(call)),
              gas
            })
          })
        ),
      collectorNonce: (chainId, atBlock, sender) =>
        this.enter("collectorNonce", chainId).pipe(
          Effect.zipRight(this.checkChain(chainId)),
          Effect.map(() => ({
            latest: this.latestNonce(sender ?? COLLECTOR, atBlock),
            pending: this.pendingNonce(sender ?? COLLECTOR)
          }))
        ),
      fees: (chainId) =>
        this.enter("fees", chainId).pipe(
          Effect.zipRight(this.checkChain(chainId)),
          Effect.map(() => this.quote)
        ),
      sign: (chainId, tx, sender) =>
        this.enter("sign", chainId).pipe(
          Effect.zipRight(this.checkChain(chainId)),
          Effect.zipRight(
            // Keys for the collector and the deployer only, as an engine holds.
            sender === undefined ||
              same(sender, COLLECTOR) ||
              (this.deployer !== undefined && same(sender, this.deployer))
              ? Effect.void
              : Effect.fail(new ChainUnavailable({ chainId, message: `no key for ${sender}` }))
          ),
          Effect.map(() => {
            const raw = stringToHex(
              json({
                chainId,
                sender: sender ?? COLLECTOR,
                nonce: tx.nonce,
                to: tx.to,
                data: tx.data,
                // Only a transaction that sends coin names a value: the others sign as before.
                ...(tx.value === undefined || tx.value === 0n ? {} : { value: tx.value }),
                gas: tx.gas,
                maxFeePerGas: tx.maxFeePerGas,
                maxPriorityFeePerGas: tx.maxPriorityFeePerGas
              })
            )
            this.signed.push(this.decodeRaw(raw))
            return { hash: keccak256(raw), raw }
          })
        ),
      broadcast: (chainId, raw) =>
        this.enter("broadcast", chainId).pipe(
          Effect.zipRight(this.checkChain(chainId)),
          Effect.flatMap((): Effect.Effect<void, ChainUnavailable | TransactionRejected> => {
            const tx = this.decodeRaw(raw)
            if (this.unreachableFor(tx)) {
              return Effect.fail(
                new ChainUnavailable({ chainId, message: "broadcast: the request timed out" })
              )
            }
            this.onBroadcast(tx)
            const rejected = this.rejectBroadcast(tx)
            if (rejected !== undefined) {
              return Effect.fail(new TransactionRejected({ chainId, reason: rejected }))
            }
            if (this.rejectNonceGaps && tx.nonce > this.pendingNonce(tx.sender)) {
              return Effect.fail(
                new TransactionRejected({
                  chainId,
                  reason: `Nonce too high. Expected nonce to be ${this.pendingNonce(tx.sender)} but got ${tx.nonce}`
                })
              )
            }
            // "already known" and "nonce too low" are success to the port.
            if (this.stateOf(tx.hash) !== "Unknown" || tx.nonce < this.latestNonce(tx.sender)) {
              return Effect.void
            }
            // With the coin counted, a sender that cannot pay the worst of it is refused, as geth does.
            const cost = tx.gas * tx.maxFeePerGas + (tx.value ?? 0n)
            if (this.nativeAsset !== undefined && this.coinBalance(tx.sender) < cost) {
              return Effect.fail(
                new TransactionRejected({
                  chainId,
                  reason: `insufficient funds for gas * price + value: have ${this.coinBalance(tx.sender)} want ${cost}`
                })
              )
            }
            const rival = this.mempool.find(
              (t) => same(t.sender, tx.sender) && t.nonce === tx.nonce
            )
            if (rival !== undefined) {
              // geth's rule: a replacement pays at least 10 % more on both fees.
              if (
                tx.maxFeePerGas * 10n < rival.maxFeePerGas * 11n ||
                tx.maxPriorityFeePerGas * 10n < rival.maxPriorityFeePerGas * 11n
              ) {
                return Effect.fail(
                  new TransactionRejected({
                    chainId,
                    reason: "replacement transaction underpriced"
                  })
                )
              }
              this.drop(rival.hash)
            }
            this.mempool.push(tx)
            this.broadcasts.push(tx)
            if (this.automine) this.mine()
            return Effect.void
          })
        ),
      transactionState: (chainId, hash) =>
        this.enter("transactionState", chainId).pipe(
          Effect.zipRight(this.checkChain(chainId)),
          Effect.map((): TransactionState => {
            const mined = this.minedByHash.get(hash)
            if (mined !== undefined) {
              return {
                _tag: "Mined",
                blockNumber: mined.blockNumber,
                blockHash: keccak256(stringToHex(`block ${mined.blockNumber}`)),
                success: mined.success
              }
            }
            return this.mempool.some((t) => t.hash === hash)
              ? { _tag: "Pending" }
              : { _tag: "Unknown" }
          })
        ),
      transaction: (chainId, hash) =>
        this.enter("transaction", chainId).pipe(
          Effect.zipRight(this.checkChain(chainId)),
          Effect.map((): NetworkTransaction | undefined => {
            const tx = this.minedByHash.get(hash) ?? this.mempool.find((t) => t.hash === hash)
            return tx === undefined
              ? undefined
              : {
                  hash,
                  from: tx.sender,
                  to: tx.to,
                  value: tx.value ?? 0n,
                  input: tx.data,
                  nonce: tx.nonce
                }
          })
        ),
      // No buyer here approves anything: the scripted token is paid by EIP-3009 alone.
      allowance: (asset) =>
        this.enter("allowance", asset).pipe(Effect.zipRight(this.checkChain(asset)), Effect.as(0n))
    })
  }
}
