/**
 * The CLI's output for pipes and people: colour only on a terminal that wants
 * it, and @effect/cli's help made to read as this CLI's (`$ pay partners
 * create …`, no generic "A user-defined piece of text." under each option,
 * `apps keys list` where @effect/cli lists `apps apps keys list`).
 */
import { type Console, Effect } from "effect"

/**
 * Whether to write colour codes to a stream: FORCE_COLOR forces them (`0` or
 * `false`: never), a non-empty NO_COLOR stops them (https://no-color.org),
 * else only on a terminal that is not `dumb`. Node's own rule, in that order.
 */
export const colourWanted = (env: NodeJS.ProcessEnv, isTTY: boolean): boolean => {
  const force = env.FORCE_COLOR
  if (force !== undefined) return force !== "0" && force.toLowerCase() !== "false"
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false
  return isTTY && env.TERM !== "dumb"
}

// Control Sequence Introducer sequences: what @effect/printer-ansi writes (colours, bold).
// biome-ignore lint/suspicious/noControlCharactersInRegex: the escape byte is what is matched
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g

export const stripAnsi = (text: string): string => text.replace(ANSI, "")

/** The paragraphs @effect/cli puts under every option of a type: they say nothing of the option. */
const GENERIC =
  /^ *(A user-defined piece of text\.|A user-defined piece of text that is confidential\.|A true or false value\.|An integer\.)\n\n/gm

/**
 * `$ create --name …` as `$ pay partners create --name …`: @effect/cli names
 * only the last command in a usage line; the rest is on the command line
 * (`args`, without the runtime and script), before the first option.
 */
export const fullUsage = (text: string, args: ReadonlyArray<string>, root: string): string => {
  const words: Array<string> = []
  for (const arg of args) {
    if (arg.startsWith("-")) break
    words.push(arg)
  }
  return text.replace(/^\$ (\S+)/gm, (line, command: string) => {
    if (command === root) return line
    const at = words.lastIndexOf(command)
    return `$ ${[root, ...(at === -1 ? [command] : words.slice(0, at + 1))].join(" ")}`
  })
}

/** A line of a COMMANDS list: `  - <usage>  <description>`, the descriptions in one column. */
const COMMAND_LINE = /^( *- )(\S+(?: \S+)*) {2,}(\S.*)$/

/**
 * A COMMANDS list with each command named once. @effect/cli (0.77) lists a
 * command two levels down with its parent's name twice (`apps apps keys
 * list`: it prefixes the parent's usage, which already starts with the
 * grandparent's); no command of this CLI repeats a name, so a repeated first
 * word is dropped, and the descriptions are lined up again.
 */
export const commandList = (text: string): string => {
  const lines = text.split("\n")
  const entries = lines.map((line) => {
    const match = COMMAND_LINE.exec(line)
    if (match === null) return undefined
    const words = match[2]!.split(" ")
    while (words.length > 1 && words[0] === words[1]) words.shift()
    return { bullet: match[1]!, usage: words.join(" "), description: match[3]! }
  })
  const width = Math.max(0, ...entries.map((e) => e?.usage.length ?? 0))
  return lines
    .map((line, i) => {
      const entry = entries[i]
      return entry === undefined
        ? line
        : `${entry.bullet}${entry.usage.padEnd(width + 2)}${entry.description}`
    })
    .join("\n")
}

/** @effect/cli's help and messages, tidied and without colour when `colour` is false. */
export const tidyHelp = (
  text: string,
  options: { readonly args: ReadonlyArray<string>; readonly root: string; readonly colour: boolean }
): string => {
  const tidied = commandList(fullUsage(text.replace(GENERIC, ""), options.args, options.root))
  return options.colour ? tidied : stripAnsi(tidied)
}

/**
 * A Console for @effect/cli that tidies the help it prints (the commands'
 * own output goes to stdout directly). Its usage errors are left to the
 * caller, which prints them as it prints every refusal: one line, or JSON.
 */
export const cliConsole = (
  base: Console.Console,
  options: {
    readonly args: ReadonlyArray<string>
    readonly root: string
    readonly colourOut: boolean
  }
): Console.Console => {
  const tidy = (colour: boolean) => (arg: unknown) =>
    typeof arg === "string" ? tidyHelp(arg, { ...options, colour }) : arg
  const log = (...args: ReadonlyArray<unknown>) => base.log(...args.map(tidy(options.colourOut)))
  const error = (..._: ReadonlyArray<unknown>) => Effect.void
  return {
    ...base,
    log,
    info: log,
    error,
    warn: error,
    unsafe: {
      ...base.unsafe,
      log: (...args) => base.unsafe.log(...args.map(tidy(options.colourOut))),
      error: () => {}
    }
  }
}
