/**
 * Test support (not a test): a fault-injecting JSON-RPC proxy on 127.0.0.1 in
 * front of a node (the chain server, `npm run chain`), for crash tests.
 *
 * - `down()` closes the listener and destroys every open socket (held requests'
 *   too): clients see connections reset, then refused. `up()` listens again on
 *   the SAME port, so the client's configured URL keeps working.
 * - `hold(predicate)` parks the requests the predicate matches: their clients
 *   wait, nothing reaches the node, until `release(mode)`:
 *   - "forward": sent to the node, its answer to the client;
 *   - "drop": never sent; the client's socket is destroyed (a network error);
 *   - "forward-then-drop": sent to the node, but the client's socket is
 *     destroyed instead of answered (the ambiguous case: the transaction went
 *     out, the client saw an error).
 *   A batch is held whole when any of its requests matches.
 * - `count(method)`: how many requests (batch members counted one by one) the
 *   proxy has seen for a method, `count()` in all.
 *
 * A held request whose client gave up meanwhile is still sent on "forward".
 * A body that is not JSON-RPC is passed through as it is; when the node cannot
 * be reached, the client's socket is destroyed, as if the proxy were the node.
 *
 * `decodeRawTransaction` and `sendsCallTo` let a predicate pick one send: e.g.
 * only the ERC-20 `transfer` (`SELECTORS.transfer`) or only
 * `receiveWithAuthorization`.
 */
import {
  Agent,
  createServer as createHttpServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse
} from "node:http"
import type { AddressInfo, Socket } from "node:net"
import {
  type Address,
  type Hash,
  type Hex,
  isHex,
  keccak256,
  parseTransaction,
  sliceHex,
  toFunctionSelector
} from "viem"

/** One JSON-RPC request as the proxy saw it. */
export interface RpcCall {
  readonly method: string
  readonly params: ReadonlyArray<unknown>
}

export type HoldPredicate = (request: RpcCall) => boolean

export type ReleaseMode = "forward" | "drop" | "forward-then-drop"

export interface HeldRequest {
  /** The first request of the body the predicate matched. */
  readonly method: string
  readonly params: ReadonlyArray<unknown>
  /** Every request of the body: one, or a batch's. */
  readonly calls: ReadonlyArray<RpcCall>
  readonly batch: boolean
  readonly body: string
}

export interface Holder {
  /** What is held now, awaiting release, in arrival order. */
  readonly held: ReadonlyArray<HeldRequest>
  /** Resolves once at least `count` (1) are held; rejects after `timeoutMs` (10 s). */
  readonly waitForHeld: (count?: number, timeoutMs?: number) => Promise<ReadonlyArray<HeldRequest>>
  /**
   * Releases the first `count` held (all by default), one after the other in
   * arrival order, and resolves when each was answered, forwarded or dropped;
   * with how many were released.
   */
  readonly release: (mode: ReleaseMode, count?: number) => Promise<number>
  /** Holds no new requests; what is held stays held until released. */
  readonly stop: () => void
}

export interface RpcProxy {
  /** `http://127.0.0.1:<port>`, the same across down/up. */
  readonly url: string
  readonly port: number
  readonly upstreamUrl: string
  readonly isUp: () => boolean
  /** Closes the listener and destroys the open sockets: connections are refused. */
  readonly down: () => Promise<void>
  /** Listens again on the same port. */
  readonly up: () => Promise<void>
  readonly hold: (predicate: HoldPredicate) => Holder
  /** Requests seen for `method` (every method without one), batch members one by one. */
  readonly count: (method?: string) => number
  /** Every request seen, in order. */
  readonly seen: ReadonlyArray<RpcCall>
  /** Stops holding, drops what is held, closes the listener and the upstream connections. */
  readonly close: () => Promise<void>
}

