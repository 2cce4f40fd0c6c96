// Lint is where the architecture is enforced: project edges by Nx tags, and which code may
// touch sockets, threads and child processes. The boundary rule reads Nx's cached project graph and
// is silently skipped without one: `npm run lint` builds the graph first (`nx show projects`).
const nx = require('@nx/eslint-plugin');

const lib = (name) => `lib:${name}`;

/** Imports only a few projects may make; everyone else gets a lint error. */
const restricted = (patterns) => ['error', { paths: patterns.map(([name, message]) => ({ name, message })) }];
const WS = ['ws', 'Only transport and mock-servers open sockets.'];
const WORKER = ['worker_threads', "Only tracer, launcher and audio's voice activity thread start threads."];
const NODE_WORKER = ['node:worker_threads', "Only tracer, launcher and audio's voice activity thread start threads."];
const CHILD = ['child_process', 'Only tracer and launcher start processes.'];
const NODE_CHILD = ['node:child_process', 'Only tracer and launcher start processes.'];

/** Project edges by tag: what each lib may use. */
const BOUNDARIES = {
  enforceBuildableLibDependency: false,
  allow: [],
  depConstraints: [
    { sourceTag: 'scope:app', onlyDependOnLibsWithTags: ['scope:lib'] },
    { sourceTag: 'scope:lib', onlyDependOnLibsWithTags: ['scope:lib'] },
    { sourceTag: lib('pacer'), onlyDependOnLibsWithTags: [] },
    { sourceTag: lib('protocol'), onlyDependOnLibsWithTags: [] },
    // Offline checkers: they read the dialects' names and profiles; only run's post-processing and the apps import them.
    { sourceTag: lib('conformance'), onlyDependOnLibsWithTags: [lib('protocol'), lib('results')] },
    { sourceTag: lib('audio'), onlyDependOnLibsWithTags: [lib('pacer')] },
    { sourceTag: lib('metrics'), onlyDependOnLibsWithTags: [lib('pacer'), lib('protocol')] },
    { sourceTag: lib('transport'), onlyDependOnLibsWithTags: [lib('pacer'), lib('protocol')] },
    { sourceTag: lib('tracer'), onlyDependOnLibsWithTags: [lib('pacer'), lib('protocol')] },
    { sourceTag: lib('mock-servers'), onlyDependOnLibsWithTags: [lib('pacer'), lib('protocol'), lib('audio'), lib('metrics')] },
    { sourceTag: lib('launcher'), onlyDependOnLibsWithTags: [lib('pacer'), lib('metrics')] },
    { sourceTag: lib('cli'), onlyDependOnLibsWithTags: [] },
    // One session: its pipeline and its result.
    // (results: the record a session fills, SessionResult, is the run directory's.)
    { sourceTag: lib('session'), onlyDependOnLibsWithTags: [lib('pacer'), lib('protocol'), lib('audio'), lib('transport'), lib('tracer'), lib('metrics'), lib('results')] },
    // The run directory's owner: what a run writes, read back and pooled, its sessions' records among them.
    { sourceTag: lib('results'), onlyDependOnLibsWithTags: [lib('pacer'), lib('protocol'), lib('metrics'), lib('tracer'), lib('transport'), lib('telemetry')] },
    // The run lifecycle: sessions opened and started, measured, recorded (conformance: the post-processing pool grades each trace, offline).
    {
      sourceTag: lib('run'),
      onlyDependOnLibsWithTags: [lib('pacer'), lib('protocol'), lib('audio'), lib('transport'), lib('tracer'), lib('metrics'), lib('launcher'), lib('session'), lib('results'), lib('conformance'), lib('telemetry'), lib('cli'), lib('http-load')],
    },
    { sourceTag: lib('experiments'), onlyDependOnLibsWithTags: [lib('pacer'), lib('launcher'), lib('session'), lib('results'), lib('run')] },
    { sourceTag: lib('http-load'), onlyDependOnLibsWithTags: [lib('pacer'), lib('metrics'), lib('launcher'), lib('results'), lib('telemetry')] },
    // Live export: it reads the recorders the others keep, through interfaces of its own.
    { sourceTag: lib('telemetry'), onlyDependOnLibsWithTags: [lib('pacer'), lib('metrics')] },
    { sourceTag: lib('report'), onlyDependOnLibsWithTags: [lib('pacer'), lib('metrics'), lib('experiments'), lib('http-load'), lib('results')] },
  ],
};

module.exports = [
  { ignores: ['**/node_modules/**', '**/dist/**', '**/out/**', '**/tmp/**', '.nx/**', 'jest.preset.js', 'eslint.config.js', '**/jest.config.ts', '**/jest.e2e.config.ts', '**/jest.e2e-alone.config.ts'] },
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  {
    files: ['**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': ['error', BOUNDARIES],
      'no-restricted-imports': restricted([WS, WORKER, NODE_WORKER, CHILD, NODE_CHILD]),
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // The one executable carries every command: the probe's and the mock's `serve` (apps/mock's face).
    files: ['apps/probe/src/duplex-bench.ts'],
    rules: { '@nx/enforce-module-boundaries': ['error', { ...BOUNDARIES, allow: ['@duplex-bench/mock'] }] },
  },
  {
    files: ['libs/transport/**/*.ts', 'libs/mock-servers/**/*.ts'],
    rules: { 'no-restricted-imports': restricted([WORKER, NODE_WORKER, CHILD, NODE_CHILD]) },
  },
  {
    files: ['libs/tracer/**/*.ts', 'libs/launcher/**/*.ts'],
    rules: { 'no-restricted-imports': restricted([WS]) },
  },
  {
    // The VAD of a conversation's received audio runs in a thread of its own, off the event loop.
    files: ['libs/audio/src/voice-thread.ts', 'libs/audio/src/voice-worker.ts'],
    rules: { 'no-restricted-imports': restricted([WS, CHILD, NODE_CHILD]) },
  },
  {
    // End-to-end and fault tests drive real processes and servers.
    files: ['**/*.spec.ts', '**/*.spec-helpers.ts', '**/e2e/**/*.ts', '**/*.e2e.ts', 'tools/**/*.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
];
