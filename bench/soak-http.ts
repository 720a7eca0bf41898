/**
 * The soak bench's HTTP client: wallet-support's lean node:http client (keep-alive, as a
 * partner's backend and a wallet SDK talk to the engine), plus what a client that runs for
 * twenty minutes meets and a short bench does not. A kept-alive connection left idle is
 * closed by the server after its keep-alive timeout (5 s, later when its loop is busy), and
 * a request sent just then on that socket meets a closed connection (ECONNRESET, "socket
 * hang up") before the server has read it: seen twice in a 6-minute run, on sockets idle
 * 6.0 s. So the agent drops a socket idle for 4 s itself, and, as Node's documentation
 * says (`request.reusedSocket`), a GET that still meets the race is sent once more (a POST
 * never is); every retry is counted, and a failure says how long its socket had been idle,
 * so that a reset the engine caused is told apart from this race.
 */
import { Agent, request } from "node:http"
import type { Socket } from "node:net"
import { performance } from "node:perf_hooks"
import { type Http, REQUEST_TIMEOUT_MS } from "./wallet-support.js"

export interface SoakHttp extends Http {
  /** GETs sent again after their kept-alive socket was closed under them, with how long it had been idle. */
  readonly retries: () => ReadonlyArray<number>
}

const IDLE_SOCKET_MS = 4000
const RACE_CODES = new Set(["ECONNRESET", "ECONNREFUSED", "EPIPE"])

export const soakHttp = (baseUrl: string): SoakHttp => {
  // Idle sockets dropped after 4 s, before the server's 5 s: fewer requests meet the race.
  const agent = new Agent({
    keepAlive: true,
    timeout: IDLE_SOCKET_MS,
    maxSockets: Number.POSITIVE_INFINITY
  })
  // When each socket last finished a response: how long it idled before a reuse failed.
  const freedAt = new WeakMap<Socket, number>()
  const retried: Array<number> = []
  const once = (
    method: "GET" | "POST",
    path: string,
    options: { readonly headers?: Record<string, string>; readonly body?: unknown },
    mayRetry: boolean
  ): Promise<{ readonly status: number; readonly text: string }> =>
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
        req.destroy(new Error(`no answer in ${REQUEST_TIMEOUT_MS} ms`))
      )
      req.on("response", (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => {
          if (req.socket !== null) freedAt.set(req.socket, performance.now())
          done({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") })
        })
        res.on("error", fail)
      })
      req.on("error", (error: NodeJS.ErrnoException) => {
        const freed = req.socket === null ? undefined : freedAt.get(req.socket)
        const idleMs = freed === undefined ? Number.NaN : performance.now() - freed
        const raced =
          req.reusedSocket &&
          (RACE_CODES.has(error.code ?? "") || error.message === "socket hang up")
        if (raced && mayRetry) {
          retried.push(idleMs)
          once(method, path, options, false).then(done, fail)
          return
        }
        fail(
          new Error(
            `${error.message}${req.reusedSocket ? ` (a kept-alive socket, idle ${idleMs.toFixed(0)} ms)` : ""}`
          )
        )
      })
      req.end(body)
    })
  return {
    call: (method, path, options = {}) => once(method, path, options, method === "GET"),
    close: () => agent.destroy(),
    retries: () => retried
  }
}
