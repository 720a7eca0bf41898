/**
 * The sandbox chain's fixed development keys. They are public: never use them,
 * or anything derived from them, on a real network.
 */
import { getContractAddress, type Hex } from "viem"
import { privateKeyToAddress } from "viem/accounts"

/**
 * The collector: the engine's submitting key on the sandbox chain, the payee
 * (`to`) of every ReceiveWithAuthorization. It is Hardhat's and Anvil's first
 * default account (mnemonic "test test … junk"), so wallets and tools that
 * know those accounts know it; funded with ether at genesis.
 */
export const COLLECTOR_PRIVATE_KEY: Hex =
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
export const COLLECTOR_ADDRESS = privateKeyToAddress(COLLECTOR_PRIVATE_KEY)

/**
 * The deployer: keccak256("pay-engine sandbox-chain deployer"). It deploys the
 * test USDC as its first transaction when the chain starts, so the token's
 * address never changes, and it alone may mint (the faucet).
 */
export const DEPLOYER_PRIVATE_KEY: Hex =
  "0xaca457e23d146bcc73a113b5b85f8af05d16aa36d69cb1c7880ff19876f79799"
export const DEPLOYER_ADDRESS = privateKeyToAddress(DEPLOYER_PRIVATE_KEY)

/** Where the test USDC lives on every sandbox chain: the deployer's nonce-0 contract. */
export const TEST_USDC_ADDRESS = getContractAddress({ from: DEPLOYER_ADDRESS, nonce: 0n })

/** Ether given at genesis to the collector and the deployer (10,000 ETH each). */
export const GENESIS_BALANCE_WEI = 10n ** 22n
