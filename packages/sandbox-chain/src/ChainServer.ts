/**
 * The sandbox chain over loopback HTTP, for crash tests: `serveChain` starts a
 * fresh {@link make SandboxChain} (EDR, chain id 31337, automine, TestUSDC at
 * its fixed address, the collector funded) and a `node:http` server answering
 * POST JSON-RPC 2.0 (objects, batches, notifications → 204) through
 * `handleJsonRpc`. Every method is allowed, `evm_*` and `hardhat_*` included:
 * it is a test chain, and it listens on loopback only (a non-loopback host is
 * refused). `chain-main.ts` runs it as its own process (`npm run chain`), so an
 * engine process can be SIGKILLed and restarted while the chain lives on.
 *
 * ## Faucet
 *
 * `sandbox_faucet` with params `[address, amount, token?]` (amount in the
 * token's minor units: a decimal string such as `"25000000"`, a 0x quantity
 * or a safe integer; token `USDC`, the default, `USDT` or `DAI`) mints that
 * test token to `address` and answers
 * `{ txHash, balance }` (balance: the account's token balance afterwards, a
 * decimal string). It is on this server only, not on the engine's
 * `/sandbox/rpc`. It signs with the deployer key reading the deployer's nonce
 * from the chain every time (so it keeps working after `evm_revert`), one mint
 * at a time, and needs automine: with automine off it answers -32000
 * "sandbox_faucet needs automine …" rather than leave a mint pending. Tests may
 * as well mint themselves: the deployer key (`DEPLOYER_PRIVATE_KEY`, printed
 * by chain-main) may call `mint(to, amount)` on the token.
 *
 * ## What EDR does (0.22.0), measured against it
 *
 * ChainServer.test.ts pins the rebroadcast, replacement, base-fee, nonce-gap and
 * chain-id messages and the mempool behaviours below; the funds message and the
 * time/balance/nonce methods were tried by hand.
 *
 * Errors come as JSON-RPC errors with code -32000 unless said otherwise;
 * `<…>` are the numbers of the case.
 *
 * - Rebroadcast of a raw transaction already MINED (geth says "nonce too low"); the
 *   message depends on the mining mode:
 *   - automine on (the default):
 *     `Nonce too low. Expected nonce to be <next nonce> but got <nonce>. Note that transactions
 *     can't be queued when automining.`
 *   - automine off:
 *     `Transaction nonce too low. Expected nonce to be at least <next nonce> but got <nonce>.`
 *   Both match /nonce too low/i.
 * - Rebroadcast of a raw transaction still PENDING (in the mempool):
 *   `Known transaction: 0x<tx hash, lower case>` (geth says "already known").
 * - Same nonce, fee not raised by at least 10%:
 *   `Replacement transaction underpriced. A gasPrice/maxFeePerGas of at least <wei> is necessary
 *   to replace the existing transaction with nonce <nonce>.`
 *   (geth: "replacement transaction underpriced").
 * - With automine on, maxFeePerGas below the next block's base fee:
 *   `Transaction maxFeePerGas (<wei>) is too low for the next block, which has a baseFeePerGas of <wei>`
 * - With automine on, a nonce gap: `Nonce too high. Expected nonce to be <n> but got <m>. Note
 *   that transactions can't be queued when automining.`
 * - Not enough ether: `Sender doesn't have enough funds to send tx. The max upfront cost is: <wei>
 *   and the sender's balance is: <wei>.`
 * - Wrong chain id (code -32602): `Trying to send a raw transaction with an invalid chainId. The
 *   expected chainId is 31337`.
 * - Unsupported methods answer code -32004 `Method <name> is not supported`.
 *
 * Methods that work: `evm_setAutomine` (`hardhat_setAutomine` does NOT exist;
 * `hardhat_getAutomine` reads it), `evm_mine` (optionally `[timestamp]`; it
 * mines every pending transaction the block's base fee admits, by priority
 * fee — the mempool orders by "Priority"), `hardhat_mine` (`[count, interval]`),
 * `evm_setIntervalMining`, `hardhat_dropTransaction` (`[hash]` → true; the
 * transaction is gone: `eth_getTransactionByHash` null, and the same raw
 * transaction can be sent again), `evm_snapshot` / `evm_revert` (a snapshot is
 * used up by its revert: reverting to it again answers false),
 * `hardhat_setNextBlockBaseFeePerGas`, `evm_increaseTime`,
 * `evm_setNextBlockTimestamp`, `hardhat_setBalance`, `hardhat_setNonce`,
 * `eth_pendingTransactions`. Not supported: `hardhat_reset`, `txpool_*`.
 *
 * Behaviours to know:
 * - `evm_revert` restores the mempool as it was at the snapshot. Take the
 *   snapshot BEFORE sending the transaction to make it vanish (reorg that
 *   drops it: receipt and transaction null, the raw transaction can be sent
 *   again); a snapshot taken while it was pending puts it back in the mempool
 *   (reorg that returns it to the pool: receipt null, transaction pending,
 *   sending it again answers "Known transaction").
 * - `evm_setAutomine true` does not mine what is pending; the next transaction
 *   sent (or `evm_mine`) mines it all in one block.
 * - A transaction whose maxFeePerGas is below the base fee stays pending
 *   through `evm_mine` (stuck); a replacement (same nonce, fees +10% or more,
 *   above the base fee) takes its place: the old hash answers null.
 * - `eth_getTransactionCount(address, "pending")` counts the transactions the
 *   next block would take: a stuck one (fee below the base fee) is NOT counted.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, Exit, Scope } from "effect"
import {
  createWalletClient,
  getAddress,
  type Hash,
  type Hex,
  isAddress,
  isHex,
  maxUint256
} from "viem"
import { privateKeyToAccount } from "viem/accounts"
import type { EdrFailure, EdrRequest, EdrResponse } from "./Edr.js"
import { handleJsonRpc, INTERNAL_ERROR, type JsonRpcResponse, PARSE_ERROR } from "./JsonRpc.js"
import { DEPLOYER_PRIVATE_KEY } from "./Keys.js"
import { make, type SandboxChainService, sandboxChain } from "./SandboxChain.js"

export const FAUCET_METHOD = "sandbox_faucet"

export interface ChainServerOptions {
  /** A loopback address: 127.0.0.1 (default), another 127.x, ::1 or localhost. */
  readonly host?: string | undefined
  /** 0 (default): any free port. */
  readonly port?: number | undefined
  /** The collector's key, funded at genesis; the documented dev key by default. */
  readonly collectorPrivateKey?: Hex | undefined
}

