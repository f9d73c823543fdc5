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

function isVowelCode(c: number): boolean {
  return c === 97 || c === 101 || c === 105 || c === 111 || c === 117; // a e i o u
}

const Y = 121;

function isConsonant(word: string, i: number): boolean {
  // 'y' is a consonant at the start or after a vowel, a vowel after a consonant (NLTK's recursive rule, unrolled).
  let consonant = true;
  let j = i;
  while (true) {
    const c = word.charCodeAt(j);
    if (isVowelCode(c)) return !consonant;
    if (c !== Y || j === 0) return consonant;
    consonant = !consonant;
    j -= 1;
  }
}

/**
 * The measure of word[0, end). Every stem a rule tests is a prefix of the word it came from, and whether a letter
 * is a consonant depends only on the letters before it, so prefixes are measured in place, in one pass, without
 * slicing.
 */
function measure(word: string, end: number = word.length): number {
  let m = 0;
  let prevVowel = false;
  let prevConsonant = true;
  for (let i = 0; i < end; i++) {
    const c = word.charCodeAt(i);
    const consonant: boolean = isVowelCode(c) ? false : c === Y && i > 0 ? !prevConsonant : true;
    if (consonant && prevVowel) m++;
    prevVowel = !consonant;
    prevConsonant = consonant;
  }
  return m;
}

function containsVowel(word: string, end: number): boolean {
  let prevConsonant = true;
  for (let i = 0; i < end; i++) {
    const c = word.charCodeAt(i);
    const consonant: boolean = isVowelCode(c) ? false : c === Y && i > 0 ? !prevConsonant : true;
    if (!consonant) return true;
    prevConsonant = consonant;
  }
  return false;
}

function endsDoubleConsonant(word: string): boolean {
  const n = word.length;
  return n >= 2 && word.charCodeAt(n - 1) === word.charCodeAt(n - 2) && isConsonant(word, n - 1);
}

/** Consonant-vowel-consonant (last not w, x, y) at the end of word[0, end), or vowel-consonant for two letters. */
function endsCvc(word: string, end: number = word.length): boolean {
  const last = word.charCodeAt(end - 1);
  return (
    (end >= 3 &&
      isConsonant(word, end - 3) &&
      !isConsonant(word, end - 2) &&
      isConsonant(word, end - 1) &&
      last !== 119 && last !== 120 && last !== Y) ||
    (end === 2 && !isConsonant(word, 0) && isConsonant(word, 1))
  );
}

/**
 * NLTK `_apply_rule_list` for rules whose condition is "measure of the stem > min": the first rule whose suffix
 * ends the word decides, whether or not its condition holds.
 */
function applyMeasureRules(word: string, suffixes: readonly string[], replacements: readonly string[], min: number): string {
  for (let k = 0; k < suffixes.length; k++) {
    if (word.endsWith(suffixes[k])) {
      const end = word.length - suffixes[k].length;
      return measure(word, end) > min ? word.slice(0, end) + replacements[k] : word;
    }
  }
  return word;
}

function step1a(word: string): string {
  if (word.endsWith('ies') && word.length === 4) return word.slice(0, -3) + 'ie';
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (word.endsWith('ies')) return word.slice(0, -2);
  if (word.endsWith('ss')) return word;
  if (word.endsWith('s')) return word.slice(0, -1);
  return word;
}

function step1b(word: string): string {
  if (word.endsWith('ied')) return word.slice(0, -3) + (word.length === 4 ? 'ie' : 'i');
  if (word.endsWith('eed')) {
    const end = word.length - 3;
    return measure(word, end) > 0 ? word.slice(0, end) + 'ee' : word;
  }
  let end = -1;
  if (word.endsWith('ed') && containsVowel(word, word.length - 2)) end = word.length - 2;
  else if (word.endsWith('ing') && containsVowel(word, word.length - 3)) end = word.length - 3;
  if (end < 0) return word;
  const stem = word.slice(0, end);
  if (stem.endsWith('at')) return stem + 'e';
  if (stem.endsWith('bl')) return stem + 'e';
  if (stem.endsWith('iz')) return stem + 'e';
  const last = stem[stem.length - 1];
  // NLTK's "*d" rule: a double consonant; failing that, a stem that literally ends in "*d" is also taken by it.
  if (endsDoubleConsonant(stem) || stem.endsWith('*d')) {
    return last !== 'l' && last !== 's' && last !== 'z' ? stem.slice(0, -2) + last : stem;
  }
  return measure(stem) === 1 && endsCvc(stem) ? stem + 'e' : stem;
}

