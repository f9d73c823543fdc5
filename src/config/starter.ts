/**
 * What `codegauge init` writes: a commented config over codegauge's bundled data that runs as it is, offline and
 * without a model (metrics and a paired comparison on CoNaLa, execution of HumanEval's canonical solutions); the
 * LLM parts are present but commented out.
 */
export const STARTER_CONFIG = `# codegauge.config.yaml: what "codegauge run" executes (written by "codegauge init").
# Paths are relative to this file; "bundled:PATH" is a file of codegauge's own data/ folder.
# Every key is checked: a misspelt one is an error naming this file, the line and the keys allowed there.
version: 1
title: codegauge starter run
# Every result file goes here: score.json, compare.json, exec/, judge-*.json, items.jsonl, run.json, report.html
out: codegauge-results
# SQLite store of baselines (--save-baseline / --baseline) and of LLM answers
store: .codegauge/cache.sqlite

# Reference-based metrics: references and one hypothesis file per system (the first is compare's baseline).
data:
  refs: bundled:conala/refs.jsonl
  lang: python
  systems:
    baseline: bundled:conala/baseline.jsonl
    best-tranx: bundled:conala/best-tranx.jsonl
    codex: bundled:conala/codex.jsonl
  # problems: prompts.jsonl      # problem statements, one per segment (for judges)

# Metric specs as in "codegauge score --metric"; a gate against a stored baseline: fail_if_worse (points).
metrics:
  - bleu:tok=code
  - metric: chrf
    fail_if_worse: 1.0
  - rougeL:tok=code
# Bootstrap 95% intervals of the scores (samples; 0 for none)
confidence: 1000

# Paired significance tests of every system against the baseline (sacrebleu's paired bootstrap).
compare:
  baseline: baseline
  test: paired-bs          # or paired-ar

# Execution in the sandbox with pass@k: here HumanEval's own canonical solutions on its first 10 problems.
exec:
  benchmark: humaneval     # or problems: my-problems.jsonl (+ lang)
  limit: 10
  systems:
    canonical: canonical   # name: samples .jsonl (task_id + completion), or canonical
    # A model writes the samples (as "codegauge eval"): n per problem, sample s asked with seed + s, the code
    # extracted from each reply; resumed from exec/generations/NAME.jsonl and the cache (uncomment models: coder).
    # coder: {model: coder, n: 10, temperature: 0.8, max_tokens: 1024, seed: 0}
  k: [1]                   # with generated samples, e.g. [1, 10]
  timeout: 3
  jobs: 2
  sandbox: auto            # bubblewrap; on Linux without it, an error saying what to install (process: limits only, no isolation)
  fail_if_worse: 0         # gate pass@1 against the baseline

# Models for generation (exec.systems) and LLM judges: uncomment with a server (any OpenAI-compatible one, or Ollama).
# models:
#   coder:
#     model: openai:Qwen/Qwen2.5-Coder-7B-Instruct
#     base_url: http://127.0.0.1:8000/v1
#   judge:
#     model: openai:Qwen/Qwen2.5-Coder-14B-Instruct
#     base_url: http://127.0.0.1:8000/v1     # several: [http://gpu1:8000/v1, http://gpu2:8000/v1]
#     api_key_env: OPENAI_API_KEY            # the variable that holds the key, never the key
#   local:
#     model: ollama:qwen2.5-coder:14b
#     ollama_host: http://127.0.0.1:11434
# llm:
#   concurrency: 8
#   temperature: 0
#   batch: false                             # true (or run --batch): generation and judges through the Batch API
# judges:
#   - method: dsa-simple                     # dsa, dsa-simple or ice
#     model: judge
#     systems: [codex]
#     fail_if_worse: 2
#     segment_threshold: 50                  # --junit: a segment graded under 50 is a failed test case
`;
