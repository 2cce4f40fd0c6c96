import type { RunIo } from '@duplex-bench/cli';
import { dialectWarnings, withBuiltinMock } from '@duplex-bench/run';
import { recordCommand } from './record-command';
import { parseRecordOptions } from './record-options';

/** `record`: its flags read, the dialect's warnings said once, then the recording. */
export async function recordMain(argv: string[], io: RunIo): Promise<number> {
  const options = parseRecordOptions(argv);
  for (const line of dialectWarnings(options)) io.stderr.write(`${line}\n`);
  const builtin = options.builtin_mock;
  if (builtin) return withBuiltinMock({ ...options, ...builtin, processes: 1, command: 'recording' }, io, (url) => recordCommand({ ...options, url }, io));
  return recordCommand(options, io);
}
