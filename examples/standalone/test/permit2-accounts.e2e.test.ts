/**
 * Smart accounts pay Permit2 tokens (docs/api.md, "Tokens without EIP-3009"
 * and "Which signatures pay"), over HTTP on the real server and its sandbox
 * chain, on SQLite and on PostgreSQL: Permit2 asks an owner with code through
 * ERC-1271, so an account's own signature of the permit pays as a key's does.
 * A deployed Safe that approved Permit2 by a Safe transaction of its owner
 * pays USDT with the one signature action; a Safe offered the approval
 * answers it with its owner's `execTransaction` hash (the allowance is read
 * from the chain, not from the sender) and pays; an EOA delegated by
 * EIP-7702 sends the option's approval itself, then signs, and pays; a
 * Safe's permit replayed against another payment is refused at confirm with
 * nothing moved (and still pays its own); a thirdweb ERC-4337 account that
 * approved through its `execute` pays DAI. Every payment is settled and
 * counts the transfers out of the account and the balances it moved.
 */
import { typedDataFromJson } from "@pay/core"
import type { SafeAccount, SmartAccount } from "@pay/sandbox-chain"
import { Effect } from "effect"
import {
  type Address,
  createWalletClient,
  decodeFunctionData,
  encodeFunctionData,
  type Hex,
  hexToBigInt,
  maxUint256,
  parseAbi,
  zeroAddress
} from "viem"
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type Client,
  client,
  type E2eServer,
  eventually,
  expectError,
  type Json,
  STORES,
  startServer
} from "./e2e-support.js"
import {
  confirm,
  gatewayStatus,
  MERCHANT_DESTINATION,
  options,
  paymentFor,
  walletClient
} from "./gateway-support.js"
import {
  erc20,
  everyTokenMerchant,
  PERMIT2,
  tokenBalance,
  tokenOf,
  tokenTransfers
} from "./permit2-support.js"

/** 10.50 USD in the sandbox's USDT (6 decimals) and DAI (18); the sandbox takes no fees. */
const USDT_PRICE = 10_500_000n
const DAI_PRICE = 105n * 10n ** 17n
/** Ether for an owner's own transactions (a Safe transaction, `execute`, an approval). */
const GAS_MONEY = 10n ** 17n

/** Safe 1.4.1's transaction entry points (the sandbox's singleton). */
const safeAbi = parseAbi([
  "function nonce() view returns (uint256)",
  "function getTransactionHash(address to, uint256 value, bytes data, uint8 operation, uint256 safeTxGas, uint256 baseGas, uint256 gasPrice, address gasToken, address refundReceiver, uint256 _nonce) view returns (bytes32)",
  "function execTransaction(address to, uint256 value, bytes data, uint8 operation, uint256 safeTxGas, uint256 baseGas, uint256 gasPrice, address gasToken, address refundReceiver, bytes signatures) payable returns (bool)"
])
/** thirdweb's `Account` (3.15.0): its admin calls it directly, as well as the EntryPoint. */
const thirdwebAccountAbi = parseAbi([
  "function execute(address _target, uint256 _value, bytes _calldata)"
])

const approveMax = encodeFunctionData({
  abi: erc20,
  functionName: "approve",
  args: [PERMIT2, maxUint256]
})

