/**
 * What every sandbox chain holds before its first mint: the contracts the
 * deployer creates at its nonces 0 to 10 (addresses in Keys.ts), and the
 * sandbox's Permit2 copied to Permit2's canonical address. Sent at once, mined
 * as they arrive (automine), checked together.
 */
import {
  type Address,
  concat,
  encodeAbiParameters,
  getAddress,
  type Hash,
  type Hex,
  hexToBigInt,
  type PrivateKeyAccount
} from "viem"
import { CHAIN_ID } from "./Edr.js"
import {
  DEPLOYER_ADDRESS,
  ENTRY_POINT_V06_ADDRESS,
  PERMIT2_ADDRESS,
  PRICE_FEED_ADDRESSES,
  SANDBOX_PERMIT2_DEPLOYED_ADDRESS,
  SMART_ACCOUNT_ADDRESSES,
  TEST_DAI_ADDRESS,
  TEST_USDC_ADDRESS,
  TEST_USDT_ADDRESS
} from "./Keys.js"
import { SandboxPermit2 } from "./SandboxPermit2.artifact.js"
import { SandboxPriceFeed } from "./SandboxPriceFeed.artifact.js"
import {
  CompatibilityFallbackHandler,
  SafeProxyFactory,
  Safe as SafeSingleton,
  Simple7702Account,
  ThirdwebAccountFactory
} from "./SmartAccounts.artifact.js"
import { TestDAI } from "./TestDAI.artifact.js"
import { TestUSDC } from "./TestUSDC.artifact.js"
import { TestUSDT } from "./TestUSDT.artifact.js"

export type PriceFeedPair = keyof typeof PRICE_FEED_ADDRESSES

/** A feed's constructor: (uint8 decimals, string description, int256 initialAnswer). */
const feed = (description: string, initialAnswer: bigint) =>
  encodeAbiParameters(
    [{ type: "uint8" }, { type: "string" }, { type: "int256" }],
    [PRICE_FEED_DECIMALS, description, initialAnswer]
  )

/** Both feeds answer with 8 decimals, as Chainlink's USD feeds do. */
export const PRICE_FEED_DECIMALS = 8

/** What the feeds answer at start: ETH at 3,000.00 USD, EUR at 1.08 USD. */
export const INITIAL_PRICES = {
  "ETH/USD": 3_000n * 10n ** 8n,
  "EUR/USD": 108_000_000n
} as const satisfies Record<PriceFeedPair, bigint>

interface Deployment {
  readonly name: string
  readonly bytecode: string
  readonly constructorArgs?: Hex
  /** Where the deployer's nonce puts it (Keys.ts). */
  readonly at: Address
}

// In nonce order: a contract's place in this list is its address.
const DEPLOYMENTS: ReadonlyArray<Deployment> = [
  { name: "TestUSDC", bytecode: TestUSDC.bytecode, at: TEST_USDC_ADDRESS },
  { name: "Safe", bytecode: SafeSingleton.bytecode, at: SMART_ACCOUNT_ADDRESSES.safeSingleton },
  {
    name: "SafeProxyFactory",
    bytecode: SafeProxyFactory.bytecode,
    at: SMART_ACCOUNT_ADDRESSES.safeProxyFactory
  },
  {
    name: "CompatibilityFallbackHandler",
    bytecode: CompatibilityFallbackHandler.bytecode,
    at: SMART_ACCOUNT_ADDRESSES.safeFallbackHandler
  },
  {
    name: "Simple7702Account",
    bytecode: Simple7702Account.bytecode,
    at: SMART_ACCOUNT_ADDRESSES.simple7702Account
  },
  {
    name: "ThirdwebAccountFactory",
    bytecode: ThirdwebAccountFactory.bytecode,
    at: SMART_ACCOUNT_ADDRESSES.thirdwebAccountFactory,
    // constructor(address _defaultAdmin, IEntryPoint _entrypoint)
    constructorArgs: encodeAbiParameters(
      [{ type: "address" }, { type: "address" }],
      [DEPLOYER_ADDRESS, ENTRY_POINT_V06_ADDRESS]
    )
  },
  { name: "TestUSDT", bytecode: TestUSDT.bytecode, at: TEST_USDT_ADDRESS },
  { name: "TestDAI", bytecode: TestDAI.bytecode, at: TEST_DAI_ADDRESS },
  {
    name: "SandboxPermit2",
    bytecode: SandboxPermit2.bytecode,
    at: SANDBOX_PERMIT2_DEPLOYED_ADDRESS
  },
  {
    name: "SandboxPriceFeed ETH / USD",
    bytecode: SandboxPriceFeed.bytecode,
    at: PRICE_FEED_ADDRESSES["ETH/USD"],
    constructorArgs: feed("ETH / USD", INITIAL_PRICES["ETH/USD"])
  },
  {
    name: "SandboxPriceFeed EUR / USD",
    bytecode: SandboxPriceFeed.bytecode,
    at: PRICE_FEED_ADDRESSES["EUR/USD"],
    constructorArgs: feed("EUR / USD", INITIAL_PRICES["EUR/USD"])
  }
]

