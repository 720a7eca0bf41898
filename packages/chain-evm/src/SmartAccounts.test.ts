/**
 * The adapter's smart-account methods against the sandbox's EDR and its USDC,
 * without any smart-account contract: a key pair's signature where the token
 * checks one, an ERC-1271 stub put at an address where it needs a contract,
 * and plain token calls standing for a factory's.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  type Caip2,
  type Caip19,
  type Chain,
  type Eip712Domain,
  RECEIVE_WITH_AUTHORIZATION_TYPES,
  type ReceiveAuthorization
} from "@pay/core"
import * as Sandbox from "@pay/sandbox-chain"
import { Cause, Effect, Exit, type Scope } from "effect"
import {
  type Address,
  custom,
  decodeFunctionData,
  encodeFunctionData,
  type Hex,
  parseAbi,
  parseEther,
  recoverTransactionAddress,
  serializeErc6492Signature,
  type Transport,
  toHex
} from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { eip3009TokenAbi } from "./Eip3009Abi.js"

/** An EIP-3009 authorization as the chain port takes it. */
const eip3009 = (authorization: ReceiveAuthorization) =>
  ({ kind: "eip3009", authorization }) as const

import { DEFAULT_DEPLOYMENT_GAS_CAP, type EvmNetworkConfig, makeEvmChain } from "./EvmChain.js"

const SANDBOX = Sandbox.CAIP2_CHAIN_ID as Caip2

/** An ERC-1271 account that takes any signature: `isValidSignature` answers the magic value to all. */
const ACCEPTS_ANY_SIGNATURE: Hex = "0x631626ba7e60e01b60005260206000f3"

const tokenCalls = parseAbi([
  "function approve(address spender, uint256 value) returns (bool)",
  "function transfer(address to, uint256 value) returns (bool)",
  "function mint(address to, uint256 amount)"
])

type Sandboxed = Effect.Effect.Success<ReturnType<typeof Sandbox.make>>

const setup = (
  options: {
    readonly deployer?: boolean
    readonly deploymentGasCap?: bigint
    readonly transport?: (sandbox: Sandboxed) => Transport
  } = {}
) =>
  Effect.gen(function* () {
    const sandbox = yield* Sandbox.make()
    const asset = sandbox.token.asset as Caip19
    const deployerKey = generatePrivateKey()
    const deployer = privateKeyToAccount(deployerKey).address
    // Gas money, as an operator gives the deployer.
    yield* Effect.promise(() =>
      sandbox.collector.walletClient
        .sendTransaction({ to: deployer, value: parseEther("1") })
        .then((hash) => sandbox.publicClient.waitForTransactionReceipt({ hash }))
    )
    const config: EvmNetworkConfig = {
      chainId: SANDBOX,
      name: "Pay sandbox",
      collectorKey: sandbox.collector.privateKey,
      confirmations: 1,
      etaSeconds: 2,
      transport: options.transport?.(sandbox) ?? sandbox.transport,
      pollingIntervalMs: 20,
      tokens: [
        {
          asset,
          symbol: "USDC",
          name: "USD Coin",
          decimals: 6,
          iconUrl: null,
          priceCurrency: "USD"
        }
      ],
      ...(options.deployer === false ? {} : { deployerKey }),
      ...(options.deploymentGasCap === undefined
        ? {}
        : { deploymentGasCap: options.deploymentGasCap })
    }
    const chain: Chain["Type"] = yield* makeEvmChain([config])
    const domain = yield* chain.tokenDomain(asset)
    return { sandbox, chain, asset, domain, deployer, config }
  })

const scoped = <A, E>(body: Effect.Effect<A, E, Scope.Scope>) => Effect.scoped(body)

const signed = (key: Hex, domain: Eip712Domain, auth: ReceiveAuthorization) =>
  Effect.promise(() =>
    privateKeyToAccount(key).signTypedData({
      domain: { ...domain },
      types: RECEIVE_WITH_AUTHORIZATION_TYPES,
      primaryType: "ReceiveWithAuthorization",
      message: { ...auth }
    })
  )

