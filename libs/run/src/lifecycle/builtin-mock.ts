import { join } from 'node:path';
import { UsageError, type RunIo } from '@duplex-bench/cli';
import { startBuiltinMock } from '@duplex-bench/launcher';
import type { RunOptions } from './run-settings';

/** What `run` without `--url` serves itself: the mock that speaks the run's dialect. */
export type BuiltinMockOptions = Pick<RunOptions, 'protocol' | 'turn_detection' | 'conversation' | 'output'> & {
  /** What the mock serves, for its one line: run (default), recording, sweep. */
  command?: string;
  /** `--mock-profile`: the native mock's profile (default append-echo; nemotron with --conversation). */
  mock_profile?: string;
};

/** The `serve` flags of the mock for a run: its dialect, its model, the run's conversation, its stats beside the run. */
export function builtinMockArgs(o: BuiltinMockOptions): string[] {
  const dialect =
    o.protocol === 'sglang-legacy'
      ? ['--profile', 'qwen3-omni-half-duplex']
      : o.protocol === 'vllm-omni'
        ? ['--protocol', 'openai', '--flavor', 'vllm-omni', ...(o.turn_detection === 'server_vad' ? ['--turn-based'] : [])]
        : o.protocol === 'openai'
          ? ['--protocol', 'openai']
          : ['--profile', o.mock_profile ?? (o.conversation ? 'nemotron' : 'append-echo')];
  // Its frames carry their send time, so the run reports its own receive delay.
  return [...dialect, ...(o.conversation && o.protocol !== 'sglang-legacy' ? ['--conversation', o.conversation] : []), '--stamp-sends', '--stats-output', join(o.output, 'mock.json')];
}

/**
 * Runs `run` against the built-in mock when no `--url` was given: starts it as a child process on a
 * free port, says so in one line, runs, and stops it (it writes its stats beside the run) at the end,
 * on an error and on an interrupt alike. One process only: a launched or sharded run needs a server
 * every process can reach, so it needs `--url`.
 */
export async function withBuiltinMock(o: BuiltinMockOptions & Pick<RunOptions, 'processes'> & Partial<Pick<RunOptions, 'shard' | 'start_at_ms'>>, io: RunIo, run: (url: string) => Promise<number>): Promise<number> {
  if (o.processes > 1 || o.shard || o.start_at_ms !== undefined) throw new UsageError('--url is required with --processes, --shard or --start-at (the built-in mock serves one process)');
  const args = builtinMockArgs(o);
  const mock = await startBuiltinMock(args);
  io.stderr.write(`no --url: serving the built-in mock (duplex-bench serve ${args.filter((a) => !a.endsWith('mock.json') && a !== '--stats-output').join(' ')}) at ${mock.url}, pid ${mock.pid}, for this ${o.command ?? 'run'}; its stats go to ${join(o.output, 'mock.json')}\n`);
  try {
    return await run(mock.url);
  } finally {
    await mock.stop();
  }
}
