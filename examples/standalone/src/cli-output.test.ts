import { describe, expect, it } from "vitest"
import { colourWanted, commandList, fullUsage, stripAnsi, tidyHelp } from "./cli-output.js"

describe("colourWanted", () => {
  it("colours a terminal only, unless NO_COLOR is set to anything; FORCE_COLOR overrides both", () => {
    expect(colourWanted({}, true)).toBe(true)
    expect(colourWanted({}, false)).toBe(false)
    expect(colourWanted({ TERM: "dumb" }, true)).toBe(false)
    expect(colourWanted({ NO_COLOR: "1" }, true)).toBe(false)
    expect(colourWanted({ NO_COLOR: "0" }, true)).toBe(false)
    // https://no-color.org: only a non-empty value counts.
    expect(colourWanted({ NO_COLOR: "" }, true)).toBe(true)
    expect(colourWanted({ FORCE_COLOR: "1" }, false)).toBe(true)
    expect(colourWanted({ FORCE_COLOR: "", NO_COLOR: "1" }, false)).toBe(true)
    expect(colourWanted({ FORCE_COLOR: "0" }, true)).toBe(false)
    expect(colourWanted({ FORCE_COLOR: "false" }, true)).toBe(false)
  })
})

const HELP = [
  "\u001b[0;1mUSAGE\u001b[0m",
  "",
  "$ create --name text [--database file|url]",
  "",
  "\u001b[0;1m--name text\u001b[0m",
  "",
  "  A user-defined piece of text.",
  "",
  "  The partner's display name",
  "",
  "\u001b[0;1m--json\u001b[0m",
  "",
  "  A true or false value.",
  "",
  "  Print JSON for scripts",
  ""
].join("\n")

describe("tidyHelp", () => {
  it("names the whole command in usage lines, drops the generic type paragraphs and, without colour, every escape", () => {
    const plain = tidyHelp(HELP, {
      args: ["partners", "create", "--help"],
      root: "pay",
      colour: false
    })
    expect(plain).toBe(
      [
        "USAGE",
        "",
        "$ pay partners create --name text [--database file|url]",
        "",
        "--name text",
        "",
        "  The partner's display name",
        "",
        "--json",
        "",
        "  Print JSON for scripts",
        ""
      ].join("\n")
    )
    expect(plain).not.toContain("\u001b")
  })

  it("keeps the colour codes when colour is wanted", () => {
    const coloured = tidyHelp(HELP, { args: ["partners", "create"], root: "pay", colour: true })
    expect(coloured).toContain("\u001b[0;1mUSAGE\u001b[0m")
    expect(coloured).toContain("$ pay partners create --name text")
    expect(stripAnsi(coloured)).not.toContain("\u001b")
  })
})

describe("fullUsage", () => {
  it("finds the command in the command line, past its arguments, and leaves the root's usage alone", () => {
    expect(
      fullUsage("$ rotate <keyId>", ["apps", "keys", "rotate", "key_1", "--help"], "pay")
    ).toBe("$ pay apps keys rotate <keyId>")
    expect(fullUsage("$ set-status", ["merchants", "set-status", "mrch_1", "active"], "pay")).toBe(
      "$ pay merchants set-status"
    )
    expect(fullUsage("$ pay <subcommand>", ["--help"], "pay")).toBe("$ pay <subcommand>")
    // The commands come first: nothing after the first option is taken for one.
    expect(fullUsage("$ list", ["partners", "list", "--name", "apps"], "pay")).toBe(
      "$ pay partners list"
    )
    expect(fullUsage("a line with $ create inside", ["partners", "create"], "pay")).toBe(
      "a line with $ create inside"
    )
  })
})

describe("commandList", () => {
  it("names a command two levels down once, and lines the descriptions up again", () => {
    const listed = [
      "COMMANDS",
      "",
      "  - apps                                         Wallet apps",
      "",
      "  - apps list [--json]                           List wallet apps",
      "",
      "  - apps apps keys rotate --app app_… <key-id>  Replace a key",
      ""
    ].join("\n")
    expect(commandList(listed)).toBe(
      [
        "COMMANDS",
        "",
        "  - apps                                   Wallet apps",
        "",
        "  - apps list [--json]                     List wallet apps",
        "",
        "  - apps keys rotate --app app_… <key-id>  Replace a key",
        ""
      ].join("\n")
    )
    // Without a doubled name, nothing changes.
    const right =
      "  - keys list --partner ptnr_…  List the keys\n  - keys                        A partner's keys"
    expect(commandList(right)).toBe(right)
  })
})