const authorizationFor = (from: Address, to: Address, value: bigint): ReceiveAuthorization => ({
  from,
  to,
  value,
  validAfter: 0n,
  validBefore: BigInt(Math.floor(Date.now() / 1000) + 600),
  nonce: toHex(crypto.getRandomValues(new Uint8Array(32)))
})

/** A buyer with a key, funded with `value` test USDC (none for 0). */
const buyer = (sandbox: Sandboxed, value: bigint) =>
  Effect.gen(function* () {
    const key = generatePrivateKey()
    const address = privateKeyToAccount(key).address
    if (value > 0n) yield* sandbox.faucet(address, value)
    return { key, address }
  })

const rpc = (sandbox: Sandboxed, method: string, params: ReadonlyArray<unknown>) =>
  Effect.promise(() => sandbox.request({ method, params }))

describe("a network's deployer", () => {
  it.live("is the deployer key's address, with the default gas cap", () =>
    scoped(
      Effect.gen(function* () {
        const { chain, deployer } = yield* setup()
        expect(chain.networks[0]?.deployer).toBe(deployer)
        expect(chain.networks[0]?.deploymentGasCap).toBe(DEFAULT_DEPLOYMENT_GAS_CAP)
        const without = yield* setup({ deployer: false })
        expect(without.chain.networks[0]?.deployer).toBeUndefined()
      })
    )
  )

  it.live("is refused at start when it is the collector's key", () =>
    scoped(
      Effect.gen(function* () {
        const { config } = yield* setup()
        const same = yield* Effect.exit(
          makeEvmChain([{ ...config, deployerKey: config.collectorKey }])
        )
        expect(Exit.isFailure(same) && Cause.pretty(same.cause)).toMatch(
          /deployerKey must not be collectorKey/
        )
        const zero = yield* Effect.exit(makeEvmChain([{ ...config, deploymentGasCap: 0n }]))
        expect(Exit.isFailure(zero) && Cause.pretty(zero.cause)).toMatch(/deploymentGasCap/)
      })
    )
  )

  it.live("signs as the deployer when named, and reads its own nonces", () =>
    scoped(
      Effect.gen(function* () {
        const { chain, deployer, sandbox } = yield* setup()
        const collectorBefore = yield* chain.collectorNonce(SANDBOX)
        const call = {
          to: sandbox.token.address,
          data: encodeFunctionData({
            abi: tokenCalls,
            functionName: "approve",
            args: [sandbox.collector.address, 1n]
          }),
          gas: 100_000n
        }
        const { pending } = yield* chain.collectorNonce(SANDBOX, undefined, deployer)
        expect(pending).toBe(0)
        const fees = yield* chain.fees(SANDBOX)
        const tx = yield* chain.sign(SANDBOX, { ...call, ...fees, nonce: pending }, deployer)
        expect(
          yield* Effect.promise(() =>
            recoverTransactionAddress({ serializedTransaction: tx.raw as `0x02${string}` })
          )
        ).toBe(deployer)
        yield* chain.broadcast(SANDBOX, tx.raw)
        expect(yield* chain.collectorNonce(SANDBOX, undefined, deployer)).toEqual({
          latest: 1,
          pending: 1
        })
        expect(yield* chain.collectorNonce(SANDBOX)).toEqual(collectorBefore)
        // The collector by default, and by its own address.
        const byCollector = yield* chain.sign(SANDBOX, { ...call, ...fees, nonce: 0 })
        const named = yield* chain.sign(
          SANDBOX,
          { ...call, ...fees, nonce: 0 },
          sandbox.collector.address
        )
        expect(named.raw).toBe(byCollector.raw)
        expect(
          yield* Effect.promise(() =>
            recoverTransactionAddress({ serializedTransaction: byCollector.raw as `0x02${string}` })
          )
        ).toBe(sandbox.collector.address)
      })
    )
  )

  it.live(
    "signs for no sender that is neither the collector nor the deployer; reads any's nonce",
    () =>
      scoped(
        Effect.gen(function* () {
          const { chain } = yield* setup()
          const stranger = privateKeyToAccount(generatePrivateKey()).address
          const fees = yield* chain.fees(SANDBOX)
          const tx = { to: stranger, data: "0x" as Hex, gas: 21_000n, nonce: 0, ...fees }
          const signing = yield* Effect.exit(chain.sign(SANDBOX, tx, stranger))
          expect(Exit.isFailure(signing) && Cause.isDie(signing.cause)).toBe(true)
          // A read needs no key: a native payment's buyer's count is read so (NativeCollect.ts).
          expect(yield* chain.collectorNonce(SANDBOX, undefined, stranger)).toEqual({
            latest: 0,
            pending: 0
          })
        })
      )
  )
})

