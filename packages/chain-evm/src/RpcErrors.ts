/**
 * What a viem error means for the engine: the network did not answer
 * (`ChainUnavailable`, counted as an RPC error), or it answered and refused
 * (a revert, a rejected transaction), and in whose words.
 */
import { ChainUnavailable, countRpcError } from "@pay/core"
import { BaseError, decodeErrorResult, type Hex, isHex, size, slice } from "viem"

/** The shortest useful account of a viem error: its short message and details, not its whole dump. */
export const describe = (error: unknown): string =>
  error instanceof BaseError
    ? [error.shortMessage, error.details].filter((s) => s && s.length > 0).join(": ")
    : error instanceof Error
      ? error.message
      : String(error)

/** The errors an error stands on: viem's own chain (`walk`), then each `cause`. */
const causesOf = (error: unknown): Array<unknown> => {
  const found: Array<unknown> = []
  let current: unknown = error
  while (current !== undefined && current !== null && found.length < 16) {
    found.push(current)
    current = (current as { cause?: unknown }).cause
  }
  return found
}

/**
 * The RPC endpoint's host and the low-level cause of an error, for the operator's log:
 * only the host, never the URL (RPC URLs often carry an API key in their path).
 */
const whereAndWhy = (error: unknown): { rpcHost?: string; cause?: string } => {
  const found: { rpcHost?: string; cause?: string } = {}
  for (const e of causesOf(error)) {
    const { url, code, name } = e as { url?: unknown; code?: unknown; name?: unknown }
    if (found.rpcHost === undefined && typeof url === "string" && URL.canParse(url)) {
      found.rpcHost = new URL(url).host
    }
    // ECONNREFUSED, ENOTFOUND, UND_ERR_CONNECT_TIMEOUT; not the node's numeric RPC codes.
    if (typeof code === "string" && code !== "") found.cause = code
    else if (found.cause === undefined && name === "TimeoutError") found.cause = "timeout"
  }
  return found
}

/**
 * The network did not answer: what it says, and where and why for the log.
 * Counted as the network's RPC error (pay_rpc_errors_total).
 */
export const unavailable = (chainId: string, error: unknown): ChainUnavailable => {
  countRpcError(chainId)
  const { rpcHost, cause } = whereAndWhy(error)
  const at = [rpcHost === undefined ? undefined : `RPC ${rpcHost}`, cause]
    .filter((s) => s !== undefined)
    .join(", ")
  return new ChainUnavailable({
    chainId,
    message: at === "" ? describe(error) : `${describe(error)} (${at})`,
    ...(rpcHost === undefined ? {} : { rpcHost }),
    ...(cause === undefined ? {} : { errorCode: cause })
  })
}

/** The node's own text of an error, wherever viem put it. */
export const nodeMessage = (error: unknown): string => {
  const parts: Array<string> = []
  if (error instanceof BaseError) {
    error.walk((e) => {
      if (e instanceof Error) parts.push(e.message)
      if (e instanceof BaseError && e.details) parts.push(e.details)
      return false
    })
  } else if (error instanceof Error) {
    parts.push(error.message)
  }
  return parts.join(" | ")
}

/**
 * Why the node refused a transaction, in its own words: viem's short message
 * alone ("Missing or invalid parameters.") says nothing an operator can act on,
 * so the details of every error it stands on follow, once each.
 */
export const refusal = (error: unknown): string => {
  if (!(error instanceof BaseError)) return describe(error)
  // viem's short messages run on to a second line of advice ("Double check you have…").
  const parts = [error.shortMessage.split("\n")[0]!]
  error.walk((e) => {
    const text = e instanceof BaseError ? e.details : e instanceof Error ? e.message : undefined
    if (text !== undefined && text !== "" && !parts.includes(text)) parts.push(text)
    return false
  })
  return parts.join(": ")
}

/** Answers that mean the node has the transaction, or has mined its nonce already. */
export const ALREADY_HAVE =
  /already known|known transaction|already imported|nonce too low|nonce is too low/i
/** Answers of a node that heard the request and refused it (as opposed to not answering). */
export const REFUSED =
  /underpriced|nonce too high|nonce is too high|insufficient funds|exceeds block gas limit|intrinsic gas|fee cap|max fee per gas less than|transaction type not supported|invalid sender/i
/** A JSON-RPC error code: the node answered, so the network is up. */
export const hasRpcCode = (error: unknown): boolean =>
  error instanceof BaseError &&
  error.walk((e) => typeof (e as { code?: unknown }).code === "number") !== null

export const isRevert = (error: unknown): boolean =>
  /revert|execution reverted|invalid signature|authorization is/i.test(nodeMessage(error))

/**
 * The revert data of a reverted call, where the node put it: on the error
 * viem's chain ends in, as `data` or (some nodes) `data.data`.
 */
export const revertDataOf = (error: unknown): Hex | undefined => {
  if (!(error instanceof BaseError)) return undefined
  const root = error.walk() as { data?: unknown } | null
  const data =
    typeof root?.data === "object" && root.data !== null
      ? (root.data as { data?: unknown }).data
      : root?.data
  return typeof data === "string" && isHex(data) && data.length >= 10 ? data : undefined
}

/**
 * A revert's reason in the contract's words: `Error(string)`'s text, a panic's
 * code, a custom error of `abi` by name, any other by its selector (the
 * operator can look it up); undefined when the data holds no error.
 */
export const revertReasonOf = (
  data: Hex,
  abi: Parameters<typeof decodeErrorResult>[0]["abi"] = []
): string | undefined => {
  try {
    const decoded = decodeErrorResult({ abi, data })
    if (decoded.errorName === "Error") return String(decoded.args?.[0])
    if (decoded.errorName === "Panic") return `panic ${String(decoded.args?.[0])}`
    return decoded.errorName
  } catch {
    return size(data) >= 4 ? `custom error ${slice(data, 0, 4)}` : undefined
  }
}
