/**
 * The README's walk-through, as a test: the example wallet pays a payment on
 * the sandbox chain of a real server, from its buyer link; and
 * `npm run wallet -- <link>` does, as its own process, through the engine the
 * link names (here on a port of its own, not the default 8080).
 */

import { execFile } from "node:child_process"
import { createServer } from "node:net"
import { join } from "node:path"
import { promisify } from "node:util"
import { payWithWallet } from "@pay/sandbox"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, type E2eServer, startServer } from "../standalone/test/e2e-support.js"
import {
  baseOnlyMerchant,
  paymentFor,
  settledMerchant,
  usdcBalance,
  walletClient
} from "../standalone/test/gateway-support.js"

const root = join(import.meta.dirname, "..", "..")

describe("the example wallet", () => {
  let server: E2eServer
  beforeAll(async () => {
    server = await startServer("sqlite")
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
  })

  it("pays from the buyer link with a new key the faucet funds", async () => {
    const partner = client(() => server.baseUrl)
    const { apiKey } = await walletClient(server)
    const merchantId = await settledMerchant(partner)
    const { gatewayUrl, paymentId } = await paymentFor(partner, merchantId, "2500")
    const lines: Array<string> = []
    const outcome = await payWithWallet({
      engineUrl: server.baseUrl,
      payment: gatewayUrl,
      apiKey,
      faucet: 100_000_000n,
      log: (line) => lines.push(line)
    })
    expect(outcome.status, lines.join("\n")).toBe("succeeded")
    expect(outcome.txId).toMatch(/^0x[0-9a-f]{64}$/)
    const buyer = outcome.buyer.split(":")[2] as `0x${string}`
    expect(await usdcBalance(server, buyer)).toBe(75_000_000n)
    const status = await partner.get(`/v1/payments/${paymentId}`)
    expect(status.body.status).toBe("succeeded")
  }, 60_000)

  it("says, in the engine's words, why there is no way to pay a merchant settled only on Base", async () => {
    const partner = client(() => server.baseUrl)
    const { apiKey } = await walletClient(server)
    const { merchantId, warnings } = await baseOnlyMerchant(partner)
    expect(warnings?.[0]?.code).toBe("asset_not_payable")
    const { gatewayUrl } = await paymentFor(partner, merchantId, "300")
    await expect(
      payWithWallet({ engineUrl: server.baseUrl, payment: gatewayUrl, apiKey, log: () => {} })
    ).rejects.toThrow(/no option for this account: This merchant is paid only in USDC on Base/)
  }, 60_000)

  /** What `npm run wallet -- …` runs, without ENGINE_URL: the engine comes from the link. */
  const walletProcess = (...args: Array<string>) => {
    const { ENGINE_URL: _, ...env } = process.env
    return promisify(execFile)(
      join(root, "node_modules/.bin/tsx"),
      ["--conditions=@pay/source", "packages/sandbox/src/wallet-main.ts", ...args],
      { cwd: root, env }
    ).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (e: { code: number; stdout: string; stderr: string }) => e
    )
  }

  it("as `npm run wallet -- <link>`, pays through the engine the link names", async () => {
    const partner = client(() => server.baseUrl)
    const { apiKey } = await walletClient(server)
    const merchantId = await settledMerchant(partner)
    const { gatewayUrl } = await paymentFor(partner, merchantId, "300")
    // The buyer link on the port this server listens on (a free one, not 8080): this
    // in-process server's publicUrl has no port, a started one's link has it.
    const link = `${server.baseUrl}${new URL(gatewayUrl).pathname}`
    expect(new URL(link).port).not.toBe("8080")
    const paid = await walletProcess(link, "--api-key", apiKey)
    expect(paid.code, paid.stdout + paid.stderr).toBe(0)
    expect(paid.stdout.split("\n")[0]).toBe(`engine ${server.baseUrl} (from the link)`)
    expect(paid.stdout).toMatch(/\npayment succeeded, transaction 0x[0-9a-f]{64}\n/)
  }, 60_000)

  it("as `npm run wallet`, names the URL it could not reach and why", async () => {
    const port = await new Promise<number>((resolve) => {
      const free = createServer().listen(0, "127.0.0.1", () => {
        const { port } = free.address() as { port: number }
        free.close(() => resolve(port))
      })
    })
    const refused = await walletProcess(
      `http://127.0.0.1:${port}/pay_0VbwidLqwuKFpwkHdyef`,
      "--api-key",
      "pk_x"
    )
    expect(refused.code).toBe(1)
    expect(refused.stderr).toBe(
      `error: could not reach http://127.0.0.1:${port}/sandbox: connect ECONNREFUSED 127.0.0.1:${port} (engine http://127.0.0.1:${port}, from the link; --engine <url> or ENGINE_URL names another)\n`
    )
  }, 30_000)
})
