/**
 * @pay/logos: merchant logos, fetched from the public internet only and
 * checked against the logo rules (SPEC.md section 8): the engine's
 * `LogoCapture` port (`logoCaptureLayer`), and its parts, the safe fetcher
 * (reused for any URL a partner types in) and the image checks.
 */
export * from "./AddressPolicy.js"
export * from "./LogoCaptureLayer.js"
export * from "./LogoImage.js"
export * from "./LookupGate.js"
export * from "./SafeFetch.js"
export * from "./WebhookSender.js"
export * from "./WebhookUrlGuardLayer.js"
