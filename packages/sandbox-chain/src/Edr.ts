/**
 * A raw in-process EVM: Hardhat's EDR (Rust, inside the npm package
 * `@nomicfoundation/edr-linux-x64-gnu`) used directly, without Hardhat itself,
 * so nothing reads a Hardhat config or sends telemetry. Chain id 31337,
 * automine (a transaction is mined when it is sent), no unlocked accounts:
 * every transaction arrives signed, as on a real chain.
 */
import {
  type AccountOverride,
  ContractDecoder,
  EdrContext,
  L1_CHAIN_TYPE,
  l1GenesisState,
  l1HardforkFromString,
  l1HardforkToString,
  l1ProviderFactory,
  type MineOrdering
} from "@nomicfoundation/edr"
import { type Address, hexToBytes } from "viem"

export const CHAIN_ID = 31337

/** A JSON-RPC 2.0 request as EDR takes it (one object, not a batch). */
export interface EdrRequest {
  readonly jsonrpc: "2.0"
  readonly id: number | string | null
  readonly method: string
  readonly params?: unknown
}

export interface EdrFailure {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

/** EDR's answer: a JSON-RPC 2.0 response object. */
export type EdrResponse =
  | { readonly jsonrpc: "2.0"; readonly id: unknown; readonly result: unknown }
  | { readonly jsonrpc: "2.0"; readonly id: unknown; readonly error: EdrFailure }

export interface EdrChain {
  readonly handle: (request: EdrRequest) => Promise<EdrResponse>
}

export interface EdrOptions {
  /** Accounts given ether at genesis. */
  readonly balances: ReadonlyArray<{ readonly address: Address; readonly wei: bigint }>
}

// EdrContext must be made once per process; every chain comes from it.
let context: Promise<EdrContext> | undefined

const edrContext = (): Promise<EdrContext> => {
  if (context === undefined) {
    const made = (async () => {
      const ctx = new EdrContext()
      await ctx.registerProviderFactory(L1_CHAIN_TYPE, l1ProviderFactory())
      return ctx
    })()
    made.catch(() => {
      if (context === made) context = undefined
    })
    context = made
  }
  return context
}

/**
 * Named, not EDR's latest: what the chain runs must not change with an EDR
 * upgrade. Osaka (after Prague) has EIP-7702's delegated accounts, which
 * buyers pay with (packages/core/src/chain/PayerSignature.ts).
 */
export const HARDFORK = "osaka"

const BLOCK_GAS_LIMIT = 60_000_000n
// EIP-7825's per-transaction cap, in force from Osaka on.
const TRANSACTION_GAS_CAP = 16_777_216n
const COINBASE = "0xc014ba5ec014ba5ec014ba5ec014ba5ec014ba5e"

/** A new, empty chain at genesis (block 0, timestamped now). */
export const createEdrChain = async (options: EdrOptions): Promise<EdrChain> => {
  const hardfork = l1HardforkFromString(HARDFORK)
  const funded: Array<AccountOverride> = options.balances.map((b) => ({
    address: hexToBytes(b.address),
    balance: b.wei
  }))
  const provider = await (await edrContext()).createProvider(
    L1_CHAIN_TYPE,
    {
      // Blocks mined in the same second share its timestamp. Stamped a second apart instead,
      // a burst of transactions would put the chain's clock ahead of the wall clock for good
      // (EDR keeps the offset), and authorizations valid for a few more seconds would expire.
      allowBlocksWithSameTimestamp: true,
      allowUnlimitedContractSize: false,
      // eth_call and eth_estimateGas answer a revert with an error, as nodes do; a
      // reverting transaction that was sent is mined with status 0, as on a real chain.
      bailOnCallFailure: true,
      bailOnTransactionFailure: false,
      chainId: BigInt(CHAIN_ID),
      coinbase: hexToBytes(COINBASE),
      defaultTransactionGasLimit: TRANSACTION_GAS_CAP,
      genesisState: [...l1GenesisState(hardfork), ...funded],
      hardfork: l1HardforkToString(hardfork),
      minGasPrice: 0n,
      mining: {
        autoMine: true,
        blockGasLimit: BLOCK_GAS_LIMIT,
        memPool: { order: "Priority" as MineOrdering }
      },
      network: { genesisBlockGasLimit: BLOCK_GAS_LIMIT },
      networkId: BigInt(CHAIN_ID),
      observability: {},
      ownedAccounts: [],
      precompileOverrides: []
    },
    { enable: false, decodeConsoleLogInputsCallback: () => [], printLineCallback: () => {} },
    { subscriptionCallback: () => {} },
    new ContractDecoder()
  )
  return {
    handle: async (request) => {
      // EDR wants `params` even for methods that take none.
      const body = request.params === undefined ? { ...request, params: [] } : request
      const response = await provider.handleRequest(JSON.stringify(body))
      const data: unknown = response.data
      return (typeof data === "string" ? JSON.parse(data) : data) as EdrResponse
    }
  }
}
