import { mkdtemp, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFile, writeRunFile } from './run-files';
import { appendRunFile, unwrittenLine, writeEvery } from './write-every';

describe('writeEvery', () => {
  it('tries every write whatever the others do, and names each that failed with its error', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'write-every-'));
    const gone = join(dir, 'no-such-dir');
    const w = await writeEvery([
      { path: runFile(gone, 'summary'), write: () => writeRunFile(gone, 'summary', '{}') },
      { path: runFile(dir, 'run'), write: () => writeRunFile(dir, 'run', '{"a":1}') },
      { path: runFile(dir, 'timeline'), write: () => Promise.reject(new Error('EIO: i/o error, write')) },
    ]);
    expect(w.written).toEqual([runFile(dir, 'run')]);
    expect(w.failed.map((f) => f.path)).toEqual([runFile(gone, 'summary'), runFile(dir, 'timeline')]);
    // The path is said once: RunFileError's own prefix is not repeated.
    expect(w.failed[0].message).toMatch(/^cannot write it: ENOENT/);
    expect(await readFile(runFile(dir, 'run'), 'utf8')).toBe('{"a":1}');
    expect(unwrittenLine(w, ['/x/samples.msgpack'])).toBe(
      `cannot write ${runFile(gone, 'summary')} (${w.failed[0].message}), ${runFile(dir, 'timeline')} (EIO: i/o error, write); kept samples.msgpack, run.json`,
    );
  });

  it('says nothing when every file was written', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'write-every-'));
    const w = await writeEvery([{ path: runFile(dir, 'run'), write: () => writeRunFile(dir, 'run', '{}') }]);
    expect(unwrittenLine(w)).toBeNull();
    expect(unwrittenLine({ written: [], failed: [{ path: '/r/summary.json', message: 'x' }] })).toBe('cannot write /r/summary.json (x); kept no other file');
  });
});

describe('appendRunFile', () => {
  it('appends to a file the run filled as it went', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'append-run-'));
    await writeFile(runFile(dir, 'samples'), Buffer.from([1, 2]));
    await appendRunFile(dir, 'samples', Uint8Array.of(3));
    expect([...(await readFile(runFile(dir, 'samples')))]).toEqual([1, 2, 3]);
  });

  it('removes a file it could not append to, cut short, and names it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'append-run-'));
    // samples.msgpack is /dev/full here: every write to it fails with ENOSPC, as on a full disk.
    const path = runFile(dir, 'samples');
    await symlink('/dev/full', path);
    const failing = appendRunFile(dir, 'samples', Uint8Array.of(2));
    await expect(failing).rejects.toThrow(`${path}: cannot write it: ENOSPC`);
    await expect(failing).rejects.toThrow(/removed, as it was cut short$/);
    expect(await readdir(dir)).toEqual([]);
  });

  it('writes a whole file to /dev/full as nothing at all: no temporary file is left', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'write-run-'));
    await symlink('/dev/full', runFile(dir, 'summary') + '.tmp');
    const w = await writeEvery([{ path: runFile(dir, 'summary'), write: () => writeRunFile(dir, 'summary', '{"a":1}') }]);
    expect(w.failed.map((f) => f.message)).toEqual([expect.stringMatching(/^cannot write it: ENOSPC/)]);
    expect(await readdir(dir)).toEqual([]);
  });

  it('says a file that could not be rewritten is still there as it was before, whole', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'write-run-'));
    await writeFile(runFile(dir, 'run'), '{"started":1}');
    await symlink('/dev/full', runFile(dir, 'run') + '.tmp');
    const w = await writeEvery([{ path: runFile(dir, 'run'), write: () => writeRunFile(dir, 'run', '{"started":1,"ended":2}') }]);
    expect(w.failed).toEqual([{ path: runFile(dir, 'run'), message: expect.stringMatching(/^cannot write it: ENOSPC/), earlier: true }]);
    expect(unwrittenLine(w)).toMatch(/; kept run\.json as it was before$/);
    expect(await readFile(runFile(dir, 'run'), 'utf8')).toBe('{"started":1}');
  });
});
