/**
 * The durability tests' world (issue 6): a real EVM in its own process (the
 * chain server, `npm run chain`) that lives while engine processes are killed
 * and restarted, a fault-injecting JSON-RPC proxy between the engines and the
 * chain, and what a test needs around them: a PAY_CONFIG naming the proxy, a
 * merchant with a settlement destination, a wallet app, funded buyers, the
 * wallet's calls, and the chain's own record of what moved.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { signTypedDataJson } from "@pay/sandbox"
import {
  type Address,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hex,
  http,
  type PublicClient,
  parseAbiItem
} from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { expect } from "vitest"
import { type Client, client, type Json, newKey, PARTNER_KEY } from "./e2e-support.js"
import {
  bundle,
  type Instance,
  nodeBinary,
  requireBundles,
  startInstance
} from "./instances-support.js"
import { type RpcProxy, startRpcProxy } from "./rpc-proxy.js"

const root = join(import.meta.dirname, "..", "..", "..")

/** The server, the CLI and the chain server bundles their npm scripts run: checked, built by the run. */
export const requireChainWorkBundles = (): void => requireBundles("main", "cli", "chain")

/**
 * POSTs JSON on a connection of its own (`agent: false`, so `Connection:
 * close`): the chain's test-only methods (mining, snapshots, the clock) are not
 * safe to send twice, and a kept-alive connection the server closes as it is
 * reused fails the call (`other side closed`) on a loaded machine.
 */
const postJson = (url: string, body: string): Promise<Json> =>
  new Promise((resolve, reject) => {
    const sent = httpRequest(
      url,
      { method: "POST", agent: false, headers: { "content-type": "application/json" } },
      (response) => {
        let text = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => {
          text += chunk
        })
        response.on("end", () => {
          try {
            resolve(JSON.parse(text))
          } catch (error) {
            reject(new Error(`${url} answered ${response.statusCode}: ${text}`, { cause: error }))
          }
        })
        response.on("error", reject)
      }
    )
    sent.on("error", reject)
    sent.end(body)
  })

export interface ChainProcess {
  readonly child: ChildProcess
  readonly rpcUrl: string
  readonly token: { readonly asset: string; readonly address: Address; readonly decimals: number }
  /** Every token of the chain: USDC (EIP-3009), USDT and DAI (Permit2). */
  readonly tokens: ReadonlyArray<{
    readonly asset: string
    readonly address: Address
    readonly symbol: string
    readonly decimals: number
    readonly authorization: "eip3009" | "permit2"
  }>
  /** The chain's price feeds (their addresses): ETH/USD and EUR/USD. */
  readonly priceFeeds: Readonly<Record<string, Address>>
  readonly collector: Address
  readonly collectorPrivateKey: Hex
  /** The key that sends undeployed accounts' factory calls, funded with ether only. */
  readonly accountDeployerPrivateKey?: Hex
  /** Where the smart-account contracts are on the chain. */
  readonly accounts?: Readonly<Record<string, Address>>
  /** A viem client straight to the chain (not through the proxy). */
  readonly client: PublicClient
  /** A JSON-RPC call straight to the chain. */
  readonly rpc: (method: string, params?: ReadonlyArray<unknown>) => Promise<Json>
}

/**
 * Starts the chain server as its own process (the bundle `requireChainWorkBundles` makes,
 * or `bundle`); resolves with its ready line.
 */
