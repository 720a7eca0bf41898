/**
 * What a unit test's services stand on, and nothing more: the in-memory
 * stores, a logo capture that fetches nothing, each feature's settings (the
 * defaults, with `settings` over them), a live engine mode, in-process status
 * events and the default token registry. A test merges the services it needs
 * on top (`Payments.Default`, `Settlements.Default`, …): each brings the
 * services it declares it depends on.
 */

import { makeMemoryStorage } from "@pay/testing"
import { Layer } from "effect"
import { featureConfigs } from "../src/Engine.js"
import { engineConfig, type PaymentEngineSettings } from "../src/EngineOptions.js"
import { LocalPaymentEvents } from "../src/payments/PaymentEvents.js"
import type { PayStorage } from "../src/Storage.js"
import { EngineMode } from "../src/shared/EngineMode.js"
import { defaultTokenRegistry } from "../src/shared/TokenRegistry.js"
import { makeFakeLogoCapture } from "./FakeLogoCapture.js"

export const unitGround = (
  settings: Partial<PaymentEngineSettings> = {},
  storage: Layer.Layer<PayStorage> = Layer.suspend(makeMemoryStorage)
) =>
  Layer.mergeAll(
    storage,
    makeFakeLogoCapture().layer,
    featureConfigs(engineConfig({ publicUrl: "http://pay.test", maxBodyBytes: 1024, ...settings })),
    Layer.succeed(EngineMode, { livemode: true }),
    LocalPaymentEvents,
    defaultTokenRegistry
  )
