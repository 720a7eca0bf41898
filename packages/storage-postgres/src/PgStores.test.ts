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
import { freshStorage } from "../test/TestDatabase.js"

// Each test builds the layer once: a new schema, migrated, dropped afterwards.
storageContract("PostgreSQL", freshStorage)
paymentStorageContract("PostgreSQL", freshStorage)
chainJobStorageContract("PostgreSQL", freshStorage)
logoStorageContract("PostgreSQL", freshStorage)
engineSecretStorageContract("PostgreSQL", freshStorage)
auditStorageContract("PostgreSQL", freshStorage)
resealStorageContract("PostgreSQL", freshStorage)
rateLimitStorageContract("PostgreSQL", freshStorage)
