/**
 * How many of something each key holds (requests under way per source address, say), in a Map that keeps only keys
 * holding at least one: a key whose count falls to 0 is forgotten, so the Map stays as large as what is under way.
 */
export class CountsByKey {
  private readonly counts = new Map<string, number>();

  /** The count of `key`; 0 for one holding none. */
  get(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  /** Counts one more for `key`. */
  add(key: string): void {
    this.counts.set(key, this.get(key) + 1);
  }

  /** Counts one fewer for `key`, forgetting it at 0 (never below). */
  remove(key: string): void {
    const count = this.get(key) - 1;
    if (count <= 0) this.counts.delete(key);
    else this.counts.set(key, count);
  }
}
