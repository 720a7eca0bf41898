/**
 * The native row of the wallet flows: the sandbox chain's own coin (ETH,
 * `eip155:31337/slip44:60`, priced at the sandbox's ETH/USD feed) paid by key pairs with 10
 * wallets at once, measured as the USDC phase with 10 wallets (EIP-3009) is, on the same
 * server in the same run: its confirm → settled and its throughput to settled are the
 * baseline the row is read against.
 *
 * A native option's one action is `eth_sendTransaction`: the exact value to the collector,
 * its data the option's 32-byte reference. What is timed, per flow: options, fetch, then the
 * transfer sent raw with `eth_sendRawTransaction` through /sandbox/rpc (the flow waits on it;
 * on the sandbox's automine it is mined in that call), then confirm with its hash
 * (`maxPollMs=0`), the status long-poll to `succeeded`, and the wait for the settlement (the
 * engine watching the transfer to its confirmations, then sending the coin less fees on to
 * the merchant). Not timed: the transfer's signing. It can only be signed once the option is
 * known (its value and its reference are the option's), so the wallet signs it between fetch
 * and the send, as the Permit2 approvals are signed, out of the flow's times; all that can
 * be fixed beforehand is (nonce 0, a gas limit of TRANSFER_GAS, the fees read once before
 * the row). The row's confirm → settled starts at confirm's answer, after the transfer was
 * sent; its throughput, its chain calls (the wallet's send among them) and its server CPU
 * include the transfer; the time from the transfer sent to settled is given beside it.
 *
 * The buyers are made beforehand: each given NATIVE_FUNDS of test ether by the faucet
 * (`token: "ETH"`); the merchant is settled in ETH alone, so the only option offered is ETH.
 */
import { hexToBigInt } from "viem"
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
import {
  type Buyer,
  expectStatus,
  type Http,
  type Json,
  newBuyer,
  type Percentiles,
  percentiles
} from "./wallet-support.js"

/** What the row measured, beside the run's USDC phase with the same number of wallets. */
export interface NativeResult {
  /** Flows in the 10-wallet row. */
  readonly payments: number
  /** Flows paid first, one at a time, and not counted. */
  readonly warmup: number
  readonly transfer: WalletPhase
  /** What the row's payments were charged (from their partner views, after the row). */
  readonly fees: NativeFees
}

/** The native payments' amounts and fees, in wei, and their settlements' gas. */
export interface NativeFees {
  /** What each payment asked of the buyer (10.50 USD in ETH). */
  readonly amountWei: Percentiles
  /** `fees.network`: the settlement's gas money, kept from the coin paid. */
  readonly networkFeeWei: Percentiles
  /** The gas the settlements (the collector's transfer to the merchant) used, per payment. */
  readonly settlementGas: number
}

/** Enough for a plain transfer with 32 bytes of data (21,000 plus at most 512). */
const TRANSFER_GAS = 30_000n
/** The tip the buyers' transfers offer (1 gwei). */
const TRANSFER_TIP = 1_000_000_000n
/** Each buyer's test ether: 0.01 ETH, the 0.0035 ETH of a 10.50 USD payment and its gas. */
export const NATIVE_FUNDS = 10_000_000_000_000_000n

/** The sandbox's native coin, as GET /sandbox lists it. */
export const sandboxNative = async (http: Http): Promise<{ asset: string; symbol: string }> => {
  const sandbox = await expectStatus(http.call("GET", "/sandbox"), "GET /sandbox")
  const coin = (sandbox.tokens as ReadonlyArray<Json> | undefined)?.find(
    (t) => t.authorization === "native"
  )
  if (typeof coin?.asset !== "string" || typeof coin.symbol !== "string") {
    throw new Error(`GET /sandbox lists no native coin: ${JSON.stringify(sandbox)}`)
  }
  return { asset: coin.asset, symbol: coin.symbol }
}

/** A merchant of the bench's partner settled in the sandbox's native coin alone. */
export const nativeMerchant = (server: ServerProcess, http: Http, asset: string): Promise<Target> =>
  merchantSettledOnlyIn(server, http, asset, "ETH")

/** `count` key-pair buyers given `wei` of test ether by the faucet, each signing its transfer. */
export const nativeBuyers = async (
  http: Http,
  count: number,
  wei: bigint
): Promise<Array<Buyer>> => {
  const baseFee = await sandboxBaseFee(http)
  return inParallel(count, 10, async () => {
    const made = newBuyer()
    await expectStatus(
      http.call("POST", "/sandbox/faucet", {
        body: { account: made.account, amount: wei.toString(), token: "ETH" }
      }),
      "POST /sandbox/faucet (ETH)"
    )
    return {
      ...made,
      signTransactionJson: actionTransactionSigner(made.key, baseFee, TRANSFER_GAS, TRANSFER_TIP)
    }
  })
}

/**
 * The amounts and fees of the row's payments (their partner views) and their settlements'
 * gas (the receipts), read after the row: outside its times and its chain calls.
 */
