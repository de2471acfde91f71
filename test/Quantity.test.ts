import { assert, describe, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as fc from "fast-check"
import { ValidationError } from "../packages/effect-kube/src/Errors.js"
import * as Quantity from "../packages/effect-kube/src/Quantity.js"

const parse = (s: string): Quantity.Quantity => Quantity.unsafeParse(s)

/** A quantity string as a person writes one: a number and any suffix. */
const quantityString = fc
  .tuple(
    fc.constantFrom("", "-", "+"),
    fc.bigInt({ min: 0n, max: 10n ** 12n }),
    fc.option(fc.stringMatching(/^\d{1,9}$/), { nil: undefined }),
    fc.constantFrom("", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "e3", "e-3", "E6", "e0", "e12")
  )
  .map(([sign, whole, fraction, suffix]) => `${sign}${whole}${fraction === undefined ? "" : `.${fraction}`}${suffix}`)

describe("Quantity", () => {
  it("parses the forms the API uses", () => {
    assert.strictEqual(parse("500m").nanos, 500_000_000n)
    assert.strictEqual(parse("1.5Gi").nanos, 1536n * 1024n * 1024n * 1_000_000_000n)
    assert.strictEqual(parse("2e3").nanos, 2000n * 1_000_000_000n)
    assert.strictEqual(parse("1Ki").nanos, 1024n * 1_000_000_000n)
    assert.strictEqual(parse("1E").nanos, 10n ** 27n)
    assert.strictEqual(parse("1E3").nanos, 10n ** 12n)
    assert.strictEqual(parse(".5").nanos, 500_000_000n)
    assert.strictEqual(parse("-100u").nanos, -100_000n)
    assert.strictEqual(parse("500m").format, "DecimalSI")
    assert.strictEqual(parse("1.5Gi").format, "BinarySI")
    assert.strictEqual(parse("2e3").format, "DecimalExponent")
  })

  it("formats canonically, as the API server writes quantities back", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["500m", "500m"],
      ["0.5", "500m"],
      ["1.5", "1500m"],
      ["1.5Gi", "1536Mi"],
      ["2048Ki", "2Mi"],
      ["1024", "1024"],
      ["1000", "1k"],
      ["2000m", "2"],
      ["2e3", "2e3"],
      ["1000e3", "1e6"],
      ["1500e0", "1500"],
      ["0.5Ki", "512"],
      ["1000Ki", "1000Ki"],
      ["0.1Ki", "102400m"],
      ["1n", "1n"],
      ["0.1n", "1n"],
      ["-0.1n", "-1n"],
      ["0", "0"],
      ["0Gi", "0"],
      ["+12", "12"],
      ["1e21", "1e21"],
      ["12Ei", "12Ei"],
      ["1024Ei", "1024Ei"]
    ]
    for (const [input, expected] of cases) assert.strictEqual(Result.getOrThrow(Quantity.canonicalize(input)), expected, input)
  })

  it("refuses what is not a quantity with a ValidationError naming it", () => {
    for (const bad of ["", "m", "1.2.3", "5 Gi", "1Kb", "1ki", "e3", "1e", "0x10", "1e99999", "--1", "1,5", " 1"]) {
      const result = Quantity.parse(bad)
      assert.isTrue(Result.isFailure(result), bad)
      if (Result.isFailure(result)) {
        assert.instanceOf(result.failure, ValidationError)
        assert.include(result.failure.message, JSON.stringify(bad))
      }
    }
    assert.throws(() => Quantity.unsafeParse("1.2.3"))
  })

  it("adds and compares exactly (no floating point)", () => {
    assert.strictEqual(Quantity.format(Quantity.add(parse("100m"), parse("200m"))), "300m")
    assert.strictEqual(Quantity.format(Quantity.add(parse("0.1"), parse("0.2"))), "300m")
    assert.strictEqual(Quantity.format(Quantity.add(parse("1Gi"), parse("512Mi"))), "1536Mi")
    assert.strictEqual(Quantity.format(Quantity.add(parse("0"), parse("1Ki"))), "1Ki")
    assert.strictEqual(Quantity.format(Quantity.subtract(parse("1"), parse("250m"))), "750m")
    assert.strictEqual(Quantity.compare(parse("1Ki"), parse("1024")), 0)
    assert.isTrue(Quantity.equals(parse("1Ki"), parse("1024")))
    assert.strictEqual(Quantity.compare(parse("999m"), parse("1")), -1)
    assert.strictEqual(Quantity.compare(parse("1G"), parse("1Gi")), -1)
    assert.strictEqual(Quantity.toNumber(parse("500m")), 0.5)
    assert.strictEqual(Quantity.toMillis(parse("1.5")), 1500n)
  })

  it("property: the canonical form parses back to the same value and is its own canonical form", () => {
    fc.assert(
      fc.property(quantityString, (s) => {
        const q = parse(s)
        const canonical = Quantity.format(q)
        const again = parse(canonical)
        return again.nanos === q.nanos && Quantity.format(again) === canonical
      }),
      { numRuns: 2000 }
    )
  })

  it("property: comparison is a total order consistent with the numeric value", () => {
    const value = (s: string): number => {
      const m = /^([+-]?[\d.]+)(.*)$/.exec(s)!
      const multipliers: Record<string, number> = {
        "": 1, n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
        Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60
      }
      const suffix = m[2]!
      return Number(m[1]) * (suffix in multipliers ? multipliers[suffix]! : 10 ** Number(suffix.slice(1)))
    }
    fc.assert(
      fc.property(quantityString, quantityString, quantityString, (a, b, c) => {
        const [qa, qb, qc] = [parse(a), parse(b), parse(c)]
        // antisymmetric and reflexive
        if (Quantity.compare(qa, qb) !== -Quantity.compare(qb, qa)) return false
        if (Quantity.compare(qa, qa) !== 0) return false
        // transitive
        if (Quantity.compare(qa, qb) <= 0 && Quantity.compare(qb, qc) <= 0 && Quantity.compare(qa, qc) > 0) return false
        // consistent with the numbers, where floating point can tell them apart
        const [va, vb] = [value(a), value(b)]
        if (Math.abs(va - vb) > 1e-6 * Math.max(1, Math.abs(va), Math.abs(vb))) {
          return Quantity.compare(qa, qb) === (va < vb ? -1 : 1)
        }
        return true
      }),
      { numRuns: 2000 }
    )
  })

  it("property: addition is exact, commutative and agrees with the order", () => {
    fc.assert(
      fc.property(quantityString, quantityString, (a, b) => {
        const [qa, qb] = [parse(a), parse(b)]
        const sum = Quantity.add(qa, qb)
        return sum.nanos === Quantity.add(qb, qa).nanos &&
          Quantity.compare(sum, qa) === (qb.nanos > 0n ? 1 : qb.nanos < 0n ? -1 : 0) &&
          parse(Quantity.format(sum)).nanos === sum.nanos
      }),
      { numRuns: 1000 }
    )
  })
})
