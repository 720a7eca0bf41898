/**
 * Every wallet pays (issue 38), over HTTP on the real server and its sandbox
 * chain, on SQLite and on PostgreSQL: a Safe and a thirdweb ERC-4337 account,
 * each deployed (ERC-1271) and not deployed yet (ERC-6492: the engine's deploy
 * job deploys it from the account deployer, never the collector, then
 * collects), and an EOA delegated by EIP-7702 each pay and are settled, counting the transfers, the deployments
 * and the balances; a stranger's signature and a signature replayed against
 * another payment are refused with nothing moved; a buyer's factory calldata
 * that would move the collector's tokens is refused at confirm and the
 * collector's balances stay as they were.
 */
import { payWithWallet } from "@pay/sandbox"
import type { FactoryAccount, SafeAccount, SmartAccount } from "@pay/sandbox-chain"
import { Effect } from "effect"
import {
  encodeFunctionData,
  type Hex,
  parseAbiItem,
  serializeErc6492Signature,
  type TypedDataDefinition
} from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
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
  receivedBalance,
  settledMerchant,
  signed,
  transfersFrom,
  usdcBalance,
  walletClient
} from "./gateway-support.js"

/** 10.50 USD in the sandbox's USDC (6 decimals); the sandbox takes no fees. */
const PRICE = 10_500_000n

const typedOf = (option: Json): TypedDataDefinition => {
  const typed = JSON.parse(option.actions[0].data.params[1])
  const { EIP712Domain: _, ...types } = typed.types
  const big = (v: string) => BigInt(v)
  return {
    domain: { ...typed.domain, chainId: big(typed.domain.chainId) },
    types,
    primaryType: typed.primaryType,
    message: {
      ...typed.message,
      value: big(typed.message.value),
      validAfter: big(typed.message.validAfter),
      validBefore: big(typed.message.validBefore)
    }
  } as TypedDataDefinition
}

