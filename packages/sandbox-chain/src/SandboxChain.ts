/**
 * The sandbox chain as a scoped Effect resource: a fresh in-process EVM
 * (chain id 31337, automine) with the test tokens (USDC by EIP-3009, USDT and
 * DAI by Permit2), Permit2 at its canonical address and two price feeds,
 * deployed by the fixed deployer key as its first transactions, so their
 * addresses, and the tokens' CAIP-19 ids, are the same after every restart
 * while balances start from nothing. It gives raw JSON-RPC (for a
 * `/sandbox/rpc` route), viem clients over it, the collector account, a
 * faucet, the feeds' controls and the description `GET /sandbox` serves.
 */
import { randomUUID } from "node:crypto"
import { Context, Data, Duration, Effect, Layer, type Scope } from "effect"
import {
  type Abi,
  type Address,
  type Chain,
  type CustomTransport,
  createPublicClient,
  createWalletClient,
  custom,
  defineChain,
  getAddress,
  type Hash,
  type Hex,
  isAddress,
  maxInt256,
  maxUint256,
  minInt256,
  type PrivateKeyAccount,
  type PublicClient,
  parseAbi,
  parseEventLogs,
  type WalletClient
} from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { createNonceManager, jsonRpc } from "viem/nonce"
import { CHAIN_ID, createEdrChain, type EdrChain } from "./Edr.js"
import {
  handleJsonRpc,
  INTERNAL_ERROR,
  type JsonRpcOptions,
  type JsonRpcResponse,
  request
} from "./JsonRpc.js"
import {
  ACCOUNT_DEPLOYER_ADDRESS,
  ACCOUNT_DEPLOYER_PRIVATE_KEY,
  COLLECTOR_PRIVATE_KEY,
  DEPLOYER_PRIVATE_KEY,
  GENESIS_BALANCE_WEI,
  PERMIT2_ADDRESS,
  PRICE_FEED_ADDRESSES,
  SMART_ACCOUNT_ADDRESSES,
  TEST_DAI_ADDRESS,
  TEST_USDC_ADDRESS,
  TEST_USDT_ADDRESS
} from "./Keys.js"
import { deploySandboxContracts, type PriceFeedPair } from "./SandboxContracts.js"
import { SandboxPriceFeed } from "./SandboxPriceFeed.artifact.js"
import {
  type DelegatedAccount,
  delegate7702,
  type SafeAccount,
  type SmartAccountAddresses,
  safeAccount,
  type ThirdwebAccount,
  thirdwebAccount
} from "./SmartAccounts.js"
import { TestDAI } from "./TestDAI.artifact.js"
import { TestUSDC } from "./TestUSDC.artifact.js"
import { TestUSDT } from "./TestUSDT.artifact.js"

export const CAIP2_CHAIN_ID = `eip155:${CHAIN_ID}` as const

/**
 * viem's description of the sandbox chain (no URL: clients reach it in process). Typed as a
 * `Chain` without formatters, as `defineChain` makes it: its inferred type names viem's internal
 * modules, which a published declaration file cannot.
 */
export const sandboxChain: Chain<undefined> = defineChain({
  id: CHAIN_ID,
  name: "Pay sandbox",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: [] } },
  testnet: true
})

export type SandboxChainDefinition = typeof sandboxChain

/**
 * How a buyer pays with an asset: a signed EIP-3009 authorization the token
 * itself checks (USDC), a signed Permit2 transfer after approving Permit2 once
 * (USDT, DAI), or a transaction of their own (ether).
 */
export type SandboxAuthorization = "eip3009" | "permit2" | "native"

/** An asset as `GET /sandbox` lists it. */
export interface SandboxTokenDescription {
  /** CAIP-19, e.g. `eip155:31337/erc20:0x1cd2…` (checksummed), `eip155:31337/slip44:60`. */
  readonly asset: string
  readonly symbol: string
  readonly name: string
  readonly decimals: number
  readonly authorization: SandboxAuthorization
}