export interface ChainServer {
  /** `http://127.0.0.1:<port>`: POST JSON-RPC here. */
  readonly url: string
  readonly host: string
  readonly port: number
  /** The chain itself, in this process. */
  readonly sandbox: SandboxChainService
  /** Stops listening, cuts open connections, stops the chain. Idempotent. */
  readonly close: () => Promise<void>
}

/** The most a request body may hold. */
const MAX_BODY_BYTES = 5 * 1024 * 1024
const INVALID_PARAMS = -32602
const SERVER_ERROR = -32000

const isLoopback = (host: string): boolean =>
  host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host)

const errorOf = (id: EdrRequest["id"], error: EdrFailure): EdrResponse => ({
  jsonrpc: "2.0",
  id,
  error
})

/** The amount of a faucet request, in minor units. */
const amountOf = (value: unknown): bigint | undefined => {
  let amount: bigint | undefined
  if (typeof value === "number" && Number.isSafeInteger(value)) amount = BigInt(value)
  else if (typeof value === "string" && /^[0-9]{1,78}$/.test(value)) amount = BigInt(value)
  else if (typeof value === "string" && isHex(value) && value.length > 2) amount = BigInt(value)
  return amount !== undefined && amount > 0n && amount <= maxUint256 ? amount : undefined
}

/** A faucet request refused as such (not a failure of the mint). */
class FaucetRefusal extends Error {
  constructor(
    readonly code: number,
    message: string
  ) {
    super(message)
  }
}

/** Mints with the deployer key, its nonce read from the chain each time, one at a time. */
const makeFaucet = (sandbox: SandboxChainService) => {
  const deployer = createWalletClient({
    account: privateKeyToAccount(DEPLOYER_PRIVATE_KEY),
    chain: sandboxChain,
    transport: sandbox.transport
  })
  let queue: Promise<unknown> = Promise.resolve()

  const mint = async (
    to: Hex,
    amount: bigint,
    token: (typeof sandbox.tokens)[number]
  ): Promise<{ txHash: Hash; balance: string }> => {
    // Every sandbox token mints and reads balances alike (`mint(to, amount)`, ERC-20).
    const contract = { address: token.address, abi: sandbox.token.abi } as const
    if ((await sandbox.request({ method: "hardhat_getAutomine" })) !== true) {
      throw new FaucetRefusal(
        SERVER_ERROR,
        `${FAUCET_METHOD} needs automine (evm_setAutomine true), or mint with the deployer key and evm_mine`
      )
    }
    // The next block's base fee, which hardhat_setNextBlockBaseFeePerGas may have raised.
    const pending = await sandbox.publicClient.getBlock({ blockTag: "pending" })
    const baseFee = pending.baseFeePerGas ?? 0n
    const txHash = await deployer.writeContract({
      ...contract,
      functionName: "mint",
      args: [getAddress(to), amount],
      maxFeePerGas: baseFee * 2n + 1_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n
    })
    const receipt = await sandbox.publicClient.waitForTransactionReceipt({
      hash: txHash,
      timeout: 10_000
    })
    if (receipt.status !== "success") throw new Error(`the mint ${txHash} reverted`)
    const balance = await sandbox.publicClient.readContract({
      ...contract,
      functionName: "balanceOf",
      args: [getAddress(to)]
    })
    return { txHash, balance: balance.toString() }
  }

  return async (request: EdrRequest): Promise<EdrResponse> => {
    const params = Array.isArray(request.params) ? request.params : []
    const [account, value, symbol] = params as Array<unknown>
    const token = sandbox.tokens.find((t) => t.symbol === (symbol ?? "USDC"))
    if (token === undefined) {
      return errorOf(request.id, {
        code: INVALID_PARAMS,
        message: `${FAUCET_METHOD} params: [address, amount, token?]; the token must be one of ${sandbox.tokens.map((t) => t.symbol).join(", ")}`
      })
    }
    if (typeof account !== "string" || !isAddress(account, { strict: false })) {
      return errorOf(request.id, {
        code: INVALID_PARAMS,
        message: `${FAUCET_METHOD} params: [address, amount]; the address is not an EVM address`
      })
    }
    const amount = amountOf(value)
    if (amount === undefined) {
      return errorOf(request.id, {
        code: INVALID_PARAMS,
        message: `${FAUCET_METHOD} params: [address, amount]; the amount must be a positive whole number of minor units, e.g. "25000000"`
      })
    }
    const run = queue.then(() => mint(account, amount, token))
    queue = run.catch(() => undefined)
    try {
      return { jsonrpc: "2.0", id: request.id, result: await run }
    } catch (e) {
      return errorOf(
        request.id,
        e instanceof FaucetRefusal
          ? { code: e.code, message: e.message }
          : { code: SERVER_ERROR, message: `${FAUCET_METHOD} failed: ${(e as Error).message}` }
      )
    }
  }
}

