/**
 * Ctrl-C semantics: the first interrupt finishes the current window and then
 * stops; the second stops at once. Long waits race against `hard`.
 */
export class Interrupt {
  #count = 0;
  #wake: Array<() => void> = [];

  /** Number of interrupts received so far. */
  get count(): number {
    return this.#count;
  }

  get soft(): boolean {
    return this.#count >= 1;
  }

  get hard(): boolean {
    return this.#count >= 2;
  }

  trigger(): void {
    this.#count++;
    if (this.hard) {
      for (const wake of this.#wake.splice(0)) wake();
    }
  }

  /** Resolves when `promise` settles or a hard interrupt arrives, whichever is first. */
  race<T>(promise: Promise<T>): Promise<T | undefined> {
    if (this.hard) return Promise.resolve(undefined);
    return new Promise<T | undefined>((resolve, reject) => {
      const wake = () => resolve(undefined);
      this.#wake.push(wake);
      promise.then(resolve, reject).finally(() => {
        const i = this.#wake.indexOf(wake);
        if (i >= 0) this.#wake.splice(i, 1);
      });
    });
  }

  /** Sleeps `ms`, cut short by a hard interrupt. */
  async sleep(ms: number): Promise<void> {
    let id: ReturnType<typeof setTimeout> | undefined;
    await this.race(new Promise<void>((r) => id = setTimeout(r, ms)));
    clearTimeout(id);
  }
}