/** Selectors of the sends a test may want to hold. */
export const SELECTORS = {
  /** ERC-20 transfer(address,uint256): 0xa9059cbb */
  transfer: toFunctionSelector("transfer(address,uint256)"),
  /** EIP-3009 receiveWithAuthorization with v, r, s. */
  receiveWithAuthorization: toFunctionSelector(
    "receiveWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)"
  ),
  /** EIP-3009 receiveWithAuthorization with a `bytes` signature. */
  receiveWithAuthorizationBytes: toFunctionSelector(
    "receiveWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)"
  ),
  transferWithAuthorization: toFunctionSelector(
    "transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)"
  )
} as const

export interface DecodedTransaction {
  readonly to: Address | null
  readonly nonce: number
  /** The first 4 bytes of the call data, lower case; null for a plain transfer or a deployment. */
  readonly selector: Hex | null
  /** keccak256 of the raw transaction: its hash on chain. */
  readonly hash: Hash
}

/** The parts of a signed raw transaction a hold predicate looks at. */
export const decodeRawTransaction = (raw: Hex): DecodedTransaction => {
  const tx = parseTransaction(raw)
  const data = tx.data
  return {
    to: tx.to ?? null,
    nonce: tx.nonce ?? 0,
    selector:
      data !== undefined && data.length >= 10 ? (sliceHex(data, 0, 4).toLowerCase() as Hex) : null,
    hash: keccak256(raw)
  }
}

/**
 * A predicate: an `eth_sendRawTransaction` whose call data starts with one of
 * `selectors`, optionally to a given contract.
 */
export const sendsCallTo =
  (selectors: Hex | ReadonlyArray<Hex>, to?: Address): HoldPredicate =>
  (request) => {
    if (request.method !== "eth_sendRawTransaction") return false
    const raw = request.params[0]
    if (typeof raw !== "string" || !isHex(raw)) return false
    const tx = decodeRawTransaction(raw)
    const wanted = (typeof selectors === "string" ? [selectors] : selectors).map((s) =>
      s.toLowerCase()
    )
    return (
      tx.selector !== null &&
      wanted.includes(tx.selector) &&
      (to === undefined || tx.to?.toLowerCase() === to.toLowerCase())
    )
  }

/** The requests of a body, or none if it is not JSON-RPC. */
const callsOf = (body: string): { calls: ReadonlyArray<RpcCall>; batch: boolean } => {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return { calls: [], batch: false }
  }
  const items = Array.isArray(parsed) ? parsed : [parsed]
  const calls: Array<RpcCall> = []
  for (const item of items) {
    if (typeof item !== "object" || item === null) continue
    const { method, params } = item as { method?: unknown; params?: unknown }
    if (typeof method !== "string") continue
    calls.push({ method, params: Array.isArray(params) ? params : [] })
  }
  return { calls, batch: Array.isArray(parsed) }
}

interface Parked extends HeldRequest {
  readonly req: IncomingMessage
  readonly res: ServerResponse
}

interface HolderState {
  active: boolean
  readonly predicate: HoldPredicate
  readonly parked: Array<Parked>
  readonly onHeld: Set<() => void>
}

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

