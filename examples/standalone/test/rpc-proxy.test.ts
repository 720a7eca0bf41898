/**
 * The fault-injecting JSON-RPC proxy (rpc-proxy.ts) in front of the chain
 * server: down/up on the same port, holding a send and forwarding it, holding
 * it and dropping it, forwarding it but losing the answer, batches.
 */
import {
  type ChainServer,
  COLLECTOR_PRIVATE_KEY,
  FAUCET_METHOD,
  serveChain
} from "@pay/sandbox-chain"
import { type Address, encodeFunctionData, erc20Abi, type Hash, type Hex, parseGwei } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import {
  decodeRawTransaction,
  type RpcProxy,
  SELECTORS,
  sendsCallTo,
  startRpcProxy
} from "./rpc-proxy.js"

const collector = privateKeyToAccount(COLLECTOR_PRIVATE_KEY)
const SINK: Address = "0x000000000000000000000000000000000000dEaD"

interface RpcAnswer {
  readonly id: unknown
  readonly result?: unknown
  readonly error?: { readonly code: number; readonly message: string }
}

let nextId = 1
const post = async (url: string, body: unknown): Promise<unknown> => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000)
  })
  return response.json()
}

const rpc = async <A = unknown>(
  url: string,
  method: string,
  params: ReadonlyArray<unknown> = []
): Promise<A> => {
  const answer = (await post(url, { jsonrpc: "2.0", id: nextId++, method, params })) as RpcAnswer
  if (answer.error !== undefined) throw new Error(`${method}: ${answer.error.message}`)
  return answer.result as A
}

/** The network error of a fetch that got no answer. */
const networkError = (run: Promise<unknown>) =>
  run.then(
    () => {
      throw new Error("the request was answered")
    },
    (e: Error & { cause?: { code?: string } }) => ({ message: e.message, code: e.cause?.code })
  )

let chain: ChainServer
let token: Address

beforeAll(async () => {
  chain = await serveChain()
  token = chain.sandbox.token.address
  await rpc(chain.url, FAUCET_METHOD, [collector.address, "1000000000"])
})
afterAll(() => chain?.close())

const nonceOf = async () =>
  Number(await rpc<Hex>(chain.url, "eth_getTransactionCount", [collector.address, "latest"]))

const fees = { maxFeePerGas: parseGwei("10"), maxPriorityFeePerGas: parseGwei("1") }

/** The collector's signed USDC transfer (selector 0xa9059cbb). */
const signTokenTransfer = async (nonce: number) =>
  collector.signTransaction({
    chainId: 31337,
    type: "eip1559",
    to: token,
    data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [SINK, 1n] }),
    nonce,
    gas: 100_000n,
    ...fees
  })

/** The collector's signed ether transfer (no call data). */
const signEtherTransfer = async (nonce: number) =>
  collector.signTransaction({
    chainId: 31337,
    type: "eip1559",
    to: SINK,
    value: 1n,
    nonce,
    gas: 21_000n,
    ...fees
  })

const onChain = (hash: Hash) =>
  rpc<{ status: Hex } | null>(chain.url, "eth_getTransactionReceipt", [hash])

