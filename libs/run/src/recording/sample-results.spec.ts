import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sample } from '@duplex-bench/audio';
import { SAMPLES_DIR, sampleRecordFile, sessionFile } from '@duplex-bench/results';
import type { SessionResult } from '@duplex-bench/session';
import { keepEarlierAttempt, mergeResult, readResults, sampleResult, writeResult, type SampleResult } from './sample-results';

const SAMPLE: Sample = { id: 'short-003-a', subset: 'short', variant: 'a', duration_s: 2.5, file: null, seed: 3 };

const session = (over: Partial<SessionResult> = {}): SessionResult => ({ id: 's0', completed: true, violation: false, packets_sent: 32, late: 0, server_errors: 0, ...over });

/** A sample's record of one attempt. */
const attempt = (over: Partial<SessionResult> & { pacing_file?: string } = {}): SampleResult => ({ ...sampleResult(SAMPLE, session(over)), ...(over.pacing_file ? { pacing_file: over.pacing_file } : {}) });

describe('sampleResult', () => {
  it("keeps the session's record under the sample's id, subset, variant and length, without the session id", () => {
    const r = sampleResult(SAMPLE, session({ completed: false, reason: 'server_closed', late: 2 }));
    expect(r).toEqual({ sample_id: 'short-003-a', subset: 'short', variant: 'a', duration_s: 2.5, completed: false, reason: 'server_closed', violation: false, packets_sent: 32, late: 2, server_errors: 0 });
    expect(r).not.toHaveProperty('id');
  });
});

describe('mergeResult', () => {
  const complete = attempt({ packets_sent: 30 });
  const failed = attempt({ completed: false, reason: 'connect_failed', message: 'refused', packets_sent: 0 });

  it('a first attempt is kept, and listed in brief', () => {
    expect(mergeResult(undefined, complete)).toEqual({ ...complete, attempts: [{ completed: true, packets_sent: 30, late: 0, violation: false, responses: 0 }] });
  });

  it('an incomplete rerun never replaces a complete record, and is still listed', () => {
    const merged = mergeResult(complete, failed);
    expect(merged).toMatchObject({ completed: true, packets_sent: 30 });
    expect(merged.reason).toBeUndefined();
    expect(merged.attempts).toEqual([
      { completed: true, packets_sent: 30, late: 0, violation: false, responses: 0 },
      { completed: false, reason: 'connect_failed', message: 'refused', packets_sent: 0, late: 0, violation: false, responses: 0 },
    ]);
  });

  it('between equals the newer wins, and a complete rerun replaces an incomplete record whole', () => {
    const newer = attempt({ packets_sent: 31, late: 1 });
    expect(mergeResult(complete, newer)).toMatchObject({ packets_sent: 31, late: 1 });
    const fixed = mergeResult(failed, complete);
    expect(fixed).toMatchObject({ completed: true, packets_sent: 30 });
    // Nothing of the failed attempt leaks into the kept record.
    expect(fixed).not.toHaveProperty('reason');
    expect(fixed).not.toHaveProperty('message');
  });

  it("extends the stored list of attempts, oldest first, counting each attempt's responses and naming its packets", () => {
    const first = mergeResult(undefined, attempt({ pacing_file: 'sessions/x/pacing.msgpack' }));
    const second = mergeResult(first, attempt({ completed: false, reason: 'server_closed', responses: [{}, {}] as SessionResult['responses'] }));
    const third = mergeResult(second, attempt({ late: 4 }));
    expect(third.attempts?.map((a) => [a.completed, a.responses, a.late, a.pacing_file])).toEqual([
      [true, 0, 0, 'sessions/x/pacing.msgpack'],
      [false, 2, 0, undefined],
      [true, 0, 4, undefined],
    ]);
  });
});

