/**
 * The one door from the chaos suite into the library: every chaos test imports effect-kube's public API from here,
 * so that a move of the sources changes this file only.
 */
export * from "../../packages/effect-kube/src/index.js"
