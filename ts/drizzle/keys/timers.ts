// A store's periodic work (writing its counts), run by timers that keep
// neither the process nor a dropped store alive.

/** Runs `work(target)` every `ms` while `target` is alive; unref'd, and holding it weakly. */
export function everyWhileAlive<T extends object>(target: T, ms: number, work: (target: T) => unknown): void {
  const held = new WeakRef(target);
  const timer = setInterval(() => {
    const t = held.deref();
    if (t === undefined) clearInterval(timer);
    else work(t);
  }, ms);
  timer.unref?.();
}