/** The body of `GET /sandbox`, less `rpcUrl`, which only the HTTP adapter knows. */
export interface SandboxDescription {
  readonly chainId: typeof CAIP2_CHAIN_ID
  readonly collector: Address
  /** USDC, USDT, DAI, then ether. */
  readonly tokens: ReadonlyArray<SandboxTokenDescription>
  /** CAIP-10 of Permit2's canonical address, `eip155:31337:0x0000…22D4…8BA3`. */
  readonly permit2: string
  /** CAIP-10 of each Chainlink-style feed. */
  readonly priceFeeds: { readonly [P in PriceFeedPair]: string }
}

/** A test ERC-20 of the sandbox chain. */
export interface SandboxToken<TAbi extends Abi = Abi> extends SandboxTokenDescription {
  readonly address: Address
  readonly authorization: "eip3009" | "permit2"
  /** The token's EIP-712 domain version ("2" for USDC); absent for a token without a domain. */
  readonly version?: string
  readonly abi: TAbi
}

/** The test USDC: EIP-3009, its domain version read from the contract. */
export interface SandboxUsdc extends SandboxToken<typeof TestUSDC.abi> {
  readonly authorization: "eip3009"
  readonly version: string
}

/** The chain's ether, as CAIP-19 names a native asset (SLIP-44 coin type 60). */
export const SANDBOX_NATIVE = {
  asset: `${CAIP2_CHAIN_ID}/slip44:60`,
  symbol: "ETH",
  name: "Ether",
  decimals: 18
} as const

/** What the faucet gives: a test token (minted) or ether (sent by the deployer). */
export type FaucetSymbol = "USDC" | "USDT" | "DAI" | "ETH"

export interface FaucetResult {
  readonly txHash: Hash
  /** The account's balance of the asset afterwards, in its minor units. */
  readonly balance: bigint
}

