/**
 * The EVM adapter against a real chain: the sandbox's in-process EDR with its
 * EIP-3009 USDC. A buyer signs with viem; the adapter reads the domain,
 * checks, submits from the collector and waits for the receipt.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import {
  type Caip2,
  type Caip19,
  type Chain,
  type ChainCall,
  isSignedByPayer,
  NATIVE_COIN_ADDRESS,
  RECEIVE_WITH_AUTHORIZATION_TYPES,
  type ReceiveAuthorization
} from "@pay/core"
import * as Sandbox from "@pay/sandbox-chain"
import { Cause, Effect, Exit, type Scope } from "effect"
import { type Hex, http, toHex } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"

/** An EIP-3009 authorization as the chain port takes it. */
const eip3009 = (authorization: ReceiveAuthorization) =>
  ({ kind: "eip3009", authorization }) as const

import { makeEvmChain } from "./EvmChain.js"

/** The sandbox chain's ether, as a native token. */
const ETHER = Sandbox.SANDBOX_NATIVE.asset as Caip19

const setup = Effect.gen(function* () {
  const sandbox = yield* Sandbox.make()
  const asset = sandbox.token.asset as Caip19
  const chain: Chain["Type"] = yield* makeEvmChain([
    {
      chainId: Sandbox.CAIP2_CHAIN_ID as Caip2,
      name: "Pay sandbox",
      collectorKey: sandbox.collector.privateKey,
      confirmations: 1,
      etaSeconds: 2,
      transport: sandbox.transport,
      pollingIntervalMs: 20,
      tokens: [
        {
          asset,
          symbol: "USDC",
          name: "USD Coin",
          decimals: 6,
          iconUrl: null,
          priceCurrency: "USD"
        },
        {
          asset: ETHER,
          symbol: "ETH",
          name: "Ether",
          decimals: 18,
          iconUrl: null,
          priceCurrency: "ETH",
          authorization: "native"
        }
      ]
    }
  ])
  return { sandbox, chain, asset }
})

const signed = async (
  key: Hex,
  domain: Parameters<typeof isSignedByPayer>[0],
  auth: ReceiveAuthorization
) =>
  privateKeyToAccount(key).signTypedData({
    domain: { ...domain },
    types: RECEIVE_WITH_AUTHORIZATION_TYPES,
    primaryType: "ReceiveWithAuthorization",
    message: { ...auth }
  })

const authorizationFor = (from: Hex, to: Hex, value: bigint): ReceiveAuthorization => ({
  from,
  to,
  value,
  validAfter: 0n,
  validBefore: BigInt(Math.floor(Date.now() / 1000) + 600),
  nonce: toHex(crypto.getRandomValues(new Uint8Array(32)))
})

const scoped = <A, E>(body: Effect.Effect<A, E, Scope.Scope>) => Effect.scoped(body)

const SANDBOX = Sandbox.CAIP2_CHAIN_ID as Caip2

/** The steps the durable chain work takes: the call, a nonce, fees, signed offline, sent raw. */
const send = (chain: Chain["Type"], call: ChainCall) =>
  Effect.gen(function* () {
    const { pending } = yield* chain.collectorNonce(SANDBOX)
    const fees = yield* chain.fees(SANDBOX)
    const signed = yield* chain.sign(SANDBOX, { ...call, ...fees, nonce: pending })
    yield* chain.broadcast(SANDBOX, signed.raw)
    return { ...signed, nonce: pending }
  })

/** Polls until the transaction is mined (the sandbox mines on send). */
const mined = (chain: Chain["Type"], hash: Hex) =>
  Effect.gen(function* () {
    for (let i = 0; i < 100; i++) {
      const state = yield* chain.transactionState(SANDBOX, hash)
      if (state._tag === "Mined") return state
      yield* Effect.sleep("20 millis")
    }
    return yield* Effect.dieMessage(`${hash} was not mined`)
  })

