/**
 * The scripted chain's smart-account members, as core's chain work and the
 * gateway's confirm use them: code per address, signatures checked as a node
 * would (ECDSA for an EOA, a scripted verdict for a smart account, ERC-6492
 * with the factory call first), the factory call and its refusals, and the
 * deployer's nonces apart from the collector's; and the network's own coin
 * (opt-in): a buyer's transfer, the collector's settlement, gas, the node's
 * refusal of a sender short of coin, a revert and a drop.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  type ChainUnavailable,
  NATIVE_COIN_ADDRESS,
  RECEIVE_WITH_AUTHORIZATION_TYPES,
  type ReceiveAuthorization,
  type TransferRefused
} from "@pay/core"
import { Effect } from "effect"
import { type Address, getAddress, type Hex, serializeErc6492Signature } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { ACCOUNT_CODE, COLLECTOR, DEPLOYER, GAS_MONEY, ScriptedChain } from "./ScriptedChain.js"

/** An EIP-3009 authorization as the chain port takes it. */
const eip3009 = (authorization: ReceiveAuthorization) =>
  ({ kind: "eip3009", authorization }) as const

const SMART = "0x00000000000000000000000000000000000005A0" as Address
const FACTORY = getAddress("0x0000000000000000000000000000000000000fac")
const DEPLOYMENT = { factory: FACTORY, factoryData: "0xc0ffee01" as Hex }
const INNER = `0x${"cd".repeat(96)}` as Hex
const WRAPPED = serializeErc6492Signature({
  address: FACTORY,
  data: DEPLOYMENT.factoryData,
  signature: INNER
})

/** Why the chain refused: the token's reason, or the node's message. */
const refusal = <A>(effect: Effect.Effect<A, ChainUnavailable | TransferRefused>) =>
  Effect.map(Effect.flip(effect), (e) => (e._tag === "TransferRefused" ? e.reason : e.message))

const authorizationOf = (from: Address): ReceiveAuthorization => ({
  from,
  to: COLLECTOR,
  value: 1_000_000n,
  validAfter: 0n,
  validBefore: 5_000n,
  nonce: `0x${"01".repeat(32)}`
})

