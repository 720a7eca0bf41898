/**
 * The smart accounts the sandbox makes, on the real in-process chain: each
 * signs an EIP-3009 authorization as its wallet would, viem's verification
 * (ERC-1271, ERC-6492) agrees, and the test USDC (FiatToken v2.2's rule: an
 * address with code is asked through ERC-1271 only) moves the tokens or
 * refuses them as real USDC would.
 */
import { Effect, Exit, Scope } from "effect"
import {
  type Address,
  encodeAbiParameters,
  getAddress,
  type Hex,
  hashTypedData,
  parseErc6492Signature,
  serializeErc6492Signature,
  type TypedDataDefinition,
  toHex
} from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SMART_ACCOUNT_ADDRESSES, TEST_USDC_ADDRESS } from "./Keys.js"
import { make, type SandboxChainService } from "./SandboxChain.js"
import { delegate7702, type SmartAccount } from "./SmartAccounts.js"

let chain: SandboxChainService
let scope: Scope.CloseableScope

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  chain = await Effect.runPromise(Scope.extend(make(), scope))
}, 60_000)

afterAll(() => (scope === undefined ? undefined : Effect.runPromise(Scope.close(scope, Exit.void))))

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

const VALUE = 2_000_000n

/** A ReceiveWithAuthorization to the collector, under the token's own domain. */
const authorizationFor = async (from: Address): Promise<TypedDataDefinition> => {
  const [, name, version, chainId, verifyingContract] = await chain.publicClient.readContract({
    address: chain.token.address,
    abi: chain.token.abi,
    functionName: "eip712Domain"
  })
  return {
    domain: { name, version, chainId, verifyingContract },
    types: {
      ReceiveWithAuthorization: [
        { name: "from", type: "address" },
        { name: "to", type: "address" },
        { name: "value", type: "uint256" },
        { name: "validAfter", type: "uint256" },
        { name: "validBefore", type: "uint256" },
        { name: "nonce", type: "bytes32" }
      ]
    },
    primaryType: "ReceiveWithAuthorization",
    message: {
      from,
      to: chain.collector.address,
      value: VALUE,
      validAfter: 0n,
      validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600),
      nonce: toHex(crypto.getRandomValues(new Uint8Array(32)))
    }
  } as TypedDataDefinition
}

const verifies = (address: Address, typed: TypedDataDefinition, signature: Hex) =>
  chain.publicClient.verifyTypedData({ ...typed, address, signature } as Parameters<
    typeof chain.publicClient.verifyTypedData
  >[0])

/** The collector sends the `bytes signature` receive; resolves with the receipt's status. */
const receive = async (typed: TypedDataDefinition, signature: Hex) => {
  const m = typed.message as Record<string, unknown>
  const hash = await chain.collector.walletClient.writeContract({
    address: chain.token.address,
    abi: chain.token.abi,
    functionName: "receiveWithAuthorization",
    args: [
      m.from as Address,
      m.to as Address,
      m.value as bigint,
      m.validAfter as bigint,
      m.validBefore as bigint,
      m.nonce as Hex,
      signature
    ],
    gas: 500_000n
  })
  return (await chain.publicClient.waitForTransactionReceipt({ hash })).status
}

const balanceOf = (address: Address) =>
  chain.publicClient.readContract({
    address: chain.token.address,
    abi: chain.token.abi,
    functionName: "balanceOf",
    args: [address]
  })

/** The same factory call around another inner signature. */
const rewrap = (
  parsed: { address?: Address | undefined; data?: Hex | undefined },
  signature: Hex
) => serializeErc6492Signature({ address: parsed.address!, data: parsed.data!, signature })

const funded = async <A extends SmartAccount>(account: A) => {
  await run(chain.faucet(account.address, VALUE))
  return account
}

