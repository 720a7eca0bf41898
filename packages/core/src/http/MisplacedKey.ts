/**
 * Where a caller put a key the engine does not read there: the usual
 * misspellings of `Api-Key`, and an `Authorization` header that is not
 * `Bearer <key>`. Said in a 401 beside what to send instead, so a client that
 * sent its key in the wrong header learns which one is right.
 */
import type { EngineRequest } from "./Exchange.js"

/** Headers clients send keys in, by their lower-case name, with the spelling a message uses. */
const KEY_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ["x-api-key", "X-Api-Key"],
  ["apikey", "ApiKey"],
  ["api_key", "Api_Key"],
  ["x-apikey", "X-ApiKey"],
  ["api-token", "Api-Token"],
  ["x-auth-token", "X-Auth-Token"]
]

export interface MisplacedKey {
  /** The header's name as a message spells it: `X-Api-Key`. */
  readonly header: string
  /** Why the engine did not read it, after the header's name. */
  readonly why: string
}

/**
 * The first header of `request` that looks like a key the engine did not read,
 * or undefined; `read` names the lower-case headers the route reads (their
 * absence is why this is asked), `elsewhere` why an unread one is refused.
 */
export const misplacedKey = (
  request: EngineRequest,
  options: {
    readonly read: ReadonlyArray<string>
    readonly elsewhere: (header: string) => string
    readonly bearer: boolean
  }
): MisplacedKey | undefined => {
  for (const [name, spelled] of KEY_HEADERS) {
    if (options.read.includes(name)) continue
    const value = request.header(name)
    if (value !== undefined && value.trim() !== "") {
      return { header: spelled, why: options.elsewhere(spelled) }
    }
  }
  const authorization = request.header("authorization")
  if (authorization !== undefined && authorization.trim() !== "") {
    const isBearer = /^Bearer\s+\S+\s*$/i.test(authorization)
    if (!options.bearer || !isBearer) {
      return {
        header: "Authorization",
        why: options.bearer
          ? 'which is read only as "Bearer <key>"'
          : "which wallet gateway routes do not read"
      }
    }
  }
  return undefined
}
