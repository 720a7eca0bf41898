import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  type Hex,
  keccak256,
  parseSignature,
  toHex,
  verifyTypedData
} from "viem"
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts"
import { isPublicMethod } from "./JsonRpc.js"
import {
  COLLECTOR_ADDRESS,
  PERMIT2_ADDRESS,
  PRICE_FEED_ADDRESSES,
  TEST_DAI_ADDRESS,
  TEST_USDC_ADDRESS,
  TEST_USDT_ADDRESS
} from "./Keys.js"
import {
  make,
  SandboxChain,
  type SandboxChainService,
  layer as sandboxLayer
} from "./SandboxChain.js"

const USDC = 1_000_000n // one token in minor units (6 decimals)

/** The token's EIP-712 domain, read from the contract (EIP-5267), never assumed. */
const readDomain = (chain: SandboxChainService) =>
  Effect.promise(async () => {
    const [fields, name, version, chainId, verifyingContract] =
      await chain.publicClient.readContract({
        address: chain.token.address,
        abi: chain.token.abi,
        functionName: "eip712Domain"
      })
    expect(fields).toBe("0x0f") // name, version, chainId, verifyingContract
    return { name, version, chainId, verifyingContract }
  })

interface Authorization {
  readonly from: Address
  readonly to: Address
  readonly value: bigint
  readonly validAfter: bigint
  readonly validBefore: bigint
  readonly nonce: Hex
}

/** What a wallet signs for eth_signTypedData_v4 (WIRE.md §2), EIP712Domain included. */
const receiveTypedData = (
  domain: Effect.Effect.Success<ReturnType<typeof readDomain>>,
  message: Authorization
) =>
  ({
    domain,
    types: {
      EIP712Domain: [
        { name: "name", type: "string" },
        { name: "version", type: "string" },
        { name: "chainId", type: "uint256" },
        { name: "verifyingContract", type: "address" }
      ],
      ReceiveWithAuthorization: [
        { name: "from", type: "address" },
        { name: "to", type: "address" },
        { name: "value", type: "uint256" },
        { name: "validAfter", type: "uint256" },
        { name: "validBefore", type: "uint256" },
        { name: "nonce", type: "bytes32" }
      ]
    },
    primaryType: "ReceiveWithAuthorization",
    message
  }) as const

const randomNonce = (): Hex => keccak256(toHex(`${Math.random()}-${performance.now()}`))

const latestTimestamp = (chain: SandboxChainService) =>
  Effect.promise(() => chain.publicClient.getBlock().then((b) => b.timestamp))

/** The buyer's signature over a ReceiveWithAuthorization made out to the collector. */
const authorize = (
  chain: SandboxChainService,
  signer: PrivateKeyAccount,
  overrides: Partial<Authorization> & { readonly from: Address }
) =>
  Effect.gen(function* () {
    const domain = yield* readDomain(chain)
    const now = yield* latestTimestamp(chain)
    const message: Authorization = {
      to: chain.collector.address,
      value: 5n * USDC,
      validAfter: 0n,
      validBefore: now + 3600n,
      nonce: randomNonce(),
      ...overrides
    }
    const typedData = receiveTypedData(domain, message)
    const signature = yield* Effect.promise(() => signer.signTypedData(typedData))
    return { message, signature, typedData }
  })

const receiveArgs = (a: Authorization, signature: Hex) =>
  [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, signature] as const

/** Simulates the collector's receiveWithAuthorization; the revert reason, or "ok". */
const simulateReceive = (chain: SandboxChainService, a: Authorization, signature: Hex) =>
  Effect.promise(() =>
    chain.publicClient
      .simulateContract({
        account: chain.collector.account,
        address: chain.token.address,
        abi: chain.token.abi,
        functionName: "receiveWithAuthorization",
        args: receiveArgs(a, signature)
      })
      .then(
        () => "ok",
        (e: unknown) => {
          const revert =
            e instanceof BaseError
              ? e.walk((c) => c instanceof ContractFunctionRevertedError)
              : undefined
          if (revert instanceof ContractFunctionRevertedError) return revert.reason ?? "reverted"
          throw e
        }
      )
  )

