import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jsonLines, readSessionSpeech, readTurns } from './conversation-files';

describe("a conversation run's JSON-lines files", () => {
  it('reads back what it wrote, one record a line; a run without one has none; a bad line names its file and line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'conversation-files-'));
    const turns = [
      { session: 's0', pass: 0, step: 0, kind: 'response' as const, outcome: 'answered' as const, user_start_ms: 1, user_end_ms: 2, latency_ms: 400 },
      { session: 's1', pass: 0, step: 3, kind: 'pause' as const, outcome: 'held' as const, user_start_ms: 5, user_end_ms: 6 },
    ];
    expect(jsonLines([])).toBe('');
    await writeFile(join(dir, 'turns.jsonl'), jsonLines(turns));
    expect(await readTurns(dir)).toEqual(turns);
    expect(await readSessionSpeech(dir)).toBeNull();
    await writeFile(join(dir, 'speech.jsonl'), '{"session":"s0","model_speech":"vad","steps":[],"model":[],"events":[]}\n{"session":\n');
    await expect(readSessionSpeech(dir)).rejects.toMatchObject({ code: 'BAD_RUN_FILE', message: expect.stringMatching(new RegExp(`^${join(dir, 'speech.jsonl')}: line 2: not valid JSON \\(.+\\); the file may be cut short$`)) });
  });
});
