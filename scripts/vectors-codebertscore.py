#!/usr/bin/python3
"""Writes test/vectors/codebertscore-tiny.json: CodeBERTScore of the tiny contextual BERT of
test/fixtures/tiny-bert.ts, computed here independently of transformers.js and of codegauge, with NumPy only
(Debian python3-numpy):

    /usr/bin/python3 scripts/vectors-codebertscore.py > test/vectors/codebertscore-tiny.json

The model is re-implemented from its definition (h_i = E[id_i] + 0.5 * mean_j E[id_j] over the window, float32) and
so is its BERT WordPiece tokenizer (lowercase, split on whitespace and punctuation, greedy longest match). The
score follows neulab/code-bert-score 0.4 (`score()` -> `bert_cos_score_idf` -> `greedy_cos_idf`) for a batch of
one pair: sent_encode (strip, special tokens, no truncation), SLED windows with overlap 0.5 over
tokenizer.model_max_length, sources as left context trimmed by decoding, no_punc=True, IDF from the flattened
references, P/R/F1/F3, best over several references.
"""
import json
import string
import sys
from math import log

import numpy as np

VOCAB = [
    '[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]',
    'def', 'return', 'if', 'else', 'for', 'in', 'range', 'while', 'x', 'y', 'a', 'b', 'n', 'i', 's', 'result', 'sum', 'len',
    'max', 'min', 'print', 'list', 'add', 'sub', 'two', 'numbers', 'the', 'of', 'and', 'to', '0', '1', '2', '10',
    '+', '-', '*', '/', '=', '<', '>', '(', ')', ':', ',', '[', ']', '.', '#', '"', '##s', '##ed', '##er', 'total',
    'value', 'count', 'append', 'item', 'get', 'key', 'dict', 'is', 'not', 'none', 'true', 'false',
]
IDS = {t: i for i, t in enumerate(VOCAB)}
DIM = 8
WINDOW = 16
CLS, SEP = 2, 3
E = np.array([[np.float32((((t * 7919 + d * 104729 + t * d * 31) % 23) - 11) / 11) for d in range(DIM)] for t in range(len(VOCAB))], dtype=np.float32)


def is_punct(c):
    o = ord(c)
    if 33 <= o <= 47 or 58 <= o <= 64 or 91 <= o <= 96 or 123 <= o <= 126:
        return True
    import unicodedata
    return unicodedata.category(c).startswith('P')


def basic_tokens(text):
    text = ''.join(' ' if c in '\t\n\r ' or c.isspace() else c for c in text if not (ord(c) == 0 or ord(c) == 0xFFFD))
    text = text.lower()
    out = []
    for word in text.split():
        cur = ''
        for c in word:
            if is_punct(c):
                if cur:
                    out.append(cur)
                    cur = ''
                out.append(c)
            else:
                cur += c
        if cur:
            out.append(cur)
    return out


def wordpiece(word):
    if len(word) > 100:
        return [IDS['[UNK]']]
    pieces, start = [], 0
    while start < len(word):
        end, found = len(word), None
        while start < end:
            sub = word[start:end] if start == 0 else '##' + word[start:end]
            if sub in IDS:
                found = IDS[sub]
                break
            end -= 1
        if found is None:
            return [IDS['[UNK]']]
        pieces.append(found)
        start = end
    return pieces


def sent_encode(text):
    text = text.strip()
    if text == '':
        return [CLS, SEP]
    return [CLS] + [i for w in basic_tokens(text) for i in wordpiece(w)] + [SEP]


