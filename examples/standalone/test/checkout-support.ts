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
