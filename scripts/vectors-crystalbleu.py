#!/usr/bin/python3
"""Writes test/vectors/crystalbleu.json: CrystalBLEU values of sola-st/crystalbleu's `bleu_ignoring.py`
(`corpus_bleu` / `sentence_bleu` with `ignoring=`) on Debian's NLTK (python3-nltk 3.8, Python 3.11).

The reference file is not part of codegauge; fetch it first and pass its folder:
    git clone https://github.com/sola-st/crystalbleu /tmp/crystalbleu   # or copy bleu_ignoring.py there
    /usr/bin/python3 scripts/vectors-crystalbleu.py /tmp/crystalbleu > test/vectors/crystalbleu.json

The ignored set follows the crystalbleu README: Counter of all 1-4-grams of the tokenized corpus,
dict(frequencies.most_common(k)). The corpus is either the distinct references (first appearance order, n-grams
counted per reference as in the paper's scripts) or a code text tokenized as one sequence.
"""
import gzip
import json
import re
import sys
from collections import Counter

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else '/tmp/crystalbleu')
from bleu_ignoring import corpus_bleu, sentence_bleu  # noqa: E402
from nltk.util import ngrams  # noqa: E402
import nltk  # noqa: E402


def code_tokens(code):
    # The code tokenizer of "Out of the BLEU" (codegauge's tok=code).
    code = re.sub(r'([^A-Za-z0-9_])', r' \1 ', code)
    code = re.sub(r'([a-z])([A-Z])', r'\1 \2', code)
    code = re.sub(r'\s+', ' ', code)
    code = code.replace('"', '`').replace("'", '`')
    return [t for t in code.split(' ') if t]


TOKENIZERS = {'code': code_tokens, 'ws': lambda s: s.split()}


def ignored_set(docs, k):
    all_ngrams = []
    for doc in docs:
        for n in range(1, 5):
            all_ngrams.extend(list(ngrams(doc, n)))
    return dict(Counter(all_ngrams).most_common(k))


def load(lang):
    with gzip.open(f'data/ice-humaneval/humaneval_{lang}_grade.json.gz') as f:
        return json.load(f)


def ref_of(snippet):
    if isinstance(snippet, list):
        return snippet[0]
    try:
        v = json.loads(snippet)
        return v[0] if isinstance(v, list) else str(v)
    except Exception:
        return snippet


def humaneval_pairs(lang, problems, samples):
    data = load(lang)[:problems]
    hyps, refs, others = [], [], []
    for p in data:
        keys = [k for k in p if k.isdigit()][:samples]
        for k in keys:
            hyps.append(p[k])
            refs.append([ref_of(p['snippet'])])
        others.append([p[k] for k in p if k.isdigit()][samples:samples + 2])
    return hyps, refs, others


JAVA = [
    ("public int add(int a, int b) {\n    return a + b;\n}",
     "public int sum(int x, int y) {\n    int s = x + y;\n    return s;\n}"),
    ("public static boolean isEven(int n) {\n    return n % 2 == 0;\n}",
     "public static boolean isEven(int n) {\n    if (n % 2 == 0) {\n        return true;\n    }\n    return false;\n}"),
    ("public String reverse(String s) {\n    return new StringBuilder(s).reverse().toString();\n}",
     "public String reverse(String s) {\n    String r = \"\";\n    for (int i = s.length() - 1; i >= 0; i--) {\n        r += s.charAt(i);\n    }\n    return r;\n}"),
    ("public int max(int[] xs) {\n    int m = xs[0];\n    for (int x : xs) {\n        if (x > m) m = x;\n    }\n    return m;\n}",
     "public int max(int[] xs) {\n    return Arrays.stream(xs).max().getAsInt();\n}"),
    ("public List<Integer> evens(List<Integer> xs) {\n    List<Integer> out = new ArrayList<>();\n    for (Integer x : xs) {\n        if (x % 2 == 0) out.add(x);\n    }\n    return out;\n}",
     "public List<Integer> evens(List<Integer> xs) {\n    return xs.stream().filter(x -> x % 2 == 0).collect(Collectors.toList());\n}"),
    ("public long factorial(int n) {\n    long r = 1;\n    for (int i = 2; i <= n; i++) r *= i;\n    return r;\n}",
     "public long factorial(int n) {\n    if (n <= 1) return 1;\n    return n * factorial(n - 1);\n}"),
    ("public boolean contains(int[] xs, int v) {\n    for (int x : xs) if (x == v) return true;\n    return false;\n}",
     "public boolean contains(int[] xs, int v) {\n    return Arrays.stream(xs).anyMatch(x -> x == v);\n}"),
    ("public int countVowels(String s) {\n    int c = 0;\n    for (char ch : s.toCharArray()) {\n        if (\"aeiou\".indexOf(ch) >= 0) c++;\n    }\n    return c;\n}",
     "public int countVowels(String s) {\n    return s.replaceAll(\"[^aeiou]\", \"\").length();\n}"),
]
JAVA_CORPUS = "\n".join(
    [
        "public class Main {\n    public static void main(String[] args) {\n        System.out.println(\"Hello\");\n    }\n}",
        "public int get(int i) {\n    return this.values[i];\n}\npublic void set(int i, int v) {\n    this.values[i] = v;\n}",
        "for (int i = 0; i < n; i++) {\n    sum += a[i];\n}\nreturn sum;",
    ]
)


