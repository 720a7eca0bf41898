import { createServer } from "node:net"
import { describe, expect, it } from "vitest"
import { chooseEngine, engineOfLink, payWithWallet, request } from "./Wallet.js"

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
