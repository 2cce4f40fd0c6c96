import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { EXIT, parseFlags, UsageError, type RunIo } from '@duplex-bench/cli';
import { mergeJob, shardJob } from '@duplex-bench/launcher';
import { K8S_FLAGS } from './k8s-flags';

const OWN_FLAGS = ['--shard', '--start-at', '--output', '--url', '--processes', '--api-key'];

/** `k8s`: the manifests of a sharded run, written to --output or stdout. */
export async function k8sCommand(argv: string[], io: RunIo): Promise<number> {
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