export const startChain = (
  spawned: Array<ChildProcess>,
  chainBundle: string = bundle("chain")
): Promise<ChainProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(nodeBinary, ["--enable-source-maps", chainBundle], {
      env: { ...process.env, HOST: "127.0.0.1", PORT: "0" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    spawned.push(child)
    let output = ""
    const timer = setTimeout(() => reject(new Error(`the chain did not start:\n${output}`)), 30_000)
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString()
      const line = output.split("\n").find((l) => l.startsWith("{"))
      if (line === undefined) return
      clearTimeout(timer)
      const ready = JSON.parse(line)
      const rpc = async (method: string, params: ReadonlyArray<unknown> = []) => {
        const body = await postJson(
          ready.rpcUrl,
          JSON.stringify({ jsonrpc: "2.0", id: 1, method, params })
        )
        if (body.error) throw new Error(`${method}: ${body.error.message}`)
        return body.result
      }
      resolve({
        child,
        rpcUrl: ready.rpcUrl,
        token: ready.token,
        tokens: ready.tokens,
        priceFeeds: ready.priceFeeds,
        collector: ready.collector,
        collectorPrivateKey: ready.collectorPrivateKey,
        accountDeployerPrivateKey: ready.accountDeployerPrivateKey,
        accounts: ready.accounts,
        client: createPublicClient({ transport: http(ready.rpcUrl), cacheTime: 0 }) as PublicClient,
        rpc
      })
    })
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`the chain exited (${code}):\n${output}`))
    })
  })

export interface EngineSetup {
  readonly dir: string
  readonly payConfig: string
  readonly env: NodeJS.ProcessEnv
}

export interface PayConfigOptions {
  readonly confirmations?: number
  readonly stuckAfterSeconds?: number
  readonly fees?: Json
  /** Laid over the `jobs` settings below. */
  readonly jobs?: Json
  /** Also takes the chain's ETH (a native option), priced at the chain's ETH/USD feed. */
  readonly native?: boolean
}

/** The chain's ETH, as a PAY_CONFIG token: paid by the buyer's own transfer. */
export const NATIVE_ETH = {
  asset: "eip155:31337/slip44:60",
  symbol: "ETH",
  name: "Ether",
  decimals: 18,
  priceCurrency: "ETH",
  authorization: "native"
} as const

const TOKEN_NAMES: Readonly<Record<string, string>> = {
  USDC: "USD Coin",
  USDT: "Tether USD",
  DAI: "Dai Stablecoin"
}

/**
 * A PAY_CONFIG network entry for the chain process, reached at `rpcUrl` (the
 * chain's own or a proxy's): its test USDC, USDT and DAI priced in USD (each
 * paid as the chain says), polled every 50 ms.
 */
export const chainProcessNetwork = (chain: ChainProcess, rpcUrl: string) => ({
  chainId: "eip155:31337",
  name: "Test chain",
  rpcUrl,
  etaSeconds: 1,
  pollIntervalMs: 50,
  collectorKey: chain.collectorPrivateKey,
  ...(chain.accountDeployerPrivateKey === undefined
    ? {}
    : { deployerKey: chain.accountDeployerPrivateKey }),
  tokens: chain.tokens.map((t) => ({
    asset: t.asset,
    symbol: t.symbol,
    name: TOKEN_NAMES[t.symbol] ?? t.symbol,
    decimals: t.decimals,
    priceCurrency: "USD",
    authorization: t.authorization
  }))
})

const withNative = <N extends { readonly tokens: ReadonlyArray<unknown> }>(
  network: N,
  native: boolean
): N => (native ? { ...network, tokens: [...network.tokens, NATIVE_ETH] } : network)

/**
 * A PAY_CONFIG whose one network is the chain behind `proxy` (or the chain's
 * own URL); short leases and polls.
 */
export const engineSetup = (
  chain: ChainProcess,
  proxy: Pick<RpcProxy, "url">,
  database: string | undefined,
  options: PayConfigOptions = {}
): EngineSetup => {
  const dir = mkdtempSync(join(tmpdir(), "pay-chainwork-"))
  const payConfig = join(dir, "pay-config.json")
  writeFileSync(
    payConfig,
    JSON.stringify({
      networks: [
        {
          ...withNative(chainProcessNetwork(chain, proxy.url), options.native === true),
          confirmations: options.confirmations ?? 1,
          stuckAfterSeconds: options.stuckAfterSeconds ?? 30
        }
      ],
      ...(options.native === true
        ? { prices: { "ETH/USD": { feed: `eip155:31337:${chain.priceFeeds["ETH/USD"]}` } } }
        : {}),
      quoteLockSeconds: 300,
      fees: options.fees ?? { default: { fixed: "0.10", percentage: "1.5" } },
      jobs: { pollMs: 50, leaseSeconds: 2, ...options.jobs }
    })
  )
  return {
    dir,
    payConfig,
    env: {
      PAY_DATABASE: database ?? join(dir, "pay.sqlite"),
      PAY_CONFIG: payConfig,
      PAY_BOOTSTRAP_API_KEY: PARTNER_KEY
    }
  }
}