describe("verifyAuthorization", () => {
  it.live("takes a key pair's signature and no other key's", () =>
    scoped(
      Effect.gen(function* () {
        const { chain, sandbox, asset, domain } = yield* setup()
        const payer = yield* buyer(sandbox, 0n)
        const auth = authorizationFor(payer.address, sandbox.collector.address, 1_000_000n)
        const good = yield* signed(payer.key, domain, auth)
        expect(yield* chain.verifyAuthorization(asset, eip3009(auth), good)).toBe(true)
        const forged = yield* signed(generatePrivateKey(), domain, auth)
        expect(yield* chain.verifyAuthorization(asset, eip3009(auth), forged)).toBe(false)
        // Another authorization than the one signed.
        expect(yield* chain.verifyAuthorization(asset, eip3009({ ...auth, value: 2n }), good)).toBe(
          false
        )
        // Not 65 bytes, from an account without code: the validator reverts, which is "no".
        expect(
          yield* chain.verifyAuthorization(asset, eip3009(auth), `0x${"11".repeat(100)}`)
        ).toBe(false)
        // ERC-6492 whose factory deploys nothing: still no account to ask, so no.
        const wrapped = serializeErc6492Signature({
          address: sandbox.token.address,
          data: encodeFunctionData({
            abi: tokenCalls,
            functionName: "approve",
            args: [sandbox.collector.address, 1n]
          }),
          signature: good
        })
        expect(yield* chain.verifyAuthorization(asset, eip3009(auth), wrapped)).toBe(false)
      })
    )
  )

  it.live("asks an account with code (ERC-1271)", () =>
    scoped(
      Effect.gen(function* () {
        const { chain, sandbox, asset } = yield* setup()
        const account = privateKeyToAccount(generatePrivateKey()).address
        yield* rpc(sandbox, "hardhat_setCode", [account, ACCEPTS_ANY_SIGNATURE])
        expect(yield* chain.codeAt(SANDBOX, account)).toBe(ACCEPTS_ANY_SIGNATURE)
        const auth = authorizationFor(account, sandbox.collector.address, 1_000_000n)
        expect(yield* chain.verifyAuthorization(asset, eip3009(auth), `0x${"22".repeat(97)}`)).toBe(
          true
        )
      })
    )
  )

  it.live("answers ChainUnavailable, not false, when the node does not answer", () => {
    let down = false
    return scoped(
      Effect.gen(function* () {
        const { chain, sandbox, asset, domain } = yield* setup({
          transport: (sandbox) =>
            custom(
              {
                request: (args) =>
                  down && args.method === "eth_call"
                    ? Promise.reject(
                        Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })
                      )
                    : sandbox.request(args)
              },
              { retryCount: 0 }
            )
        })
        const payer = yield* buyer(sandbox, 0n)
        const auth = authorizationFor(payer.address, sandbox.collector.address, 1_000_000n)
        const forged = yield* signed(generatePrivateKey(), domain, auth)
        down = true
        const failed = yield* Effect.flip(chain.verifyAuthorization(asset, eip3009(auth), forged))
        expect(failed._tag).toBe("ChainUnavailable")
        // A key pair's good signature is still recovered without the node.
        const good = yield* signed(payer.key, domain, auth)
        expect(yield* chain.verifyAuthorization(asset, eip3009(auth), good)).toBe(true)
      })
    )
  })
})

