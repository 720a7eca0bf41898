import { privateKeyToAddress } from "viem/accounts"
import { describe, expect, it } from "vitest"
import {
  ACCOUNT_DEPLOYER_ADDRESS,
  ACCOUNT_DEPLOYER_PRIVATE_KEY,
  COLLECTOR_ADDRESS,
  COLLECTOR_PRIVATE_KEY,
  DEPLOYER_ADDRESS,
  DEPLOYER_PRIVATE_KEY
} from "./Keys.js"

describe("the sandbox chain's keys", () => {
  it.each([
    ["collector", COLLECTOR_PRIVATE_KEY, COLLECTOR_ADDRESS],
    ["deployer", DEPLOYER_PRIVATE_KEY, DEPLOYER_ADDRESS],
    ["account deployer", ACCOUNT_DEPLOYER_PRIVATE_KEY, ACCOUNT_DEPLOYER_ADDRESS]
  ])("the %s's written-out address is its key's, checksummed", (_, key, address) => {
    expect(address).toBe(privateKeyToAddress(key))
  })
})
