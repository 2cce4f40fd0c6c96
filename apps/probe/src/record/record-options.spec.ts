import { UsageError } from '@duplex-bench/cli';
import { RECORD_CONVERSATION_DURATION_S } from './record-flags';
import { parseRecordOptions } from './record-options';

const BASE = ['--url', 'ws://127.0.0.1:8765/v1/realtime', '--concurrency', '2', '--output', 'out/rec'];

function usageError(argv: string[]): string {
  try {
    parseRecordOptions(argv);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`accepted: ${argv.join(' ')}`);
}

describe('parseRecordOptions with --conversation', () => {
  it('takes a conversation, its length (60 s unless given) and the bounds of its figures', () => {
    expect(parseRecordOptions([...BASE, '--conversation', 'default'])).toMatchObject({ conversation: 'default', duration_s: RECORD_CONVERSATION_DURATION_S, max_stop_s: 3, takeover_min_ms: 500 });
    expect(RECORD_CONVERSATION_DURATION_S).toBe(60);
    expect(parseRecordOptions([...BASE, '--conversation', 'default', '--duration', '20', '--max-stop-s', '2', '--takeover-min-ms', '800'])).toMatchObject({ duration_s: 20, max_stop_s: 2, takeover_min_ms: 800 });
  });

  it('refuses --duration without --conversation, and --conversation with --dataset', () => {
    expect(usageError([...BASE, '--duration', '20'])).toMatch(/^--duration .* goes with --conversation/);
    expect(usageError([...BASE, '--conversation', 'default', '--dataset', 'wavs'])).toBe('--conversation and --dataset are two inputs: give one');
  });
});
