import { EventEmitter } from 'node:events';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockServer, type MockServer } from '@duplex-bench/mock-servers';
import type { RunIo } from '@duplex-bench/cli';
import { recordCommand } from './record-command';
import { parseRecordOptions } from './record-options';

// Where post-processing burns its CPU decides whether a packet goes late: asserted exactly, so these
// run alone, with no other test file beside them (jest.e2e-alone.config.ts).
jest.setTimeout(60_000);

function io(): RunIo {
  return { stdout: { write: () => true }, stderr: { write: () => true }, signals: new EventEmitter(), exitNow: () => undefined, argv: [] };
}

describe('probe record post-processing and the cadence', () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer({ port: 0, profile: 'nemotron', model: { ttfp_ms: 100, rtf: 0.5 } });
  });
  afterAll(() => mock.close());

  const flags = (dir: string, where: string) =>
    ['--url', mock.url, '--output', dir, '--concurrency', '3', '--per-subset', '1', '--min-input-s', '2', '--max-input-s', '4', '--postprocess', where, '--allow-unqualified'];

  // 1.5 s of CPU per finished session: in the pool (nice 10, its own process) no packet of the
  // sessions still streaming is late; in the recording process the same work makes one late.
  it.each([
    ['in the pool leaves every packet on time', 'pool', 0],
    ['in the recording process makes a packet late', 'inline', 1],
  ])('post-processing that burns 1.5 s of CPU %s', async (_name, where, minLate) => {
    const dir = await mkdtemp(join(tmpdir(), 'record-burn-'));
    await recordCommand(parseRecordOptions(flags(dir, where as string)), io(), undefined, { postprocess_burn_ms: 1500 });
    const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'));
    if (minLate === 0) expect(summary.packets.late).toBe(0);
    else expect(summary.packets.late).toBeGreaterThanOrEqual(minLate);
  });
});
