/**
 * The test USDT answers as Ethereum's USDT does where a payment engine meets
 * it: transfer, transferFrom and approve return no data at all (a caller that
 * decodes a bool fails), and approve refuses to move a non-zero allowance to
 * another non-zero value.
 */
import { Effect, Exit, Scope } from "effect"
import { type Address, encodeFunctionData, type Hex } from "viem"
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { TEST_USDT_ADDRESS } from "./Keys.js"
import { make, type SandboxChainService } from "./SandboxChain.js"
import { TestUSDT } from "./TestUSDT.artifact.js"

let chain: SandboxChainService
let scope: Scope.CloseableScope

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  chain = await Effect.runPromise(Scope.extend(make(), scope))
}, 60_000)

afterAll(() => (scope === undefined ? undefined : Effect.runPromise(Scope.close(scope, Exit.void))))

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
const newKey = () => privateKeyToAccount(generatePrivateKey())
const usdt = { address: TEST_USDT_ADDRESS, abi: TestUSDT.abi } as const

type Call = Parameters<typeof encodeFunctionData<typeof TestUSDT.abi>>[0]

/** The raw `eth_call` answer: the return data, or the node's error. */
const rawCall = (from: Address, call: Omit<Call, "abi">) =>
  chain
    .request({
      method: "eth_call",
      params: [
        {
          from,
          to: TEST_USDT_ADDRESS,
          data: encodeFunctionData({ abi: TestUSDT.abi, ...call } as Call)
        },
        "latest"
      ]
    })
    .then(
      (result) => result as Hex,
      (e: { readonly message: string }) => `reverted: ${e.message}`
    )

const send = async (from: PrivateKeyAccount, call: Omit<Call, "abi">) => {
  const hash = await chain.collector.walletClient.sendTransaction({
    account: from,
    to: TEST_USDT_ADDRESS,
    data: encodeFunctionData({ abi: TestUSDT.abi, ...call } as Call)
  })
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash })
  expect(receipt.status).toBe("success")
}

const balanceOf = (account: Address) =>
  chain.publicClient.readContract({ ...usdt, functionName: "balanceOf", args: [account] })

describe("TestUSDT", () => {
  it("is Tether USD, USDT, 6 decimals, paid through Permit2", async () => {
    const read = <F extends "name" | "symbol" | "decimals">(functionName: F) =>
      chain.publicClient.readContract({ ...usdt, functionName })
    expect(await Promise.all([read("name"), read("symbol"), read("decimals")])).toEqual([
      "Tether USD",
      "USDT",
      6
    ])
    expect(chain.tokens[1]).toMatchObject({
      symbol: "USDT",
      address: TEST_USDT_ADDRESS,
      asset: `eip155:31337/erc20:${TEST_USDT_ADDRESS}`,
      authorization: "permit2"
    })
    expect(chain.tokens[1].version).toBeUndefined()
  })

  it("returns no data from transfer, transferFrom and approve", async () => {
    const holder = newKey()
    const spender = newKey()
    const to = newKey().address
    await run(chain.faucet(holder.address, 10n ** 17n, "ETH"))
    await run(chain.faucet(holder.address, 100n, "USDT"))

    expect(await rawCall(holder.address, { functionName: "transfer", args: [to, 10n] })).toBe("0x")
    expect(
      await rawCall(holder.address, { functionName: "approve", args: [spender.address, 30n] })
    ).toBe("0x")
    await send(holder, { functionName: "approve", args: [spender.address, 30n] })
    expect(
      await rawCall(spender.address, {
        functionName: "transferFrom",
        args: [holder.address, to, 20n]
      })
    ).toBe("0x")
    // Sent, they move the tokens all the same.
    await run(chain.faucet(spender.address, 10n ** 17n, "ETH"))
    await send(spender, { functionName: "transferFrom", args: [holder.address, to, 20n] })
    await send(holder, { functionName: "transfer", args: [to, 5n] })
    expect(await balanceOf(holder.address)).toBe(75n)
    expect(await balanceOf(to)).toBe(25n)
    expect(
      await chain.publicClient.readContract({
        ...usdt,
        functionName: "allowance",
        args: [holder.address, spender.address]
      })
    ).toBe(10n)
    // More than the allowance, or the balance: a revert, not a false.
    expect(
      await rawCall(spender.address, {
        functionName: "transferFrom",
        args: [holder.address, to, 11n]
      })
    ).toMatch(/^reverted/)
    expect(await rawCall(holder.address, { functionName: "transfer", args: [to, 76n] })).toMatch(
      /^reverted/
    )
  })

  it("refuses to change a non-zero allowance to another non-zero value; through 0 it may", async () => {
    const holder = newKey()
    const spender = newKey().address
    await run(chain.faucet(holder.address, 10n ** 17n, "ETH"))
    await send(holder, { functionName: "approve", args: [spender, 5n] })
    expect(await rawCall(holder.address, { functionName: "approve", args: [spender, 7n] })).toMatch(
      /^reverted/
    )
    await send(holder, { functionName: "approve", args: [spender, 0n] })
    await send(holder, { functionName: "approve", args: [spender, 7n] })
    expect(
      await chain.publicClient.readContract({
        ...usdt,
        functionName: "allowance",
        args: [holder.address, spender]
      })
    ).toBe(7n)
  })

  it("mints for the deployer only", async () => {
    expect(
      await rawCall(chain.collector.address, {
        functionName: "mint",
        args: [chain.collector.address, 1n]
      })
    ).toMatch(/^reverted/)
  })
})
