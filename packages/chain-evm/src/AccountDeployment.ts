import type { Chain } from "@pay/core"

/**
 * The port's `AccountDeployment` (a factory and its calldata), read off the
 * port itself: @pay/core's index does not name it.
 */
export type AccountDeployment = Parameters<Chain["Type"]["deploymentCall"]>[1]