export const removeSetup = (setup: EngineSetup) =>
  rmSync(setup.dir, { recursive: true, force: true })

/**
 * Runs the CLI bundle on the setup's database; its JSON answer. Not execFileSync: a CLI run of
 * several seconds on a loaded machine would stop this worker's event loop, an in-process engine's
 * with it, and a keep-alive connection the server closed meanwhile would be reused dead.
 */
export const cli = async (setup: EngineSetup, args: ReadonlyArray<string>): Promise<Json> => {
  const { stdout } = await promisify(execFile)(nodeBinary, [bundle("cli"), ...args, "--json"], {
    cwd: root,
    env: { ...process.env, ...setup.env },
    encoding: "utf8"
  })
  return JSON.parse(stdout)
}

/** What the helpers below need of an engine: its URL and a partner client (a process, or in-process). */
export type Served = Pick<Instance, "url" | "api">

export interface Shop {
  readonly merchantId: string
  /** The merchant's settlement destination on the chain. */
  readonly destination: Address
  readonly walletKey: string
}

/**
 * A merchant with a settlement for the chain's token, and a wallet app: made
 * by the CLI on the setup's database, or by `walletKey` (an in-process engine's).
 */
export const openShop = async (
  instance: Served,
  setup: EngineSetup | { readonly walletKey: () => Promise<string> },
  chain: ChainProcess
): Promise<Shop> => {
  const created = await instance.api.request("POST", "/v1/merchants", {
    idempotencyKey: newKey(),
    body: { merchantName: "Durable shop", merchantEmail: "shop@durable.example" }
  })
  expect(created.status, created.text).toBe(201)
  const merchantId = created.body.merchant.id
  const destination = privateKeyToAccount(generatePrivateKey()).address
  const settled = await instance.api.request(
    "POST",
    `/v1/merchants/${merchantId}/settlements/crypto`,
    {
      idempotencyKey: newKey(),
      body: {
        settlements: [{ asset: chain.token.asset, destination: `eip155:31337:${destination}` }]
      }
    }
  )
  expect(settled.status, settled.text).toBe(201)
  const walletKey =
    "walletKey" in setup
      ? await setup.walletKey()
      : (await cli(setup, ["apps", "create", "--name", "Durable wallet"])).apiKey
  return { merchantId, destination, walletKey }
}

export interface Buyer {
  readonly key: Hex
  readonly address: Address
  readonly account: string
  /**
   * How the buyer's wallet signs the typed data JSON it is handed; a key pair's
   * signature with `key` when absent (a smart account signs as itself).
   */
  readonly signJson?: (typedDataJson: string) => Promise<Hex>
}

/** A buyer with test USDC, minted straight on the chain (not through the proxy). */
export const fundedBuyer = async (chain: ChainProcess, minorUnits: bigint): Promise<Buyer> => {
  const key = generatePrivateKey()
  const address = privateKeyToAccount(key).address
  await chain.rpc("sandbox_faucet", [address, minorUnits.toString()])
  return { key, address, account: `eip155:31337:${address}` }
}

/**
 * A new key pair given 1 test ether, with a wallet that signs and sends its own transactions
 * over the chain's RPC (not through the proxy), as a buyer's wallet does.
 */
