/**
 * @pay/logos: merchant logos, fetched from the public internet only and
 * checked against the logo rules (SPEC.md section 8). Work in progress
 * (issue 15): the safe fetcher and the image checks land here first; the
 * engine's logo port, storage and serving follow.
 */
export * from "./AddressPolicy.js"
export * from "./LogoCaptureLayer.js"
export * from "./LogoImage.js"
export * from "./SafeFetch.js"