describe("ScriptedChain: smart accounts and the deployer", () => {
  it.effect("recovers an EOA's signature, and asks a smart account for its verdict", () =>
    Effect.gen(function* () {
      const fake = new ScriptedChain()
      const chain = fake.service
      const key = privateKeyToAccount(generatePrivateKey())
      const auth = authorizationOf(key.address)
      const signature = yield* Effect.promise(() =>
        key.signTypedData({
          domain: {
            name: "USD Coin",
            version: "2",
            chainId: 8453n,
            verifyingContract: fake.token
          },
          types: RECEIVE_WITH_AUTHORIZATION_TYPES,
          primaryType: "ReceiveWithAuthorization",
          message: { ...auth }
        })
      )
      expect(yield* chain.codeAt(fake.chainId, key.address)).toBe("0x")
      expect(yield* chain.verifyAuthorization(fake.asset, eip3009(auth), signature)).toBe(true)
      expect(
        yield* chain.verifyAuthorization(fake.asset, eip3009({ ...auth, value: 1n }), signature)
      ).toBe(false)

      // Deployed, accepting: its verdict; then refusing: the token says so too.
      const account = fake.addSmartAccount(SMART, { deployed: true })
      expect(yield* chain.codeAt(fake.chainId, SMART)).toBe(ACCOUNT_CODE)
      expect(
        yield* chain.verifyAuthorization(fake.asset, eip3009(authorizationOf(SMART)), INNER)
      ).toBe(true)
      account.accepts = () => false
      expect(
        yield* chain.verifyAuthorization(fake.asset, eip3009(authorizationOf(SMART)), INNER)
      ).toBe(false)
      fake.mint(SMART, 1_000_000n)
      expect(
        yield* refusal(chain.simulateReceive(fake.asset, eip3009(authorizationOf(SMART)), INNER))
      ).toMatch(/invalid signature/)
    })
  )

  it.effect("checks an ERC-6492 signature after its factory call, simulated", () =>
    Effect.gen(function* () {
      const fake = new ScriptedChain()
      const chain = fake.service
      fake.addSmartAccount(SMART, { deployment: DEPLOYMENT })
      fake.mint(SMART, 1_000_000n)
      const auth = authorizationOf(SMART)
      expect(yield* chain.verifyAuthorization(fake.asset, eip3009(auth), WRAPPED)).toBe(true)
      yield* chain.simulateReceive(fake.asset, eip3009(auth), INNER, DEPLOYMENT)
      // Not deployed yet: the token cannot ask it, and nothing was deployed by the checks.
      expect(yield* refusal(chain.receiveCall(fake.asset, eip3009(auth), INNER))).toMatch(
        /invalid signature/
      )
      expect(fake.codeOf(SMART)).toBe("0x")
      // A factory call that deploys someone else does not make the payer's signature good.
      const other = { factory: FACTORY, factoryData: "0x99" as Hex }
      expect(
        yield* refusal(chain.simulateReceive(fake.asset, eip3009(auth), INNER, other))
      ).toMatch(/does not deploy the payer/)
    })
  )

  it.effect(
    "sends the factory call from the deployer, on its own nonces, and deploys the account",
    () =>
      Effect.gen(function* () {
        const fake = new ScriptedChain()
        const chain = fake.service
        fake.addSmartAccount(SMART, { deployment: DEPLOYMENT })
        expect(fake.network.deployer).toBe(DEPLOYER)
        const call = yield* chain.deploymentCall(fake.chainId, DEPLOYMENT)
        expect(call.to).toBe(FACTORY)
        const signed = yield* chain.sign(
          fake.chainId,
          { ...call, ...fake.quote, nonce: 0 },
          DEPLOYER
        )
        yield* chain.broadcast(fake.chainId, signed.raw)
        expect(fake.mined.map((t) => [t.call.kind, t.sender, t.nonce, t.success])).toEqual([
          ["deploy", DEPLOYER, 0, true]
        ])
        expect(yield* chain.codeAt(fake.chainId, SMART)).toBe(ACCOUNT_CODE)
        expect(yield* chain.collectorNonce(fake.chainId, undefined, DEPLOYER)).toEqual({
          latest: 1,
          pending: 1
        })
        expect(yield* chain.collectorNonce(fake.chainId)).toEqual({ latest: 0, pending: 0 })
        // Deployed: a second factory call is refused; no key signs for anyone else.
        expect(yield* refusal(chain.deploymentCall(fake.chainId, DEPLOYMENT))).toMatch(
          /exists already/
        )
        const stranger = "0x0000000000000000000000000000000000000bad" as Address
        expect(
          (yield* Effect.flip(
            chain.sign(fake.chainId, { ...call, ...fake.quote, nonce: 0 }, stranger)
          ))._tag
        ).toBe("ChainUnavailable")
      })
  )

  it.effect("refuses a factory call as the test says, or over the network's gas cap", () =>
    Effect.gen(function* () {
      const fake = new ScriptedChain({ deploymentGasCap: 100_000n })
      const chain = fake.service
      fake.addSmartAccount(SMART, { deployment: DEPLOYMENT, deploymentGas: 150_000n })
      expect(yield* refusal(chain.deploymentCall(fake.chainId, DEPLOYMENT))).toMatch(
        /over the cap of 100000/
      )
      fake.smartAccount(SMART)!.deploymentGas = 90_000n
      fake.refuseDeployment = () => "execution reverted: paused"
      expect(yield* refusal(chain.deploymentCall(fake.chainId, DEPLOYMENT))).toBe(
        "execution reverted: paused"
      )
      fake.refuseDeployment = () => undefined
      expect((yield* chain.deploymentCall(fake.chainId, DEPLOYMENT)).gas).toBe(90_000n)
      expect(new ScriptedChain({ deployer: null }).network.deployer).toBeUndefined()
    })
  )
})

