/**
 * Kept for imports by path: the Pod kind now lives in the generated files (see `index.ts`).
 *
 * @since 0.1.0
 */
export * from "./generated.js"
