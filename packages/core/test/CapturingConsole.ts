/**
 * A Console whose `log` keeps each line, for tests that read what the engine's
 * logger wrote (it writes one `log` call per line to the fiber's Console).
 */
import { Console } from "effect"

export const capturingConsole = () => {
  const lines: Array<string> = []
  const console = {
    [Console.TypeId]: Console.TypeId,
    unsafe: { log: (line: string) => lines.push(line) }
  } as unknown as Console.Console
  return { lines, console }
}
