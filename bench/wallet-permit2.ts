/**
 * The Permit2 rows of the wallet flows (issue 39): the sandbox's USDT (no EIP-3009) paid
 * through Permit2 by key pairs, with 10 wallets at once, measured as the USDC phase with 10
 * wallets (EIP-3009) is, on the same server in the same run: its confirm → settled and its
 * throughput to settled are the baseline each row is read against.
 *
 * - "allowance held": returning buyers, whose approval of Permit2 (`approve(Permit2, max)`)
 *   was sent and mined beforehand, outside the timed part; the option's one action is the
 *   permit's signature, and the wallet flow is the EIP-3009 one.
 * - "approve in the flow": first-time buyers. The option's actions are the approval, then
 *   the permit: the wallet signs the approval (here, not timed, as the permit's signature
 *   is not: nonce 0, a gas limit of APPROVE_GAS, fees read once beforehand), sends it raw
 *   through /sandbox/rpc (timed: the flow waits on it, and the chain is the server's), then
 *   confirms with its hash and the signature. Its figures include the buyer's approve
 *   transaction.
 *
 * The buyers are made beforehand: each given test ether (`gas: true`, for its own
 * transactions) and USDT by the faucet; the merchant is settled in USDT alone, so the
 * only option offered is the USDT one.
 */

import { PERMIT2_ADDRESS } from "@pay/sandbox-chain"
import { encodeFunctionData, type Hex, maxUint256, parseAbi } from "viem"
import { inParallel, type Target } from "./client.js"
import type { ServerProcess } from "./server-process.js"
import type { WalletPhase } from "./wallet.js"
import {
  actionTransactionSigner,
  chainCallDifferences,
  merchantSettledOnlyIn,
  sandboxBaseFee,
  sandboxRpc
} from "./wallet-sandbox.js"
import { type Buyer, expectStatus, type Http, type Json, newBuyer } from "./wallet-support.js"

export const PERMIT2_KINDS = ["allowance held", "approve in the flow"] as const
export type Permit2Kind = (typeof PERMIT2_KINDS)[number]

/** What the rows measured, beside the run's USDC phase with the same number of wallets. */
export interface Permit2Result {
  /** Flows in each 10-wallet row. */
  readonly payments: number
  /** Flows of each kind paid first, one at a time, and not counted. */
  readonly warmup: number
  readonly allowanceHeld: WalletPhase
  readonly approveInFlow: WalletPhase
  /** The USDC (EIP-3009) phase again, after the Permit2 rows: how far the server drifted. */
  readonly eip3009After: WalletPhase
}

/** Enough for an approval of the sandbox USDT (about 46,000 used). */
const APPROVE_GAS = 100_000n
/** The tip the buyers' approvals offer (1 gwei). */
const APPROVE_TIP = 1_000_000_000n

const erc20 = parseAbi(["function approve(address spender, uint256 amount)"])

/** The sandbox's USDT, as GET /sandbox lists it. */
export const sandboxUsdt = async (http: Http): Promise<{ asset: string; address: Hex }> => {
  const sandbox = await expectStatus(http.call("GET", "/sandbox"), "GET /sandbox")
  const usdt = (sandbox.tokens as ReadonlyArray<Json> | undefined)?.find((t) => t.symbol === "USDT")
  if (usdt?.authorization !== "permit2" || typeof usdt.asset !== "string") {
    throw new Error(`GET /sandbox lists no USDT paid through Permit2: ${JSON.stringify(sandbox)}`)
  }
  return { asset: usdt.asset, address: usdt.asset.slice(usdt.asset.lastIndexOf(":") + 1) as Hex }
}

/** A second merchant of the bench's partner, settled in the sandbox USDT alone. */
export const usdtMerchant = (server: ServerProcess, http: Http, asset: string): Promise<Target> =>
  merchantSettledOnlyIn(server, http, asset, "USDT")

/**
 * `count` key-pair buyers given test ether and `funds` of USDT by the faucet; with
 * `approved`, each has approved Permit2 for the USDT (`max`), mined, before it is answered;
 * without, each signs the option's approval when it pays.
 */