export const etherBuyer = async (chain: ChainProcess) => {
  const key = generatePrivateKey()
  const account = privateKeyToAccount(key)
  await chain.rpc("hardhat_setBalance", [account.address, "0xde0b6b3a7640000"])
  const wallet = createWalletClient({
    account,
    chain: defineChain({
      id: 31337,
      name: "sandbox",
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [chain.rpcUrl] } }
    }),
    transport: http(chain.rpcUrl)
  })
  return { key, address: account.address, account: `eip155:31337:${account.address}`, wallet }
}

/** A USD payment of `cents`; its id. */
export const createPayment = async (
  instance: Served,
  shop: Shop,
  cents: number
): Promise<string> => {
  const response = await instance.api.request("POST", "/v1/payments", {
    headers: { "merchant-id": shop.merchantId },
    body: { referenceId: `durable-${cents}`, amount: { unit: "iso4217/USD", value: String(cents) } }
  })
  expect(response.status, response.text).toBe(201)
  return response.body.paymentId
}

/** The wallet app's client on an instance, with the headers wallet SDKs send. */
export const walletApi = (instance: Served, shop: Shop): Client => {
  const base = client(() => instance.url)
  return {
    request: (method, path, options = {}) =>
      base.request(method, path, {
        ...options,
        key: shop.walletKey,
        headers: { "api-version": "2026-02-19.preview", ...options.headers }
      }),
    get: (path, options = {}) => base.request("GET", path, { ...options, key: shop.walletKey })
  }
}

/** Options, fetch, signature and confirm, as a wallet SDK does; the confirm's answer. */
export const confirmAsWallet = async (
  instance: Served,
  shop: Shop,
  paymentId: string,
  buyer: Buyer
): Promise<Json> => {
  const wallet = walletApi(instance, shop)
  const base = `/v1/gateway/payment/${paymentId}`
  const offered = await wallet.request("POST", `${base}/options`, {
    body: { accounts: [buyer.account] }
  })
  expect(offered.status, offered.text).toBe(200)
  const option = offered.body.options[0]
  const fetched = await wallet.request("POST", `${base}/fetch`, {
    body: { optionId: option.id, data: "" }
  })
  expect(fetched.status, fetched.text).toBe(200)
  const typed = fetched.body.actions[0].data.params[1]
  const signature = await (buyer.signJson?.(typed) ?? signTypedDataJson(buyer.key, typed))
  const confirmed = await wallet.request("POST", `${base}/confirm`, {
    body: { optionId: option.id, results: [{ type: "walletRpc", data: [signature] }] }
  })
  expect(confirmed.status, confirmed.text).toBe(200)
  return confirmed.body
}

