import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { findChromium, isLoopback } from "./browser-support.js"

describe("findChromium", () => {
  const dir = mkdtempSync(join(tmpdir(), "pay-find-chromium-"))
  const binary = join(dir, "chromium")
  writeFileSync(binary, "")
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it("takes CHROMIUM_PATH first, else the first candidate that exists", () => {
    expect(findChromium({ CHROMIUM_PATH: binary }, ["/nowhere/chromium"])).toBe(binary)
    expect(findChromium({}, [join(dir, "missing"), binary])).toBe(binary)
  })

  it("without one, fails saying how to install it (no skipping)", () => {
    expect(() => findChromium({}, [join(dir, "missing")])).toThrow(
      /none was found.*sudo apt-get install chromium.*CHROMIUM_PATH/
    )
    expect(() => findChromium({ CHROMIUM_PATH: join(dir, "nope") }, [binary])).toThrow(
      /CHROMIUM_PATH is .*nope, which does not exist.*sudo apt-get install chromium/
    )
  })
})

describe("isLoopback", () => {
  it("lets through loopback hosts and URLs without a host, nothing else", () => {
    for (const url of [
      "http://127.0.0.1:8080/docs",
      "http://localhost/x",
      "http://[::1]:3000/",
      "data:text/plain,hi",
      "blob:http://127.0.0.1/0d5c"
    ]) {
      expect(isLoopback(url), url).toBe(true)
    }
    for (const url of [
      "https://fonts.scalar.com/inter-latin.woff2",
      "https://cdn.jsdelivr.net/npm/@scalar/api-reference",
      "http://10.0.0.1/",
      "http://127.0.0.1.example.com/"
    ]) {
      expect(isLoopback(url), url).toBe(false)
    }
  })
})