/**
 * One request to the chain, as `handleJsonRpc` wants it. The chain's errors
 * were normalized already (a revert: code 3, its data as hex); the revert data
 * is wrapped again as EDR gives it, so normalizing a second time keeps it.
 */
const chainCall =
  (sandbox: SandboxChainService) =>
  async (request: EdrRequest): Promise<EdrResponse> => {
    try {
      const result = await sandbox.request({ method: request.method, params: request.params })
      return { jsonrpc: "2.0", id: request.id, result }
    } catch (e) {
      const error = e as { code?: unknown; message?: unknown; data?: unknown }
      if (typeof error.code !== "number" || typeof error.message !== "string") throw e
      return errorOf(request.id, {
        code: error.code,
        message: error.message,
        ...(typeof error.data === "string" && isHex(error.data)
          ? { data: { data: error.data } }
          : {})
      })
    }
  }

const readBody = (req: IncomingMessage): Promise<string | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) {
        resolve(undefined)
        req.destroy()
        return
      }
      chunks.push(chunk)
    })
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

const send = (res: ServerResponse, status: number, body?: unknown) => {
  if (res.destroyed || res.headersSent) return
  if (body === undefined) {
    res.writeHead(status).end()
    return
  }
  const text = JSON.stringify(body)
  res
    .writeHead(status, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(text)
    })
    .end(text)
}

/** Starts a fresh sandbox chain and serves its JSON-RPC on loopback. */
export const serveChain = async (options: ChainServerOptions = {}): Promise<ChainServer> => {
  const host = options.host ?? "127.0.0.1"
  if (!isLoopback(host)) {
    throw new Error(`serveChain listens on loopback only (it allows evm_* and hardhat_*): ${host}`)
  }
  const scope = Effect.runSync(Scope.make())
  const sandbox = await Effect.runPromise(
    Scope.extend(make({ collectorPrivateKey: options.collectorPrivateKey }), scope)
  ).catch(async (e) => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw e
  })
  const faucet = makeFaucet(sandbox)
  const toChain = chainCall(sandbox)
  const call = (request: EdrRequest): Promise<EdrResponse> =>
    request.method === FAUCET_METHOD ? faucet(request) : toChain(request)

  const server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
    if (req.method !== "POST") {
      res.setHeader("allow", "POST")
      send(res, 405, {
        jsonrpc: "2.0",
        id: null,
        error: { code: INTERNAL_ERROR, message: "POST JSON-RPC 2.0 here" }
      })
      return
    }
    readBody(req)
      .then(async (body) => {
        if (body === undefined) {
          send(res, 413, {
            jsonrpc: "2.0",
            id: null,
            error: { code: PARSE_ERROR, message: "The body is too large" }
          })
          return
        }
        const answer: JsonRpcResponse | ReadonlyArray<JsonRpcResponse> | undefined =
          await handleJsonRpc(call, body)
        if (answer === undefined) send(res, 204)
        else send(res, 200, answer)
      })
      .catch((e: unknown) => {
        send(res, 500, {
          jsonrpc: "2.0",
          id: null,
          error: { code: INTERNAL_ERROR, message: `Internal error: ${(e as Error).message}` }
        })
      })
  })

  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(options.port ?? 0, host, () => {
        server.off("error", reject)
        resolve()
      })
    })
  } catch (e) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw e
  }
  const address = server.address() as AddressInfo
  const urlHost = address.family === "IPv6" ? `[${address.address}]` : address.address

  let closing: Promise<void> | undefined
  const close = () => {
    closing ??= (async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
      await Effect.runPromise(Scope.close(scope, Exit.void))
    })()
    return closing
  }

  return {
    url: `http://${urlHost}:${address.port}`,
    host: address.address,
    port: address.port,
    sandbox,
    close
  }
}
