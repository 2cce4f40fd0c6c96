import { runProgram, UsageError, type CliProgram, type RunIo } from '@duplex-bench/cli';
import { ConformanceError } from '@duplex-bench/conformance';
import { ExperimentError } from '@duplex-bench/experiments';
import { ReportInputError } from '@duplex-bench/report';
import { ResultsInputError, RunDirError, RunFileError } from '@duplex-bench/results';
import { RunInputError } from '@duplex-bench/run';
import { BAD_INPUT_ERRORS, usageOf } from './errors';

function io(): RunIo & { err: string[] } {
  const err: string[] = [];
  return { err, stdout: { write: () => true }, stderr: { write: (s: string) => err.push(s) }, signals: { on: () => undefined, off: () => undefined }, exitNow: () => undefined, argv: [] };
}

describe('usageOf', () => {
  it("takes each lib's bad-input error as a UsageError with its message, and leaves any other error alone", () => {
    const each = [
      new RunInputError('BAD_PACKET_MS', 'a'),
      new ResultsInputError('NO_SAMPLES', 'b'),
      new RunDirError('c', 'RUN_DIR_EMPTY', '/x'),
      new ConformanceError('NO_TRACES', 'd', '/x'),
      new ExperimentError('BAD_SLO', 'e'),
      new ReportInputError('NOT_A_RUN', 'f'),
      new RunFileError('/x/summary.json', 'not valid JSON'),
    ];
    // Every name in the list is a lib class's own, and every class is listed.
    expect(new Set(each.map((err) => err.name))).toEqual(BAD_INPUT_ERRORS);
    for (const err of each) {
      const usage = usageOf(err);
      expect(usage).toBeInstanceOf(UsageError);
      expect(usage?.message).toBe(err.message);
    }
    const own = new UsageError('d');
    expect(usageOf(own)).toBe(own);
    expect(usageOf(new Error('e'))).toBeUndefined();
    expect(usageOf('f')).toBeUndefined();
  });

  it('makes a command that throws one exit 2 with one line, and any other error exit 1', async () => {
    const throwing = (err: Error): CliProgram => ({
      name: 'p',
      version: '0',
      summary: '',
      usageOf,
      commands: [{ name: 'c', summary: '', usage: '', flags: {}, run: () => Promise.reject(err) }],
    });
    const bad = io();
    expect(await runProgram(throwing(new RunInputError('BAD_DATASET', '--dataset: no such directory')), ['c'], bad)).toBe(2);
    expect(bad.err).toEqual(['error: --dataset: no such directory\n']);
    const failed = io();
    expect(await runProgram(throwing(new Error('boom')), ['c'], failed)).toBe(1);
  });
});
