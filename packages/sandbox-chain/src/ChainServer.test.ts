/**
 * The sandbox chain over loopback HTTP, as crash tests use it: the methods they
 * steer the chain with (automine off, mine, drop, snapshot/revert, base fee)
 * and the node's exact answers to rebroadcasts, which the engine classifies
 * (recorded in ChainServer.ts). Each case runs its own chain in process; one
 * case runs the bundle `npm run chain` runs, as its own process.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { type Address, encodeFunctionData, type Hash, type Hex, keccak256, parseGwei } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest"
import { type ChainServer, FAUCET_METHOD, serveChain } from "./ChainServer.js"
import { COLLECTOR_ADDRESS, COLLECTOR_PRIVATE_KEY, DEPLOYER_PRIVATE_KEY } from "./Keys.js"
import { TestUSDC } from "./TestUSDC.artifact.js"

const root = join(import.meta.dirname, "..", "..", "..")
const SINK: Address = "0x000000000000000000000000000000000000dEaD"
const collector = privateKeyToAccount(COLLECTOR_PRIVATE_KEY)

interface RpcAnswer {
  readonly id: unknown
  readonly result?: unknown
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown }
}

/** One POST, bounded in time. */
const post = async (url: string, body: unknown) => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000)
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : (JSON.parse(text) as unknown) }
}

let nextId = 1
const call = async (url: string, method: string, params: ReadonlyArray<unknown> = []) =>
  (await post(url, { jsonrpc: "2.0", id: nextId++, method, params })).body as RpcAnswer

/** The result, or a thrown error carrying the node's message. */
const rpc = async <A = unknown>(
  url: string,
  method: string,
  params: ReadonlyArray<unknown> = []
): Promise<A> => {
  const answer = await call(url, method, params)
  if (answer.error !== undefined) {
    throw new Error(`${method}: ${answer.error.code} ${answer.error.message}`)
  }
  return answer.result as A
}

/** A signed ether transfer from the collector (21,000 gas, 10 gwei max fee by default). */
const signTransfer = (
  nonce: number,
  fees: { readonly maxFeePerGas?: bigint; readonly maxPriorityFeePerGas?: bigint } = {}
) =>
  collector.signTransaction({
    chainId: 31337,
    type: "eip1559",
    to: SINK,
    value: 1n,
    nonce,
    gas: 21_000n,
    maxFeePerGas: fees.maxFeePerGas ?? parseGwei("10"),
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas ?? parseGwei("1")
  })

const nonceOf = async (url: string, address: Address, tag = "latest") =>
  Number(await rpc<Hex>(url, "eth_getTransactionCount", [address, tag]))

const receipt = (url: string, hash: Hash) =>
  rpc<{ status: Hex; blockNumber: Hex } | null>(url, "eth_getTransactionReceipt", [hash])

const transaction = (url: string, hash: Hash) =>
  rpc<{ hash: Hash; blockNumber: Hex | null } | null>(url, "eth_getTransactionByHash", [hash])

