/**
 * `npm run wallet -- <payment id or link> --api-key <wallet app key>`: pays a
 * payment on the sandbox chain with a new local key, funded by the faucet.
 * ENGINE_URL (default http://127.0.0.1:8080) names the engine; WALLET_KEY
 * (0x…) pays from a key of your own instead.
 */
import type { Hex } from "viem"
import { payWithWallet } from "./payWithWallet.js"

const args = process.argv.slice(2)
const flag = (name: string) => {
  const i = args.indexOf(name)
  return i === -1 ? undefined : args[i + 1]
}
const payment = args.find((a, i) => !a.startsWith("--") && !args[i - 1]?.startsWith("--"))
const apiKey = flag("--api-key") ?? process.env.WALLET_API_KEY
if (payment === undefined || apiKey === undefined) {
  console.error("usage: npm run wallet -- <payment id or gatewayUrl> --api-key <wallet app key>")
  process.exit(2)
}
const privateKey = process.env.WALLET_KEY as Hex | undefined
payWithWallet({
  engineUrl: (process.env.ENGINE_URL ?? "http://127.0.0.1:8080").replace(/\/+$/, ""),
  payment,
  apiKey,
  ...(privateKey === undefined ? { faucet: 1_000_000_000n } : { privateKey }),
  log: (line) => console.log(line)
}).then(
  (outcome) => {
    console.log(`payment ${outcome.status}${outcome.txId ? `, transaction ${outcome.txId}` : ""}`)
    process.exit(outcome.status === "succeeded" ? 0 : 1)
  },
  (error: Error) => {
    console.error(`error: ${error.message}`)
    process.exit(1)
  }
)