export const nativeFees = async (
  http: Http,
  partnerHeaders: Record<string, string>,
  paymentIds: ReadonlyArray<string>
): Promise<NativeFees> => {
  const read = await inParallel(paymentIds.length, 10, async (i) => {
    const view = await expectStatus(
      http.call("GET", `/v1/payments/${paymentIds[i]}`, { headers: partnerHeaders }),
      "GET /v1/payments/{id}"
    )
    const network = view.fees?.network?.value
    const amount = view.settlement?.amount?.value
    const hash = view.settlement?.txHash
    if (typeof network !== "string" || typeof amount !== "string" || typeof hash !== "string") {
      throw new Error(
        `payment ${paymentIds[i]}: no network fee or settlement: ${JSON.stringify(view)}`
      )
    }
    const receipt = await sandboxRpc(http, "eth_getTransactionReceipt", [hash])
    if (receipt?.status !== "0x1") throw new Error(`settlement ${hash}: no successful receipt`)
    return {
      // What the buyer paid: the settlement's amount plus every fee.
      amount: Number(BigInt(amount) + BigInt(view.fees.total.value)),
      network: Number(network),
      gas: Number(hexToBigInt(receipt.gasUsed))
    }
  })
  return {
    amountWei: percentiles(read.map((r) => r.amount)),
    networkFeeWei: percentiles(read.map((r) => r.network)),
    settlementGas: read.reduce((sum, r) => sum + r.gas, 0) / Math.max(1, read.length)
  }
}

/**
 * The row's lines of the report, read against `baseline` (the run's USDC phase with as many
 * wallets); `again`, when the Permit2 rows ran, is that phase run again just before this row.
 */
export const formatNative = (
  baseline: WalletPhase,
  r: NativeResult,
  again: WalletPhase | undefined,
  n: (x: number, digits?: number) => string
): Array<string> => {
  const rows: Array<readonly [string, WalletPhase]> = [
    ["USDC, EIP-3009 (the phase above)", baseline],
    ["ETH, native transfer *", r.transfer]
  ]
  if (again !== undefined) rows.push(["USDC, EIP-3009, again, just before", again])
  const ratio = (x: number, b: number) => `${n(x / b, 2)}×`
  const p = r.transfer
  const lines = [
    "",
    `  Native coin: the sandbox's ETH paid by key pairs, each sending its own transfer, ` +
      `${n(r.payments, 0)} payments with ${baseline.wallets} wallets at once, after ${r.warmup} ` +
      "one at a time to warm up; a merchant settled in ETH alone; beside the USDC (EIP-3009) " +
      `phase with ${baseline.wallets} wallets above` +
      (again === undefined
        ? ""
        : ", and that phase run again after the Permit2 rows, just before this one, to show the drift"),
    `  ${"row".padEnd(34)}${"confirm".padStart(9)}${"→ settled p50".padStart(15)}${"p95".padStart(8)}` +
      `${"settled/s".padStart(11)}${"÷ EIP-3009: p50".padStart(17)}${"/s".padStart(7)}` +
      `${"chain calls".padStart(13)}${"server CPU".padStart(12)}`
  ]
  for (const [name, q] of rows) {
    lines.push(
      `  ${name.padEnd(34)}${n(q.ms.confirm.p50).padStart(9)}${n(q.ms.settled.p50).padStart(15)}` +
        `${n(q.ms.settled.p95).padStart(8)}${n(q.settledPerSecond).padStart(11)}` +
        `${ratio(q.ms.settled.p50, baseline.ms.settled.p50).padStart(17)}` +
        `${ratio(q.settledPerSecond, baseline.settledPerSecond).padStart(7)}` +
        `${n(q.chainCallsPerFlow).padStart(13)}${`${n(q.serverCpuMsPerFlow)} ms`.padStart(12)}`
    )
  }
  // Where the chain calls differ from the EIP-3009 row's, by method.
  const differences = chainCallDifferences(p, baseline, n)
  const t = p.approval
  const f = r.fees
  lines.push(
    "  ETH, native transfer: chain calls a payment against the EIP-3009 row's: " +
      (differences.length === 0 ? "the same" : differences.join(", ")),
    "  (confirm: its p50 in ms; → settled: from confirm's answer; settled/s: the row's payments over " +
      "the time from its start to its last settlement; chain calls: answered by the sandbox chain " +
      "during the row, per payment; server CPU: per payment, all its threads)",
    "  * includes the buyer's transfer: each wallet signs it after fetch (its value and reference are " +
      "the option's; not timed), sends it raw through /sandbox/rpc (timed), then confirms with its " +
      "hash; settled/s, the chain calls (the wallet's send among them) and the server CPU include it" +
      (t === undefined
        ? ""
        : `; the send ${n(t.sendMs.p50)} ms p50, from the transfer sent to settled ` +
          `${n(t.toSettledMs.p50)} ms p50, ${n(t.toSettledMs.p95)} ms p95 ` +
          `(${ratio(t.toSettledMs.p50, baseline.ms.settled.p50)} the EIP-3009 confirm → settled p50); ` +
          `the transfer's gas, paid by the buyer: ${n(t.gas, 0)}`),
    `  each payment ${n(f.amountWei.p50 / 1e18, 6)} ETH (10.50 USD at the feed); its network fee ` +
      `(the settlement's gas money, kept from the coin) ${n(f.networkFeeWei.p50 / 1e9, 0)} gwei p50, ` +
      `${n(f.networkFeeWei.max / 1e9, 0)} gwei at most; the settlement's gas ${n(f.settlementGas, 0)}; ` +
      "no collection sent by the engine (the buyer's transfer is the payment's transaction)"
  )
  return lines
}