describe("serveChain (in process)", () => {
  let chain: ChainServer
  let url: string

  beforeEach(async () => {
    chain = await serveChain()
    url = chain.url
  })
  afterEach(() => chain.close())

  it("answers JSON-RPC 2.0 on loopback: objects, batches, notifications, and POST only", async () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(await rpc(url, "eth_chainId")).toBe("0x7a69")

    const batch = await post(url, [
      { jsonrpc: "2.0", id: "a", method: "eth_chainId" },
      { jsonrpc: "2.0", method: "eth_blockNumber" },
      { jsonrpc: "2.0", id: "c", method: "no_such_method" }
    ])
    expect(batch.status).toBe(200)
    const [first, second, ...rest] = batch.body as Array<RpcAnswer>
    expect(rest).toEqual([])
    expect(first).toEqual({ jsonrpc: "2.0", id: "a", result: "0x7a69" })
    expect(second?.id).toBe("c")
    expect(second?.error?.code).toBe(-32004)
    expect(second?.error?.message).toBe("Method no_such_method is not supported")

    expect((await post(url, { jsonrpc: "2.0", method: "eth_chainId" })).status).toBe(204)
    const garbage = await fetch(url, {
      method: "POST",
      body: "{",
      signal: AbortSignal.timeout(5_000)
    })
    expect(((await garbage.json()) as RpcAnswer).error?.code).toBe(-32700)
    const get = await fetch(url, { signal: AbortSignal.timeout(5_000) })
    expect(get.status).toBe(405)
    expect(get.headers.get("allow")).toBe("POST")
  })

  it("refuses a host that is not loopback", async () => {
    await expect(serveChain({ host: "0.0.0.0" })).rejects.toThrow(/loopback only/)
  })

  it("keeps revert data as a node gives it (code 3, the data as hex)", async () => {
    // transferFrom with no allowance reverts with a custom error.
    const answer = await call(url, "eth_call", [
      {
        from: COLLECTOR_ADDRESS,
        to: chain.sandbox.token.address,
        data: encodeFunctionData({
          abi: TestUSDC.abi,
          functionName: "transferFrom",
          args: [SINK, COLLECTOR_ADDRESS, 1n]
        })
      }
    ])
    expect(answer.error?.code).toBe(3)
    expect(answer.error?.message).toMatch(/^execution reverted/)
    expect(answer.error?.data).toMatch(/^0x[0-9a-f]{8}/)
  })

  it(`mints with ${FAUCET_METHOD}, and with the deployer key`, async () => {
    const minted = await rpc<{ txHash: Hash; balance: string }>(url, FAUCET_METHOD, [
      SINK,
      "25000000"
    ])
    expect(minted.balance).toBe("25000000")
    expect((await receipt(url, minted.txHash))?.status).toBe("0x1")
    const again = await rpc<{ balance: string }>(url, FAUCET_METHOD, [SINK.toLowerCase(), 5])
    expect(again.balance).toBe("25000005")

    const bad = await call(url, FAUCET_METHOD, ["0x1234", "1"])
    expect(bad.error?.code).toBe(-32602)
    expect((await call(url, FAUCET_METHOD, [SINK, "-1"])).error?.code).toBe(-32602)
    expect((await call(url, FAUCET_METHOD, [SINK, "0"])).error?.code).toBe(-32602)
    // Any of the chain's tokens by symbol: its own balance, none of the others'.
    const usdt = await rpc<{ balance: string }>(url, FAUCET_METHOD, [SINK, "7", "USDT"])
    expect(usdt.balance).toBe("7")
    const dai = await rpc<{ balance: string }>(url, FAUCET_METHOD, [SINK, "10", "DAI"])
    expect(dai.balance).toBe("10")
    const unknown = await call(url, FAUCET_METHOD, [SINK, "1", "WBTC"])
    expect(unknown.error?.code).toBe(-32602)
    expect(unknown.error?.message).toMatch(/USDC, USDT, DAI/)

    // Automine off: the faucet refuses rather than leave a mint pending.
    await rpc(url, "evm_setAutomine", [false])
    const refused = await call(url, FAUCET_METHOD, [SINK, "1"])
    expect(refused.error?.code).toBe(-32000)
    expect(refused.error?.message).toMatch(/needs automine/)
    await rpc(url, "evm_setAutomine", [true])

    // The deployer key may mint too, as tests that do it themselves do.
    const deployer = privateKeyToAccount(DEPLOYER_PRIVATE_KEY)
    const raw = await deployer.signTransaction({
      chainId: 31337,
      type: "eip1559",
      to: chain.sandbox.token.address,
      data: encodeFunctionData({ abi: TestUSDC.abi, functionName: "mint", args: [SINK, 10n] }),
      nonce: await nonceOf(url, deployer.address),
      gas: 200_000n,
      maxFeePerGas: parseGwei("10"),
      maxPriorityFeePerGas: parseGwei("1")
    })
    const hash = await rpc<Hash>(url, "eth_sendRawTransaction", [raw])
    expect((await receipt(url, hash))?.status).toBe("0x1")
    const balance = await rpc<Hex>(url, "eth_call", [
      {
        to: chain.sandbox.token.address,
        data: encodeFunctionData({ abi: TestUSDC.abi, functionName: "balanceOf", args: [SINK] })
      },
      "latest"
    ])
    expect(BigInt(balance)).toBe(25_000_015n)
  })

  it("automine off: a sent transaction stays pending until evm_mine", async () => {
    expect(await rpc(url, "hardhat_getAutomine")).toBe(true)
    expect(await rpc(url, "evm_setAutomine", [false])).toBe(true)
    expect(await rpc(url, "hardhat_getAutomine")).toBe(false)
    // hardhat_setAutomine does not exist in EDR.
    expect((await call(url, "hardhat_setAutomine", [true])).error?.code).toBe(-32004)

    const raw = await signTransfer(await nonceOf(url, collector.address))
    const hash = await rpc<Hash>(url, "eth_sendRawTransaction", [raw])
    expect(hash).toBe(keccak256(raw))
    expect((await transaction(url, hash))?.blockNumber).toBeNull()
    expect(await receipt(url, hash)).toBeNull()
    const pending = await rpc<Array<{ hash: Hash }>>(url, "eth_pendingTransactions")
    expect(pending.map((t) => t.hash)).toEqual([hash])

    expect(await rpc(url, "evm_mine")).toBe("0")
    expect((await receipt(url, hash))?.status).toBe("0x1")
    expect((await transaction(url, hash))?.blockNumber).not.toBeNull()
  })

  it("evm_setAutomine true does not mine what is pending; the next transaction mines it all", async () => {
    await rpc(url, "evm_setAutomine", [false])
    const nonce = await nonceOf(url, collector.address)
    const first = await rpc<Hash>(url, "eth_sendRawTransaction", [await signTransfer(nonce)])
    await rpc(url, "evm_setAutomine", [true])
    expect(await receipt(url, first)).toBeNull()
    const second = await rpc<Hash>(url, "eth_sendRawTransaction", [await signTransfer(nonce + 1)])
    const [a, b] = [await receipt(url, first), await receipt(url, second)]
    expect(a?.status).toBe("0x1")
    expect(b?.blockNumber).toBe(a?.blockNumber)
  })

  it("hardhat_dropTransaction removes a pending transaction", async () => {
    await rpc(url, "evm_setAutomine", [false])
    const raw = await signTransfer(await nonceOf(url, collector.address))
    const hash = await rpc<Hash>(url, "eth_sendRawTransaction", [raw])
    expect(await transaction(url, hash)).not.toBeNull()
    expect(await rpc(url, "hardhat_dropTransaction", [hash])).toBe(true)
    expect(await transaction(url, hash)).toBeNull()
    await rpc(url, "evm_mine")
    expect(await receipt(url, hash)).toBeNull()
    // It can be sent again.
    expect(await rpc(url, "eth_sendRawTransaction", [raw])).toBe(hash)
    await rpc(url, "evm_mine")
    expect((await receipt(url, hash))?.status).toBe("0x1")
  })

  it("evm_snapshot before sending + evm_revert after mining: the transaction vanishes, and can be sent again", async () => {
    await rpc(url, "evm_setAutomine", [false])
    const before = await rpc<Hex>(url, "eth_blockNumber")
    const snapshot = await rpc<Hex>(url, "evm_snapshot")
    const raw = await signTransfer(await nonceOf(url, collector.address))
    const hash = await rpc<Hash>(url, "eth_sendRawTransaction", [raw])
    await rpc(url, "evm_mine")
    expect((await receipt(url, hash))?.status).toBe("0x1")

    expect(await rpc(url, "evm_revert", [snapshot])).toBe(true)
    expect(await rpc(url, "eth_blockNumber")).toBe(before)
    expect(await receipt(url, hash)).toBeNull()
    expect(await transaction(url, hash)).toBeNull()
    // A snapshot is used up by its revert.
    expect(await rpc(url, "evm_revert", [snapshot])).toBe(false)

    expect(await rpc(url, "eth_sendRawTransaction", [raw])).toBe(hash)
    await rpc(url, "evm_mine")
    expect((await receipt(url, hash))?.status).toBe("0x1")
  })

  it("evm_snapshot while pending + evm_revert after mining: the transaction is back in the mempool", async () => {
    await rpc(url, "evm_setAutomine", [false])
    const raw = await signTransfer(await nonceOf(url, collector.address))
    const hash = await rpc<Hash>(url, "eth_sendRawTransaction", [raw])
    const snapshot = await rpc<Hex>(url, "evm_snapshot")
    await rpc(url, "evm_mine")
    expect((await receipt(url, hash))?.status).toBe("0x1")

    expect(await rpc(url, "evm_revert", [snapshot])).toBe(true)
    expect(await receipt(url, hash)).toBeNull()
    expect((await transaction(url, hash))?.blockNumber).toBeNull()
    const again = await call(url, "eth_sendRawTransaction", [raw])
    expect(again.error?.message).toBe(`Known transaction: ${hash}`)
    await rpc(url, "evm_mine")
    expect((await receipt(url, hash))?.status).toBe("0x1")
  })

  it("a base fee above a transaction's maxFeePerGas leaves it stuck; a replacement with a higher fee is mined", async () => {
    await rpc(url, "evm_setAutomine", [false])
    const nonce = await nonceOf(url, collector.address)
    const stuck = await rpc<Hash>(url, "eth_sendRawTransaction", [await signTransfer(nonce)])
    expect(
      await rpc(url, "hardhat_setNextBlockBaseFeePerGas", [`0x${parseGwei("50").toString(16)}`])
    ).toBe(true)
    await rpc(url, "evm_mine")
    await rpc(url, "evm_mine")
    expect(await receipt(url, stuck)).toBeNull()
    expect((await transaction(url, stuck))?.blockNumber).toBeNull()
    // The pending nonce leaves the stuck transaction out.
    expect(await nonceOf(url, collector.address, "pending")).toBe(nonce)

    // Not raised by 10%: refused.
    const underpriced = await call(url, "eth_sendRawTransaction", [
      await signTransfer(nonce, { maxFeePerGas: parseGwei("10.5") })
    ])
    expect(underpriced.error?.code).toBe(-32000)
    expect(underpriced.error?.message).toBe(
      `Replacement transaction underpriced. A gasPrice/maxFeePerGas of at least ${parseGwei("11")} is necessary to replace the existing transaction with nonce ${nonce}.`
    )

    const replacement = await rpc<Hash>(url, "eth_sendRawTransaction", [
      await signTransfer(nonce, {
        maxFeePerGas: parseGwei("100"),
        maxPriorityFeePerGas: parseGwei("2")
      })
    ])
    expect(await transaction(url, stuck)).toBeNull()
    await rpc(url, "evm_mine")
    expect((await receipt(url, replacement))?.status).toBe("0x1")
    expect(await transaction(url, stuck)).toBeNull()
    expect(await receipt(url, stuck)).toBeNull()
  })

  it("answers rebroadcasts as the engine classifies them", async () => {
    const nonce = await nonceOf(url, collector.address)
    // Already mined, automine on (the chain's default): the message differs with automine off.
    const mined = await signTransfer(nonce)
    await rpc(url, "eth_sendRawTransaction", [mined])
    const again = await call(url, "eth_sendRawTransaction", [mined])
    expect(again.error?.code).toBe(-32000)
    expect(again.error?.message).toBe(
      `Nonce too low. Expected nonce to be ${nonce + 1} but got ${nonce}. Note that transactions can't be queued when automining.`
    )

    // Already mined, automine off.
    await rpc(url, "evm_setAutomine", [false])
    const againOff = await call(url, "eth_sendRawTransaction", [mined])
    expect(againOff.error?.code).toBe(-32000)
    expect(againOff.error?.message).toBe(
      `Transaction nonce too low. Expected nonce to be at least ${nonce + 1} but got ${nonce}.`
    )

    // Already pending.
    const pending = await signTransfer(nonce + 1)
    const hash = await rpc<Hash>(url, "eth_sendRawTransaction", [pending])
    const known = await call(url, "eth_sendRawTransaction", [pending])
    expect(known.error?.code).toBe(-32000)
    expect(known.error?.message).toBe(`Known transaction: ${hash}`)
    await rpc(url, "evm_mine")
    const minedOff = await call(url, "eth_sendRawTransaction", [pending])
    expect(minedOff.error?.message).toBe(
      `Transaction nonce too low. Expected nonce to be at least ${nonce + 2} but got ${nonce + 1}.`
    )

    // With automine: a fee below the next base fee, and a nonce gap.
    await rpc(url, "evm_setAutomine", [true])
    await rpc(url, "hardhat_setNextBlockBaseFeePerGas", [`0x${parseGwei("50").toString(16)}`])
    const cheap = await call(url, "eth_sendRawTransaction", [await signTransfer(nonce + 2)])
    expect(cheap.error?.message).toBe(
      `Transaction maxFeePerGas (${parseGwei("10")}) is too low for the next block, which has a baseFeePerGas of ${parseGwei("50")}`
    )
    const gap = await call(url, "eth_sendRawTransaction", [
      await signTransfer(nonce + 5, { maxFeePerGas: parseGwei("100") })
    ])
    expect(gap.error?.message).toBe(
      `Nonce too high. Expected nonce to be ${nonce + 2} but got ${nonce + 5}. Note that transactions can't be queued when automining.`
    )

    const wrongChain = await call(url, "eth_sendRawTransaction", [
      await collector.signTransaction({
        chainId: 1,
        type: "eip1559",
        to: SINK,
        nonce: nonce + 2,
        gas: 21_000n,
        maxFeePerGas: parseGwei("100"),
        maxPriorityFeePerGas: 1n
      })
    ])
    expect(wrongChain.error).toEqual({
      code: -32602,
      message:
        "Trying to send a raw transaction with an invalid chainId. The expected chainId is 31337"
    })
  })
})

