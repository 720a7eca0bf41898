import { createServer } from "node:net"
import type { Address, Hex } from "viem"
import { describe, expect, it } from "vitest"
import {
  type ActingBuyer,
  chooseEngine,
  engineOfLink,
  payWithWallet,
  request,
  resultsOf,
  type TransactionRequest,
  transactionOf,
  type WalletAction
} from "./Wallet.js"

/** A loopback port nothing listens on: one that was just free. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

describe("the engine a link belongs to", () => {
  it("is the link without its payment id: its scheme, host, port and path", () => {
    expect(engineOfLink("http://127.0.0.1:18181/pay_0VbwidLqwuKFpwkHdyef")).toBe(
      "http://127.0.0.1:18181"
    )
    expect(engineOfLink("https://shop.example/pay/pay_0VbwidLqwuKFpwkHdyef")).toBe(
      "https://shop.example/pay"
    )
    expect(engineOfLink("pay_0VbwidLqwuKFpwkHdyef")).toBeUndefined()
    expect(engineOfLink("ftp://shop.example/pay_0VbwidLqwuKFpwkHdyef")).toBeUndefined()
  })

  it("is chosen after --engine and ENGINE_URL, before the default, which only a bare id gets", () => {
    const link = "http://127.0.0.1:18181/pay_0VbwidLqwuKFpwkHdyef"
    expect(chooseEngine(link, {})).toEqual({ url: "http://127.0.0.1:18181", from: "the link" })
    expect(chooseEngine(link, { env: "" })).toEqual({
      url: "http://127.0.0.1:18181",
      from: "the link"
    })
    expect(chooseEngine(link, { env: "http://10.0.0.1:9000/" })).toEqual({
      url: "http://10.0.0.1:9000",
      from: "ENGINE_URL"
    })
    expect(chooseEngine(link, { flag: "http://a:1", env: "http://b:2" })).toEqual({
      url: "http://a:1",
      from: "--engine"
    })
    expect(chooseEngine("pay_0VbwidLqwuKFpwkHdyef", {})).toEqual({
      url: "http://127.0.0.1:8080",
      from: "the default"
    })
  })
})

describe("an engine that cannot be reached", () => {
  it("is named with its URL and the cause, not a bare `fetch failed`", async () => {
    const port = await closedPort()
    await expect(request(`http://127.0.0.1:${port}/sandbox`)).rejects.toThrow(
      `could not reach http://127.0.0.1:${port}/sandbox: connect ECONNREFUSED 127.0.0.1:${port}`
    )
    await expect(
      payWithWallet({
        engineUrl: `http://127.0.0.1:${port}`,
        payment: "pay_0VbwidLqwuKFpwkHdyef",
        apiKey: "pk_x"
      })
    ).rejects.toThrow(`could not reach http://127.0.0.1:${port}/sandbox: connect ECONNREFUSED`)
  })
})

describe("an eth_sendTransaction action's transaction", () => {
  const to = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
  const from = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"

  it("is read as the engine wrote it: value and chainId as hex quantities, data as given", () => {
    const reference = `0x${"ab".repeat(32)}` as const
    expect(
      transactionOf(
        JSON.stringify({ from, to, value: "0xde0b6b3a7640000", data: reference, chainId: "0x7a69" })
      )
    ).toEqual({ from, to, value: 10n ** 18n, data: reference, chainId: 31337 })
    // A Permit2 approval's: no value is none, no data is 0x; gas when given.
    expect(transactionOf(JSON.stringify({ to, value: "0x0", gas: "0x5208" }))).toEqual({
      to,
      value: 0n,
      data: "0x",
      gas: 21_000n
    })
  })

  it("is refused, saying what is wrong, when it is not one", () => {
    expect(() => transactionOf("not json")).toThrow("the action's transaction is not JSON")
    expect(() => transactionOf(JSON.stringify({ to: "0x12" }))).toThrow(
      'the transaction\'s to must be an address, not "0x12"'
    )
    expect(() => transactionOf(JSON.stringify({ to, value: 10 }))).toThrow(
      "the transaction's value must be a 0x hex quantity, not 10"
    )
    expect(() => transactionOf(JSON.stringify({ to, value: "1000" }))).toThrow(
      'the transaction\'s value must be a 0x hex quantity, not "1000"'
    )
    expect(() => transactionOf(JSON.stringify({ to, data: "0xzz" }))).toThrow(
      "the transaction's data must be 0x hex"
    )
  })
})

describe("the wallet's answers to an option's actions", () => {
  const buyerAddress: Address = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
  const collector: Address = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
  const send = (params: unknown): WalletAction => ({
    type: "walletRpc",
    data: {
      chain_id: "eip155:31337",
      method: "eth_sendTransaction",
      params: [JSON.stringify(params)]
    }
  })
  const sign = (typedData: string): WalletAction => ({
    type: "walletRpc",
    data: {
      chain_id: "eip155:31337",
      method: "eth_signTypedData_v4",
      params: [buyerAddress, typedData]
    }
  })
  /** A buyer that records what it is asked, answering made-up hashes and signatures. */
  const recording = () => {
    const calls: Array<string> = []
    const sent: Array<TransactionRequest> = []
    const buyer: ActingBuyer = {
      address: buyerAddress,
      sign: async (json) => {
        calls.push(`sign ${json}`)
        return `0x${"51".repeat(65)}` as Hex
      },
      send: async (tx) => {
        sent.push(tx)
        calls.push(`send ${sent.length}`)
        return `0x${String(sent.length).padStart(64, "0")}` as Hex
      }
    }
    return { buyer, calls, sent }
  }
  const approve = (amount: string) => ({
    from: buyerAddress,
    to: collector,
    data: `0x095ea7b3${"00".repeat(12)}000000000022d473030f116ddee9f6b43ac78ba3${amount.padStart(64, "0")}`,
    value: "0x0",
    chainId: "0x7a69"
  })

  it("sends a native option's one transaction as given, funded first, and answers its hash", async () => {
    const { buyer, calls, sent } = recording()
    const funded: Array<bigint> = []
    const lines: Array<string> = []
    const reference = `0x${"cd".repeat(32)}`
    const results = await resultsOf(
      [
        send({
          from: buyerAddress.toLowerCase(),
          to: collector,
          value: "0x3782dace9d900000",
          data: reference,
          chainId: "0x7a69"
        })
      ],
      buyer,
      {
        fund: async (tx) => {
          funded.push(tx.value)
          calls.push("fund")
        },
        log: (line) => lines.push(line)
      }
    )
    expect(calls).toEqual(["fund", "send 1"])
    expect(funded).toEqual([4n * 10n ** 18n])
    expect(sent).toEqual([
      {
        from: buyerAddress.toLowerCase(),
        to: collector,
        value: 4n * 10n ** 18n,
        data: reference,
        chainId: 31337
      }
    ])
    expect(results).toEqual([{ type: "walletRpc", data: [`0x${"1".padStart(64, "0")}`] }])
    expect(lines).toEqual([`transaction sent: 0x${"1".padStart(64, "0")}`])
  })

  it("sends every transaction in order, then signs, one result per action", async () => {
    const { buyer, calls } = recording()
    const lines: Array<string> = []
    const results = await resultsOf(
      [send(approve("0")), send(approve("ff")), sign('{"typed":"data"}')],
      buyer,
      { log: (line) => lines.push(line) }
    )
    expect(calls).toEqual(["send 1", "send 2", 'sign {"typed":"data"}'])
    expect(results.map((r) => r.data[0])).toEqual([
      `0x${"1".padStart(64, "0")}`,
      `0x${"2".padStart(64, "0")}`,
      `0x${"51".repeat(65)}`
    ])
    expect(lines.every((l) => l.startsWith("approval sent: 0x"))).toBe(true)
    // Only a signature: signed, nothing sent.
    const only = recording()
    expect(await resultsOf([sign("{}")], only.buyer)).toHaveLength(1)
    expect(only.calls).toEqual(["sign {}"])
  })

  it("refuses what it cannot answer, before sending anything", async () => {
    const { buyer, calls } = recording()
    const other = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"
    await expect(
      resultsOf([send({ from: other, to: collector, value: "0x1" })], buyer)
    ).rejects.toThrow(
      `action 0 is a transaction from ${other}, not from this wallet's ${buyerAddress}`
    )
    await expect(
      resultsOf([{ type: "walletRpc", data: { method: "personal_sign", params: ["0x00"] } }], buyer)
    ).rejects.toThrow("action 0 asks for personal_sign, which this wallet does not do")
    expect(calls).toEqual([])
    const safe = { ...buyer, send: undefined }
    await expect(
      resultsOf([send(approve("ff")), sign("{}")], safe, { kind: "safe" })
    ).rejects.toThrow("a safe account cannot send the option's approval here")
    await expect(
      resultsOf([send({ to: collector, value: "0x1", data: `0x${"cd".repeat(32)}` })], safe, {
        kind: "safe"
      })
    ).rejects.toThrow("a safe account cannot send the option's transaction here")
  })
})