/** The collector submits the authorization; the mined receipt. */
const submitReceive = (
  chain: SandboxChainService,
  a: Authorization,
  signature: Hex,
  gas?: bigint
) =>
  Effect.promise(async () => {
    const hash = await chain.collector.walletClient.writeContract({
      address: chain.token.address,
      abi: chain.token.abi,
      functionName: "receiveWithAuthorization",
      args: receiveArgs(a, signature),
      ...(gas === undefined ? {} : { gas })
    })
    return chain.publicClient.waitForTransactionReceipt({ hash })
  })

const balanceOf = (chain: SandboxChainService, account: Address) =>
  Effect.promise(() =>
    chain.publicClient.readContract({
      address: chain.token.address,
      abi: chain.token.abi,
      functionName: "balanceOf",
      args: [account]
    })
  )

const newBuyer = () => privateKeyToAccount(generatePrivateKey())

describe("SandboxChain", () => {
  it.effect(
    "starts with the token at the same address every time, and times startup and a transaction",
    () =>
      Effect.gen(function* () {
        const startOne = (label: string) =>
          Effect.gen(function* () {
            const started = performance.now()
            const chain = yield* make()
            console.log(
              `sandbox chain ${label}: started and deployed TestUSDC in ${Math.round(performance.now() - started)} ms`
            )
            return chain
          })
        const first = yield* startOne("#1")
        const second = yield* startOne("#2")
        expect(first.token.address).toBe(TEST_USDC_ADDRESS)
        expect(second.token.address).toBe(TEST_USDC_ADDRESS)
        expect(first.description).toEqual(second.description)

        // Separate chains: a mint on one is not seen on the other.
        const buyer = newBuyer()
        const minted = yield* first.faucet(buyer.address, 7n * USDC)
        expect(minted.balance).toBe(7n * USDC)
        expect(yield* balanceOf(second, buyer.address)).toBe(0n)

        const { message, signature } = yield* authorize(first, buyer, { from: buyer.address })
        const started = performance.now()
        const receipt = yield* submitReceive(first, message, signature)
        const ms = performance.now() - started
        expect(receipt.status).toBe("success")
        console.log(
          `sandbox chain: receiveWithAuthorization sent and mined in ${ms.toFixed(1)} ms (gas ${receipt.gasUsed})`
        )
        const t = performance.now()
        const n = 20
        for (let i = 0; i < n; i++) yield* first.faucet(buyer.address, USDC)
        console.log(
          `sandbox chain: ${n} faucet mints (send, receipt, balance read) took ${((performance.now() - t) / n).toFixed(1)} ms each`
        )
      }).pipe(Effect.scoped),
    60_000
  )

  it.effect(
    "keeps its clock on the wall clock when it mines many blocks a second",
    () =>
      Effect.gen(function* () {
        const chain = yield* make()
        const buyer = newBuyer()
        // A burst: far more blocks (one per transaction) than seconds go by.
        const blocks = 150
        for (let i = 0; i < blocks; i++) yield* chain.faucet(buyer.address, USDC)
        const wallSeconds = BigInt(Math.ceil(Date.now() / 1000))
        expect(yield* latestTimestamp(chain)).toBeLessThanOrEqual(wallSeconds)

        // So an authorization valid for two minutes by the wall clock (the gateway's quote
        // lock) is still valid on the chain.
        const { message, signature } = yield* authorize(chain, buyer, {
          from: buyer.address,
          validBefore: wallSeconds + 120n
        })
        const receipt = yield* submitReceive(chain, message, signature)
        expect(receipt.status).toBe("success")
        expect(yield* balanceOf(chain, buyer.address)).toBe(BigInt(blocks - 5) * USDC)
      }).pipe(Effect.scoped),
    60_000
  )

  it.effect("refuses a bad faucet request", () =>
    Effect.gen(function* () {
      const chain = yield* make()
      const bad = yield* Effect.flip(chain.faucet("0x1234", USDC))
      expect(bad._tag).toBe("SandboxChainError")
      const zero = yield* Effect.flip(chain.faucet(newBuyer().address, 0n))
      expect(zero.message).toMatch(/positive/)
    }).pipe(Effect.scoped)
  )
})

