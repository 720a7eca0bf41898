/**
 * What the wallet bench (wallet.ts, wallet-chain.ts) shares: a lean HTTP client, the
 * percentiles, buyers' keys, and the clocks it reads.
 */
import { Agent, request } from "node:http"
import type { Address, Hex } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"

export const REQUEST_TIMEOUT_MS = 30_000

export interface Percentiles {
  readonly p50: number
  readonly p95: number
  readonly p99: number
  readonly max: number
  readonly mean: number
}

/** Nearest-rank percentiles, as the rest of the bench reports them. */
export const percentiles = (values: ReadonlyArray<number>): Percentiles => {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ??
    Number.NaN
  return {
    p50: at(50),
    p95: at(95),
    p99: at(99),
    max: sorted.at(-1) ?? Number.NaN,
    mean: sorted.reduce((sum, x) => sum + x, 0) / Math.max(1, sorted.length)
  }
}

/** HTTP/1.1 with keep-alive, as a wallet SDK talks to its engine; node:http, not fetch,
 * so the client adds as little as it can to what is timed. */
export interface Http {
  readonly call: (
    method: "GET" | "POST",
    path: string,
    options?: { readonly headers?: Record<string, string>; readonly body?: unknown }
  ) => Promise<{ readonly status: number; readonly text: string }>
  readonly close: () => void
}

export const httpClient = (baseUrl: string): Http => {
  const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY })
  return {
    call: (method, path, options = {}) =>
      new Promise((done, fail) => {
        const body = options.body === undefined ? undefined : JSON.stringify(options.body)
        const req = request(baseUrl + path, {
          method,
          agent,
          headers: {
            ...options.headers,
            ...(body === undefined
              ? {}
              : { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
          }
        })
        req.setTimeout(REQUEST_TIMEOUT_MS, () =>
          req.destroy(new Error(`${method} ${path}: no answer in ${REQUEST_TIMEOUT_MS} ms`))
        )
        req.on("response", (res) => {
          const chunks: Array<Buffer> = []
          res.on("data", (chunk: Buffer) => chunks.push(chunk))
          res.on("end", () =>
            done({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") })
          )
          res.on("error", fail)
        })
        req.on("error", fail)
        req.end(body)
      }),
    close: () => agent.destroy()
  }
}

// biome-ignore lint/suspicious/noExplicitAny: the answers' JSON, checked where it is read
export type Json = any

/** The answer's JSON, or an error naming the call when its status is not the one expected. */
export const expectStatus = async (
  answer: Promise<{ readonly status: number; readonly text: string }>,
  what: string,
  status = 200
): Promise<Json> => {
  const { status: got, text } = await answer
  if (got !== status) throw new Error(`${what} answered ${got}, expected ${status}: ${text}`)
  return text === "" ? undefined : JSON.parse(text)
}

export interface Buyer {
  readonly key: Hex
  readonly address: Address
  /** CAIP-10 on the sandbox chain. */
  readonly account: string
  /** How it signs the typed data JSON, when not with `key` itself (a smart account). */
  readonly signJson?: (typedDataJson: string) => Promise<Hex>
  /**
   * How it signs an `eth_sendTransaction` action's transaction (its JSON: a Permit2
   * approval), answering the raw transaction the wallet then sends; a buyer without it
   * cannot pay an option that asks for a transaction (wallet-permit2.ts).
   */
  readonly signTransactionJson?: (transactionJson: string) => Promise<Hex>
}

export const newBuyer = (): Buyer => {
  const key = generatePrivateKey()
  const address = privateKeyToAccount(key).address
  return { key, address, account: `eip155:31337:${address}` }
}

export { MS_PER_TICK } from "./server-process.js"

/** CLOCK_MONOTONIC in microseconds: the clock of a V8 CPU profile's samples. */
export const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n)

/** `work`, or a failure once `ms` have passed without it: a bench part never runs on unbounded. */
export const withinDeadline = async <A>(work: Promise<A>, ms: number, what: string): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} still running after ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([work, deadline])
  } finally {
    clearTimeout(timer)
  }
}

/** A whole-number setting from the environment, at least `min`. */
export const envInteger = (name: string, fallback: number, min: number) => {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`${name} must be a whole number, at least ${min}`)
  }
  return value
}
