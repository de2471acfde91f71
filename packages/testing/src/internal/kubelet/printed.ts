/**
 * What a container's `command` and `args` would obviously print, for the simulated kubelet's
 * logs (`simulate`). The rule, stated in docs/testing.md: the words are `command` then `args`;
 * `echo ...` and `printf FORMAT ...` print as a shell's built-ins do, and `sh -c SCRIPT` (or
 * `bash`, `ash`, `/bin/sh`, flags such as `-ec`) runs SCRIPT's statements in order: `echo`,
 * `printf`, `for NAME in WORDS; do ...; done` (WORDS may be `$(seq [A] B)` or `{A..B}`),
 * `NAME=value`, `exec`, `true`, `:`, `sleep` (printing nothing), and `exit` (ends the script).
 * `$NAME` and `${NAME}` expand to the loop's variable, an assignment or the container's `env`
 * values (else to nothing); quotes are a shell's. Output to stderr (`>&2`) is in the log as on
 * a cluster; output redirected to a file is not. Any other command prints nothing, and so does
 * a `while`/`until` loop (it need not end): the script goes on after it.
 */

/** A word as the shell read it: its text, and whether it may still expand (`$x` outside single quotes). */
interface Word {
  readonly parts: ReadonlyArray<{ readonly text: string; readonly expand: boolean; readonly quoted: boolean }>
}

type Token = { readonly _tag: "word"; readonly word: Word } | { readonly _tag: "sep" }

/** Splits a script into words and statement separators (`;`, `&&`, `||`, `|`, `&`, newlines), quotes kept. */
const tokenize = (script: string): Array<Token> => {
  const tokens: Array<Token> = []
  let parts: Array<{ text: string; expand: boolean; quoted: boolean }> = []
  let current = ""
  let inWord = false
  const flushPart = (expand: boolean, quoted: boolean) => {
    if (current !== "" || quoted) parts.push({ text: current, expand, quoted })
    current = ""
  }
  const endWord = () => {
    flushPart(true, false)
    if (inWord) tokens.push({ _tag: "word", word: { parts } })
    parts = []
    inWord = false
  }
  for (let i = 0; i < script.length; i++) {
    const c = script[i]!
    if (c === "'") {
      flushPart(true, false)
      const end = script.indexOf("'", i + 1)
      current = script.slice(i + 1, end === -1 ? script.length : end)
      flushPart(false, true)
      inWord = true
      i = end === -1 ? script.length : end
    } else if (c === "\"") {
      flushPart(true, false)
      let j = i + 1
      while (j < script.length && script[j] !== "\"") {
        if (script[j] === "\\" && j + 1 < script.length && "\"\\$`".includes(script[j + 1]!)) j++
        current += script[j]
        j++
      }
      flushPart(true, true)
      inWord = true
      i = j
    } else if (c === "\\" && i + 1 < script.length) {
      current += script[++i]
      inWord = true
    } else if (c === "$" && script[i + 1] === "(") {
      // $( ... ): kept whole, for `$(seq ...)`
      const end = script.indexOf(")", i)
      current += script.slice(i, end === -1 ? script.length : end + 1)
      inWord = true
      i = end === -1 ? script.length : end
    } else if (c === "&" && (current.endsWith(">") || current.endsWith("<"))) {
      current += c // >&2, 2>&1: a redirection, not a separator
    } else if (c === ";" || c === "\n" || c === "&" || c === "|") {
      endWord()
      if ((c === "&" || c === "|") && script[i + 1] === c) i++
      tokens.push({ _tag: "sep" })
    } else if (c === " " || c === "\t") {
      endWord()
    } else if (c === "#" && !inWord) {
      const end = script.indexOf("\n", i)
      i = end === -1 ? script.length : end - 1
    } else {
      current += c
      inWord = true
    }
  }
  endWord()
  return tokens
}

type Env = ReadonlyMap<string, string>

const expandText = (text: string, env: Env): string =>
  text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_, a, b) => env.get(a ?? b) ?? "")

