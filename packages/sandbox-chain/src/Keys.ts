/**
 * The sandbox chain's fixed development keys. They are public: never use them,
 * or anything derived from them, on a real network.
 */
import type { Address, Hex } from "viem"

// Each key's address, and each contract's, is written out, not derived at load: deriving them
// takes the first secp256k1 multiplication's tables and keccak's, tens of milliseconds every
// process that imports this (the CLI among them) would pay. Keys.test.ts derives each again.

/**
 * The collector: the engine's submitting key on the sandbox chain, the payee
 * (`to`) of every ReceiveWithAuthorization. It is Hardhat's and Anvil's first
 * default account (mnemonic "test test … junk"), so wallets and tools that
 * know those accounts know it; funded with ether at genesis.
 */
export const COLLECTOR_PRIVATE_KEY: Hex =
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
export const COLLECTOR_ADDRESS: Address = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"

/**
 * The deployer: keccak256("pay-engine sandbox-chain deployer"). It deploys the
 * test USDC as its first transaction when the chain starts, then the other
 * contracts, so their addresses never change; it alone may mint (the faucet)
 * and move the price feeds.
 */
export const DEPLOYER_PRIVATE_KEY: Hex =
  "0xaca457e23d146bcc73a113b5b85f8af05d16aa36d69cb1c7880ff19876f79799"
export const DEPLOYER_ADDRESS: Address = "0x0dBe442DFED2f620C77C900811d816794b5A3eC3"

/** Where the test USDC lives on every sandbox chain: the deployer's nonce-0 contract. */
export const TEST_USDC_ADDRESS: Address = "0x1cd2272Cf2400da5cB86ccc008e3bE381C167116"

/**
 * Where the smart-account contracts live on every sandbox chain: the
 * deployer's nonce 1 to 5 contracts, deployed at start before any mint
 * (SmartAccountSources.ts); thirdweb's `Account` implementation is the one
 * its factory's constructor creates (the factory's nonce 1).
 */
export const SMART_ACCOUNT_ADDRESSES = {
  safeSingleton: "0x06C90Af8377c5C0Cb19B136A0aDB1a20600D060c",
  safeProxyFactory: "0x52AB69f2850c9Da0Bd79d615e7c0eF1db90CC78D",
  safeFallbackHandler: "0xeDE07dc6191611cFe0Ac287b1Bd4fA73EBe3b5E7",
  simple7702Account: "0x7CB90C47E2b7c0aC03cfab7388928D5715076E51",
  thirdwebAccountFactory: "0xc76fE24547C0a6091A91fafAe02E9bE9c3DeD6e6",
  thirdwebAccount: "0xc6DA509F677f9d04982f31b24a1aFAF1572c2bcD"
} as const satisfies Record<string, Address>

/**
 * The tokens paid through Permit2 rather than EIP-3009, the deployer's nonce 6
 * and 7 contracts: a test USDT (no return values, Tether's approve rule) and
 * an 18-decimal test DAI. Deployed at start after the smart-account contracts,
 * before any mint.
 */
export const TEST_USDT_ADDRESS: Address = "0xAeA7703447C872C13Cdd0E845905C7Cc1193A3FD"
export const TEST_DAI_ADDRESS: Address = "0x1FB43ad5007A3A9a6286f0b8eCB86E7F9841553f"

/**
 * Permit2's address on every chain Uniswap deployed it to, which wallets and
 * its SDK (`PERMIT2_ADDRESS`) sign for: the sandbox puts its own Permit2
 * (contracts/SandboxPermit2.sol) there by copying the runtime code of the
 * deployer's nonce-8 contract, `SANDBOX_PERMIT2_DEPLOYED_ADDRESS`.
 */
export const PERMIT2_ADDRESS: Address = "0x000000000022D473030F116dDEE9F6B43aC78BA3"
export const SANDBOX_PERMIT2_DEPLOYED_ADDRESS: Address =
  "0x76226295458CE12291C3733b6145eBC6138D19ba"

/** The price feeds (contracts/SandboxPriceFeed.sol, 8 decimals): the deployer's nonce 9 and 10 contracts. */
export const PRICE_FEED_ADDRESSES = {
  "ETH/USD": "0xad57004796bd80c9ab73b8117Db295C407Fd301f",
  "EUR/USD": "0x4C701Ea108073645059f5ce20C9EBA19F6017266"
} as const satisfies Record<string, Address>

/**
 * ERC-4337's EntryPoint v0.6, at its address on every public chain: what
 * thirdweb's factory and accounts are built with. The sandbox does not deploy
 * it: paying signs typed data and never sends a user operation.
 */
export const ENTRY_POINT_V06_ADDRESS = "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789" as const

/**
 * The account deployer: keccak256("pay-engine sandbox-chain account
 * deployer"). The engine's `deployerKey` on the sandbox: it sends the factory
 * call of a buyer's account not deployed yet (ERC-6492). Funded with ether at
 * genesis, it holds no token and owns nothing, so a buyer's factory calldata
 * sent from it can take nothing.
 */
export const ACCOUNT_DEPLOYER_PRIVATE_KEY: Hex =
  "0xa38fbc0f66cfa709ccb7e4ce47fb82a8743b94f29645fbf0388870ec1b894b4f"
export const ACCOUNT_DEPLOYER_ADDRESS: Address = "0xF28bF1b15DD32CA957B24F8A79Ba8BC6F57F7953"

/** Ether given at genesis to the collector, the deployer and the account deployer (10,000 ETH each). */
export const GENESIS_BALANCE_WEI = 10n ** 22n