/** The partner's view of a payment. */
export const paymentOf = async (instance: Served, paymentId: string): Promise<Json> => {
  const response = await instance.api.get(`/v1/payments/${paymentId}`)
  expect(response.status, response.text).toBe(200)
  return response.body
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Polls the partner view until `done` holds; after `timeoutMs` fails with the
 * last view read and the last error met on the way (a read refused while the
 * instance restarts is retried, never taken as an answer).
 */
export const waitForPayment = async (
  instance: () => Served,
  paymentId: string,
  done: (payment: Json) => boolean,
  timeoutMs = 30_000
): Promise<Json> => {
  const until = Date.now() + timeoutMs
  let last: Json
  let lastError: unknown
  while (Date.now() < until) {
    try {
      last = await paymentOf(instance(), paymentId)
      if (done(last)) return last
    } catch (error) {
      // The instance may be restarting: kept, and named if the wait runs out.
      lastError = error
    }
    await sleep(50)
  }
  const why = lastError === undefined ? "" : `; last error: ${String(lastError)}`
  throw new Error(`payment ${paymentId} did not get there: ${JSON.stringify(last)}${why}`)
}

export const isSettled = (p: Json) => p.settlement?.settled === true

/**
 * Mines a block at a time (automine may be off, or confirmations wanted) until
 * the payment gets there; `each` looks at every view read on the way.
 */
export const mineUntil = async (
  chain: ChainProcess,
  instance: () => Instance,
  paymentId: string,
  done: (payment: Json) => boolean,
  options: { readonly timeoutMs?: number; readonly each?: (payment: Json) => void } = {}
): Promise<Json> => {
  const until = Date.now() + (options.timeoutMs ?? 20_000)
  let payment: Json
  while (Date.now() < until) {
    payment = await waitForPayment(instance, paymentId, () => true)
    if (done(payment)) return payment
    options.each?.(payment)
    await chain.rpc("evm_mine")
    await sleep(100)
  }
  throw new Error(`payment ${paymentId} did not get there while mining: ${JSON.stringify(payment)}`)
}

const TRANSFER = parseAbiItem(
  "event Transfer(address indexed from, address indexed to, uint256 value)"
)

/**
 * Every token Transfer on chain from `from` to `to` (one per transfer that
 * moved funds), from block `fromBlock` on (the whole chain by default).
 */
export const transfersOnChain = async (
  chain: ChainProcess,
  from: Address,
  to: Address,
  fromBlock = 0n,
  token: Address = chain.token.address
): Promise<ReadonlyArray<bigint>> => {
  const logs = await chain.client.getLogs({
    address: token,
    event: TRANSFER,
    args: { from, to },
    fromBlock,
    toBlock: "latest"
  })
  return logs.map((log) => log.args.value ?? 0n)
}

/**
 * Every plain coin transfer on chain from `from` to `to` (each transaction between them, with
 * its value), from block `fromBlock` on: the coin has no Transfer event to ask for.
 */
export const coinTransfersOnChain = async (
  client: PublicClient,
  from: Address,
  to: Address,
  fromBlock = 0n
): Promise<Array<{ hash: Hex; value: bigint }>> => {
  const found: Array<{ hash: Hex; value: bigint }> = []
  const head = await client.getBlockNumber()
  for (let n = fromBlock; n <= head; n++) {
    const block = await client.getBlock({ blockNumber: n, includeTransactions: true })
    for (const tx of block.transactions) {
      if (
        tx.from.toLowerCase() === from.toLowerCase() &&
        tx.to?.toLowerCase() === to.toLowerCase()
      ) {
        found.push({ hash: tx.hash, value: tx.value })
      }
    }
  }
  return found
}

const BALANCE_OF = parseAbiItem("function balanceOf(address) view returns (uint256)")

/** The account's balance of the chain's token, read straight from the chain. */
export const tokenBalance = (chain: ChainProcess, address: Address): Promise<bigint> =>
  chain.client.readContract({
    address: chain.token.address,
    abi: [BALANCE_OF],
    functionName: "balanceOf",
    args: [address]
  })

/** What a payment moves: the buyer pays `paid`, the merchant's destination gets `settled`. */
export interface MoneyMoved {
  readonly buyer: Address
  readonly collector: Address
  readonly destination: Address
  readonly paid: bigint
  readonly settled: bigint
}

export interface Ledger {
  /**
   * Asserts, against the balances read when the ledger was opened: the buyer
   * down by `paid`, the destination up by `settled`, the collector up by
   * exactly what the engine keeps (`paid - settled`, the fees); and on chain,
   * since then, exactly one transfer from the buyer to the collector (`paid`)
   * and exactly one from the collector to the destination (`settled`).
   */
  readonly expectMovedOnce: () => Promise<void>
  /**
   * Asserts the payment collected and not settled: one transfer from the buyer
   * (`paid`), the collector holding all of it, nothing to the destination.
   */
  readonly expectCollectedOnly: () => Promise<void>
  /** Asserts that nothing moved since the ledger was opened: every balance as it was, no transfer. */
  readonly expectNothingMoved: () => Promise<void>
}

/**
 * Opens a ledger of one payment's accounts: their balances now and the chain's
 * next block, to compare with once the payment is over. Nothing else may move
 * these accounts' funds meanwhile (each test's buyer is its own; payments of a
 * suite run one after the other, each settled before the next).
 */
export const openLedger = async (
  chain: ChainProcess,
  accounts: Omit<MoneyMoved, "paid" | "settled">,
  amounts: Pick<MoneyMoved, "paid" | "settled">
): Promise<Ledger> => {
  const balances = async () => ({
    buyer: await tokenBalance(chain, accounts.buyer),
    collector: await tokenBalance(chain, accounts.collector),
    destination: await tokenBalance(chain, accounts.destination)
  })
  const before = await balances()
  const fromBlock = (await chain.client.getBlockNumber()) + 1n
  const moved = async () => ({
    collected: await transfersOnChain(chain, accounts.buyer, accounts.collector, fromBlock),
    settled: await transfersOnChain(chain, accounts.collector, accounts.destination, fromBlock)
  })
  return {
    expectMovedOnce: async () => {
      const { paid, settled } = amounts
      expect(await moved(), "transfers on chain since the ledger opened").toEqual({
        collected: [paid],
        settled: [settled]
      })
      expect(await balances(), "balances: before + the payment").toEqual({
        buyer: before.buyer - paid,
        collector: before.collector + (paid - settled),
        destination: before.destination + settled
      })
    },
    expectCollectedOnly: async () => {
      const { paid } = amounts
      expect(await moved(), "transfers on chain since the ledger opened").toEqual({
        collected: [paid],
        settled: []
      })
      expect(await balances(), "balances: before + the collection alone").toEqual({
        buyer: before.buyer - paid,
        collector: before.collector + paid,
        destination: before.destination
      })
    },
    expectNothingMoved: async () => {
      expect(await moved()).toEqual({ collected: [], settled: [] })
      expect(await balances()).toEqual(before)
    }
  }
}

const TEN_FIFTY_PAID = 10_500_000n
const TEN_FIFTY_FEES = 100_000n + 157_500n

/**
 * The payment the chain-work files make: 10.50 USD paid in USDC (6 decimals) at 1:1, under
 * engineSetup's default fees, 0.10 + 1.5 % = 0.2575 USDC (packages/core/src/fees/Fees.ts: the
 * fixed part in major units, the percentage of the amount paid rounded half up); what the
 * merchant is settled is the rest.
 */
export const TEN_FIFTY = {
  cents: 1050,
  paid: TEN_FIFTY_PAID,
  fees: TEN_FIFTY_FEES,
  settled: TEN_FIFTY_PAID - TEN_FIFTY_FEES
} as const

export interface ChainWork {
  readonly chain: ChainProcess
  readonly proxy: RpcProxy
  readonly setup: EngineSetup
  readonly engine: Instance
  readonly shop: Shop
}

/**
 * What a file that kills and restarts the engine opens first: the chain in its own process,
 * the fault-injecting RPC proxy in front of it, one engine process on its own SQLite file and
 * PAY_CONFIG (`options`), and a shop on it.
 */
export const openChainWork = async (
  spawned: Array<ChildProcess>,
  options: PayConfigOptions = {}
): Promise<ChainWork> => {
  requireChainWorkBundles()
  const chain = await startChain(spawned)
  const proxy = await startRpcProxy(chain.rpcUrl)
  const setup = engineSetup(chain, proxy, undefined, options)
  const engine = await startEngine("engine", setup, spawned)
  return { chain, proxy, setup, engine, shop: await openShop(engine, setup, chain) }
}

/** Starts an engine process on the setup (its database, its PAY_CONFIG). */
export const startEngine = (
  name: string,
  setup: EngineSetup,
  spawned: Array<ChildProcess>
): Promise<Instance> => startInstance(name, setup.env, spawned)

/** SIGKILL: no shutdown, no lease let go; resolves once the process is gone. */
export const kill = async (instance: Instance) => {
  instance.child.kill("SIGKILL")
  await instance.exited
}

export { startRpcProxy }