describe.each(STORES)("smart accounts pay through Permit2 on %s", (store) => {
  let server: E2eServer
  let partner: Client
  let wallet: Client
  let merchantId: string

  beforeAll(async () => {
    server = await startServer(store)
    partner = client(() => server.baseUrl)
    wallet = (await walletClient(server)).api
    // Settled in every sandbox token, so each account is offered USDC, USDT and DAI.
    merchantId = await everyTokenMerchant(partner, server)
  }, 120_000)

  afterAll(() => server?.stop())

  const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
  const chain = () => server.sandbox
  const caip10 = (account: SmartAccount) => `eip155:31337:${account.address}`

  const token = (symbol: "USDT" | "DAI") => tokenOf(server, symbol)
  const balanceOf = (symbol: "USDT" | "DAI", owner: Address) => tokenBalance(server, symbol, owner)
  const allowance = (symbol: "USDT" | "DAI", owner: Address) =>
    chain().publicClient.readContract({
      address: token(symbol).address,
      abi: erc20,
      functionName: "allowance",
      args: [owner, PERMIT2]
    })
  const transfersFrom = (symbol: "USDT" | "DAI", from: Address) =>
    tokenTransfers(server, symbol, { from })

  /** A new owner key, with ether for the transactions it sends for its account. */
  const newOwner = async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    await run(chain().faucet(owner.address, GAS_MONEY, "ETH"))
    return owner
  }
  const walletOf = (owner: PrivateKeyAccount) =>
    createWalletClient({ account: owner, chain: chain().chain, transport: chain().transport })
  const mined = async (hash: Hex) => {
    const receipt = await chain().publicClient.waitForTransactionReceipt({ hash })
    expect(receipt.status, `${hash} reverted`).toBe("success")
    return receipt
  }

  /**
   * `approve(Permit2, max)` as a Safe transaction: the one owner signs the
   * SafeTx hash the Safe itself computes (v 27/28, a plain ECDSA signature of
   * it), and sends `execTransaction`, paying the gas. With no safeTxGas and no
   * gas price, Safe reverts the whole transaction when the call fails, so a
   * mined receipt is a done approval. Resolves with the transaction's hash.
   */
  const safeApproves = async (safe: SafeAccount, owner: PrivateKeyAccount, symbol: "USDT") => {
    const tx = [
      token(symbol).address,
      0n,
      approveMax,
      0,
      0n,
      0n,
      0n,
      zeroAddress,
      zeroAddress
    ] as const
    const nonce = await chain().publicClient.readContract({
      address: safe.address,
      abi: safeAbi,
      functionName: "nonce"
    })
    const safeTxHash = await chain().publicClient.readContract({
      address: safe.address,
      abi: safeAbi,
      functionName: "getTransactionHash",
      args: [...tx, nonce]
    })
    const signature = await owner.sign({ hash: safeTxHash })
    const hash = await walletOf(owner).writeContract({
      address: safe.address,
      abi: safeAbi,
      functionName: "execTransaction",
      args: [...tx, signature]
    })
    await mined(hash)
    expect(await allowance(symbol, safe.address)).toBe(maxUint256)
    return hash
  }

  /** The option in `symbol` offered to the account, and its actions' methods. */
  const optionIn = async (paymentId: string, account: SmartAccount, symbol: "USDT" | "DAI") => {
    const offered = await options(wallet, paymentId, [caip10(account)])
    expect(offered.status, offered.text).toBe(200)
    const option = offered.body.options.find((o: Json) =>
      o.amount.unit.endsWith(token(symbol).asset)
    )
    expect(option, `an option in ${symbol}: ${offered.text}`).toBeDefined()
    return option
  }

  /** The permit action's typed data, as the account's wallet receives it, checked for the payment. */
  const permitOf = (option: Json, account: SmartAccount, paymentId: string) => {
    const permit = option.actions.at(-1)
    expect(permit.data.method).toBe("eth_signTypedData_v4")
    expect(permit.data.params[0].toLowerCase()).toBe(account.address.toLowerCase())
    const typed = JSON.parse(permit.data.params[1])
    expect(typed.primaryType).toBe("PermitWitnessTransferFrom")
    expect(typed.domain.verifyingContract).toBe(PERMIT2)
    expect(typed.message.witness).toEqual({ paymentId, optionId: option.id })
    expect(typed.message.spender).toBe(chain().collector.address)
    return typedDataFromJson(permit.data.params[1])
  }

  const settled = (paymentId: string) =>
    eventually(
      async () => {
        const view = await partner.get(`/v1/payments/${paymentId}`, {
          headers: { "merchant-id": merchantId }
        })
        expect(view.body.status, view.text).toBe("succeeded")
        expect(view.body.settlement?.settled, JSON.stringify(view.body.settlement)).toBe(true)
        return view.body
      },
      { timeoutMs: 30_000 }
    )

  /**
   * Confirms the results, follows the payment to `succeeded` and its
   * settlement, then counts: one transfer out of the account (to the
   * collector, the permit's spender), its balance down by exactly the amount,
   * the merchant's destination up by it.
   */
  const paysAndSettles = async (args: {
    readonly account: SmartAccount
    readonly symbol: "USDT" | "DAI"
    readonly amount: bigint
    readonly paymentId: string
    readonly option: Json
    readonly results: ReadonlyArray<Json>
    readonly before: { readonly account: bigint; readonly destination: bigint }
  }) => {
    const { account, symbol, amount, paymentId } = args
    expect(args.option.amount.value).toBe(amount.toString())
    const paid = await confirm(wallet, paymentId, {
      optionId: args.option.id,
      results: args.results
    })
    expect(paid.status, paid.text).toBe(200)
    let status = paid.body
    while (!status.isFinal) status = (await gatewayStatus(wallet, paymentId, 15_000)).body
    expect(status).toMatchObject({ status: "succeeded", isFinal: true })
    const payment = await settled(paymentId)
    expect(payment.buyer?.accountCaip10 ?? payment.accountCaip10).toBe(caip10(account))
    const out = await transfersFrom(symbol, account.address)
    expect(out).toHaveLength(1)
    expect(out[0]!.args).toMatchObject({ to: chain().collector.address, value: amount })
    expect(await balanceOf(symbol, account.address)).toBe(args.before.account - amount)
    expect(await balanceOf(symbol, MERCHANT_DESTINATION)).toBe(args.before.destination + amount)
  }

  it("a deployed Safe that approved Permit2 by a Safe transaction: one signature action, paid in USDT and settled", async () => {
    const owner = await newOwner()
    const safe = (await run(chain().smartAccount({ kind: "safe", owner }))) as SafeAccount
    expect(await safe.isDeployed()).toBe(true)
    await run(chain().faucet(safe.address, USDT_PRICE * 2n, "USDT"))
    await safeApproves(safe, owner, "USDT")

    const { paymentId } = await paymentFor(partner, merchantId, "1050")
    const option = await optionIn(paymentId, safe, "USDT")
    // The allowance is read from the chain: the Safe's covers it, so nothing to send.
    expect(option.actions.map((a: Json) => a.data.method)).toEqual(["eth_signTypedData_v4"])
    const before = {
      account: await balanceOf("USDT", safe.address),
      destination: await balanceOf("USDT", MERCHANT_DESTINATION)
    }
    // The Safe's own ERC-1271 signature (its owner's SafeMessage), as its wallet answers.
    const signature = await safe.signTypedData(permitOf(option, safe, paymentId))
    expect((signature.length - 2) / 2).toBe(65)
    await paysAndSettles({
      account: safe,
      symbol: "USDT",
      amount: USDT_PRICE,
      paymentId,
      option,
      results: [{ type: "walletRpc", data: [signature] }],
      before
    })
  })

  it("a Safe without the allowance executes the option's approval as a Safe transaction; its hash counts and the Safe pays", async () => {
    const owner = await newOwner()
    const safe = (await run(chain().smartAccount({ kind: "safe", owner }))) as SafeAccount
    await run(chain().faucet(safe.address, USDT_PRICE * 2n, "USDT"))
    const { paymentId } = await paymentFor(partner, merchantId, "1050")
    const option = await optionIn(paymentId, safe, "USDT")
    expect(option.actions.map((a: Json) => a.data.method)).toEqual([
      "eth_sendTransaction",
      "eth_signTypedData_v4"
    ])
    const approval = JSON.parse(option.actions[0].data.params[0])
    expect(approval).toMatchObject({ from: safe.address, to: token("USDT").address })
    const before = {
      account: await balanceOf("USDT", safe.address),
      destination: await balanceOf("USDT", MERCHANT_DESTINATION)
    }
    // The transaction that approves is the owner's `execTransaction`, not one sent from the
    // Safe: the engine reads the allowance from the chain, never from the sender.
    const approvalHash = await safeApproves(safe, owner, "USDT")
    const signature = await safe.signTypedData(permitOf(option, safe, paymentId))
    await paysAndSettles({
      account: safe,
      symbol: "USDT",
      amount: USDT_PRICE,
      paymentId,
      option,
      results: [
        { type: "walletRpc", data: [approvalHash] },
        { type: "walletRpc", data: [signature] }
      ],
      before
    })
  })

  it("an EOA delegated by EIP-7702 sends the option's approval itself, signs the permit, and is paid and settled", async () => {
    const owner = await newOwner()
    const account = await run(chain().smartAccount({ kind: "7702", owner }))
    expect(account.address).toBe(owner.address)
    // Its code is the delegation: Permit2 will ask it through ERC-1271, not ecrecover.
    expect(await chain().publicClient.getCode({ address: account.address })).toMatch(/^0xef0100/)
    await run(chain().faucet(account.address, USDT_PRICE * 2n, "USDT"))

    const { paymentId } = await paymentFor(partner, merchantId, "1050")
    const option = await optionIn(paymentId, account, "USDT")
    expect(option.actions.map((a: Json) => a.data.method)).toEqual([
      "eth_sendTransaction",
      "eth_signTypedData_v4"
    ])
    const approval = JSON.parse(option.actions[0].data.params[0])
    expect(approval).toMatchObject({ from: account.address, to: token("USDT").address })
    expect(decodeFunctionData({ abi: erc20, data: approval.data }).args).toEqual([
      PERMIT2,
      maxUint256
    ])
    const before = {
      account: await balanceOf("USDT", account.address),
      destination: await balanceOf("USDT", MERCHANT_DESTINATION)
    }
    // Sent from the delegated EOA with its key, as its wallet would; mined before the confirm
    // so the confirm also tries the transfer on Permit2.
    const approvalHash = await walletOf(owner).sendTransaction({
      to: approval.to,
      data: approval.data,
      value: hexToBigInt(approval.value)
    })
    await mined(approvalHash)
    const signature = await account.signTypedData(permitOf(option, account, paymentId))
    await paysAndSettles({
      account,
      symbol: "USDT",
      amount: USDT_PRICE,
      paymentId,
      option,
      results: [
        { type: "walletRpc", data: [approvalHash] },
        { type: "walletRpc", data: [signature] }
      ],
      before
    })
  })

  it("a Safe's permit replayed against another payment is refused at confirm; nothing moves until its own payment", async () => {
    const owner = await newOwner()
    const safe = (await run(chain().smartAccount({ kind: "safe", owner }))) as SafeAccount
    await run(chain().faucet(safe.address, USDT_PRICE * 2n, "USDT"))
    await safeApproves(safe, owner, "USDT")
    const first = (await paymentFor(partner, merchantId, "1050")).paymentId as string
    const second = (await paymentFor(partner, merchantId, "1050")).paymentId as string
    const firstOption = await optionIn(first, safe, "USDT")
    const secondOption = await optionIn(second, safe, "USDT")
    const signature = await safe.signTypedData(permitOf(firstOption, safe, first))
    const results = [{ type: "walletRpc", data: [signature] }]

    // The same account, amount and spender: only the witness and nonce differ, so the Safe's
    // ERC-1271 check of the second payment's permit fails.
    const replayed = await confirm(wallet, second, { optionId: secondOption.id, results })
    expectError(replayed, 400, "params_validation", ["results.0.data.0"])
    expect((await gatewayStatus(wallet, second)).body.status).toBe("requires_action")
    expect(await transfersFrom("USDT", safe.address)).toHaveLength(0)
    expect(await balanceOf("USDT", safe.address)).toBe(USDT_PRICE * 2n)

    // The signature itself was good: it pays the payment it was made for, and only that.
    await paysAndSettles({
      account: safe,
      symbol: "USDT",
      amount: USDT_PRICE,
      paymentId: first,
      option: firstOption,
      results,
      before: {
        account: USDT_PRICE * 2n,
        destination: await balanceOf("USDT", MERCHANT_DESTINATION)
      }
    })
    expect((await gatewayStatus(wallet, second)).body.status).toBe("requires_action")
  })

  it("a deployed thirdweb ERC-4337 account that approved through its execute pays DAI and is settled", async () => {
    const owner = await newOwner()
    const account = await run(chain().smartAccount({ kind: "4337", owner }))
    await run(chain().faucet(account.address, DAI_PRICE * 2n, "DAI"))
    // The admin calls the account's `execute` directly (no bundler on the sandbox): the
    // approval's sender is the account, whoever paid the gas.
    await mined(
      await walletOf(owner).writeContract({
        address: account.address,
        abi: thirdwebAccountAbi,
        functionName: "execute",
        args: [token("DAI").address, 0n, approveMax]
      })
    )
    expect(await allowance("DAI", account.address)).toBe(maxUint256)

    const { paymentId } = await paymentFor(partner, merchantId, "1050")
    const option = await optionIn(paymentId, account, "DAI")
    expect(option.actions.map((a: Json) => a.data.method)).toEqual(["eth_signTypedData_v4"])
    const before = {
      account: await balanceOf("DAI", account.address),
      destination: await balanceOf("DAI", MERCHANT_DESTINATION)
    }
    const signature = await account.signTypedData(permitOf(option, account, paymentId))
    await paysAndSettles({
      account,
      symbol: "DAI",
      amount: DAI_PRICE,
      paymentId,
      option,
      results: [{ type: "walletRpc", data: [signature] }],
      before
    })
  })
})
