// The flags of a command, in a module that loads nothing else: `--help` reads them without loading the command.

export const K8S_FLAGS = {
  shards: { kind: 'int', min: 1, required: true, group: 'load', help: 'pods of the Indexed Job, one shard each', value: 'N' },
  image: { kind: 'string', required: true, group: 'connection', help: 'an image of this project (the Dockerfile at the repository root)', value: 'IMAGE' },
  url: { kind: 'string', required: true, group: 'connection', help: 'ws:// or wss:// endpoint every shard drives', value: 'URL' },
  'run-args': { kind: 'string', required: true, group: 'load', help: "flags of duplex-bench run for every shard, e.g. '--concurrency 4096 --duration 60' (--concurrency is the total)", value: 'FLAGS' },
  name: { kind: 'string', default: 'duplex-bench', group: 'output', help: "the Jobs' name and the run directory on the volume", value: 'NAME' },
  'start-in-s': { kind: 'number', min: 10, default: 120, group: 'load', help: 'the common start: this long after the manifest is written, seconds', value: 'S' },
  cpu: { kind: 'string', default: '2', group: 'limits', help: 'CPU of each shard (request = limit: Guaranteed QoS; whole CPUs for exclusive cores)', value: 'CPU' },
  memory: { kind: 'string', default: '2Gi', group: 'limits', help: 'memory of each shard (request = limit)', value: 'QTY' },
  claim: { kind: 'string', default: 'duplex-bench-data', group: 'output', help: 'PersistentVolumeClaim the shards write to (ReadWriteMany across nodes)', value: 'NAME' },
  'api-key-secret': { kind: 'string', group: 'connection', help: "Secret holding the server's key under api-key (set as OPENAI_API_KEY)", value: 'NAME' },
  namespace: { kind: 'string', group: 'output', help: 'namespace of the Jobs', value: 'NS' },
  output: { kind: 'string', group: 'output', help: 'directory for shards.yaml and merge.yaml (default: both on stdout, shards first)', value: 'DIR' },
} as const;
