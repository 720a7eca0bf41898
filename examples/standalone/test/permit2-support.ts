/**
 * The sandbox's tokens as the Permit2 suites read them (permit2.e2e,
 * permit2-accounts.e2e): a token by symbol, balances and transfer events on
 * the in-process chain, and a merchant settled in every token, so a buyer is
 * offered USDC (EIP-3009), USDT and DAI (Permit2) alike.
 */
import { type Address, parseAbi } from "viem"
import type { Client, E2eServer } from "./e2e-support.js"
import { MERCHANT_DESTINATION, merchantSettledIn } from "./gateway-support.js"

/** Uniswap's Permit2, at its canonical address (the sandbox's own is placed there). */
export const PERMIT2: Address = "0x000000000022D473030F116dDEE9F6B43aC78BA3"

export const erc20 = parseAbi([
  "function approve(address spender, uint256 amount)",
  "function allowance(address owner, address spender) view returns (uint256)",
  "function balanceOf(address owner) view returns (uint256)",
  "event Transfer(address indexed from, address indexed to, uint256 value)"
])

/** The sandbox token of that symbol. */
export const tokenOf = (server: E2eServer, symbol: string) => {
  const found = server.sandbox.tokens.find((t) => t.symbol === symbol)
  if (found === undefined) throw new Error(`no sandbox ${symbol}`)
  return found
}

export const tokenBalance = (server: E2eServer, symbol: string, owner: Address) =>
  server.sandbox.publicClient.readContract({
    address: tokenOf(server, symbol).address,
    abi: erc20,
    functionName: "balanceOf",
    args: [owner]
  })

/** The token's transfer events since genesis, from and to whom `args` say. */
export const tokenTransfers = (
  server: E2eServer,
  symbol: string,
  args: { readonly from?: Address; readonly to?: Address }
) =>
  server.sandbox.publicClient.getContractEvents({
    address: tokenOf(server, symbol).address,
    abi: erc20,
    eventName: "Transfer",
    args,
    fromBlock: 0n
  })

/** A merchant settled in every sandbox token, at MERCHANT_DESTINATION; its id. */
export const everyTokenMerchant = async (partner: Client, server: E2eServer) =>
  (
    await merchantSettledIn(
      partner,
      server.sandbox.tokens.map((t) => ({
        asset: t.asset,
        destination: `eip155:31337:${MERCHANT_DESTINATION}`
      }))
    )
  ).merchantId
