import { execFileSync } from 'node:child_process';
import { DATA_DIR, mergeJob, shardJob, shellQuote, type ShardJobOptions } from './k8s';

/** The words `sh` reads from `words` (a shell command line's arguments), with `env` set. */
function shellWords(words: string, env: Record<string, string> = {}): string[] {
  const out = execFileSync('sh', ['-c', `for w in ${words}; do printf '%s\\0' "$w"; done`], { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' });
  return out.split('\0').slice(0, -1);
}

const OPTIONS: ShardJobOptions = {
  name: 'ttfp-512',
  shards: 4,
  image: 'registry.local/duplex-bench:1.2.3',
  url: 'ws://server:8000/v1/realtime?model=a&voice=b',
  run_args: ['--concurrency', '512', '--duration', '30', '--label', "it's a test"],
  start_at_ms: Date.UTC(2025, 0, 2, 3, 4, 5, 600),
  cpu: '4',
  memory: '2Gi',
  claim: 'bench-runs',
};

type Container = {
  name: string;
  image: string;
  command: string[];
  env?: unknown[];
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  volumeMounts: Array<{ name: string; mountPath: string }>;
};
const containerOf = (job: ReturnType<typeof shardJob> | ReturnType<typeof mergeJob>) => job.spec.template.spec.containers[0] as Container;

/** The arguments the shell gives the CLI from a container's script (`exec node /app/bin/duplex-bench.js …`). */
function cliArgs(container: Container, env: Record<string, string> = {}): string[] {
  const [sh, flag, script] = container.command;
  expect([sh, flag]).toEqual(['sh', '-c']);
  const prefix = 'exec node /app/bin/duplex-bench.js ';
  expect(script.startsWith(prefix)).toBe(true);
  return shellWords(script.slice(prefix.length), env);
}

describe('shellQuote', () => {
  it('leaves a plain word as it is', () => {
    for (const word of ['--concurrency', '512', 'ws://h:8000/v1/realtime', 'a@b%c+d=e:f,g.h/i-j_k']) expect(shellQuote(word)).toBe(word);
  });

  it('quotes anything else so that sh reads back exactly the word given', () => {
    const words = ['$HOME', 'two words', "it's", "''", 'a&b;c|d', '$HOME `id` $(id)', '*', 'tab\there', 'line\nbreak', '"double"', '\\back', ''];
    const quoted = words.map(shellQuote);
    for (const [i, q] of quoted.entries()) expect(q).not.toBe(words[i]);
    expect(shellWords(quoted.join(' '), { HOME: '/should-not-expand' })).toEqual(words);
  });
});

describe('shardJob', () => {
  const job = shardJob(OPTIONS);

  it('is one Indexed Job of every shard at once, none retried', () => {
    expect(job).toMatchObject({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'ttfp-512-shards' } });
    expect(job.spec).toMatchObject({ completionMode: 'Indexed', completions: 4, parallelism: 4, backoffLimit: 0 });
    expect(job.spec.template.spec.restartPolicy).toBe('Never');
  });

  it("runs each pod as its shard of the run, given its index, the common start and the run's directory", () => {
    const args = cliArgs(containerOf(job), { JOB_COMPLETION_INDEX: '2' });
    expect(args).toEqual([
      'run',
      '--url',
      OPTIONS.url,
      ...OPTIONS.run_args,
      '--shard',
      '2/4',
      '--start-at',
      String(OPTIONS.start_at_ms),
      '--output',
      `${DATA_DIR}/ttfp-512`,
      '--quiet',
    ]);
    expect(job.metadata.annotations['duplex-bench/start-at']).toBe('2025-01-02T03:04:05.600Z');
  });

  it('asks for whole, equal requests and limits (Guaranteed QoS) and mounts the claim at the data directory', () => {
    const c = containerOf(job);
    expect(c.image).toBe(OPTIONS.image);
    expect(c.resources).toEqual({ requests: { cpu: '4', memory: '2Gi' }, limits: { cpu: '4', memory: '2Gi' } });
    expect(c.volumeMounts).toEqual([{ name: 'data', mountPath: DATA_DIR }]);
    expect(job.spec.template.spec.volumes).toEqual([{ name: 'data', persistentVolumeClaim: { claimName: 'bench-runs' } }]);
  });

  it('spreads the shards over nodes by preference, matching pods of this run and role only', () => {
    const labels = { 'app.kubernetes.io/name': 'duplex-bench', 'duplex-bench/run': 'ttfp-512', 'duplex-bench/role': 'shard' };
    expect(job.metadata.labels).toEqual(labels);
    expect(job.spec.template.metadata.labels).toEqual(labels);
    const [term] = job.spec.template.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution;
    expect(term.podAffinityTerm).toEqual({ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: labels } });
  });

  it('passes the API key from its Secret in the environment, never on the command line, and only when one is named', () => {
    expect(containerOf(job).env).toBeUndefined();
    const withKey = containerOf(shardJob({ ...OPTIONS, api_key_secret: 'openai' }));
    expect(withKey.env).toEqual([{ name: 'OPENAI_API_KEY', valueFrom: { secretKeyRef: { name: 'openai', key: 'api-key' } } }]);
    expect(withKey.command.join(' ')).not.toContain('openai');
  });

  it('names its namespace only when one is given', () => {
    expect(job.metadata).not.toHaveProperty('namespace');
    expect(shardJob({ ...OPTIONS, namespace: 'bench' }).metadata.namespace).toBe('bench');
  });
});

describe('mergeJob', () => {
  const job = mergeJob(OPTIONS);

  it("merges every shard's directory into merged/, in one pod of one CPU", () => {
    expect(job).toMatchObject({ kind: 'Job', metadata: { name: 'ttfp-512-merge', labels: { 'duplex-bench/role': 'merge' } }, spec: { completions: 1, backoffLimit: 0 } });
    const shards = [0, 1, 2, 3].map((i) => `${DATA_DIR}/ttfp-512/shard-${i}`);
    expect(cliArgs(containerOf(job))).toEqual(['merge', ...shards, '--output', `${DATA_DIR}/ttfp-512/merged`]);
    expect(containerOf(job).resources.limits).toEqual({ cpu: '1', memory: '2Gi' });
    const [term] = job.spec.template.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution;
    expect(term.podAffinityTerm.labelSelector.matchLabels).toEqual(job.metadata.labels);
    expect(job.metadata).not.toHaveProperty('namespace');
    expect(mergeJob({ ...OPTIONS, namespace: 'bench' }).metadata.namespace).toBe('bench');
  });
});
