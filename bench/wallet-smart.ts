/**
 * The smart-account row of the wallet flows (issue 38): the same wallet flow,
 * one wallet at a time, paid by key pairs (the baseline, in the same run), by
 * deployed Safes and thirdweb ERC-4337 accounts (ERC-1271) and by each not
 * deployed yet (ERC-6492: the engine's deploy job deploys each first); for each, confirm → succeeded and
 * confirm → settled, the chain calls the engine made per payment (the sandbox
 * chain counts the calls it answers: GET /sandbox's `rpcCalls`, read before and
 * after the phase, during which nothing else calls the chain), and the gas of
 * the collection and of the deployment, read from their receipts afterwards.
 *
 * The accounts are made beforehand, outside the timed phase: their owners are
 * given test ether by the faucet (`gas: true`), deploy their own account (the
 * deployed kinds), and the accounts are given USDC.
 */

import { typedDataFromJson } from "@pay/core"
import { type FactoryAccount, safeAccount, thirdwebAccount } from "@pay/sandbox-chain"
import { createPublicClient, createWalletClient, type Hex, http, parseAbiItem } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { createPayment, inParallel, type Target } from "./client.js"
import {
  type Buyer,
  expectStatus,
  type Http,
  newBuyer,
  type Percentiles
} from "./wallet-support.js"

export const SMART_KINDS = [
  "key pair",
  "Safe, deployed",
  "Safe, not deployed",
  "4337, deployed",
  "4337, not deployed"
] as const
export type SmartKind = (typeof SMART_KINDS)[number]

const deployed = (kind: SmartKind) => kind.endsWith(", deployed")

export interface SmartRow {
  readonly kind: SmartKind
  readonly flows: number
  readonly confirmMs: Percentiles
  readonly succeededMs: Percentiles
  readonly settledMs: Percentiles
  /** The chain calls answered during the phase, per payment (the engine's: nothing else called). */
  readonly rpcCallsPerPayment: number
  /** The collection's gas (receiveWithAuthorization), per payment. */
  readonly collectGas: number
  /** The account's deployment gas (the factory call), per payment; 0 when none. */
  readonly deployGas: number
}

/** The factory's event that says it deployed the account at `address` (Safe or thirdweb). */
const deploymentLogs = (
  client: ReturnType<typeof chainOf>["client"],
  kind: SmartKind,
  address: Hex
) =>
  kind.startsWith("Safe")
    ? client.getLogs({
        event: parseAbiItem("event ProxyCreation(address indexed proxy, address singleton)"),
        args: { proxy: address },
        fromBlock: 0n
      })
    : client.getLogs({
        event: parseAbiItem(
          "event AccountCreated(address indexed account, address indexed accountAdmin)"
        ),
        args: { account: address },
        fromBlock: 0n
      })

const chainOf = (url: string) => {
  const transport = http(`${url}/sandbox/rpc`)
  const chain = {
    id: 31337,
    name: "Pay sandbox",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [`${url}/sandbox/rpc`] } }
  }
  return { transport, chain, client: createPublicClient({ chain, transport, cacheTime: 0 }) }
}

/** `count` buyers of a kind, funded with `funds` (minor units); accounts made (and deployed) first. */
export const smartBuyers = async (
  http_: Http,
  url: string,
  kind: SmartKind,
  count: number,
  funds: bigint
): Promise<Array<Buyer>> => {
  const faucet = (account: string, amount: bigint, gas = false) =>
    expectStatus(
      http_.call("POST", "/sandbox/faucet", {
        body: { account: `eip155:31337:${account}`, amount: amount.toString(), gas }
      }),
      "POST /sandbox/faucet"
    )
  if (kind === "key pair") {
    const buyers = Array.from({ length: count }, newBuyer)
    for (const b of buyers) await faucet(b.address, funds)
    return buyers
  }
  const { transport, chain, client } = chainOf(url)
  const buyers: Array<Buyer> = []
  for (let i = 0; i < count; i++) {
    const key = generatePrivateKey()
    const owner = privateKeyToAccount(key)
    const made = { client, owner, saltNonce: BigInt(i + 1) }
    const account: FactoryAccount = kind.startsWith("Safe")
      ? await safeAccount(made)
      : await thirdwebAccount(made)
    if (deployed(kind)) {
      await faucet(owner.address, 1n, true)
      await account.deploy(createWalletClient({ account: owner, chain, transport }))
    }
    await faucet(account.address, funds)
    buyers.push({
      key,
      address: account.address,
      account: `eip155:31337:${account.address}`,
      signJson: (json) => account.signTypedData(typedDataFromJson(json))
    })
  }
  return buyers
}

/** The payments for a row, created beforehand. */
export const smartPayments = (target: Target, count: number, first: number) =>
  inParallel(count, 10, (i) => createPayment(target, first + i))

const callsServed = async (http_: Http): Promise<number> => {
  const described = await expectStatus(http_.call("GET", "/sandbox"), "GET /sandbox")
  return Object.values((described.rpcCalls ?? {}) as Record<string, number>).reduce(
    (a, b) => a + b,
    0
  )
}

/**
 * Runs `pay` over the row's payments one at a time and measures it; `pay`
 * answers each flow's confirm, succeeded and settled times.
 */
export const smartRow = async (
  http_: Http,
  url: string,
  kind: SmartKind,
  jobs: ReadonlyArray<{ readonly paymentId: string; readonly buyer: Buyer }>,
  pay: (
    paymentId: string,
    buyer: Buyer
  ) => Promise<{ confirm: number; succeeded: number; settled: number }>,
  percentiles: (xs: ReadonlyArray<number>) => Percentiles,
  partnerHeaders: Record<string, string>
): Promise<SmartRow> => {
  const before = await callsServed(http_)
  const times: Array<{ confirm: number; succeeded: number; settled: number }> = []
  for (const job of jobs) times.push(await pay(job.paymentId, job.buyer))
  const calls = (await callsServed(http_)) - before
  // Afterwards, outside the count: the receipts of the collections and deployments.
  const { client } = chainOf(url)
  let collectGas = 0n
  let deployGas = 0n
  for (const job of jobs) {
    const payment = await expectStatus(
      http_.call("GET", `/v1/payments/${job.paymentId}`, { headers: partnerHeaders }),
      "GET /v1/payments/{id}"
    )
    const hash = payment.transaction?.hash as Hex | undefined
    if (hash === undefined) throw new Error(`payment ${job.paymentId} has no transaction`)
    collectGas += (await client.getTransactionReceipt({ hash })).gasUsed
    if (kind !== "key pair" && !deployed(kind)) {
      const [created] = await deploymentLogs(client, kind, job.buyer.address as Hex)
      if (created === undefined) throw new Error(`${job.buyer.address} was not deployed`)
      deployGas += (await client.getTransactionReceipt({ hash: created.transactionHash })).gasUsed
    }
  }
  return {
    kind,
    flows: jobs.length,
    confirmMs: percentiles(times.map((t) => t.confirm)),
    succeededMs: percentiles(times.map((t) => t.succeeded)),
    settledMs: percentiles(times.map((t) => t.settled)),
    rpcCallsPerPayment: calls / jobs.length,
    collectGas: Number(collectGas) / jobs.length,
    deployGas: Number(deployGas) / jobs.length
  }
}
