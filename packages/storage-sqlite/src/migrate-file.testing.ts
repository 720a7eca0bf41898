/**
 * For the migration race test: migrates the file named by argv[2] with the
 * runtime's driver and prints what this process applied, as JSON.
 */
import { Effect } from "effect"
import { runtimeDriver } from "./RuntimeDriver.testing.js"

const filename = process.argv[2]
if (filename === undefined) throw new Error("usage: migrate-file.testing.ts <file>")
const applied = await Effect.runPromise(runtimeDriver.migrateFile(filename))
process.stdout.write(`${JSON.stringify(applied)}\n`)
