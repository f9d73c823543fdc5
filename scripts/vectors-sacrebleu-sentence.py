"""Sentence-level BLEU vectors from sacrebleu's own CLI (`sacrebleu REFS -i HYPS --sentence-level -b`), which turns
effective order on for sentence scores. Run with sacrebleu 2.x importable (a checkout on PYTHONPATH, outside this
repository) and Debian's python3-regex, -tabulate, -numpy, -colorama, -lxml, -portalocker:

    PYTHONPATH=/tmp/sacrebleu /usr/bin/python3 scripts/vectors-sacrebleu-sentence.py > test/vectors/sacrebleu_sentence_level.json

Inputs: the bundled CoNaLa codex outputs and each segment's first reference, newlines folded to spaces.
"""
import json, os, subprocess, sys, tempfile

root = os.path.join(os.path.dirname(__file__), '..')
refs = [json.loads(l) for l in open(os.path.join(root, 'data/conala/refs.jsonl'))]
hyps = [json.loads(l) for l in open(os.path.join(root, 'data/conala/codex.jsonl'))]
refs = [(r[0] if isinstance(r, list) else r).replace('\n', ' ') for r in refs]
hyps = [h.replace('\n', ' ') for h in hyps]
with tempfile.TemporaryDirectory() as d:
    rp, hp = os.path.join(d, 'refs.txt'), os.path.join(d, 'hyps.txt')
    open(rp, 'w').write('\n'.join(refs) + '\n')
    open(hp, 'w').write('\n'.join(hyps) + '\n')
    run = lambda *extra: subprocess.run([sys.executable, '-m', 'sacrebleu', rp, '-i', hp, '--sentence-level', *extra], capture_output=True, text=True, check=True).stdout
    scores = [float(x) for x in run('-b', '-w', '12').split()]
    signature = run('-w', '1').splitlines()[0].split(' = ')[0]
import sacrebleu
json.dump({'source': f'sacrebleu {sacrebleu.__version__} CLI --sentence-level', 'signature': signature, 'inputs': 'data/conala codex.jsonl vs first reference, newlines as spaces', 'scores': scores}, sys.stdout, indent=1)
