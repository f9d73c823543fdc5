#!/usr/bin/python3
"""Reference values for src/stats/{tests,intervals,agreement,krippendorff}.ts -> test/vectors/stats_reference.json.

Run once with Debian's python3 (bookworm: SciPy 1.10.1, statsmodels 0.13.5, scikit-learn 1.2.1):
    apt-get install -y python3-sklearn python3-statsmodels python3-scipy
    /usr/bin/python3 scripts/vectors-stats.py
Inputs are drawn from a seeded NumPy generator, so the file is reproducible.

Wilcoxon: codegauge uses the exact null distribution only without zeros and ties (n <= 50), as current SciPy does;
SciPy 1.10 also used it with ties, so the vectors call SciPy with method='approx' for those cases and with its
defaults otherwise. Krippendorff's alpha has no Debian package: the vectors hold the worked example of Krippendorff
(2011) with his published values, and random matrices scored by an independent implementation below (pairwise
disagreements summed unit by unit, not the coincidence matrix the TypeScript code builds).
"""
import json
import os
import sys
import warnings

import numpy as np
import scipy
import sklearn
import statsmodels
from scipy import stats
from sklearn.metrics import cohen_kappa_score, roc_auc_score
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

warnings.simplefilter('ignore')
rng = np.random.default_rng(20261130)
out = {
    'provenance': f'scripts/vectors-stats.py with SciPy {scipy.__version__}, statsmodels {statsmodels.__version__}, scikit-learn {sklearn.__version__}, NumPy {np.__version__}, Python {sys.version.split()[0]}',
}

out['norm_ppf'] = [{'p': p, 'x': float(stats.norm.ppf(p))} for p in [1e-300, 1e-20, 1e-10, 1e-5, 0.001, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.975, 0.99, 0.999, 1 - 1e-10]]

mc = []
for b, c in [(0, 0), (0, 1), (1, 0), (3, 3), (5, 1), (1, 9), (10, 20), (25, 12), (0, 30), (100, 130), (400, 350), (2000, 2100)]:
    mc.append({'b': b, 'c': c, 'p': float(mcnemar([[7, b], [c, 11]], exact=True).pvalue)})
out['mcnemar_exact'] = mc

bt = []
for k, n in [(0, 1), (1, 1), (3, 6), (2, 7), (5, 7), (0, 10), (10, 10), (4, 20), (15, 20), (45, 100), (30, 100), (520, 1000), (4890, 10000)]:
    bt.append({'k': k, 'n': n, 'p': float(stats.binomtest(k, n).pvalue)})
out['binomtest'] = bt


def has_ties(d):
    a = np.abs(d[d != 0])
    return len(np.unique(a)) != len(a)


wx = []
cases = []
for n in [5, 8, 12, 20, 35, 50]:
    cases.append(rng.normal(0.3, 1, n).round(6))          # no ties, no zeros: exact
for n in [60, 120]:
    cases.append(rng.normal(0.2, 1, n).round(6))          # large: approx
for n in [10, 30, 80]:
    cases.append(rng.integers(-3, 4, n).astype(float))    # zeros and ties: approx
cases.append(np.array([1.0, -2.0, 3.0, 3.0, -4.0, 5.0, 6.0, 6.0, 6.0]))  # ties without zeros: approx
for d in cases:
    d = np.asarray(d, dtype=float)
    x = (rng.normal(50, 10, len(d))).round(4)
    y = x - d
    dd = x - y
    exact = len(dd) <= 50 and not np.any(dd == 0) and not has_ties(dd)
    res = stats.wilcoxon(x, y) if exact else stats.wilcoxon(x, y, method='approx')
    wx.append({'x': x.tolist(), 'y': y.tolist(), 'method': 'exact' if exact else 'approx', 'statistic': float(res.statistic), 'p': float(res.pvalue)})
out['wilcoxon'] = wx

ci = []
for count, nobs in [(0, 1), (1, 1), (0, 10), (10, 10), (3, 10), (7, 13), (50, 100), (1, 200), (199, 200), (37, 164), (812, 1000), (4999, 10000)]:
    w = proportion_confint(count, nobs, alpha=0.05, method='wilson')
    b = proportion_confint(count, nobs, alpha=0.05, method='beta')
    ci.append({'count': count, 'nobs': nobs, 'wilson': [float(w[0]), float(w[1])], 'clopper_pearson': [float(b[0]), float(b[1])]})
