/** BLEU's smoothing methods (`bleu:smooth=`), apart from bleu.ts so that spec validation does not load BLEU. */
export type BleuSmoothing = 'exp' | 'floor' | 'add-k' | 'none';
export const BLEU_SMOOTHINGS: readonly BleuSmoothing[] = ['exp', 'floor', 'add-k', 'none'];
