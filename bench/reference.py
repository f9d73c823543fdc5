#!/usr/bin/env python3
"""The Python side of `npm run bench`: runs one job of the reference implementations on the bench's files.

Called by bench/run.js; the references are the user's own installs (sacrebleu, rouge-score, NLTK with WordNet 3.0,
codebleu), found on PYTHONPATH. Nothing of them is copied here.

  reference.py probe                        -> JSON: which references import, and their versions
  reference.py JOB --refs R --hyps H [--hyps2 H2] [--runs N] [--warmup W] [--once]

JOB is one of bleu, chrf, sbleu, schrf, rougeL, meteor, bootstrap, codebleu-python, codebleu-javascript.
Files are JSONL, one JSON string per line (as `codegauge score` reads them). With --once the job runs once, cold,
and the process exits: run.js times the whole process. Otherwise the job runs W times untimed, then N times timed.
Prints one JSON line: times and CPU times (s), the scores to check against codegauge's, peak RSS (MiB).
"""
import argparse
import json
import os
import resource
import sys
import time


def read_jsonl(path):
    with open(path, encoding='utf-8') as f:
        return [json.loads(line) for line in f if line.strip()]


def wordnet_reader():
    """NLTK's WordNet 3.0: the directory in CODEGAUGE_BENCH_WORDNET, else NLTK's own data (nltk.download)."""
    root = os.environ.get('CODEGAUGE_BENCH_WORDNET')
    if root:
        import warnings
        from nltk.corpus.reader.wordnet import WordNetCorpusReader
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            return WordNetCorpusReader(root, None)
    from nltk.corpus import wordnet
    wordnet.ensure_loaded()
    return wordnet


def probe():
    out = {'python': sys.version.split()[0]}
    try:
        import sacrebleu
        out['sacrebleu'] = sacrebleu.__version__
    except Exception as e:  # noqa: BLE001 - report why, never fail
        out['sacrebleu_error'] = repr(e)
    try:
        from rouge_score import rouge_scorer  # noqa: F401
        out['rouge_score'] = 'importable'
        try:
            from importlib.metadata import version
            out['rouge_score'] = version('rouge-score')
        except Exception:  # noqa: BLE001 - a checkout on PYTHONPATH has no metadata
            pass
    except Exception as e:  # noqa: BLE001
        out['rouge_score_error'] = repr(e)
    try:
        import nltk
        from nltk.translate.meteor_score import meteor_score  # noqa: F401
        wn = wordnet_reader()
        out['nltk'] = nltk.__version__
        out['wordnet'] = wn.get_version()
    except Exception as e:  # noqa: BLE001
        out['nltk_error'] = repr(e)
    try:
        import codebleu  # noqa: F401
        try:
            from importlib.metadata import version
            out['codebleu'] = version('codebleu')
        except Exception:  # noqa: BLE001
            out['codebleu'] = 'importable'
    except Exception as e:  # noqa: BLE001
        out['codebleu_error'] = repr(e)
    try:
        import numpy
        out['numpy'] = numpy.__version__
    except Exception:  # noqa: BLE001
        pass
    print(json.dumps(out))


def make_job(name, refs, hyps, hyps2):
    """Returns (setup-free callable returning the result dict). Imports happen here, before any timing."""
    if name in ('bleu', 'chrf', 'sbleu', 'schrf'):
        from sacrebleu.metrics import BLEU, CHRF
        if name == 'bleu':
            return lambda: {'score': BLEU().corpus_score(hyps, [refs]).score}
        if name == 'chrf':
            return lambda: {'score': CHRF().corpus_score(hyps, [refs]).score}
        if name == 'sbleu':
            def sbleu():
                m = BLEU(effective_order=True)
                return {'scores': [m.sentence_score(h, [r]).score for h, r in zip(hyps, refs)]}
            return sbleu

        def schrf():
            m = CHRF()
            return {'scores': [m.sentence_score(h, [r]).score for h, r in zip(hyps, refs)]}
        return schrf
    if name == 'rougeL':
        from rouge_score import rouge_scorer

        def rouge():
            scorer = rouge_scorer.RougeScorer(['rougeL'])
            total = 0.0
            for h, r in zip(hyps, refs):
                total += 100 * scorer.score(r, h)['rougeL'].fmeasure
            return {'score': total / len(hyps)}
        return rouge
    if name == 'meteor':
        from nltk.translate.meteor_score import meteor_score
        wn = wordnet_reader()
        wn.synsets('warm')  # load the index before timing, as codegauge's bench loads its WordNet first

        def meteor():
            total = 0.0
            for h, r in zip(hyps, refs):
                total += 100 * meteor_score([r.split()], h.split(), wordnet=wn)
            return {'score': total / len(hyps)}
        return meteor
    if name == 'bootstrap':
        from sacrebleu.metrics import BLEU, CHRF
        from sacrebleu.significance import PairedTest

        def bootstrap():
            test = PairedTest([('a', hyps), ('b', hyps2)], {'BLEU': BLEU(), 'chrF': CHRF()}, [refs],
                              test_type='bs', n_samples=1000)
            _, scores = test()
            out = {}
            for key in scores:
                if key == 'System':
                    continue
                r = scores[key][1]
                metric = 'chrF' if key.startswith('chrF') else key
                score = r.score.score if hasattr(r.score, 'score') else r.score
                out[metric] = {'score': float(score), 'mean': float(r.mean), 'ci': float(r.ci), 'p_value': float(r.p_value)}
            return {'paired': out}
        return bootstrap
    if name.startswith('codebleu-'):
        from codebleu import calc_codebleu
        lang = {'codebleu-python': 'python', 'codebleu-javascript': 'javascript'}[name]
        return lambda: {'score': 100 * calc_codebleu([[r] for r in refs], hyps, lang=lang)['codebleu']}
    raise SystemExit(f'unknown job {name}')


def main():
    if len(sys.argv) > 1 and sys.argv[1] == 'probe':
        probe()
        return
    ap = argparse.ArgumentParser()
    ap.add_argument('job')
    ap.add_argument('--refs', required=True)
    ap.add_argument('--hyps', required=True)
    ap.add_argument('--hyps2')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--warmup', type=int, default=1)
    ap.add_argument('--once', action='store_true')
    args = ap.parse_args()
    refs = read_jsonl(args.refs)
    hyps = read_jsonl(args.hyps)
    hyps2 = read_jsonl(args.hyps2) if args.hyps2 else None
    job = make_job(args.job, refs, hyps, hyps2)
    times = []
    cpu = []
    if args.once:
        result = job()
    else:
        for _ in range(args.warmup):
            job()
        for _ in range(args.runs):
            start, start_cpu = time.perf_counter(), time.process_time()
            result = job()
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
    result['times'] = times
    result['cpu'] = cpu
    result['max_rss_mib'] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


if __name__ == '__main__':
    main()
