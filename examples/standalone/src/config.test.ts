import { describe, expect, it } from "vitest"
import { isLoopbackHost, sandboxRefusal } from "./config.js"

describe("where the sandbox chain may run", () => {
  it("knows loopback addresses from the others", () => {
    for (const host of [
      "127.0.0.1",
      "127.1.2.3",
      "::1",
      "[::1]",
      "localhost",
      "LOCALHOST",
      "::ffff:127.0.0.1"
    ]) {
      expect(isLoopbackHost(host), host).toBe(true)
    }
    for (const host of [
      "0.0.0.0",
      "::",
      "10.0.0.5",
      "192.168.1.10",
      "pay.example",
      "128.0.0.1",
      "127.0.0.1.nip.io",
      ""
    ]) {
      expect(isLoopbackHost(host), host).toBe(false)
    }
  })

  it("runs on loopback, and elsewhere only with PAY_SANDBOX=1, saying which settings to change", () => {
    expect(sandboxRefusal({ host: "127.0.0.1" })).toBeUndefined()
    expect(sandboxRefusal({ host: "::1", sandboxOnAnyAddress: false })).toBeUndefined()
    expect(sandboxRefusal({ host: "0.0.0.0", sandboxOnAnyAddress: true })).toBeUndefined()
    const refused = sandboxRefusal({ host: "0.0.0.0" })
    expect(refused).toContain("HOST 0.0.0.0 is not a loopback address")
    expect(refused).toContain("PAY_CONFIG")
    expect(refused).toContain("PAY_SANDBOX=1")
    expect(sandboxRefusal({ host: "10.0.0.5", sandboxOnAnyAddress: false })).toBeDefined()
  })
})