describe("codeAt", () => {
  it.live("reads 0x for an account without code, the code for a contract", () =>
    scoped(
      Effect.gen(function* () {
        const { chain, sandbox } = yield* setup()
        expect(yield* chain.codeAt(SANDBOX, sandbox.collector.address)).toBe("0x")
        expect((yield* chain.codeAt(SANDBOX, sandbox.token.address)).length).toBeGreaterThan(100)
      })
    )
  )
})

describe("receiveCall", () => {
  it.live(
    "sends a signature of another length than 65 in the bytes form, which the token takes",
    () =>
      scoped(
        Effect.gen(function* () {
          const { chain, sandbox, asset } = yield* setup()
          const account = privateKeyToAccount(generatePrivateKey()).address
          yield* rpc(sandbox, "hardhat_setCode", [account, ACCEPTS_ANY_SIGNATURE])
          yield* sandbox.faucet(account, 2_000_000n)
          const auth = authorizationFor(account, sandbox.collector.address, 1_500_000n)
          const signature: Hex = `0x${"33".repeat(130)}`
          const call = yield* chain.receiveCall(asset, eip3009(auth), signature)
          const decoded = decodeFunctionData({ abi: eip3009TokenAbi, data: call.data })
          expect(decoded.functionName).toBe("receiveWithAuthorization")
          expect(decoded.args).toEqual([
            auth.from,
            auth.to,
            auth.value,
            auth.validAfter,
            auth.validBefore,
            auth.nonce,
            signature
          ])
          yield* chain.simulateReceive(asset, eip3009(auth), signature)
          // Sent as the collector: the token took the bytes form.
          const { pending } = yield* chain.collectorNonce(SANDBOX)
          const tx = yield* chain.sign(SANDBOX, {
            ...call,
            ...(yield* chain.fees(SANDBOX)),
            nonce: pending
          })
          yield* chain.broadcast(SANDBOX, tx.raw)
          const receipt = yield* Effect.promise(() =>
            sandbox.publicClient.waitForTransactionReceipt({ hash: tx.hash })
          )
          expect(receipt.status).toBe("success")
          expect(yield* chain.balanceOf(asset, account)).toBe(500_000n)
        })
      )
  )

  it.live("keeps the v, r, s form for 65 bytes", () =>
    scoped(
      Effect.gen(function* () {
        const { chain, sandbox, asset, domain } = yield* setup()
        const payer = yield* buyer(sandbox, 1_000_000n)
        const auth = authorizationFor(payer.address, sandbox.collector.address, 1_000_000n)
        const signature = yield* signed(payer.key, domain, auth)
        const call = yield* chain.receiveCall(asset, eip3009(auth), signature)
        const decoded = decodeFunctionData({ abi: eip3009TokenAbi, data: call.data })
        expect(decoded.args).toHaveLength(9)
        expect(decoded.args?.[7]).toBe(signature.slice(0, 66))
      })
    )
  )
})

