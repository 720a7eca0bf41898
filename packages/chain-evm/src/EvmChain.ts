/**
 * The chain port on EVM networks, with viem: one public client and the
 * collector's local account per configured network, over whatever transport
 * the network is reached by (HTTP for a real RPC, an in-process provider for
 * the sandbox). Transactions are EIP-1559, signed offline with the
 * collector's key (or the deployer's, for a buyer's account not deployed yet)
 * and sent raw, so the durable chain work can record each one before it
 * leaves the process.
 */

import {
  type Caip2,
  type Caip19,
  Chain,
  type ChainCall,
  type ChainNetwork,
  type ChainToken,
  ChainUnavailable,
  chainOfCaip19,
  type Eip712Domain,
  type FeeQuote,
  NATIVE_COIN_ADDRESS,
  type NetworkTransaction,
  PERMIT2_ADDRESS,
  type Permission,
  signingRequest,
  type TokenAuthorization,
  TransactionRejected,
  type TransactionState,
  TransferRefused,
  tokenOf,
  type UnsignedTransaction
} from "@pay/core"
import { Effect } from "effect"
import {
  type Address,
  createPublicClient,
  encodeFunctionData,
  getAddress,
  type Hex,
  isAddressEqual,
  keccak256,
  type PrivateKeyAccount,
  type PublicClient,
  parseAbi,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  type Transport
} from "viem"
import { privateKeyToAccount } from "viem/accounts"
import type { AccountDeployment } from "./AccountDeployment.js"
import { eip3009TokenAbi } from "./Eip3009Abi.js"
import { nonceBit, permit2Abi, permit2Calldata } from "./Permit2Call.js"
import { receiveCalldata } from "./ReceiveCall.js"
import { simulated, simulationRefusal, simulationRequest } from "./ReceiveSimulator.js"
import {
  ALREADY_HAVE,
  describe,
  hasRpcCode,
  isRevert,
  nodeMessage,
  REFUSED,
  refusal,
  revertDataOf,
  revertReasonOf,
  unavailable
} from "./RpcErrors.js"

export interface EvmNetworkConfig {
  readonly chainId: Caip2
  readonly name: string
  readonly iconUrl?: string | null
  /** The collector's private key: it submits every transfer and receives every payment. */
  readonly collectorKey: Hex
  /**
   * The key that sends the factory call of a buyer's account not deployed yet
   * (ERC-6492); it must not be the collector's: the factory and its calldata
   * are the buyer's, so their sender must hold nothing but gas money. Absent:
   * such accounts cannot pay on this network (deployed ones still can).
   */
  readonly deployerKey?: Hex
  /**
   * The most gas a factory call may take, headroom included (default
   * 500,000: a Safe proxy's deployment with its setup takes about 260,000).
   * The deployer pays it for a buyer who may never pay: the cap bounds what
   * one ERC-6492 signature can cost.
   */
  readonly deploymentGasCap?: bigint
  readonly confirmations: number
  readonly etaSeconds: number
  readonly transport: Transport
  /** How often a transaction being watched is looked at (default 1 s). */
  readonly pollingIntervalMs?: number
  /** A transaction pending this long is replaced at a higher fee (default 60 s). */
  readonly stuckAfterMs?: number
  readonly tokens: ReadonlyArray<
    Omit<ChainToken, "address" | "authorization"> & {
      /**
       * How buyers authorize the transfer (default `eip3009`; `permit2` for any
       * other ERC-20; `native` for the network's own coin, whose asset is
       * `<chainId>/slip44:<coin type>`, e.g. `eip155:1/slip44:60`).
       */
      readonly authorization?: TokenAuthorization
    }
  >
  /** Uniswap's Permit2 on this network (default: its canonical address, the same on most chains). */
  readonly permit2?: Address
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
  readonly transport: Transport
  readonly account: PrivateKeyAccount
  readonly deployer: PrivateKeyAccount | undefined
  readonly deploymentGasCap: bigint
  readonly numericId: number
}

