import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readJsonFile, readRunJson, readSessionRows, RunFileError, writeRunFile, RUN_FILES, runFile, sampleRecordFile, SESSION_FILES, sessionDir, sessionFile, TRACE_LAYOUT, writeRunJson } from './run-files';

describe('the names of a run’s files', () => {
  it('puts each run file directly in the run directory, no two under one name', () => {
    expect(runFile('/runs/a', 'summary')).toBe(join('/runs/a', 'summary.json'));
    expect(runFile('/runs/a', 'samples')).toBe(join('/runs/a', 'samples.msgpack'));
    const names = Object.values(RUN_FILES);
    expect(new Set(names).size).toBe(names.length);
  });

  it('puts a session’s files under sessions/<id>/, an earlier attempt’s copy named by its number before the extension', () => {
    expect(sessionDir('/runs/a', 's7')).toBe(join('/runs/a', 'sessions', 's7'));
    expect(sessionFile('/runs/a', 's7', 'trace')).toBe(join('/runs/a', 'sessions', 's7', 'trace.jsonl'));
    expect(sessionFile('/runs/a', 's7', 'trace', 2)).toBe(join('/runs/a', 'sessions', 's7', 'trace.attempt-2.jsonl'));
    expect(sessionFile('/runs/a', 's7', 'receipts', 0)).toBe(join('/runs/a', 'sessions', 's7', 'input-send-receipts.attempt-0.json'));
    expect(sessionFile('/runs/a', 's7', 'pacing', 1)).toBe(join('/runs/a', 'sessions', 's7', 'pacing.attempt-1.msgpack'));
  });

  it('gives the trace writer the same layout the readers find sessions by', () => {
    const { sessions_dir, trace, receipts } = TRACE_LAYOUT;
    expect(join('/runs/a', sessions_dir, 's1', trace)).toBe(sessionFile('/runs/a', 's1', 'trace'));
    expect(join('/runs/a', sessions_dir, 's1', receipts)).toBe(sessionFile('/runs/a', 's1', 'receipts'));
    expect(SESSION_FILES.trace).toBe(trace);
  });

  it('keeps a recorded sample’s record under samples/ by its id', () => {
    expect(sampleRecordFile('/rec', 'librispeech-0042')).toBe(join('/rec', 'samples', 'librispeech-0042.json'));
  });
});

describe('reading and writing run files', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'run-files-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes JSON a person can read by default (one-space indent), and compact when asked', async () => {
    await writeRunJson(dir, 'run', { command: ['run'], host: { cores: 2 } });
    expect(await readFile(join(dir, 'run.json'), 'utf8')).toBe('{\n "command": [\n  "run"\n ],\n "host": {\n  "cores": 2\n }\n}');
    await writeRunJson(dir, 'duplex_metrics', { a: [1, 2] }, 0);
    expect(await readFile(join(dir, 'duplex_metrics.json'), 'utf8')).toBe('{"a":[1,2]}');
  });

  it('reads a run file back as written; null when it is not there; one cut short is named, with the place', async () => {
    await writeRunJson(dir, 'summary', { qualified: true, packets: { sent: 3 } });
    expect(await readRunJson(dir, 'summary')).toEqual({ qualified: true, packets: { sent: 3 } });
    expect(await readRunJson(dir, 'check')).toBeNull();
    await writeFile(runFile(dir, 'run'), '{"command": [');
    const err = await readRunJson(dir, 'run').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunFileError);
    expect((err as Error).message).toMatch(new RegExp(`^${runFile(dir, 'run')}: not valid JSON \\(.+\\); the file may be cut short$`));
  });

  it('reads the session rows of sessions.jsonl in order, skipping blank lines', async () => {
    await writeFile(join(dir, 'sessions.jsonl'), '{"id":"s1","completed":true}\n\n{"id":"s0","completed":false}\n');
    expect(await readSessionRows(dir)).toEqual([
      { id: 's1', completed: true },
      { id: 's0', completed: false },
    ]);
  });

  it('reads a run written before sessions.jsonl from its sessions.json, and prefers sessions.jsonl when both are there', async () => {
    await writeFile(join(dir, 'sessions.json'), JSON.stringify({ sessions: [{ id: 'old' }] }));
    expect(await readSessionRows(dir)).toEqual([{ id: 'old' }]);
    await writeFile(join(dir, 'sessions.jsonl'), '{"id":"new"}\n');
    expect(await readSessionRows(dir)).toEqual([{ id: 'new' }]);
  });

  it('names the file and the line of a session row that does not parse; the last one may be cut short', async () => {
    const path = join(dir, 'sessions.jsonl');
    await writeFile(path, '{"id":"s1","completed":true}\n{"id":"s0","comp\n');
    expect((await readSessionRows(dir).catch((e: Error) => e)) as Error).toMatchObject({ name: 'RunFileError', message: expect.stringMatching(new RegExp(`^${path}: line 2: not valid JSON \\(.+\\); the file may be cut short$`)) });
    await writeFile(path, '{"id":"s1","completed":true}\nnot json\n{"id":"s0"}\n');
    expect((await readSessionRows(dir).catch((e: Error) => e)) as Error).toMatchObject({ name: 'RunFileError', message: expect.stringMatching(new RegExp(`^${path}: line 2: not valid JSON \\(.+\\)$`)) });
  });

  it("names an older run's sessions.json cut short", async () => {
    const path = join(dir, 'sessions.json');
    await writeFile(path, '{"sessions":[{"id":"old"');
    expect((await readSessionRows(dir).catch((e: Error) => e)) as Error).toMatchObject({ name: 'RunFileError', message: expect.stringMatching(new RegExp(`^${path}: not valid JSON \\(.+\\); the file may be cut short$`)) });
  });

  it('has no session rows when the run wrote neither file, or a sessions.json without them', async () => {
    expect(await readSessionRows(dir)).toEqual([]);
    await writeFile(join(dir, 'sessions.json'), '{}');
    expect(await readSessionRows(dir)).toEqual([]);
  });
});

describe('readJsonFile', () => {
  it('reads a run file, gives null when it is not there, and names a file cut short', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'run-json-'));
    const path = join(dir, 'summary.json');
    expect(await readJsonFile(path)).toBeNull();
    await writeFile(path, '{"kind":"http"}');
    expect(await readJsonFile(path)).toEqual({ kind: 'http' });
    await writeFile(path, '{"kind":"ht');
    const err = await readJsonFile(path).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunFileError);
    expect((err as Error).message).toMatch(new RegExp(`^${path}: not valid JSON \\(.+\\); the file may be cut short$`));
  });
});

describe('writeRunFile', () => {
  it('writes a run file whole through a temporary name, and a failed write names the file and leaves nothing behind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'run-write-'));
    await writeRunFile(dir, 'timeline', '{"a":1}');
    expect(await readFile(join(dir, 'timeline.json'), 'utf8')).toBe('{"a":1}');
    const missing = join(dir, 'gone');
    const err = await writeRunFile(missing, 'summary', '{}').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunFileError);
    expect((err as Error).message).toMatch(new RegExp(`^${join(missing, 'summary.json')}: cannot write it: ENOENT`));
    // A directory the temporary file cannot be renamed over: the temporary file is removed.
    await mkdir(join(dir, 'summary.json'));
    await expect(writeRunFile(dir, 'summary', '{}')).rejects.toThrow(/summary\.json: cannot write it/);
    await expect(readFile(join(dir, 'summary.json.tmp'))).rejects.toThrow(/ENOENT/);
  });
});