describe("the EVM chain adapter on the sandbox chain", () => {
  it.live("reads the token's EIP-712 domain from the contract", () =>
    scoped(
      Effect.gen(function* () {
        const { chain, asset, sandbox } = yield* setup
        const domain = yield* chain.tokenDomain(asset)
        expect(domain).toEqual({
          name: "USD Coin",
          version: "2",
          chainId: 31337n,
          verifyingContract: sandbox.token.address
        })
        expect(chain.networks[0]?.collector).toBe(sandbox.collector.address)
      })
    )
  )

  it.live(
    "submits a signed receiveWithAuthorization and sees it confirmed, the balances moved",
    () =>
      scoped(
        Effect.gen(function* () {
          const { chain, asset, sandbox } = yield* setup
          const buyerKey = generatePrivateKey()
          const buyer = privateKeyToAccount(buyerKey).address
          yield* sandbox.faucet(buyer, 25_000_000n)
          expect(yield* chain.balanceOf(asset, buyer)).toBe(25_000_000n)
          const collectorBefore = yield* chain.balanceOf(asset, sandbox.collector.address)

          const domain = yield* chain.tokenDomain(asset)
          const auth = authorizationFor(buyer, sandbox.collector.address, 10_500_000n)
          const signature = yield* Effect.promise(() => signed(buyerKey, domain, auth))
          expect(yield* isSignedByPayer(domain, auth, signature)).toBe(true)

          const call = yield* chain.receiveCall(asset, eip3009(auth), signature)
          expect(call.to).toBe(sandbox.token.address)
          const sent = yield* send(chain, call)
          expect(sent.hash).toMatch(/^0x[0-9a-f]{64}$/)
          expect(sent.nonce).toBeGreaterThanOrEqual(0)
          const outcome = yield* mined(chain, sent.hash)
          expect(outcome.success).toBe(true)
          expect((yield* chain.head(SANDBOX)).number).toBe(outcome.blockNumber)
          // Sent again as it is (a retry after a crash): the node has it, so it is no error.
          yield* chain.broadcast(SANDBOX, sent.raw)
          expect((yield* chain.collectorNonce(SANDBOX)).latest).toBe(sent.nonce + 1)
          expect(yield* chain.balanceOf(asset, buyer)).toBe(14_500_000n)
          expect(yield* chain.balanceOf(asset, sandbox.collector.address)).toBe(
            collectorBefore + 10_500_000n
          )

          // The same authorization again: the token refuses it before anything is sent.
          const again = yield* Effect.flip(chain.receiveCall(asset, eip3009(auth), signature))
          expect(again._tag).toBe("TransferRefused")
        })
      )
  )

  it.live("refuses a signature by another key, before sending anything", () =>
    scoped(
      Effect.gen(function* () {
        const { chain, asset, sandbox } = yield* setup
        const buyer = privateKeyToAccount(generatePrivateKey()).address
        yield* sandbox.faucet(buyer, 5_000_000n)
        const domain = yield* chain.tokenDomain(asset)
        const auth = authorizationFor(buyer, sandbox.collector.address, 1_000_000n)
        const forged = yield* Effect.promise(() => signed(generatePrivateKey(), domain, auth))
        expect(yield* isSignedByPayer(domain, auth, forged)).toBe(false)
        const before = yield* Effect.promise(() =>
          sandbox.publicClient.getTransactionCount({ address: sandbox.collector.address })
        )
        const refused = yield* Effect.flip(chain.receiveCall(asset, eip3009(auth), forged))
        expect(refused._tag).toBe("TransferRefused")
        expect(
          yield* Effect.promise(() =>
            sandbox.publicClient.getTransactionCount({ address: sandbox.collector.address })
          )
        ).toBe(before)
        expect(yield* chain.balanceOf(asset, buyer)).toBe(5_000_000n)
      })
    )
  )

  it.live(
    "refuses (TransferRefused) an authorization the next block would reject, though the latest one takes it",
    () =>
      scoped(
        Effect.gen(function* () {
          const { chain, asset, sandbox } = yield* setup
          const buyerKey = generatePrivateKey()
          const buyer = privateKeyToAccount(buyerKey).address
          yield* sandbox.faucet(buyer, 5_000_000n)
          const domain = yield* chain.tokenDomain(asset)
          const latest = yield* Effect.promise(() => sandbox.publicClient.getBlock())
          // Valid at the latest block's time; the next block is stamped at its validBefore.
          const auth = {
            ...authorizationFor(buyer, sandbox.collector.address, 1_000_000n),
            validBefore: latest.timestamp + 30n
          }
          const signature = yield* Effect.promise(() => signed(buyerKey, domain, auth))
          yield* Effect.promise(() =>
            sandbox.transport({}).request({
              method: "evm_setNextBlockTimestamp",
              params: [Number(auth.validBefore)]
            })
          )
          const refused = yield* Effect.flip(chain.receiveCall(asset, eip3009(auth), signature))
          expect(refused._tag).toBe("TransferRefused")
          expect(yield* chain.balanceOf(asset, buyer)).toBe(5_000_000n)
        })
      )
  )

  it.live("reports a mined transfer that reverted as Reverted", () =>
    scoped(
      Effect.gen(function* () {
        const { chain, asset, sandbox } = yield* setup
        const buyer = privateKeyToAccount(generatePrivateKey()).address
        const domain = yield* chain.tokenDomain(asset)
        // The buyer has nothing: sent anyway (a fixed gas limit skips the estimate), it reverts on chain.
        const auth = authorizationFor(buyer, sandbox.collector.address, 1_000_000n)
        const signature = yield* Effect.promise(() => signed(generatePrivateKey(), domain, auth))
        const hash = yield* Effect.promise(() =>
          sandbox.collector.walletClient.writeContract({
            address: sandbox.token.address,
            abi: sandbox.token.abi,
            functionName: "receiveWithAuthorization",
            args: [
              auth.from,
              auth.to,
              auth.value,
              auth.validAfter,
              auth.validBefore,
              auth.nonce,
              signature
            ],
            gas: 300_000n
          })
        )
        const outcome = yield* mined(chain, hash)
        expect(outcome.success).toBe(false)
      })
    )
  )

  it.live("sends an ERC-20 transfer from the collector, and knows an unknown hash", () =>
    scoped(
      Effect.gen(function* () {
        const { chain, asset, sandbox } = yield* setup
        yield* sandbox.faucet(sandbox.collector.address, 3_000_000n)
        const merchant = privateKeyToAccount(generatePrivateKey()).address
        const sent = yield* send(chain, yield* chain.transferCall(asset, merchant, 2_500_000n))
        expect((yield* mined(chain, sent.hash)).success).toBe(true)
        expect(yield* chain.balanceOf(asset, merchant)).toBe(2_500_000n)
        // More than the collector holds: the token would revert, so it is refused unsent.
        const refused = yield* Effect.flip(chain.transferCall(asset, merchant, 10n ** 30n))
        expect(refused._tag).toBe("TransferRefused")
        const unknown = yield* chain.transactionState(SANDBOX, `0x${"ab".repeat(32)}`)
        expect(unknown._tag).toBe("Unknown")
      })
    )
  )

  it.live("answers ChainUnavailable for an asset no network carries", () =>
    scoped(
      Effect.gen(function* () {
        const { chain } = yield* setup
        const other = "eip155:1/erc20:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48" as Caip19
        expect((yield* Effect.flip(chain.tokenDomain(other)))._tag).toBe("ChainUnavailable")
      })
    )
  )
})