/** Gas estimates get this much headroom (in %): a state change between estimate and block. */
const GAS_HEADROOM_PERCENT = 25n
/** The tip when the node suggests none (1 gwei would be a lot on an L2; 0.01 gwei is ignored). */
const MIN_PRIORITY_FEE = 1_000_000n
/** A node's words for a sender short of the coin a call sends (value plus gas). */
const INSUFFICIENT_FUNDS = /insufficient funds|insufficient balance|exceeds balance/i
/** A Safe proxy's deployment with its setup is about 260,000 gas: room for it and its headroom. */
export const DEFAULT_DEPLOYMENT_GAS_CAP = 500_000n

/**
 * `transport` as it is, but every request's failure is also told to
 * `failed`: viem's signature verification answers `false` for a call that
 * failed for any reason, and only the requests tell an unanswered one apart.
 */
const watched =
  (transport: Transport, failed: (error: unknown) => void): Transport =>
  (options) => {
    const inner = transport(options)
    return {
      ...inner,
      request: (async (args: Parameters<typeof inner.request>[0], requestOptions?: unknown) => {
        try {
          return await inner.request(args, requestOptions as never)
        } catch (error) {
          failed(error)
          throw error
        }
      }) as typeof inner.request
    }
  }

const erc20AllowanceAbi = parseAbi([
  "function allowance(address owner, address spender) view returns (uint256)"
])

const addressOfAsset = (asset: Caip19): Address =>
  asset.slice(asset.lastIndexOf(":") + 1) as Address

/**
 * A configured token as the port names it: a native coin by EIP-7528's
 * address (it has no contract), an ERC-20 by its contract's. The asset must
 * agree with the authorization: a coin is `slip44`, a token `erc20`, both on
 * the network's own chain.
 */
const tokenOfConfig = (chainId: Caip2, t: EvmNetworkConfig["tokens"][number]): ChainToken => {
  const authorization = t.authorization ?? "eip3009"
  if (chainOfCaip19(t.asset) !== chainId) {
    throw new TypeError(`network ${chainId}: token ${t.asset} is not an asset of ${chainId}`)
  }
  const namespace = t.asset.slice(t.asset.indexOf("/") + 1, t.asset.lastIndexOf(":"))
  if (authorization === "native" ? namespace !== "slip44" : namespace !== "erc20") {
    throw new TypeError(
      authorization === "native"
        ? `network ${chainId}: token ${t.asset} has authorization native, but a native coin is named ${chainId}/slip44:<coin type>`
        : `network ${chainId}: token ${t.asset} has authorization ${authorization}, which takes an ERC-20 (${chainId}/erc20:0x…)`
    )
  }
  return {
    ...t,
    address: authorization === "native" ? NATIVE_COIN_ADDRESS : addressOfAsset(t.asset),
    authorization
  }
}

/**
 * What only a contract does (its EIP-712 domain, an allowance, a signed
 * transfer) asked of a native coin: the caller's mistake, a defect rather
 * than a call to EIP-7528's address, where no contract is.
 */
const notForNative = (asset: Caip19, what: string) =>
  Effect.dieMessage(
    `${asset} is the network's native coin: it has no contract, so no ${what} (a native option's buyer sends the coin itself)`
  )

/** Said when a node refuses or ignores the simulation of an account not deployed yet. */
const NEEDS_OVERRIDES =
  "the RPC must support eth_call state overrides to take accounts not deployed yet (ERC-6492)"

const noDeployer = (chainId: string) =>
  `${chainId} deploys no accounts (no deployerKey): the account must be deployed before it pays`

