/**
 * Bitsets of document slots, the embedded search engine's sets of documents: a Uint32Array whose bit `slot & 31` of
 * word `slot >>> 5` says whether the document in that slot is in the set.
 */

/** How many bits of `word` are set. */
export function popcount(word: number): number {
  let x = word - ((word >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** Calls `visit` with every slot set in `bits`, ascending. */
export function forEachSlot(bits: Uint32Array, visit: (slot: number) => void): void {
  for (let index = 0; index < bits.length; index += 1) {
    let word = bits[index] as number;
    while (word !== 0) {
      const lowest = word & -word;
      visit(index * 32 + 31 - Math.clz32(lowest));
      word ^= lowest;
    }
  }
}

/** Whether `slot` is set in `bits`. */
export function hasSlot(bits: Uint32Array, slot: number): boolean {
  return (((bits[slot >>> 5] as number) >>> (slot & 31)) & 1) === 1;
}
