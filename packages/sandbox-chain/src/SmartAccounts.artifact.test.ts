import { describe, expect, it } from "vitest"
import { compileSolidity, inputHashOf } from "./Compile.js"
import {
  readSmartAccountSource,
  SMART_ACCOUNT_SOURCES,
  THIRDWEB_ACCOUNT_FACTORY_SOURCE,
  THIRDWEB_ACCOUNT_FACTORY_TARGET
} from "./SmartAccountSources.js"
import {
  CompatibilityFallbackHandler,
  Safe,
  SafeProxyFactory,
  Simple7702Account,
  ThirdwebAccountFactory
} from "./SmartAccounts.artifact.js"

const published: Record<
  string,
  { source: string; sha256: string; bytecode: string; abi: unknown }
> = { Safe, SafeProxyFactory, CompatibilityFallbackHandler, Simple7702Account }

describe("the smart-account artifacts", () => {
  it.each(SMART_ACCOUNT_SOURCES)(
    "$name is the installed package's published artifact (else: npm run accounts -w @pay/sandbox-chain)",
    (source) => {
      const installed = readSmartAccountSource(source)
      const artifact = published[source.name]
      if (artifact === undefined) throw new Error(`no committed artifact named ${source.name}`)
      expect(artifact.source).toBe(installed.source)
      expect(artifact.sha256).toBe(installed.sha256)
      expect(artifact.bytecode).toBe(installed.bytecode)
      expect(JSON.parse(JSON.stringify(artifact.abi))).toEqual(installed.abi)
    }
  )

  // Compiling takes 20 s to a minute: only when what decides the result (solc, the settings,
  // each source the last compile read) hashes differently, or PAY_COMPILE_SOLIDITY=1 asks.
  it("ThirdwebAccountFactory is what the installed package's sources compile to (else: npm run accounts -w @pay/sandbox-chain)", () => {
    expect(ThirdwebAccountFactory.source).toBe(THIRDWEB_ACCOUNT_FACTORY_SOURCE)
    expect(ThirdwebAccountFactory.sources[0]).toBe(THIRDWEB_ACCOUNT_FACTORY_TARGET.sourceName)
    expect(ThirdwebAccountFactory.settings).toEqual(THIRDWEB_ACCOUNT_FACTORY_TARGET.settings)
    const inputs = inputHashOf(THIRDWEB_ACCOUNT_FACTORY_TARGET, ThirdwebAccountFactory.sources)
    if (inputs === ThirdwebAccountFactory.inputHash && process.env.PAY_COMPILE_SOLIDITY !== "1") {
      return
    }
    const compiled = compileSolidity(THIRDWEB_ACCOUNT_FACTORY_TARGET)
    expect(compiled.sources).toEqual(ThirdwebAccountFactory.sources)
    expect(compiled.inputHash).toBe(ThirdwebAccountFactory.inputHash)
    expect(compiled.solcVersion).toBe(ThirdwebAccountFactory.solcVersion)
    expect(compiled.bytecode).toBe(ThirdwebAccountFactory.bytecode)
    expect(JSON.parse(JSON.stringify(compiled.abi))).toEqual(
      JSON.parse(JSON.stringify(ThirdwebAccountFactory.abi))
    )
  }, 180_000)
})
