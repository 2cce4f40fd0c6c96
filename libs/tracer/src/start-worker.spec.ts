import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { startWorker } from './start-worker';

jest.setTimeout(30_000);

/** A worker module that answers with what it was started with, then ends. */
const ECHO = `
const { parentPort, workerData, resourceLimits } = require('node:worker_threads');
parentPort.postMessage({ workerData, execArgv: process.execArgv, resourceLimits });
`;

/** The worker's one answer, and its exit status once it has ended. */
async function answerOf(worker: Worker): Promise<{ answer: { workerData: unknown; execArgv: string[]; resourceLimits: Record<string, number> }; code: number }> {
  const exited = once(worker, 'exit') as Promise<[number]>;
  const [answer] = await Promise.race([once(worker, 'message'), exited.then(([code]) => Promise.reject(new Error(`worker exited with ${code} before answering`)))]);
  const [code] = await exited;
  return { answer, code };
}

describe('startWorker', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'start-worker-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('starts a built .js worker with its data and no extra Node flags', async () => {
    const file = join(dir, 'echo.js');
    await writeFile(file, ECHO);
    const { answer, code } = await answerOf(startWorker(file, { root: '/runs/r1', mode: 'full' }));
    expect(answer.workerData).toEqual({ root: '/runs/r1', mode: 'full' });
    expect(answer.execArgv).toEqual([]);
    expect(code).toBe(0);
  });

  it("starts a .ts worker through tsx's CommonJS hook", async () => {
    const file = join(dir, 'echo.ts');
    await writeFile(file, `const answer: number = 42;\n${ECHO.replace('workerData, execArgv', 'workerData: { answer, given: workerData }, execArgv')}`);
    const { answer, code } = await answerOf(startWorker(file, 'x'));
    expect(answer.workerData).toEqual({ answer: 42, given: 'x' });
    expect(answer.execArgv).toEqual(['--require', 'tsx/cjs']);
    expect(code).toBe(0);
  });

  it('gives the thread the resource limits asked for', async () => {
    const file = join(dir, 'limits.js');
    await writeFile(file, ECHO);
    const worker = startWorker(file, null, { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 });
    const { answer, code } = await answerOf(worker);
    expect(answer.resourceLimits).toMatchObject({ maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 });
    expect(code).toBe(0);
  });
});
