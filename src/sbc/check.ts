import { ServerError } from '../errors.js';
import type { LlmClient } from '../llm/client.js';
import type { Embedder } from '../llm/embeddings.js';
import type { ModelSpec } from '../llm/model-spec.js';
import { VERSION } from '../version.js';
import { reverseMessages } from './prompts.js';
import { sbcScores, sbcSignature, type SbcScore, type SbcWeights } from './score.js';

/** `sbc check`: does this code still say what the requirement says? */
export interface SbcCheckResult extends SbcScore {
  kind: 'sbc-check';
  version: string;
  reverse_generated_requirement: string;
  passed: boolean;
  min_score: number;
  signature: string;
}

export async function sbcCheck(input: {
  requirement: string;
  code: string;
  /** Technology of the code (react, SpringBoot, ...), as the SBC prompts name it. */
  technology: string;
  client: LlmClient;
  model: ModelSpec;
  modelName: string;
  embed: Embedder;
  weights: SbcWeights;
  minScore: number;
  temperature?: number;
  seed?: number;
  maxTokens?: number;
}): Promise<SbcCheckResult> {
  const reply = await input.client.chat(input.model, { messages: reverseMessages(input.code, input.technology), temperature: input.temperature, seed: input.seed, maxTokens: input.maxTokens });
  const reconstructed = reply.text.trim();
  if (!reconstructed) throw new ServerError(`${input.modelName} returned an empty reply`);
  const [score] = await sbcScores([{ input: input.requirement.trim(), reverse: reconstructed }], input.embed, input.weights);
  return {
    kind: 'sbc-check',
    version: VERSION,
    ...score,
    reverse_generated_requirement: reconstructed,
    passed: score.final_accuracy_score >= input.minScore,
    min_score: input.minScore,
    signature: sbcSignature(input.embed.id, input.weights),
  };
}
