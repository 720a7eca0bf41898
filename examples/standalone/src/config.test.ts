import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { isLoopbackHost, parsePreviousSecrets, sandboxRefusal } from "./config.js"

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

describe("PAY_SECRET_PREVIOUS", () => {
  const a = btoa("a".repeat(32))
  const b = btoa("b".repeat(48))

  it("is comma-separated secrets, spaces around them allowed; empty is none", () => {
    expect(parsePreviousSecrets(a)).toEqual(Either.right([a]))
    expect(parsePreviousSecrets(` ${a} , ${b}\n`)).toEqual(Either.right([a, b]))
    expect(parsePreviousSecrets("")).toEqual(Either.right([]))
    expect(parsePreviousSecrets("  ")).toEqual(Either.right([]))
  })

  it("refuses an empty entry or one that is not a secret, naming which", () => {
    expect(parsePreviousSecrets(`${a},`)).toEqual(
      Either.left("PAY_SECRET_PREVIOUS's secret 2 of 2 is empty: give secrets separated by commas")
    )
    expect(parsePreviousSecrets(`${a},${btoa("short")}`)).toEqual(
      Either.left(
        "PAY_SECRET_PREVIOUS's secret 2 of 2 must be at least 32 random bytes (it holds 5)"
      )
    )
    expect(parsePreviousSecrets(`${a} ${b}`)).toEqual(
      Either.left(
        "PAY_SECRET_PREVIOUS's secret 1 of 1 must be standard base64, e.g. the output of `openssl rand -base64 32`"
      )
    )
  })
})
