/**
 * The embedded search engine's full-text index (`global`): a term dictionary (term-dictionary.ts: exact, prefix and
 * MiniSearch's fuzzy term matching) and, per term, its postings packed in typed arrays, scored with MiniSearch's BM25+
 * (MiniSearch's own `search` costs ~2 µs per matching document, too slow for broad terms at 100,000 documents).
 *
 * Memory, 100,000 bench devices (~320,000 terms, ~4.3 million postings): 346 MiB when each term had a radix tree node
 * and a Map of postings per field; a posting is now 4 bytes and a term that occurs once none beyond its number.
 */
import { type SearchDocument, valuesAtPath } from '../../core/search/documents.js';
import { globalQueryTerms, textWords } from '../../core/search/query.js';
import { FULL_TEXT_FIELDS } from '../../core/search/registry.js';
import { PostingLists } from './posting-lists.js';
import { hasSlot } from './slot-bitsets.js';
import { type FuzzyRule, TermDictionary } from './term-dictionary.js';

/** MiniSearch's defaults: BM25+ parameters, weights of prefix and fuzzy matches, largest edit distance. */
const BM25 = { k: 1.2, b: 0.7, d: 0.5 };
const PREFIX_WEIGHT = 0.375;
const FUZZY_WEIGHT = 0.45;
const MAX_FUZZY = 6;

/**
 * Index-time tokenizer: MiniSearch's default split (whitespace and punctuation) and lower case, plus, for a word
 * with inner punctuation such as a serial `ACM-000123` or a version `v1.2`, the whole word with its parts joined
 * by `-`.
 */
function tokenizeText(text: string): string[] {
  const tokens: string[] = [];
  for (const parts of textWords(text)) {
    tokens.push(...parts);
    if (parts.length > 1) tokens.push(parts.join('-'));
  }
  return tokens;
}

/** No fuzziness for terms with digits (serials, versions: a near miss is another device); 0.2 from 4 letters. */
const FUZZY: FuzzyRule = { minLength: 4, fraction: 0.2, maxDistance: MAX_FUZZY };

/** The edit distance allowed for `term` (0: exact and prefix matches only). */
function allowedDistance(term: string): number {
  if (term.length < FUZZY.minLength || /\p{N}/u.test(term)) return 0;
  return Math.min(FUZZY.maxDistance, Math.round(term.length * FUZZY.fraction));
}

/**
 * Full-text index over FULL_TEXT_FIELDS (multi-values joined with spaces), documents identified by slot.
 * Matching follows MiniSearch (`combineWith: 'AND'`, `prefix: true`, `fuzzy` as FUZZY): a document matches when
 * each query term matches one of its terms exactly, as a prefix or within the edit distance. Scores are MiniSearch's
 * BM25+ per field, weighted 1 for exact, PREFIX_WEIGHT and FUZZY_WEIGHT (decreasing with distance) otherwise.
 */
export class FullTextIndex {
  private readonly terms = new TermDictionary(FUZZY);
  private readonly postings = new PostingLists();
  /** Per field: token count of the field, by slot. */
  private lengths: Uint32Array[];
  /** Per field: total tokens and number of documents having the field, for the average field length. */
  private readonly totalLength: number[] = FULL_TEXT_FIELDS.map(() => 0);
  private readonly documentsWithField: number[] = FULL_TEXT_FIELDS.map(() => 0);
  private documentCount = 0;

  /** An empty index with room for `capacity` slots (grow makes more). */
  constructor(capacity: number) {
    this.lengths = FULL_TEXT_FIELDS.map(() => new Uint32Array(capacity));
  }

  /** Makes room for `capacity` slots. */
  grow(capacity: number): void {
    this.lengths = this.lengths.map((lengths) => {
      const larger = new Uint32Array(capacity);
      larger.set(lengths);
      return larger;
    });
  }

  /**
   * Indexes `document` under `slot` (the slot must not be indexed).
   * @throws RangeError when `slot` exceeds MAX_POSTING_SLOT (over four million documents).
   */
  add(slot: number, document: SearchDocument): void {
    this.documentCount += 1;
    this.change(slot, [], fieldTermsOf(document));
  }

  /** Unindexes `document` from `slot` (the document given to `add`). */
  remove(slot: number, document: SearchDocument): void {
    this.documentCount -= 1;
    this.change(slot, fieldTermsOf(document), []);
  }

  /**
   * Indexes `after` under `slot` in place of `before` (the document given to `add`), touching only the postings that
   * differ: a device's report changes a field or two, and a term such as the company's name has a posting in most
   * documents, which each removal and insertion moves.
   */
  update(slot: number, before: SearchDocument, after: SearchDocument): void {
    this.change(slot, fieldTermsOf(before), fieldTermsOf(after));
  }

