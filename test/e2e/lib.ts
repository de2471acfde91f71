/**
 * The one door from the e2e suite into the library: every test imports effect-kube's public API from here, so
 * that a move of the sources changes this file only.
 */
export * from "../../packages/effect-kube/src/index.js"

/** The `effect-kube` command's entry (run with `node --import tsx`), and the library's, for code it generates. */
export const cliEntry = new URL("../../packages/effect-kube/src/bin/effect-kube.ts", import.meta.url).pathname
export const libraryEntry = new URL("../../packages/effect-kube/src/index.ts", import.meta.url).pathname
