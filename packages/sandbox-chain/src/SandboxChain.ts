/**
 * The sandbox chain as a scoped Effect resource: a fresh in-process EVM
 * (chain id 31337, automine) with the test USDC deployed by the fixed deployer
 * key as its first transaction, so the token's address, and its CAIP-19 id,
 * are the same after every restart while balances start from nothing. It
 * gives raw JSON-RPC (for a `/sandbox/rpc` route), viem clients over it, the
 * collector account, a faucet and the description `GET /sandbox` serves.
 */
import { randomUUID } from "node:crypto"
import { Context, Data, Effect, Layer, type Scope } from "effect"
import {
  type Address,
  type Chain,
  type CustomTransport,
  concat,
  createPublicClient,
  createWalletClient,
  custom,
  defineChain,
  encodeAbiParameters,
  getAddress,
  type Hash,
  type Hex,
  isAddress,
  maxUint256,
  type PrivateKeyAccount,
  type PublicClient,
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
  DEPLOYER_ADDRESS,
  DEPLOYER_PRIVATE_KEY,
  ENTRY_POINT_V06_ADDRESS,
  GENESIS_BALANCE_WEI,
  SMART_ACCOUNT_ADDRESSES,
  TEST_USDC_ADDRESS
} from "./Keys.js"
import {
  CompatibilityFallbackHandler,
  SafeProxyFactory,
  Safe as SafeSingleton,
  Simple7702Account,
  ThirdwebAccountFactory
} from "./SmartAccounts.artifact.js"
import {
  type DelegatedAccount,
  delegate7702,
  type SafeAccount,
  type SmartAccountAddresses,
  safeAccount,
  type ThirdwebAccount,
  thirdwebAccount
} from "./SmartAccounts.js"
import { TestUSDC } from "./TestUSDC.artifact.js"

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

/** A token as `GET /sandbox` lists it. */
export interface SandboxTokenDescription {
  /** CAIP-19, e.g. `eip155:31337/erc20:0x1cd2…` (checksummed). */
  readonly asset: string
  readonly symbol: string
  readonly name: string
  readonly decimals: number
}

/** The body of `GET /sandbox`, less `rpcUrl`, which only the HTTP adapter knows. */
export interface SandboxDescription {
  readonly chainId: typeof CAIP2_CHAIN_ID
  readonly collector: Address
  readonly tokens: ReadonlyArray<SandboxTokenDescription>
}

export interface SandboxToken extends SandboxTokenDescription {
  readonly address: Address
  /** The EIP-712 domain version, read from the contract ("2"). */
  readonly version: string
  readonly abi: typeof TestUSDC.abi
}

export interface FaucetResult {
  readonly txHash: Hash
  /** The account's token balance after the mint, in minor units (6 decimals). */
  readonly balance: bigint
}