describe("startRpcProxy", () => {
  let proxy: RpcProxy
  beforeEach(async () => {
    proxy = await startRpcProxy(chain.url)
  })
  afterEach(() => proxy.close())

  it("forwards objects and batches, and counts requests by method", async () => {
    expect(proxy.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(await rpc(proxy.url, "eth_chainId")).toBe("0x7a69")
    const batch = (await post(proxy.url, [
      { jsonrpc: "2.0", id: 1, method: "eth_chainId" },
      { jsonrpc: "2.0", id: 2, method: "eth_blockNumber" }
    ])) as Array<RpcAnswer>
    expect(batch.map((a) => a.id)).toEqual([1, 2])
    expect(batch[0]?.result).toBe("0x7a69")
    expect(proxy.count("eth_chainId")).toBe(2)
    expect(proxy.count("eth_blockNumber")).toBe(1)
    expect(proxy.count("eth_getBalance")).toBe(0)
    expect(proxy.count()).toBe(3)
    expect(proxy.seen.map((c) => c.method)).toEqual([
      "eth_chainId",
      "eth_chainId",
      "eth_blockNumber"
    ])
  })

  it("down: connections are refused; up: the same URL answers again", async () => {
    expect(await rpc(proxy.url, "eth_chainId")).toBe("0x7a69")
    await proxy.down()
    expect(proxy.isUp()).toBe(false)
    const refused = await networkError(rpc(proxy.url, "eth_chainId"))
    expect(refused.code).toBe("ECONNREFUSED")
    await proxy.down() // idempotent
    await proxy.up()
    expect(proxy.isUp()).toBe(true)
    expect(await rpc(proxy.url, "eth_chainId")).toBe("0x7a69")
    // Down while a request is held: its connection is cut.
    const holder = proxy.hold((r) => r.method === "eth_blockNumber")
    const cut = networkError(rpc(proxy.url, "eth_blockNumber"))
    await holder.waitForHeld()
    await proxy.down()
    expect((await cut).message).toBe("fetch failed")
    await proxy.up()
    holder.stop()
    expect(await rpc(proxy.url, "eth_chainId")).toBe("0x7a69")
  })

  it("decodes a raw transaction for predicates", async () => {
    const nonce = await nonceOf()
    const raw = await signTokenTransfer(nonce)
    const decoded = decodeRawTransaction(raw)
    expect(decoded.to?.toLowerCase()).toBe(token.toLowerCase())
    expect(decoded.nonce).toBe(nonce)
    expect(decoded.selector).toBe("0xa9059cbb")
    expect(SELECTORS.transfer).toBe("0xa9059cbb")
    expect(decoded.hash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(decodeRawTransaction(await signEtherTransfer(nonce)).selector).toBeNull()
    const isTransfer = sendsCallTo(SELECTORS.transfer, token)
    expect(isTransfer({ method: "eth_sendRawTransaction", params: [raw] })).toBe(true)
    expect(isTransfer({ method: "eth_call", params: [raw] })).toBe(false)
    expect(
      sendsCallTo(SELECTORS.receiveWithAuthorization)({
        method: "eth_sendRawTransaction",
        params: [raw]
      })
    ).toBe(false)
  })

  it("hold + forward: the send waits, reaches nothing, then is mined; other requests pass", async () => {
    const holder = proxy.hold(sendsCallTo(SELECTORS.transfer))
    const nonce = await nonceOf()
    const raw = await signTokenTransfer(nonce)
    const { hash } = decodeRawTransaction(raw)
    const sending = rpc<Hash>(proxy.url, "eth_sendRawTransaction", [raw])

    const [held] = await holder.waitForHeld(1)
    expect(held?.method).toBe("eth_sendRawTransaction")
    expect(held?.params).toEqual([raw])
    expect(held?.batch).toBe(false)
    // Held: the node has not seen it.
    expect(await rpc(chain.url, "eth_getTransactionByHash", [hash])).toBeNull()
    // Not matched: passes while the send is held.
    expect(await rpc(proxy.url, "eth_chainId")).toBe("0x7a69")

    expect(await holder.release("forward")).toBe(1)
    expect(await sending).toBe(hash)
    expect((await onChain(hash))?.status).toBe("0x1")
    expect(holder.held).toEqual([])

    // An ether transfer is no ERC-20 transfer: not held.
    const ether = await signEtherTransfer(nonce + 1)
    expect(await rpc(proxy.url, "eth_sendRawTransaction", [ether])).toBe(
      decodeRawTransaction(ether).hash
    )
    expect(holder.held).toEqual([])
    expect(proxy.count("eth_sendRawTransaction")).toBe(2)
  })

  it("hold + drop: the client sees a network error and the node never sees the send", async () => {
    const holder = proxy.hold(sendsCallTo(SELECTORS.transfer))
    const nonce = await nonceOf()
    const raw = await signTokenTransfer(nonce)
    const { hash } = decodeRawTransaction(raw)
    const sending = networkError(rpc(proxy.url, "eth_sendRawTransaction", [raw]))
    await holder.waitForHeld()
    expect(await holder.release("drop")).toBe(1)
    expect((await sending).message).toBe("fetch failed")
    expect(await rpc(chain.url, "eth_getTransactionByHash", [hash])).toBeNull()
    expect(await nonceOf()).toBe(nonce)

    // Stopped: the next one goes through.
    holder.stop()
    expect(await rpc(proxy.url, "eth_sendRawTransaction", [raw])).toBe(hash)
    expect((await onChain(hash))?.status).toBe("0x1")
  })

  it("hold + forward-then-drop: the send is mined, the client sees a network error", async () => {
    const holder = proxy.hold(sendsCallTo(SELECTORS.transfer))
    const raw = await signTokenTransfer(await nonceOf())
    const { hash } = decodeRawTransaction(raw)
    const sending = networkError(rpc(proxy.url, "eth_sendRawTransaction", [raw]))
    await holder.waitForHeld()
    await holder.release("forward-then-drop")
    expect((await sending).message).toBe("fetch failed")
    expect((await onChain(hash))?.status).toBe("0x1")
  })

  it("holds a batch whole when one of its requests matches", async () => {
    const holder = proxy.hold((r) => r.method === "eth_getBalance")
    const batch = post(proxy.url, [
      { jsonrpc: "2.0", id: 1, method: "eth_chainId" },
      { jsonrpc: "2.0", id: 2, method: "eth_getBalance", params: [SINK, "latest"] }
    ])
    const [held] = await holder.waitForHeld()
    expect(held?.batch).toBe(true)
    expect(held?.method).toBe("eth_getBalance")
    expect(held?.calls.map((c) => c.method)).toEqual(["eth_chainId", "eth_getBalance"])
    await holder.release("forward")
    const answers = (await batch) as Array<RpcAnswer>
    expect(answers.map((a) => a.id)).toEqual([1, 2])
    expect(answers[0]?.result).toBe("0x7a69")
  })

  it("waitForHeld gives up after its timeout; release takes the first ones in order", async () => {
    const holder = proxy.hold((r) => r.method === "eth_blockNumber")
    await expect(holder.waitForHeld(1, 100)).rejects.toThrow(
      "waitForHeld: 0 of 1 held after 100 ms"
    )
    const first = rpc(proxy.url, "eth_blockNumber")
    await holder.waitForHeld(1)
    const second = networkError(rpc(proxy.url, "eth_blockNumber"))
    await holder.waitForHeld(2)
    expect(await holder.release("forward", 1)).toBe(1)
    expect(await first).toMatch(/^0x/)
    expect(holder.held).toHaveLength(1)
    await holder.release("drop")
    expect((await second).message).toBe("fetch failed")
  })
})