/** Starts the proxy on 127.0.0.1 (any free port unless `port`) in front of `upstreamUrl`. */
export const startRpcProxy = async (
  upstreamUrl: string,
  options: { readonly port?: number } = {}
): Promise<RpcProxy> => {
  const upstream = new URL(upstreamUrl)
  if (upstream.protocol !== "http:") throw new Error(`the upstream must be http: ${upstreamUrl}`)
  const agent: Agent = new Agent({ keepAlive: true })
  const sockets = new Set<Socket>()
  const holders: Array<HolderState> = []
  const seen: Array<RpcCall> = []
  const counts = new Map<string, number>()
  let listening = false
  let closed = false

  const cut = (req: IncomingMessage) => {
    req.socket.destroy()
  }

  /** Sends the body upstream; answers the client with the node's answer unless `dropAnswer`. */
  const forward = (body: string, req: IncomingMessage, res: ServerResponse, dropAnswer: boolean) =>
    new Promise<void>((resolve) => {
      const outgoing = httpRequest(
        upstream,
        {
          method: "POST",
          agent,
          headers: {
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body)
          }
        },
        (answer) => {
          readBody(answer).then(
            (text) => {
              if (dropAnswer || res.destroyed) cut(req)
              else {
                const headers: Record<string, string | number> = {
                  "content-length": Buffer.byteLength(text)
                }
                const type = answer.headers["content-type"]
                if (type !== undefined) headers["content-type"] = type
                res.writeHead(answer.statusCode ?? 502, headers).end(text)
              }
              resolve()
            },
            () => {
              cut(req)
              resolve()
            }
          )
        }
      )
      outgoing.setTimeout(30_000, () => outgoing.destroy(new Error("upstream timeout")))
      outgoing.on("error", () => {
        cut(req)
        resolve()
      })
      outgoing.end(body)
    })

  const server = createHttpServer({ keepAliveTimeout: 5_000 }, (req, res) => {
    readBody(req).then(
      (body) => {
        const { calls, batch } = callsOf(body)
        for (const call of calls) {
          seen.push(call)
          counts.set(call.method, (counts.get(call.method) ?? 0) + 1)
        }
        for (const holder of holders) {
          if (!holder.active) continue
          const matched = calls.find((call) => {
            try {
              return holder.predicate(call)
            } catch {
              return false
            }
          })
          if (matched === undefined) continue
          holder.parked.push({ ...matched, calls, batch, body, req, res })
          for (const notify of holder.onHeld) notify()
          return
        }
        void forward(body, req, res, false)
      },
      () => cut(req)
    )
  })
  server.on("connection", (socket: Socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })

  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      const onError = (e: Error) => reject(e)
      server.once("error", onError)
      server.listen(port, "127.0.0.1", () => {
        server.off("error", onError)
        listening = true
        resolve()
      })
    })

  await listen(options.port ?? 0)
  const port = (server.address() as AddressInfo).port

  const down = async () => {
    if (!listening) return
    listening = false
    await new Promise<void>((resolve) => {
      server.close(() => resolve())
      for (const socket of sockets) socket.destroy()
    })
  }

  const up = async () => {
    if (closed) throw new Error("the proxy is closed")
    if (listening) return
    await listen(port)
  }

  const hold = (predicate: HoldPredicate): Holder => {
    const state: HolderState = { active: true, predicate, parked: [], onHeld: new Set() }
    holders.push(state)
    const strip = ({ method, params, calls, batch, body }: Parked): HeldRequest => ({
      method,
      params,
      calls,
      batch,
      body
    })
    return {
      get held() {
        return state.parked.map(strip)
      },
      waitForHeld: (count = 1, timeoutMs = 10_000) =>
        new Promise((resolve, reject) => {
          const check = () => {
            if (state.parked.length < count) return false
            clearTimeout(timer)
            state.onHeld.delete(check)
            resolve(state.parked.map(strip))
            return true
          }
          const timer = setTimeout(() => {
            state.onHeld.delete(check)
            reject(
              new Error(
                `waitForHeld: ${state.parked.length} of ${count} held after ${timeoutMs} ms`
              )
            )
          }, timeoutMs)
          if (!check()) state.onHeld.add(check)
        }),
      release: async (mode, count) => {
        const taken = state.parked.splice(0, count ?? state.parked.length)
        for (const parked of taken) {
          if (mode === "drop") cut(parked.req)
          else await forward(parked.body, parked.req, parked.res, mode === "forward-then-drop")
        }
        return taken.length
      },
      stop: () => {
        state.active = false
      }
    }
  }

  const close = async () => {
    if (closed) return
    closed = true
    for (const holder of holders) {
      holder.active = false
      for (const parked of holder.parked.splice(0)) cut(parked.req)
    }
    await down()
    agent.destroy()
  }

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    upstreamUrl,
    isUp: () => listening,
    down,
    up,
    hold,
    count: (method) => (method === undefined ? seen.length : (counts.get(method) ?? 0)),
    get seen() {
      return [...seen]
    },
    close
  }
}
