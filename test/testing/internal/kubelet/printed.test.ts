/**
 * The simulated kubelet's logs (issue 41.2): what a pod's command/args would obviously print
 * for the common shell forms, by the rule of packages/testing/src/internal/kubelet/printed.ts,
 * read back through the client's log path from FakeCluster.layer({ simulate: true }).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as TestClock from "effect/testing/TestClock"
import { Kube, Pods } from "effect-kube"
import { FakeCluster } from "@effect-kube/testing"

const pods = Kube.api(Pods, { namespace: "default" })

/** [command, args, env, the log] */
const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, ReadonlyArray<string>, Record<string, string>, string]> = [
  ["echo", ["echo", "hello"], [], {}, "hello\n"],
  ["command and args", ["echo"], ["hello", "world"], {}, "hello world\n"],
  ["printf", ["printf", "%s=%d\\n", "a", "1", "b", "2"], [], {}, "a=1\nb=2\n"],
  ["sh -c with statements", ["sh", "-c", "echo one; echo 'two  spaced' && echo \"three $GREETING\""], [], { GREETING: "hi" }, "one\ntwo  spaced\nthree hi\n"],
  ["a loop of echoes", ["sh", "-c", "for i in 1 2 3; do echo tick $i; sleep 0.1; done; echo done"], [], {}, "tick 1\ntick 2\ntick 3\ndone\n"],
  ["a loop over seq", ["/bin/sh", "-ec", "for n in $(seq 2); do printf 'n=%s\\n' \"$n\"; done"], [], {}, "n=1\nn=2\n"],
  ["bash brace range", ["bash", "-c"], ["for n in {3..1}; do echo $n; done"], {}, "3\n2\n1\n"],
  ["stderr kept, a file not", ["sh", "-c", "echo err >&2; echo gone > /tmp/x; echo kept"], [], {}, "err\nkept\n"],
  ["exit ends it", ["sh", "-c", "echo before; exit 3; echo after"], [], {}, "before\n"],
  ["a while loop is not run", ["sh", "-c", "echo start; while true; do echo spin; sleep 1; done; echo end"], [], {}, "start\nend\n"],
  ["an assignment", ["sh", "-c", "NAME=web; echo \"serving $NAME\""], [], {}, "serving web\n"],
  ["no command: nothing", [], [], {}, ""],
  ["another program: nothing", ["nginx", "-g", "daemon off;"], [], {}, ""]
]

describe("simulated logs: what a pod's command would print", () => {
  it.effect("through the log API of FakeCluster.layer({ simulate: true })", () =>
    Effect.gen(function*() {
      for (let i = 0; i < cases.length; i++) {
        const [, command, args, env] = cases[i]!
        yield* pods.create({
          metadata: { name: `p${i}` },
          spec: {
            restartPolicy: "Never",
            containers: [{
              name: "c",
              image: "busybox",
              ...(command.length > 0 ? { command: [...command] } : {}),
              ...(args.length > 0 ? { args: [...args] } : {}),
              env: Object.entries(env).map(([name, value]) => ({ name, value }))
            }]
          }
        })
      }
      yield* TestClock.adjust("1 second") // the kubelet starts them (podStartMs) and they end (podRunMs)
      for (let i = 0; i < cases.length; i++) {
        const [what, , , , log] = cases[i]!
        assert.strictEqual(yield* pods.logs(`p${i}`), log, what)
      }
    }).pipe(Effect.provide(FakeCluster.layer({ simulate: true }))))
})