/** The chain could not start, or a faucet or feed request was refused or failed. */
export class SandboxChainError extends Data.TaggedError("SandboxChainError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

export type SandboxPublicClient = PublicClient<CustomTransport, SandboxChainDefinition>
export type SandboxWalletClient = WalletClient<
  CustomTransport,
  SandboxChainDefinition,
  PrivateKeyAccount
>

export interface SandboxChainService {
  /** 31337 */
  readonly chainId: number
  readonly chain: Chain
  /** EIP-1193: the result, or a rejection with a `JsonRpcError` (code, message, data). */
  readonly request: (args: {
    readonly method: string
    readonly params?: unknown
  }) => Promise<unknown>
  /** JSON-RPC 2.0 objects and batches, see `handleJsonRpc` in JsonRpc.ts. */
  readonly handleJsonRpc: (
    body: unknown,
    options?: JsonRpcOptions
  ) => Promise<JsonRpcResponse | ReadonlyArray<JsonRpcResponse> | undefined>
  /** A viem transport over `request`. */
  readonly transport: CustomTransport
  readonly publicClient: SandboxPublicClient
  /** The engine's submitting key, funded with ether; its wallet client sends as it. */
  readonly collector: {
    readonly address: Address
    readonly privateKey: Hex
    readonly account: PrivateKeyAccount
    readonly walletClient: SandboxWalletClient
  }
  /** The test USDC (also `tokens[0]`). */
  readonly token: SandboxUsdc
  /** USDC (EIP-3009), USDT and DAI (Permit2), in that order. */
  readonly tokens: readonly [
    SandboxUsdc,
    SandboxToken<typeof TestUSDT.abi>,
    SandboxToken<typeof TestDAI.abi>
  ]
  readonly native: typeof SANDBOX_NATIVE
  /** Permit2's canonical address, where the sandbox's own Permit2 runs. */
  readonly permit2: Address
  /** The Chainlink-style feeds (8 decimals), which the deployer moves with `setPrice`. */
  readonly priceFeeds: typeof PRICE_FEED_ADDRESSES
  /**
   * Starts a new round of a feed: at the block's time, or with the times given
   * (a stale price). Resolves with the round's id.
   */
  readonly setPrice: (
    pair: PriceFeedPair,
    answer: bigint,
    round?: { readonly startedAt: bigint; readonly updatedAt: bigint }
  ) => Effect.Effect<{ readonly roundId: bigint }, SandboxChainError>
  /**
   * Gives `account` `amount` minor units of an asset: a mint of USDC (the
   * default), USDT or DAI, or ether sent by the deployer. Any other symbol
   * (it may come from a request) is refused.
   */
  readonly faucet: (
    account: string,
    amount: bigint,
    symbol?: FaucetSymbol | (string & {})
  ) => Effect.Effect<FaucetResult, SandboxChainError>
  readonly description: SandboxDescription
  /**
   * The JSON-RPC calls the chain has answered since it started, by method:
   * the engine's own and `/sandbox/rpc`'s (what a benchmark counts per payment).
   */
  readonly rpcCalls: () => Readonly<Record<string, number>>
  /** Where the smart-account contracts are (the same on every start). */
  readonly accounts: SmartAccountAddresses
  /**
   * The key the engine sends undeployed accounts' factory calls with (its
   * `deployerKey`): funded with ether, holding no token, owning nothing.
   */
  readonly accountDeployer: { readonly address: Address; readonly privateKey: Hex }
  /**
   * A smart account of `owner` for testing: a one-owner Safe or a thirdweb
   * ERC-4337 account (deployed unless `counterfactual`: then it pays with
   * ERC-6492 signatures and the engine deploys it), or `owner`'s EOA delegated
   * by EIP-7702 to Simple7702Account. A new account at each call (a random
   * salt unless `saltNonce`). The chain's own deployer pays the gas.
   */
  readonly smartAccount: (args: {
    readonly kind: "safe" | "4337" | "7702"
    readonly owner: PrivateKeyAccount
    readonly counterfactual?: boolean
    readonly saltNonce?: bigint
  }) => Effect.Effect<SafeAccount | ThirdwebAccount | DelegatedAccount, SandboxChainError>
  /**
   * This run of the chain, random at each start: the chain starts fresh, so
   * an engine that saved its work on an earlier run tells them apart by it.
   */
  readonly instance: string
}

export class SandboxChain extends Context.Tag("@pay/sandbox-chain/SandboxChain")<
  SandboxChain,
  SandboxChainService
>() {}

export interface SandboxChainOptions {
  /** The collector's key; the documented dev key by default. It is funded at genesis. */
  readonly collectorPrivateKey?: Hex | undefined
}

const POLLING_MS = 50

/** How often the sandbox's feeds post their answer again (a real feed's heartbeat). */
const HEARTBEAT = Duration.minutes(30)

/** A local account whose nonces this chain instance alone tracks, so concurrent sends work. */
const accountFor = (privateKey: Hex) =>
  privateKeyToAccount(privateKey, { nonceManager: createNonceManager({ source: jsonRpc() }) })

interface Closable {
  closed: boolean
}

// What the chain reads of each token at start: what it lists is the contract's, never assumed.
const METADATA_ABI = parseAbi([
  "function name() view returns (string)",
  "function symbol() view returns (string)",
  "function decimals() view returns (uint8)"
])

const openChain = async (options: SandboxChainOptions) => {
  const collectorKey = options.collectorPrivateKey ?? COLLECTOR_PRIVATE_KEY
  const collector = accountFor(collectorKey)
  const deployer = accountFor(DEPLOYER_PRIVATE_KEY)
  const edr = await createEdrChain({
    balances: [
      { address: collector.address, wei: GENESIS_BALANCE_WEI },
      { address: deployer.address, wei: GENESIS_BALANCE_WEI },
      { address: ACCOUNT_DEPLOYER_ADDRESS, wei: GENESIS_BALANCE_WEI }
    ]
  })
  const state: Closable = { closed: false }
  const served = new Map<string, number>()
  const call: EdrChain["handle"] = (req) => {
    served.set(req.method, (served.get(req.method) ?? 0) + 1)
    return answer(req)
  }
  const answer: EdrChain["handle"] = (req) =>
    state.closed
      ? Promise.resolve({
          jsonrpc: "2.0",
          id: req.id,
          error: { code: INTERNAL_ERROR, message: "The sandbox chain has stopped" }
        })
      : edr.handle(req)
  let nextId = 1
  const eip1193 = (args: { readonly method: string; readonly params?: unknown }) =>
    request(call, args, nextId++)
  const transport = custom({ request: eip1193 }, { name: "Sandbox chain", retryCount: 0 })
  const publicClient: SandboxPublicClient = createPublicClient({
    chain: sandboxChain,
    transport,
    pollingInterval: POLLING_MS,
    cacheTime: 0
  })
  const walletFor = (account: PrivateKeyAccount): SandboxWalletClient =>
    createWalletClient({ account, chain: sandboxChain, transport, pollingInterval: POLLING_MS })
  const deployerWallet = walletFor(deployer)

  await deploySandboxContracts({ deployer, request: eip1193 })
  const read = (address: Address) =>
    Promise.all([
      publicClient.readContract({ address, abi: METADATA_ABI, functionName: "name" }),
      publicClient.readContract({ address, abi: METADATA_ABI, functionName: "symbol" }),
      publicClient.readContract({ address, abi: METADATA_ABI, functionName: "decimals" })
    ])
  const erc20 = <const A extends Abi>(
    address: Address,
    abi: A,
    authorization: "eip3009" | "permit2",
    [name, symbol, decimals]: readonly [string, string, number]
  ): SandboxToken<A> => ({
    asset: `${CAIP2_CHAIN_ID}/erc20:${address}`,
    symbol,
    name,
    decimals,
    authorization,
    address,
    abi
  })
  const [usdc, usdt, dai, version] = await Promise.all([
    read(TEST_USDC_ADDRESS),
    read(TEST_USDT_ADDRESS),
    read(TEST_DAI_ADDRESS),
    publicClient.readContract({
      address: TEST_USDC_ADDRESS,
      abi: TestUSDC.abi,
      functionName: "version"
    })
  ])
  const token: SandboxUsdc = {
    ...erc20(TEST_USDC_ADDRESS, TestUSDC.abi, "eip3009", usdc),
    authorization: "eip3009",
    version
  }
  const tokens = [
    token,
    erc20(TEST_USDT_ADDRESS, TestUSDT.abi, "permit2", usdt),
    erc20(TEST_DAI_ADDRESS, TestDAI.abi, "permit2", dai)
  ] as const
  return {
    state,
    served,
    call,
    eip1193,
    transport,
    publicClient,
    walletFor,
    deployerWallet,
    token,
    tokens,
    collector,
    collectorKey
  }
}

type Opened = Awaited<ReturnType<typeof openChain>>

// Every test token has these two, whatever else its ABI says.
const MINTABLE_ABI = parseAbi([
  "function mint(address to, uint256 amount)",
  "function balanceOf(address account) view returns (uint256)"
])

const mint = async (chain: Opened, token: Address, to: Address, amount: bigint) => {
  const contract = { address: token, abi: MINTABLE_ABI } as const
  const txHash = await chain.deployerWallet.writeContract({
    ...contract,
    functionName: "mint",
    args: [to, amount]
  })
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash: txHash })
  if (receipt.status !== "success") throw new Error(`mint ${txHash} reverted`)
  const balance = await chain.publicClient.readContract({
    ...contract,
    functionName: "balanceOf",
    args: [to]
  })
  return { txHash, balance }
}