export const permit2Buyers = async (
  http: Http,
  usdt: { readonly address: Hex },
  count: number,
  funds: bigint,
  approved: boolean
): Promise<Array<Buyer>> => {
  const baseFee = await sandboxBaseFee(http)
  return inParallel(count, 10, async () => {
    const made = newBuyer()
    await expectStatus(
      http.call("POST", "/sandbox/faucet", {
        body: { account: made.account, amount: funds.toString(), token: "USDT", gas: true }
      }),
      "POST /sandbox/faucet (USDT)"
    )
    const buyer: Buyer = {
      ...made,
      signTransactionJson: actionTransactionSigner(made.key, baseFee, APPROVE_GAS, APPROVE_TIP)
    }
    if (approved) {
      const raw = await buyer.signTransactionJson!(
        JSON.stringify({
          from: buyer.address,
          to: usdt.address,
          data: encodeFunctionData({
            abi: erc20,
            functionName: "approve",
            args: [PERMIT2_ADDRESS, maxUint256]
          }),
          value: "0x0"
        })
      )
      const hash = await sandboxRpc(http, "eth_sendRawTransaction", [raw])
      const receipt = await sandboxRpc(http, "eth_getTransactionReceipt", [hash])
      if (receipt?.status !== "0x1") {
        throw new Error(`the approval ${hash} of ${buyer.address} is not mined successful`)
      }
      // A returning buyer: it sends no transaction when it pays.
      return made
    }
    return buyer
  })
}

/** The rows' lines of the report, each read against `baseline` (the run's USDC phase). */
export const formatPermit2 = (
  baseline: WalletPhase,
  r: Permit2Result,
  n: (x: number, digits?: number) => string
): Array<string> => {
  const rows: ReadonlyArray<readonly [string, WalletPhase]> = [
    ["USDC, EIP-3009 (the phase above)", baseline],
    ["USDT, Permit2, allowance held", r.allowanceHeld],
    ["USDT, Permit2, approve in flow *", r.approveInFlow],
    ["USDC, EIP-3009, again after", r.eip3009After]
  ]
  const ratio = (x: number, b: number) => `${n(x / b, 2)}×`
  const lines = [
    "",
    `  Permit2: the sandbox USDT paid through Permit2 by key pairs, ${n(r.payments, 0)} payments with ` +
      `${baseline.wallets} wallets at once per row, after ${r.warmup} of each kind one at a time to ` +
      "warm up; a merchant settled in USDT alone; beside the USDC (EIP-3009) phase with " +
      `${baseline.wallets} wallets above, then that phase again (${n(r.eip3009After.flows, 0)} payments) ` +
      "to show the drift",
    `  ${"row".padEnd(34)}${"confirm".padStart(9)}${"→ settled p50".padStart(15)}${"p95".padStart(8)}` +
      `${"settled/s".padStart(11)}${"÷ EIP-3009: p50".padStart(17)}${"/s".padStart(7)}` +
      `${"chain calls".padStart(13)}${"collect gas".padStart(13)}${"server CPU".padStart(12)}`
  ]
  for (const [name, p] of rows) {
    lines.push(
      `  ${name.padEnd(34)}${n(p.ms.confirm.p50).padStart(9)}${n(p.ms.settled.p50).padStart(15)}` +
        `${n(p.ms.settled.p95).padStart(8)}${n(p.settledPerSecond).padStart(11)}` +
        `${ratio(p.ms.settled.p50, baseline.ms.settled.p50).padStart(17)}` +
        `${ratio(p.settledPerSecond, baseline.settledPerSecond).padStart(7)}` +
        `${n(p.chainCallsPerFlow).padStart(13)}${n(p.collectGas, 0).padStart(13)}` +
        `${`${n(p.serverCpuMsPerFlow)} ms`.padStart(12)}`
    )
  }
  // Where the chain calls differ from the EIP-3009 row's, by method.
  for (const [name, p] of rows.slice(1)) {
    const differences = chainCallDifferences(p, baseline, n)
    lines.push(
      `  ${name}: chain calls a payment beyond the EIP-3009 row's: ` +
        (differences.length === 0 ? "none" : differences.join(", "))
    )
  }
  const a = r.approveInFlow.approval
  lines.push(
    "  (confirm: its p50 in ms; → settled: from confirm's answer; settled/s: the row's payments over " +
      "the time from its start to its last settlement; chain calls: answered by the sandbox chain " +
      "during the row, per payment; server CPU: per payment, all its threads)",
    "  * includes the buyer's approve transaction: each wallet signs it (not timed), sends it raw " +
      "through /sandbox/rpc, then confirms with its hash and the permit; settled/s, the chain calls " +
      "(the wallet's send among them) and the server CPU include it" +
      (a === undefined
        ? ""
        : `; the send ${n(a.sendMs.p50)} ms p50, from the approve sent to settled ` +
          `${n(a.toSettledMs.p50)} ms p50, ${n(a.toSettledMs.p95)} ms p95 ` +
          `(${ratio(a.toSettledMs.p50, baseline.ms.settled.p50)} the EIP-3009 confirm → settled p50); ` +
          `the approve's gas, paid by the buyer: ${n(a.gas, 0)}`)
  )
  return lines
}
