/**
 * A Safe not deployed yet (ERC-6492) paying while the engine is SIGKILLed
 * (issue 38), on a real EVM in its own process: killed after the account's
 * deployment was recorded and sent, and again after the transfer was; each
 * time, restarted on the same SQLite file, the payment ends succeeded and
 * settled with exactly one deployment of the account (one `ProxyCreation`,
 * one transaction of the account deployer) and exactly one transfer from it.
 */
import type { ChildProcess } from "node:child_process"
import { typedDataFromJson } from "@pay/core"
import { safeAccount } from "@pay/sandbox-chain"
import { type Address, parseAbiItem, toFunctionSelector } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type Buyer,
  type ChainProcess,
  confirmAsWallet,
  createPayment,
  type EngineSetup,
  engineSetup,
  isSettled,
  kill,
  openLedger,
  openShop,
  removeSetup,
  requireChainWorkBundles,
  type Shop,
  startChain,
  startEngine,
  startRpcProxy,
  transfersOnChain,
  waitForPayment
} from "./chain-work-support.js"
import { exactlyAfterQuiet } from "./e2e-support.js"
import type { Instance } from "./instances-support.js"
import { stopAll } from "./instances-support.js"
import { type RpcProxy, SELECTORS, sendsCallTo } from "./rpc-proxy.js"

const spawned: Array<ChildProcess> = []
let chain: ChainProcess
let proxy: RpcProxy
let setup: EngineSetup
let engine: Instance
let shop: Shop

/** 10.50 USD in USDC; fees 0.10 + 1.5 % (as chain-work.e2e.test.ts). */
const CENTS = 1050
const PAID = 10_500_000n
const FEES = 100_000n + 157_500n
const SETTLED = PAID - FEES
const CREATE_PROXY = toFunctionSelector("createProxyWithNonce(address,bytes,uint256)")
const PROXY_CREATION = parseAbiItem("event ProxyCreation(address indexed proxy, address singleton)")

beforeAll(async () => {
  requireChainWorkBundles()
  chain = await startChain(spawned)
  expect(chain.accountDeployerPrivateKey).toMatch(/^0x[0-9a-f]{64}$/)
  proxy = await startRpcProxy(chain.rpcUrl)
  setup = engineSetup(chain, proxy, undefined, { stuckAfterSeconds: 2 })
  engine = await startEngine("engine", setup, spawned)
  shop = await openShop(engine, setup, chain)
}, 120_000)

afterAll(async () => {
  await stopAll(spawned)
  await proxy?.close()
  if (setup) removeSetup(setup)
}, 30_000)

const deployer = () => privateKeyToAccount(chain.accountDeployerPrivateKey!).address

/** A Safe of a new owner, not deployed, funded: a buyer that signs as it. */
const counterfactualSafe = async (): Promise<Buyer> => {
  const key = generatePrivateKey()
  const safe = await safeAccount({
    client: chain.client,
    owner: privateKeyToAccount(key),
    saltNonce: BigInt(Date.now())
  })
  expect(await safe.isDeployed()).toBe(false)
  await chain.rpc("sandbox_faucet", [safe.address, (PAID * 2n).toString()])
  return {
    key,
    address: safe.address,
    account: `eip155:31337:${safe.address}`,
    signJson: (json) => safe.signTypedData(typedDataFromJson(json))
  }
}

const deploymentsOf = async (account: Address) =>
  (
    await chain.client.getLogs({
      event: PROXY_CREATION,
      args: { proxy: account },
      fromBlock: 0n,
      toBlock: "latest"
    })
  ).length

const expectDeployedOncePaidOnce = async (
  paymentId: string,
  buyer: Buyer,
  deployerSent: number
) => {
  const payment = await waitForPayment(() => engine, paymentId, isSettled)
  expect(payment.status).toBe("succeeded")
  await exactlyAfterQuiet(
    async () => ({
      deployments: await deploymentsOf(buyer.address),
      deployerTransactions:
        (await chain.client.getTransactionCount({ address: deployer() })) - deployerSent,
      transfers: await transfersOnChain(chain, buyer.address, chain.collector)
    }),
    { deployments: 1, deployerTransactions: 1, transfers: [PAID] },
    { what: "the account's deployments, the deployer's transactions, the transfers from it" }
  )
}

describe("a counterfactual Safe pays through kills (SQLite, the chain in its own process)", () => {
  it.each([
    { lost: "its answer", release: "forward" as const },
    { lost: "the deployment itself", release: "drop" as const }
  ])(
    "killed after the deployment was recorded and sent, $lost lost: deployed once and paid once on restart",
    async ({ release }) => {
      const buyer = await counterfactualSafe()
      const deployerSent = await chain.client.getTransactionCount({ address: deployer() })
      const holder = proxy.hold(sendsCallTo([CREATE_PROXY]))
      const paymentId = await createPayment(engine, shop, CENTS)
      const ledger = await openLedger(
        chain,
        { buyer: buyer.address, collector: chain.collector, destination: shop.destination },
        { paid: PAID, settled: SETTLED }
      )
      const status = await confirmAsWallet(engine, shop, paymentId, buyer)
      expect(status.status).toBe("processing")
      await holder.waitForHeld()
      await kill(engine)
      holder.stop()
      await holder.release(release)
      expect(await transfersOnChain(chain, buyer.address, chain.collector)).toEqual([])
      engine = await startEngine("engine", setup, spawned)
      await expectDeployedOncePaidOnce(paymentId, buyer, deployerSent)
      await ledger.expectMovedOnce()
    },
    60_000
  )

  it("killed after the transfer was recorded and sent (its answer lost): one deployment, one transfer on restart", async () => {
    const buyer = await counterfactualSafe()
    const deployerSent = await chain.client.getTransactionCount({ address: deployer() })
    const holder = proxy.hold(
      sendsCallTo([SELECTORS.receiveWithAuthorization, SELECTORS.receiveWithAuthorizationBytes])
    )
    const paymentId = await createPayment(engine, shop, CENTS)
    const ledger = await openLedger(
      chain,
      { buyer: buyer.address, collector: chain.collector, destination: shop.destination },
      { paid: PAID, settled: SETTLED }
    )
    await confirmAsWallet(engine, shop, paymentId, buyer)
    await holder.waitForHeld()
    // Deployed before the transfer was sent.
    expect(await deploymentsOf(buyer.address)).toBe(1)
    await kill(engine)
    holder.stop()
    await holder.release("forward")
    engine = await startEngine("engine", setup, spawned)
    await expectDeployedOncePaidOnce(paymentId, buyer, deployerSent)
    await ledger.expectMovedOnce()
  }, 60_000)
})
