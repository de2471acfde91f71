/**
 * The stream operations of `Kube.api`: watch, listStream, watcher, logs, logStream and
 * waitFor. Each lives in its own module; this one binds them to a target.
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type { WaitTimeout } from "../Errors.js"
import type * as Kube from "../Kube.js"
import type * as Watcher from "../Watcher.js"
import type { Target } from "./api.js"
import * as logs_ from "./logs.js"
import * as waitFor_ from "./waitFor.js"
import * as watch_ from "./watch.js"
import * as watcher_ from "./watcher.js"

export const watch = <A, I>(
  target: Target<A, I>,
  options: Kube.WatchOptions
): Stream.Stream<Kube.WatchEvent<A>, Kube.Error, Kube.Requirements> => watch_.watch(target, options)

export const listStream = <A, I>(
  target: Target<A, I>,
  options: Kube.ListStreamOptions
): Stream.Stream<A, Kube.Error, Kube.Requirements> => watch_.listStream(target, options)

export const watcher = <A, I>(
  target: Target<A, I>,
  options: Watcher.Options
): Stream.Stream<Watcher.Event<A>, Kube.Error, Kube.Requirements> => watcher_.watcher(target, options)

export const logs = <A, I>(
  target: Target<A, I>,
  name: string,
  options: Kube.LogOptions
): Effect.Effect<string, Kube.Error, Kube.Requirements> => logs_.logs(target, name, options)

export const logStream = <A, I>(
  target: Target<A, I>,
  name: string,
  options: Kube.LogOptions
): Stream.Stream<string, Kube.Error, Kube.Requirements> => logs_.logStream(target, name, options)

export const waitFor = <A, I>(
  target: Target<A, I>,
  name: string,
  condition: Kube.Condition<A>,
  options: { readonly timeout: Duration.DurationInput }
): Effect.Effect<A | undefined, Kube.Error | WaitTimeout, Kube.Requirements> =>
  waitFor_.waitFor(target, name, condition, options)