  /** Replaces the field terms `before` of `slot` (none when new) by `after` (none when removed). */
  private change(slot: number, before: (FieldTerms | undefined)[], after: (FieldTerms | undefined)[]): void {
    FULL_TEXT_FIELDS.forEach((_, field) => {
      const old = before[field];
      const next = after[field];
      if (old === undefined && next === undefined) return;
      const tokens = next?.tokens ?? 0;
      (this.lengths[field] as Uint32Array)[slot] = tokens;
      this.totalLength[field] = (this.totalLength[field] as number) - (old?.tokens ?? 0) + tokens;
      this.documentsWithField[field] =
        (this.documentsWithField[field] as number) - (old === undefined ? 0 : 1) + (next === undefined ? 0 : 1);
      for (const [term, count] of old?.counts ?? []) {
        if (next?.counts.get(term) === count) continue;
        const id = this.terms.idOf(term);
        if (id !== undefined && this.postings.remove(id, slot, field) === 0) this.terms.delete(term);
      }
      for (const [term, count] of next?.counts ?? []) {
        if (old?.counts.get(term) === count) continue;
        this.postings.add(this.terms.idOf(term) ?? this.terms.add(term), slot, field, count);
      }
    });
  }

  /**
   * Slots in `within` matching every term of `text`, with their scores (indexed by slot).
   * No terms (blank or punctuation only) matches nothing.
   */
  search(text: string, within: Uint32Array): { slots: number[]; scores: Float64Array } {
    const queryTerms = globalQueryTerms(text);
    const scores = new Float64Array(within.length * 32);
    /** How many query terms each slot has matched so far. */
    const matched = new Uint16Array(within.length * 32);
    const candidates: number[] = [];
    const documentsByField = new Uint32Array(FULL_TEXT_FIELDS.length);
    queryTerms.forEach((queryTerm, index) => {
      for (const [term, weight] of this.expand(queryTerm)) {
        const id = this.terms.idOf(term) as number;
        const idfs = [...this.postings.fieldCounts(id, documentsByField)].map((documents) =>
          Math.log(1 + (this.documentCount - documents + 0.5) / (documents + 0.5)),
        );
        this.postings.forEach(id, (slot, field, count) => {
          const already = matched[slot] as number;
          if (already < index || (index === 0 && !hasSlot(within, slot))) return;
          if (already === index) {
            matched[slot] = index + 1;
            if (index === 0) candidates.push(slot);
          }
          const averageLength = (this.totalLength[field] as number) / Math.max(1, this.documentsWithField[field] as number);
          const norm = 1 - BM25.b + (BM25.b * ((this.lengths[field] as Uint32Array)[slot] as number)) / averageLength;
          scores[slot] =
            (scores[slot] as number) + weight * (idfs[field] as number) * (BM25.d + (count * (BM25.k + 1)) / (count + BM25.k * norm));
        });
      }
    });
    return { slots: candidates.filter((slot) => matched[slot] === queryTerms.length), scores };
  }

  /** Indexed terms that `queryTerm` matches, with their weights: exact 1, prefix and fuzzy as in MiniSearch. */
  private expand(queryTerm: string): Map<string, number> {
    const weights = new Map<string, number>();
    if (this.terms.idOf(queryTerm) !== undefined) weights.set(queryTerm, 1);
    for (const term of this.terms.withPrefix(queryTerm)) {
      const distance = term.length - queryTerm.length;
      if (distance > 0) weights.set(term, (PREFIX_WEIGHT * term.length) / (term.length + 0.3 * distance));
    }
    const maxDistance = allowedDistance(queryTerm);
    if (maxDistance > 0) {
      for (const [term, distance] of this.terms.fuzzy(queryTerm, maxDistance)) {
        if (distance > 0 && !weights.has(term)) weights.set(term, (FUZZY_WEIGHT * term.length) / (term.length + distance));
      }
    }
    return weights;
  }
}

/** One full-text field of a document: its token count and term → occurrences. */
interface FieldTerms {
  tokens: number;
  counts: Map<string, number>;
}

/** Per FULL_TEXT_FIELDS position, the field's terms, or undefined when the document does not have the field. */
function fieldTermsOf(document: SearchDocument): (FieldTerms | undefined)[] {
  return FULL_TEXT_FIELDS.map((path) => {
    const values = valuesAtPath(document, path);
    if (values.length === 0) return undefined;
    const tokens = tokenizeText(values.join(' '));
    const counts = new Map<string, number>();
    for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
    return { tokens: tokens.length, counts };
  });
}
