/**
 * Placeholder until the streams land (watch, listStream, watcher, logs, logStream, waitFor).
 * Owned by the streams work; every function here is replaced.
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { WaitTimeout } from "../Errors.js"
import type * as Kube from "../Kube.js"
import type * as Watcher from "../Watcher.js"
import type { Target } from "./api.js"

const notYet = (what: string) => `effect-kube: ${what} is not implemented yet`

export const watch = <A, I>(_target: Target<A, I>, _options: Kube.WatchOptions): Stream.Stream<Kube.WatchEvent<A>, Kube.Error, Kube.Requirements> =>
  Stream.dieMessage(notYet("watch"))
export const listStream = <A, I>(_target: Target<A, I>, _options: Kube.ListStreamOptions): Stream.Stream<A, Kube.Error, Kube.Requirements> =>
  Stream.dieMessage(notYet("listStream"))
export const watcher = <A, I>(_target: Target<A, I>, _options: Watcher.Options): Stream.Stream<Watcher.Event<A>, Kube.Error, Kube.Requirements> =>
  Stream.dieMessage(notYet("watcher"))
export const logs = <A, I>(_target: Target<A, I>, _name: string, _options: Kube.LogOptions): Effect.Effect<string, Kube.Error, Kube.Requirements> =>
  Effect.dieMessage(notYet("logs"))
export const logStream = <A, I>(_target: Target<A, I>, _name: string, _options: Kube.LogOptions): Stream.Stream<string, Kube.Error, Kube.Requirements> =>
  Stream.dieMessage(notYet("logStream"))
export const waitFor = <A, I>(
  _target: Target<A, I>,
  _name: string,
  _condition: Kube.Condition<A>,
  _options: { readonly timeout: Duration.DurationInput }
): Effect.Effect<A | undefined, Kube.Error | WaitTimeout, Kube.Requirements> => Effect.dieMessage(notYet("waitFor"))
