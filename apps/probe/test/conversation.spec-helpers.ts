import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BehaviourSessionLog, MockServer } from '@duplex-bench/mock-servers';
import type { BehaviourSummary, TurnRecord } from '@duplex-bench/metrics';
import { runBounded } from './spawn.spec-helpers';

/** The executable a user runs: the compiled kit. */
export const BIN = join(__dirname, '..', '..', '..', 'bin', 'duplex-bench.js');

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

/** The mock's own log of what it did, session by session in order of opening. */
export const mockSessions = (mock: MockServer): BehaviourSessionLog[] => mock.stats().behaviour?.sessions ?? [];

export async function conversationRun(mock: MockServer, conversation: string, sessions: number, duration_s: number) {
  const dir = await mkdtemp(join(tmpdir(), 'conversation-'));
  const { code, stdout, stderr } = await runBounded(
    process.execPath,
    [BIN, 'run', '--url', mock.url, '--concurrency', String(sessions), '--duration', String(duration_s), '--conversation', conversation, '--output', dir, '--json', '--quiet', '--allow-unqualified'],
    { bound_ms: (duration_s + 60) * 1000, label: 'duplex-bench run' },
  );
  const summary = JSON.parse(stdout.trim().split('\n').pop() as string) as { qualified: boolean; behaviour: BehaviourSummary };
  const turns = (await readFile(join(dir, 'turns.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as TurnRecord);
  return { code, stderr, summary, turns };
}

