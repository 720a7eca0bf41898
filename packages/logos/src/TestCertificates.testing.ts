/**
 * For tests: a throwaway CA and a server certificate for localhost, logo.test,
 * 127.0.0.1 and ::1, made with the machine's openssl (nothing downloaded), in
 * a new temporary folder the caller removes.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export interface TestCertificates {
  readonly dir: string
  readonly ca: string
  readonly key: string
  readonly cert: string
}

export const makeTestCertificates = (): TestCertificates => {
  const dir = mkdtempSync(join(tmpdir(), "pay-test-certs-"))
  const at = (name: string) => join(dir, name)
  const openssl = (...args: Array<string>) =>
    execFileSync("openssl", args, { stdio: ["ignore", "ignore", "pipe"] })
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
  openssl(
    "req",
    "-x509",
    ...ec,
    "-keyout",
    at("ca.key"),
    "-out",
    at("ca.crt"),
    "-days",
    "2",
    "-subj",
    "/CN=SafeFetch test CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign"
  )
  openssl(
    "req",
    ...ec,
    "-keyout",
    at("server.key"),
    "-out",
    at("server.csr"),
    "-subj",
    "/CN=logo.test"
  )
  writeFileSync(
    at("server.ext"),
    "subjectAltName=DNS:localhost,DNS:logo.test,IP:127.0.0.1,IP:::1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
  )
  openssl(
    "x509",
    "-req",
    "-in",
    at("server.csr"),
    "-CA",
    at("ca.crt"),
    "-CAkey",
    at("ca.key"),
    "-CAcreateserial",
    "-out",
    at("server.crt"),
    "-days",
    "2",
    "-extfile",
    at("server.ext")
  )
  return {
    dir,
    ca: readFileSync(at("ca.crt"), "utf8"),
    key: readFileSync(at("server.key"), "utf8"),
    cert: readFileSync(at("server.crt"), "utf8")
  }
}