describe("the chain as its own process (examples/standalone/dist/chain.mjs)", () => {
  const children: Array<ChildProcess> = []
  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL")
  })

  it("prints one JSON line when ready, serves JSON-RPC and stops on SIGTERM", async () => {
    // Built once per run by examples/standalone/test/bundles.globalSetup.ts.
    const child = spawn(
      process.execPath,
      ["--enable-source-maps", join(root, "examples/standalone/dist/chain.mjs")],
      { cwd: root, env: { ...process.env, HOST: "127.0.0.1", PORT: "0" } }
    )
    children.push(child)
    let stdout = ""
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve))
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready line:\n${stderr}`)), 30_000)
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString()
        const end = stdout.indexOf("\n")
        if (end >= 0) {
          clearTimeout(timer)
          resolve(stdout.slice(0, end))
        }
      })
      void exited.then((code) => reject(new Error(`exited with ${code}:\n${stderr}`)))
    })
    const ready = JSON.parse(line) as {
      rpcUrl: string
      chainId: string
      token: { asset: string; address: Address; symbol: string; decimals: number }
      collector: Address
      collectorPrivateKey: Hex
      deployerPrivateKey: Hex
    }
    expect(Object.keys(ready).sort()).toEqual([
      "accountDeployerPrivateKey",
      "accounts",
      "chainId",
      "collector",
      "collectorPrivateKey",
      "deployerPrivateKey",
      "priceFeeds",
      "rpcUrl",
      "token",
      "tokens"
    ])
    expect(ready.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(ready.chainId).toBe("eip155:31337")
    expect(ready.token).toEqual({
      asset: `eip155:31337/erc20:${ready.token.address}`,
      address: "0x1cd2272Cf2400da5cB86ccc008e3bE381C167116",
      symbol: "USDC",
      decimals: 6
    })
    // Every token, each with how it is paid, and the feeds.
    expect(
      (ready as unknown as { tokens: Array<{ symbol: string; authorization: string }> }).tokens.map(
        (t) => [t.symbol, t.authorization]
      )
    ).toEqual([
      ["USDC", "eip3009"],
      ["USDT", "permit2"],
      ["DAI", "permit2"]
    ])
    expect(Object.keys((ready as unknown as { priceFeeds: object }).priceFeeds)).toEqual([
      "ETH/USD",
      "EUR/USD"
    ])
    expect(ready.collector).toBe(COLLECTOR_ADDRESS)
    expect(ready.collectorPrivateKey).toBe(COLLECTOR_PRIVATE_KEY)
    expect(ready.deployerPrivateKey).toBe(DEPLOYER_PRIVATE_KEY)

    const url = ready.rpcUrl
    expect(await rpc(url, "eth_chainId")).toBe("0x7a69")
    await rpc(url, "evm_setAutomine", [false])
    const hash = await rpc<Hash>(url, "eth_sendRawTransaction", [await signTransfer(0)])
    expect(await receipt(url, hash)).toBeNull()
    await rpc(url, "evm_mine")
    expect((await receipt(url, hash))?.status).toBe("0x1")
    await rpc(url, "evm_setAutomine", [true])
    const minted = await rpc<{ balance: string }>(url, FAUCET_METHOD, [SINK, "7"])
    expect(minted.balance).toBe("7")

    child.kill("SIGTERM")
    expect(await exited).toBe(0)
    expect(stdout).toBe(`${line}\n`)
  }, 90_000)
})