/** The chain could not start, or a faucet request was refused or failed. */
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
  readonly token: SandboxToken
  /** Mints test USDC (minor units) to `account`. */
  readonly faucet: (
    account: string,
    amount: bigint
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

/** A local account whose nonces this chain instance alone tracks, so concurrent sends work. */
const accountFor = (privateKey: Hex) =>
  privateKeyToAccount(privateKey, { nonceManager: createNonceManager({ source: jsonRpc() }) })

interface Closable {
  closed: boolean
}

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

  const deployHash = await deployerWallet.deployContract({
    abi: TestUSDC.abi,
    bytecode: TestUSDC.bytecode
  })
  const deployed = await publicClient.waitForTransactionReceipt({ hash: deployHash })
  if (deployed.status !== "success" || deployed.contractAddress == null) {
    throw new Error(`deploying TestUSDC failed (${deployed.status})`)
  }
  const address = getAddress(deployed.contractAddress)
  if (address !== TEST_USDC_ADDRESS) {
    throw new Error(`TestUSDC landed at ${address}, not ${TEST_USDC_ADDRESS}`)
  }
  // The smart-account contracts, at the deployer's next nonces (Keys.ts): sent at once, mined
  // as they arrive, checked together.
  const contracts = [
    { artifact: SafeSingleton, at: SMART_ACCOUNT_ADDRESSES.safeSingleton },
    { artifact: SafeProxyFactory, at: SMART_ACCOUNT_ADDRESSES.safeProxyFactory },
    { artifact: CompatibilityFallbackHandler, at: SMART_ACCOUNT_ADDRESSES.safeFallbackHandler },
    { artifact: Simple7702Account, at: SMART_ACCOUNT_ADDRESSES.simple7702Account },
    {
      artifact: ThirdwebAccountFactory,
      at: SMART_ACCOUNT_ADDRESSES.thirdwebAccountFactory,
      // constructor(address _defaultAdmin, IEntryPoint _entrypoint)
      constructorArgs: encodeAbiParameters(
        [{ type: "address" }, { type: "address" }],
        [DEPLOYER_ADDRESS, ENTRY_POINT_V06_ADDRESS]
      )
    }
  ]
  const hashes: Array<Hash> = []
  for (const c of contracts) {
    const data = concat([
      c.artifact.bytecode as Hex,
      "constructorArgs" in c ? c.constructorArgs : "0x"
    ])
    hashes.push(await deployerWallet.sendTransaction({ data }))
  }
  for (const [i, hash] of hashes.entries()) {
    const receipt = await publicClient.waitForTransactionReceipt({ hash })
    const c = contracts[i]!
    if (receipt.status !== "success" || receipt.contractAddress == null) {
      throw new Error(`deploying ${c.artifact.source} failed (${receipt.status})`)
    }
    if (getAddress(receipt.contractAddress) !== c.at) {
      throw new Error(`${c.artifact.source} landed at ${receipt.contractAddress}, not ${c.at}`)
    }
  }
  const contract = { address, abi: TestUSDC.abi } as const
  const [name, symbol, decimals, version] = await Promise.all([
    publicClient.readContract({ ...contract, functionName: "name" }),
    publicClient.readContract({ ...contract, functionName: "symbol" }),
    publicClient.readContract({ ...contract, functionName: "decimals" }),
    publicClient.readContract({ ...contract, functionName: "version" })
  ])
  const token: SandboxToken = {
    asset: `${CAIP2_CHAIN_ID}/erc20:${address}`,
    symbol,
    name,
    decimals,
    address,
    version,
    abi: TestUSDC.abi
  }
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
    collector,
    collectorKey
  }
}

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
    const { token, publicClient, deployerWallet } = opened
    // One mint at a time: each is the deployer's next nonce.
    const mints = yield* Effect.makeSemaphore(1)

    const faucet = (account: string, amount: bigint) =>
      Effect.gen(function* () {
        if (!isAddress(account, { strict: false })) {
          return yield* new SandboxChainError({ message: `${account} is not an EVM address` })
        }
        if (amount <= 0n || amount > maxUint256) {
          return yield* new SandboxChainError({ message: "amount must be a positive uint256" })
        }
        const to = getAddress(account)
        const contract = { address: token.address, abi: token.abi } as const
        return yield* mints.withPermits(1)(
          Effect.tryPromise({
            try: async () => {
              const txHash = await deployerWallet.writeContract({
                ...contract,
                functionName: "mint",
                args: [to, amount]
              })
              const receipt = await publicClient.waitForTransactionReceipt({ hash: txHash })
              if (receipt.status !== "success") throw new Error(`mint ${txHash} reverted`)
              const balance = await publicClient.readContract({
                ...contract,
                functionName: "balanceOf",
                args: [to]
              })
              return { txHash, balance }
            },
            catch: (cause) =>
              new SandboxChainError({
                message: `The faucet failed: ${(cause as Error).message}`,
                cause
              })
          })
        )
      }).pipe(Effect.withSpan("SandboxChain.faucet"))

    const description: SandboxDescription = {
      chainId: CAIP2_CHAIN_ID,
      collector: opened.collector.address,
      tokens: [
        { asset: token.asset, symbol: token.symbol, name: token.name, decimals: token.decimals }
      ]
    }

    const smartAccount: SandboxChainService["smartAccount"] = (args) =>
      mints
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
      faucet,
      description
    })
  })

/** The sandbox chain as a layer: started when built, stopped when its scope closes. */
export const layer = (
  options: SandboxChainOptions = {}
): Layer.Layer<SandboxChain, SandboxChainError> => Layer.scoped(SandboxChain, make(options))
