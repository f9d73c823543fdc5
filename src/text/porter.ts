/**
 * The Porter stemmer in NLTK's default `NLTK_EXTENSIONS` mode (nltk/stem/porter.py), which rouge-score and
 * NLTK METEOR both use. Ported by hand: the npm Porter stemmers implement the original 1980 algorithm or
 * Martin's later revision, and both give different stems from NLTK's extended rules (e.g. "dying", "skies",
 * the "alli"/"logi"/"fulli" rules), which would change ROUGE and METEOR scores.
 */
const IRREGULAR: Record<string, string> = {};
for (const [stem, forms] of Object.entries({
  sky: ['sky', 'skies'],
  die: ['dying'],
  lie: ['lying'],
  tie: ['tying'],
  news: ['news'],
  inning: ['innings', 'inning'],
  outing: ['outings', 'outing'],
  canning: ['cannings', 'canning'],
  howe: ['howe'],
  proceed: ['proceed'],
  exceed: ['exceed'],
  succeed: ['succeed'],
})) {
  for (const form of forms) IRREGULAR[form] = stem;
}

function isVowelLetter(c: string): boolean {
  return c === 'a' || c === 'e' || c === 'i' || c === 'o' || c === 'u';
}

function isConsonant(word: string, i: number): boolean {
  // 'y' is a consonant at the start or after a vowel, a vowel after a consonant (NLTK's recursive rule, unrolled).
  let consonant = true;
  let j = i;
  while (true) {
    const c = word[j];
    if (isVowelLetter(c)) return !consonant;
    if (c !== 'y' || j === 0) return consonant;
    consonant = !consonant;
    j -= 1;
  }
}

function measure(stem: string): number {
  let m = 0;
  let prevVowel = false;
  for (let i = 0; i < stem.length; i++) {
    const vowel = !isConsonant(stem, i);
    if (!vowel && prevVowel) m++;
    prevVowel = vowel;
  }
  return m;
}

function containsVowel(stem: string): boolean {
  for (let i = 0; i < stem.length; i++) if (!isConsonant(stem, i)) return true;
  return false;
}

function endsDoubleConsonant(word: string): boolean {
  const n = word.length;
  return n >= 2 && word[n - 1] === word[n - 2] && isConsonant(word, n - 1);
}

function endsCvc(word: string): boolean {
  const n = word.length;
  return (
    (n >= 3 &&
      isConsonant(word, n - 3) &&
      !isConsonant(word, n - 2) &&
      isConsonant(word, n - 1) &&
      !'wxy'.includes(word[n - 1])) ||
    (n === 2 && !isConsonant(word, 0) && isConsonant(word, 1))
  );
}

type Rule = [suffix: string, replacement: string, condition: ((stem: string) => boolean) | null];

function applyRuleList(word: string, rules: Rule[]): string {
  for (const [suffix, replacement, condition] of rules) {
    if (suffix === '*d' && endsDoubleConsonant(word)) {
      const stem = word.slice(0, -2);
      return condition === null || condition(stem) ? stem + replacement : word;
    }
    if (word.endsWith(suffix)) {
      const stem = suffix === '' ? word : word.slice(0, -suffix.length);
      return condition === null || condition(stem) ? stem + replacement : word;
    }
  }
  return word;
}

const positive = (stem: string) => measure(stem) > 0;
const greaterThanOne = (stem: string) => measure(stem) > 1;

function step1a(word: string): string {
  if (word.endsWith('ies') && word.length === 4) return word.slice(0, -3) + 'ie';
  return applyRuleList(word, [
    ['sses', 'ss', null],
    ['ies', 'i', null],
    ['ss', 'ss', null],
    ['s', '', null],
  ]);
}

function step1b(word: string): string {
  if (word.endsWith('ied')) return word.slice(0, -3) + (word.length === 4 ? 'ie' : 'i');
  if (word.endsWith('eed')) {
    const stem = word.slice(0, -3);
    return measure(stem) > 0 ? stem + 'ee' : word;
  }
  let intermediate: string | null = null;
  for (const suffix of ['ed', 'ing']) {
    if (word.endsWith(suffix)) {
      const candidate = word.slice(0, -suffix.length);
      if (containsVowel(candidate)) {
        intermediate = candidate;
        break;
      }
    }
  }
  if (intermediate === null) return word;
  const last = intermediate[intermediate.length - 1];
  return applyRuleList(intermediate, [
    ['at', 'ate', null],
    ['bl', 'ble', null],
    ['iz', 'ize', null],
    ['*d', last, () => last !== 'l' && last !== 's' && last !== 'z'],
    ['', 'e', (stem) => measure(stem) === 1 && endsCvc(stem)],
  ]);
}

