import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeWavPcm16 } from '@duplex-bench/audio';
import { startMockServer, type MockServer } from '@duplex-bench/mock-servers';
import { checkCommand, parseCheckOptions } from '../check/check-command';
import { probe } from './run-harness.spec-helpers';

jest.setTimeout(60_000);

interface TraceLine {
  direction: string;
  time_s: number;
  event: Record<string, unknown> & { type?: string };
}

async function trace(dir: string, id: string): Promise<TraceLine[]> {
  const text = await readFile(join(dir, 'sessions', id, 'trace.jsonl'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as TraceLine);
}

/**
 * 4 s of 16 kHz input in which a user speaks twice (a 440 Hz tone at about -20 dBFS): 0-1 s, and
 * 1.8-2.6 s, over the model's first answer, then silence. The mock's VAD ends the first turn at
 * 1.5 s and answers it from about 1.8 s; the second speech cuts that answer, ends at 3.1 s and is
 * answered whole before the input ends.
 */
async function twoTurnsWav(): Promise<string> {
  const rate = 16000;
  const pcm = Buffer.alloc(4 * rate * 2);
  const speaks = (t_s: number) => (t_s >= 0 && t_s < 1) || (t_s >= 1.8 && t_s < 2.6);
  for (let i = 0; i < 4 * rate; i++) if (speaks(i / rate)) pcm.writeInt16LE(Math.round(3277 * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 2);
  const file = join(await mkdtemp(join(tmpdir(), 'legacy-run-')), 'two-turns.wav');
  await writeFile(file, encodeWavPcm16(pcm, rate));
  return file;
}

describe('probe run --profile qwen3-omni-half-duplex against a mock of sglang-omni\'s legacy facade', () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer({ port: 0, profile: 'qwen3-omni-half-duplex' });
  });
  afterAll(() => mock.close());

  it('speaks the legacy protocol to the end (probe, answer, close), reports the legacy figures, and passes check', async () => {
    const { code, summary, dir, stderr } = await probe(mock.url, ['--profile', 'qwen3-omni-half-duplex', '--audio', await twoTurnsWav(), '--duration', '4', '--concurrency', '2', '--trace', 'full', '--keep-traces']);
    expect({ code, stderr }).toMatchObject({ code: 0 });
    expect(summary.sessions).toMatchObject({ started: 2, completed: 2, incomplete: 0 });
    expect(summary.packet_ms).toBe(80);
    // Each session: its first answer cut by the second speech, the second answered whole before the close.
    expect(summary.legacy).toMatchObject({ sessions: 2, responses_created: 4, responses_overlapped_by_speech: 2, responses_open_at_close: 0, probe_ack_s: { count: 2 } });
    expect(summary.events.dialect).not.toHaveProperty('probe_ack_ms');
    const runJson = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
    expect(runJson).toMatchObject({ protocol: 'sglang-legacy', dialect: { turn_detection: 'server_vad', profile: { name: 'qwen3-omni-half-duplex', output_sample_rate: 24000 } } });
    for (const id of ['s0', 's1']) {
      const lines = await trace(dir, id);
      const sent = lines.filter((l) => l.direction === 'send');
      expect(sent.map((l) => l.event.type)).toEqual(['session.update', ...Array<string>(50).fill('input_audio_buffer.append'), 'session.update']);
      expect(sent[0].event.session).toEqual({ modalities: ['text', 'audio'], turn_detection: { type: 'server_vad' } });
      expect(sent.at(-1)?.event.session).toEqual({});
      // The probe went a second after the input had played out (first append + 4 s + 1 s).
      expect((sent.at(-1) as TraceLine).time_s - sent[1].time_s).toBeGreaterThanOrEqual(5);
      const received = lines.filter((l) => l.direction === 'receive').map((l) => l.event.type);
      expect(received.at(-1)).toBe('session.updated');
      expect(received.filter((t) => t === 'response.done')).toHaveLength(2);
      expect(received).toContain('output_audio_buffer.cleared');
      expect(lines.filter((l) => l.direction === 'error')).toEqual([]);
    }
    // The client closed each socket (1000): the mock counts them completed.
    await new Promise((r) => setTimeout(r, 100));
    expect(mock.stats().sessions).toMatchObject({ opened: 2, completed: 2 });

    let out = '';
    const checked = await checkCommand(parseCheckOptions([dir]), { stdout: { write: (t: string) => (out += t) }, stderr: { write: () => undefined } });
    expect({ checked, out }).toMatchObject({ checked: 0 });
    expect(out).toMatch(/2 session\(s\): 2 pass, 0 fail.*graded as a sglang-legacy run/);
  });
});
