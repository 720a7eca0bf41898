import { bunReleaseSuites, bunRuntimeSuites, onBun } from "./vitest.bun.config.js"

// `npm run test:bun:release` (part of `npm run test:release`): the storage and end-to-end
// suites on Bun that `npm test`'s Bun pass leaves out (see vitest.bun.config.ts).
export default onBun(bunReleaseSuites, bunRuntimeSuites)