function step1c(word: string): string {
  return applyRuleList(word, [['y', 'i', (stem) => stem.length > 1 && isConsonant(stem, stem.length - 1)]]);
}

const STEP2_RULES: Rule[] = [
  ['ational', 'ate', positive],
  ['tional', 'tion', positive],
  ['enci', 'ence', positive],
  ['anci', 'ance', positive],
  ['izer', 'ize', positive],
  ['bli', 'ble', positive],
  ['alli', 'al', positive],
  ['entli', 'ent', positive],
  ['eli', 'e', positive],
  ['ousli', 'ous', positive],
  ['ization', 'ize', positive],
  ['ation', 'ate', positive],
  ['ator', 'ate', positive],
  ['alism', 'al', positive],
  ['iveness', 'ive', positive],
  ['fulness', 'ful', positive],
  ['ousness', 'ous', positive],
  ['aliti', 'al', positive],
  ['iviti', 'ive', positive],
  ['biliti', 'ble', positive],
  ['fulli', 'ful', positive],
];

function step2(word: string): string {
  if (word.endsWith('alli') && positive(word.slice(0, -4))) return step2(word.slice(0, -4) + 'al');
  // NLTK's "logi" rule tests the measure of the word minus "ogi", not of the stem.
  return applyRuleList(word, [...STEP2_RULES, ['logi', 'log', () => positive(word.slice(0, -3))]]);
}

const STEP3_RULES: Rule[] = [
  ['icate', 'ic', positive],
  ['ative', '', positive],
  ['alize', 'al', positive],
  ['iciti', 'ic', positive],
  ['ical', 'ic', positive],
  ['ful', '', positive],
  ['ness', '', positive],
];

const STEP4_RULES: Rule[] = [
  ['al', '', greaterThanOne],
  ['ance', '', greaterThanOne],
  ['ence', '', greaterThanOne],
  ['er', '', greaterThanOne],
  ['ic', '', greaterThanOne],
  ['able', '', greaterThanOne],
  ['ible', '', greaterThanOne],
  ['ant', '', greaterThanOne],
  ['ement', '', greaterThanOne],
  ['ment', '', greaterThanOne],
  ['ent', '', greaterThanOne],
  ['ion', '', (stem) => measure(stem) > 1 && (stem.endsWith('s') || stem.endsWith('t'))],
  ['ou', '', greaterThanOne],
  ['ism', '', greaterThanOne],
  ['ate', '', greaterThanOne],
  ['iti', '', greaterThanOne],
  ['ous', '', greaterThanOne],
  ['ive', '', greaterThanOne],
  ['ize', '', greaterThanOne],
];

function step5a(word: string): string {
  if (word.endsWith('e')) {
    const stem = word.slice(0, -1);
    const m = measure(stem);
    if (m > 1) return stem;
    if (m === 1 && !endsCvc(stem)) return stem;
  }
  return word;
}

function step5b(word: string): string {
  return applyRuleList(word, [['ll', 'l', () => measure(word.slice(0, -1)) > 1]]);
}

const cache = new Map<string, string>();

/** NLTK `PorterStemmer().stem(word)` (lowercases first, as NLTK does by default). */
export function porterStem(word: string): string {
  const hit = cache.get(word);
  if (hit !== undefined) return hit;
  const lower = word.toLowerCase();
  let stem: string;
  // NLTK looks the irregular forms up by the word as given but returns the entry for the lowercased word.
  if (Object.hasOwn(IRREGULAR, word)) stem = IRREGULAR[lower];
  else if (word.length <= 2) stem = lower;
  else stem = step5b(step5a(applyRuleList(applyRuleList(step2(step1c(step1b(step1a(lower)))), STEP3_RULES), STEP4_RULES)));
  if (cache.size > 1 << 18) cache.clear();
  cache.set(word, stem);
  return stem;
}
