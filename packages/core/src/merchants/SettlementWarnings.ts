/**
 * The warnings a settlement change answers with (and logs): a settlement in an asset no network
 * of the engine can pay is saved, since the network may be added later, but until then no wallet
 * is offered that asset. A Base settlement on an engine that runs only the sandbox chain is the
 * common case. Pure: the networks are the chain port's, the names the token registry's.
 */
import type { ChainNetwork } from "../chain/Chain.js"
import type { Caip19 } from "../shared/Caip.js"
import type { TokenRegistryShape } from "../shared/TokenRegistry.js"
import { assetName, assetText, listText, payabilityOf } from "./SettlementPayability.js"
import type { SettlementWarning } from "./SettlementWarning.js"

export type { SettlementWarning } from "./SettlementWarning.js"

const networkList = (networks: ReadonlyArray<ChainNetwork>): string =>
  networks.length === 0
    ? "it runs no network"
    : `it runs ${listText(
        networks.map((n) => `${n.name} (${n.chainId})`),
        "en",
        "conjunction"
      )}`

/**
 * A warning for each of `assets` (the settlements just registered or changed) that the networks
 * cannot pay. `live`: every asset the merchant settles in once the change is made, to say
 * whether its payments can still be paid in another.
 */
export const settlementWarnings = (
  networks: ReadonlyArray<ChainNetwork>,
  registry: TokenRegistryShape,
  assets: ReadonlyArray<Caip19>,
  live: ReadonlyArray<Caip19>
): ReadonlyArray<SettlementWarning> => {
  const payable = [...new Set(live)].filter((a) => payabilityOf(networks, a) === "payable")
  const still =
    payable.length === 0
      ? "Until then no settlement of this merchant can be paid, so its payments offer wallets no way to pay."
      : `Until then its payments can be paid in ${listText(
          payable.map((a) => assetText(assetName(networks, registry, a))),
          "en",
          "disjunction"
        )} only.`
  return assets.flatMap((asset): ReadonlyArray<SettlementWarning> => {
    const payability = payabilityOf(networks, asset)
    if (payability === "payable") return []
    const name = assetName(networks, registry, asset)
    const network = `${name.network} (${name.chainId})`
    const why =
      payability === "network_not_run"
        ? `${network} is not one of the engine's networks: ${networkList(networks)}. The settlement is saved and is used once ${name.network} is configured.`
        : `the engine runs ${network} but not this token there. The settlement is saved and is used once the token is configured on ${name.network}.`
    return [
      {
        code: "asset_not_payable",
        message: `Wallets are not offered ${name.symbol === null ? asset : `${assetText(name)} (${asset})`}: ${why} ${still}`,
        asset
      }
    ]
  })
}
