/**
 * The simulated receive of an account not deployed yet (ERC-6492): the token
 * takes `receiveWithAuthorization` only from the payee, the collector, and the
 * account must exist first. So one `eth_call` runs ReceiveSimulator's code
 * (contracts/ReceiveSimulator.sol) at the collector's address and the
 * deployer's (state overrides: nothing is deployed): the factory call goes
 * from the deployer, as the deploy job will send it, never from the
 * collector (the buyer chose it: from the collector it could move the
 * collector's tokens, and pass here what fails when sent), then the token's
 * call from the collector.
 */

import {
  type Address,
  decodeErrorResult,
  decodeFunctionResult,
  encodeFunctionData,
  type Hex
} from "viem"
import type { AccountDeployment } from "./AccountDeployment.js"
import { ReceiveSimulator } from "./ReceiveSimulator.artifact.js"
import { revertReasonOf } from "./RpcErrors.js"

/** keccak256("pay-engine ReceiveSimulator"), what the simulator returns when both calls pass. */
export const SIMULATED: Hex = "0x9f83276714d83808add4f0c7e043d8db8194d68b2daf078482713e955dc07698"

/** The `eth_call` (viem's `call` parameters) that deploys the account and takes the receive. */
export const simulationRequest = (
  senders: { readonly collector: Address; readonly deployer: Address },
  token: Address,
  receiveData: Hex,
  deployment: AccountDeployment
) => ({
  account: senders.collector,
  to: senders.collector,
  data: encodeFunctionData({
    abi: ReceiveSimulator.abi,
    functionName: "simulate",
    args: [senders.deployer, deployment.factory, deployment.factoryData, token, receiveData]
  }),
  stateOverride: [
    { address: senders.collector, code: ReceiveSimulator.deployedBytecode },
    { address: senders.deployer, code: ReceiveSimulator.deployedBytecode }
  ]
})

/** Whether the simulator ran and both calls passed: a node that ignored the override answers otherwise. */
export const simulated = (data: Hex | undefined): boolean => {
  try {
    return (
      decodeFunctionResult({
        abi: ReceiveSimulator.abi,
        functionName: "simulate",
        data: data ?? "0x"
      }) === SIMULATED
    )
  } catch {
    return false
  }
}

/**
 * Why the simulation reverted, for `TransferRefused`: the factory's failure
 * (named so, with the factory's own reason where it gave one), or the
 * token's reason as the token gave it.
 */
export const simulationRefusal = (deployment: AccountDeployment, data: Hex | undefined): string => {
  if (data === undefined) return "the account's deployment and receive reverted, no reason given"
  try {
    const failed = decodeErrorResult({ abi: ReceiveSimulator.abi, data })
    if (failed.errorName === "DeploymentFailed") {
      const [reason] = failed.args
      const why = reason === "0x" ? undefined : revertReasonOf(reason)
      return `the account's deployment (factory ${deployment.factory}) reverted${why === undefined ? "" : `: ${why}`}`
    }
  } catch {
    // Not the simulator's own error: the token's.
  }
  return revertReasonOf(data) ?? `reverted with ${data}`
}
