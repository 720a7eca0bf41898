/**
 * Browser tests' support: the system's Chromium (Debian's `chromium`) driven
 * by `playwright-core`, which downloads nothing. Chromium starts headless with
 * the flags that keep it off the network and a fresh profile folder, and every
 * request a page makes goes through a route that lets only loopback through:
 * anything else is aborted and remembered, so a test can require that a page
 * reached nothing but the server under test.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type BrowserContext, chromium, type Page } from "playwright-core"

/** Headless, no GPU, no QUIC, and none of Chromium's own calls home (updates, sync, first run). */
export const CHROMIUM_FLAGS: ReadonlyArray<string> = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

/** Where Debian's (and older Ubuntu's) package puts it. */
export const CHROMIUM_CANDIDATES: ReadonlyArray<string> = [
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser"
]

const HOW_TO_INSTALL =
  "Install it with `sudo apt-get install chromium` (Debian/Ubuntu), or set CHROMIUM_PATH to a " +
  "Chromium or Chrome binary. The browser tests are not skipped without it."

/**
 * The Chromium binary: `CHROMIUM_PATH`, else the first of `candidates` that exists. Throws,
 * saying how to install it, when there is none: a missing browser fails the run.
 */
export const findChromium = (
  env: NodeJS.ProcessEnv = process.env,
  candidates: ReadonlyArray<string> = CHROMIUM_CANDIDATES
): string => {
  const named = env.CHROMIUM_PATH
  if (named !== undefined && named !== "") {
    if (!existsSync(named)) {
      throw new Error(`CHROMIUM_PATH is ${named}, which does not exist. ${HOW_TO_INSTALL}`)
    }
    return named
  }
  const found = candidates.find((path) => existsSync(path))
  if (found === undefined) {
    throw new Error(
      `The browser tests need Chromium, and none was found (CHROMIUM_PATH is not set; looked at ${candidates.join(", ")}). ${HOW_TO_INSTALL}`
    )
  }
  return found
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"])

/** Whether a request stays on this machine: a loopback host, or no host at all (data:, blob:). */
export const isLoopback = (url: string): boolean => {
  const parsed = new URL(url)
  if (parsed.protocol === "data:" || parsed.protocol === "blob:") return true
  return LOOPBACK_HOSTS.has(parsed.hostname)
}

export interface TestBrowser {
  readonly context: BrowserContext
  readonly newPage: () => Promise<Page>
  /** The URLs pages tried to reach off loopback, each aborted: empty when all stayed local. */
  readonly offLoopback: ReadonlyArray<string>
  /** Content-Security-Policy violations the pages reported. */
  readonly cspViolations: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

/** Starts Chromium on a new profile folder; `close` stops it and removes the folder. */
export const launchBrowser = async (): Promise<TestBrowser> => {
  const executablePath = findChromium()
  const profile = mkdtempSync(join(tmpdir(), "pay-chromium-"))
  const offLoopback: Array<string> = []
  const cspViolations: Array<string> = []
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args: [...CHROMIUM_FLAGS]
    })
    await context.route("**/*", (route) => {
      const url = route.request().url()
      if (isLoopback(url)) return route.continue()
      offLoopback.push(url)
      return route.abort("blockedbyclient")
    })
    // WebSockets are not requests: the same rule for them.
    await context.routeWebSocket(/.*/, (socket) => {
      if (isLoopback(socket.url())) return socket.connectToServer()
      offLoopback.push(socket.url())
      return socket.close()
    })
    context.on("console", (message) => {
      if (/Content.Security.Policy/i.test(message.text())) cspViolations.push(message.text())
    })
    return {
      context,
      newPage: () => context.newPage(),
      offLoopback,
      cspViolations,
      close: async () => {
        await context.close()
        rmSync(profile, { recursive: true, force: true })
      }
    }
  } catch (error) {
    rmSync(profile, { recursive: true, force: true })
    throw error
  }
}