def cleanup(s):
    for a, b in [(' .', '.'), (' ?', '?'), (' !', '!'), (' ,', ','), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")]:
        s = s.replace(a, b)
    return s


def decode(ids):
    # The tokenizer's WordPiece decoder (cleanup per token), then the tokenizer's clean_up_tokenization.
    parts = []
    for i, t in enumerate(VOCAB[x] for x in ids):
        if i != 0:
            t = t.replace('##', '', 1) if t.startswith('##') else ' ' + t
        parts.append(cleanup(t))
    return cleanup(''.join(parts))


def model(ids):
    x = E[np.array(ids)]
    m = x.mean(axis=0, dtype=np.float32, keepdims=True)
    return (x + m * np.float32(0.5)).astype(np.float32)


def get_window_indices(total_seq_length, encoder_max_length, chunk_overlap):
    # code_bert_score/utils.py (copied from SLED).
    if total_seq_length <= encoder_max_length:
        return [(0, total_seq_length, 0, total_seq_length)]
    window_margin = int(encoder_max_length * chunk_overlap / 2)
    results = []
    stride = encoder_max_length - 2 * window_margin
    context_start = update_start_ind = 0
    context_end = encoder_max_length
    update_end_ind = context_end - window_margin
    results.append((context_start, context_end, update_start_ind, update_end_ind))
    while context_end < total_seq_length:
        context_end = min(total_seq_length, context_end + stride)
        context_start = context_start + stride if context_end < total_seq_length else total_seq_length - encoder_max_length
        update_start_ind = max(update_start_ind + stride, update_end_ind)
        update_end_ind = min(total_seq_length, update_end_ind + stride) if context_end < total_seq_length else total_seq_length
        results.append((context_start, context_end, update_start_ind - context_start, update_end_ind - context_start))
    return results


def embed(ids):
    out = []
    for cs, ce, us, ue in get_window_indices(len(ids), WINDOW, 0.5):
        out.append(model(ids[cs:ce])[us:ue])
    return np.concatenate(out, axis=0)


PUNC = set(string.punctuation) - set('+-*/&|~')


def keep(tok):
    tok = tok.strip('\u0120\u010a\u0109')
    return not all(c in PUNC for c in tok)


def encoded(text, source):
    sen = text.strip()
    src = None
    if source is not None:
        src = f'{source.strip()} \n'
        sen = f'{src}{sen}'.strip()
    ids = sent_encode(sen)
    emb = embed(ids)
    tokens = [VOCAB[i] for i in ids]
    idx = list(range(len(ids)))
    if src is not None:
        source_length = 0
        for j in range(len(tokens)):
            prefix = '' if j <= 1 else decode(ids[1:j])  # decode(tokens[:j]) less the leading special token
            if src.startswith(prefix):
                source_length = j
            else:
                break
        idx = [0] + idx[source_length:]
    idx = [i for i in idx if keep(tokens[i])]
    e = emb[idx].astype(np.float64)
    e = e / np.linalg.norm(e, axis=1, keepdims=True)
    return [ids[i] for i in idx], e


def greedy(h_ids, h, h_idf, r_ids, r, r_idf):
    sim = h @ r.T
    wp = sim.max(axis=1)
    wr = sim.max(axis=0)
    hw = np.array(h_idf, dtype=np.float64)
    rw = np.array(r_idf, dtype=np.float64)
    with np.errstate(invalid='ignore', divide='ignore'):
        P = float((wp * (hw / hw.sum())).sum())
        R = float((wr * (rw / rw.sum())).sum())
        F = 2 * P * R / (P + R) if (P + R) != 0 else float('nan')
        F3 = 10 * P * R / (9 * P + R) if (9 * P + R) != 0 else float('nan')
    if len(h_ids) == 2 or len(r_ids) == 2:
        P = R = 0.0
    F = 0.0 if F != F else F
    F3 = 0.0 if F3 != F3 else F3
    P = 0.0 if P != P else P
    R = 0.0 if R != R else R
    return P, R, F, F3


def score(hyps, refs, idf=False, sources=None):
    flat = [r for rs in refs for r in rs]
    if idf:
        n = len(flat)
        df = {}
        for r in flat:
            for i in set(sent_encode(r)):
                df[i] = df.get(i, 0) + 1
        weight = lambda i: log((n + 1) / (df.get(i, 0) + 1))
    else:
        weight = lambda i: 0.0 if i in (CLS, SEP) else 1.0
    out = []
    for k, (h, rs) in enumerate(zip(hyps, refs)):
        src = sources[k] if sources else None
        h_ids, he = encoded(h, src)
        best = [-np.inf] * 4
        for r in rs:
            r_ids, re_ = encoded(r, src)
            s = greedy(h_ids, he, [weight(i) for i in h_ids], r_ids, re_, [weight(i) for i in r_ids])
            best = [max(a, b) for a, b in zip(best, s)]
        out.append({'p': best[0], 'r': best[1], 'f1': best[2], 'f3': best[3], 'kept_hyp_tokens': len(h_ids)})
    return out


HYPS = [
    'def add(a, b):\n    return a + b',
    'def sum(x, y):\n    result = x + y\n    return result',
    'return a - b',
    'for i in range(10):\n    print(i)',
    'def max(a, b):\n    if a > b:\n        return a\n    else:\n        return b',
    '',
    '( ) : ,',
    'count = len(list)',
    'total = 0\nfor item in list:\n    total = total + item\nreturn total',
    'while n > 0:\n    n = n - 1',
    'def get(dict, key):\n    return dict[key] if key in dict else none',
    'x = "hello world"',
    'def total(list):\n    result = 0\n    for item in list:\n        if item > 0:\n            result = result + item\n        else:\n            result = result - item\n    return result\n\ndef count(list):\n    n = 0\n    while n < len(list):\n        n = n + 1\n    return n',
]
REFS = [
    ['def add(a, b):\n    return a + b'],
    ['def add(x, y):\n    return x + y'],
    ['def sub(a, b):\n    return a - b'],
    ['for i in range(10):\n    print(i)\nprint(10)'],
    ['def max(a, b):\n    return a if a > b else b'],
    ['return 0'],
    ['return x'],
    ['count = 0\nfor item in list:\n    count = count + 1'],
    ['return sum(list)', 'total = sum(list)\nreturn total'],
    ['for i in range(n):\n    print(n - i)'],
    ['def get(dict, key):\n    return dict.get(key)'],
    ['print(x)'],
    ['def total(list):\n    s = 0\n    for i in range(len(list)):\n        s = s + max(list[i], 0 - list[i])\n    return s\n\ndef count(list):\n    return len(list)'],
]
SOURCES = [
    'add two numbers a and b',
    'Add two numbers',
    '# sub two numbers, a and b',
    'print the numbers to 10',
    'the max of two numbers',
    'return the value',
    'return x',
    'the count of the list',
    'the sum of the list',
    'count to n',
    'get the value of key',
    'print x',
    'the total of the absolute values of a list, and the count of the list',
]


def main():
    cases = []
    for idf in [False, True]:
        cases.append({'name': f'idf={"yes" if idf else "no"}', 'idf': idf, 'sources': None, 'hyps': HYPS, 'refs': REFS, 'expected': score(HYPS, REFS, idf)})
        cases.append({'name': f'sources, idf={"yes" if idf else "no"}', 'idf': idf, 'sources': SOURCES, 'hyps': HYPS, 'refs': REFS, 'expected': score(HYPS, REFS, idf, SOURCES)})
    print(json.dumps({
        'source': 'neulab/code-bert-score 0.4 (44106b5) score() algorithm, batch of one pair, on the tiny BERT of test/fixtures/tiny-bert.ts',
        'numpy': np.__version__,
        'python': sys.version.split()[0],
        'generator': 'scripts/vectors-codebertscore.py',
        'window': WINDOW,
        'cases': cases,
    }, indent=1))


if __name__ == '__main__':
    main()
