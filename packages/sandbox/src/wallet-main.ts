/**
 * `pay-sandbox-wallet <payment link> --api-key <wallet app key>` (in this
 * repository: `npm run wallet -- …`): pays a payment on the sandbox chain
 * with a new local key, funded by the faucet. The engine is the one the link
 * names (`https://shop.example/pay/pay_…` is paid through
 * `https://shop.example/pay`); `--engine <url>` or ENGINE_URL names it
 * instead (needed for a bare `pay_…` id; default http://127.0.0.1:8080).
 * WALLET_KEY (0x…) pays from a key of your own. `--account safe|4337|7702`
 * pays as a smart account of the key: a one-owner Safe or a thirdweb ERC-4337
 * account (`--counterfactual`: not deployed, the engine deploys it), or the
 * key delegated by EIP-7702. `--token USDC|USDT|DAI|ETH` pays in that token
 * (default USDC), approving Permit2 first when the option asks for it; ETH,
 * the chain's own coin, is paid by sending the option's transaction as given
 * (the faucet gives 1,000 test ether first, and tops up a key short of it).
 */
import type { Hex } from "viem"
import { chooseEngine, payWithWallet } from "./Wallet.js"

const USAGE =
  "usage: pay-sandbox-wallet <payment link or pay_… id> --api-key <wallet app key> [--engine <engine URL>] [--account eoa|safe|4337|7702] [--counterfactual] [--token USDC|USDT|DAI|ETH]"

const args = process.argv.slice(2)
const flag = (name: string) => {
  const i = args.indexOf(name)
  return i === -1 ? undefined : args[i + 1]
}
const VALUED = new Set(["--api-key", "--engine", "--account", "--token"])
const payment = args.find((a, i) => !a.startsWith("--") && !VALUED.has(args[i - 1] ?? ""))
const kind = flag("--account") ?? "eoa"
const counterfactual = args.includes("--counterfactual")
if (kind !== "eoa" && kind !== "safe" && kind !== "4337" && kind !== "7702") {
  console.error(`--account must be eoa, safe, 4337 or 7702, not ${kind}\n${USAGE}`)
  process.exit(2)
}
if (counterfactual && kind !== "safe" && kind !== "4337") {
  console.error(`--counterfactual is for --account safe or 4337 only\n${USAGE}`)
  process.exit(2)
}
const apiKey = flag("--api-key") ?? process.env.WALLET_API_KEY
if (payment === undefined || apiKey === undefined) {
  console.error(USAGE)
  process.exit(2)
}

const engine = chooseEngine(payment, { flag: flag("--engine"), env: process.env.ENGINE_URL })
const engineUrl = engine.url
const privateKey = process.env.WALLET_KEY as Hex | undefined
console.log(`engine ${engineUrl} (from ${engine.from})`)
payWithWallet({
  engineUrl,
  payment,
  apiKey,
  account: kind,
  counterfactual,
  token: flag("--token") ?? "USDC",
  ...(privateKey === undefined ? { faucetTokens: 1000n } : { privateKey }),
  log: (line: string) => console.log(line)
}).then(
  (outcome) => {
    console.log(`payment ${outcome.status}${outcome.txId ? `, transaction ${outcome.txId}` : ""}`)
    process.exit(outcome.status === "succeeded" ? 0 : 1)
  },
  (error: Error) => {
    const other = engine.from === "--engine" ? "" : "; --engine <url> or ENGINE_URL names another"
    console.error(`error: ${error.message} (engine ${engineUrl}, from ${engine.from}${other})`)
    process.exit(1)
  }
)
