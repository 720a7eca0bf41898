import { MemoryStorage } from "./MemoryStorage.js"
import { storageContract } from "./StorageContract.js"

storageContract("in memory", () => MemoryStorage)
