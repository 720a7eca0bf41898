import { getContractAddress } from "viem"
import { privateKeyToAddress } from "viem/accounts"
import { describe, expect, it } from "vitest"
import {
  ACCOUNT_DEPLOYER_ADDRESS,
  ACCOUNT_DEPLOYER_PRIVATE_KEY,
  COLLECTOR_ADDRESS,
  COLLECTOR_PRIVATE_KEY,
  DEPLOYER_ADDRESS,
  DEPLOYER_PRIVATE_KEY,
  PRICE_FEED_ADDRESSES,
  SANDBOX_PERMIT2_DEPLOYED_ADDRESS,
  SMART_ACCOUNT_ADDRESSES,
  TEST_DAI_ADDRESS,
  TEST_USDC_ADDRESS,
  TEST_USDT_ADDRESS
} from "./Keys.js"

describe("the sandbox chain's keys", () => {
  it.each([
    ["collector", COLLECTOR_PRIVATE_KEY, COLLECTOR_ADDRESS],
    ["deployer", DEPLOYER_PRIVATE_KEY, DEPLOYER_ADDRESS],
    ["account deployer", ACCOUNT_DEPLOYER_PRIVATE_KEY, ACCOUNT_DEPLOYER_ADDRESS]
  ])("the %s's written-out address is its key's, checksummed", (_, key, address) => {
    expect(address).toBe(privateKeyToAddress(key))
  })

  it("each contract's written-out address is where its deployer's nonce puts it", () => {
    const deployed = (nonce: bigint) => getContractAddress({ from: DEPLOYER_ADDRESS, nonce })
    const factory = deployed(5n)
    expect({ TEST_USDC_ADDRESS, ...SMART_ACCOUNT_ADDRESSES }).toEqual({
      TEST_USDC_ADDRESS: deployed(0n),
      safeSingleton: deployed(1n),
      safeProxyFactory: deployed(2n),
      safeFallbackHandler: deployed(3n),
      simple7702Account: deployed(4n),
      thirdwebAccountFactory: factory,
      // The implementation the factory's constructor creates: the factory's nonce 1.
      thirdwebAccount: getContractAddress({ from: factory, nonce: 1n })
    })
    expect({
      TEST_USDT_ADDRESS,
      TEST_DAI_ADDRESS,
      SANDBOX_PERMIT2_DEPLOYED_ADDRESS,
      ...PRICE_FEED_ADDRESSES
    }).toEqual({
      TEST_USDT_ADDRESS: deployed(6n),
      TEST_DAI_ADDRESS: deployed(7n),
      SANDBOX_PERMIT2_DEPLOYED_ADDRESS: deployed(8n),
      "ETH/USD": deployed(9n),
      "EUR/USD": deployed(10n)
    })
  })
})
