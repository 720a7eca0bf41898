/**
 * Smart accounts on the sandbox chain, as a buyer's wallet holds them: a
 * one-owner Safe 1.4.1 and a thirdweb ERC-4337 account (each deployed, or
 * only computed: counterfactual, paying with an ERC-6492 signature), and an
 * EOA delegated by EIP-7702 to `Simple7702Account`. Each signs typed data the way its wallet does, so the
 * engine sees what it would see from a real one. Plain viem over any client:
 * in process, through `/sandbox/rpc`, or the chain server's URL.
 */
import {
  type Address,
  type Chain,
  type Client,
  concat,
  encodeAbiParameters,
  encodeFunctionData,
  encodePacked,
  getContractAddress,
  type Hash,
  type Hex,
  hashTypedData,
  keccak256,
  type PublicClient,
  pad,
  serializeErc6492Signature,
  type Transport,
  type TypedDataDefinition,
  type WalletClient,
  zeroAddress
} from "viem"
import type { PrivateKeyAccount } from "viem/accounts"
import { SMART_ACCOUNT_ADDRESSES } from "./Keys.js"
import {
  SafeProxyFactory,
  Safe as SafeSingleton,
  ThirdwebAccountFactory
} from "./SmartAccounts.artifact.js"

export type SmartAccountAddresses = typeof SMART_ACCOUNT_ADDRESSES

/** A smart account as a wallet holds it: its address, and how it signs. */
export interface SmartAccount {
  readonly kind: "safe" | "4337" | "7702"
  readonly address: Address
  /** The account's signature of the typed data, as its wallet answers `eth_signTypedData_v4`. */
  readonly signTypedData: (typed: TypedDataDefinition) => Promise<Hex>
}

/** An EOA delegated by EIP-7702: its address is the key's, and it signs with the key. */
export interface DelegatedAccount extends SmartAccount {
  readonly kind: "7702"
}

/** An account its factory deploys with CREATE2: it has its address, and can pay, before it exists. */
export interface FactoryAccount extends SmartAccount {
  readonly kind: "safe" | "4337"
  /** The factory and the calldata that deploys this account: what its ERC-6492 signature carries. */
  readonly factory: Address
  readonly factoryData: Hex
  readonly isDeployed: () => Promise<boolean>
  /** Sends the factory call from `wallet`; resolves once mined. */
  readonly deploy: (
    wallet: WalletClient<Transport, Chain | undefined, PrivateKeyAccount>
  ) => Promise<Hash>
}

/** A one-owner Safe; its factory is the proxy factory, the calldata `createProxyWithNonce`. */
export interface SafeAccount extends FactoryAccount {
  readonly kind: "safe"
}

/** A thirdweb account with one admin; its factory's calldata is `createAccount(admin, "0x")`. */
export interface ThirdwebAccount extends FactoryAccount {
  readonly kind: "4337"
}

type AnyPublicClient = PublicClient<Transport, Chain | undefined> | Client

/** What makes a factory account: the chain, its owner's key, its salt, where the contracts are. */
export interface FactoryAccountOptions {
  readonly client: AnyPublicClient
  readonly owner: PrivateKeyAccount
  /** Which of the owner's accounts: each number its own address (absent: the default one). */
  readonly saltNonce?: bigint
  /** The contracts' addresses: the sandbox chain's (SMART_ACCOUNT_ADDRESSES) when absent. */
  readonly addresses?: SmartAccountAddresses
}

const SAFE_MESSAGE_TYPES = { SafeMessage: [{ name: "message", type: "bytes" }] } as const

const codeOf = (client: AnyPublicClient, address: Address) =>
  (client as PublicClient).getCode({ address })

/** What every factory account shares: deployed or not, sending its factory call, its signature. */
const factoryAccount = <K extends FactoryAccount["kind"]>(args: {
  readonly kind: K
  readonly client: PublicClient
  readonly address: Address
  readonly factory: Address
  readonly factoryData: Hex
  /** The owner's signature for the account's ERC-1271 check, deployed or not. */
  readonly ownerSignature: (typed: TypedDataDefinition) => Promise<Hex>
}): FactoryAccount & { readonly kind: K } => {
  const isDeployed = async () => ((await codeOf(args.client, args.address)) ?? "0x") !== "0x"
  return {
    kind: args.kind,
    address: args.address,
    factory: args.factory,
    factoryData: args.factoryData,
    isDeployed,
    deploy: async (wallet) => {
      const hash = await wallet.sendTransaction({
        to: args.factory,
        data: args.factoryData,
        chain: wallet.chain ?? null
      })
      const receipt = await args.client.waitForTransactionReceipt({ hash })
      if (receipt.status !== "success") {
        throw new Error(`deploying the ${args.kind} account ${args.address} reverted`)
      }
      return hash
    },
    signTypedData: async (typed) => {
      const signature = await args.ownerSignature(typed)
      return (await isDeployed())
        ? signature
        : serializeErc6492Signature({ address: args.factory, data: args.factoryData, signature })
    }
  }
}

/**
 * A Safe whose one owner is `owner` (threshold 1, the compatibility fallback
 * handler for ERC-1271), at the address its factory gives it for `saltNonce`.
 * It signs as Safe's handler checks: the owner signs `SafeMessage(bytes
 * message)` under the Safe's own domain, `message` being the typed data's
 * EIP-712 hash; wrapped in ERC-6492 with its factory call while not deployed.
 */