describe('stored records', () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'sample-results-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('reads nothing from a new recording', async () => {
    expect((await readResults(join(dir, 'none'))).size).toBe(0);
  });

  it('writes each record whole, and reads them all back by sample id, ignoring a write left half-way', async () => {
    const a = attempt();
    const b = { ...attempt({ completed: false, reason: 'server_closed' }), sample_id: 'short-004-b' };
    await writeResult(dir, a);
    await writeResult(dir, b);
    await writeResult(dir, { ...a, late: 9 });
    await writeFile(`${sampleRecordFile(dir, 'short-005-c')}.tmp`, '{"sample_id": "short-00');
    expect((await readdir(join(dir, SAMPLES_DIR))).sort()).toEqual(['short-003-a.json', 'short-004-b.json', 'short-005-c.json.tmp']);
    const read = await readResults(dir);
    expect([...read.keys()].sort()).toEqual(['short-003-a', 'short-004-b']);
    expect(read.get('short-003-a')).toEqual({ ...a, late: 9 });
    expect(read.get('short-004-b')).toEqual(b);
  });

  it("names a stored record cut short, with the parser's place", async () => {
    await writeResult(dir, attempt());
    const path = sampleRecordFile(dir, 'short-004-b');
    await writeFile(path, '{"sample_id":"short-004-b","completed":tr');
    const err = await readResults(dir).then(() => new Error('it resolved'), (e: Error) => e);
    expect(err.message).toMatch(new RegExp(`^${path}: not valid JSON \\(.+\\); the file may be cut short$`));
  });

  it("names a stored record that is not a sample's record (no sample_id)", async () => {
    const path = sampleRecordFile(dir, 'short-004-b');
    await mkdir(join(dir, SAMPLES_DIR));
    await writeFile(path, JSON.stringify([{ sample_id: 'short-004-b' }]));
    const err = await readResults(dir).then(() => new Error('it resolved'), (e: Error) => e);
    expect(err.message).toBe(`${path}: not a sample's record: it has no "sample_id"`);
  });

  describe('keepEarlierAttempt', () => {
    const id = SAMPLE.id;
    const current = sessionFile('', id, 'pacing');

    async function files(record: SampleResult, ...which: Array<'trace' | 'receipts' | 'pacing'>): Promise<void> {
      await mkdir(join(dir, 'sessions', id), { recursive: true });
      for (const f of which) await writeFile(sessionFile(dir, id, f), `${f} of the first attempt`);
      await writeResult(dir, record);
    }

    it("moves the trace, receipts and packets aside under the attempt's number, and points the record and its brief at the packets' new name", async () => {
      const stored = mergeResult(undefined, attempt({ pacing_file: current }));
      await files(stored, 'trace', 'receipts', 'pacing');
      const moved = await keepEarlierAttempt(dir, stored);
      expect((await readdir(join(dir, 'sessions', id))).sort()).toEqual(['input-send-receipts.attempt-1.json', 'pacing.attempt-1.msgpack', 'trace.attempt-1.jsonl']);
      const aside = sessionFile('', id, 'pacing', 1);
      expect(moved.pacing_file).toBe(aside);
      expect(moved.attempts?.[0].pacing_file).toBe(aside);
      expect(await readFile(join(dir, aside), 'utf8')).toBe('pacing of the first attempt');
      // The record on disk says so too, before the sample is recorded again.
      expect((await readResults(dir)).get(id)).toEqual(moved);
    });

    it('numbers the copies by the attempts already made', async () => {
      const stored = mergeResult(mergeResult(undefined, attempt({ completed: false })), attempt({ pacing_file: current }));
      await files(stored, 'trace', 'pacing');
      const moved = await keepEarlierAttempt(dir, stored);
      expect((await readdir(join(dir, 'sessions', id))).sort()).toEqual(['pacing.attempt-2.msgpack', 'trace.attempt-2.jsonl']);
      expect(moved.attempts?.map((a) => a.pacing_file)).toEqual([undefined, sessionFile('', id, 'pacing', 2)]);
    });

    it('returns the record as it was when it has no packet file, and takes the files that are missing in its stride', async () => {
      const stored = mergeResult(undefined, attempt());
      await files(stored, 'trace');
      expect(await keepEarlierAttempt(dir, stored)).toBe(stored);
      expect(await readdir(join(dir, 'sessions', id))).toEqual(['trace.attempt-1.jsonl']);
    });

    it('keeps the record as it was when its packet file is gone', async () => {
      const stored = mergeResult(undefined, attempt({ pacing_file: current }));
      await files(stored);
      expect(await keepEarlierAttempt(dir, stored)).toBe(stored);
    });

    it('fails on an error other than a missing file', async () => {
      const stored = mergeResult(undefined, attempt());
      await files(stored);
      // The trace's new name is taken by a non-empty directory: the rename fails, and not as ENOENT.
      await writeFile(sessionFile(dir, id, 'trace'), 'x');
      await mkdir(join(sessionFile(dir, id, 'trace', 1), 'full'), { recursive: true });
      await expect(keepEarlierAttempt(dir, stored)).rejects.toMatchObject({ code: expect.stringMatching(/^E(ISDIR|NOTEMPTY|EXIST)$/) });
    });
  });
});