describe("simulateReceive", () => {
  it.live(
    "passes a good signature and refuses a wrong one in the token's words, sending nothing",
    () =>
      scoped(
        Effect.gen(function* () {
          const { chain, sandbox, asset, domain } = yield* setup()
          const payer = yield* buyer(sandbox, 3_000_000n)
          const auth = authorizationFor(payer.address, sandbox.collector.address, 1_000_000n)
          yield* chain.simulateReceive(asset, eip3009(auth), yield* signed(payer.key, domain, auth))
          const forged = yield* signed(generatePrivateKey(), domain, auth)
          const refused = yield* Effect.flip(chain.simulateReceive(asset, eip3009(auth), forged))
          expect(refused).toMatchObject({
            _tag: "TransferRefused",
            reason: "FiatTokenV2: invalid signature"
          })
          expect(yield* chain.balanceOf(asset, payer.address)).toBe(3_000_000n)
          expect(yield* chain.authorizationUsed(asset, eip3009(auth))).toBe(false)
        })
      )
  )

  it.live("runs the factory call first, as the deployer, then the receive as the collector", () =>
    scoped(
      Effect.gen(function* () {
        const { chain, sandbox, asset, domain, deployer } = yield* setup()
        // The buyer has nothing; the "factory" call is the deployer's transfer to them.
        const payer = yield* buyer(sandbox, 0n)
        yield* sandbox.faucet(deployer, 1_000_000n)
        const auth = authorizationFor(payer.address, sandbox.collector.address, 1_000_000n)
        const signature = yield* signed(payer.key, domain, auth)
        const deployment = {
          factory: sandbox.token.address,
          factoryData: encodeFunctionData({
            abi: tokenCalls,
            functionName: "transfer",
            args: [payer.address, 1_000_000n]
          })
        }
        yield* chain.simulateReceive(asset, eip3009(auth), signature, deployment)
        // Without the factory call the buyer cannot pay: it ran, and first.
        const alone = yield* Effect.flip(chain.simulateReceive(asset, eip3009(auth), signature))
        expect(alone._tag).toBe("TransferRefused")
        // Nothing was sent.
        expect(yield* chain.balanceOf(asset, payer.address)).toBe(0n)
        expect(yield* chain.balanceOf(asset, deployer)).toBe(1_000_000n)
        expect(yield* chain.codeAt(SANDBOX, sandbox.collector.address)).toBe("0x")
        expect(yield* chain.codeAt(SANDBOX, deployer)).toBe("0x")
      })
    )
  )

  it.live(
    "with a factory call that succeeds, refuses a wrong inner signature in the token's words",
    () =>
      scoped(
        Effect.gen(function* () {
          const { chain, sandbox, asset, domain } = yield* setup()
          const payer = yield* buyer(sandbox, 1_000_000n)
          const auth = authorizationFor(payer.address, sandbox.collector.address, 1_000_000n)
          const deployment = {
            factory: sandbox.token.address,
            factoryData: encodeFunctionData({
              abi: tokenCalls,
              functionName: "approve",
              args: [sandbox.collector.address, 1n]
            })
          }
          yield* chain.simulateReceive(
            asset,
            eip3009(auth),
            yield* signed(payer.key, domain, auth),
            deployment
          )
          const forged = yield* signed(generatePrivateKey(), domain, auth)
          const refused = yield* Effect.flip(
            chain.simulateReceive(asset, eip3009(auth), forged, deployment)
          )
          expect(refused).toMatchObject({
            _tag: "TransferRefused",
            reason: "FiatTokenV2: invalid signature"
          })
        })
      )
  )

  it.live("refuses a factory call that reverts, naming the deployment", () =>
    scoped(
      Effect.gen(function* () {
        const { chain, sandbox, asset, domain } = yield* setup()
        const payer = yield* buyer(sandbox, 1_000_000n)
        const auth = authorizationFor(payer.address, sandbox.collector.address, 1_000_000n)
        // Only the token's owner mints: from the deployer, it reverts.
        const deployment = {
          factory: sandbox.token.address,
          factoryData: encodeFunctionData({
            abi: tokenCalls,
            functionName: "mint",
            args: [payer.address, 1n]
          })
        }
        const refused = yield* Effect.flip(
          chain.simulateReceive(
            asset,
            eip3009(auth),
            yield* signed(payer.key, domain, auth),
            deployment
          )
        )
        expect(refused._tag).toBe("TransferRefused")
        expect(refused._tag === "TransferRefused" && refused.reason).toMatch(
          new RegExp(`^the account's deployment \\(factory ${sandbox.token.address}\\) reverted`)
        )
      })
    )
  )

  it.live("refuses a deployment on a network without a deployer", () =>
    scoped(
      Effect.gen(function* () {
        const { chain, sandbox, asset, domain } = yield* setup({ deployer: false })
        const payer = yield* buyer(sandbox, 1_000_000n)
        const auth = authorizationFor(payer.address, sandbox.collector.address, 1_000_000n)
        const refused = yield* Effect.flip(
          chain.simulateReceive(asset, eip3009(auth), yield* signed(payer.key, domain, auth), {
            factory: sandbox.token.address,
            factoryData: "0x"
          })
        )
        expect(refused._tag === "TransferRefused" && refused.reason).toMatch(/no deployerKey/)
      })
    )
  )

  const withOverrides = (answer: "refuse" | "ignore") =>
    scoped(
      Effect.gen(function* () {
        const { chain, sandbox, asset, domain } = yield* setup({
          transport: (sandbox) =>
            custom(
              {
                request: (args) => {
                  const params = args.params as Array<unknown> | undefined
                  if (args.method !== "eth_call" || params?.[2] === undefined) {
                    return sandbox.request(args)
                  }
                  return answer === "ignore"
                    ? sandbox.request({ method: "eth_call", params: params.slice(0, 2) })
                    : Promise.reject(
                        Object.assign(new Error("invalid argument 2: json: cannot unmarshal"), {
                          code: -32602
                        })
                      )
                }
              },
              { retryCount: 0 }
            )
        })
        const payer = yield* buyer(sandbox, 1_000_000n)
        const auth = authorizationFor(payer.address, sandbox.collector.address, 1_000_000n)
        const failed = yield* Effect.flip(
          chain.simulateReceive(asset, eip3009(auth), yield* signed(payer.key, domain, auth), {
            factory: sandbox.token.address,
            factoryData: "0x"
          })
        )
        expect(failed._tag).toBe("ChainUnavailable")
        expect(failed.message).toMatch(/state overrides/)
      })
    )

  it.live("answers ChainUnavailable when the node refuses state overrides", () =>
    withOverrides("refuse")
  )
  it.live("answers ChainUnavailable when the node ignores state overrides", () =>
    withOverrides("ignore")
  )
})

