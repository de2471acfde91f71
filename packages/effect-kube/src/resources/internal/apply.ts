/**
 * The type-level building blocks of the generated apply configurations
 * (`generatedApply.ts`). Types only: nothing here exists at run time.
 *
 * They are homomorphic mapped types over the generated object types, so every field keeps
 * the spec's TSDoc (an editor shows it on the apply configuration as on the object) and the
 * generated file stays one short line per definition.
 */

/**
 * A struct as server-side apply takes it: every field optional; the fields named in
 * `Nested` take the type given there (the apply configuration of a nested struct, or a list
 * whose entries are keyed), the others the object's own type (scalars, and atomic structs and
 * lists, which the server replaces whole).
 */
export type Apply<T, Nested = {}> = {
  readonly [K in keyof T]?: (K extends keyof Nested ? Nested[K] : T[K]) | undefined
}

/** The one field of `metadata` an apply configuration needs: the name of the object it applies. */
export interface Named {
  /** The object's name, which the apply creates or updates. */
  readonly name: string
}

/**
 * A served kind as server-side apply takes it: `apiVersion`, `kind` and `metadata.name`
 * required (the server needs them to know what to apply), every other field optional.
 */
export type ApplyKind<T, ApiVersion extends string, Kind extends string, Metadata, Nested = {}> =
  & {
    readonly apiVersion: ApiVersion
    readonly kind: Kind
    readonly metadata: Metadata & Named
  }
  & Apply<Omit<T, "apiVersion" | "kind" | "metadata">, Nested>
