// The flags of a command, in a module that loads nothing else: `--help` reads them without loading the
// command. So what the help states of a lib is written here (command-flags.spec.ts holds it to the lib's).

/** Flags that make every session follow a conversation script; `run` and `record` share them. */
export const CONVERSATION_FLAGS = {
  conversation: {
    kind: 'string',
    group: 'input',
    help: "follow a conversation script in every session instead of one input: a built-in name (default) or a YAML/JSON file of say, listen and silence_ms steps; with --duration it starts again until --duration ends, the last step cut; without, run plays it once in each session, to its own end (record: --duration's default); the summary's behaviour block and turns.jsonl hold its figures",
    value: 'NAME|FILE',
  },
  'max-stop-s': { kind: 'number', min: 0, exclusive: true, default: 3, group: 'output', help: 'with --conversation: a barge-in the model has not stopped for within this is no_stop, seconds', value: 'S' },
  'takeover-min-ms': { kind: 'number', min: 0, exclusive: true, default: 500, group: 'output', help: 'with --conversation: a model speech span that starts in a pause counts as a takeover from this long, ms', value: 'MS' },
} as const;
