import { createRequire } from 'node:module';
import { NltkBleu } from '../metrics/nltk-bleu.js';
import { cosine, type Embedder } from '../llm/embeddings.js';
import { pyRound } from '../compat/python-strings.js';
import { VERSION } from '../version.js';

/**
 * The SBC score of a reverse-generated requirement against the input requirement, as the SBC reference
 * implementation computes it: 0.7 x semantic similarity (cosine of sentence embeddings) + 0.1 x BLEU (NLTK
 * sentence_bleu on whitespace tokens, no smoothing) + 0.2 x completeness (over the lemmas of nouns, verbs and
 * proper nouns: 1 - (|missing| + |extra|) / |union|, at least 0), each field rounded to 4 decimals. The reference
 * tags with spaCy's en_core_web_sm; we use wink-nlp (same universal tags; a proper noun keeps its text, as spaCy's
 * lemma does). Missing elements suggest omissions, extra elements hallucinations.
 */
export interface SbcWeights {
  semantic: number;
  bleu: number;
  completeness: number;
}
export const DEFAULT_SBC_WEIGHTS: SbcWeights = { semantic: 0.7, bleu: 0.1, completeness: 0.2 };

export interface SbcScore {
  final_accuracy_score: number;
  semantic_similarity: number;
  bleu_score: number;
  completeness_score: number;
  missing_elements: string[];
  extra_elements: string[];
}

const require = createRequire(import.meta.url);
let nlp: { readDoc(text: string): any; its: any } | null = null;

function tagger() {
  if (!nlp) {
    const winkNLP = require('wink-nlp');
    const model = require('wink-eng-lite-web-model');
    nlp = winkNLP(model);
  }
  return nlp!;
}

/** Where wink's lemma departs from spaCy's in a word requirements use constantly ("data" is "data" to spaCy). */
const SPACY_LEMMA: Record<string, string> = { datum: 'data' };

/** Lemmas of nouns and verbs and proper nouns' text, unique, in order of appearance. */
export function keywords(text: string): string[] {
  const n = tagger();
  const its = n.its;
  const out = new Set<string>();
  n.readDoc(text)
    .tokens()
    .each((t: any) => {
      const pos = t.out(its.pos);
      // spaCy's rule lemmatizer lowercases the lemmas of common nouns and verbs ("API" -> "api").
      if (pos === 'NOUN' || pos === 'VERB') {
        const lemma = String(t.out(its.lemma)).toLowerCase();
        out.add(SPACY_LEMMA[lemma] ?? lemma);
      }
      else if (pos === 'PROPN') out.add(t.out(its.value));
    });
  return [...out];
}

export function completeness(input: string, reverse: string): { score: number; missing: string[]; extra: string[] } {
  const a = keywords(input);
  const b = keywords(reverse);
  const setA = new Set(a);
  const setB = new Set(b);
  const missing = a.filter((k) => !setB.has(k));
  const extra = b.filter((k) => !setA.has(k));
  const union = new Set([...a, ...b]).size;
  return { score: Math.max(0, 1 - (missing.length + extra.length) / Math.max(union, 1)), missing, extra };
}

const nltkBleu = new NltkBleu('ws');

/** NLTK sentence_bleu([input.split()], reverse.split()) on its own 0-1 scale. */
export function sbcBleu(input: string, reverse: string): number {
  const stats = new Float64Array(nltkBleu.statsSize);
  nltkBleu.segmentStatistics(reverse, nltkBleu.prepareReferences([input]), stats, 0);
  return nltkBleu.fraction(stats);
}

export async function sbcScores(pairs: { input: string; reverse: string }[], embed: Embedder, weights: SbcWeights = DEFAULT_SBC_WEIGHTS): Promise<SbcScore[]> {
  const vectors = pairs.length ? await embed(pairs.flatMap((p) => [p.input, p.reverse])) : [];
  return pairs.map((p, i) => {
    const semantic = cosine(vectors[2 * i], vectors[2 * i + 1]);
    const bleu = sbcBleu(p.input, p.reverse);
    const c = completeness(p.input, p.reverse);
    const final = weights.semantic * semantic + weights.bleu * bleu + weights.completeness * c.score;
    return {
      final_accuracy_score: pyRound(final, 4),
      semantic_similarity: pyRound(semantic, 4),
      bleu_score: pyRound(bleu, 4),
      completeness_score: pyRound(c.score, 4),
      missing_elements: c.missing,
      extra_elements: c.extra,
    };
  });
}

export function sbcSignature(embedderId: string, weights: SbcWeights, generation?: { model: string; temperature: number; promptVersion: string }): string {
  const gen = generation ? `|model:${generation.model}|temp:${generation.temperature}|prompt:${generation.promptVersion}` : '';
  return `sbc|embed:${embedderId}|weights:${weights.semantic}/${weights.bleu}/${weights.completeness}|pos:wink-eng-lite${gen}|version:${VERSION}`;
}
