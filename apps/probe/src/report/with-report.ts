import { EXIT, parseFlags, type CliCommand } from '@duplex-bench/cli';

/**
 * `command` with `--report`: once it has written its output directory (any status but bad input),
 * the HTML report of that directory is written beside it.
 */
export function withReport(command: CliCommand): CliCommand {
  const flags = { ...command.flags, report: { kind: 'bool', group: 'output', help: 'also write OUTPUT/report.html (see the report command) at the end' } } as const;
  return {
    ...command,
    flags,
    run: async (argv, io) => {
      const f = parseFlags(argv, flags) as { report: boolean; output?: unknown };
      const drop = (a: string[]) => a.filter((x) => x !== '--report');
      const code = await command.run(drop(argv), { ...io, argv: drop(io.argv), typed: io.typed ?? io.argv });
      if (!f.report || code === EXIT.usage || typeof f.output !== 'string') return code;
      try {
        // The report's code loads only when a report is asked for.
        const { reportOf } = await import('./report-command');
        io.stderr.write(`report written to ${await reportOf(f.output)}\n`);
      } catch (err) {
        io.stderr.write(`error: report: ${(err as Error).message}\n`);
        return code === EXIT.ok ? EXIT.failed : code;
      }
      return code;
    },
  };
}