describe("deploymentCall", () => {
  const approve = (sandbox: Sandboxed) => ({
    factory: sandbox.token.address,
    factoryData: encodeFunctionData({
      abi: tokenCalls,
      functionName: "approve",
      args: [sandbox.collector.address, 1n]
    })
  })

  it.live("is the factory call with its gas, as the deployer sends it", () =>
    scoped(
      Effect.gen(function* () {
        const { chain, sandbox } = yield* setup()
        const deployment = approve(sandbox)
        const call = yield* chain.deploymentCall(SANDBOX, deployment)
        expect(call.to).toBe(deployment.factory)
        expect(call.data).toBe(deployment.factoryData)
        expect(call.gas).toBeGreaterThan(21_000n)
        expect(call.gas).toBeLessThanOrEqual(DEFAULT_DEPLOYMENT_GAS_CAP)
      })
    )
  )

  it.live(
    "refuses one that needs more gas than the cap, one that reverts, and any without a deployer",
    () =>
      scoped(
        Effect.gen(function* () {
          const capped = yield* setup({ deploymentGasCap: 30_000n })
          const over = yield* Effect.flip(
            capped.chain.deploymentCall(SANDBOX, approve(capped.sandbox))
          )
          expect(over).toMatchObject({ _tag: "TransferRefused" })
          expect(over._tag === "TransferRefused" && over.reason).toMatch(
            /over eip155:31337's cap of 30000 \(deploymentGasCap\)/
          )

          const reverts = yield* Effect.flip(
            capped.chain.deploymentCall(SANDBOX, {
              factory: capped.sandbox.token.address,
              factoryData: encodeFunctionData({
                abi: tokenCalls,
                functionName: "mint",
                args: [capped.deployer, 1n]
              })
            })
          )
          expect(reverts._tag === "TransferRefused" && reverts.reason).toMatch(/would revert/)

          const without = yield* setup({ deployer: false })
          const none = yield* Effect.flip(
            without.chain.deploymentCall(SANDBOX, approve(without.sandbox))
          )
          expect(none._tag === "TransferRefused" && none.reason).toMatch(/no deployerKey/)
        })
      )
  )
})
