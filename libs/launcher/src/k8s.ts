/**
 * Kubernetes manifests for a sharded run: one Indexed Job whose pods are the shards (each takes
 * `JOB_COMPLETION_INDEX` as its `--shard`), all starting at one wall-clock instant, writing to one
 * volume; and the Job that merges their directories once they are done.
 */
export interface ShardJobOptions {
  /** Name of the Jobs and the run directory on the volume. */
  name: string;
  shards: number;
  /** An image of this project (the Dockerfile at the repository root). */
  image: string;
  /** The server every shard drives. */
  url: string;
  /** Flags of `duplex-bench run` for every shard (`--concurrency` is the total over the shards). */
  run_args: string[];
  /** The common start (epoch ms): the generation time plus a lead long enough for every pod to be scheduled and ready. */
  start_at_ms: number;
  /** CPU and memory of each shard, as requests and limits both (Guaranteed QoS). */
  cpu: string;
  memory: string;
  /** The PersistentVolumeClaim every shard writes to (ReadWriteMany when shards land on several nodes). */
  claim: string;
  /** A Secret holding the server's key under `api-key`, passed as OPENAI_API_KEY, never on a command line. */
  api_key_secret?: string;
  namespace?: string;
}

/** The path the claim is mounted at in every pod. */
export const DATA_DIR = '/data';

/** A POSIX shell word for `s`. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function labels(o: ShardJobOptions, role: string): Record<string, string> {
  return { 'app.kubernetes.io/name': 'duplex-bench', 'duplex-bench/run': o.name, 'duplex-bench/role': role };
}

function pod(o: ShardJobOptions, role: string, script: string) {
  return {
    metadata: { labels: labels(o, role) },
    spec: {
      restartPolicy: 'Never',
      // Shards on different nodes where the cluster has them: two shards on one node share its cores.
      affinity: {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: labels(o, role) } } },
          ],
        },
      },
      containers: [
        {
          name: role,
          image: o.image,
          command: ['sh', '-c', script],
          ...(o.api_key_secret ? { env: [{ name: 'OPENAI_API_KEY', valueFrom: { secretKeyRef: { name: o.api_key_secret, key: 'api-key' } } }] } : {}),
          // Requests equal to limits, whole CPUs: Guaranteed QoS, so a kubelet with the static CPU
          // manager policy gives the shard cores of its own (the pinning --cpu-affinity does on one host).
          resources: { requests: { cpu: o.cpu, memory: o.memory }, limits: { cpu: o.cpu, memory: o.memory } },
          volumeMounts: [{ name: 'data', mountPath: DATA_DIR }],
        },
      ],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: o.claim } }],
    },
  };
}

const CLI = 'node /app/bin/duplex-bench.js';

/** The shards' Indexed Job. */
export function shardJob(o: ShardJobOptions) {
  const run = [CLI, 'run', '--url', shellQuote(o.url), ...o.run_args.map(shellQuote), '--shard', `"$JOB_COMPLETION_INDEX/${o.shards}"`, '--start-at', String(o.start_at_ms), '--output', `${DATA_DIR}/${o.name}`, '--quiet'];
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: `${o.name}-shards`, ...(o.namespace ? { namespace: o.namespace } : {}), labels: labels(o, 'shard'), annotations: { 'duplex-bench/start-at': new Date(o.start_at_ms).toISOString() } },
    spec: {
      completionMode: 'Indexed',
      completions: o.shards,
      parallelism: o.shards,
      // A shard that fails is not retried: a late retry would start after --start-at and fail anyway.
      backoffLimit: 0,
      template: pod(o, 'shard', `exec ${run.join(' ')}`),
    },
  };
}

/** The Job that merges the shards' directories (apply it once the shards' Job is complete). */
export function mergeJob(o: ShardJobOptions) {
  const dirs = Array.from({ length: o.shards }, (_, i) => `${DATA_DIR}/${o.name}/shard-${i}`);
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: `${o.name}-merge`, ...(o.namespace ? { namespace: o.namespace } : {}), labels: labels(o, 'merge') },
    spec: { completions: 1, backoffLimit: 0, template: pod({ ...o, cpu: '1', memory: o.memory }, 'merge', `exec ${[CLI, 'merge', ...dirs, '--output', `${DATA_DIR}/${o.name}/merged`].join(' ')}`) },
  };
}
