/**
 * The CEL evaluator, `@bufbuild/cel`, loaded when a fake cluster first needs it (a CRD with
 * `x-kubernetes-validations`, a ValidatingAdmissionPolicy): importing it costs ~350 ms of a cold
 * process, which a test that never writes a rule should not pay. It is loaded synchronously (a
 * `require` of the package), because the fake's write path that calls it is synchronous.
 *
 * Why `@bufbuild/cel`: of the evaluators on npm it is the one that runs the cel-spec conformance
 * suite (heterogeneous equality `1 == 1.0`, cross-type numeric comparison, the string extension
 * library with `format`, and RE2 regular expressions, which rules such as Gateway API's `(?i)` need);
 * `@marcbachmann/cel-js` is faster and parses optional syntax but fails those. What it lacks, the
 * optional syntax (`self.?x`, `list[?0]`) and two-variable comprehensions, fails to compile here and
 * is reported, never guessed at.
 *
 * @internal
 */
import type * as CelModule from "@bufbuild/cel"
import type * as CelExtModule from "@bufbuild/cel/ext"
import type * as ProtobufModule from "@bufbuild/protobuf"
import type * as ReflectModule from "@bufbuild/protobuf/reflect"
import type * as WktModule from "@bufbuild/protobuf/wkt"
import type * as Re2Module from "@bufbuild/re2"
import { createRequire } from "node:module"

/** The modules of the evaluator, as one value. @internal */
export interface Runtime {
  readonly cel: typeof CelModule
  readonly ext: typeof CelExtModule
  readonly protobuf: typeof ProtobufModule
  readonly reflect: typeof ReflectModule
  readonly wkt: typeof WktModule
  /** RE2, the regular expressions of Go and of the API server (the engine `@bufbuild/cel` uses). */
  readonly re2: typeof Re2Module
}

let loaded: Runtime | undefined

/** The evaluator's modules, required on first use. @internal */
export const runtime = (): Runtime => {
  if (loaded === undefined) {
    const require = createRequire(import.meta.url)
    loaded = {
      cel: require("@bufbuild/cel") as typeof CelModule,
      ext: require("@bufbuild/cel/ext") as typeof CelExtModule,
      protobuf: require("@bufbuild/protobuf") as typeof ProtobufModule,
      reflect: require("@bufbuild/protobuf/reflect") as typeof ReflectModule,
      wkt: require("@bufbuild/protobuf/wkt") as typeof WktModule,
      re2: require("@bufbuild/re2") as typeof Re2Module
    }
  }
  return loaded
}
