// For the tests: the read worker's program run from its TypeScript source, through tsx
// (a worker's own `--import tsx` does not reach its entry module on Node 20).
import { register } from "tsx/esm/api"

register()
await import("./read-worker-node.ts")
