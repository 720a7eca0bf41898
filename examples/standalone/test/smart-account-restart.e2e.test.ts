/**
 * An account not deployed yet (ERC-6492: a Safe, a thirdweb ERC-4337 account)
 * paying while the engine is SIGKILLed (issue 38), on a real EVM in its own
 * process: killed after the account's deployment was recorded and sent, and
 * again after the transfer was; each time, restarted on the same SQLite file,
 * the payment ends succeeded and settled with exactly one deployment of the
 * account (one factory event for it, one transaction of the account deployer)
 * and exactly one transfer from it.
 */
import type { ChildProcess } from "node:child_process"
import { typedDataFromJson } from "@pay/core"
import { type FactoryAccount, safeAccount, thirdwebAccount } from "@pay/sandbox-chain"
import { type Address, parseAbiItem, toFunctionSelector } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type Buyer,
  type ChainProcess,
  confirmAsWallet,
  createPayment,
  type EngineSetup,
  isSettled,
  kill,
  openChainWork,
  openLedger,
  removeSetup,
  type Shop,
  startEngine,
  TEN_FIFTY,
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

const { cents: CENTS, paid: PAID, settled: SETTLED } = TEN_FIFTY

/** Each kind's factory call, as the proxy sees it sent, and the event that says it deployed. */
const FACTORIES = {
  safe: {
    call: toFunctionSelector("createProxyWithNonce(address,bytes,uint256)"),
    deployed: (account: Address) =>
      chain.client.getLogs({
        event: parseAbiItem("event ProxyCreation(address indexed proxy, address singleton)"),
        args: { proxy: account },
        fromBlock: 0n,
        toBlock: "latest"
      })
  },
  "4337": {
    call: toFunctionSelector("createAccount(address,bytes)"),
    deployed: (account: Address) =>
      chain.client.getLogs({
        event: parseAbiItem(
          "event AccountCreated(address indexed account, address indexed accountAdmin)"
        ),
        args: { account },
        fromBlock: 0n,
        toBlock: "latest"
      })
  }
} as const

type Kind = keyof typeof FACTORIES

interface CounterfactualBuyer extends Buyer {
  readonly kind: Kind
}

beforeAll(async () => {
  ;({ chain, proxy, setup, engine, shop } = await openChainWork(spawned, { stuckAfterSeconds: 2 }))
  expect(chain.accountDeployerPrivateKey).toMatch(/^0x[0-9a-f]{64}$/)
}, 120_000)

afterAll(async () => {
  await stopAll(spawned)
  await proxy?.close()
  if (setup) removeSetup(setup)
}, 30_000)

const deployer = () => privateKeyToAccount(chain.accountDeployerPrivateKey!).address

/** An account of a new owner, not deployed, funded: a buyer that signs as it. */
const counterfactualBuyer = async (kind: Kind = "safe"): Promise<CounterfactualBuyer> => {
  const key = generatePrivateKey()
  const made = {
    client: chain.client,
    owner: privateKeyToAccount(key),
    saltNonce: BigInt(Date.now())
  }
  const account: FactoryAccount =
    kind === "safe" ? await safeAccount(made) : await thirdwebAccount(made)
  expect(await account.isDeployed()).toBe(false)
  await chain.rpc("sandbox_faucet", [account.address, (PAID * 2n).toString()])
  return {
    kind,
    key,
    address: account.address,
    account: `eip155:31337:${account.address}`,
    signJson: (json) => account.signTypedData(typedDataFromJson(json))
  }
}

const deploymentsOf = async (buyer: CounterfactualBuyer) =>
  (await FACTORIES[buyer.kind].deployed(buyer.address)).length

const expectDeployedOncePaidOnce = async (
  paymentId: string,
  buyer: CounterfactualBuyer,
  deployerSent: number
) => {
  const payment = await waitForPayment(() => engine, paymentId, isSettled)
  expect(payment.status).toBe("succeeded")
  await exactlyAfterQuiet(
    async () => ({
      deployments: await deploymentsOf(buyer),
      deployerTransactions:
        (await chain.client.getTransactionCount({ address: deployer() })) - deployerSent,
      transfers: await transfersOnChain(chain, buyer.address, chain.collector)
    }),
    { deployments: 1, deployerTransactions: 1, transfers: [PAID] },
    { what: "the account's deployments, the deployer's transactions, the transfers from it" }
  )
}

describe("a counterfactual account pays through kills (SQLite, the chain in its own process)", () => {
  it.each([
    { kind: "safe" as const, lost: "its answer", release: "forward" as const },
    { kind: "safe" as const, lost: "the deployment itself", release: "drop" as const },
    { kind: "4337" as const, lost: "the deployment itself", release: "drop" as const }
  ])(
    "$kind: killed after the deployment was recorded and sent, $lost lost: deployed once and paid once on restart",
    async ({ kind, release }) => {
      const buyer = await counterfactualBuyer(kind)
      const deployerSent = await chain.client.getTransactionCount({ address: deployer() })
      const holder = proxy.hold(sendsCallTo([FACTORIES[kind].call]))
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

  it("safe: killed after the transfer was recorded and sent (its answer lost): one deployment, one transfer on restart", async () => {
    const buyer = await counterfactualBuyer()
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
    expect(await deploymentsOf(buyer)).toBe(1)
    await kill(engine)
    holder.stop()
    await holder.release("forward")
    engine = await startEngine("engine", setup, spawned)
    await expectDeployedOncePaidOnce(paymentId, buyer, deployerSent)
    await ledger.expectMovedOnce()
  }, 60_000)
})
