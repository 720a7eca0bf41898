/**
 * JSON-RPC 2.0 in front of EDR: requests and batches checked as the spec
 * says (parse error, invalid request, method not found, with the caller's id),
 * and EDR's revert errors rewritten as Ethereum nodes answer them (code 3,
 * "execution reverted: <reason>", the revert data as hex) so viem and wallets
 * decode them. For the sandbox's `/sandbox/rpc` route and its viem transport.
 */
import { decodeErrorResult, type Hex, isHex } from "viem"
import type { EdrFailure, EdrRequest, EdrResponse } from "./Edr.js"

export type JsonRpcId = string | number | null

export interface JsonRpcErrorObject {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

export type JsonRpcResponse =
  | { readonly jsonrpc: "2.0"; readonly id: JsonRpcId; readonly result: unknown }
  | { readonly jsonrpc: "2.0"; readonly id: JsonRpcId; readonly error: JsonRpcErrorObject }

/** An EIP-1193 provider error: what `request` rejects with. */
export class JsonRpcError extends Error {
  readonly code: number
  readonly data: unknown
  constructor(error: JsonRpcErrorObject) {
    super(error.message)
    this.name = "JsonRpcError"
    this.code = error.code
    this.data = error.data
  }
}

export const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600
export const METHOD_NOT_FOUND = -32601
export const INTERNAL_ERROR = -32603
/** Geth's code for a reverted call or gas estimate. */
export const EXECUTION_REVERTED = 3

export interface JsonRpcOptions {
  /** Which methods callers may use; the others answer "method not found". All by default. */
  readonly allow?: ((method: string) => boolean) | undefined
  /** The most requests one batch may hold (default 100). */
  readonly maxBatch?: number | undefined
}

/**
 * What a public `/sandbox/rpc` passes (`allow: isPublicMethod`): the reads and
 * the sends of signed transactions that a wallet and the engine make, and
 * nothing else. Left out: whatever changes the chain by fiat rather than by a
 * signed transaction (time travel, balances, impersonation, snapshots), signs
 * with the node's own keys, or debugs; `GET /sandbox` lists these.
 */
export const PUBLIC_METHODS: ReadonlyArray<string> = [
  "eth_blockNumber",
  "eth_call",
  "eth_chainId",
  "eth_estimateGas",
  "eth_feeHistory",
  "eth_gasPrice",
  "eth_getBalance",
  "eth_getBlockByHash",
  "eth_getBlockByNumber",
  "eth_getCode",
  "eth_getLogs",
  "eth_getStorageAt",
  "eth_getTransactionByHash",
  "eth_getTransactionCount",
  "eth_getTransactionReceipt",
  "eth_maxPriorityFeePerGas",
  "eth_sendRawTransaction",
  "eth_syncing",
  "net_version",
  "web3_clientVersion"
]

const publicMethods = new Set(PUBLIC_METHODS)

/** Whether a public `/sandbox/rpc` passes `method` (PUBLIC_METHODS). */
export const isPublicMethod = (method: string): boolean => publicMethods.has(method)

/** The revert data inside an EDR error, if the error is a revert. */
const revertData = (error: EdrFailure): Hex | undefined => {
  const data = error.data
  if (typeof data !== "object" || data === null || !("data" in data)) return undefined
  const inner = (data as { data: unknown }).data
  return typeof inner === "string" && isHex(inner) ? inner : undefined
}

const revertReason = (data: Hex): string | undefined => {
  try {
    const decoded = decodeErrorResult({ abi: [], data })
    if (decoded.errorName === "Error") return String(decoded.args?.[0])
    if (decoded.errorName === "Panic") return `panic code ${String(decoded.args?.[0])}`
  } catch {
    // a custom error: the data carries it
  }
  return undefined
}

/** EDR's error as a node would give it. */
export const normalizeError = (error: EdrFailure): JsonRpcErrorObject => {
  const data = revertData(error)
  if (data !== undefined) {
    const reason = revertReason(data)
    return {
      code: EXECUTION_REVERTED,
      message: reason === undefined ? "execution reverted" : `execution reverted: ${reason}`,
      data
    }
  }
  // EDR echoes the request as `data` of other errors: the caller has it already.
  return { code: error.code, message: error.message }
}

type Call = (request: EdrRequest) => Promise<EdrResponse>

const failure = (id: JsonRpcId, code: number, message: string): JsonRpcResponse => ({
  jsonrpc: "2.0",
  id,
  error: { code, message }
})

const isId = (id: unknown): id is JsonRpcId =>
  id === null || typeof id === "string" || (typeof id === "number" && Number.isFinite(id))

/** One request object; `undefined` for a notification (no `id`), which gets no answer. */
const one = async (
  call: Call,
  item: unknown,
  options: JsonRpcOptions
): Promise<JsonRpcResponse | undefined> => {
  if (typeof item !== "object" || item === null || Array.isArray(item)) {
    return failure(null, INVALID_REQUEST, "Invalid Request: expected a JSON-RPC 2.0 object")
  }
  const request = item as Record<string, unknown>
  const hasId = "id" in request
  const id: JsonRpcId = hasId && isId(request.id) ? request.id : null
  if (hasId && !isId(request.id)) {
    return failure(null, INVALID_REQUEST, "Invalid Request: id must be a string, number or null")
  }
  if (request.jsonrpc !== "2.0") {
    return failure(id, INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"')
  }
  if (typeof request.method !== "string" || request.method.length === 0) {
    return failure(id, INVALID_REQUEST, "Invalid Request: method must be a non-empty string")
  }
  const params = request.params
  if (params !== undefined && (typeof params !== "object" || params === null)) {
    return failure(id, INVALID_REQUEST, "Invalid Request: params must be an array or an object")
  }
  const method = request.method
  const answer = async (): Promise<JsonRpcResponse> => {
    if (options.allow !== undefined && !options.allow(method)) {
      return failure(id, METHOD_NOT_FOUND, `Method ${method} is not available here`)
    }
    try {
      const response = await call({ jsonrpc: "2.0", id, method, params })
      return "error" in response
        ? { jsonrpc: "2.0", id, error: normalizeError(response.error) }
        : { jsonrpc: "2.0", id, result: response.result }
    } catch (e) {
      return failure(id, INTERNAL_ERROR, `Internal error: ${(e as Error).message}`)
    }
  }
  const response = await answer()
  return hasId ? response : undefined
}

/**
 * Answers a JSON-RPC 2.0 body: a request object, a batch (an array, run in
 * order), or a string holding either. The result is the response object, an
 * array of them for a batch, or `undefined` when nothing is owed (only
 * notifications): an HTTP route then answers 204.
 */
export const handleJsonRpc = async (
  call: Call,
  body: unknown,
  options: JsonRpcOptions = {}
): Promise<JsonRpcResponse | ReadonlyArray<JsonRpcResponse> | undefined> => {
  let parsed = body
  if (typeof body === "string") {
    try {
      parsed = JSON.parse(body)
    } catch {
      return failure(null, PARSE_ERROR, "Parse error: the body is not JSON")
    }
  }
  if (!Array.isArray(parsed)) return one(call, parsed, options)
  if (parsed.length === 0) return failure(null, INVALID_REQUEST, "Invalid Request: empty batch")
  const maxBatch = options.maxBatch ?? 100
  if (parsed.length > maxBatch) {
    return failure(null, INVALID_REQUEST, `Invalid Request: a batch holds at most ${maxBatch}`)
  }
  const responses: Array<JsonRpcResponse> = []
  for (const item of parsed) {
    const response = await one(call, item, options)
    if (response !== undefined) responses.push(response)
  }
  return responses.length === 0 ? undefined : responses
}

/** An EIP-1193 `request`: the result, or a rejection with a {@link JsonRpcError}. */
export const request = async (
  call: Call,
  args: { readonly method: string; readonly params?: unknown },
  id: number
): Promise<unknown> => {
  const response = await call({ jsonrpc: "2.0", id, method: args.method, params: args.params })
  if ("error" in response) throw new JsonRpcError(normalizeError(response.error))
  return response.result
}