describe("ScriptedChain: the network's own coin", () => {
  const BUYER = "0x00000000000000000000000000000000000000B1" as Address
  const MERCHANT = "0x00000000000000000000000000000000000000D1" as Address
  const REFERENCE = `0x${"ab".repeat(32)}` as Hex

  it("is opt-in: the default network has USDC only and counts no coin", () => {
    const fake = new ScriptedChain()
    expect(fake.network.tokens.map((t) => t.authorization)).toEqual(["eip3009"])
    expect(fake.nativeAsset).toBeUndefined()
    expect(fake.coinBalance(COLLECTOR)).toBe(0n)
    expect(() => fake.sendTransaction({ from: BUYER, to: COLLECTOR, value: 1n })).toThrow(/native/)
  })

  it.effect(
    "a buyer's transfer: pending until the next block, then value moved, gas burned, nonce used",
    () =>
      Effect.gen(function* () {
        const fake = new ScriptedChain({ native: true })
        const chain = fake.service
        const eth = fake.nativeAsset!
        expect(eth).toBe("eip155:8453/slip44:60")
        expect(fake.network.tokens.find((t) => t.asset === eth)).toMatchObject({
          address: NATIVE_COIN_ADDRESS,
          symbol: "ETH",
          decimals: 18,
          priceCurrency: "ETH",
          authorization: "native"
        })
        // The collector starts with gas money; a buyer pays value and gas.
        expect(yield* chain.balanceOf(eth, COLLECTOR)).toBe(GAS_MONEY)
        const send = { from: BUYER, to: COLLECTOR, value: 5_000n, data: REFERENCE }
        expect(() => fake.sendTransaction(send)).toThrow(/insufficient funds/)
        fake.mintCoin(BUYER, fake.sendCost(send))

        const hash = fake.sendTransaction(send)
        expect(yield* chain.transactionState(fake.chainId, hash)).toEqual({ _tag: "Pending" })
        expect(yield* chain.transaction(fake.chainId, hash)).toEqual({
          hash,
          from: BUYER,
          to: COLLECTOR,
          value: 5_000n,
          input: REFERENCE,
          nonce: 0
        })
        expect(yield* chain.collectorNonce(fake.chainId, undefined, BUYER)).toEqual({
          latest: 0,
          pending: 1
        })

        const [mined] = fake.mine()
        expect(mined).toMatchObject({ hash, success: true, call: { kind: "coin" } })
        // 21,000 and 16 a byte of data, at the base fee and its tip (2 gwei, the max fee).
        expect(mined!.gasCost).toBe((21_000n + 32n * 16n) * 2_000_000_000n)
        expect(yield* chain.transactionState(fake.chainId, hash)).toMatchObject({
          _tag: "Mined",
          success: true
        })
        expect(fake.coinBalance(BUYER)).toBe(0n)
        expect(fake.coinBalance(COLLECTOR)).toBe(GAS_MONEY + 5_000n)
        expect(yield* chain.collectorNonce(fake.chainId, undefined, BUYER)).toEqual({
          latest: 1,
          pending: 1
        })
      })
  )

  it.effect(
    "the collector's settlement: a plain transfer with value, signed, broadcast, its gas burned",
    () =>
      Effect.gen(function* () {
        const fake = new ScriptedChain({ native: true, gasMoney: 10n ** 15n })
        const chain = fake.service
        const eth = fake.nativeAsset!
        expect(yield* refusal(chain.transferCall(eth, MERCHANT, 2n * 10n ** 15n))).toMatch(
          /insufficient funds/
        )
        const call = yield* chain.transferCall(eth, MERCHANT, 4n * 10n ** 14n)
        expect(call).toEqual({ to: MERCHANT, data: "0x", gas: 21_000n, value: 4n * 10n ** 14n })
        const signed = yield* chain.sign(fake.chainId, { ...call, ...fake.quote, nonce: 0 })
        expect(fake.signed.at(-1)).toMatchObject({ value: 4n * 10n ** 14n, call: { kind: "coin" } })
        yield* chain.broadcast(fake.chainId, signed.raw)
        expect(fake.mined.map((t) => [t.call.kind, t.success, t.gasCost])).toEqual([
          ["coin", true, 21_000n * 2_000_000_000n]
        ])
        expect(fake.coinBalance(MERCHANT)).toBe(4n * 10n ** 14n)
        expect(fake.coinBalance(COLLECTOR)).toBe(10n ** 15n - 4n * 10n ** 14n - 42n * 10n ** 12n)
        // A sender that cannot pay the worst of a transaction is refused by the node.
        const more = yield* chain.sign(fake.chainId, {
          ...call,
          value: 6n * 10n ** 14n,
          ...fake.quote,
          nonce: 1
        })
        expect((yield* Effect.flip(chain.broadcast(fake.chainId, more.raw))).message).toMatch(
          /insufficient funds for gas \* price \+ value/
        )
      })
  )

  it.effect(
    "scripted failures: a revert burns gas and moves nothing; a dropped transfer's nonce is taken by the wallet's cancel",
    () =>
      Effect.gen(function* () {
        const fake = new ScriptedChain({ native: true })
        const chain = fake.service
        fake.mintCoin(BUYER, 10n ** 18n)
        const reverted = fake.sendTransaction({ from: BUYER, to: COLLECTOR, value: 7n })
        fake.revertIf = (tx) => tx.hash === reverted
        fake.mine()
        expect(yield* chain.transactionState(fake.chainId, reverted)).toMatchObject({
          success: false
        })
        expect(fake.coinBalance(COLLECTOR)).toBe(GAS_MONEY)
        expect(fake.coinBalance(BUYER)).toBe(10n ** 18n - 21_000n * 2_000_000_000n)

        const dropped = fake.sendTransaction({ from: BUYER, to: COLLECTOR, value: 7n })
        fake.dropIf = (tx) => tx.hash === dropped
        const [cancel] = fake.mine()
        expect(cancel).toMatchObject({
          sender: BUYER,
          to: BUYER,
          nonce: 1,
          call: { kind: "cancel" }
        })
        expect(fake.dropped.map((t) => t.hash)).toEqual([dropped])
        expect(yield* chain.transactionState(fake.chainId, dropped)).toEqual({ _tag: "Unknown" })
        expect(yield* chain.transaction(fake.chainId, dropped)).toBeUndefined()
        expect(yield* chain.collectorNonce(fake.chainId, undefined, BUYER)).toEqual({
          latest: 2,
          pending: 2
        })
        expect(fake.coinBalance(COLLECTOR)).toBe(GAS_MONEY)
      })
  )
})
