/**
 * The scripted chain's smart-account members, as core's chain work and the
 * gateway's confirm use them: code per address, signatures checked as a node
 * would (ECDSA for an EOA, a scripted verdict for a smart account, ERC-6492
 * with the factory call first), the factory call and its refusals, and the
 * deployer's nonces apart from the collector's.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  type ChainUnavailable,
  RECEIVE_WITH_AUTHORIZATION_TYPES,
  type ReceiveAuthorization,
  type TransferRefused
} from "@pay/core"
import { Effect } from "effect"
import { type Address, getAddress, type Hex, serializeErc6492Signature } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { ACCOUNT_CODE, COLLECTOR, DEPLOYER, ScriptedChain } from "./ScriptedChain.js"

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