layer(sandboxLayer(), { timeout: 60_000 })("SandboxChain with one chain", (it) => {
  it.effect("describes itself as GET /sandbox does", () =>
    Effect.gen(function* () {
      const chain = yield* SandboxChain
      expect(chain.chainId).toBe(31337)
      expect(chain.description).toEqual({
        chainId: "eip155:31337",
        collector: COLLECTOR_ADDRESS,
        tokens: [
          {
            asset: `eip155:31337/erc20:${TEST_USDC_ADDRESS}`,
            symbol: "USDC",
            name: "USD Coin",
            decimals: 6,
            authorization: "eip3009"
          },
          {
            asset: `eip155:31337/erc20:${TEST_USDT_ADDRESS}`,
            symbol: "USDT",
            name: "Tether USD",
            decimals: 6,
            authorization: "permit2"
          },
          {
            asset: `eip155:31337/erc20:${TEST_DAI_ADDRESS}`,
            symbol: "DAI",
            name: "Dai Stablecoin",
            decimals: 18,
            authorization: "permit2"
          },
          {
            asset: "eip155:31337/slip44:60",
            symbol: "ETH",
            name: "Ether",
            decimals: 18,
            authorization: "native"
          }
        ],
        permit2: "eip155:31337:0x000000000022D473030F116dDEE9F6B43aC78BA3",
        priceFeeds: {
          "ETH/USD": `eip155:31337:${PRICE_FEED_ADDRESSES["ETH/USD"]}`,
          "EUR/USD": `eip155:31337:${PRICE_FEED_ADDRESSES["EUR/USD"]}`
        }
      })
      expect(chain.token.version).toBe("2")
      expect(chain.tokens[0]).toBe(chain.token)
      expect(chain.tokens.map((t) => [t.symbol, t.address, t.authorization, t.version])).toEqual([
        ["USDC", TEST_USDC_ADDRESS, "eip3009", "2"],
        ["USDT", TEST_USDT_ADDRESS, "permit2", undefined],
        ["DAI", TEST_DAI_ADDRESS, "permit2", undefined]
      ])
      expect(chain.native).toEqual({
        asset: "eip155:31337/slip44:60",
        symbol: "ETH",
        name: "Ether",
        decimals: 18
      })
      expect(chain.permit2).toBe(PERMIT2_ADDRESS)
      const permit2Code = yield* Effect.promise(() =>
        chain.publicClient.getCode({ address: PERMIT2_ADDRESS })
      )
      expect(permit2Code?.length).toBeGreaterThan(1_000)
      const collectorWei = yield* Effect.promise(() =>
        chain.publicClient.getBalance({ address: chain.collector.address })
      )
      expect(collectorWei).toBeGreaterThan(10n ** 18n)
      const separator = yield* Effect.promise(() =>
        chain.publicClient.readContract({
          address: chain.token.address,
          abi: chain.token.abi,
          functionName: "DOMAIN_SEPARATOR"
        })
      )
      expect(separator).toMatch(/^0x[0-9a-f]{64}$/)
    })
  )

  it.effect("mints with the faucet, and balances read back", () =>
    Effect.gen(function* () {
      const chain = yield* SandboxChain
      const buyer = newBuyer()
      const first = yield* chain.faucet(buyer.address.toLowerCase(), 100n * USDC)
      expect(first.balance).toBe(100n * USDC)
      expect(first.txHash).toMatch(/^0x[0-9a-f]{64}$/)
      const [a, b] = yield* Effect.all(
        [chain.faucet(buyer.address, 1n), chain.faucet(buyer.address, 2n)],
        { concurrency: 2 }
      )
      expect(a.txHash).not.toBe(b.txHash)
      expect(yield* balanceOf(chain, buyer.address)).toBe(100n * USDC + 3n)
      const receipt = yield* Effect.promise(() =>
        chain.publicClient.getTransactionReceipt({ hash: first.txHash })
      )
      expect(receipt.status).toBe("success")
    })
  )

  it.effect("gives each token and ether; refuses an asset it does not have", () =>
    Effect.gen(function* () {
      const chain = yield* SandboxChain
      const buyer = newBuyer()
      for (const token of chain.tokens) {
        const amount = 3n * 10n ** BigInt(token.decimals)
        const given = yield* chain.faucet(buyer.address, amount, token.symbol)
        expect(given.balance).toBe(amount)
        const held = yield* Effect.promise(() =>
          chain.publicClient.readContract({
            address: token.address,
            abi: chain.token.abi,
            functionName: "balanceOf",
            args: [buyer.address]
          })
        )
        expect(held, token.symbol).toBe(amount)
      }
      // Ether: a transfer from the deployer, its transaction the engine can see.
      const ether = yield* chain.faucet(buyer.address, 2n * 10n ** 18n, "ETH")
      const again = yield* chain.faucet(buyer.address, 1n, "ETH")
      expect(again.balance).toBe(2n * 10n ** 18n + 1n)
      const transfer = yield* Effect.promise(() =>
        chain.publicClient.getTransaction({ hash: ether.txHash })
      )
      expect([transfer.to?.toLowerCase(), transfer.value]).toEqual([
        buyer.address.toLowerCase(),
        2n * 10n ** 18n
      ])
      // More than the deployer holds: it is topped up first.
      const lots = yield* chain.faucet(buyer.address, 20_000n * 10n ** 18n, "ETH")
      expect(lots.balance).toBe(20_002n * 10n ** 18n + 1n)

      const unknown = yield* Effect.flip(chain.faucet(buyer.address, 1n, "WBTC"))
      expect(unknown._tag).toBe("SandboxChainError")
      expect(unknown.message).toBe('The faucet has no "WBTC": it gives USDC, USDT, DAI, ETH')
    })
  )

  it.effect("moves a buyer's tokens to the collector with a signed ReceiveWithAuthorization", () =>
    Effect.gen(function* () {
      const chain = yield* SandboxChain
      const buyer = newBuyer()
      yield* chain.faucet(buyer.address, 20n * USDC)
      const before = yield* balanceOf(chain, chain.collector.address)
      const { message, signature, typedData } = yield* authorize(chain, buyer, {
        from: buyer.address,
        value: 12n * USDC
      })
      // The domain came from the contract; the engine checks signatures the same way.
      expect(typedData.domain).toEqual({
        name: "USD Coin",
        version: "2",
        chainId: 31337n,
        verifyingContract: TEST_USDC_ADDRESS
      })
      expect(
        yield* Effect.promise(() =>
          verifyTypedData({ ...typedData, address: buyer.address, signature })
        )
      ).toBe(true)
      expect(yield* simulateReceive(chain, message, signature)).toBe("ok")
      const receipt = yield* submitReceive(chain, message, signature)
      expect(receipt.status).toBe("success")
      expect(yield* balanceOf(chain, buyer.address)).toBe(8n * USDC)
      expect(yield* balanceOf(chain, chain.collector.address)).toBe(before + 12n * USDC)
      const used = yield* Effect.promise(() =>
        chain.publicClient.readContract({
          address: chain.token.address,
          abi: chain.token.abi,
          functionName: "authorizationState",
          args: [buyer.address, message.nonce]
        })
      )
      expect(used).toBe(true)
      const logs = yield* Effect.promise(() =>
        chain.publicClient.getContractEvents({
          address: chain.token.address,
          abi: chain.token.abi,
          eventName: "AuthorizationUsed",
          args: { authorizer: buyer.address },
          fromBlock: receipt.blockNumber,
          toBlock: receipt.blockNumber
        })
      )
      expect(logs.map((l) => l.args.nonce)).toEqual([message.nonce])
    })
  )

  it.effect("accepts the (v, r, s) overload too", () =>
    Effect.gen(function* () {
      const chain = yield* SandboxChain
      const buyer = newBuyer()
      yield* chain.faucet(buyer.address, 3n * USDC)
      const { message: a, signature } = yield* authorize(chain, buyer, {
        from: buyer.address,
        value: 3n * USDC
      })
      const { v, r, s, yParity } = parseSignature(signature)
      const hash = yield* Effect.promise(() =>
        chain.collector.walletClient.writeContract({
          address: chain.token.address,
          abi: chain.token.abi,
          functionName: "receiveWithAuthorization",
          args: [
            a.from,
            a.to,
            a.value,
            a.validAfter,
            a.validBefore,
            a.nonce,
            Number(v ?? 27n + BigInt(yParity)),
            r,
            s
          ]
        })
      )
      const receipt = yield* Effect.promise(() =>
        chain.publicClient.waitForTransactionReceipt({ hash })
      )
      expect(receipt.status).toBe("success")
      expect(yield* balanceOf(chain, buyer.address)).toBe(0n)
    })
  )

  it.effect("reverts a signature by another key", () =>
    Effect.gen(function* () {
      const chain = yield* SandboxChain
      const buyer = newBuyer()
      yield* chain.faucet(buyer.address, 10n * USDC)
      const { message, signature } = yield* authorize(chain, newBuyer(), { from: buyer.address })
      expect(yield* simulateReceive(chain, message, signature)).toBe(
        "FiatTokenV2: invalid signature"
      )
      // Sent anyway (a fixed gas limit skips estimation): mined, reverted, nothing moved.
      const receipt = yield* submitReceive(chain, message, signature, 200_000n)
      expect(receipt.status).toBe("reverted")
      expect(yield* balanceOf(chain, buyer.address)).toBe(10n * USDC)
    })
  )

  it.effect("reverts the reuse of a nonce, and a cancelled one", () =>
    Effect.gen(function* () {
      const chain = yield* SandboxChain
      const buyer = newBuyer()
      yield* chain.faucet(buyer.address, 10n * USDC)
      const { message, signature } = yield* authorize(chain, buyer, {
        from: buyer.address,
        value: USDC
      })
      expect((yield* submitReceive(chain, message, signature)).status).toBe("success")
      expect(yield* simulateReceive(chain, message, signature)).toBe(
        "FiatTokenV2: authorization is used or canceled"
      )
      const again = yield* submitReceive(chain, message, signature, 200_000n)
      expect(again.status).toBe("reverted")
      expect(yield* balanceOf(chain, buyer.address)).toBe(9n * USDC)

      // The buyer cancels an authorization before it is used.
      const pending = yield* authorize(chain, buyer, { from: buyer.address, value: USDC })
      const domain = yield* readDomain(chain)
      const cancel = yield* Effect.promise(() =>
        buyer.signTypedData({
          domain,
          types: {
            CancelAuthorization: [
              { name: "authorizer", type: "address" },
              { name: "nonce", type: "bytes32" }
            ]
          },
          primaryType: "CancelAuthorization",
          message: { authorizer: buyer.address, nonce: pending.message.nonce }
        })
      )
      const hash = yield* Effect.promise(() =>
        chain.collector.walletClient.writeContract({
          address: chain.token.address,
          abi: chain.token.abi,
          functionName: "cancelAuthorization",
          args: [buyer.address, pending.message.nonce, cancel]
        })
      )
      const cancelled = yield* Effect.promise(() =>
        chain.publicClient.waitForTransactionReceipt({ hash })
      )
      expect(cancelled.status).toBe("success")
      expect(yield* simulateReceive(chain, pending.message, pending.signature)).toBe(
        "FiatTokenV2: authorization is used or canceled"
      )
    })
  )

  it.effect("reverts a receive submitted by anyone but the payee", () =>
    Effect.gen(function* () {
      const chain = yield* SandboxChain
      const buyer = newBuyer()
      yield* chain.faucet(buyer.address, 10n * USDC)
      // Made out to someone else: the collector must not be able to submit it.
      const merchant = newBuyer().address
      const { message, signature } = yield* authorize(chain, buyer, {
        from: buyer.address,
        to: merchant
      })
      expect(yield* simulateReceive(chain, message, signature)).toBe(
        "FiatTokenV2: caller must be the payee"
      )
      // transferWithAuthorization is a different type hash: the receive signature does not fit it.
      const transfer = yield* Effect.promise(() =>
        chain.publicClient
          .simulateContract({
            account: chain.collector.account,
            address: chain.token.address,
            abi: chain.token.abi,
            functionName: "transferWithAuthorization",
            args: receiveArgs(message, signature)
          })
          .then(
            () => "ok",
            (e: BaseError) => e.shortMessage
          )
      )
      expect(transfer).toMatch(/invalid signature/)
      expect(yield* balanceOf(chain, buyer.address)).toBe(10n * USDC)
    })
  )

  it.effect("keeps its clock on the wall clock however many blocks a second mines", () =>
    Effect.gen(function* () {
      const chain = yield* SandboxChain
      const buyer = newBuyer()
      // Thirty blocks in well under a second: stamped one second apart, they would put the
      // chain's clock (and every block after them) half a minute ahead of the wall clock.
      for (let i = 0; i < 30; i++) yield* chain.faucet(buyer.address, USDC)
      const latest = yield* latestTimestamp(chain)
      const pending = yield* Effect.promise(() =>
        chain.publicClient.getBlock({ blockTag: "pending" }).then((b) => b.timestamp)
      )
      const wall = BigInt(Math.floor(Date.now() / 1000))
      expect(latest).toBeLessThanOrEqual(wall)
      expect(pending).toBeLessThanOrEqual(wall)

      // So an authorization valid for two more seconds of the wall clock goes through.
      const soon = yield* authorize(chain, buyer, { from: buyer.address, validBefore: wall + 2n })
      const receipt = yield* submitReceive(chain, soon.message, soon.signature)
      expect(receipt.status).toBe("success")
    })
  )

  it.effect("enforces validAfter and validBefore", () =>
    Effect.gen(function* () {
      const chain = yield* SandboxChain
      const buyer = newBuyer()
      yield* chain.faucet(buyer.address, 10n * USDC)
      const now = yield* latestTimestamp(chain)

      const expired = yield* authorize(chain, buyer, { from: buyer.address, validBefore: now })
      expect(yield* simulateReceive(chain, expired.message, expired.signature)).toBe(
        "FiatTokenV2: authorization is expired"
      )

      const early = yield* authorize(chain, buyer, {
        from: buyer.address,
        validAfter: now + 600n,
        validBefore: now + 7200n
      })
      expect(yield* simulateReceive(chain, early.message, early.signature)).toBe(
        "FiatTokenV2: authorization is not yet valid"
      )
      // Ten minutes later (the sandbox chain's clock moved by hand), it goes through.
      yield* Effect.promise(() => chain.request({ method: "evm_increaseTime", params: [601] }))
      yield* Effect.promise(() => chain.request({ method: "evm_mine", params: [] }))
      const receipt = yield* submitReceive(chain, early.message, early.signature)
      expect(receipt.status).toBe("success")
      expect(yield* balanceOf(chain, buyer.address)).toBe(5n * USDC)
    })
  )

  it.effect("only the deployer mints", () =>
    Effect.gen(function* () {
      const chain = yield* SandboxChain
      const outcome = yield* Effect.promise(() =>
        chain.publicClient
          .simulateContract({
            account: chain.collector.account,
            address: chain.token.address,
            abi: chain.token.abi,
            functionName: "mint",
            args: [chain.collector.address, USDC]
          })
          .then(
            () => "ok",
            (e: BaseError) => e.walk((c) => c instanceof ContractFunctionRevertedError)
          )
      )
      expect(outcome).toBeInstanceOf(ContractFunctionRevertedError)
      expect((outcome as ContractFunctionRevertedError).data?.errorName).toBe(
        "OwnableUnauthorizedAccount"
      )
    })
  )

  it.effect("answers JSON-RPC 2.0 requests and batches", () =>
    Effect.gen(function* () {
      const chain = yield* SandboxChain
      const rpc = (body: unknown) => Effect.promise(() => chain.handleJsonRpc(body))

      expect(yield* rpc({ jsonrpc: "2.0", id: 1, method: "eth_chainId" })).toEqual({
        jsonrpc: "2.0",
        id: 1,
        result: "0x7a69"
      })
      const block = (yield* rpc({
        jsonrpc: "2.0",
        id: "b",
        method: "eth_blockNumber",
        params: []
      })) as {
        id: string
        result: string
      }
      expect(block.id).toBe("b")
      expect(BigInt(block.result)).toBeGreaterThan(0n)

      // A batch, as a JSON string: answers in order, none for the notification.
      const batch = yield* rpc(
        JSON.stringify([
          { jsonrpc: "2.0", id: 1, method: "eth_chainId" },
          { jsonrpc: "2.0", method: "eth_blockNumber" },
          {
            jsonrpc: "2.0",
            id: 2,
            method: "eth_getBalance",
            params: [COLLECTOR_ADDRESS, "latest"]
          },
          { jsonrpc: "1.0", id: 3, method: "eth_chainId" },
          42,
          { jsonrpc: "2.0", id: 4, method: "eth_noSuchMethod", params: [] }
        ])
      )
      expect(batch).toMatchObject([
        { jsonrpc: "2.0", id: 1, result: "0x7a69" },
        { jsonrpc: "2.0", id: 2, result: expect.stringMatching(/^0x[0-9a-f]+$/) },
        { jsonrpc: "2.0", id: 3, error: { code: -32600 } },
        { jsonrpc: "2.0", id: null, error: { code: -32600 } },
        { jsonrpc: "2.0", id: 4, error: { code: -32004 } }
      ])

      // Malformed input.
      expect(yield* rpc("{not json")).toMatchObject({ id: null, error: { code: -32700 } })
      expect(yield* rpc([])).toMatchObject({ id: null, error: { code: -32600 } })
      expect(yield* rpc({ jsonrpc: "2.0", id: 7, method: 7 })).toMatchObject({
        id: 7,
        error: { code: -32600 }
      })
      expect(yield* rpc({ jsonrpc: "2.0", id: { no: 1 }, method: "eth_chainId" })).toMatchObject({
        id: null,
        error: { code: -32600 }
      })
      expect(
        yield* rpc({ jsonrpc: "2.0", id: 8, method: "eth_chainId", params: "x" })
      ).toMatchObject({ id: 8, error: { code: -32600 } })
      expect(
        yield* rpc({ jsonrpc: "2.0", id: 9, method: "eth_getBalance", params: ["0x12", "latest"] })
      ).toMatchObject({ id: 9, error: { code: -32602 } })
      expect(yield* rpc({ jsonrpc: "2.0", method: "eth_chainId" })).toBeUndefined()
      expect(yield* rpc({ jsonrpc: "2.0", id: null, method: "eth_chainId" })).toEqual({
        jsonrpc: "2.0",
        id: null,
        result: "0x7a69"
      })

      // A revert reads as a node's: code 3, the reason, the revert data.
      const reverted = yield* Effect.promise(() =>
        chain.handleJsonRpc({
          jsonrpc: "2.0",
          id: 10,
          method: "eth_call",
          params: [
            {
              from: COLLECTOR_ADDRESS,
              to: TEST_USDC_ADDRESS,
              // mint(collector, 1): only the deployer may mint
              data: `0x40c10f19${COLLECTOR_ADDRESS.slice(2).toLowerCase().padStart(64, "0")}${"1".padStart(64, "0")}`
            },
            "latest"
          ]
        })
      )
      expect(reverted).toMatchObject({
        id: 10,
        error: {
          code: 3,
          message: "execution reverted",
          data: expect.stringMatching(/^0x118cdaa7/)
        }
      })

      // A public route can keep the node-control methods out.
      const controlled = yield* Effect.promise(() =>
        chain.handleJsonRpc(
          [
            { jsonrpc: "2.0", id: 1, method: "evm_mine" },
            {
              jsonrpc: "2.0",
              id: 2,
              method: "hardhat_setBalance",
              params: [COLLECTOR_ADDRESS, "0x1"]
            },
            { jsonrpc: "2.0", id: 3, method: "eth_chainId" },
            // The node's own keys, and methods no wallet needs, are not passed either.
            { jsonrpc: "2.0", id: 4, method: "eth_sendTransaction", params: [{}] },
            { jsonrpc: "2.0", id: 5, method: "eth_accounts" },
            { jsonrpc: "2.0", id: 6, method: "personal_sign", params: ["0x00", COLLECTOR_ADDRESS] },
            { jsonrpc: "2.0", id: 7, method: "debug_traceTransaction", params: ["0x00"] },
            {
              jsonrpc: "2.0",
              id: 8,
              method: "eth_getTransactionCount",
              params: [COLLECTOR_ADDRESS, "latest"]
            },
            {
              jsonrpc: "2.0",
              id: 9,
              method: "eth_getLogs",
              params: [{ fromBlock: "0x0", toBlock: "0x0" }]
            }
          ],
          { allow: isPublicMethod }
        )
      )
      expect(controlled).toMatchObject([
        { id: 1, error: { code: -32601 } },
        { id: 2, error: { code: -32601 } },
        { id: 3, result: "0x7a69" },
        { id: 4, error: { code: -32601 } },
        { id: 5, error: { code: -32601 } },
        { id: 6, error: { code: -32601 } },
        { id: 7, error: { code: -32601 } },
        { id: 8, result: expect.stringMatching(/^0x[0-9a-f]+$/) },
        { id: 9, result: [] }
      ])
    })
  )
})