/** What deploying needs: the deployer's key, and JSON-RPC to a chain that automines. */
export interface DeployClients {
  readonly deployer: PrivateKeyAccount
  readonly request: (args: {
    readonly method: string
    readonly params?: unknown
  }) => Promise<unknown>
}

// Enough for the largest (the Safe singleton), under EIP-7825's per-transaction cap: no
// estimate is asked for, so a deploy costs one call.
const DEPLOY_GAS = 15_000_000n

/**
 * Deploys every contract from the deployer, whose next nonce must be 0, and
 * puts Permit2 at its canonical address; throws when anything lands elsewhere.
 */
export const deploySandboxContracts = async (clients: DeployClients): Promise<void> => {
  const { request } = clients
  // Signed here with the nonces, gas and fee known in advance, then sent in nonce order (automine
  // takes no gap), each mined as it arrives: a start pays eleven sends, not five calls a deploy.
  const genesis = (await request({
    method: "eth_getBlockByNumber",
    params: ["latest", false]
  })) as {
    readonly baseFeePerGas: Hex
  }
  // Blocks far from full lower the base fee: twice the genesis's is always enough.
  const maxFeePerGas = 2n * hexToBigInt(genesis.baseFeePerGas)
  const signed = await Promise.all(
    DEPLOYMENTS.map((d, nonce) =>
      clients.deployer.signTransaction({
        chainId: CHAIN_ID,
        type: "eip1559",
        nonce,
        gas: DEPLOY_GAS,
        maxFeePerGas,
        maxPriorityFeePerGas: 0n,
        data: concat([d.bytecode as Hex, d.constructorArgs ?? "0x"])
      })
    )
  )
  const hashes: Array<Hash> = []
  for (const raw of signed) {
    hashes.push((await request({ method: "eth_sendRawTransaction", params: [raw] })) as Hash)
  }
  const receipts = (await Promise.all(
    hashes.map((hash) => request({ method: "eth_getTransactionReceipt", params: [hash] }))
  )) as ReadonlyArray<{ readonly status: Hex; readonly contractAddress: Address | null } | null>
  for (const [i, receipt] of receipts.entries()) {
    const d = DEPLOYMENTS[i]!
    if (receipt?.status !== "0x1" || receipt.contractAddress == null) {
      throw new Error(`deploying ${d.name} failed (${receipt === null ? "not mined" : "reverted"})`)
    }
    if (getAddress(receipt.contractAddress) !== d.at) {
      throw new Error(`${d.name} landed at ${receipt.contractAddress}, not ${d.at}`)
    }
  }
  // Wallets and Uniswap's SDK sign for Permit2's address, not ours: its code goes there. The
  // code has no immutable, so it runs the same at either address (the domain is computed).
  const code = (await request({
    method: "eth_getCode",
    params: [SANDBOX_PERMIT2_DEPLOYED_ADDRESS, "latest"]
  })) as Hex
  await request({ method: "hardhat_setCode", params: [PERMIT2_ADDRESS, code] })
  const copied = await request({
    method: "eth_getCode",
    params: [PERMIT2_ADDRESS, "latest"]
  })
  if (copied !== code || code.length <= 2) {
    throw new Error(`Permit2's code was not copied to ${PERMIT2_ADDRESS}`)
  }
}