export const makeEvmChain = (configs: ReadonlyArray<EvmNetworkConfig>) =>
  Effect.sync(() => {
    const connected = new Map<string, Connected>()
    for (const config of configs) {
      // Read as given from plain JavaScript too: "true" (a string) must not pass for a live network.
      if (config.testnet !== undefined && typeof config.testnet !== "boolean") {
        throw new TypeError(`network ${config.chainId}: testnet must be true or false`)
      }
      const account = privateKeyToAccount(config.collectorKey)
      const deployer =
        config.deployerKey === undefined ? undefined : privateKeyToAccount(config.deployerKey)
      if (deployer !== undefined && isAddressEqual(deployer.address, account.address)) {
        throw new TypeError(
          `network ${config.chainId}: deployerKey must not be collectorKey: the deployer sends calls the buyer chose, so it must hold nothing but gas money`
        )
      }
      const deploymentGasCap = config.deploymentGasCap ?? DEFAULT_DEPLOYMENT_GAS_CAP
      if (typeof deploymentGasCap !== "bigint" || deploymentGasCap <= 0n) {
        throw new TypeError(`network ${config.chainId}: deploymentGasCap must be a positive bigint`)
      }
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
          tokens: config.tokens.map((t) => tokenOfConfig(config.chainId, t)),
          permit2: config.permit2 ?? PERMIT2_ADDRESS,
          testnet: config.testnet === true,
          ...(config.instance === undefined ? {} : { instance: config.instance }),
          ...(deployer === undefined ? {} : { deployer: deployer.address, deploymentGasCap })
        },
        // No caching: a watch must see the chain as it is now (a receipt may disappear).
        publicClient: createPublicClient({
          chain,
          transport: config.transport,
          pollingInterval: pollIntervalMs,
          cacheTime: 0
        }),
        transport: config.transport,
        account,
        deployer,
        deploymentGasCap,
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
    /** The asset's network and token, when the token is a contract: never a native coin. */
    const forContract = (asset: Caip19, what: string) =>
      Effect.flatMap(forAsset(asset), (found) =>
        found.token.authorization === "native" ? notForNative(asset, what) : Effect.succeed(found)
      )
    const call = <A>(chainId: string, run: () => Promise<A>) =>
      Effect.tryPromise({
        try: run,
        catch: (error) => unavailable(chainId, error)
      })

    /**
     * The key that signs as `sender`: the collector's when none is named, the
     * deployer's for its address. Any other is the caller's mistake (or a
     * deployer taken out of the settings while its job still ran), not the
     * network's: a defect, logged with its trace and tried again slowly by the
     * chain work, rather than a `ChainUnavailable` counted as an RPC error.
     */
    const senderOf = (c: Connected, sender: Address | undefined) =>
      sender === undefined || isAddressEqual(sender, c.account.address)
        ? Effect.succeed(c.account)
        : c.deployer !== undefined && isAddressEqual(sender, c.deployer.address)
          ? Effect.succeed(c.deployer)
          : Effect.dieMessage(
              `${sender} is neither the collector nor the deployer of ${c.network.chainId}`
            )

    const domains = new Map<string, Eip712Domain>()
    const tokenDomain = (asset: Caip19) =>
      Effect.suspend(() => {
        const known = domains.get(asset)
        if (known !== undefined) return Effect.succeed(known)
        return Effect.flatMap(
          forContract(asset, "EIP-712 domain"),
          ({ publicClient, network, token }) =>
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

    /** The token's `balanceOf`; for a native coin, the account's balance of it. */
    const balanceOf = (asset: Caip19, owner: Address) =>
      Effect.flatMap(forAsset(asset), ({ publicClient, network, token }) =>
        call(network.chainId, () =>
          token.authorization === "native"
            ? publicClient.getBalance({ address: owner })
            : publicClient.readContract({
                address: token.address,
                abi: eip3009TokenAbi,
                functionName: "balanceOf",
                args: [owner]
              })
        )
      )

    /**
     * The call with its gas, estimated against the next block: a revert there
     * (a used or expired authorization, a forged signature, a destination
     * contract that takes no coin) is a refusal; so is, for a call sending
     * `value` of the coin, a sender that lacks it. Any other failure is the
     * network's.
     */
    const estimated = (
      c: Connected,
      to: Address,
      data: Hex,
      from: Address = c.account.address,
      value?: bigint
    ) =>
      Effect.tryPromise({
        try: () =>
          c.publicClient.estimateGas({
            account: from,
            to,
            data,
            ...(value === undefined ? {} : { value }),
            blockTag: "pending"
          }),
        // Only a revert (or a coin short) is a refusal; anything else may pass, and is tried again.
        catch: (error): ChainUnavailable | TransferRefused =>
          isRevert(error) || (value !== undefined && INSUFFICIENT_FUNDS.test(nodeMessage(error)))
            ? new TransferRefused({ reason: describe(error) })
            : unavailable(c.network.chainId, error)
      }).pipe(
        Effect.map(
          (gas): ChainCall => ({
            to,
            data,
            gas: gas + (gas * GAS_HEADROOM_PERCENT) / 100n,
            ...(value === undefined ? {} : { value })
          })
        )
      )

    const allowance = (asset: Caip19, owner: Address, spender: Address) =>
      Effect.flatMap(forContract(asset, "allowance"), ({ publicClient, network, token }) =>
        call(network.chainId, () =>
          publicClient.readContract({
            address: token.address,
            abi: erc20AllowanceAbi,
            functionName: "allowance",
            args: [owner, spender]
          })
        )
      )

    /** The contract the collector calls to take the payment, and its calldata. */
    const takeCall = (token: Address, permission: Permission, signature: Hex) =>
      permission.kind === "eip3009"
        ? { to: token, data: receiveCalldata(permission.authorization, signature) }
        : { to: permission.permit2, data: permit2Calldata(permission, signature) }

    const receiveCall = (asset: Caip19, permission: Permission, signature: Hex) =>
      Effect.flatMap(forContract(asset, "signed transfer to receive"), (c) => {
        const { to, data } = takeCall(c.token.address, permission, signature)
        return estimated(c, to, data)
      })

    /** The typed data the buyer signed: the token's domain for EIP-3009, Permit2's own else. */
    const signedRequest = (asset: Caip19, permission: Permission, numericId: number) =>
      permission.kind === "eip3009"
        ? Effect.map(tokenDomain(asset), (domain) =>
            signingRequest(permission, BigInt(numericId), domain)
          )
        : Effect.succeed(signingRequest(permission, BigInt(numericId), undefined))

    /**
     * viem's verification (one `eth_call` of the ERC-6492 universal validator,
     * deployless) on a client of its own, whose requests are watched: viem
     * answers `false` for a call that failed for any reason, which is the
     * buyer's fault only when the node answered with a revert.
     */
    const verifyAuthorization = (asset: Caip19, permission: Permission, signature: Hex) =>
      Effect.flatMap(forContract(asset, "signed authorization to verify"), (c) =>
        Effect.flatMap(signedRequest(asset, permission, c.numericId), (request) => {
          let failure: unknown
          const client = createPublicClient({
            chain: c.publicClient.chain,
            transport: watched(c.transport, (error) => {
              failure ??= error
            }),
            cacheTime: 0
          })
          return call(c.network.chainId, async () => {
            const valid = await client.verifyTypedData({
              ...request,
              address: permission.authorization.from,
              signature
            } as Parameters<typeof client.verifyTypedData>[0])
            if (!valid && failure !== undefined && !isRevert(failure)) throw failure
            return valid
          })
        })
      )

    /** The token's reason for a simulated receive's revert, else the node's. */
    const refused = (error: unknown, reason: (data: Hex | undefined) => string | undefined) =>
      new TransferRefused({ reason: reason(revertDataOf(error)) ?? describe(error) })

    const simulateReceive = (
      asset: Caip19,
      permission: Permission,
      signature: Hex,
      deployment?: AccountDeployment
    ) =>
      Effect.flatMap(
        forContract(asset, "signed transfer to simulate"),
        (c): Effect.Effect<void, ChainUnavailable | TransferRefused> => {
          const { to: target, data } = takeCall(c.token.address, permission, signature)
          const chainId = c.network.chainId
          if (deployment === undefined) {
            return Effect.tryPromise({
              try: () =>
                c.publicClient.call({
                  account: c.account.address,
                  to: target,
                  data,
                  blockTag: "pending"
                }),
              catch: (error): ChainUnavailable | TransferRefused =>
                isRevert(error)
                  ? refused(error, (revert) =>
                      revert === undefined ? undefined : revertReasonOf(revert)
                    )
                  : unavailable(chainId, error)
            }).pipe(Effect.asVoid)
          }
          if (c.deployer === undefined) {
            return Effect.fail(new TransferRefused({ reason: noDeployer(chainId) }))
          }
          const request = simulationRequest(
            { collector: c.account.address, deployer: c.deployer.address },
            target,
            data,
            deployment
          )
          return Effect.tryPromise({
            try: () => c.publicClient.call({ ...request, blockTag: "pending" }),
            catch: (error): ChainUnavailable | TransferRefused => {
              if (isRevert(error))
                return refused(error, (revert) => simulationRefusal(deployment, revert))
              const failed = unavailable(chainId, error)
              // The node answered, and not with a revert: most likely it takes no overrides.
              return hasRpcCode(error)
                ? new ChainUnavailable({
                    chainId,
                    message: `${failed.message}; ${NEEDS_OVERRIDES}`,
                    ...(failed.rpcHost === undefined ? {} : { rpcHost: failed.rpcHost }),
                    ...(failed.errorCode === undefined ? {} : { errorCode: failed.errorCode })
                  })
                : failed
            }
          }).pipe(
            Effect.flatMap(({ data: answer }) =>
              simulated(answer)
                ? Effect.void
                : Effect.fail(
                    unavailable(
                      chainId,
                      new Error(`the node ignored the eth_call state override; ${NEEDS_OVERRIDES}`)
                    )
                  )
            )
          )
        }
      )

    const codeAt = (chainId: Caip2, address: Address) =>
      Effect.flatMap(forChain(chainId), (c) =>
        call(chainId, () => c.publicClient.getCode({ address, blockTag: "latest" })).pipe(
          Effect.map((code): Hex => code ?? "0x")
        )
      )

    const deploymentCall = (chainId: Caip2, deployment: AccountDeployment) =>
      Effect.flatMap(forChain(chainId), (c) => {
        const deployer = c.deployer
        if (deployer === undefined) {
          return Effect.fail(new TransferRefused({ reason: noDeployer(chainId) }))
        }
        return estimated(c, deployment.factory, deployment.factoryData, deployer.address).pipe(
          Effect.mapError((e) =>
            e._tag === "TransferRefused"
              ? new TransferRefused({
                  reason: `the account's deployment (factory ${deployment.factory}) would revert: ${e.reason}`
                })
              : e
          ),
          Effect.filterOrFail(
            (deploy) => deploy.gas <= c.deploymentGasCap,
            (deploy) =>
              new TransferRefused({
                reason: `the account's deployment (factory ${deployment.factory}) needs ${deploy.gas} gas with headroom, over ${chainId}'s cap of ${c.deploymentGasCap} (deploymentGasCap)`
              })
          )
        )
      })

    /**
     * The collector's ERC-20 `transfer`; for a native coin, a plain transfer
     * of `value` wei, its gas estimated all the same (21,000 to an account
     * without code, more to a contract whose `receive` does work).
     */
    const transferCall = (asset: Caip19, to: Address, value: bigint) =>
      Effect.flatMap(forAsset(asset), (c) =>
        c.token.authorization === "native"
          ? Effect.zipRight(
              // Not every node refuses an estimate short of the value (EDR does not): asked first.
              call(c.network.chainId, () =>
                c.publicClient.getBalance({ address: c.account.address, blockTag: "pending" })
              ).pipe(
                Effect.filterOrFail(
                  (held) => held >= value,
                  (held) =>
                    new TransferRefused({
                      reason: `insufficient funds: the collector holds ${held} wei of ${asset}, less than the ${value} it would send`
                    })
                )
              ),
              estimated(c, to, "0x", c.account.address, value)
            )
          : estimated(
              c,
              c.token.address,
              encodeFunctionData({
                abi: eip3009TokenAbi,
                functionName: "transfer",
                args: [to, value]
              })
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

    // A read: any address's count (a native payment's buyer's too), no key needed.
    const collectorNonce = (chainId: Caip2, atBlock?: bigint, sender?: Address) =>
      Effect.flatMap(forChain(chainId), (c) => {
        const address = sender ?? c.account.address
        return call(chainId, () =>
          Promise.all([
            atBlock === undefined
              ? c.publicClient.getTransactionCount({ address, blockTag: "latest" })
              : c.publicClient.getTransactionCount({ address, blockNumber: atBlock }),
            c.publicClient.getTransactionCount({ address, blockTag: "pending" })
          ])
        ).pipe(Effect.map(([latest, pending]) => ({ latest, pending })))
      })

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

    const sign = (chainId: Caip2, tx: UnsignedTransaction, sender?: Address) =>
      Effect.flatMap(forChain(chainId), (c) =>
        Effect.flatMap(senderOf(c, sender), (signer) =>
          call(chainId, () =>
            signer.signTransaction({
              type: "eip1559",
              chainId: c.numericId,
              to: tx.to,
              data: tx.data,
              // A native coin's settlement sends it; a contract call sends none.
              value: tx.value ?? 0n,
              gas: tx.gas,
              nonce: tx.nonce,
              maxFeePerGas: tx.maxFeePerGas,
              maxPriorityFeePerGas: tx.maxPriorityFeePerGas
            })
          ).pipe(Effect.map((raw) => ({ raw, hash: keccak256(raw) })))
        )
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

    const authorizationUsed = (asset: Caip19, permission: Permission, atBlock?: bigint) =>
      Effect.flatMap(
        forContract(asset, "authorization to look up"),
        ({ publicClient, network, token }) => {
          const auth = permission.authorization
          const at = atBlock === undefined ? {} : { blockNumber: atBlock }
          if (permission.kind === "permit2") {
            const { wordPos, bit } = nonceBit(auth.nonce)
            return call(network.chainId, () =>
              publicClient
                .readContract({
                  address: permission.permit2,
                  abi: permit2Abi,
                  functionName: "nonceBitmap",
                  args: [auth.from, wordPos],
                  ...at
                })
                .then((word) => (word & bit) !== 0n)
            )
          }
          return call(network.chainId, () =>
            publicClient.readContract({
              address: token.address,
              abi: eip3009TokenAbi,
              functionName: "authorizationState",
              args: [auth.from, auth.nonce],
              ...at
            })
          )
        }
      )

    const transaction = (chainId: Caip2, hash: Hex) =>
      Effect.flatMap(forChain(chainId), (c) =>
        call(chainId, async (): Promise<NetworkTransaction | undefined> => {
          const tx = await c.publicClient.getTransaction({ hash }).catch((error: unknown) => {
            if (error instanceof TransactionNotFoundError) return undefined
            throw error
          })
          return tx === undefined
            ? undefined
            : {
                hash: tx.hash,
                // Checksummed, as the engine names addresses everywhere else (the node's are lowercase).
                from: getAddress(tx.from),
                to: tx.to === null || tx.to === undefined ? null : getAddress(tx.to),
                value: tx.value,
                input: tx.input,
                nonce: tx.nonce
              }
        })
      )

    return Chain.of({
      networks,
      authorizationUsed,
      tokenDomain,
      balanceOf,
      allowance,
      receiveCall,
      verifyAuthorization,
      simulateReceive,
      codeAt,
      deploymentCall,
      transferCall,
      head,
      collectorNonce,
      fees,
      sign,
      broadcast,
      transactionState,
      transaction
    })
  })
