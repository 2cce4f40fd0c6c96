import { readFile } from 'node:fs/promises';
import { lognormal, seeded } from '@duplex-bench/pacer';

/** How many input tokens each synthetic prompt has: a fixed count, or lognormal draws. */
export type TokenCount = { kind: 'fixed'; tokens: number } | { kind: 'lognormal'; mean: number; cov: number };

/** `N` or `lognormal:MEAN,COV`; null when the text is neither. */
export function parseTokenCount(text: string): TokenCount | null {
  const fixed = /^\d+$/.exec(text);
  if (fixed) return Number(text) >= 1 ? { kind: 'fixed', tokens: Number(text) } : null;
  const m = /^lognormal:(\d+(?:\.\d+)?),(\d+(?:\.\d+)?)$/.exec(text);
  if (!m || Number(m[1]) < 1) return null;
  return { kind: 'lognormal', mean: Number(m[1]), cov: Number(m[2]) };
}

export interface Prompt {
  text: string;
  /** Input tokens as the workload intends them (synthetic: words, about one token each; a dataset: unknown). */
  tokens: number | null;
}

/** Where prompts come from, one per request, in order. */
export interface PromptSource {
  next(): Prompt;
  /** Said in run.json and the summary. */
  describe: string;
}

/**
 * Word pool of synthetic prompts: common English words that BPE tokenizers (GPT, Llama, Qwen) keep
 * whole, so a prompt of N words is about N tokens. A counter word leads each prompt so no two are
 * the same and a server's prefix cache cannot answer them all from one.
 */
const WORDS = 'the of and to in is was for on that with as by at from his her are were this which have had but not one all they their there been has more when will would who so no'.split(' ');

/** Synthetic prompts of `count` tokens each (seeded; the same seed gives the same prompts). */
export function syntheticPrompts(count: TokenCount, seed: number): PromptSource {
  const random = seeded(seed);
  let n = 0;
  return {
    describe: count.kind === 'fixed' ? `synthetic: ${count.tokens} words per prompt (about one token each)` : `synthetic: lognormal words per prompt, mean ${count.mean}, cov ${count.cov}`,
    next() {
      const tokens = count.kind === 'fixed' ? count.tokens : Math.max(1, Math.round(lognormal(random, count.mean, count.cov)));
      const words = [`request${n++}`];
      for (let i = 1; i < tokens; i++) words.push(WORDS[Math.floor(random() * WORDS.length)]);
      return { text: words.join(' '), tokens };
    },
  };
}

/**
 * Prompts from a JSONL file, one object per line with `prompt` (a string) or `messages` (the chat
 * form; the contents of its user turns are joined), used in order and cycled. An empty file, or a
 * line with neither, is an error naming the line.
 */
export async function datasetPrompts(path: string): Promise<PromptSource> {
  const text = await readFile(path, 'utf8');
  const prompts: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let row: { prompt?: unknown; messages?: Array<{ role?: unknown; content?: unknown }> };
    try {
      row = JSON.parse(line) as typeof row;
    } catch {
      throw new Error(`${path}:${i + 1}: not JSON`);
    }
    if (typeof row.prompt === 'string') prompts.push(row.prompt);
    else if (Array.isArray(row.messages)) prompts.push(row.messages.filter((m) => m.role === 'user' && typeof m.content === 'string').map((m) => m.content).join('\n'));
    else throw new Error(`${path}:${i + 1}: needs "prompt" (a string) or "messages"`);
  });
  if (prompts.length === 0) throw new Error(`${path}: no prompts`);
  let n = 0;
  return { describe: `dataset ${path}: ${prompts.length} prompts, in order, cycled`, next: () => ({ text: prompts[n++ % prompts.length], tokens: null }) };
}
