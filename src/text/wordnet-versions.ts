/** The WordNet versions codegauge reads (`meteor:wordnet=`), apart from the reader (wordnet.ts), which is large. */
export type WordNetVersion = '3.0' | '3.1';
export const WORDNET_VERSIONS: readonly WordNetVersion[] = ['3.0', '3.1'];
