import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { datasetPrompts, parseTokenCount, syntheticPrompts } from './workload';

describe('prompts', () => {
  it('parses fixed and lognormal token counts, and refuses anything else', () => {
    expect(parseTokenCount('128')).toEqual({ kind: 'fixed', tokens: 128 });
    expect(parseTokenCount('lognormal:256,0.5')).toEqual({ kind: 'lognormal', mean: 256, cov: 0.5 });
    for (const bad of ['0', '-1', '1.5', 'lognormal:0,1', 'lognormal:100', 'normal:1,2', '']) expect(parseTokenCount(bad)).toBeNull();
  });

  it('makes synthetic prompts of the asked number of words, each different, the same for the same seed', () => {
    const a = syntheticPrompts({ kind: 'fixed', tokens: 50 }, 3);
    const p1 = a.next();
    const p2 = a.next();
    expect(p1.text.split(' ')).toHaveLength(50);
    expect(p1.tokens).toBe(50);
    expect(p1.text).not.toBe(p2.text);
    expect(syntheticPrompts({ kind: 'fixed', tokens: 50 }, 3).next()).toEqual(p1);
    const ln = syntheticPrompts({ kind: 'lognormal', mean: 100, cov: 0.5 }, 3);
    const lengths = Array.from({ length: 2000 }, () => ln.next().tokens as number);
    const mean = lengths.reduce((x, y) => x + y, 0) / lengths.length;
    expect(mean).toBeGreaterThan(95);
    expect(mean).toBeLessThan(105);
  });

  it('reads a JSONL dataset in order and cycles it; a bad line is named', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'prompts-'));
    const good = join(dir, 'good.jsonl');
    await writeFile(good, '{"prompt":"one"}\n\n{"messages":[{"role":"system","content":"s"},{"role":"user","content":"two"}]}\n');
    const source = await datasetPrompts(good);
    expect([source.next().text, source.next().text, source.next().text]).toEqual(['one', 'two', 'one']);
    const bad = join(dir, 'bad.jsonl');
    await writeFile(bad, '{"prompt":"one"}\n{"text":"x"}\n');
    await expect(datasetPrompts(bad)).rejects.toThrow(`${bad}:2: needs "prompt" (a string) or "messages"`);
    const empty = join(dir, 'empty.jsonl');
    await writeFile(empty, '\n');
    await expect(datasetPrompts(empty)).rejects.toThrow('no prompts');
  });
});