export const safeAccount = async (args: FactoryAccountOptions): Promise<SafeAccount> => {
  const client = args.client as PublicClient
  const at = args.addresses ?? SMART_ACCOUNT_ADDRESSES
  const saltNonce = args.saltNonce ?? 0n
  const initializer = encodeFunctionData({
    abi: SafeSingleton.abi,
    functionName: "setup",
    args: [
      [args.owner.address],
      1n,
      zeroAddress,
      "0x",
      at.safeFallbackHandler,
      zeroAddress,
      0n,
      zeroAddress
    ]
  })
  const factoryData = encodeFunctionData({
    abi: SafeProxyFactory.abi,
    functionName: "createProxyWithNonce",
    args: [at.safeSingleton, initializer, saltNonce]
  })
  const proxyCode = await client.readContract({
    address: at.safeProxyFactory,
    abi: SafeProxyFactory.abi,
    functionName: "proxyCreationCode"
  })
  // As SafeProxyFactory.deployProxy: CREATE2 of the proxy's code and the singleton, salted by
  // the initializer's hash and the nonce.
  const address = getContractAddress({
    opcode: "CREATE2",
    from: at.safeProxyFactory,
    salt: keccak256(encodePacked(["bytes32", "uint256"], [keccak256(initializer), saltNonce])),
    bytecode: concat([proxyCode, pad(at.safeSingleton)])
  })
  const chainId = await client.getChainId()
  return factoryAccount({
    kind: "safe",
    client,
    address,
    factory: at.safeProxyFactory,
    factoryData,
    ownerSignature: (typed) =>
      args.owner.signTypedData({
        domain: { chainId, verifyingContract: address },
        types: SAFE_MESSAGE_TYPES,
        primaryType: "SafeMessage",
        message: { message: hashTypedData(typed) }
      })
  })
}

const ACCOUNT_MESSAGE_TYPES = { AccountMessage: [{ name: "message", type: "bytes" }] } as const

/**
 * A thirdweb account (`@thirdweb-dev/contracts` 3.15.0's `Account`, ERC-4337)
 * whose admin is `owner`, at the address its factory gives it for `saltNonce`
 * (the factory's salt hashes the admin and its `data` argument: the ABI
 * encoding of `saltNonce`, or none when it is absent). It signs as the account's
 * `isValidSignature` checks, as thirdweb's SDK does: the owner signs
 * `AccountMessage(bytes message)` under the account's domain ("Account", "1"),
 * `message` being the ABI encoding of the typed data's EIP-712 hash; wrapped in
 * ERC-6492 with `createAccount(owner, data)` while not deployed.
 */
export const thirdwebAccount = async (args: FactoryAccountOptions): Promise<ThirdwebAccount> => {
  const client = args.client as PublicClient
  const factory = (args.addresses ?? SMART_ACCOUNT_ADDRESSES).thirdwebAccountFactory
  const data =
    args.saltNonce === undefined
      ? "0x"
      : encodeAbiParameters([{ type: "uint256" }], [args.saltNonce])
  const [address, chainId] = await Promise.all([
    client.readContract({
      address: factory,
      abi: ThirdwebAccountFactory.abi,
      functionName: "getAddress",
      args: [args.owner.address, data]
    }),
    client.getChainId()
  ])
  return factoryAccount({
    kind: "4337",
    client,
    address,
    factory,
    factoryData: encodeFunctionData({
      abi: ThirdwebAccountFactory.abi,
      functionName: "createAccount",
      args: [args.owner.address, data]
    }),
    ownerSignature: (typed) =>
      args.owner.signTypedData({
        domain: { name: "Account", version: "1", chainId, verifyingContract: address },
        types: ACCOUNT_MESSAGE_TYPES,
        primaryType: "AccountMessage",
        message: { message: encodeAbiParameters([{ type: "bytes32" }], [hashTypedData(typed)]) }
      })
  })
}

/**
 * Delegates `owner`'s EOA to `delegate` (Simple7702Account by default) with an
 * EIP-7702 transaction sent by `wallet`; resolves with the account, which signs
 * with the owner's key, as a delegated EOA's wallet does.
 */
export const delegate7702 = async (args: {
  readonly client: AnyPublicClient
  readonly wallet: WalletClient<Transport, Chain | undefined, PrivateKeyAccount>
  readonly owner: PrivateKeyAccount
  readonly delegate?: Address
}): Promise<DelegatedAccount> => {
  const client = args.client as PublicClient
  const delegate = args.delegate ?? SMART_ACCOUNT_ADDRESSES.simple7702Account
  const ownNonce = await client.getTransactionCount({ address: args.owner.address })
  const authorization = await args.owner.signAuthorization({
    address: delegate,
    chainId: await client.getChainId(),
    // Sent by another account: the owner's own nonce as it is now (its own sender would be +1).
    nonce: args.wallet.account.address === args.owner.address ? ownNonce + 1 : ownNonce
  })
  // The gas given, not estimated: the delegation holds even when the call to the account
  // reverts (a delegate that takes no empty call), as EIP-7702 applies it first.
  const hash = await args.wallet.sendTransaction({
    to: args.owner.address,
    data: "0x",
    authorizationList: [authorization],
    gas: 100_000n,
    chain: args.wallet.chain ?? null
  })
  await client.waitForTransactionReceipt({ hash })
  const code = await codeOf(client, args.owner.address)
  if (code?.toLowerCase() !== concat(["0xef0100", delegate]).toLowerCase()) {
    throw new Error(`${args.owner.address} is not delegated to ${delegate} (code ${code})`)
  }
  return {
    kind: "7702",
    address: args.owner.address,
    signTypedData: (typed) => args.owner.signTypedData(typed)
  }
}