out['proportion_confint'] = ci

mt = []
for pv in [[0.01, 0.04, 0.03, 0.2], [0.5], [0.001, 0.001, 0.02, 0.02, 0.9, 0.04], rng.uniform(0, 0.2, 15).tolist(), rng.uniform(0, 1, 40).tolist()]:
    mt.append({'p': list(map(float, pv)), 'holm': multipletests(pv, method='holm')[1].tolist(), 'bh': multipletests(pv, method='fdr_bh')[1].tolist()})
out['multipletests'] = mt

kp = []
for n, labels in [(20, [0, 1]), (50, [0, 1, 2, 3, 4]), (200, [1, 2, 3, 4, 5]), (40, [0, 2, 3, 7])]:
    a = rng.choice(labels, n)
    noise = rng.integers(-1, 2, n)
    b = np.array([labels[min(len(labels) - 1, max(0, labels.index(v) + s))] for v, s in zip(a, noise)])
    kp.append({'a': a.tolist(), 'b': b.tolist(), **{w or 'none': float(cohen_kappa_score(a, b, weights=w)) for w in [None, 'linear', 'quadratic']}})
out['cohen_kappa'] = kp

auc = []
for n in [10, 57, 300]:
    y = rng.integers(0, 2, n)
    s = (y * 0.4 + rng.uniform(0, 1, n)).round(2)  # rounding makes ties
    auc.append({'labels': y.tolist(), 'scores': s.tolist(), 'auc': float(roc_auc_score(y, s))})
y = rng.integers(0, 2, 40)
auc.append({'labels': y.tolist(), 'scores': rng.integers(0, 5, 40).astype(float).tolist(), 'auc': float(roc_auc_score(y, rng.integers(0, 5, 40)))})
auc[-1]['auc'] = float(roc_auc_score(y, auc[-1]['scores']))
out['roc_auc'] = auc


def alpha_pairwise(units, level):
    """Independent route: disagreement of every ordered pair of values within units (weighted 1/(m_u - 1)) and of
    every ordered pair of pairable values overall."""
    units = [[v for v in u if v is not None] for u in units]
    units = [u for u in units if len(u) >= 2]
    values = [v for u in units for v in u]
    n = len(values)
    freq = {}
    for v in values:
        freq[v] = freq.get(v, 0) + 1
    order = sorted(freq)

    def d2(a, b):
        if a == b:
            return 0.0
        if level == 'nominal':
            return 1.0
        if level == 'interval':
            return float(a - b) ** 2
        if level == 'ratio':
            return ((a - b) / (a + b)) ** 2
        lo, hi = sorted([order.index(a), order.index(b)])
        return (sum(freq[order[g]] for g in range(lo, hi + 1)) - (freq[a] + freq[b]) / 2) ** 2

    do = sum(sum(d2(u[i], u[j]) for i in range(len(u)) for j in range(len(u)) if i != j) / (len(u) - 1) for u in units) / n
    de = sum(d2(a, b) for i, a in enumerate(values) for j, b in enumerate(values) if i != j) / (n * (n - 1))
    return 1 - do / de


kr = []
paper = [[1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3], [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None], [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]]
mats = [paper]
for raters, units, grades in [(3, 15, 5), (5, 30, 4), (2, 40, 7)]:
    truth = rng.integers(1, grades + 1, units)
    m = []
    for r in range(raters):
        row = []
        for u in range(units):
            if rng.uniform() < 0.15:
                row.append(None)
            else:
                row.append(int(min(grades, max(1, truth[u] + rng.integers(-1, 2)))))
        m.append(row)
    mats.append(m)
for m in mats:
    units = [[m[r][u] for r in range(len(m))] for u in range(len(m[0]))]
    kr.append({'raters': m, **{level: alpha_pairwise(units, level) for level in ['nominal', 'ordinal', 'interval', 'ratio']}})
kr[0]['published'] = {'nominal': 0.743, 'ordinal': 0.815, 'interval': 0.849, 'ratio': 0.797}
out['krippendorff'] = kr

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'test', 'vectors', 'stats_reference.json')
with open(path, 'w') as f:
    json.dump(out, f, indent=1)
    f.write('\n')
print('wrote', os.path.normpath(path))