describe.each(STORES)("smart accounts pay on %s", (store) => {
  let server: E2eServer
  let partner: Client
  let wallet: Client
  let walletKey: string
  let merchantId: string

  beforeAll(async () => {
    server = await startServer(store)
    partner = client(() => server.baseUrl)
    const app = await walletClient(server)
    wallet = app.api
    walletKey = app.apiKey
    merchantId = await settledMerchant(partner)
  }, 120_000)

  afterAll(async () => {
    await server?.stop()
  })

  const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
  const chain = () => server.sandbox
  const caip10 = (account: SmartAccount) => `eip155:31337:${account.address}`

  const newAccount = async (
    kind: "safe" | "4337" | "7702",
    counterfactual = false
  ): Promise<FactoryAccount | SmartAccount> => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const account = await run(chain().smartAccount({ kind, owner, counterfactual }))
    await run(chain().faucet(account.address, PRICE * 2n))
    return account
  }

  /** The one option for the account, and its typed data. */
  const optionFor = async (paymentId: string, account: SmartAccount) => {
    const offered = await options(wallet, paymentId, [caip10(account)])
    expect(offered.status, offered.text).toBe(200)
    expect(offered.body.options).toHaveLength(1)
    const option = offered.body.options[0]
    // The same one action as for a key pair, `from` the account named.
    expect(option.actions).toHaveLength(1)
    expect(option.actions[0].data.method).toBe("eth_signTypedData_v4")
    expect(option.actions[0].data.params[0].toLowerCase()).toBe(account.address.toLowerCase())
    return { option, typed: typedOf(option) }
  }

  const deployerTransactions = () =>
    chain().publicClient.getTransactionCount({ address: chain().accountDeployer.address })

  /** Safe proxies the factory created for `address`, since genesis. */
  const proxiesCreated = async (address: Hex) =>
    (
      await chain().publicClient.getLogs({
        address: chain().accounts.safeProxyFactory,
        event: parseAbiItem("event ProxyCreation(address indexed proxy, address singleton)"),
        args: { proxy: address },
        fromBlock: 0n
      })
    ).length

  /** thirdweb accounts its factory created for `address`, since genesis. */
  const accountsCreated = async (address: Hex) =>
    (
      await chain().publicClient.getLogs({
        address: chain().accounts.thirdwebAccountFactory,
        event: parseAbiItem(
          "event AccountCreated(address indexed account, address indexed accountAdmin)"
        ),
        args: { account: address },
        fromBlock: 0n
      })
    ).length

  /** Pays and waits for the settlement; counts one transfer in and the balances. */
  const paysAndSettles = async (account: SmartAccount) => {
    const { paymentId } = await paymentFor(partner, merchantId, "1050")
    const { option, typed } = await optionFor(paymentId, account)
    const before = {
      buyer: await usdcBalance(server, account.address),
      received: await receivedBalance(server),
      destination: await usdcBalance(server, MERCHANT_DESTINATION)
    }
    const signature = await account.signTypedData(typed)
    const paid = await confirm(wallet, paymentId, signed(option.id, signature))
    expect(paid.status, paid.text).toBe(200)
    let status = paid.body
    while (!status.isFinal) status = (await gatewayStatus(wallet, paymentId, 15_000)).body
    expect(status).toMatchObject({ status: "succeeded", isFinal: true })
    const payment = await eventually(async () => {
      const got = await partner.get(`/v1/payments/${paymentId}`, {
        headers: { "merchant-id": merchantId }
      })
      expect(got.body.settlement?.settled, got.text).toBe(true)
      return got.body
    })
    expect(payment.buyer?.accountCaip10 ?? payment.accountCaip10).toBe(caip10(account))
    expect(await transfersFrom(server, account.address)).toHaveLength(1)
    expect(await usdcBalance(server, account.address)).toBe(before.buyer - PRICE)
    expect(await receivedBalance(server)).toBe(before.received + PRICE)
    expect(await usdcBalance(server, MERCHANT_DESTINATION)).toBe(before.destination + PRICE)
    return { paymentId, payment, signature, option }
  }

  it.each(["safe", "4337"] as const)(
    "a deployed %s account (ERC-1271) pays and is settled; no deployment is sent",
    async (kind) => {
      const account = await newAccount(kind)
      const deployments = await deployerTransactions()
      await paysAndSettles(account)
      expect(await deployerTransactions()).toBe(deployments)
    }
  )

  it.each(["safe", "4337"] as const)(
    "a %s account not deployed yet (ERC-6492) is deployed once, by the account deployer, then pays and is settled",
    async (kind) => {
      const account = (await newAccount(kind, true)) as FactoryAccount
      expect(await account.isDeployed()).toBe(false)
      const collectorSent = await chain().publicClient.getTransactionCount({
        address: chain().collector.address
      })
      const deployments = await deployerTransactions()
      await paysAndSettles(account)
      expect(await account.isDeployed()).toBe(true)
      expect(await (kind === "safe" ? proxiesCreated : accountsCreated)(account.address)).toBe(1)
      expect(await deployerTransactions()).toBe(deployments + 1)
      // The collector sent the transfer in and the settlement out, nothing else.
      expect(
        await chain().publicClient.getTransactionCount({ address: chain().collector.address })
      ).toBe(collectorSent + 2)
    }
  )

  it("an EOA delegated by EIP-7702 pays with its key's signature and is settled", async () => {
    await paysAndSettles(await newAccount("7702"))
  })

  it.each(["safe", "4337", "7702"] as const)(
    "%s: a stranger's signature is 400 naming results.0.data.0; nothing moves",
    async (kind) => {
      const account = await newAccount(kind)
      const { paymentId } = await paymentFor(partner, merchantId, "1050")
      const { option, typed } = await optionFor(paymentId, account)
      const strangerKey = privateKeyToAccount(generatePrivateKey())
      // The stranger's own account of the same kind signs: valid for it, not for this one.
      const forged =
        kind === "7702"
          ? await strangerKey.signTypedData(typed)
          : await (await run(chain().smartAccount({ kind, owner: strangerKey }))).signTypedData(
              typed
            )
      const refused = await confirm(wallet, paymentId, signed(option.id, forged))
      expectError(refused, 400, "params_validation", ["results.0.data.0"])
      expect((await gatewayStatus(wallet, paymentId)).body.status).toBe("requires_action")
      expect(await transfersFrom(server, account.address)).toHaveLength(0)
    }
  )

  it.each(["safe", "4337", "7702"] as const)(
    "%s: a signature replayed against another payment is refused; nothing moves",
    async (kind) => {
      const account = await newAccount(kind)
      const { signature } = await paysAndSettles(account)
      const { paymentId } = await paymentFor(partner, merchantId, "1050")
      const { option } = await optionFor(paymentId, account)
      const replayed = await confirm(wallet, paymentId, signed(option.id, signature))
      expectError(replayed, 400, "params_validation", ["results.0.data.0"])
      expect(await transfersFrom(server, account.address)).toHaveLength(1)
    }
  )

  it("a factory calldata that would move the collector's tokens: refused at confirm; the collector's balances unchanged", async () => {
    const safe = (await newAccount("safe", true)) as SafeAccount
    const { paymentId } = await paymentFor(partner, merchantId, "1050")
    const { option, typed } = await optionFor(paymentId, safe)
    const inner = (await safe.signTypedData(typed)).slice(0, 132) as Hex
    const attacker = privateKeyToAccount(generatePrivateKey()).address
    // "Deploy" by calling the token: transfer(attacker, everything).
    const collectorBalance = await usdcBalance(server, chain().collector.address)
    const drain = serializeErc6492Signature({
      address: chain().token.address,
      data: encodeFunctionData({
        abi: chain().token.abi,
        functionName: "transfer",
        args: [attacker, collectorBalance]
      }),
      signature: inner
    })
    const refused = await confirm(wallet, paymentId, signed(option.id, drain))
    expectError(refused, 400, "params_validation", ["results.0.data.0"])
    expect(await usdcBalance(server, chain().collector.address)).toBe(collectorBalance)
    expect(await usdcBalance(server, attacker)).toBe(0n)
    expect(
      await chain().publicClient.getBalance({ address: chain().collector.address })
    ).toBeGreaterThan(0n)
  })

  it.each([
    { account: "safe" as const, counterfactual: false },
    { account: "safe" as const, counterfactual: true },
    { account: "4337" as const, counterfactual: false },
    { account: "4337" as const, counterfactual: true },
    { account: "7702" as const, counterfactual: false }
  ])(
    "pay-sandbox-wallet --account $account (counterfactual: $counterfactual) pays through the sandbox's public RPC and faucet",
    async ({ account, counterfactual }) => {
      const { paymentId } = await paymentFor(partner, merchantId, "1050")
      const lines: Array<string> = []
      const outcome = await payWithWallet({
        engineUrl: server.baseUrl,
        payment: paymentId,
        apiKey: walletKey,
        faucet: PRICE,
        account,
        counterfactual,
        log: (line) => lines.push(line)
      })
      expect(outcome.status, lines.join("\n")).toBe("succeeded")
      const address = outcome.buyer.slice(outcome.buyer.lastIndexOf(":") + 1) as Hex
      expect((await chain().publicClient.getCode({ address }))?.length).toBeGreaterThan(2)
      expect(await transfersFrom(server, address)).toHaveLength(1)
      // The faucet's call for gas also minted one minor unit to the key: the 7702 account's own.
      expect(await usdcBalance(server, address)).toBe(account === "7702" ? 1n : 0n)
    }
  )
})
