// The flags of a command, in a module that loads nothing else: `--help` reads them without loading the command.

export const REPORT_FLAGS = {
  output: { kind: 'string', group: 'output', help: 'where to write the page (default: DIR/report.html)', value: 'FILE' },
  'mock-stats': { kind: 'string', group: 'input', help: "the mock's --stats-output file, to show the server's view (arrival deviation)", value: 'FILE' },
  slo: { kind: 'string', group: 'input', help: "run and record pages: what the server must meet for the server verdict, figure<=bound joined by commas (default: sweep's, underruns=0,ttfp_p99_ms<=1000,incomplete=0); a sweep page shows its own SLO", value: 'TERMS' },
  'bin-s': { kind: 'number', min: 0, exclusive: true, default: 0.5, group: 'output', help: 'time bin of the pacing chart, seconds', value: 'S' },
} as const;
