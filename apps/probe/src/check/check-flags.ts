// The flags of a command, in a module that loads nothing else: `--help` reads them without loading the command.

export const CHECK_FLAGS = {
  profile: { kind: 'enum', values: ['nemotron', 'minicpmo'], group: 'dialect', help: "grade against this native profile instead of the one each trace's grant states" },
  output: { kind: 'string', group: 'output', help: 'write the verdicts as JSON to this file', value: 'FILE' },
  quiet: { kind: 'bool', group: 'output', help: 'print only the verdict line' },
} as const;