function step1c(word: string): string {
  if (!word.endsWith('y')) return word;
  const end = word.length - 1;
  return end > 1 && isConsonant(word, end - 1) ? word.slice(0, end) + 'i' : word;
}

const STEP2_SUFFIXES = ['ational', 'tional', 'enci', 'anci', 'izer', 'bli', 'alli', 'entli', 'eli', 'ousli', 'ization', 'ation', 'ator', 'alism', 'iveness', 'fulness', 'ousness', 'aliti', 'iviti', 'biliti', 'fulli'];
const STEP2_REPLACEMENTS = ['ate', 'tion', 'ence', 'ance', 'ize', 'ble', 'al', 'ent', 'e', 'ous', 'ize', 'ate', 'ate', 'al', 'ive', 'ful', 'ous', 'al', 'ive', 'ble', 'ful'];

function step2(word: string): string {
  if (word.endsWith('alli') && measure(word, word.length - 4) > 0) return step2(word.slice(0, -4) + 'al');
  for (let k = 0; k < STEP2_SUFFIXES.length; k++) {
    if (word.endsWith(STEP2_SUFFIXES[k])) {
      const end = word.length - STEP2_SUFFIXES[k].length;
      return measure(word, end) > 0 ? word.slice(0, end) + STEP2_REPLACEMENTS[k] : word;
    }
  }
  // NLTK's "logi" rule, last in the list, tests the measure of the word minus "ogi", not of the stem.
  if (word.endsWith('logi')) return measure(word, word.length - 3) > 0 ? word.slice(0, -4) + 'log' : word;
  return word;
}

const STEP3_SUFFIXES = ['icate', 'ative', 'alize', 'iciti', 'ical', 'ful', 'ness'];
const STEP3_REPLACEMENTS = ['ic', '', 'al', 'ic', 'ic', '', ''];

const STEP4_SUFFIXES = ['al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ion', 'ou', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize'];

function step4(word: string): string {
  for (let k = 0; k < STEP4_SUFFIXES.length; k++) {
    const suffix = STEP4_SUFFIXES[k];
    if (word.endsWith(suffix)) {
      const end = word.length - suffix.length;
      if (measure(word, end) <= 1) return word;
      if (suffix === 'ion') {
        const c = word.charCodeAt(end - 1);
        if (c !== 115 && c !== 116) return word; // the stem must end in s or t
      }
      return word.slice(0, end);
    }
  }
  return word;
}

function step5a(word: string): string {
  if (word.endsWith('e')) {
    const end = word.length - 1;
    const m = measure(word, end);
    if (m > 1) return word.slice(0, end);
    if (m === 1 && !endsCvc(word, end)) return word.slice(0, end);
  }
  return word;
}

function step5b(word: string): string {
  return word.endsWith('ll') && measure(word, word.length - 1) > 1 ? word.slice(0, -1) : word;
}

/** NLTK `PorterStemmer().stem(word)` without the memo (callers that keep their own, as METEOR does). */
export function stemWord(word: string): string {
  const lower = word.toLowerCase();
  // NLTK looks the irregular forms up by the word as given but returns the entry for the lowercased word.
  if (Object.hasOwn(IRREGULAR, word)) return IRREGULAR[lower];
  if (word.length <= 2) return lower;
  return step5b(step5a(step4(applyMeasureRules(step2(step1c(step1b(step1a(lower)))), STEP3_SUFFIXES, STEP3_REPLACEMENTS, 0))));
}

const cache = new Map<string, string>();
const CACHE_ENTRIES = 1 << 16;

/** NLTK `PorterStemmer().stem(word)` (lowercases first, as NLTK does by default), memoised for recent words. */
export function porterStem(word: string): string {
  const hit = cache.get(word);
  if (hit !== undefined) return hit;
  const stem = stemWord(word);
  if (cache.size >= CACHE_ENTRIES) cache.clear();
  cache.set(word, stem);
  return stem;
}
