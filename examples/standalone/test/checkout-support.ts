/**
 * Checkout browser tests' support: where screenshots go, the QR code read back
 * from a screenshot, and axe-core run inside a page.
 *
 * Screenshots go to a new temporary folder unless `CHECKOUT_SCREENSHOTS_DIR`
 * names one: `npm run screenshots` points it at docs/images/checkout to refresh
 * the copies the docs show. A plain test run never writes into the repository.
 */
import { mkdtempSync, readFileSync } from "node:fs"
import { mkdir } from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import jsQR from "jsqr"
import type { Locator, Page } from "playwright-core"
import { PNG } from "pngjs"
import type { TypedDataDefinition } from "viem"

export const screenshotDir = (): string =>
  process.env.CHECKOUT_SCREENSHOTS_DIR !== undefined && process.env.CHECKOUT_SCREENSHOTS_DIR !== ""
    ? process.env.CHECKOUT_SCREENSHOTS_DIR
    : mkdtempSync(join(tmpdir(), "pay-checkout-screens-"))

/** Saves the page as `<name>.png` in `dir`, phone-sized. */
export const saveScreenshot = async (page: Page, dir: string, name: string): Promise<void> => {
  await mkdir(dir, { recursive: true })
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true })
}

/** The text of the QR code in an element's screenshot, or undefined when none is read. */
export const readQr = async (element: Locator): Promise<string | undefined> => {
  const png = PNG.sync.read(await element.screenshot())
  const code = jsQR(new Uint8ClampedArray(png.data), png.width, png.height)
  return code?.data
}

const axeSource = readFileSync(
  createRequire(import.meta.url).resolve("axe-core/axe.min.js"),
  "utf8"
)

export interface AxeViolation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<string>
}

/**
 * axe-core's violations of `serious` or `critical` impact on the page as it is. Injected
 * through the debugging protocol (`evaluate`), which the page's CSP does not govern.
 */
export const seriousViolations = async (page: Page): Promise<Array<AxeViolation>> => {
  await page.evaluate(axeSource)
  const violations = await page.evaluate(async () => {
    // biome-ignore lint/suspicious/noExplicitAny: axe is the global the injected source defines
    const axe = (window as any).axe
    const result = await axe.run(document, { resultTypes: ["violations"] })
    return (
      result.violations as Array<{
        id: string
        impact: string | null
        help: string
        nodes: Array<{ target: Array<string> }>
      }>
    ).map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => n.target.join(" "))
    }))
  })
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical")
}

/** What the injected wallet was asked, in order: each method with its params. */
export interface WalletCall {
  readonly method: string
  readonly params: unknown
}

declare global {
  interface Window {
    /** The page-side end of the test wallet: each request goes to the test (exposeFunction). */
    testWalletRequest?: (method: string, params: string) => Promise<string>
    /** The states the page's body went through, in order. */
    checkoutStates?: Array<string>
  }
}

/**
 * Injects an EIP-1193 wallet into every page, announced through EIP-6963, whose requests
 * are answered here: accounts, the chain (switched on request), and `eth_signTypedData_v4`
 * signed with `key` (viem's local account), as a browser extension would after the buyer
 * approves; or, given `account`, as that smart account signs (a Safe's owner signature, an
 * ERC-6492 wrapper), the wallet's address being the account's. Also records every state the
 * page's body shows.
 */
export const injectWallet = async (
  page: Page,
  key: `0x${string}`,
  options: {
    readonly chainId?: string
    readonly rejectSigning?: boolean
    /**
     * Answers `eth_sendTransaction` (the transaction as the page passed it, numbers in hex):
     * sends it and resolves with its hash. Without it the method is unsupported.
     */
    readonly sendTransaction?: (tx: Record<string, string>) => Promise<`0x${string}`>
    readonly account?: {
      readonly address: `0x${string}`
      readonly signTypedData: (typed: TypedDataDefinition) => Promise<`0x${string}`>
    }
  } = {}
): Promise<Array<WalletCall>> => {
  const { privateKeyToAccount } = await import("viem/accounts")
  const { typedDataFromJson } = await import("@pay/core")
  const account = options.account ?? privateKeyToAccount(key)
  const calls: Array<WalletCall> = []
  let chainId = options.chainId ?? "0x1"
  await page.exposeFunction("testWalletRequest", async (method: string, raw: string) => {
    const params = JSON.parse(raw) as Array<unknown>
    calls.push({ method, params })
    switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return JSON.stringify({ result: [account.address] })
      case "eth_chainId":
        return JSON.stringify({ result: chainId })
      case "wallet_switchEthereumChain":
        chainId = (params[0] as { chainId: string }).chainId
        return JSON.stringify({ result: null })
      case "eth_signTypedData_v4": {
        if (options.rejectSigning) {
          return JSON.stringify({ error: { code: 4001, message: "User rejected the request." } })
        }
        if (chainId !== "0x7a69") {
          return JSON.stringify({ error: { code: 4900, message: `signing on ${chainId}` } })
        }
        // Any typed data the page is handed (EIP-3009's, a Permit2 permit with its witness).
        const signature = await account.signTypedData(typedDataFromJson(params[1] as string))
        return JSON.stringify({ result: signature })
      }
      case "eth_sendTransaction": {
        if (options.sendTransaction === undefined) {
          return JSON.stringify({ error: { code: 4200, message: `${method} is not supported` } })
        }
        const tx = params[0] as Record<string, string>
        return JSON.stringify({ result: await options.sendTransaction(tx) })
      }
      default:
        return JSON.stringify({ error: { code: 4200, message: `${method} is not supported` } })
    }
  })
  await page.addInitScript(() => {
    const provider = {
      request: async ({ method, params }: { method: string; params?: unknown }) => {
        const answer = JSON.parse(
          await window.testWalletRequest!(method, JSON.stringify(params ?? []))
        )
        if (answer.error) throw Object.assign(new Error(answer.error.message), answer.error)
        return answer.result
      },
      on: () => undefined,
      removeListener: () => undefined
    }
    const info = Object.freeze({
      uuid: "7c2a1f60-0000-4000-8000-000000000001",
      name: "Test Wallet",
      icon: "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 1 1'%3E%3Crect width='1' height='1' fill='%23f6851b'/%3E%3C/svg%3E",
      rdns: "example.test-wallet"
    })
    const announce = () =>
      window.dispatchEvent(
        new CustomEvent("eip6963:announceProvider", { detail: Object.freeze({ info, provider }) })
      )
    window.addEventListener("eip6963:requestProvider", announce)
    announce()
    window.checkoutStates = []
    const record = () => {
      const state = document.body?.getAttribute("data-state")
      const states = window.checkoutStates!
      if (state && states[states.length - 1] !== state) states.push(state)
    }
    document.addEventListener("DOMContentLoaded", record)
    new MutationObserver(record).observe(document, {
      attributes: true,
      subtree: true,
      attributeFilter: ["data-state"]
    })
  })
  return calls
}
