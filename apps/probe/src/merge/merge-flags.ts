// The flags of a command, in a module that loads nothing else: `--help` reads them without loading the command.

export const MERGE_FLAGS = {
  output: { kind: 'string', required: true, group: 'output', help: 'directory for the pooled summary.json and duplex_metrics.json', value: 'DIR' },
  quiet: { kind: 'bool', group: 'output', help: 'no progress lines' },
  timeline: { kind: 'enum', values: ['auto', 'reference'], default: 'auto', group: 'output', help: "auto: one host's monotonic clock when every run had it, else the reference clock; reference: through each run's offset always (checks the mapping)" },
  'max-clock-uncertainty-ms': { kind: 'number', min: 0, default: 5, group: 'limits', help: "runs of other hosts: refuse one whose offset to the reference clock is known less well than this, ms", value: 'MS' },
} as const;
