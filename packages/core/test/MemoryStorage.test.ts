import { MemoryStorage } from "@pay/testing"
import { auditStorageContract } from "./AuditContract.js"
import { chainJobStorageContract } from "./ChainJobContract.js"
import { engineSecretStorageContract } from "./EngineSecretContract.js"
import { logoStorageContract } from "./LogoContract.js"
import { paymentStorageContract } from "./PaymentContract.js"
import { rateLimitStorageContract } from "./RateLimitContract.js"
import { resealStorageContract } from "./ResealContract.js"
import { retentionStorageContract } from "./RetentionContract.js"
import { storageContract } from "./StorageContract.js"

storageContract("in memory", () => MemoryStorage)
paymentStorageContract("in memory", () => MemoryStorage)
chainJobStorageContract("in memory", () => MemoryStorage)
logoStorageContract("in memory", () => MemoryStorage)
engineSecretStorageContract("in memory", () => MemoryStorage)
auditStorageContract("in memory", () => MemoryStorage)
resealStorageContract("in memory", () => MemoryStorage)
rateLimitStorageContract("in memory", () => MemoryStorage)
retentionStorageContract("in memory", () => MemoryStorage)
