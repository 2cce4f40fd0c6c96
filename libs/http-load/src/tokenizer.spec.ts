import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTokenizer } from './tokenizer';

const FIXTURE = join(__dirname, '..', 'fixtures', 'tiny-tokenizer.json');

/** The fixture's BPE merges x+x, then xx+xx: n x's are n/4 "xxxx", then one "xx", then one "x". */
const expected = (n: number) => Math.floor(n / 4) + Math.floor((n % 4) / 2) + ((n % 4) % 2);

describe('loadTokenizer', () => {
  it("counts the ids of a Hugging Face tokenizer.json's BPE, no special tokens", async () => {
    const t = await loadTokenizer(FIXTURE);
    for (const n of [0, 1, 2, 3, 4, 5, 7, 13, 40]) expect(t.count('x'.repeat(n))).toBe(expected(n));
    expect(t.count('ab ab x')).toBe(3);
    expect(t.path).toBe(FIXTURE);
  });

  it('a file that is not JSON, or not a tokenizer, is an error naming it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tok-'));
    await writeFile(join(dir, 'bad.json'), 'not json');
    await expect(loadTokenizer(join(dir, 'bad.json'))).rejects.toThrow(/bad\.json: /);
    await writeFile(join(dir, 'empty.json'), '{}');
    await expect(loadTokenizer(join(dir, 'empty.json'))).rejects.toThrow(/empty\.json: not a tokenizer\.json/);
    await expect(loadTokenizer(join(dir, 'none.json'))).rejects.toThrow(/none\.json: ENOENT/);
  });
});
