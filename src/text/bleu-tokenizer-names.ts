/**
 * The names of sacrebleu's tokenizers (`bleu:tok=`), apart from their code (sacrebleu-tokenizers.ts) so that spec
 * validation does not load the tokenizers.
 */
export type BleuTokenizerName = '13a' | 'intl' | 'char' | 'none' | 'code';
export const BLEU_TOKENIZERS: readonly BleuTokenizerName[] = ['13a', 'intl', 'char', 'none', 'code'];