DATASETS = {}


def case(name, lang, tok, k, hyps, refs, corpus_text=None, data=None):
    t = TOKENIZERS[tok]
    th = [t(h) for h in hyps]
    tr = [[t(r) for r in rs] for rs in refs]
    if corpus_text is None:
        seen, docs = set(), []
        for rs in refs:
            for r in rs:
                if r not in seen:
                    seen.add(r)
                    docs.append(t(r))
    else:
        docs = [t(corpus_text)]
    ignoring = ignored_set(docs, k)
    if data:
        DATASETS[data] = {'hyps': hyps, 'refs': refs}
    out = {
        'name': name,
        'lang': lang,
        'tok': tok,
        'k': k,
        **({'data': data} if data else {'hyps': hyps, 'refs': refs}),
        'ignored': [list(g) for g in ignoring],
        'corpus_bleu': corpus_bleu(tr, th, ignoring=ignoring),
        'sentence_bleu': [sentence_bleu(r, h, ignoring=ignoring) for r, h in zip(tr, th)],
        'bleu': corpus_bleu(tr, th),
    }
    if corpus_text is not None:
        out['corpus'] = corpus_text
    return out


def main():
    import warnings
    warnings.simplefilter('ignore')
    cases = []
    py_h, py_r, py_o = humaneval_pairs('python', 12, 3)
    js_h, js_r, js_o = humaneval_pairs('js', 12, 3)
    java_h, java_r = [h for h, _ in JAVA], [[r] for _, r in JAVA]
    for lang, hyps, refs in [('python', py_h, py_r), ('javascript', js_h, js_r), ('java', java_h, java_r)]:
        for tok in ['code', 'ws']:
            for k in [0, 1, 10, 50, 500]:
                cases.append(case(f'{lang} tok={tok} k={k}', lang, tok, k, hyps, refs, data=lang))
    # Multi-reference: each problem's reference plus two other samples.
    multi = [[r[0]] + py_o[i // 3] for i, r in enumerate(py_r)]
    for k in [10, 100]:
        cases.append(case(f'python multi-reference k={k}', 'python', 'code', k, py_h, multi, data='python-multi'))
    # A corpus of other code, tokenized as one text.
    py_corpus = '\n'.join(ref_of(p['snippet']) for p in load('python')[40:80])
    cases.append(case('python corpus file k=50', 'python', 'code', 50, py_h, py_r, py_corpus, data='python'))
    cases.append(case('java corpus file k=20', 'java', 'code', 20, java_h, java_r, JAVA_CORPUS, data='java'))
    js_corpus = '\n'.join(ref_of(p['snippet']) for p in load('js')[40:60])
    cases.append(case('javascript corpus file k=200 ws', 'javascript', 'ws', 200, js_h, js_r, js_corpus, data='javascript'))
    # Empty overlaps, empty hypotheses, hypotheses made only of ignored n-grams, k past the number of n-grams.
    edge_h = ['', 'zzz yyy xxx', 'return x', 'x = 1\nreturn x', '(((', 'return']
    edge_r = [['return x'], ['def f(a):\n    return a'], ['return x'], ['x = 2\nreturn x', 'y = 1\nreturn y'], ['f(x)'], ['return']]
    for k in [0, 2, 5, 1000]:
        cases.append(case(f'edge cases k={k}', 'python', 'code', k, edge_h, edge_r))
    cases.append(case('no overlap at all k=3', 'python', 'code', 3, ['a b c d e'], [['f g h i j']]))
    cases.append(case('everything ignored k=1000', 'javascript', 'code', 1000, js_h[:3], js_r[:3]))
    # CPython's math.log / math.exp (glibc) on random arguments, for codegauge's correctly rounded exp/log.
    import math
    import random
    rng = random.Random(14)
    xs = [rng.random() for _ in range(400)] + [rng.random() * 100 for _ in range(400)]
    ys = [(rng.random() - 0.5) * 4 for _ in range(400)] + [-rng.random() * 700 for _ in range(400)]
    libm = {'log_args': xs, 'log': [math.log(x) for x in xs], 'exp_args': ys, 'exp': [math.exp(y) for y in ys]}
    print(json.dumps({
        'source': 'sola-st/crystalbleu@2cb7520 bleu_ignoring.py corpus_bleu/sentence_bleu(ignoring=dict(Counter(1-4-grams).most_common(k)))',
        'python': sys.version.split()[0],
        'nltk': nltk.__version__,
        'generator': 'scripts/vectors-crystalbleu.py',
        'libm': libm,
        'datasets': DATASETS,
        'cases': cases,
    }, indent=1))


if __name__ == '__main__':
    main()
