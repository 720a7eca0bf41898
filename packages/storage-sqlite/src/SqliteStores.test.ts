import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  auditStorageContract,
  chainJobStorageContract,
  engineSecretStorageContract,
  logoStorageContract,
  paymentStorageContract,
  rateLimitStorageContract,
  resealStorageContract,
  storageContract
} from "@pay/core/contracts"
import { afterAll } from "vitest"
import { runtimeDriver, runtimeDriverName } from "./RuntimeDriver.testing.js"

const { layer } = runtimeDriver

const dir = mkdtempSync(join(tmpdir(), "pay-sqlite-contract-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let n = 0
const fresh = () => layer({ filename: join(dir, `contract-${n++}.sqlite`) })
storageContract(`SQLite file (${runtimeDriverName})`, fresh)
paymentStorageContract(`SQLite file (${runtimeDriverName})`, fresh)
chainJobStorageContract(`SQLite file (${runtimeDriverName})`, fresh)
logoStorageContract(`SQLite file (${runtimeDriverName})`, fresh)
engineSecretStorageContract(`SQLite file (${runtimeDriverName})`, fresh)
auditStorageContract(`SQLite file (${runtimeDriverName})`, fresh)
resealStorageContract(`SQLite file (${runtimeDriverName})`, fresh)
rateLimitStorageContract(`SQLite file (${runtimeDriverName})`, fresh)