describe("the network's native coin on the sandbox chain", () => {
  /** The ether an account holds, read from the chain itself. */
  const etherOf = (sandbox: Sandbox.SandboxChainService, address: Hex) =>
    Effect.promise(() => sandbox.publicClient.getBalance({ address }))

  it.live("is named by EIP-7528's address, and its balance is the account's ether", () =>
    scoped(
      Effect.gen(function* () {
        const { chain, sandbox } = yield* setup
        const token = chain.networks[0]?.tokens.find((t) => t.asset === ETHER)
        expect(token).toMatchObject({ address: NATIVE_COIN_ADDRESS, authorization: "native" })
        const buyer = privateKeyToAccount(generatePrivateKey()).address
        expect(yield* chain.balanceOf(ETHER, buyer)).toBe(0n)
        yield* sandbox.faucet(buyer, 1_234_567_890_123n, "ETH")
        expect(yield* chain.balanceOf(ETHER, buyer)).toBe(1_234_567_890_123n)
        expect(yield* chain.balanceOf(ETHER, sandbox.collector.address)).toBe(
          yield* etherOf(sandbox, sandbox.collector.address)
        )
      })
    )
  )

  it.live(
    "sends a plain transfer from the collector: the destination gets exactly its value, the collector pays it and the gas",
    () =>
      scoped(
        Effect.gen(function* () {
          const { chain, sandbox } = yield* setup
          const merchant = privateKeyToAccount(generatePrivateKey()).address
          const value = 1_500_000_000_000_000_000n
          const call = yield* chain.transferCall(ETHER, merchant, value)
          expect(call).toMatchObject({ to: merchant, data: "0x", value })
          // 21,000 (the node may answer a wei or so over) with the headroom every estimate gets.
          expect(call.gas).toBeGreaterThanOrEqual(26_250n)
          expect(call.gas).toBeLessThan(26_300n)
          const collectorBefore = yield* etherOf(sandbox, sandbox.collector.address)
          const sent = yield* send(chain, call)
          expect((yield* mined(chain, sent.hash)).success).toBe(true)
          const receipt = yield* Effect.promise(() =>
            sandbox.publicClient.getTransactionReceipt({ hash: sent.hash })
          )
          const tx = yield* chain.transaction(SANDBOX, sent.hash)
          expect(tx).toMatchObject({ to: merchant, value, input: "0x" })
          expect(yield* chain.balanceOf(ETHER, merchant)).toBe(value)
          expect(yield* etherOf(sandbox, sandbox.collector.address)).toBe(
            collectorBefore - value - receipt.gasUsed * receipt.effectiveGasPrice
          )
        })
      )
  )

  it.live(
    "estimates a contract destination's own gas, and refuses a transfer that cannot go through",
    () =>
      scoped(
        Effect.gen(function* () {
          const { chain, sandbox } = yield* setup
          // A Safe takes ether in its receive(), which logs it: more than a plain transfer's gas.
          const safe = yield* sandbox.smartAccount({
            kind: "safe",
            owner: privateKeyToAccount(generatePrivateKey())
          })
          const call = yield* chain.transferCall(ETHER, safe.address, 10n ** 15n)
          expect(call.gas).toBeGreaterThan(26_300n)
          expect((yield* mined(chain, (yield* send(chain, call)).hash)).success).toBe(true)
          expect(yield* chain.balanceOf(ETHER, safe.address)).toBe(10n ** 15n)
          // A contract that takes no ether (the USDC) reverts: refused unsent, with the reason.
          const reverts = yield* Effect.flip(
            chain.transferCall(ETHER, sandbox.token.address, 10n ** 15n)
          )
          expect(reverts._tag).toBe("TransferRefused")
          // More than the collector holds.
          const merchant = privateKeyToAccount(generatePrivateKey()).address
          const short = yield* Effect.flip(chain.transferCall(ETHER, merchant, 10n ** 40n))
          expect(short).toMatchObject({ _tag: "TransferRefused" })
          expect((short as { reason: string }).reason).toMatch(/insufficient|funds|balance/i)
        })
      )
  )

  it.live("is never asked what only a token contract answers: each such call is a defect", () =>
    scoped(
      Effect.gen(function* () {
        const { chain, sandbox } = yield* setup
        const buyer = privateKeyToAccount(generatePrivateKey()).address
        const auth = authorizationFor(buyer, sandbox.collector.address, 1n)
        const permission = eip3009(auth)
        const signature = `0x${"11".repeat(65)}` as Hex
        const calls = [
          chain.tokenDomain(ETHER),
          chain.allowance(ETHER, buyer, sandbox.permit2),
          chain.receiveCall(ETHER, permission, signature),
          chain.verifyAuthorization(ETHER, permission, signature),
          chain.simulateReceive(ETHER, permission, signature),
          chain.authorizationUsed(ETHER, permission)
        ] as ReadonlyArray<Effect.Effect<unknown, unknown>>
        for (const attempt of calls) {
          const exit = yield* Effect.exit(attempt)
          expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
          if (Exit.isFailure(exit)) {
            expect(Cause.pretty(exit.cause)).toContain(`${ETHER} is the network's native coin`)
          }
        }
      })
    )
  )

  it.live("is configured only as slip44, and a slip44 asset only as native", () =>
    Effect.gen(function* () {
      const network = {
        chainId: "eip155:8453" as Caip2,
        name: "Base",
        collectorKey: generatePrivateKey(),
        confirmations: 1,
        etaSeconds: 2,
        transport: http("http://127.0.0.1:1")
      }
      const token = {
        symbol: "ETH",
        name: "Ether",
        decimals: 18,
        iconUrl: null,
        priceCurrency: "ETH"
      }
      const made = (tokens: Parameters<typeof makeEvmChain>[0][number]["tokens"]) =>
        Effect.exit(makeEvmChain([{ ...network, tokens }]))
      const ok = yield* made([
        { ...token, asset: "eip155:8453/slip44:60" as Caip19, authorization: "native" }
      ])
      expect(Exit.isSuccess(ok)).toBe(true)
      const refusals = [
        [
          {
            ...token,
            asset: "eip155:8453/erc20:0x4200000000000000000000000000000000000006" as Caip19,
            authorization: "native" as const
          },
          "a native coin is named eip155:8453/slip44:<coin type>"
        ],
        [
          { ...token, asset: "eip155:8453/slip44:60" as Caip19, authorization: "permit2" as const },
          "which takes an ERC-20"
        ],
        [
          { ...token, asset: "eip155:8453/slip44:60" as Caip19 },
          "authorization eip3009, which takes an ERC-20"
        ],
        [
          { ...token, asset: "eip155:1/slip44:60" as Caip19, authorization: "native" as const },
          "is not an asset of eip155:8453"
        ]
      ] as const
      for (const [t, message] of refusals) {
        const exit = yield* made([t])
        expect(Exit.isFailure(exit) && Cause.pretty(exit.cause)).toContain(message)
      }
    })
  )
})

