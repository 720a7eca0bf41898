import { describe, expect, it } from "vitest"
import { readSmartAccountSource, SMART_ACCOUNT_SOURCES } from "./SmartAccountSources.js"
import * as committed from "./SmartAccounts.artifact.js"

describe("the smart-account artifacts", () => {
  it.each(SMART_ACCOUNT_SOURCES)(
    "$name is the installed package's published artifact (else: npm run accounts -w @pay/sandbox-chain)",
    (source) => {
      const installed = readSmartAccountSource(source)
      const artifact = committed[source.name as keyof typeof committed]
      expect(artifact.source).toBe(installed.source)
      expect(artifact.sha256).toBe(installed.sha256)
      expect(artifact.bytecode).toBe(installed.bytecode)
      expect(JSON.parse(JSON.stringify(artifact.abi))).toEqual(installed.abi)
    }
  )
})
