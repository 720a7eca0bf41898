/**
 * What the Permit2 and native rows of the wallet bench (wallet-permit2.ts,
 * wallet-native.ts) share: a merchant settled in one sandbox asset alone (so
 * its one option is that asset), the sandbox chain's JSON-RPC through the
 * server, and the buyer's wallet signing the transaction an option's
 * `eth_sendTransaction` action hands it.
 */
import { type Hex, hexToBigInt } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { BENCH_API_KEY, createMerchant, type Target } from "./client.js"
import type { ServerProcess } from "./server-process.js"
import { expectStatus, type Http, type Json } from "./wallet-support.js"

export const SANDBOX_CHAIN_ID = 31337

/** A merchant of the bench's partner settled in `asset` alone, named by `label` (USDT, ETH). */
export const merchantSettledOnlyIn = async (
  server: ServerProcess,
  http: Http,
  asset: string,
  label: string
): Promise<Target> => {
  const merchantId = await createMerchant(`${server.name} (${label})`, server.url)
  await expectStatus(
    http.call("POST", `/v1/merchants/${merchantId}/settlements/crypto`, {
      headers: {
        "Api-Key": BENCH_API_KEY,
        "Idempotency-Key": `bench-settlement-${label.toLowerCase()}-${Date.now()}`
      },
      body: {
        settlements: [
          { asset, destination: "eip155:31337:0x000000000000000000000000000000000000dEaD" }
        ]
      }
    }),
    `POST /v1/merchants/{id}/settlements/crypto (${label})`,
    201
  )
  return { name: server.name, url: server.url, merchantId }
}

/** One JSON-RPC call to the sandbox chain through the server's /sandbox/rpc; its result. */
export const sandboxRpc = async (
  http: Http,
  method: string,
  params: ReadonlyArray<unknown>
): Promise<Json> => {
  const answer = await expectStatus(
    http.call("POST", "/sandbox/rpc", { body: { jsonrpc: "2.0", id: 1, method, params } }),
    `/sandbox/rpc ${method}`
  )
  if (answer?.error !== undefined) {
    throw new Error(`/sandbox/rpc ${method}: ${JSON.stringify(answer.error)}`)
  }
  return answer.result
}

/** The latest block's base fee, read once before a row: what its buyers' fee caps are made of. */
export const sandboxBaseFee = async (http: Http): Promise<bigint> =>
  hexToBigInt(
    (await sandboxRpc(http, "eth_getBlockByNumber", ["latest", false])).baseFeePerGas ?? "0x0"
  )

/**
 * Signs an `eth_sendTransaction` action's transaction as the buyer's wallet: to, value and
 * data as the action gives them, its first transaction (nonce 0), `gas`, a fee cap of twice
 * `baseFee` plus `tip`.
 */
export const actionTransactionSigner =
  (key: Hex, baseFee: bigint, gas: bigint, tip: bigint) =>
  async (json: string): Promise<Hex> => {
    const account = privateKeyToAccount(key)
    const tx = JSON.parse(json) as {
      from?: string
      to: Hex
      data?: Hex
      value?: Hex
      chainId?: Hex
    }
    if (tx.from?.toLowerCase() !== account.address.toLowerCase()) {
      throw new Error(`the action's transaction is from ${tx.from}, not ${account.address}`)
    }
    if (tx.chainId !== undefined && hexToBigInt(tx.chainId) !== BigInt(SANDBOX_CHAIN_ID)) {
      throw new Error(`the action's transaction is for chain ${tx.chainId}`)
    }
    return account.signTransaction({
      type: "eip1559",
      chainId: SANDBOX_CHAIN_ID,
      nonce: 0,
      to: tx.to,
      data: tx.data ?? "0x",
      value: tx.value === undefined ? 0n : hexToBigInt(tx.value),
      gas,
      maxFeePerGas: 2n * baseFee + tip,
      maxPriorityFeePerGas: tip
    })
  }

/**
 * Where a row's chain calls a payment differ from its baseline's, by method (a difference
 * under 0.05 a payment left out), each as `method +d` or `method -d`, `n` formatting d.
 */
export const chainCallDifferences = (
  row: { readonly chainCallsPerFlowByMethod: Readonly<Record<string, number>> },
  baseline: { readonly chainCallsPerFlowByMethod: Readonly<Record<string, number>> },
  n: (x: number) => string
): ReadonlyArray<string> =>
  [
    ...new Set([
      ...Object.keys(row.chainCallsPerFlowByMethod),
      ...Object.keys(baseline.chainCallsPerFlowByMethod)
    ])
  ]
    .sort()
    .map(
      (m) =>
        [
          m,
          (row.chainCallsPerFlowByMethod[m] ?? 0) - (baseline.chainCallsPerFlowByMethod[m] ?? 0)
        ] as const
    )
    .filter(([, d]) => Math.abs(d) >= 0.05)
    .map(([m, d]) => `${m} ${d > 0 ? "+" : ""}${n(d)}`)
