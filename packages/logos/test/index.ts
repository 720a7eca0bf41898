/** @pay/logos/testing: a loopback HTTPS logo server and generated images, for tests and benchmarks. */
export { makeTestCertificates, type TestCertificates } from "../src/TestCertificates.testing.js"
export * from "./LogoServer.js"
