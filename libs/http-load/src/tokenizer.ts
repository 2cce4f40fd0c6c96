import { access, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { TokenCounter } from './http-run';

/**
 * A Hugging Face tokenizer.json (and the tokenizer_config.json beside it, when there is one) read
 * through `@huggingface/tokenizers` (Hugging Face's own JavaScript tokenizers, no dependencies;
 * loaded only when `--tokenizer` is given). Counts as vLLM's client counts a response without
 * usage: the ids of the output text, no special tokens added. A file that cannot be read or is
 * not a tokenizer is an Error naming it.
 */
export async function loadTokenizer(path: string): Promise<TokenCounter> {
  let json: object;
  try {
    json = JSON.parse(await readFile(path, 'utf8')) as object;
  } catch (err) {
    throw new Error(`${path}: ${(err as Error).message}`);
  }
  const configPath = join(dirname(path), 'tokenizer_config.json');
  const config = await access(configPath).then(
    async () => {
      try {
        return JSON.parse(await readFile(configPath, 'utf8')) as object;
      } catch (err) {
        throw new Error(`${configPath}: ${(err as Error).message}`);
      }
    },
    () => ({}),
  );
  const { Tokenizer } = await import('@huggingface/tokenizers');
  let tokenizer: InstanceType<typeof Tokenizer>;
  try {
    tokenizer = new Tokenizer(json, config);
    tokenizer.encode('probe', { add_special_tokens: false });
  } catch (err) {
    throw new Error(`${path}: not a tokenizer.json this kit can read (${(err as Error).message})`);
  }
  return { path, count: (text) => (text === '' ? 0 : tokenizer.encode(text, { add_special_tokens: false }).ids.length) };
}