// A transfer, not hardhat_setBalance: the account receives ether as from a wallet, in a
// transaction the engine can see. The deployer is topped up first when it lacks the amount,
// so the faucet never runs dry.
const sendEther = async (chain: Opened, to: Address, amount: bigint) => {
  const from = chain.deployerWallet.account.address
  const held = await chain.publicClient.getBalance({ address: from })
  if (held < amount + GAS_RESERVE_WEI) {
    await chain.eip1193({
      method: "hardhat_setBalance",
      params: [from, `0x${(amount + GENESIS_BALANCE_WEI).toString(16)}`]
    })
  }
  const txHash = await chain.deployerWallet.sendTransaction({ to, value: amount })
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash: txHash })
  if (receipt.status !== "success") throw new Error(`sending ether ${txHash} reverted`)
  return { txHash, balance: await chain.publicClient.getBalance({ address: to }) }
}

const GAS_RESERVE_WEI = 10n ** 18n

/** Starts a sandbox chain for the life of the scope. */
export const make = (
  options: SandboxChainOptions = {}
): Effect.Effect<SandboxChainService, SandboxChainError, Scope.Scope> =>
  Effect.gen(function* () {
    const opened = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => openChain(options),
        catch: (cause) =>
          new SandboxChainError({
            message: `The sandbox chain did not start: ${(cause as Error).message}`,
            cause
          })
      }),
      (chain) =>
        Effect.sync(() => {
          chain.state.closed = true
        })
    )
    const { token, tokens, publicClient, deployerWallet } = opened
    // One send from the deployer at a time (mints, ether, feeds, accounts): each is its next nonce.
    const deployerSends = yield* Effect.makeSemaphore(1)
    const failed = (what: string) => (cause: unknown) =>
      new SandboxChainError({ message: `${what}: ${(cause as Error).message}`, cause })

    const faucet: SandboxChainService["faucet"] = (account, amount, symbol = "USDC") =>
      Effect.gen(function* () {
        if (!isAddress(account, { strict: false })) {
          return yield* new SandboxChainError({ message: `${account} is not an EVM address` })
        }
        if (amount <= 0n || amount > maxUint256) {
          return yield* new SandboxChainError({ message: "amount must be a positive uint256" })
        }
        const to = getAddress(account)
        const erc20 = tokens.find((t) => t.symbol === symbol)
        if (erc20 === undefined && symbol !== SANDBOX_NATIVE.symbol) {
          return yield* new SandboxChainError({
            message: `The faucet has no ${JSON.stringify(symbol)}: it gives ${[...tokens.map((t) => t.symbol), SANDBOX_NATIVE.symbol].join(", ")}`
          })
        }
        return yield* deployerSends.withPermits(1)(
          Effect.tryPromise({
            try: () =>
              erc20 === undefined
                ? sendEther(opened, to, amount)
                : mint(opened, erc20.address, to, amount),
            catch: failed("The faucet failed")
          })
        )
      }).pipe(Effect.withSpan("SandboxChain.faucet", { attributes: { symbol } }))

    const setPrice: SandboxChainService["setPrice"] = (pair, answer, round) =>
      Effect.gen(function* () {
        if (!Object.hasOwn(PRICE_FEED_ADDRESSES, pair)) {
          return yield* new SandboxChainError({
            message: `No price feed for ${JSON.stringify(pair)}: ${Object.keys(PRICE_FEED_ADDRESSES).join(", ")}`
          })
        }
        if (answer < minInt256 || answer > maxInt256) {
          return yield* new SandboxChainError({ message: "answer must be an int256" })
        }
        if (
          round !== undefined &&
          [round.startedAt, round.updatedAt].some((t) => t < 0n || t > maxUint256)
        ) {
          return yield* new SandboxChainError({
            message: "startedAt and updatedAt must be uint256"
          })
        }
        const feed = { address: PRICE_FEED_ADDRESSES[pair], abi: SandboxPriceFeed.abi } as const
        return yield* deployerSends.withPermits(1)(
          Effect.tryPromise({
            try: async () => {
              const hash =
                round === undefined
                  ? await deployerWallet.writeContract({
                      ...feed,
                      functionName: "setAnswer",
                      args: [answer]
                    })
                  : await deployerWallet.writeContract({
                      ...feed,
                      functionName: "setRound",
                      args: [answer, round.startedAt, round.updatedAt]
                    })
              const receipt = await publicClient.waitForTransactionReceipt({ hash })
              if (receipt.status !== "success") throw new Error(`${hash} reverted`)
              // The round from the receipt's own event: the feed's latest may be a later one by now.
              const [updated] = parseEventLogs({
                abi: SandboxPriceFeed.abi,
                eventName: "AnswerUpdated",
                logs: receipt.logs
              })
              if (updated === undefined) throw new Error(`${hash} started no round`)
              return { roundId: updated.args.roundId }
            },
            catch: failed(`Setting ${pair} failed`)
          })
        )
      }).pipe(Effect.withSpan("SandboxChain.setPrice", { attributes: { pair } }))

    // A real feed's heartbeat: each answer is posted again every 30 minutes, so a sandbox that
    // runs for days still prices (an engine refuses a round older than its feed's heartbeat,
    // an hour for ETH/USD). A round a test set stays until then.
    const heartbeat = Effect.forEach(
      Object.keys(PRICE_FEED_ADDRESSES) as ReadonlyArray<PriceFeedPair>,
      (pair) =>
        Effect.tryPromise({
          try: () =>
            publicClient.readContract({
              address: PRICE_FEED_ADDRESSES[pair],
              abi: SandboxPriceFeed.abi,
              functionName: "latestRoundData"
            }),
          catch: failed(`Reading ${pair} failed`)
        }).pipe(Effect.flatMap(([, answer]) => setPrice(pair, answer)))
    ).pipe(
      Effect.catchAll((e) => Effect.logWarning(`sandbox price heartbeat: ${e.message}`)),
      Effect.delay(HEARTBEAT),
      Effect.forever
    )
    yield* Effect.forkScoped(heartbeat)

    const caip10 = (address: Address) => `${CAIP2_CHAIN_ID}:${address}`
    const listed = (t: SandboxTokenDescription): SandboxTokenDescription => ({
      asset: t.asset,
      symbol: t.symbol,
      name: t.name,
      decimals: t.decimals,
      authorization: t.authorization
    })
    const description: SandboxDescription = {
      chainId: CAIP2_CHAIN_ID,
      collector: opened.collector.address,
      tokens: [...tokens.map(listed), { ...SANDBOX_NATIVE, authorization: "native" }],
      permit2: caip10(PERMIT2_ADDRESS),
      priceFeeds: {
        "ETH/USD": caip10(PRICE_FEED_ADDRESSES["ETH/USD"]),
        "EUR/USD": caip10(PRICE_FEED_ADDRESSES["EUR/USD"])
      }
    }

    const smartAccount: SandboxChainService["smartAccount"] = (args) =>
      deployerSends
        .withPermits(1)(
          Effect.tryPromise({
            try: async (): Promise<SafeAccount | ThirdwebAccount | DelegatedAccount> => {
              if (args.kind === "7702") {
                if (args.counterfactual === true) {
                  throw new Error("an EIP-7702 account has no counterfactual form")
                }
                return delegate7702({
                  client: publicClient,
                  wallet: deployerWallet,
                  owner: args.owner
                })
              }
              const saltNonce = args.saltNonce ?? BigInt(`0x${randomUUID().replaceAll("-", "")}`)
              const account =
                args.kind === "safe"
                  ? await safeAccount({ client: publicClient, owner: args.owner, saltNonce })
                  : await thirdwebAccount({ client: publicClient, owner: args.owner, saltNonce })
              if (args.counterfactual !== true && !(await account.isDeployed())) {
                await account.deploy(deployerWallet)
              }
              return account
            },
            catch: (cause) =>
              new SandboxChainError({
                message: `The smart account was not made: ${(cause as Error).message}`,
                cause
              })
          })
        )
        .pipe(Effect.withSpan("SandboxChain.smartAccount"))

    return SandboxChain.of({
      rpcCalls: () => Object.fromEntries(opened.served),
      accounts: SMART_ACCOUNT_ADDRESSES,
      accountDeployer: {
        address: ACCOUNT_DEPLOYER_ADDRESS,
        privateKey: ACCOUNT_DEPLOYER_PRIVATE_KEY
      },
      smartAccount,
      instance: randomUUID(),
      chainId: CHAIN_ID,
      chain: sandboxChain,
      request: opened.eip1193,
      handleJsonRpc: (body, jsonRpcOptions) => handleJsonRpc(opened.call, body, jsonRpcOptions),
      transport: opened.transport,
      publicClient,
      collector: {
        address: opened.collector.address,
        privateKey: opened.collectorKey,
        account: opened.collector,
        walletClient: opened.walletFor(opened.collector)
      },
      token,
      tokens,
      native: SANDBOX_NATIVE,
      permit2: PERMIT2_ADDRESS,
      priceFeeds: PRICE_FEED_ADDRESSES,
      setPrice,
      faucet,
      description
    })
  })

/** The sandbox chain as a layer: started when built, stopped when its scope closes. */
export const layer = (
  options: SandboxChainOptions = {}
): Layer.Layer<SandboxChain, SandboxChainError> => Layer.scoped(SandboxChain, make(options))
