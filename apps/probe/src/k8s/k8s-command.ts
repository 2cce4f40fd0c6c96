import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { EXIT, parseFlags, UsageError, type CliCommand, type RunIo } from '@duplex-bench/cli';
import { mergeJob, shardJob } from '@duplex-bench/launcher';

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

const OWN_FLAGS = ['--shard', '--start-at', '--output', '--url', '--processes', '--api-key'];

async function k8s(argv: string[], io: RunIo): Promise<number> {
  const f = parseFlags(argv, K8S_FLAGS);
  if (f._.length > 0) throw new UsageError(`unexpected argument "${f._[0]}"`);
  if (!/^[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?$/.test(f.name)) throw new UsageError(`--name must be a DNS label of at most 42 characters, got "${f.name}"`);
  if (!/^wss?:\/\//.test(f.url)) throw new UsageError(`--url must start with ws:// or wss://, got "${f.url}"`);
  const run_args = f['run-args'].trim().split(/\s+/).filter(Boolean);
  const own = run_args.find((a) => OWN_FLAGS.some((o) => a === o || a.startsWith(`${o}=`)));
  if (own) throw new UsageError(`--run-args must not set ${own.split('=')[0]}: k8s sets it for each shard`);
  const options = {
    name: f.name,
    shards: f.shards,
    image: f.image,
    url: f.url,
    run_args,
    start_at_ms: Date.now() + f['start-in-s'] * 1000,
    cpu: f.cpu,
    memory: f.memory,
    claim: f.claim,
    api_key_secret: f['api-key-secret'],
    namespace: f.namespace,
  };
  const [shards, merge] = [shardJob(options), mergeJob(options)].map((doc) => stringify(doc));
  if (f.output) {
    await mkdir(f.output, { recursive: true });
    await writeFile(join(f.output, 'shards.yaml'), shards);
    await writeFile(join(f.output, 'merge.yaml'), merge);
  } else io.stdout.write(`${shards}---\n${merge}`);
  io.stderr.write(
    `${f.shards} shards start at ${new Date(options.start_at_ms).toISOString()}: apply the shards' Job now; once it is complete (kubectl wait --for=condition=complete job/${f.name}-shards), apply the merge Job\n`,
  );
  return EXIT.ok;
}

export const K8S_COMMAND: CliCommand = {
  name: 'k8s',
  summary: 'write Kubernetes manifests of a sharded run: an Indexed Job of --shards pods starting at one instant, and the Job that merges them',
  usage: "--shards N --image IMAGE --url URL --run-args '--concurrency N --duration S' [--output DIR]",
  flags: K8S_FLAGS,
  run: k8s,
};