describe("an RPC endpoint that does not answer", () => {
  it.live("is named by its host only, with the low-level cause", () =>
    Effect.gen(function* () {
      // A port nothing listens on; the path stands for an API key, which must not show.
      const server = createServer()
      yield* Effect.promise(() => new Promise<void>((r) => server.listen(0, "127.0.0.1", r)))
      const { port } = server.address() as AddressInfo
      yield* Effect.promise(() => new Promise((r) => server.close(r)))
      const chain = yield* makeEvmChain([
        {
          chainId: "eip155:8453" as Caip2,
          name: "Base",
          collectorKey: generatePrivateKey(),
          confirmations: 1,
          etaSeconds: 2,
          transport: http(`http://127.0.0.1:${port}/v2/SECRET_KEY_IN_PATH`, { retryCount: 0 }),
          tokens: []
        }
      ])
      const failure = yield* Effect.flip(chain.head("eip155:8453" as Caip2))
      expect(failure).toMatchObject({
        _tag: "ChainUnavailable",
        chainId: "eip155:8453",
        rpcHost: `127.0.0.1:${port}`,
        errorCode: "ECONNREFUSED"
      })
      expect(failure.message).toContain(`(RPC 127.0.0.1:${port}, ECONNREFUSED)`)
      expect(failure.message).not.toContain("SECRET_KEY_IN_PATH")
    })
  )
})