describe("the sandbox's smart accounts", () => {
  it("are deployed at their fixed addresses, after the token", async () => {
    expect(chain.accounts).toEqual(SMART_ACCOUNT_ADDRESSES)
    expect(chain.token.address).toBe(TEST_USDC_ADDRESS)
    for (const address of Object.values(SMART_ACCOUNT_ADDRESSES)) {
      expect((await chain.publicClient.getCode({ address }))?.length).toBeGreaterThan(2)
    }
    expect(await chain.publicClient.getBalance({ address: chain.accountDeployer.address })).toBe(
      10n ** 22n
    )
  })

  it("a deployed Safe signs through ERC-1271: viem agrees, a stranger's does not verify, the token moves it", async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const safe = await funded(await run(chain.smartAccount({ kind: "safe", owner })))
    const typed = await authorizationFor(safe.address)
    const signature = await safe.signTypedData(typed)
    expect(await verifies(safe.address, typed, signature)).toBe(true)
    const stranger = await run(
      chain.smartAccount({
        kind: "safe",
        owner: privateKeyToAccount(generatePrivateKey()),
        counterfactual: true
      })
    )
    const forged = parseErc6492Signature(await stranger.signTypedData(typed)).signature
    expect(await verifies(safe.address, typed, forged)).toBe(false)
    const before = await balanceOf(chain.collector.address)
    expect(await receive(typed, signature)).toBe("success")
    expect(await balanceOf(safe.address)).toBe(0n)
    expect(await balanceOf(chain.collector.address)).toBe(before + VALUE)
  })

  it("a counterfactual Safe signs with ERC-6492 at the address its factory then deploys it to", async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const safe = await run(chain.smartAccount({ kind: "safe", owner, counterfactual: true }))
    if (safe.kind !== "safe") throw new Error("not a Safe")
    expect(await safe.isDeployed()).toBe(false)
    await run(chain.faucet(safe.address, VALUE))
    const typed = await authorizationFor(safe.address)
    const wrapped = await safe.signTypedData(typed)
    const parsed = parseErc6492Signature(wrapped)
    expect(parsed.address).toBe(SMART_ACCOUNT_ADDRESSES.safeProxyFactory)
    expect(parsed.data).toBe(safe.factoryData)
    expect(await verifies(safe.address, typed, wrapped)).toBe(true)
    // Still not deployed: verification only simulated the factory call.
    expect(await safe.isDeployed()).toBe(false)
    await safe.deploy(chain.collector.walletClient)
    expect(await safe.isDeployed()).toBe(true)
    expect(await receive(typed, parsed.signature)).toBe("success")
    expect(await balanceOf(safe.address)).toBe(0n)
  })

  it("a deployed thirdweb ERC-4337 account signs AccountMessage through ERC-1271: viem agrees, its owner's bare signature does not verify, the token moves it", async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const account = await funded(await run(chain.smartAccount({ kind: "4337", owner })))
    if (account.kind !== "4337") throw new Error("not a thirdweb account")
    expect(await account.isDeployed()).toBe(true)
    const typed = await authorizationFor(account.address)
    const signature = await account.signTypedData(typed)
    expect(signature.length).toBe(2 + 65 * 2)
    expect(await verifies(account.address, typed, signature)).toBe(true)
    // The owner's key over the typed data itself, not wrapped in the account's domain.
    expect(await verifies(account.address, typed, await owner.signTypedData(typed))).toBe(false)
    expect(await receive(typed, signature)).toBe("success")
    expect(await balanceOf(account.address)).toBe(0n)
  })

  it("a counterfactual thirdweb account signs with ERC-6492 (createAccount on its factory) at the address it is then deployed to", async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const account = await run(chain.smartAccount({ kind: "4337", owner, counterfactual: true }))
    if (account.kind !== "4337") throw new Error("not a thirdweb account")
    expect(await account.isDeployed()).toBe(false)
    await run(chain.faucet(account.address, VALUE))
    const typed = await authorizationFor(account.address)
    const wrapped = await account.signTypedData(typed)
    const parsed = parseErc6492Signature(wrapped)
    expect(parsed.address).toBe(SMART_ACCOUNT_ADDRESSES.thirdwebAccountFactory)
    expect(await verifies(account.address, typed, wrapped)).toBe(true)
    const stranger = privateKeyToAccount(generatePrivateKey())
    const forged = await stranger.signTypedData({
      domain: {
        name: "Account",
        version: "1",
        chainId: chain.chainId,
        verifyingContract: account.address
      },
      types: { AccountMessage: [{ name: "message", type: "bytes" }] },
      primaryType: "AccountMessage",
      message: { message: encodeAbiParameters([{ type: "bytes32" }], [hashTypedData(typed)]) }
    })
    expect(await verifies(account.address, typed, rewrap(parsed, forged))).toBe(false)
    expect(await account.isDeployed()).toBe(false)
    await account.deploy(chain.collector.walletClient)
    expect(await account.isDeployed()).toBe(true)
    expect(await receive(typed, parsed.signature)).toBe("success")
    expect(await balanceOf(account.address)).toBe(0n)
  })

  it("an EIP-7702 EOA delegated to Simple7702Account pays with its key's signature, in either call form", async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const account = await funded(await run(chain.smartAccount({ kind: "7702", owner })))
    expect(account.address).toBe(owner.address)
    const typed = await authorizationFor(account.address)
    const signature = await account.signTypedData(typed)
    expect(await verifies(account.address, typed, signature)).toBe(true)
    expect(await receive(typed, signature)).toBe("success")
    expect(await balanceOf(account.address)).toBe(0n)
  })

  it("an EOA delegated to code without ERC-1271: the token refuses its valid ECDSA signature, as USDC does", async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    // Delegated to the proxy factory: code, but no isValidSignature.
    await delegate7702({
      client: chain.publicClient,
      wallet: chain.collector.walletClient,
      owner,
      delegate: getAddress(SMART_ACCOUNT_ADDRESSES.safeProxyFactory)
    })
    await run(chain.faucet(owner.address, VALUE))
    const typed = await authorizationFor(owner.address)
    const signature = await owner.signTypedData(typed)
    await expect(
      chain.publicClient.simulateContract({
        account: chain.collector.account,
        address: chain.token.address,
        abi: chain.token.abi,
        functionName: "receiveWithAuthorization",
        args: [
          owner.address,
          chain.collector.address,
          VALUE,
          0n,
          (typed.message as { validBefore: bigint }).validBefore,
          (typed.message as { nonce: Hex }).nonce,
          signature
        ]
      })
    ).rejects.toThrow(/invalid signature/)
    expect(await balanceOf(owner.address)).toBe(VALUE)
  })
})