/** A word's values: one, or the numbers of `$(seq ...)` / `{A..B}`, or none for an unquoted empty expansion. */
const expand = (word: Word, env: Env): Array<string> => {
  if (word.parts.length === 1 && !word.parts[0]!.quoted) {
    const text = word.parts[0]!.text
    const seq = /^\$\(\s*seq\s+(-?\d+)(?:\s+(-?\d+))?\s*\)$/.exec(text)
    const brace = /^\{(-?\d+)\.\.(-?\d+)\}$/.exec(text)
    if (seq !== null || brace !== null) {
      const [from, to] = seq !== null
        ? seq[2] === undefined ? [1, Number(seq[1])] : [Number(seq[1]), Number(seq[2])]
        : [Number(brace![1]), Number(brace![2])]
      const step = brace !== null && to < from ? -1 : 1
      const values: Array<string> = []
      for (let n = from; step > 0 ? n <= to : n >= to; n += step) {
        values.push(String(n))
        if (values.length > 10_000) break
      }
      return values
    }
    const value = word.parts[0]!.expand ? expandText(text, env) : text
    // an unquoted word splits on blanks, as a shell splits it
    return value.split(/[ \t\n]+/).filter((w) => w !== "")
  }
  return [word.parts.map((p) => (p.expand ? expandText(p.text, env) : p.text)).join("")]
}

const unescape = (text: string): string =>
  text.replace(/\\(n|t|\\|r|a|0)/g, (_, c: string) => ({ n: "\n", t: "\t", "\\": "\\", r: "\r", a: "\u0007", "0": "" })[c]!)

/** printf's output: FORMAT applied to the arguments, again while arguments remain, as the shell's printf does. */
export const printf = (format: string, args: ReadonlyArray<string>): string => {
  let out = ""
  let at = 0
  do {
    let used = false
    out += unescape(format).replace(/%(%|-?\d*s|-?\d*d|-?\d*i)/g, (spec: string) => {
      if (spec === "%%") return "%"
      used = true
      const arg = args[at++] ?? ""
      const width = Number(/-?\d+/.exec(spec)?.[0] ?? 0)
      const value = spec.endsWith("s") ? arg : String(Number.parseInt(arg, 10) || 0)
      return width < 0 ? value.padEnd(-width) : value.padStart(width)
    })
    if (!used) break
  } while (at < args.length)
  return out
}

const echo = (args: ReadonlyArray<string>): string => {
  let newline = true
  let escapes = false
  let i = 0
  for (; i < args.length && /^-[neE]+$/.test(args[i]!); i++) {
    if (args[i]!.includes("n")) newline = false
    if (args[i]!.includes("e")) escapes = true
  }
  const text = args.slice(i).join(" ")
  return (escapes ? unescape(text) : text) + (newline ? "\n" : "")
}

const shells = new Set(["sh", "bash", "ash", "dash", "zsh"])

const isShell = (word: string) => shells.has(word.slice(word.lastIndexOf("/") + 1))

/** Runs a script's statements; answers false once `exit` ran. */
const run = (tokens: ReadonlyArray<Token>, env: Map<string, string>, out: Array<string>, depth = 0): boolean => {
  let i = 0
  const statement = (): Array<Word> => {
    const words: Array<Word> = []
    while (i < tokens.length && tokens[i]!._tag === "word") words.push((tokens[i++] as { word: Word }).word)
    return words
  }
  const plain = (word: Word | undefined) =>
    word !== undefined && word.parts.length === 1 && !word.parts[0]!.quoted ? word.parts[0]!.text : undefined
  while (i < tokens.length) {
    if (tokens[i]!._tag === "sep") {
      i++
      continue
    }
    const start = i
    const words = statement()
    const head = plain(words[0])
    if (head === "for" && plain(words[2]) === "in" && depth < 8) {
      // for NAME in WORDS ; do BODY ; done  (BODY up to the matching done)
      const name = plain(words[1]) ?? ""
      const values = words.slice(3).flatMap((w) => expand(w, env))
      let j = i
      while (j < tokens.length && tokens[j]!._tag === "sep") j++
      if (plain((tokens[j] as { word?: Word }).word) !== "do") return true
      j++
      const bodyStart = j
      let nesting = 1
      for (; j < tokens.length; j++) {
        const text = plain((tokens[j] as { word?: Word }).word)
        const first = j === bodyStart || tokens[j - 1]!._tag === "sep"
        if (first && (text === "for" || text === "while" || text === "until")) nesting++
        if (first && text === "done" && --nesting === 0) break
      }
      // `do echo x` : the word after do starts the body's first statement
      const body = tokens.slice(bodyStart, j)
      i = j + 1
      for (const value of values) {
        env.set(name, value)
        if (!run(body, env, out, depth + 1)) return false
      }
      continue
    }
    if (head === "while" || head === "until") {
      // not run: it need not end. Skip to its done.
      let nesting = 1
      for (; i < tokens.length; i++) {
        const text = plain((tokens[i] as { word?: Word }).word)
        const first = tokens[i - 1]?._tag === "sep" || i === start
        if (first && (text === "for" || text === "while" || text === "until")) nesting++
        if (first && text === "done" && --nesting === 0) break
      }
      i++
      continue
    }
    if (!command(words, env, out, depth)) return false
  }
  return true
}

/** One simple command; answers false for `exit`. */
const command = (given: ReadonlyArray<Word>, env: Map<string, string>, out: Array<string>, depth: number): boolean => {
  let words = given
  // NAME=value before a command, or alone
  while (words.length > 0) {
    const first = words[0]!.parts[0]
    const assignment = first !== undefined && !first.quoted ? /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(first.text) : null
    if (assignment === null) break
    const rest: Word = { parts: [{ ...first!, text: assignment[2]! }, ...words[0]!.parts.slice(1)] }
    env.set(assignment[1]!, expand(rest, env).join(" "))
    words = words.slice(1)
  }
  let argv = words.flatMap((w) => expand(w, env))
  // redirections: to stderr stays in the log; to a file (or /dev/null) does not
  let discarded = false
  const kept: Array<string> = []
  for (let k = 0; k < argv.length; k++) {
    const arg = argv[k]!
    const redirect = /^(\d?)(>>?)(&?)(.*)$/.exec(arg)
    if (redirect === null) {
      kept.push(arg)
      continue
    }
    const target = redirect[4] !== "" ? redirect[4]! : argv[++k] ?? ""
    const fd = redirect[1] === "" ? "1" : redirect[1]
    if (redirect[3] === "&") continue // >&2, 2>&1: the log has both streams
    if (fd === "1" && target !== "/dev/stdout" && target !== "/dev/stderr") discarded = true
  }
  argv = kept
  while (argv[0] === "exec" || argv[0] === "command") argv = argv.slice(1)
  const name = argv[0]
  if (name === undefined) return true
  const print = (text: string) => {
    if (!discarded) out.push(text)
  }
  const base = name.slice(name.lastIndexOf("/") + 1)
  if (base === "echo") print(echo(argv.slice(1)))
  else if (base === "printf" && argv[1] !== undefined) print(printf(argv[1], argv.slice(2)))
  else if (base === "exit") return false
  else if (isShell(name) && depth < 8) {
    const script = scriptOf(argv)
    // a shell's exit ends that shell alone
    if (script !== undefined) run(tokenize(script), new Map(env), out, depth + 1)
  }
  return true
}

/** The script of `sh -c SCRIPT` (flags may be grouped: `-ec`, `-x -c`), if that is the form. */
const scriptOf = (argv: ReadonlyArray<string>): string | undefined => {
  for (let k = 1; k < argv.length; k++) {
    const flag = argv[k]!
    if (!flag.startsWith("-")) return undefined
    if (flag.slice(1).includes("c")) return argv[k + 1]
  }
  return undefined
}

/** What `command` then `args` would print, with the container's `env` values. */
export const printedBy = (
  words: ReadonlyArray<string>,
  env: ReadonlyMap<string, string> = new Map()
): string => {
  const out: Array<string> = []
  const vars = new Map(env)
  const name = words[0]
  if (name === undefined) return ""
  const base = name.slice(name.lastIndexOf("/") + 1)
  if (isShell(name)) {
    const script = scriptOf(words)
    if (script !== undefined) run(tokenize(script), vars, out)
  } else if (base === "echo") out.push(echo(words.slice(1)))
  else if (base === "printf" && words[1] !== undefined) out.push(printf(words[1], words.slice(2)))
  return out.join("")
}

/** The text as log lines: whole lines, the last one too when it has no newline. */
export const asLines = (text: string): Array<string> => {
  if (text === "") return []
  const lines = text.split("\n")
  if (lines.at(-1) === "") lines.pop()
  return lines
}
